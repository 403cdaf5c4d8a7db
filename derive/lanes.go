package derive

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// lanesBody makes the body of [vfwd f] for f : S -> T, forward mode along
// k tangents at once (types.Lanes: each Float's tangent the Vec Float of
// its k lanes): (lmApplyLanes ([D f] x) k dxs), which linmap.Lanes turns
// into code computing f's primal once and each tangent operation on all
// lanes. A function whose derivative ksc cannot see (opaque) runs its
// [fwd f] once per lane.
func (d *deriver) lanesBody(f, base *ir.Func, p ir.Pos) {
	v := paramsOf(f, "x", "k", "dxs")
	x, k, dxs := v[0], v[1], v[2]
	if d.opaque(base) {
		fw, err := d.need("fwd", base, p)
		if err != nil {
			d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
			return
		}
		l := d.ns.FreshVar(p, "l", types.IntegerType)
		results := d.ns.FreshVar(p, "lanes", types.VecOf(fw.Result))
		perLane := ir.MkPrim(p, "build", k, ir.MkLam(p, l, ir.CallFunc(p, fw, x, d.laneOf(p, dxs, ir.Ref(p, l)))))
		var ex ir.Expr = &ir.Dummy{P: p, T: base.Result}
		if !base.Result.IsUniform() {
			ex = ir.CallFunc(p, base, x) // the sizes of the result's tensors
		}
		get := func(l ir.Expr) ir.Expr { return ir.MkPrim(p, "index", l, ir.Ref(p, results)) }
		f.Body = ir.MkLet(p, results, perLane, d.gatherLanes(p, ex, k, get))
		return
	}
	dg, err := d.jacobianOf(base, p)
	if err != nil {
		d.errorf(p, "%v", err)
		return
	}
	f.Body = ir.MkPrim(p, "lmApplyLanes", ir.CallFunc(p, dg, x), k, dxs)
}

// laneOf returns lane l of the lanes e: one tangent.
func (d *deriver) laneOf(p ir.Pos, e, l ir.Expr) ir.Expr {
	t := e.Type()
	switch {
	case t.Kind == types.Tensor && t.Rank == 1 && t.Elem.Kind == types.Float:
		return ir.MkPrim(p, "index", l, e) // a Float's lanes
	case t.Kind == types.Tuple:
		v := d.ns.FreshVar(p, "ls", t)
		elems := make([]ir.Expr, len(t.Elems))
		for i := range elems {
			elems[i] = d.laneOf(p, ir.MkGet(p, i+1, ir.Ref(p, v)), l)
		}
		return ir.MkLet(p, v, e, ir.MkTuple(p, elems...))
	case t.Kind == types.Tensor:
		v := d.ns.FreshVar(p, "ls", t)
		i := d.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		elem := d.laneOf(p, ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, v)), l)
		return ir.MkLet(p, v, e, ir.MkPrim(p, "build", ir.MkPrim(p, "size", ir.Ref(p, v)), ir.MkLam(p, i, elem)))
	}
	return e
}

// gatherLanes returns the lanes of k tangents of values like ex (a
// Dummy for a type without tensors), get(l) being the l-th tangent at
// this place in ex.
func (d *deriver) gatherLanes(p ir.Pos, ex, k ir.Expr, get func(l ir.Expr) ir.Expr) ir.Expr {
	t := ex.Type()
	switch t.Kind {
	case types.Float:
		l := d.ns.FreshVar(p, "l", types.IntegerType)
		return ir.MkPrim(p, "build", k, ir.MkLam(p, l, get(ir.Ref(p, l))))
	case types.Tuple:
		_, dummy := ex.(*ir.Dummy)
		if !dummy && !ir.IsAtom(ex) {
			v := d.ns.FreshVar(p, "ex", t)
			return ir.MkLet(p, v, ex, d.gatherLanes(p, ir.Ref(p, v), k, get))
		}
		elems := make([]ir.Expr, len(t.Elems))
		for i := range elems {
			var exi ir.Expr = &ir.Dummy{P: p, T: t.Elems[i]}
			if !dummy {
				exi = ir.MkGet(p, i+1, ex)
			}
			elems[i] = d.gatherLanes(p, exi, k, func(l ir.Expr) ir.Expr { return ir.MkGet(p, i+1, get(l)) })
		}
		return ir.MkTuple(p, elems...)
	case types.Tensor:
		v := d.ns.FreshVar(p, "ex", t)
		i := d.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		at := func(e ir.Expr) ir.Expr { return ir.MkPrim(p, "index", ir.Ref(p, i), e) }
		elem := d.gatherLanes(p, at(ir.Ref(p, v)), k, func(l ir.Expr) ir.Expr { return at(get(l)) })
		return ir.MkLet(p, v, ex, ir.MkPrim(p, "build", ir.MkPrim(p, "size", ir.Ref(p, v)), ir.MkLam(p, i, elem)))
	}
	return ir.MkTuple(p)
}

// opaque reports whether ksc differentiates g other than through its
// Jacobian's structure: an edef, a def with a hand-written [fwd g], or a
// derived function ([rev h], whose [D [rev h]] is a declaration applied
// through [fwd [rev h]]). Its pattern is dense and its lanes are its
// [fwd g]'s, one at a time.
func (d *deriver) opaque(g *ir.Func) bool {
	if g.Kind == ir.EdefFunc || g.Body == nil || len(g.Name.Derivs) > 0 && !ir.IsCL(g) {
		return true
	}
	hand := d.lookup("fwd", g)
	return hand != nil && hand.Kind != ir.DerivedFunc
}
