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
// Only loops that run once per call of a function called from outside (the
// program's main or a library's caller) are worth a team of threads: a
// function called inside a loop body, from such a function, or
// recursively, keeps its loops serial (OpenMP would start no threads for
// them but would still pay for a parallel region at every call).

// parallel reports whether a loop of the given rank whose iterations
// produce values of type t by lam may run in parallel.
func (f *fn) parallel(t *types.Type, lam *ir.Lam, rank int) bool {
	if !f.e.opts.Threads || f.e.repeated[f.f] {
		return false
	}
	return f.depth == 0 && rank == 1 && t.IsUniform() &&
		!lower.HasEffect(lam.Body, f.e.effects) && !storesPointer(lam.Body)
}

// parLoop emits a parallel loop over 0 .. n-1, calling body with the index
// inside it. The body's code refers to ctx, which inside the loop is the
// thread's context.
func (f *fn) parLoop(n string, body func(i string)) {
	par := f.fresh("par")
	i := f.fresh("i")
	f.line("ks_par %s;", par)
	start := f.fresh("start")
	f.line("ks_par_begin(ctx, &%s, %d, true);", par, f.e.parSites)
	f.e.parSites++
	f.loopIndex(i, n)
	f.line("KS_OMP(parallel if (%s.team))", par)
	f.line("{")
	f.indent++
	f.line("double %s = ks_par_start(&%s);", start, par)
	f.line("KS_OMP(for schedule(static) nowait)")
	f.line("for (int64_t %s = 0; %s < %s; %s++) {", i, i, n, i)
	f.indent++
	f.depth++
	f.line("ks_ctx *ctx = ks_par_ctx(&%s);", par)
	f.line("if (setjmp(ctx->jmp)) {")
	f.line("  ks_par_fail(&%s, %s, ctx);", par, i)
	f.line("  continue;")
	f.line("}")
	body(i)
	f.line("ks_arena_release(ctx, (ks_mark){NULL, 0, 0});")
	f.depth--
	f.indent--
	f.line("}")
	f.line("ks_par_stop(&%s, %s);", par, start)
	f.indent--
	f.line("}")
	f.line("ks_par_end(ctx, &%s);", par)
}

// repeatedFuncs returns the functions that may be called many times per
// call from outside: from loop bodies, from functions so called, and
// recursive functions with what they call.
func repeatedFuncs(prog *ir.Program) map[*ir.Func]bool {
	callees := func(e ir.Expr, visit func(*ir.Func)) {
		ir.Inspect(e, func(x ir.Expr) bool {
			if c, ok := x.(*ir.Call); ok && c.Fn != nil {
				visit(c.Fn)
			}
			return true
		})
	}
	rep := map[*ir.Func]bool{}
	var work []*ir.Func
	mark := func(g *ir.Func) {
		if !rep[g] {
			rep[g] = true
			work = append(work, g)
		}
	}
	for _, f := range prog.Funcs {
		if f.Body == nil {
			continue
		}
		ir.Inspect(f.Body, func(x ir.Expr) bool {
			if lam, ok := x.(*ir.Lam); ok {
				callees(lam.Body, mark)
				return false
			}
			return true
		})
		if reaches(f, f) {
			mark(f)
		}
	}
	for len(work) > 0 {
		g := work[len(work)-1]
		work = work[:len(work)-1]
		if g.Body != nil {
			callees(g.Body, mark)
		}
	}
	return rep
}

// reaches reports whether from calls to, directly or through other calls.
func reaches(from, to *ir.Func) bool {
	seen := map[*ir.Func]bool{}
	var walk func(f *ir.Func) bool
	walk = func(f *ir.Func) bool {
		if f.Body == nil || seen[f] {
			return false
		}
		seen[f] = true
		found := false
		ir.Inspect(f.Body, func(x ir.Expr) bool {
			if c, ok := x.(*ir.Call); ok && c.Fn != nil && (c.Fn == to || walk(c.Fn)) {
				found = true
			}
			return !found
		})
		return found
	}
	return walk(from)
}
