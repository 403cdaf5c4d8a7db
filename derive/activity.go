package derive

import (
	"slices"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Forward mode of chosen arguments. [fwd g I...] and [fwdfull g I...]
// take the tangents of g's arguments at the positions I only; the
// others' are zero, written out as ts_zero in the tangent [D g] is
// applied to, so that linmap.Forward treats them as structural zeros and
// computes nothing from them. A caller's forward mode passes a callee a
// zero tangent wherever an argument does not depend on what the caller
// differentiates (data, such as a model's constants): it calls the
// callee's [fwdfull g I...] for the positions I of the arguments that do,
// if that exists. needActive declares those callees' derivations, found
// by an activity analysis of the caller's body: a value is active if it
// is computed from an active parameter, and holds a Float (Integers and
// Bools have no tangent).

// needActive declares [fwdfull g I] and [fwd g I] for each call of a
// function g in base's body, as it is differentiated, some but not all of
// whose arguments are active when the arguments of base at the positions
// wrt are (nil: all of them).
func (d *deriver) needActive(base *ir.Func, wrt []int, pos ir.Pos) {
	pr, err := d.prepare(base)
	if err != nil {
		return // reported where [D base] is made
	}
	a := &activity{active: map[string]bool{}, calls: map[*ir.Call][]bool{}}
	for i, v := range pr.params {
		a.active[v.Name] = hasFloat(v.T) && (wrt == nil || len(pr.params) == 1 || slices.Contains(wrt, i))
	}
	a.expr(pr.body)
	for _, c := range a.order {
		act, g := a.calls[c], c.Fn
		if g.Kind != ir.DefFunc && !ir.IsCL(g) || g.Body == nil {
			continue // an edef, or a derived function: no [fwd g I]
		}
		if h := d.lookup("fwd", g); h != nil && h.Kind != ir.DerivedFunc {
			continue // forward mode written by hand
		}
		var chosen []int
		for i, on := range act {
			if on {
				chosen = append(chosen, i)
			}
		}
		if len(chosen) == 0 || len(chosen) == len(act) {
			continue
		}
		for _, deriv := range []string{"fwdfull", "fwd"} {
			if _, err := d.needWrt(deriv, g, chosen, pos); err != nil {
				d.errorf(pos, "%v", err)
			}
		}
	}
}

// activeArgs returns which of c's arguments are active, per position of
// the function's argument: nil unless c passes each field of a tuple
// argument on its own.
func activeArgs(c *ir.Call, act []bool) []bool {
	g := c.Fn
	if g.Arg.Kind != types.Tuple || len(c.Args) != len(g.Arg.Elems) || len(c.Args) < 2 {
		return nil
	}
	return act
}

// An activity analysis: which variables of a body in A-normal form hold
// values computed from the active parameters, and, for each call of a
// function, which of its arguments are active.
type activity struct {
	active map[string]bool
	calls  map[*ir.Call][]bool // united over the walks of a loop body
	order  []*ir.Call          // the calls in calls, in the order first met
}

// hasFloat reports whether values of type t hold a Float, and so have a
// tangent that is not the unit tuple.
func hasFloat(t *types.Type) bool { return t.Contains(types.Float) }

// expr returns whether e's value is active, recording what it learns.
func (a *activity) expr(e ir.Expr) bool {
	switch x := e.(type) {
	case *ir.Var:
		return a.active[x.Name]
	case *ir.Const, *ir.Dummy:
		return false
	case *ir.Get:
		return a.expr(x.X) && hasFloat(x.Type())
	case *ir.Tuple:
		on := false
		for _, el := range x.Elems {
			on = a.expr(el) || on
		}
		return on
	case *ir.Let:
		on := a.expr(x.Rhs)
		for _, v := range x.Vars {
			a.active[v.Name] = on && hasFloat(v.T)
		}
		return a.expr(x.Body)
	case *ir.If:
		a.expr(x.Cond)
		then := a.expr(x.Then)
		return a.expr(x.Else) || then
	case *ir.Assert:
		a.expr(x.Cond)
		return a.expr(x.Body)
	case *ir.Lam:
		return a.expr(x.Body)
	case *ir.Call:
		return a.call(x)
	}
	return true // unknown: active, which is always safe
}

// call returns whether the call c's value is active. A loop's lambda
// parameter (an index, or a fold's accumulator and element) is active if
// another argument is, or if the body makes it so: the body is walked
// again until nothing changes.
func (a *activity) call(c *ir.Call) bool {
	act := make([]bool, len(c.Args))
	on := false
	for i, arg := range c.Args {
		if _, ok := arg.(*ir.Lam); !ok {
			act[i] = a.expr(arg)
			on = on || act[i]
		}
	}
	for i, arg := range c.Args {
		lam, ok := arg.(*ir.Lam)
		if !ok {
			continue
		}
		param := on
		for {
			a.active[lam.Param.Name] = param && hasFloat(lam.Param.T)
			body := a.expr(lam.Body)
			act[i] = body
			if !body || param {
				break
			}
			param = true // a fold's accumulator takes the body's value
		}
		on = on || act[i]
	}
	if c.Fn != nil {
		if per := activeArgs(c, act); per != nil {
			old := a.calls[c]
			if old == nil {
				old = make([]bool, len(per))
				a.order = append(a.order, c)
			}
			for i := range per {
				old[i] = old[i] || per[i] && hasFloat(c.Args[i].Type())
			}
			a.calls[c] = old
		}
	}
	return on && hasFloat(c.Type())
}

// chosenAsFull rewrites, in derived code about to be differentiated, each
// call of [fwd g I...] or [fwdfull g I...] as the call of [fwd g] or
// [fwdfull g] with the tangent spread with zeros: the same value, under a
// name a derivation of it can have ([D [fwdfull g]]; derived names give
// positions to the outermost derivation only).
func (d *deriver) chosenAsFull(e ir.Expr) ir.Expr {
	return ir.Map(e, func(x ir.Expr) ir.Expr {
		c, ok := x.(*ir.Call)
		if !ok || c.Fn == nil || c.Fn.Name.Wrt == nil || len(c.Args) != 2 {
			return x
		}
		deriv := c.Fn.Name.Outer()
		if deriv != "fwd" && deriv != "fwdfull" || c.Fn.Base == nil {
			return x
		}
		full, err := d.need(deriv, c.Fn.Base, c.P)
		if err != nil {
			d.errorf(c.P, "%v", err)
			return x
		}
		p := c.P
		l := &lets{ns: d.ns, p: p}
		xv := l.bind("x", c.Args[0])
		dx := l.bind("dx", c.Args[1])
		return l.in(ir.CallFunc(p, full, ir.Ref(p, xv), d.spreadTangent(p, c.Fn.Name.Wrt, ir.Ref(p, xv), ir.Ref(p, dx))))
	})
}
