package cemit

import (
	"fmt"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// An Export describes one exported entry point of a library.
type Export struct {
	Func *ir.Func
	Name string // the C symbol, PREFIX_...
}

// Exports returns the functions a library exports, with their C names:
// every def with a body, hand-written or derived (but not the internal
// derivations such as [revfull f], which no gdef can name, nor those
// derive made only for other derivations: ir.Func.Implied), named PREFIX_ followed
// by its derivations and name joined by _ ([rev f] is PREFIX_rev_f). When
// two overloads would get the same name, each gets a suffix __ARGTYPE
// from the mangled argument type of its base function (PREFIX_f__vec_f64).
// A name the ABI takes (PREFIX_ctx_new, PREFIX_OK, ...) gets _2.
func Exports(prog *ir.Program, prefix string) []Export {
	return exports(prog, prefix, nil)
}

// chosenExports returns the functions of all that Options.Export names,
// or nil to export all. A name that is not an export fails, listing them.
func (e *emitter) chosenExports(all []Export) map[*ir.Func]bool {
	if len(e.opts.Export) == 0 {
		return nil
	}
	byName := map[string]*ir.Func{}
	var names []string
	for _, x := range all {
		n := strings.TrimPrefix(x.Name, e.opts.Prefix+"_")
		byName[n] = x.Func
		names = append(names, n)
	}
	chosen := map[*ir.Func]bool{}
	for _, n := range e.opts.Export {
		f, ok := byName[n]
		if !ok {
			panic(&syntax.Error{Msg: fmt.Sprintf("--export: the library has no entry point %s; it has %s", n, strings.Join(names, ", ")),
				Hint: syntax.DidYouMean(n, names)})
		}
		chosen[f] = true
	}
	return chosen
}

// checkDerivedNames fails, at the def, if a def would have the C name
// of a derived function's export (a def rev_f beside [rev f]): one of them
// would get a suffix the host cannot guess, so the def must be renamed.
func checkDerivedNames(fs []*ir.Func) {
	derived := map[string]*ir.Func{}
	for _, f := range fs {
		if len(f.Name.Derivs) > 0 {
			derived[f.Name.Ident()] = f
		}
	}
	for _, f := range fs {
		if len(f.Name.Derivs) > 0 {
			continue
		}
		if g, ok := derived[ir.Identifier(f.Name.Base)]; ok {
			panic(&syntax.Error{Pos: f.P, Msg: fmt.Sprintf("the def %s would be exported under the name of %s (%s): rename the def", f.Name.Base, g.Name, ir.Identifier(f.Name.Base)),
				Hint: "the C name of a derived function is its words joined by _: [rev f] is NAME_rev_f"})
		}
	}
}

// CheckLibraryName returns an error unless name can prefix a library's
// symbols: a C identifier whose NAME_ names cannot meet the names the
// generated C uses for itself (ks_ and KS_ of the runtime, ksu_ of
// functions, ksh_ of helpers) nor those C reserves (_ and an upper-case
// letter or a second _).
func CheckLibraryName(name string) error {
	if !isCIdent(name) {
		return fmt.Errorf("the library name %q must be a C identifier (letters, digits and _, not starting with a digit)", name)
	}
	if len(name) >= 2 && name[0] == '_' && (name[1] == '_' || 'A' <= name[1] && name[1] <= 'Z') {
		return fmt.Errorf("the library name %q is reserved in C (it starts with _ and an upper-case letter or _)", name)
	}
	for _, own := range []string{"ks", "KS", "ksu", "ksh"} {
		if name == own || strings.HasPrefix(name, own+"_") {
			return fmt.Errorf("the library name %q would make names the generated C uses itself (%s_...): choose another", name, own)
		}
	}
	return nil
}

// abiNames are the names of the library's interface other than its
// functions (after PREFIX_).
var abiNames = []string{"ctx", "ctx_new", "ctx_free", "ctx_error", "ctx_reset", "ctx_bytes", "ctx_set_max_stack", "ctx_set_max_bytes",
	"OK", "ERR_RUNTIME", "ERR_MEMORY", "ERR_USAGE"}

// exports is Exports, avoiding also the names in taken (the library's
// type names).
func exports(prog *ir.Program, prefix string, taken map[string]bool) []Export {
	var fs []*ir.Func
	count := map[string]int{}
	plain := func(f *ir.Func) string {
		return prefix + "_" + f.Name.Ident()
	}
	latest := map[string]*ir.Func{}
	for _, f := range prog.Funcs {
		if f.Body != nil && f.Prim == nil {
			latest[f.Key()] = f // a later def with the same signature replaces the earlier
		}
	}
	for _, f := range prog.Funcs {
		if f.Body != nil && f.Prim == nil && latest[f.Key()] == f && !f.Name.Internal() && !f.Implied {
			fs = append(fs, f)
			count[plain(f)]++
		}
	}
	var out []Export
	namer := types.NewNamer()
	used := map[string]bool{}
	for _, n := range abiNames {
		used[prefix+"_"+n] = true
	}
	for n := range taken {
		used[n] = true
	}
	for _, f := range fs {
		n := plain(f)
		if count[n] > 1 {
			n += "__" + namer.Name(f.BaseArg)
		}
		for base, i := n, 2; used[n]; i++ {
			n = fmt.Sprintf("%s_%d", base, i)
		}
		used[n] = true
		out = append(out, Export{Func: f, Name: n})
	}
	return out
}

// library returns the exported entry points, the header and the manifest.
func (e *emitter) library(prog *ir.Program) (string, string, string) {
	p := e.opts.Prefix
	var c, h strings.Builder
	fmt.Fprintf(&c, `
/* The library's context and entry points. */
/* busy is set while an entry point runs: a call made with the same
 * context before it returns (from an edef the library calls back) would
 * overwrite the state the running call depends on, so it is refused. */
struct %[1]s_ctx { ks_ctx rt; bool busy; };
typedef struct %[1]s_ctx %[1]s_ctx;

KS_EXPORT %[1]s_ctx *%[1]s_ctx_new(void) {
  %[1]s_ctx *ctx = malloc(sizeof *ctx);
  if (ctx != NULL) {
    ks_ctx_init(&ctx->rt);
    ctx->busy = false;
  }
  return ctx;
}

KS_EXPORT void %[1]s_ctx_free(%[1]s_ctx *ctx) {
  if (ctx == NULL || ctx->busy) return;
  ks_ctx_destroy(&ctx->rt);
  free(ctx);
}

KS_EXPORT const char *%[1]s_ctx_error(%[1]s_ctx *ctx) {
  return ctx == NULL ? "the context is NULL" : ctx->rt.err;
}

KS_EXPORT void %[1]s_ctx_reset(%[1]s_ctx *ctx) {
  if (ctx == NULL || ctx->busy) return;
  ks_ctx_reset(&ctx->rt);
  ctx->rt.err[0] = 0;
}

KS_EXPORT size_t %[1]s_ctx_bytes(%[1]s_ctx *ctx) { return ctx == NULL ? 0 : ks_ctx_bytes(&ctx->rt); }

KS_EXPORT int %[1]s_ctx_set_max_stack(%[1]s_ctx *ctx, size_t bytes) {
  if (ctx == NULL || ctx->busy) return KS_ERR_USAGE;
  ctx->rt.max_stack = bytes;
  return KS_OK;
}

KS_EXPORT int %[1]s_ctx_set_max_bytes(%[1]s_ctx *ctx, size_t bytes) {
  if (ctx == NULL || ctx->busy) return KS_ERR_USAGE;
  ctx->rt.max_bytes = bytes;
  return KS_OK;
}

/* ks_enter checks an entry point's context and result pointers (outs:
 * none of them is NULL). */
static int ks_enter(%[1]s_ctx *ctx, bool outs) {
  if (ctx == NULL) return KS_ERR_USAGE;
  if (ctx->busy) {
    snprintf(ctx->rt.err, sizeof ctx->rt.err, "the context is in use by a call that has not returned (an edef calling back into the library?): use another context");
    return KS_ERR_USAGE;
  }
  if (!outs) {
    snprintf(ctx->rt.err, sizeof ctx->rt.err, "a result pointer is NULL");
    return KS_ERR_USAGE;
  }
  ctx->rt.err[0] = 0;
  return KS_OK;
}
`, p)

	// The exported functions' types are named first, so that no function
	// takes a type's name (a def named vec_f64).
	var candidates []*ir.Func
	all := Exports(prog, p)
	for _, x := range all {
		candidates = append(candidates, x.Func)
	}
	checkDerivedNames(candidates)
	chosen := e.chosenExports(all)
	if chosen != nil {
		candidates = candidates[:0]
		for _, x := range all {
			if chosen[x.Func] {
				candidates = append(candidates, x.Func)
			}
		}
	}
	for _, f := range candidates {
		en := e.entryOf(f)
		for _, x := range append(en.params, en.outs...) {
			e.ctype(x.t)
		}
	}
	taken := map[string]bool{}
	for _, n := range e.typeNames {
		taken[n] = true
	}
	var decls strings.Builder
	inHeader := map[string]bool{} // the types of the exports' signatures
	man := &Manifest{Version: 2, Library: "lib" + p + ".so", Prefix: p, Functions: []ManifestFunc{}}
	exported := exports(prog, p, taken)
	for _, x := range exported {
		taken[x.Name] = true
	}
	for _, x := range exported {
		f := x.Func
		if chosen != nil && !chosen[f] {
			continue
		}
		en := e.entryOf(f)
		params := []string{p + "_ctx *ctx"}
		hparams := []string{p + "_ctx *ctx"} // the same, with the types' short names
		var aliases strings.Builder
		// alias returns the short name of v's type in x's signature:
		// x's name and v's, declared before x (the host may use it for
		// its own variables; typedefs of one type are the same type).
		alias := func(v slot) string {
			c := e.ctype(v.t)
			name := x.Name + "_" + v.name
			if !needsAlias(v.t) || taken[name] {
				return c
			}
			taken[name] = true
			fmt.Fprintf(&aliases, "typedef %s %s; /* %s */\n", c, name, commentSafe(types.Brief(v.t)))
			return name
		}
		var names, nonNull []string
		mf := ManifestFunc{Name: strings.TrimPrefix(x.Name, p+"_"), Symbol: x.Name, KS: f.FullName(), Params: []ManifestParam{}, Results: []ManifestParam{}}
		for _, v := range en.params {
			params = append(params, e.ctype(v.t)+" "+v.name)
			hparams = append(hparams, alias(v)+" "+v.name)
			names = append(names, v.name)
			mf.Params = append(mf.Params, e.manifestParam(v))
			e.markTypes(v.t, inHeader)
		}
		for _, v := range en.outs {
			params = append(params, e.ctype(v.t)+" *"+v.name)
			hparams = append(hparams, alias(v)+" *"+v.name)
			names = append(names, v.name)
			nonNull = append(nonNull, v.name+" != NULL")
			mf.Results = append(mf.Results, e.manifestParam(v))
			e.markTypes(v.t, inHeader)
		}
		man.Functions = append(man.Functions, mf)
		if len(nonNull) == 0 {
			nonNull = []string{"true"}
		}
		sig := fmt.Sprintf("int %s(%s)", x.Name, strings.Join(params, ", "))
		note := ""
		if f.Name.Outer() == "suffwdpass" {
			note = "\n * The BOG it returns may refer to the arguments and lives in ctx: keep\n" +
				" * both unchanged (no reset) until the reverse pass has run."
		}
		fmt.Fprintf(&decls, "\n/* %s : %s -> %s%s */\n%sint %s(%s);\n", commentSafe(f.FullName()), f.Arg, f.Result, note,
			aliases.String(), x.Name, strings.Join(hparams, ", "))
		// The arguments are checked first: the code assumes sizes in
		// range (ks_assume_size) and non-NULL data. Checks and call are
		// in a function of their own, not inlined, so that no code
		// runs in the frame that calls setjmp (whose variables gcc would
		// warn longjmp might clobber: -Wclobbered). The results are
		// stored only once the call has succeeded.
		var body strings.Builder
		for _, v := range en.params {
			if needsCheck(v.t) {
				fmt.Fprintf(&body, "  %s(ctx, %s, %q, %s);\n", e.helper("checkarg", v.t), cString(f.P.String()), v.name, v.name)
			}
		}
		fmt.Fprintf(&body, "  %s %s = %s(%s);\n", e.ctype(en.result), resultVar, e.funcName(f), strings.Join(append([]string{"ctx"}, en.args...), ", "))
		for _, st := range en.stores {
			fmt.Fprintf(&body, "  %s\n", st)
		}
		if len(en.stores) == 0 {
			fmt.Fprintf(&body, "  (void)%s;\n", resultVar)
		}
		inner := "ks_run_" + x.Name
		innerParams := append([]string{"ks_ctx *ctx"}, params[1:]...)
		fmt.Fprintf(&c, `
static KS_NOINLINE void %s(%s) {
%s}

KS_EXPORT %s {
  int rc = ks_enter(ctx, %s);
  if (rc != KS_OK) return rc;
  ctx->busy = true;
  ctx->rt.stack_base = ks_stack_here();
  ctx->rt.ncalls = 0;
  if (setjmp(ctx->rt.jmp)) {
    ctx->busy = false;
    return ctx->rt.code;
  }
  %s(%s);
  ctx->rt.err[0] = 0; /* a call refused while this one ran may have left its message */
  ctx->busy = false;
  return KS_OK;
}
`, inner, strings.Join(innerParams, ", "), body.String(),
			sig, strings.Join(nonNull, " && "), inner, strings.Join(append([]string{"&ctx->rt"}, names...), ", "))
	}

	guard := strings.ToUpper(p) + "_H"
	fmt.Fprintf(&h, `/* Code generated by ksc. DO NOT EDIT.
 *
 * The C interface of lib%[1]s.so.
 *
 * Every function takes a context first and pointers to its results last
 * (one for f; for a derivative such as [rev f], f's arguments, then the
 * cotangent, then a pointer per gradient), and returns %[1]s_OK (0) having
 * stored the results, or an error code with the message in
 * %[1]s_ctx_error(ctx) (a failed assert, an index out of range, an empty sum,
 * a size mismatch: %[1]s_ERR_RUNTIME, the message naming the .ks line; out
 * of memory, over the context's memory limit or a recursion deeper than its
 * stack limit: %[1]s_ERR_MEMORY; a NULL context or result pointer, or a
 * context in use: %[1]s_ERR_USAGE). Arguments are only read, and checked
 * first: a negative size, more elements than can be addressed, a size with
 * NULL data, a NULL string or BOG is an error naming the argument. Results
 * live in the context's memory until %[1]s_ctx_reset or %[1]s_ctx_free.
 * Contexts may be used from several threads at once, one per thread.
 *
 * Types: Float is double, Integer int64_t, Bool bool, String const char *.
 * A tuple is a struct with fields f0, f1, ...; a (Vec T) is
 * { int64_t size; T *data; } and a (Tensor N T) { int64_t size[N]; T *data; },
 * elements contiguous in row-major order. An argument may point into a
 * larger array of the host's, without a copy: rows a..b-1 of a (Vec (Vec
 * T)) are { b - a, data + a }, of a (Tensor 2 T) { { b - a, cols },
 * data + a * cols } (a shard of data; there are no strides). A function
 * whose argument is a tuple takes its fields as separate parameters. A
 * tuple type in a
 * signature also has a short name, a typedef before the function.
 *
 * Names: a def f is %[1]s_f, [rev f] is %[1]s_rev_f, and so on; overloads
 * of one name add __ and their base function's argument type; a name this
 * interface already uses (a type, %[1]s_ctx_new, %[1]s_OK) adds _2.
 */
#ifndef %[2]s
#define %[2]s

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* %[1]s_ERR_USAGE: the context or the result pointer is NULL, or the
 * context is in use by a call that has not returned (an edef calling back
 * into the library with the context it was called with). */
enum { %[1]s_OK = 0, %[1]s_ERR_RUNTIME = 1, %[1]s_ERR_MEMORY = 2, %[1]s_ERR_USAGE = 3 };

typedef struct %[1]s_ctx %[1]s_ctx;

/* %[1]s_ctx_new returns a new context, or NULL if memory is short. */
%[1]s_ctx *%[1]s_ctx_new(void);
/* %[1]s_ctx_free releases a context and all its memory (not while a call
 * with it runs: then it does nothing). */
void %[1]s_ctx_free(%[1]s_ctx *ctx);
/* %[1]s_ctx_error returns the message of the last error (owned by the
 * context; for a NULL context, a static message). */
const char *%[1]s_ctx_error(%[1]s_ctx *ctx);
/* %[1]s_ctx_reset releases the results returned so far (not while a call
 * with the context runs: then it does nothing). The context keeps the
 * memory, for the next calls: calling the same function again allocates
 * nothing. */
void %[1]s_ctx_reset(%[1]s_ctx *ctx);
/* %[1]s_ctx_bytes returns the bytes of memory the context holds. */
size_t %[1]s_ctx_bytes(%[1]s_ctx *ctx);
/* %[1]s_ctx_set_max_stack sets the bytes of stack a call may use for
 * recursion (measured from the entry point) before it fails with
 * %[1]s_ERR_MEMORY instead of overflowing the stack. The default is 4 MiB,
 * or half the stack limit (ulimit -s) if that is smaller. To recurse
 * deeper, call the library from a thread with a larger stack
 * (pthread_attr_setstacksize) and raise this to somewhat less than it.
 * %[1]s_ERR_USAGE for a NULL context or one in use. */
int %[1]s_ctx_set_max_stack(%[1]s_ctx *ctx, size_t bytes);
/* %[1]s_ctx_set_max_bytes limits the bytes of results and temporaries
 * the context's calls allocate and have not released (until
 * %[1]s_ctx_reset): a call that would need more fails with
 * %[1]s_ERR_MEMORY. The memory the context holds (%[1]s_ctx_bytes) may
 * be up to about twice that, in chunks. 0, the default, is no limit.
 * (With --threads, each thread of a parallel loop has the limit.)
 * %[1]s_ERR_USAGE for a NULL context or one in use. */
int %[1]s_ctx_set_max_bytes(%[1]s_ctx *ctx, size_t bytes);

/* Types. */
%[3]s
/* Functions. */%[4]s
#ifdef __cplusplus
}
#endif

#endif /* %[2]s */
`, p, guard, e.typeText(inHeader), decls.String())
	return c.String(), h.String(), manifestJSON(man)
}

// markTypes adds to set the C names of t and of the types it is made of
// (which the header must declare before t). A named type (a BOG) is a
// pointer to a struct the header leaves undefined: hosts only pass it.
func (e *emitter) markTypes(t *types.Type, set map[string]bool) {
	switch t.Kind {
	case types.Tuple, types.Tensor, types.Variant, types.Named:
	default:
		return
	}
	name := e.ctype(t)
	if set[name] {
		return
	}
	set[name] = true
	switch t.Kind {
	case types.Tuple, types.Variant:
		for _, x := range t.Elems {
			e.markTypes(x, set)
		}
	case types.Tensor:
		e.markTypes(t.Elem, set)
	}
}

// paramTypes returns the types of the C parameters of a function taking
// arg: a tuple's fields, as separate parameters, or arg.
func paramTypes(arg *types.Type) []*types.Type {
	if arg.Kind == types.Tuple {
		return arg.Elems
	}
	return []*types.Type{arg}
}

// paramNames returns C names for a function's C parameters: the ks
// parameter names when they correspond one to one, else p0, p1, ...
func paramNames(f *ir.Func) []string {
	n := 1
	if f.Arg.Kind == types.Tuple {
		n = len(f.Arg.Elems)
	}
	names := make([]string, n)
	seen := map[string]bool{"ctx": true, "out": true, resultVar: true}
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
	}
	if len(f.Params) == n && !(f.OneParam && f.Arg.Kind == types.Tuple && n != 1) {
		ok := true
		cand := make([]string, n)
		for i, v := range f.Params {
			s := ir.Identifier(v.Name)
			if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '_' || seen[s] || cKeywords[s] {
				ok = false
				break
			}
			seen[s] = true
			cand[i] = s
		}
		if ok {
			return cand
		}
	}
	return names
}

var cKeywords = map[string]bool{
	"auto": true, "break": true, "case": true, "char": true, "const": true, "continue": true,
	"default": true, "do": true, "double": true, "else": true, "enum": true, "extern": true,
	"float": true, "for": true, "goto": true, "if": true, "inline": true, "int": true, "long": true,
	"register": true, "restrict": true, "return": true, "short": true, "signed": true, "sizeof": true,
	"static": true, "struct": true, "switch": true, "typedef": true, "union": true, "unsigned": true,
	"void": true, "volatile": true, "while": true, "bool": true, "true": true, "false": true,
}

// needsAlias reports whether the C name of t, in an entry point's
// signature, gets a short name after the entry point and the parameter:
// tuples, variants, BOGs, and tensors of them, whose names spell out
// their structure (NAME_tup3_vec_f64_f64_i64).
func needsAlias(t *types.Type) bool {
	switch t.Kind {
	case types.Tuple, types.Variant, types.Named:
		return true
	case types.Tensor:
		return needsAlias(t.Elem)
	}
	return false
}
