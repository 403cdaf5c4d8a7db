package cemit

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/types"
)

// Parallel loops (Options.Threads).
//
// A build or a sum of Floats or Integers is shared among OpenMP threads
// when nothing can tell: it is the outermost loop of its function, it has
// rank 1, its values are uniform (they hold no pointers, so nothing an
// iteration allocates outlives it), and its body prints nothing, calls no
// edef and stores no pointer. Each iteration runs with its thread's
// context (ks_par_ctx, in the runtime), which catches a runtime error of
// the iteration; after the loop the error of the first failing iteration
// is raised, which is the error the serial loop raises. A sum stores its
// addends, then adds them in order, so its value does not depend on the
// number of threads.
//
// Loops inside a parallel iteration (in the function itself or in the
// functions it calls) run serially: OpenMP does not start nested teams.

// parallel reports whether a loop of the given rank whose iterations
// produce values of type t by lam may run in parallel.
func (f *fn) parallel(t *types.Type, lam *ir.Lam, rank int) bool {
	return f.e.opts.Threads && f.depth == 0 && rank == 1 && t.IsUniform() &&
		!lower.HasEffect(lam.Body, f.e.effects) && !storesPointer(lam.Body)
}

// parLoop emits a parallel loop over 0 .. n-1, calling body with the index
// inside it. The body's code refers to ctx, which inside the loop is the
// thread's context.
func (f *fn) parLoop(n string, body func(i string)) {
	par := f.fresh("par")
	i := f.fresh("i")
	f.line("ks_par %s;", par)
	f.line("ks_par_begin(ctx, &%s);", par)
	f.line("#pragma omp parallel for schedule(static)")
	f.line("for (int64_t %s = 0; %s < %s; %s++) {", i, i, n, i)
	f.indent++
	f.depth++
	f.line("ks_ctx *ctx = ks_par_ctx(&%s);", par)
	f.line("if (setjmp(ctx->jmp)) {")
	f.line("  ks_par_fail(&%s, %s, ctx);", par, i)
	f.line("  continue;")
	f.line("}")
	body(i)
	f.line("ks_arena_release(ctx, (ks_mark){NULL, 0});")
	f.depth--
	f.indent--
	f.line("}")
	f.line("ks_par_end(ctx, &%s);", par)
}
