// Package cl is the categorical language CL of seed 002, section 6
// (Figures 9-11): point-free terms that a definition is converted to,
// with pruning to the variables each part uses, and converted back.
//
// A CL term c has a type S => T: it maps a value of type S to a value of
// type T, and names no variables. A definition f(x1, ..., xn) = e becomes
// the term C[e](x1, ..., xn) whose input is the context, the tuple
// (x1, ..., xn) of the variables in scope. Inside, a variable is a
// projection of the context, a call f(e) is C[e] followed by F(f), and
// the binders (let, and the lambdas of build and the other primitives
// that take one) extend the context by their variables. With the Pruning
// rule every sub-term first drops the variables it does not use, so each
// part of the term receives exactly the variables it needs; that is what
// makes the derivative of a term compositional (docs/cl.md).
//
// The package has:
//
//   - the terms (this file) and their type system, Check (check.go);
//   - Convert, the conversion of a typed definition to CL (convert.go);
//   - Apply and Def.Expr, the meaning t ◇ c of a term as an IR expression,
//     which is how [CL f] gets its body (back.go);
//   - a concrete syntax: the printer, Format and FormatDef (print.go), and
//     the parser, Parse (parse.go);
//   - an evaluator, Machine, that runs terms on Go values (eval.go).
package cl

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Pos is a source position.
type Pos = ir.Pos

// A Term is a CL term. Its type S => T is found by Check.
type Term interface {
	Pos() Pos
	term()
}

// Id is the identity I : T => T.
type Id struct {
	P Pos
	T *types.Type
}

// Const is the constant K(k) : S => T, which ignores its input.
type Const struct {
	P Pos
	S *types.Type // the input type
	T *types.Type // the type of the constant
	// Val is an int64, float64, bool or string, or nil for ($dummy T).
	Val any
}

// Prune is P[i1, ..., im / n] : (S1 ... Sn) => (Si1 ... Sim): the tuple of
// fields i1, ..., im (1-based) of an n-tuple.
type Prune struct {
	P   Pos
	S   *types.Type // the input type, an n-tuple
	Idx []int
}

// Proj is the projection π(i, n) : (S1 ... Sn) => Si, the function
// constant of a variable (F(π(Γ, x)) in Figure 10) and of get$i$n.
type Proj struct {
	P Pos
	S *types.Type // the input type, an n-tuple
	I int         // 1-based
}

// Func is the function constant F(f) : A => R of a user function or a
// primitive f : A -> R.
type Func struct {
	P    Pos
	Fn   *ir.Func // the function, or nil for a primitive
	Prim *ir.Prim // the primitive, or nil
	S, T *types.Type
}

// Comp is the composition c1; c2 : S => U of c1 : S => T and c2 : T => U:
// first c1, then c2.
type Comp struct {
	P    Pos
	A, B Term
}

// Tuple is (c1, ..., cn) : S => (T1 ... Tn) for ci : S => Ti; the ci run
// in order.
type Tuple struct {
	P     Pos
	S     *types.Type // the input type (needed when n = 0)
	Elems []Term
}

// If is IF(c1, c2, c3) : S => T for c1 : S => Bool and c2, c3 : S => T.
// Only the chosen branch runs.
type If struct {
	P                Pos
	Cond, Then, Else Term
}

// Let is L(x, cr, cb) : S => T for a context S = (S1 ... Sn), cr : S => U
// and cb : (S1 ... Sn U) => T: the body runs on the context extended by
// the value of cr. With Pattern, U is a tuple (U1 ... Uk) of the k Vars
// and the context is extended by its fields: (S1 ... Sn U1 ... Uk).
type Let struct {
	P       Pos
	Vars    []Var
	Pattern bool
	Rhs     Term
	Body    Term
}

// A Var names a variable that a Let or a Lam adds to the context. The
// name is for reading and for the variables of the converted-back
// expression only: terms reach context fields by position.
type Var struct {
	Name string
	T    *types.Type
}

// Assert is A(c1, c2) : S => T for c1 : S => Bool and c2 : S => T: it
// checks c1 at run time, then is c2.
type Assert struct {
	P          Pos
	Cond, Body Term
	Msg        string // the runtime error; "" means "assertion failed"
}

// Message returns the runtime error of a failed assert.
func (a *Assert) Message() string {
	if a.Msg == "" {
		return "assertion failed"
	}
	return a.Msg
}

// Comb applies a primitive that takes functions, such as build, sumbuild
// or fold, to arguments that are terms: Comb(p, c1, ..., cn) : S => T.
// The arguments at the primitive's lambda positions (ir.Prim.Lams) are
// Lams, the others terms ci : S => Ti. B(cs, i, ce) of Figure 9 is
// Comb(build, cs, Lam(i, ce)).
type Comb struct {
	P    Pos
	Prim *ir.Prim
	S, T *types.Type
	Args []Term
}

// Lam is the function argument of a Comb: for its body c : (S1 ... Sn X)
// => B it is the function x -> c((t1, ..., tn, x)) of the context t, of
// type S => (Lam X B). It may appear only as an argument of a Comb.
type Lam struct {
	P     Pos
	Param Var
	Body  Term
}

func (c *Id) Pos() Pos     { return c.P }
func (c *Const) Pos() Pos  { return c.P }
func (c *Prune) Pos() Pos  { return c.P }
func (c *Proj) Pos() Pos   { return c.P }
func (c *Func) Pos() Pos   { return c.P }
func (c *Comp) Pos() Pos   { return c.P }
func (c *Tuple) Pos() Pos  { return c.P }
func (c *If) Pos() Pos     { return c.P }
func (c *Let) Pos() Pos    { return c.P }
func (c *Assert) Pos() Pos { return c.P }
func (c *Comb) Pos() Pos   { return c.P }
func (c *Lam) Pos() Pos    { return c.P }

func (*Id) term()     {}
func (*Const) term()  {}
func (*Prune) term()  {}
func (*Proj) term()   {}
func (*Func) term()   {}
func (*Comp) term()   {}
func (*Tuple) term()  {}
func (*If) term()     {}
func (*Let) term()    {}
func (*Assert) term() {}
func (*Comb) term()   {}
func (*Lam) term()    {}

// A Def is a definition in CL, f : S => T = c: Body maps the context of
// f's parameters, the tuple (x1, ..., xn) of their values, to f's result.
// (For a function of one parameter the context is a 1-tuple.)
type Def struct {
	Func   *ir.Func
	Params []*ir.Var
	Body   Term
}

// Context returns the type of the context of vars: the tuple of their types.
func Context(vars []*ir.Var) *types.Type {
	ts := make([]*types.Type, len(vars))
	for i, v := range vars {
		ts[i] = v.T
	}
	return types.TupleOf(ts...)
}

// Extend returns the context type s (a tuple) extended by the types ts:
// the type of t > x1 > ... > xk in Figure 10.
func Extend(s *types.Type, ts ...*types.Type) *types.Type {
	elems := make([]*types.Type, 0, len(s.Elems)+len(ts))
	elems = append(append(elems, s.Elems...), ts...)
	return types.TupleOf(elems...)
}

// Derive returns the body of [CL f]: f's body sent through CL and back.
// The body uses the parameters of f (f.Params).
func Derive(f *ir.Func, ns *ir.Names) (ir.Expr, error) {
	d, err := Convert(f)
	if err != nil {
		return nil, err
	}
	if _, _, err := Check(d.Body); err != nil {
		return nil, err
	}
	return d.Expr(ns)
}
