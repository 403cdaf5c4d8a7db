package cl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Parse reads definitions in the concrete syntax of CL, as Format prints
// them, naming the functions of prog. The printed terms leave out their
// input types; Parse finds them from the header of each definition,
// (def f (x1 .. xn) : S => T c), going from the input of a term to its
// parts, and so also picks the overloads of primitives. The definitions
// it returns type-check. Errors are at positions in the text.
func Parse(filename string, src []byte, prog *ir.Program) ([]*Def, error) {
	sexps, _, errs := syntax.Read(filename, src)
	if len(errs) > 0 {
		return nil, errs
	}
	p := &parser{funcs: map[string]*ir.Func{}, named: map[string]*types.Type{}}
	name := Namer(prog)
	for _, f := range prog.Funcs {
		p.funcs[name(f)] = f
	}
	for _, t := range prog.Types {
		p.named[t.Name] = t
	}
	var defs []*Def
	var all syntax.ErrorList
	for _, s := range sexps {
		d, err := p.def(s)
		if err != nil {
			addError(&all, &ir.Func{P: s.Pos()}, err)
			continue
		}
		defs = append(defs, d)
	}
	return defs, all.Err()
}

type parser struct {
	funcs map[string]*ir.Func
	named map[string]*types.Type
}

func parseError(s syntax.SExpr, format string, args ...any) error {
	return &syntax.Error{Pos: s.Pos(), Msg: "CL: " + fmt.Sprintf(format, args...)}
}

// form returns the elements of a parenthesised list whose head is the
// identifier head, or nil.
func form(s syntax.SExpr, head string) []syntax.SExpr {
	l, ok := s.(*syntax.List)
	if !ok || l.Square || len(l.Elems) == 0 || ident(l.Elems[0]) != head {
		return nil
	}
	return l.Elems
}

// ident returns the text of an identifier atom, or "".
func ident(s syntax.SExpr) string {
	if a, ok := s.(*syntax.Atom); ok && a.Kind == syntax.IdentAtom {
		return a.Text
	}
	return ""
}

// text returns an S-expression as the printer spells it.
func text(s syntax.SExpr) string {
	switch s := s.(type) {
	case *syntax.Atom:
		if s.Kind == syntax.StringAtom {
			return quote(s.Text)
		}
		return s.Text
	case *syntax.List:
		parts := make([]string, len(s.Elems))
		for i, e := range s.Elems {
			parts[i] = text(e)
		}
		if s.Square {
			return "[" + strings.Join(parts, " ") + "]"
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	return ""
}

// def reads (def NAME (x1 .. xn) : S => T BODY).
func (p *parser) def(s syntax.SExpr) (*Def, error) {
	el := form(s, "def")
	if len(el) != 8 || ident(el[3]) != ":" || ident(el[5]) != "=>" {
		return nil, parseError(s, "expected (def NAME (x1 .. xn) : S => T TERM)")
	}
	f := p.funcs[text(el[1])]
	if f == nil {
		return nil, parseError(el[1], "no function %s", text(el[1]))
	}
	names, ok := el[2].(*syntax.List)
	if !ok {
		return nil, parseError(el[2], "expected the list of parameters")
	}
	s0, err := p.typ(el[4])
	if err != nil {
		return nil, err
	}
	if s0.Kind != types.Tuple || len(s0.Elems) != len(names.Elems) {
		return nil, parseError(el[4], "the context of %d parameters cannot have type %s", len(names.Elems), s0)
	}
	params := make([]*ir.Var, len(names.Elems))
	for i, n := range names.Elems {
		if ident(n) == "" {
			return nil, parseError(n, "expected a parameter name")
		}
		params[i] = &ir.Var{P: n.Pos(), T: s0.Elems[i], Name: ident(n)}
	}
	t, err := p.typ(el[6])
	if err != nil {
		return nil, err
	}
	body, err := p.term(el[7], s0)
	if err != nil {
		return nil, err
	}
	d := &Def{Func: f, Params: params, Body: body}
	if _, u, err := Check(body); err != nil || !u.Equal(t) {
		if err == nil {
			err = parseError(el[7], "the body returns %s, not %s", u, t)
		}
		return nil, err
	}
	return d, nil
}

// term reads a term whose input has type s.
func (p *parser) term(x syntax.SExpr, s *types.Type) (Term, error) {
	pos := x.Pos()
	if ident(x) == "id" {
		return &Id{P: pos, T: s}, nil
	}
	l, ok := x.(*syntax.List)
	if !ok || l.Square || len(l.Elems) == 0 || ident(l.Elems[0]) == "" {
		return nil, parseError(x, "expected a CL term, not %s", text(x))
	}
	el := l.Elems
	switch head := ident(el[0]); head {
	case "K":
		return p.constant(x, el, s)
	case "prune":
		return p.prune(x, el, s)
	case "proj":
		if len(el) != 3 {
			return nil, parseError(x, "expected (proj I N)")
		}
		i, err1 := strconv.Atoi(text(el[1]))
		n, err2 := strconv.Atoi(text(el[2]))
		if err1 != nil || err2 != nil || s.Kind != types.Tuple || n != len(s.Elems) {
			return nil, parseError(x, "%s of an input of type %s", text(x), s)
		}
		return &Proj{P: pos, S: s, I: i}, nil
	case "F":
		if len(el) != 2 {
			return nil, parseError(x, "expected (F NAME)")
		}
		return p.function(el[1], s)
	case "comp":
		if len(el) < 3 {
			return nil, parseError(x, "expected (comp C1 C2 ...)")
		}
		return p.comp(el[1:], s)
	case "tuple":
		elems, err := p.terms(el[1:], s)
		if err != nil {
			return nil, err
		}
		return &Tuple{P: pos, S: s, Elems: elems}, nil
	case "if":
		parts, err := p.terms(el[1:], s)
		if err != nil {
			return nil, err
		}
		if len(parts) != 3 {
			return nil, parseError(x, "expected (if C1 C2 C3)")
		}
		return &If{P: pos, Cond: parts[0], Then: parts[1], Else: parts[2]}, nil
	case "assert":
		msg := ""
		if len(el) > 1 {
			if a, ok := el[1].(*syntax.Atom); ok && a.Kind == syntax.StringAtom {
				msg, el = a.Text, el[1:]
			}
		}
		parts, err := p.terms(el[1:], s)
		if err != nil {
			return nil, err
		}
		if len(parts) != 2 {
			return nil, parseError(x, "expected (assert [MESSAGE] C1 C2)")
		}
		return &Assert{P: pos, Cond: parts[0], Body: parts[1], Msg: msg}, nil
	case "let":
		return p.let(x, el, s)
	default:
		for _, prim := range ir.LookupPrim(head) {
			if len(prim.Lams) > 0 {
				return p.comb(x, prim, el[1:], s)
			}
		}
		return nil, parseError(x, "unknown CL term %s", head)
	}
}

func (p *parser) terms(xs []syntax.SExpr, s *types.Type) ([]Term, error) {
	out := make([]Term, len(xs))
	for i, x := range xs {
		t, err := p.term(x, s)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// output returns the type of the output of a term read on an input of type s.
func output(c Term) (*types.Type, error) {
	_, t, err := Check(c)
	return t, err
}

func (p *parser) comp(xs []syntax.SExpr, s *types.Type) (Term, error) {
	var c Term
	for _, x := range xs {
		next, err := p.term(x, s)
		if err != nil {
			return nil, err
		}
		if c == nil {
			c = next
		} else {
			c = &Comp{P: c.Pos(), A: c, B: next}
		}
		if s, err = output(next); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (p *parser) constant(x syntax.SExpr, el []syntax.SExpr, s *types.Type) (Term, error) {
	if len(el) != 2 {
		return nil, parseError(x, "expected (K CONSTANT)")
	}
	c := &Const{P: x.Pos(), S: s}
	if d := form(el[1], "$dummy"); d != nil {
		if len(d) != 2 {
			return nil, parseError(el[1], "expected ($dummy TYPE)")
		}
		t, err := p.typ(d[1])
		if err != nil {
			return nil, err
		}
		c.T = t
		return c, nil
	}
	a, ok := el[1].(*syntax.Atom)
	if !ok {
		return nil, parseError(el[1], "expected a constant")
	}
	var err error
	switch {
	case a.Kind == syntax.IntAtom:
		var n int64
		n, err = strconv.ParseInt(a.Text, 0, 64)
		c.T, c.Val = types.IntegerType, n
	case a.Kind == syntax.FloatAtom:
		var f float64
		f, err = strconv.ParseFloat(a.Text, 64)
		c.T, c.Val = types.FloatType, f
	case a.Kind == syntax.StringAtom:
		c.T, c.Val = types.StringType, a.Text
	case a.Text == "true" || a.Text == "false":
		c.T, c.Val = types.BoolType, a.Text == "true"
	default:
		return nil, parseError(a, "expected a constant, not %s", a.Text)
	}
	if err != nil {
		return nil, parseError(a, "bad constant %s", a.Text)
	}
	return c, nil
}

// prune reads (prune I1 .. IM / N).
func (p *parser) prune(x syntax.SExpr, el []syntax.SExpr, s *types.Type) (Term, error) {
	if len(el) < 3 || ident(el[len(el)-2]) != "/" {
		return nil, parseError(x, "expected (prune I1 .. IM / N)")
	}
	n, err := strconv.Atoi(text(el[len(el)-1]))
	if err != nil || s.Kind != types.Tuple || n != len(s.Elems) {
		return nil, parseError(x, "%s of an input of type %s", text(x), s)
	}
	idx := make([]int, len(el)-3)
	for i, a := range el[1 : len(el)-2] {
		if idx[i], err = strconv.Atoi(text(a)); err != nil {
			return nil, parseError(a, "expected a field number")
		}
	}
	return &Prune{P: x.Pos(), S: s, Idx: idx}, nil
}

// function reads the NAME of (F NAME): a function of the program, or a
// primitive, whose overload is the one taking s.
func (p *parser) function(x syntax.SExpr, s *types.Type) (Term, error) {
	name := text(x)
	if f := p.funcs[name]; f != nil {
		return &Func{P: x.Pos(), Fn: f, S: s, T: f.Result}, nil
	}
	for _, prim := range ir.LookupPrim(name) {
		if len(prim.Lams) > 0 {
			continue
		}
		if t, msg := prim.TypeOf(s); msg == "" {
			return &Func{P: x.Pos(), Prim: prim, S: s, T: t}, nil
		}
	}
	return nil, parseError(x, "no function or primitive %s taking %s", name, s)
}

// let reads (let x CR CB) or (let (a b ..) CR CB).
func (p *parser) let(x syntax.SExpr, el []syntax.SExpr, s *types.Type) (Term, error) {
	if len(el) != 4 || s.Kind != types.Tuple {
		return nil, parseError(x, "expected (let VARS CR CB) on a context")
	}
	var names []syntax.SExpr
	pattern := false
	if l, ok := el[1].(*syntax.List); ok {
		names, pattern = l.Elems, true
	} else {
		names = el[1:2]
	}
	rhs, err := p.term(el[2], s)
	if err != nil {
		return nil, err
	}
	u, err := output(rhs)
	if err != nil {
		return nil, err
	}
	vts := []*types.Type{u}
	if pattern {
		if u.Kind != types.Tuple || len(u.Elems) != len(names) {
			return nil, parseError(el[1], "a pattern of %d variables bound to %s", len(names), u)
		}
		vts = u.Elems
	}
	vars := make([]Var, len(names))
	for i, n := range names {
		if ident(n) == "" {
			return nil, parseError(n, "expected a variable name")
		}
		vars[i] = Var{Name: ident(n), T: vts[i]}
	}
	body, err := p.term(el[3], Extend(s, vts...))
	if err != nil {
		return nil, err
	}
	return &Let{P: x.Pos(), Vars: vars, Pattern: pattern, Rhs: rhs, Body: body}, nil
}

// comb reads a combinator (PRIM ARG ..) whose function arguments are
// (lam (x : T) C).
func (p *parser) comb(x syntax.SExpr, prim *ir.Prim, xs []syntax.SExpr, s *types.Type) (Term, error) {
	if s.Kind != types.Tuple {
		return nil, parseError(x, "%s on %s, which is not a context", prim.Name, s)
	}
	args := make([]Term, len(xs))
	parts := make([]*types.Type, len(xs))
	for i, a := range xs {
		var err error
		if lam := form(a, "lam"); lam != nil {
			args[i], err = p.lam(a, lam, s)
		} else {
			args[i], err = p.term(a, s)
		}
		if err != nil {
			return nil, err
		}
		if _, parts[i], err = check(args[i], true); err != nil {
			return nil, err
		}
	}
	arg := types.TupleOf(parts...)
	if len(parts) == 1 {
		arg = parts[0]
	}
	for _, q := range ir.LookupPrim(prim.Name) {
		if t, msg := q.TypeOf(arg); msg == "" && len(q.Lams) > 0 {
			return &Comb{P: x.Pos(), Prim: q, S: s, T: t, Args: args}, nil
		}
	}
	return nil, parseError(x, "%s cannot take %s", prim.Name, arg)
}

// lam reads (lam (x : T) C).
func (p *parser) lam(x syntax.SExpr, el []syntax.SExpr, s *types.Type) (Term, error) {
	param, ok := el[1].(*syntax.List)
	if len(el) != 3 || !ok || len(param.Elems) != 3 || ident(param.Elems[0]) == "" || ident(param.Elems[1]) != ":" {
		return nil, parseError(x, "expected (lam (x : TYPE) TERM)")
	}
	t, err := p.typ(param.Elems[2])
	if err != nil {
		return nil, err
	}
	body, err := p.term(el[2], Extend(s, t))
	if err != nil {
		return nil, err
	}
	return &Lam{P: x.Pos(), Param: Var{Name: ident(param.Elems[0]), T: t}, Body: body}, nil
}

// typ reads a type.
func (p *parser) typ(x syntax.SExpr) (*types.Type, error) {
	switch id := ident(x); id {
	case "Integer":
		return types.IntegerType, nil
	case "Float":
		return types.FloatType, nil
	case "Bool":
		return types.BoolType, nil
	case "String":
		return types.StringType, nil
	case "":
	default:
		if t := p.named[id]; t != nil {
			return t, nil
		}
		return nil, parseError(x, "unknown type %s", id)
	}
	l, ok := x.(*syntax.List)
	if !ok || l.Square || len(l.Elems) == 0 {
		return nil, parseError(x, "expected a type")
	}
	args := make([]*types.Type, 0, len(l.Elems)-1)
	rank := 0
	for i, e := range l.Elems[1:] {
		if i == 0 && ident(l.Elems[0]) == "Tensor" {
			n, err := strconv.Atoi(text(e))
			if err != nil || n < 1 {
				return nil, parseError(e, "expected a rank")
			}
			rank = n
			continue
		}
		t, err := p.typ(e)
		if err != nil {
			return nil, err
		}
		args = append(args, t)
	}
	switch head := ident(l.Elems[0]); {
	case head == "Tuple":
		return types.TupleOf(args...), nil
	case head == "Vec" && len(args) == 1:
		return types.VecOf(args[0]), nil
	case head == "Tensor" && len(args) == 1:
		return types.TensorOf(rank, args[0]), nil
	case head == "Lam" && len(args) == 2:
		return types.LamOf(args[0], args[1]), nil
	case head == "LM" && len(args) == 2:
		return types.LMOf(args[0], args[1]), nil
	case head == "Variant" && len(args) == 2:
		return types.VariantOf(args[0], args[1]), nil
	}
	return nil, parseError(x, "expected a type, not %s", text(x))
}
