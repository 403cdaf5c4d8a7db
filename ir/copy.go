package ir

import "fmt"

// Copy returns a deep copy of e. If pos is valid, every node of the copy
// gets that position instead of its own (used when inlining a prelude
// definition, so that runtime errors name the call).
func Copy(e Expr, pos Pos) Expr {
	p := func(q Pos) Pos {
		if pos.IsValid() {
			return pos
		}
		return q
	}
	v := func(x *Var) *Var { return &Var{P: p(x.P), T: x.T, Name: x.Name} }
	list := func(es []Expr) []Expr {
		out := make([]Expr, len(es))
		for i, x := range es {
			out[i] = Copy(x, pos)
		}
		return out
	}
	switch e := e.(type) {
	case *Const:
		return &Const{P: p(e.P), T: e.T, Val: e.Val}
	case *Var:
		return v(e)
	case *Dummy:
		return &Dummy{P: p(e.P), T: e.T}
	case *Call:
		return &Call{P: p(e.P), T: e.T, Fn: e.Fn, Prim: e.Prim, Args: list(e.Args)}
	case *Tuple:
		return &Tuple{P: p(e.P), T: e.T, Elems: list(e.Elems)}
	case *Get:
		return &Get{P: p(e.P), T: e.T, I: e.I, N: e.N, X: Copy(e.X, pos)}
	case *Let:
		vars := make([]*Var, len(e.Vars))
		for i, x := range e.Vars {
			vars[i] = v(x)
		}
		return &Let{P: p(e.P), Vars: vars, Pattern: e.Pattern, Rhs: Copy(e.Rhs, pos), Body: Copy(e.Body, pos), Of: e.Of}
	case *If:
		return &If{P: p(e.P), T: e.T, Cond: Copy(e.Cond, pos), Then: Copy(e.Then, pos), Else: Copy(e.Else, pos)}
	case *Assert:
		return &Assert{P: p(e.P), Cond: Copy(e.Cond, pos), Body: Copy(e.Body, pos), Msg: e.Msg}
	case *Lam:
		return &Lam{P: p(e.P), Param: v(e.Param), Body: Copy(e.Body, pos)}
	}
	panic(fmt.Sprintf("ir: unknown expression %T", e))
}

// Map rebuilds e bottom-up, replacing each node by f of the node with its
// children already mapped. Nodes f returns unchanged are kept as they are
// when none of their children changed.
func Map(e Expr, f func(Expr) Expr) Expr {
	list := func(es []Expr) ([]Expr, bool) {
		changed := false
		out := make([]Expr, len(es))
		for i, x := range es {
			out[i] = Map(x, f)
			changed = changed || out[i] != x
		}
		return out, changed
	}
	switch e := e.(type) {
	case *Const, *Var, *Dummy:
		return f(e)
	case *Call:
		if args, ch := list(e.Args); ch {
			e = &Call{P: e.P, T: e.T, Fn: e.Fn, Prim: e.Prim, Args: args}
		}
		return f(e)
	case *Tuple:
		if elems, ch := list(e.Elems); ch {
			e = &Tuple{P: e.P, T: e.T, Elems: elems}
		}
		return f(e)
	case *Get:
		if x := Map(e.X, f); x != e.X {
			e = &Get{P: e.P, T: e.T, I: e.I, N: e.N, X: x}
		}
		return f(e)
	case *Let:
		rhs, body := Map(e.Rhs, f), Map(e.Body, f)
		if rhs != e.Rhs || body != e.Body {
			e = &Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: rhs, Body: body, Of: e.Of}
		}
		return f(e)
	case *If:
		c, t, el := Map(e.Cond, f), Map(e.Then, f), Map(e.Else, f)
		if c != e.Cond || t != e.Then || el != e.Else {
			e = &If{P: e.P, T: e.T, Cond: c, Then: t, Else: el}
		}
		return f(e)
	case *Assert:
		c, b := Map(e.Cond, f), Map(e.Body, f)
		if c != e.Cond || b != e.Body {
			e = &Assert{P: e.P, Cond: c, Body: b, Msg: e.Msg}
		}
		return f(e)
	case *Lam:
		if b := Map(e.Body, f); b != e.Body {
			e = &Lam{P: e.P, Param: e.Param, Body: b}
		}
		return f(e)
	}
	panic(fmt.Sprintf("ir: unknown expression %T", e))
}

// MapPre rebuilds e top-down: f sees each node before its children; if it
// returns a replacement, that is used as it is (f may map the parts it
// keeps itself), otherwise the node's children are mapped in turn.
func MapPre(e Expr, f func(Expr) Expr) Expr {
	if r := f(e); r != nil {
		return r
	}
	return MapChildren(e, func(x Expr) Expr { return MapPre(x, f) })
}

// MapChildren rebuilds e with g applied to each child.
func MapChildren(e Expr, g func(Expr) Expr) Expr {
	list := func(es []Expr) []Expr {
		out := make([]Expr, len(es))
		for i, x := range es {
			out[i] = g(x)
		}
		return out
	}
	switch e := e.(type) {
	case *Const, *Var, *Dummy:
		return e
	case *Call:
		return &Call{P: e.P, T: e.T, Fn: e.Fn, Prim: e.Prim, Args: list(e.Args)}
	case *Tuple:
		return &Tuple{P: e.P, T: e.T, Elems: list(e.Elems)}
	case *Get:
		return &Get{P: e.P, T: e.T, I: e.I, N: e.N, X: g(e.X)}
	case *Let:
		return &Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: g(e.Rhs), Body: g(e.Body), Of: e.Of}
	case *If:
		return &If{P: e.P, T: e.T, Cond: g(e.Cond), Then: g(e.Then), Else: g(e.Else)}
	case *Assert:
		return &Assert{P: e.P, Cond: g(e.Cond), Body: g(e.Body), Msg: e.Msg}
	case *Lam:
		return &Lam{P: e.P, Param: e.Param, Body: g(e.Body)}
	}
	panic(fmt.Sprintf("ir: unknown expression %T", e))
}
