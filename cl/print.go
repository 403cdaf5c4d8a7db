package cl

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// The concrete syntax of CL is made of S-expressions:
//
//	id                          I
//	(K 1.5)  (K ($dummy T))     K(k)
//	(prune 1 3 / 4)             P[1, 3 / 4]
//	(proj 2 3)                  π(2, 3)
//	(F mul)  (F [f Float])      F(f); an overloaded user function with its argument type
//	(comp c1 c2 c3)             c1; c2; c3
//	(tuple c1 c2)               (c1, c2)
//	(if c1 c2 c3)               IF(c1, c2, c3)
//	(let x cr cb)               L(x, cr, cb); (let (a b) cr cb) for a tuple pattern
//	(assert c1 c2)              A(c1, c2); (assert "message" c1 c2) with the runtime error
//	(build cs (lam (i : Integer) ce))
//	                            B(cs, i, ce), and likewise sumbuild, fold, ...
//
// A definition is printed as (def f (x1 .. xn) : S => T c), S being the
// type of the context of the parameters x1 .. xn.

// width is the line width the printer tries to keep to.
const width = 100

// Format prints every definition of prog with a body in CL, except those
// whose types hold linear maps. A definition that cannot be converted is
// an error at its position; the others are printed.
func Format(prog *ir.Program) ([]byte, error) {
	var buf bytes.Buffer
	var errs syntax.ErrorList
	name := Namer(prog)
	for _, f := range prog.Funcs {
		if f.Body == nil || holdsLM(f) {
			continue
		}
		d, err := Convert(f)
		if err == nil {
			err = CheckDef(d)
		}
		if err != nil {
			addError(&errs, f, err)
			continue
		}
		buf.WriteString(FormatDef(d, name))
		buf.WriteByte('\n')
	}
	errs.Sort()
	return buf.Bytes(), errs.Err()
}

func holdsLM(f *ir.Func) bool {
	if f.Arg.Contains(types.LM) || f.Result.Contains(types.LM) {
		return true
	}
	for _, v := range f.Params {
		if v.T.Contains(types.LM) {
			return true
		}
	}
	return false
}

func addError(errs *syntax.ErrorList, f *ir.Func, err error) {
	var el syntax.ErrorList
	var e *syntax.Error
	switch {
	case errors.As(err, &el):
		*errs = append(*errs, el...)
	case errors.As(err, &e):
		*errs = append(*errs, e)
	default:
		errs.Add(f.P, "%v", err)
	}
}

// Namer returns how the printer names the functions of prog: by name,
// with the argument type of the base function where it is overloaded or
// is also the name of a primitive ([f Float], [fwd [f Float]]).
func Namer(prog *ir.Program) func(*ir.Func) string {
	overloads := map[string]map[string]bool{}
	for _, f := range prog.Funcs {
		if overloads[f.Name.Base] == nil {
			overloads[f.Name.Base] = map[string]bool{}
		}
		overloads[f.Name.Base][typeText(f.BaseArg)] = true
	}
	return func(f *ir.Func) string {
		if len(overloads[f.Name.Base]) > 1 || ir.IsPrim(f.Name.Base) {
			return f.FullName()
		}
		return f.Name.String()
	}
}

// FormatDef returns a definition in CL; name names functions (nil: by
// their names).
func FormatDef(d *Def, name func(*ir.Func) string) string {
	if name == nil {
		name = func(f *ir.Func) string { return f.Name.String() }
	}
	var b strings.Builder
	b.WriteString("(def ")
	b.WriteString(name(d.Func))
	b.WriteString(" (")
	for i, v := range d.Params {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v.Name)
	}
	b.WriteString(") : ")
	b.WriteString(Context(d.Params).String())
	b.WriteString(" => ")
	b.WriteString(d.Func.Result.String())
	b.WriteString("\n  ")
	layout(&b, toSexp(d.Body, name), 2)
	b.WriteString(")\n")
	return b.String()
}

// Sprint returns a term on one line.
func Sprint(c Term) string {
	var b strings.Builder
	toSexp(c, nil).flat(&b)
	return b.String()
}

// Fprint returns a term laid out on lines of about 100 columns.
func Fprint(c Term) string {
	var b strings.Builder
	layout(&b, toSexp(c, nil), 0)
	return b.String()
}

// A sexp is an atom or a list, with the length of its one-line form.
type sexp struct {
	atom string
	list []*sexp
	n    int
}

func atom(s string) *sexp { return &sexp{atom: s, n: len(s)} }

func list(items ...*sexp) *sexp {
	n := 1 + len(items)
	for _, it := range items {
		n += it.n
	}
	return &sexp{list: items, n: n}
}

func (s *sexp) flat(b *strings.Builder) {
	if s.list == nil {
		b.WriteString(s.atom)
		return
	}
	b.WriteByte('(')
	for i, it := range s.list {
		if i > 0 {
			b.WriteByte(' ')
		}
		it.flat(b)
	}
	b.WriteByte(')')
}

// layout writes s at column col: on one line if it fits, otherwise with
// its leading atoms on the first line and each other item on a line of
// its own, indented.
func layout(b *strings.Builder, s *sexp, col int) {
	if s.list == nil || col+s.n <= width {
		s.flat(b)
		return
	}
	b.WriteByte('(')
	k := 0
	for k < len(s.list) && s.list[k].list == nil {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.list[k].atom)
		k++
	}
	for ; k < len(s.list); k++ {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", col+2))
		layout(b, s.list[k], col+2)
	}
	b.WriteByte(')')
}

func toSexp(c Term, name func(*ir.Func) string) *sexp {
	sub := func(c Term) *sexp { return toSexp(c, name) }
	switch c := c.(type) {
	case *Id:
		return atom("id")
	case *Const:
		return atom("(K " + constText(c) + ")")
	case *Prune:
		s := "(prune"
		for _, i := range c.Idx {
			s += " " + strconv.Itoa(i)
		}
		return atom(s + " / " + strconv.Itoa(tupleLen(c.S)) + ")")
	case *Proj:
		return atom("(proj " + strconv.Itoa(c.I) + " " + strconv.Itoa(tupleLen(c.S)) + ")")
	case *Func:
		switch {
		case c.Prim != nil:
			return atom("(F " + c.Prim.Name + ")")
		case name != nil:
			return atom("(F " + name(c.Fn) + ")")
		case c.Fn != nil:
			return atom("(F " + c.Fn.Name.String() + ")")
		}
		return atom("(F ?)")
	case *Comp:
		items := []*sexp{atom("comp")}
		for _, x := range compParts(c) {
			items = append(items, sub(x))
		}
		return list(items...)
	case *Tuple:
		items := []*sexp{atom("tuple")}
		for _, x := range c.Elems {
			items = append(items, sub(x))
		}
		return list(items...)
	case *If:
		return list(atom("if"), sub(c.Cond), sub(c.Then), sub(c.Else))
	case *Let:
		return list(atom("let"), atom(varsText(c)), sub(c.Rhs), sub(c.Body))
	case *Assert:
		if c.Msg != "" {
			return list(atom("assert"), atom(quote(c.Msg)), sub(c.Cond), sub(c.Body))
		}
		return list(atom("assert"), sub(c.Cond), sub(c.Body))
	case *Comb:
		prim := "?"
		if c.Prim != nil {
			prim = c.Prim.Name
		}
		items := []*sexp{atom(prim)}
		for _, x := range c.Args {
			items = append(items, sub(x))
		}
		return list(items...)
	case *Lam:
		return list(atom("lam"), atom("("+c.Param.Name+" : "+typeText(c.Param.T)+")"), sub(c.Body))
	case nil:
		return atom("<nil>")
	}
	return atom("<?>")
}

// compParts returns the stages of a composition, flattened.
func compParts(c Term) []Term {
	comp, ok := c.(*Comp)
	if !ok {
		return []Term{c}
	}
	return append(compParts(comp.A), compParts(comp.B)...)
}

func tupleLen(t *types.Type) int {
	if t == nil {
		return 0
	}
	return len(t.Elems)
}

func typeText(t *types.Type) string {
	if t == nil {
		return "?"
	}
	return t.String()
}

func varsText(c *Let) string {
	names := make([]string, len(c.Vars))
	for i, v := range c.Vars {
		names[i] = v.Name
	}
	if c.Pattern {
		return "(" + strings.Join(names, " ") + ")"
	}
	return strings.Join(names, " ")
}

func constText(c *Const) string {
	switch v := c.Val.(type) {
	case nil:
		return "($dummy " + typeText(c.T) + ")"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return ir.FormatFloatLit(v)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return quote(v)
	}
	return "?"
}

// quote returns a ks string literal.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(s) + `"`
}
