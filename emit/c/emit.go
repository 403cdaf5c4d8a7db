// Package cemit generates C11 from a typed, lowered ks program.
//
// Float is double, Integer int64_t, Bool bool and String const char *;
// each tuple type is a struct with fields f0, f1, ...; a tensor of rank 1
// is { int64_t size; T *data; } and of rank N { int64_t size[N]; T *data; }
// with the elements contiguous in row-major order. Values are immutable and
// live in an arena owned by the runtime context (runtime/c).
//
// Every ks function becomes a static C function taking the context first.
// build, sumbuild, fold and their relatives become plain loops over the
// data arrays; polymorphic operations (equality, printing, sums, tangent
// operations) become helper functions generated once per type. A runtime
// error longjmps to the entry point with a message naming the .ks position.
//
// With Options.Library set, every def also gets an exported entry point
// PREFIX_name and a header describing the library's ABI (see Header).
package cemit

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	cruntime "github.com/ksc-lang/ksc/runtime/c"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Options control the generated code.
type Options struct {
	// Prefix starts the name of every type and exported symbol: "ks" for
	// programs, the library name for libraries.
	Prefix string
	// Main adds a C main that runs the ks main and reports runtime errors.
	Main bool
	// Library adds an exported entry point for every def (see Header).
	Library bool
	// Export, if not empty, names the entry points a library exports, by
	// their C names without the prefix (loss, vrev_loss_wrt_0): only
	// those, and their types, are in the header and the manifest.
	Export []string
	// Threads shares the iterations of outer loops among OpenMP threads
	// where the result cannot depend on it (see parallel.go); the C must
	// then be compiled with -fopenmp.
	Threads bool
}

// Output is the generated code.
type Output struct {
	C        string // the C file
	Header   string // the library's header (Library only)
	Manifest string // the library's manifest, JSON (Library only; see Manifest)
}

// Emit generates C for prog, which must have been lowered (no prelude
// calls with ks definitions, every function with a body or an edef).
func Emit(prog *ir.Program, opts Options) (out *Output, err error) {
	if opts.Prefix == "" {
		opts.Prefix = "ks"
	}
	e := &emitter{
		opts:      opts,
		typeNames: map[string]string{},
		namer:     types.NewNamer(),
		typeDone:  map[string]bool{},
		helpers:   map[string]string{},
		fnNames:   map[*ir.Func]string{},
		usedNames: map[string]bool{},
		allocates: map[*ir.Func]bool{},
		besides:   map[*ir.Func]bool{},
		effects:   lower.ComputeEffects(prog),
	}
	if opts.Threads {
		e.repeated = repeatedFuncs(prog)
	}
	var errs syntax.ErrorList
	for _, f := range prog.Funcs {
		if f.Body == nil && f.Prim == nil && f.Kind != ir.EdefFunc {
			errs.Add(f.P, "%s has no definition", f.FullName())
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	defer func() {
		if r := recover(); r != nil {
			// An error in the program is returned; one marked internal
			// is a fault of this backend, left to the driver's guard
			// (an internal compiler error, exit 3).
			if ce, ok := r.(*syntax.Error); ok && !ce.Internal() {
				err = ce
				return
			}
			panic(r)
		}
	}()
	return e.program(prog), nil
}

type emitter struct {
	opts Options

	types     []typeDecl // type definitions, in dependency order
	typeNames map[string]string
	// pendingNamed are named types whose struct is not yet defined, and
	// typeDepth the depth of ctype calls in progress.
	pendingNamed []*types.Type
	typeDepth    int
	typeDone     map[string]bool

	helperDecls strings.Builder // prototypes of helpers
	helperDefs  strings.Builder // their definitions
	helpers     map[string]string

	fnNames   map[*ir.Func]string
	usedNames map[string]bool
	tmp       int

	allocates map[*ir.Func]bool   // funcAllocates's answers
	besides   map[*ir.Func]bool   // funcAllocatesBesides's answers
	effects   lower.Effects       // the functions that print
	repeated  map[*ir.Func]bool   // repeatedFuncs (Threads only)
	parSites  int                 // parallel loops emitted: each is a site of ks_par_begin
	recursive map[*ir.Func]bool   // ir.Recursive: these check the stack on entry
	twins     map[*ir.Func]string // inlineTwins: the name of a function's inline twin
	fails     ir.Failing          // ir.MayFail: the calls of these are in the chain of calls of an error
	namer     *types.Namer        // the names of types in type and helper names
}

func (e *emitter) program(prog *ir.Program) *Output {
	var protos, defs strings.Builder
	e.recursive = ir.Recursive(prog.Funcs)
	e.fails = ir.MayFail(prog.Funcs, e.recursive)
	e.twins = e.inlineTwins(prog.Funcs)
	for _, f := range prog.Funcs {
		if f.Prim != nil || f.Body == nil && f.Kind != ir.EdefFunc {
			continue
		}
		if f.Kind == ir.EdefFunc {
			e.edef(f, &protos)
			continue
		}
		e.function(f, &protos, &defs)
	}
	var main string
	if e.opts.Main {
		main = e.mainFunc(prog)
	}
	var exports, header, manifest string
	if e.opts.Library {
		exports, header, manifest = e.library(prog)
	}

	var b strings.Builder
	b.WriteString("/* Code generated by ksc. DO NOT EDIT. */\n")
	b.WriteString("#define _DEFAULT_SOURCE 1\n")
	if e.opts.Threads {
		b.WriteString("#define KS_THREADS 1 /* ksc --threads: parallel loops, with OpenMP or serial without */\n")
	}
	b.WriteString(cruntime.Header)
	b.WriteString("\n/* Types. */\n")
	b.WriteString(e.typeText(nil))
	b.WriteString("\n/* Functions. */\n")
	b.WriteString(protos.String())
	b.WriteString("\n/* Helpers. */\n")
	b.WriteString(e.helperDecls.String())
	b.WriteString(e.helperDefs.String())
	b.WriteString(defs.String())
	b.WriteString(exports)
	b.WriteString(main)
	return &Output{C: b.String(), Header: header, Manifest: manifest}
}

// function emits the C function for a def.
func (e *emitter) function(f *ir.Func, protos, defs *strings.Builder) {
	defer ir.PanicIn(f)
	name := e.funcName(f)
	sig := e.signature(f, name)
	fmt.Fprintf(protos, "static KS_UNUSED %s;\n", sig)
	fe := newFn(e, f)
	fe.body()
	// A function that runs loops is compiled for AVX2 too, chosen at load
	// time (KS_CLONES in ksc_runtime.h); one without gains nothing from it
	// and stays inlinable.
	clones := ""
	if hasLoop(f.Body) {
		clones = "KS_CLONES "
	}
	fmt.Fprintf(defs, "\n/* %s */\n%sstatic %s {\n%s}\n", commentSafe(f.FullName()), clones, sig, fe.b.String())
	if twin := e.twins[f]; twin != "" {
		tsig := e.signature(f, twin)
		fmt.Fprintf(protos, "static inline KS_UNUSED %s;\n", tsig)
		// A derived function's twin is always inlined: a derivative
		// calls its callees' passes from a large function, where gcc's
		// inliner runs out of budget (GMM's [suffwdpass ltri_times] in
		// [revacc gmm_points]); a primal function's is left to gcc, which
		// inlined GMM's into gmm_points where forcing it made the
		// objective slower (d64: 97 ms against 88 ms).
		always := ""
		if len(f.Name.Derivs) > 0 {
			always = "KS_ALWAYS_INLINE "
		}
		fmt.Fprintf(defs, "\n/* %s, inline in functions compiled for AVX2 too */\nstatic inline %s%s {\n%s}\n", commentSafe(f.FullName()), always, tsig, fe.b.String())
	}
}

// maxTwinSize bounds, in IR nodes, the body of a function that gets an
// inline twin (inlineTwins).
const maxTwinSize = 128

// inlineTwins returns the functions that get an inline twin, and its
// name. gcc inlines no function compiled twice (KS_CLONES), so a small
// function that loops, called in the loops of another (a GMM component's
// triangular product, called per point and component, and its split
// passes), costs a call per use and is never fused into its caller. Such
// a function, unless recursive, is emitted a second time under another
// name as an ordinary static inline function when a function compiled
// twice calls it; those call the twin (inlined into both of their copies,
// so compiled for AVX2 in one), everything else, the library's entry
// points included, the original. The twin has the original's body, so
// its own calls go to twins too. With Options.Threads, a function that may
// run parallel loops (one not called repeatedly, see parallel.go) gets no
// twin: it gains nothing from inlining, and without OpenMP the setjmp of
// its loops' iterations would stay in a function that must be inlined.
func (e *emitter) inlineTwins(funcs []*ir.Func) map[*ir.Func]string {
	called := map[*ir.Func]bool{} // by a function compiled twice
	for _, f := range funcs {
		if f.Prim == nil && f.Body != nil && hasLoop(f.Body) {
			ir.Inspect(f.Body, func(x ir.Expr) bool {
				if c, ok := x.(*ir.Call); ok && c.Fn != nil {
					called[c.Fn] = true
				}
				return true
			})
		}
	}
	twins := map[*ir.Func]string{}
	for _, f := range funcs {
		if !called[f] || f.Prim != nil || f.Body == nil || f.Kind == ir.EdefFunc || e.recursive[f] || !hasLoop(f.Body) ||
			e.opts.Threads && !e.repeated[f] {
			continue
		}
		n := 0
		ir.Inspect(f.Body, func(ir.Expr) bool { n++; return n <= maxTwinSize })
		if n > maxTwinSize {
			continue
		}
		base := "ksi_" + strings.TrimPrefix(e.funcName(f), "ksu_")
		name := base
		for i := 2; e.usedNames[name]; i++ {
			name = base + "_" + strconv.Itoa(i)
		}
		e.usedNames[name] = true
		twins[f] = name
	}
	return twins
}

// edef declares an external function, called with plain C arguments and
// no context. The C name it is called by is ksc's own (ksu_...); an asm
// label binds it to the edef's symbol. So an edef may be named like
// anything C declares (malloc, sin, isnan, a keyword, the runtime's
// ks_...) without clashing with the declaration, and any valid ks name
// compiles; only the linker sees the name, and resolves it to the host's
// (or the C library's) function.
func (e *emitter) edef(f *ir.Func, protos *strings.Builder) {
	if len(f.Name.Derivs) > 0 || !isCIdent(f.Name.Base) {
		// A derivative declared by edef, or a name C cannot spell: it can
		// only be called if something defines it, which ksc cannot see.
		e.fnNames[f] = ""
		return
	}
	name := e.funcName(f)
	ps := e.cParams(f.Arg)
	if len(ps) == 0 {
		ps = []string{"void"}
	}
	fmt.Fprintf(protos, "extern %s %s(%s) KS_SYMBOL(%s); /* edef %s */\n", e.ctype(f.Result), name, strings.Join(ps, ", "), cString(f.Name.Base), commentSafe(f.FullName()))
}

var cIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isCIdent(s string) bool { return cIdentRE.MatchString(s) }

// cParams returns the C parameter types for an argument type: one per field
// of a tuple, none for the unit tuple, else one.
func (e *emitter) cParams(arg *types.Type) []string {
	var ps []string
	for _, t := range paramTypes(arg) {
		ps = append(ps, e.ctype(t))
	}
	return ps
}

// funcName returns the unique C name of a ks function.
func (e *emitter) funcName(f *ir.Func) string {
	if n, ok := e.fnNames[f]; ok {
		return n
	}
	base := "ksu_" + f.Name.Ident()
	n := base
	for i := 2; e.usedNames[n]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	e.usedNames[n] = true
	e.fnNames[f] = n
	return n
}

func (e *emitter) signature(f *ir.Func, name string) string {
	ps := []string{"ks_ctx *ctx"}
	for i, p := range e.cParams(f.Arg) {
		ps = append(ps, fmt.Sprintf("%s p%d", p, i))
	}
	return fmt.Sprintf("%s %s(%s)", e.ctype(f.Result), name, strings.Join(ps, ", "))
}

func commentSafe(s string) string { return strings.ReplaceAll(s, "*/", "* /") }

// ctype returns the C type of a ks type, declaring it first if needed.
func (e *emitter) ctype(t *types.Type) string {
	e.typeDepth++
	name := e.ctype1(t)
	e.typeDepth--
	// The struct of a named type is defined once the types in progress
	// are declared, since its definition may use them (a BOG type holds
	// a tuple that holds the BOG type).
	for e.typeDepth == 0 && len(e.pendingNamed) > 0 {
		n := e.pendingNamed[0]
		e.pendingNamed = e.pendingNamed[1:]
		e.typeDepth++
		def := e.ctype1(n.Def)
		e.typeDepth--
		name := e.typeNames[e.namer.Name(n)]
		e.types = append(e.types, typeDecl{name + "_s", fmt.Sprintf("struct %s_s { %s v; };\n", name, def)})
	}
	return name
}

func (e *emitter) ctype1(t *types.Type) string {
	switch t.Kind {
	case types.Integer:
		return "int64_t"
	case types.Float:
		return "double"
	case types.Bool:
		return "bool"
	case types.String:
		return "const char *"
	}
	m := e.namer.Name(t)
	if n, ok := e.typeNames[m]; ok {
		return n
	}
	name := e.opts.Prefix + "_" + m
	e.typeNames[m] = name
	switch t.Kind {
	case types.Tuple:
		var fields strings.Builder
		for i, f := range t.Elems {
			fmt.Fprintf(&fields, " %s f%d;", e.ctype(f), i)
		}
		if len(t.Elems) == 0 {
			fields.WriteString(" char unused;")
		}
		e.types = append(e.types, typeDecl{name, fmt.Sprintf("typedef struct {%s } %s; /* %s */\n", fields.String(), name, commentSafe(types.Brief(t)))})
	case types.Tensor:
		elem := e.ctype(t.Elem)
		if t.Rank == 1 {
			e.types = append(e.types, typeDecl{name, fmt.Sprintf("typedef struct { int64_t size; %s *data; } %s; /* %s */\n", elem, name, commentSafe(types.Brief(t)))})
		} else {
			e.types = append(e.types, typeDecl{name, fmt.Sprintf("typedef struct { int64_t size[%d]; %s *data; } %s; /* %s */\n", t.Rank, elem, name, commentSafe(types.Brief(t)))})
		}
	case types.Variant:
		l, r := e.ctype(t.Elems[0]), e.ctype(t.Elems[1])
		e.types = append(e.types, typeDecl{name, fmt.Sprintf("typedef struct { bool isl; union { %s l; %s r; } u; } %s; /* %s */\n", l, r, name, commentSafe(types.Brief(t)))})
	case types.Named:
		// A pointer to a struct holding the definition, so that the type
		// may refer to itself.
		e.types = append(e.types, typeDecl{name, fmt.Sprintf("typedef struct %s_s *%s; /* %s */\n", name, name, commentSafe(types.Brief(t)))})
		e.pendingNamed = append(e.pendingNamed, t)
	default:
		panic(fmt.Sprintf("cemit: no C type for %s", t))
	}
	return name
}

// A typeDecl is the C declaration of a type (one of two for a named
// type: its pointer typedef and its struct).
type typeDecl struct {
	name string // the C name of the type (NAME_s for a named type's struct)
	text string
}

// typeText returns the declarations of the types, in dependency order:
// all, or those of the names in keep if it is not nil.
func (e *emitter) typeText(keep map[string]bool) string {
	var b strings.Builder
	for _, d := range e.types {
		if keep == nil || keep[d.name] {
			b.WriteString(d.text)
		}
	}
	return b.String()
}

// cString returns s as a C string literal.
func cString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '?':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mainFunc returns the C main: run the ks main, flush, report a runtime
// error, or output that could not be written, on stderr with exit status
// 1.
func (e *emitter) mainFunc(prog *ir.Program) string {
	var mainFn *ir.Func
	for _, f := range prog.Funcs {
		if len(f.Name.Derivs) == 0 && f.Name.Base == "main" && f.Arg.Equal(types.Unit) && f.Body != nil {
			mainFn = f
		}
	}
	if mainFn == nil {
		panic(&syntax.Error{Msg: "the program has no (def main Integer () ...)"})
	}
	return fmt.Sprintf(`
/* ks_run runs the ks main, not inlined, so that no code runs in the frame
 * that calls setjmp (whose variables gcc would warn longjmp might
 * clobber: -Wclobbered). */
static KS_NOINLINE void ks_run(ks_ctx *ctx) { (void)%[1]s(ctx); }

int main(void) {
  ks_ctx *ctx = malloc(sizeof *ctx);
  if (ctx == NULL) return 2;
  ks_ctx_init(ctx);
  ctx->stack_base = ks_stack_here();
  ctx->max_stack = ks_main_max_stack();
  if (setjmp(ctx->jmp)) {
    fflush(stdout);
    fprintf(stderr, "%%s\n", ctx->err);
    ks_ctx_destroy(ctx);
    free(ctx);
    return 1;
  }
  ks_run(ctx);
  bool lost = fflush(stdout) != 0 || ferror(stdout);
  int err = errno;
  ks_ctx_destroy(ctx);
  free(ctx);
  if (lost) {
    fprintf(stderr, "writing the output: %%s\n", strerror(err));
    return 1;
  }
  return 0;
}
`, e.funcName(mainFn))
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
