package linmap

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// stepParts takes apart the step map of an lmFold, as derive builds it:
// (lam (tt) (let t = tt.1; dade = tt.2; da = dade.1; de = dade.2 in rest)),
// returning t, da, de and rest (which binds the step's own map first).
func stepParts(g *ir.Lam) (t, da, de *ir.Var, rest ir.Expr) {
	if l1, ok := g.Body.(*ir.Let); ok {
		if l2, ok := l1.Body.(*ir.Let); ok {
			if l3, ok := l2.Body.(*ir.Let); ok {
				if l4, ok := l3.Body.(*ir.Let); ok {
					return l1.Vars[0], l3.Vars[0], l4.Vars[0], l4.Body
				}
			}
		}
	}
	fail(g.P, "internal: an lmFold whose step map is not in the form derive builds")
	return nil, nil, nil, nil
}

// fold applies an lmFold to the tangent: a loop carrying the accumulator
// and its tangent, each step's map turned into tangents (Figure 14,
// FFold).
func (f *fwd) fold(c *ir.Call) ir.Expr {
	b := &binder{ns: f.ns}
	loop := f.foldState(c, b)
	return b.wrap(ir.MkGet(c.P, 2, loop))
}

// foldState is the loop of fold, whose value is the state (accumulator,
// tangent); b receives the lets it needs first. Each step computes the
// step's value and tangent together where the step's map says what its
// value is, so the step's primal code runs once.
func (f *fwd) foldState(c *ir.Call, b *binder) ir.Expr {
	p := c.P
	a := c.Args
	step, lamG := a[0].(*ir.Lam), a[1].(*ir.Lam)
	init := a[2]
	vv := b.atom(a[3])
	tacc0 := b.atom(f.conv(a[4]))
	tv := b.atom(f.conv(a[5]))
	accT := init.Type()
	stT := types.TupleOf(accT, tacc0.Type())
	si := f.ns.FreshVar(p, "st_i", types.TupleOf(stT, types.IntegerType))
	st := f.ns.FreshVar(p, "st", stT)
	i := f.ns.FreshVar(p, "i", types.IntegerType)
	acc := f.ns.FreshVar(p, "acc", accT)
	tacc := f.ns.FreshVar(p, "tacc", tacc0.Type())
	e := f.ns.FreshVar(p, "e", vv.Type().Elem)
	te := f.ns.FreshVar(p, "te", tv.Type().Elem)
	t, da, de, rest := stepParts(lamG)
	f.env[da.Name] = ir.Ref(p, tacc)
	f.env[de.Name] = ir.Ref(p, te)
	f.primalTangent(acc, tacc)
	f.primalTangent(e, te)
	pair := ir.MkTuple(p, ir.Ref(p, acc), ir.Ref(p, e))
	var state ir.Expr
	if wv := f.withValue(rest, step.Body); wv != nil && t.Name == step.Param.Name {
		state = ir.MkLet(p, t, pair, f.conv(wv))
	} else {
		next := ir.MkLet(p, step.Param, pair, step.Body)
		tnext := ir.MkLet(p, t, pair, f.conv(rest))
		state = ir.MkTuple(p, next, tnext)
	}
	body := &ir.Let{P: p, Vars: []*ir.Var{st, i}, Pattern: true, Rhs: ir.Ref(p, si),
		Body: &ir.Let{P: p, Vars: []*ir.Var{acc, tacc}, Pattern: true, Rhs: ir.Ref(p, st),
			Body: ir.MkLet(p, e, ir.MkPrim(p, "index", ir.Ref(p, i), vv),
				ir.MkLet(p, te, ir.MkPrim(p, "index", ir.Ref(p, i), tv), state))}}
	return ir.MkPrim(p, "$ifold", ir.MkPrim(p, "size", vv), ir.MkTuple(p, init, tacc0), ir.MkLam(p, si, body))
}

// fold reverse-applies an lmFold (Figure 15, with the REVLOOP of seed
// 003): a tape of the accumulators each step saw, then a loop from the
// last step to the first carrying the accumulator's cotangent and the
// accumulators the steps add into; each step's element adds into the
// vector's accumulator at its index.
func (rv *rev) fold(c *ir.Call, r ir.Expr) {
	p := c.P
	a := c.Args
	step, lamG := a[0].(*ir.Lam), a[1].(*ir.Lam)
	init, mi, mv := a[2], a[4], a[5]
	t, da, de, rest := stepParts(lamG)
	vv := rv.blk.atom(rv.ns, a[3])
	tape, taped := rv.tapes[c]
	if !taped {
		tape = rv.blk.atom(rv.ns, ir.MkPrim(p, "$foldtape", step, init, vv))
	}
	n := rv.blk.atom(rv.ns, ir.MkPrim(p, "size", vv))
	carried, vals := rv.carry(p, rest, mv)
	state := append([]ir.Expr{r}, vals...)
	stT := ir.MkTuple(p, state...).Type()
	si := rv.ns.FreshVar(p, "st_i", types.TupleOf(stT, types.IntegerType))
	st := rv.ns.FreshVar(p, "st", stT)
	i := rv.ns.FreshVar(p, "i", types.IntegerType)
	vars := make([]*ir.Var, len(state))
	cur := make([]ir.Expr, len(vals))
	for k, x := range state {
		vars[k] = rv.ns.FreshVar(p, "acc", x.Type())
		if k > 0 {
			cur[k-1] = ir.Ref(p, vars[k])
		}
	}
	in := rv.enter(carried, cur)
	acc := rv.ns.FreshVar(p, "acc", init.Type())
	elem := rv.ns.FreshVar(p, "e", vv.Type().Elem)
	in.blk.let(&ir.Let{P: p, Vars: []*ir.Var{acc}, Rhs: ir.MkPrim(p, "index", ir.Ref(p, i), tape)})
	in.blk.let(&ir.Let{P: p, Vars: []*ir.Var{elem}, Rhs: ir.MkPrim(p, "index", ir.Ref(p, i), vv)})
	in.blk.let(&ir.Let{P: p, Vars: []*ir.Var{t}, Rhs: ir.MkTuple(p, ir.Ref(p, acc), ir.Ref(p, elem))})
	sa := &slot{of: acc, typ: tangent(init.Type())}
	se := &slot{of: elem, typ: tangent(elem.T)}
	in.slots[da.Name] = sa
	in.slots[de.Name] = se
	in.program(rest, ir.Ref(p, vars[0]))
	if se.cur != nil {
		in.contribute(ir.MkPrim(p, "lmCompose", ir.MkPrim(p, "lmIndex", ir.Ref(p, i), vv), mv), se.cur)
	}
	out := append([]ir.Expr{in.value(sa, p)}, in.leave(rv, carried)...)
	body := &ir.Let{P: p, Vars: []*ir.Var{st, i}, Pattern: true, Rhs: ir.Ref(p, si),
		Body: &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: ir.Ref(p, st),
			Body: in.blk.wrap(ir.MkTuple(p, out...))}}
	res := rv.blk.atom(rv.ns, ir.MkPrim(p, "$ifoldr", n, ir.MkTuple(p, state...), ir.MkLam(p, si, body)))
	racc := rv.blk.atom(rv.ns, ir.MkGet(p, 1, res))
	for k, s := range carried {
		s.cur = rv.blk.atom(rv.ns, ir.MkGet(p, k+2, res))
	}
	rv.contribute(mi, racc)
}
