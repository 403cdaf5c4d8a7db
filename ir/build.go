package ir

import (
	"fmt"
	"strconv"

	"github.com/ksc-lang/ksc/types"
)

// A Names hands out fresh variable names: base$1, base$2, ..., skipping
// the names it was told are taken (see Program.Names).
type Names struct {
	n     map[string]int
	taken map[string]bool
}

// Clone returns a copy of ns: names drawn from one are not drawn from
// the other (a view of a program, such as its single-use form, draws
// from a copy so that printing it does not change what the compiler
// names next).
func (ns *Names) Clone() *Names {
	c := &Names{n: map[string]int{}, taken: map[string]bool{}}
	for k, v := range ns.n {
		c.n[k] = v
	}
	for k := range ns.taken {
		c.taken[k] = true
	}
	return c
}

// Take records that name is in use.
func (ns *Names) Take(name string) {
	if ns.taken == nil {
		ns.taken = map[string]bool{}
	}
	ns.taken[name] = true
}

// Fresh returns a new name built from base.
func (ns *Names) Fresh(base string) string {
	if ns.n == nil {
		ns.n = map[string]int{}
	}
	// Strip an earlier suffix so names do not grow: x$3 -> x.
	for i := len(base) - 1; i > 0; i-- {
		if base[i] == '$' {
			if _, err := strconv.Atoi(base[i+1:]); err == nil && i+1 < len(base) {
				base = base[:i]
			}
			break
		}
		if base[i] < '0' || base[i] > '9' {
			break
		}
	}
	for {
		ns.n[base]++
		name := base + "$" + strconv.Itoa(ns.n[base])
		if !ns.taken[name] {
			return name
		}
	}
}

// FreshVar returns a new variable of type t at pos.
func (ns *Names) FreshVar(pos Pos, base string, t *types.Type) *Var {
	return &Var{P: pos, T: t, Name: ns.Fresh(base)}
}

// MkPrim builds a call of the primitive name with the given argument parts,
// choosing the overload by their types. It panics if there is none: the
// passes that build IR only build well-typed IR.
func MkPrim(pos Pos, name string, args ...Expr) *Call {
	c, err := TryPrim(pos, name, args...)
	if err != nil {
		panic(err)
	}
	return c
}

// TryPrim is MkPrim returning an error instead of panicking.
func TryPrim(pos Pos, name string, args ...Expr) (*Call, error) {
	arg := ArgType(args)
	var msg string
	for _, p := range LookupPrim(name) {
		res, m := p.TypeOf(arg)
		if m == "" {
			return &Call{P: pos, T: res, Prim: p, Args: args}, nil
		}
		msg = m
	}
	if msg == "" {
		msg = "no primitive " + name
	}
	return nil, fmt.Errorf("%s: %s", pos, msg)
}

// CallFunc builds a call of a global function.
func CallFunc(pos Pos, f *Func, args ...Expr) *Call {
	if !ArgType(args).Equal(f.Arg) {
		panic(fmt.Sprintf("ir: calling %s : %s with %s", f.FullName(), f.Arg, ArgType(args)))
	}
	return &Call{P: pos, T: f.Result, Fn: f, Args: args}
}

// MkTuple builds (tuple elems...).
func MkTuple(pos Pos, elems ...Expr) *Tuple {
	ts := make([]*types.Type, len(elems))
	for i, e := range elems {
		ts[i] = e.Type()
	}
	return &Tuple{P: pos, T: types.TupleOf(ts...), Elems: elems}
}

// MkGet builds (get$i$n x), 1-based.
func MkGet(pos Pos, i int, x Expr) *Get {
	t := x.Type()
	return &Get{P: pos, T: t.Elems[i-1], I: i, N: len(t.Elems), X: x}
}

// MkLet builds (let (v rhs) body).
func MkLet(pos Pos, v *Var, rhs, body Expr) *Let {
	return &Let{P: pos, Vars: []*Var{v}, Rhs: rhs, Body: body}
}

// MkLam builds (lam (v : T) body).
func MkLam(pos Pos, v *Var, body Expr) *Lam { return &Lam{P: pos, Param: v, Body: body} }

// MkIf builds (if c t e).
func MkIf(pos Pos, c, t, e Expr) *If { return &If{P: pos, T: t.Type(), Cond: c, Then: t, Else: e} }

// Int, Float and Bool build constants.
func Int(pos Pos, v int64) *Const     { return &Const{P: pos, T: types.IntegerType, Val: v} }
func Float(pos Pos, v float64) *Const { return &Const{P: pos, T: types.FloatType, Val: v} }
func Bool(pos Pos, v bool) *Const     { return &Const{P: pos, T: types.BoolType, Val: v} }

// Ref returns a new reference to variable v.
func Ref(pos Pos, v *Var) *Var { return &Var{P: pos, T: v.T, Name: v.Name} }

// IsAtom reports whether e is a variable or a constant.
func IsAtom(e Expr) bool {
	switch e.(type) {
	case *Var, *Const:
		return true
	}
	return false
}

// Subst returns e with free occurrences of the variables in m replaced by
// copies of their expressions, which must be atoms or otherwise free of
// variables that binders in e could capture.
func Subst(e Expr, m map[string]Expr) Expr {
	switch e := e.(type) {
	case *Var:
		if r, ok := m[e.Name]; ok {
			return Copy(r, Pos{})
		}
		return e
	case *Const, *Dummy:
		return e
	case *Call:
		return &Call{P: e.P, T: e.T, Fn: e.Fn, Prim: e.Prim, Args: substList(e.Args, m)}
	case *Tuple:
		return &Tuple{P: e.P, T: e.T, Elems: substList(e.Elems, m)}
	case *Get:
		return &Get{P: e.P, T: e.T, I: e.I, N: e.N, X: Subst(e.X, m)}
	case *Let:
		rhs := Subst(e.Rhs, m)
		inner := without(m, e.Vars...)
		return &Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: rhs, Body: Subst(e.Body, inner), Of: e.Of}
	case *If:
		return &If{P: e.P, T: e.T, Cond: Subst(e.Cond, m), Then: Subst(e.Then, m), Else: Subst(e.Else, m)}
	case *Assert:
		return &Assert{P: e.P, Cond: Subst(e.Cond, m), Body: Subst(e.Body, m), Msg: e.Msg}
	case *Lam:
		return &Lam{P: e.P, Param: e.Param, Body: Subst(e.Body, without(m, e.Param))}
	}
	panic(fmt.Sprintf("ir: unknown expression %T", e))
}

func substList(es []Expr, m map[string]Expr) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = Subst(e, m)
	}
	return out
}

func without(m map[string]Expr, vs ...*Var) map[string]Expr {
	shadow := false
	for _, v := range vs {
		if _, ok := m[v.Name]; ok {
			shadow = true
		}
	}
	if !shadow {
		return m
	}
	out := map[string]Expr{}
	for k, x := range m {
		out[k] = x
	}
	for _, v := range vs {
		delete(out, v.Name)
	}
	return out
}
