package lower

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// fuseBuild fuses a vector into the loop that reads it:
//
//	let v = (build n (lam (i : Integer) e)) in
//	  ... (size v) ... (build|sumbuild (size v) (lam (j : Integer) ... (index j v) ...)) ...
//
// becomes the body with (size v) replaced by n and (index j v) by
// (let (i j) e): the loop computes each element where it reads it, and no
// vector is made. It applies when that index is the only read of v (so each
// element is computed once, by the loop over v's indices), or v is read
// only by size (a zero cotangent shaped like v, say), n is an atom or
// the size of one,
// nothing in the let prints, and no binder in the body captures a free
// variable of e. (Runtime errors are not effects: if e fails for some i,
// the fused loop fails when it reaches i.) Element-wise chains such as
// (exp (sub a b)), whose prelude definitions are builds over the size of
// their argument, become one loop this way.
func (s *Simplifier) fuseBuild(e *ir.Let) (ir.Expr, bool) {
	if e.Pattern || len(e.Vars) != 1 {
		return nil, false
	}
	b, ok := e.Rhs.(*ir.Call)
	if !ok || b.Prim == nil || b.Prim.Name != "build" || len(b.Args) != 2 || b.Args[0].Type().Kind != types.Integer {
		return nil, false
	}
	n := b.Args[0] // an atom, or the size of one, so copies of it cost nothing
	if c, isSize := n.(*ir.Call); isSize && c.Prim != nil && c.Prim.Name == "size" && ir.IsAtom(c.Args[0]) {
		n = c.Args[0]
	} else if !ir.IsAtom(n) {
		return nil, false
	}
	lam, ok := b.Args[1].(*ir.Lam)
	if !ok || HasEffect(lam.Body, s.Eff) || HasEffect(e.Body, s.Eff) {
		return nil, false
	}
	v := e.Vars[0].Name
	for fv := range ir.FreeVars(lam) {
		if Binds(e.Body, fv) {
			return nil, false
		}
	}
	if x, ok := n.(*ir.Var); ok && Binds(e.Body, x.Name) {
		return nil, false
	}
	if !fusable(e.Body, v) {
		return nil, false
	}
	body := ir.Map(e.Body, func(x ir.Expr) ir.Expr {
		c, ok := x.(*ir.Call)
		if !ok || c.Prim == nil {
			return x
		}
		switch {
		case c.Prim.Name == "size" && isVar(c.Args[0], v):
			return ir.Copy(b.Args[0], c.P)
		case c.Prim.Name == "index" && len(c.Args) == 2 && isVar(c.Args[1], v):
			if s.Names != nil {
				// The body lands where other names are bound.
				l := ir.FreshBinders(lam, s.Names).(*ir.Lam)
				return ir.MkLet(c.P, l.Param, c.Args[0], l.Body)
			}
			return ir.MkLet(c.P, lam.Param, c.Args[0], lam.Body)
		}
		return x
	})
	return body, true
}

// fusable reports whether body reads v only by (size v) and by at most
// one (index j v) whose j is the index of the innermost loop around it, a
// build or sumbuild over (size v), or which is in no loop (one element,
// computed once: f reading (index 0 (build ...)) computes that element
// only, and so must the code that reads it from a let).
func fusable(body ir.Expr, v string) bool {
	reads, ok := 0, true
	var walk func(x ir.Expr, loop *ir.Lam, inLam bool)
	walk = func(x ir.Expr, loop *ir.Lam, inLam bool) {
		if !ok {
			return
		}
		switch x := x.(type) {
		case *ir.Var:
			if x.Name == v {
				ok = false // a use other than size and index
			}
			return
		case *ir.Call:
			if x.Prim != nil && x.Prim.Name == "size" && isVar(x.Args[0], v) {
				return
			}
			if x.Prim != nil && x.Prim.Name == "index" && len(x.Args) == 2 && isVar(x.Args[1], v) {
				reads++
				if inLam && (loop == nil || !isVar(x.Args[0], loop.Param.Name)) {
					ok = false
				}
				walk(x.Args[0], loop, inLam)
				return
			}
			if x.Prim != nil && (x.Prim.Name == "build" || x.Prim.Name == "sumbuild") && len(x.Args) == 2 {
				walk(x.Args[0], loop, inLam)
				if l, isLam := x.Args[1].(*ir.Lam); isLam {
					if overSize(x.Args[0], v) && l.Param.T.Kind == types.Integer {
						walk(l.Body, l, true)
					} else {
						walk(l.Body, nil, true)
					}
				}
				return
			}
			for _, a := range x.Args {
				if l, isLam := a.(*ir.Lam); isLam {
					walk(l.Body, nil, true) // another kind of loop
				} else {
					walk(a, loop, inLam)
				}
			}
			return
		case *ir.Lam:
			walk(x.Body, nil, true)
			return
		}
		ir.Inspect(x, func(y ir.Expr) bool {
			if y == x {
				return true
			}
			walk(y, loop, inLam)
			return false
		})
	}
	walk(body, nil, false)
	return ok && reads <= 1
}

// overSize reports whether n is (size v).
func overSize(n ir.Expr, v string) bool {
	c, ok := n.(*ir.Call)
	return ok && c.Prim != nil && c.Prim.Name == "size" && isVar(c.Args[0], v)
}

func isVar(e ir.Expr, name string) bool {
	x, ok := e.(*ir.Var)
	return ok && x.Name == name
}
