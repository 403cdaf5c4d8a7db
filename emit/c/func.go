package cemit

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// A fn generates the body of one C function as statements. Expressions are
// compiled to C expressions that are either atoms (names, literals) or
// pure computations on atoms; anything that can fail or has an effect is
// evaluated into a temporary first, in evaluation order.
type fn struct {
	e      *emitter
	f      *ir.Func
	b      strings.Builder
	indent int
	depth  int // the number of loops around the code being emitted

	// Facts for leaving out index checks (bounds.go).
	same, below map[string]string
	fields      map[string][]string
	// The index checks the guard of the loop being emitted proves
	// (version.go).
	proven   map[*ir.Call]bool
	versions int // the versioned loops around the code being emitted
	splits   int // the split loops around the code being emitted (split.go)
	// ivdep says the fold about to be emitted is preceded by KS_IVDEP:
	// a copy without checks that its guard allows it for (withIvdep).
	ivdep bool
	// The function's calls of itself in tail position, which jump back
	// to its start with new parameters (a loop, whatever the C
	// compiler's optimisation level).
	tail map[*ir.Call]bool
}

func newFn(e *emitter, f *ir.Func) *fn {
	return &fn{e: e, f: f, indent: 1, same: map[string]string{}, below: map[string]string{}, fields: map[string][]string{}}
}

// An env maps ks variables in scope to their C names.
type env struct {
	ks, c string
	next  *env
}

func (v *env) push(ks, c string) *env { return &env{ks: ks, c: c, next: v} }

func (v *env) lookup(ks string) string {
	for ; v != nil; v = v.next {
		if v.ks == ks {
			return v.c
		}
	}
	panic(fmt.Sprintf("cemit: variable %s not in scope", ks))
}

func (f *fn) line(format string, args ...any) {
	f.b.WriteString(strings.Repeat("  ", f.indent))
	fmt.Fprintf(&f.b, format, args...)
	f.b.WriteByte('\n')
}

// fresh returns a new C name for a ks variable or, for "", a temporary.
func (f *fn) fresh(ks string) string {
	f.e.tmp++
	if ks == "" {
		return "_t" + strconv.Itoa(f.e.tmp)
	}
	s := ir.Identifier(ks)
	if s[0] == '_' {
		s = "v" + s
	}
	return s + "_" + strconv.Itoa(f.e.tmp)
}

// pos returns the C string literal naming a source position.
func pos(p syntax.Pos) string { return cString(p.String()) }

// body emits the function's body.
func (f *fn) body() {
	var sc *env
	params := f.f.Params
	cps := f.e.cParams(f.f.Arg)
	f.line("(void)ctx;")
	if f.e.recursive[f.f] {
		f.line("ks_stack_check(ctx, %s, %s);", pos(f.f.P), cString(f.f.Name.String()))
	}
	if f.tail = ir.TailCalls(f.f); len(f.tail) > 0 {
		f.line("ks_tail:;")
	}
	switch {
	case len(params) == 1 && len(cps) != 1 || len(params) == 1 && f.f.Arg.Kind == types.Tuple:
		// One parameter of tuple type, passed as its fields.
		name := f.fresh(params[0].Name)
		var fields []string
		for i := range cps {
			fields = append(fields, "p"+strconv.Itoa(i))
		}
		f.line("%s %s = %s;", f.e.ctype(f.f.Arg), name, f.tupleLit(f.f.Arg, fields))
		f.line("(void)%s;", name)
		sc = sc.push(params[0].Name, name)
	default:
		for i, p := range params {
			sc = sc.push(p.Name, "p"+strconv.Itoa(i))
			f.line("(void)p%d;", i)
		}
	}
	r := f.expr(f.f.Body, sc)
	f.line("return %s;", r)
}

// tailCall compiles a call of the function itself in tail position: its
// arguments become the parameters, and control goes back to the start.
// The value returned stands for a result never used.
func (f *fn) tailCall(e *ir.Call, sc *env) string {
	args := f.args(e.Args, sc, true)
	types := f.e.cParams(f.f.Arg)
	next := make([]string, len(args))
	for i, a := range args {
		next[i] = f.fresh("")
		f.line("%s %s = %s;", types[i], next[i], a)
	}
	for i := range args {
		f.line("p%d = %s;", i, next[i])
	}
	f.line("goto ks_tail;")
	return f.zeroValue(e.T)
}

// tupleLit returns a compound literal of tuple type t.
func (f *fn) tupleLit(t *types.Type, fields []string) string {
	if len(fields) == 0 {
		return "(" + f.e.ctype(t) + "){0}"
	}
	lit := "(" + f.e.ctype(t) + "){" + strings.Join(fields, ", ") + "}"
	f.tupleFields(lit, fields)
	return lit
}

// atom returns x if it is a name or literal, else a temporary holding it.
func (f *fn) atom(x string, t *types.Type) string {
	if isAtom(x) {
		return x
	}
	tmp := f.fresh("")
	f.line("%s %s = %s;", f.e.ctype(t), tmp, x)
	f.bind(tmp, x, t)
	return tmp
}

func isAtom(x string) bool {
	if x == "" {
		return false
	}
	if len(x) > 3 && x[0] == '(' && x[1] == '-' && x[len(x)-1] == ')' {
		return isAtom(x[2 : len(x)-1]) // a negative literal such as (-1.5)
	}
	for i := 0; i < len(x); i++ {
		c := x[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '+') {
			return false
		}
	}
	return true
}

// temp evaluates x into a new temporary now and returns its name.
func (f *fn) temp(x string, t *types.Type) string {
	tmp := f.fresh("")
	f.line("%s %s = %s;", f.e.ctype(t), tmp, x)
	return tmp
}

// expr compiles e and returns a C expression for its value.
func (f *fn) expr(e ir.Expr, sc *env) string {
	switch e := e.(type) {
	case *ir.Const:
		return constant(e.Val)
	case *ir.Var:
		return sc.lookup(e.Name)
	case *ir.Dummy:
		return f.zeroValue(e.T)
	case *ir.Tuple:
		elems := make([]string, len(e.Elems))
		for i, x := range e.Elems {
			elems[i] = f.atom(f.expr(x, sc), x.Type())
		}
		return f.tupleLit(e.T, elems)
	case *ir.Get:
		x := f.expr(e.X, sc)
		return "(" + x + ").f" + strconv.Itoa(e.I-1)
	case *ir.Let:
		rhs := f.expr(e.Rhs, sc)
		if e.Pattern {
			tup := f.atom(rhs, e.Rhs.Type())
			for i, v := range e.Vars {
				name := f.fresh(v.Name)
				f.line("%s %s = %s.f%d;", f.e.ctype(v.T), name, tup, i)
				f.bind(name, tup+".f"+strconv.Itoa(i), v.T)
				if !ir.Occurs(v.Name, e.Body) {
					f.line("(void)%s;", name)
				}
				sc = sc.push(v.Name, name)
			}
		} else {
			v := e.Vars[0]
			name := f.fresh(v.Name)
			f.line("%s %s = %s;", f.e.ctype(v.T), name, rhs)
			f.bind(name, rhs, v.T)
			if !ir.Occurs(v.Name, e.Body) {
				f.line("(void)%s;", name)
			}
			sc = sc.push(v.Name, name)
		}
		return f.expr(e.Body, sc)
	case *ir.If:
		return f.ifExpr(e, sc)
	case *ir.Assert:
		if a, b, ok := f.integerEq(e.Cond, sc); ok {
			// (assert (eq m n) ...): m and n are equal from here on. The
			// test is left out when they are known to be equal already.
			if f.canon(a) != f.canon(b) {
				f.line("if (!(%s == %s)) ks_fail(ctx, %s, %s);", a, b, pos(e.P), cString(e.Message()))
				f.equal(a, b)
			}
			return f.expr(e.Body, sc)
		}
		c := f.expr(e.Cond, sc)
		f.line("if (!%s) ks_fail(ctx, %s, %s);", paren(c), pos(e.P), cString(e.Message()))
		return f.expr(e.Body, sc)
	case *ir.Call:
		if e.Prim != nil {
			return f.prim(e, sc)
		}
		return f.call(e, sc)
	case *ir.Lam:
		panic(&syntax.Error{Pos: e.P, Msg: "internal: lambda outside a primitive"})
	}
	panic(fmt.Sprintf("cemit: unknown expression %T", e))
}

func paren(x string) string {
	if isAtom(x) || strings.HasPrefix(x, "(") && strings.HasSuffix(x, ")") && balanced(x[1:len(x)-1]) {
		return x
	}
	return "(" + x + ")"
}

// balanced reports whether the parentheses in s balance without going negative.
func balanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		case '"':
			return false // string literals: be conservative
		}
	}
	return depth == 0
}

// constant spells a literal.
func constant(v any) string {
	switch v := v.(type) {
	case int64:
		if v == math.MinInt64 {
			return "INT64_MIN"
		}
		if v < 0 {
			return "(" + strconv.FormatInt(v, 10) + ")"
		}
		return strconv.FormatInt(v, 10)
	case float64:
		switch {
		case math.IsInf(v, 1):
			return "INFINITY"
		case math.IsInf(v, -1):
			return "(-INFINITY)"
		case math.IsNaN(v):
			return "NAN"
		}
		s := ir.FormatFloatLit(v)
		if v < 0 || s[0] == '-' {
			return "(" + s + ")"
		}
		return s
	case bool:
		if v {
			return "true"
		}
		return "false"
	case string:
		return cString(v)
	}
	panic(fmt.Sprintf("cemit: constant %T", v))
}

// ifExpr compiles a conditional; only the chosen branch runs.
func (f *fn) ifExpr(e *ir.If, sc *env) string {
	c := f.atom(f.expr(e.Cond, sc), types.BoolType)
	thenF, elseF := f.sub(), f.sub()
	t := thenF.expr(e.Then, sc)
	el := elseF.expr(e.Else, sc)
	if thenF.b.Len() == 0 && elseF.b.Len() == 0 {
		return "(" + c + " ? " + t + " : " + el + ")"
	}
	r := f.fresh("")
	f.line("%s %s;", f.e.ctype(e.T), r)
	f.line("if (%s) {", c)
	f.b.WriteString(thenF.b.String())
	f.line("  %s = %s;", r, t)
	f.line("} else {")
	f.b.WriteString(elseF.b.String())
	f.line("  %s = %s;", r, el)
	f.line("}")
	return r
}

// sub returns a generator for a nested block.
func (f *fn) sub() *fn {
	return &fn{e: f.e, f: f.f, indent: f.indent + 1, depth: f.depth,
		same: clone(f.same), below: clone(f.below), fields: clone(f.fields), proven: f.proven, versions: f.versions, splits: f.splits, tail: f.tail}
}

// clone copies a map: facts found in a branch hold only there.
func clone[V any](m map[string]V) map[string]V {
	c := make(map[string]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// args compiles a call's arguments and returns the C arguments: the parts
// of a tuple argument when the callee takes its fields separately.
func (f *fn) args(args []ir.Expr, sc *env, unpack bool) []string {
	if len(args) == 1 && unpack && args[0].Type().Kind == types.Tuple {
		t := args[0].Type()
		if len(t.Elems) == 0 {
			// A unit value passes nothing; it is evaluated for its effects.
			if x := f.expr(args[0], sc); isAtom(x) {
				f.line("(void)%s;", x)
			}
			return nil
		}
		x := f.atom(f.expr(args[0], sc), t)
		out := make([]string, len(t.Elems))
		for i := range t.Elems {
			out[i] = x + ".f" + strconv.Itoa(i)
		}
		return out
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = f.expr(a, sc)
	}
	return out
}

// call compiles a call of a ks function.
func (f *fn) call(e *ir.Call, sc *env) string {
	name := f.e.funcName(e.Fn)
	if name == "" {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("%s is declared by edef but has no definition ksc can call", e.Fn.FullName())})
	}
	if f.tail[e] && f.depth == 0 {
		return f.tailCall(e, sc)
	}
	if twin := f.e.twins[e.Fn]; twin != "" && hasLoop(f.f.Body) {
		name = twin // compiled twice (KS_CLONES): the twin it can inline
	}
	args := f.args(e.Args, sc, true)
	if e.Fn.Kind == ir.EdefFunc {
		return f.temp(name+"("+strings.Join(args, ", ")+")", e.T)
	}
	call := name + "(" + strings.Join(append([]string{"ctx"}, args...), ", ") + ")"
	if !f.e.fails.Records(f.f, e) {
		return f.temp(call, e.T)
	}
	// The call is in the chain a runtime error's message shows.
	f.line("ks_call(ctx, %s);", cString(e.Site()))
	r := f.temp(call, e.T)
	f.line("ks_return(ctx);")
	return r
}

// zeroValue returns a value of type t with no content (for $dummy).
func (f *fn) zeroValue(t *types.Type) string {
	switch t.Kind {
	case types.Integer:
		return "0"
	case types.Float:
		return "0.0"
	case types.Bool:
		return "false"
	case types.String:
		return `""`
	}
	return "(" + f.e.ctype(t) + "){0}"
}
