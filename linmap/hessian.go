package linmap

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// HessianPattern returns the second-order sparsity pattern of the program
// m, a linear map (LM S T) as derive builds it (the primal lets with the
// let of each one's map), applied to ps, a pattern of S
// (types.HessianPattern): each Float of T becomes the pair of sets (D, H),
// D the Floats of S it depends on, as Pattern gives, and H the pairs (i,
// j) of them (coded i * 2^32 + j, both ways round) its second derivative
// by them may be nonzero for.
//
// It is Pattern with each Float's set carrying its pairs (Walther's
// nonlinear interaction domains, per value): a map's sums unite both
// sets; a scaling by a value k, whose own dependence D(k) is its
// tangent's (the map of k's let), keeps D and adds the pairs D x D(k) to
// H, which is where a second derivative arises (the product rule: k's
// derivative multiplies the tangent being scaled); lmRow a and lmCol a
// do the same per Float of a. A call of [D g] becomes a call of
// [hpattern g]. The Hessian of a Float f is then the pairs of its result,
// and the gradient [rev f]'s Jacobian by a cotangent dr is J's transpose,
// from the sets D.
//
// A value whose dependence cannot be found (a variable bound without a
// map) depends on all of S: the pattern may then hold more than the
// Hessian's nonzeros, never fewer.
func HessianPattern(m, ps ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	defer catch(&err)
	f := newFwd(sem{ns: ns, res: res, mode: hessians, tanOf: map[string]ir.Expr{}, rhsOf: map[string]ir.Expr{}})
	f.used = usedVars(m)
	b := &binder{ns: ns}
	f.t = b.atom(ps)
	f.all = b.atom(f.depsAll(ps.Pos(), f.t))
	return b.wrap(f.conv(m)), nil
}

// isLeaf reports whether t is the second-order pattern of a Float: the
// tuple of its set and its pairs.
func isLeaf(t *types.Type) bool {
	return t.Kind == types.Tuple && len(t.Elems) == 2 && isSet(t.Elems[0]) && isSet(t.Elems[1])
}

// emptyLeaf is the pattern of a Float that depends on nothing: an empty
// set, or in hessians mode the tuple of two.
func (s *sem) emptyLeaf(p ir.Pos) ir.Expr {
	if s.mode == hessians {
		return ir.MkTuple(p, s.emptySet(p), s.emptySet(p))
	}
	return s.emptySet(p)
}

// mapLeaves returns the pattern e (hessians mode) with each leaf x (a
// Float's) replaced by leaf(x).
func (s *sem) mapLeaves(p ir.Pos, e ir.Expr, leaf func(x ir.Expr) ir.Expr) ir.Expr {
	return s.mapPattern(p, e, isLeaf, leaf)
}

// mapPattern returns the pattern e with each part x whose type isFloat
// accepts (a Float's pattern) replaced by leaf(x).
func (s *sem) mapPattern(p ir.Pos, e ir.Expr, isFloat func(*types.Type) bool, leaf func(x ir.Expr) ir.Expr) ir.Expr {
	t := e.Type()
	b := &binder{ns: s.ns}
	switch {
	case isFloat(t):
		return leaf(e)
	case t.Kind == types.Tuple:
		x := b.atom(e)
		elems := make([]ir.Expr, len(t.Elems))
		for i := range elems {
			elems[i] = s.mapPattern(p, ir.MkGet(p, i+1, x), isFloat, leaf)
		}
		return b.wrap(ir.MkTuple(p, elems...))
	case t.Kind == types.Tensor:
		x := b.atom(e)
		i := s.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		elem := s.mapPattern(p, ir.MkPrim(p, "index", ir.Ref(p, i), x), isFloat, leaf)
		return b.wrap(ir.MkPrim(p, "build", ir.MkPrim(p, "size", x), ir.MkLam(p, i, elem)))
	}
	return e // the unit pattern of an Integer, Bool or String
}

// foldLeaves returns the union over the leaves of the pattern e of
// part(leaf), a set.
func (s *sem) foldLeaves(p ir.Pos, e ir.Expr, part func(x ir.Expr) ir.Expr) ir.Expr {
	return s.foldPattern(p, e, isLeaf, part)
}

// foldPattern returns the union over the parts x of the pattern e whose
// type isFloat accepts (a Float's pattern) of part(x), a set: a tensor's
// merged once (unionOver).
func (s *sem) foldPattern(p ir.Pos, e ir.Expr, isFloat func(*types.Type) bool, part func(x ir.Expr) ir.Expr) ir.Expr {
	t := e.Type()
	b := &binder{ns: s.ns}
	switch {
	case isFloat(t):
		return part(e)
	case t.Kind == types.Tuple:
		x := b.atom(e)
		var all ir.Expr
		for i := range t.Elems {
			one := s.foldPattern(p, ir.MkGet(p, i+1, x), isFloat, part)
			if all == nil {
				all = one
			} else {
				all = ir.MkPrim(p, "$union", b.atom(all), one)
			}
		}
		if all == nil {
			return s.emptySet(p)
		}
		return b.wrap(all)
	case t.Kind == types.Tensor:
		x := b.atom(e)
		i := s.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		body := s.foldPattern(p, ir.MkPrim(p, "index", ir.Ref(p, i), x), isFloat, part)
		return b.wrap(s.unionOver(p, ir.MkPrim(p, "size", x), i, body))
	}
	fail(p, "internal: %s is not a sparsity pattern", t)
	return nil
}

// depsAll is the union of the sets D of the pattern e.
func (s *sem) depsAll(p ir.Pos, e ir.Expr) ir.Expr {
	return s.foldLeaves(p, e, func(x ir.Expr) ir.Expr { return ir.MkGet(p, 1, x) })
}

// PairsAll is the union of the sets of pairs H of e, a second-order
// pattern: the Hessian's pattern, when e is a Float function's result.
func PairsAll(p ir.Pos, e ir.Expr, ns *ir.Names) ir.Expr {
	s := &sem{ns: ns, mode: hessians}
	return s.foldLeaves(p, e, func(x ir.Expr) ir.Expr { return ir.MkGet(p, 2, x) })
}

// FirstOrder returns the first-order pattern (types.Pattern) in e, a
// second-order one: each Float's set D.
func FirstOrder(p ir.Pos, e ir.Expr, ns *ir.Names) ir.Expr {
	s := &sem{ns: ns, mode: hessians}
	return s.mapLeaves(p, e, func(x ir.Expr) ir.Expr { return ir.MkGet(p, 1, x) })
}

// HessianSeed returns the second-order pattern of an argument whose
// first-order pattern is ps: each Float's set with no pairs.
func HessianSeed(p ir.Pos, ps ir.Expr, ns *ir.Names) ir.Expr {
	s := &sem{ns: ns, mode: patterns}
	return s.mapPattern(p, ps, isSet, func(x ir.Expr) ir.Expr { return ir.MkTuple(p, x, s.emptySet(p)) })
}

// withPairs returns the leaf x (a Float's pattern) scaled by a value
// depending on the set d: its set, and its pairs with those of its set
// by d added.
func (s *sem) withPairs(p ir.Pos, x, d ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	xv := b.atom(x)
	set := b.atom(ir.MkGet(p, 1, xv))
	pairs := ir.MkPrim(p, "$union", ir.MkGet(p, 2, xv), ir.MkPrim(p, "$pairs", set, d))
	return b.wrap(ir.MkTuple(p, set, pairs))
}

// hTimes returns the pattern t scaled by the Float k (lmScale k).
func (s *sem) hTimes(p ir.Pos, k, t ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	d := b.atom(s.depsOf(p, k))
	return b.wrap(s.mapLeaves(p, t, func(x ir.Expr) ir.Expr { return s.withPairs(p, x, d) }))
}

// hDot returns (lmRow a) applied to the pattern t: the union over a's
// Floats a_i of t_i scaled by a_i.
func (s *sem) hDot(p ir.Pos, a, t ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	ta := b.atom(s.valueDeps(p, a))
	tv := b.atom(t)
	// Walk a's dependence (a first-order pattern) and t together.
	var walk func(da, x ir.Expr) ir.Expr
	walk = func(da, x ir.Expr) ir.Expr {
		t := da.Type()
		lb := &binder{ns: s.ns}
		switch {
		case isSet(t):
			return s.withPairs(p, x, da)
		case t.Kind == types.Tuple:
			dv, xv := lb.atom(da), lb.atom(x)
			var sum ir.Expr
			for i := range t.Elems {
				part := walk(ir.MkGet(p, i+1, dv), ir.MkGet(p, i+1, xv))
				if sum == nil {
					sum = part
				} else {
					sum = s.patUnion(p, lb.atom(sum), part)
				}
			}
			if sum == nil {
				return s.emptyLeaf(p)
			}
			return lb.wrap(sum)
		case t.Kind == types.Tensor:
			dv, xv := lb.atom(da), lb.atom(x)
			i := s.ns.FreshVar(p, "i", types.IndexType(t.Rank))
			at := func(v ir.Expr) ir.Expr { return ir.MkPrim(p, "index", ir.Ref(p, i), v) }
			return lb.wrap(s.unionOver(p, ir.MkPrim(p, "size", dv), i, walk(at(dv), at(xv))))
		}
		return s.emptyLeaf(p)
	}
	return b.wrap(walk(ta, tv))
}

// hFill returns (lmCol a) applied to t, a Float's pattern: a's shape,
// each Float a_i's the leaf t scaled by a_i.
func (s *sem) hFill(p ir.Pos, a, t ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	tv := b.atom(t)
	return b.wrap(s.mapPattern(p, s.valueDeps(p, a), isSet, func(d ir.Expr) ir.Expr { return s.withPairs(p, tv, d) }))
}

// valueDeps returns the first-order pattern of the primal value a: each
// of its Floats' sets D, from its tangent if a is a variable whose map
// gave one, else all of the argument's for each.
func (s *sem) valueDeps(p ir.Pos, a ir.Expr) ir.Expr {
	if v, ok := a.(*ir.Var); ok {
		if ta, ok := s.tanOf[v.Name]; ok {
			return FirstOrder(p, ir.Copy(ta, p), s.ns)
		}
	}
	b := &binder{ns: s.ns}
	all := b.atom(ir.Copy(s.all, p))
	return b.wrap(s.mapFloats(p, a, func(ir.Expr) ir.Expr { return all }))
}

// depsOf returns the set of the argument's Floats the primal Float
// expression k depends on: exactly for a variable whose map gave its
// tangent, an element or field of one, a constant and a primitive's
// result; otherwise (a variable bound without a map, a call) all of
// them.
func (s *sem) depsOf(p ir.Pos, k ir.Expr) ir.Expr {
	if !k.Type().Contains(types.Float) {
		return s.emptySet(p)
	}
	switch x := k.(type) {
	case *ir.Const:
		return s.emptySet(p)
	case *ir.Var:
		if ta, ok := s.tanOf[x.Name]; ok {
			return s.depsAll(p, ir.Copy(ta, p))
		}
		if rhs, ok := s.rhsOf[x.Name]; ok {
			return s.depsOf(p, rhs)
		}
	case *ir.Get:
		if v, ok := x.X.(*ir.Var); ok {
			if ta, ok := s.tanOf[v.Name]; ok {
				return s.depsAll(p, ir.MkGet(p, x.I, ir.Copy(ta, p)))
			}
		}
	case *ir.Call:
		if x.Prim != nil && x.Prim.Name == "index" {
			if v, ok := x.Args[1].(*ir.Var); ok {
				if ta, ok := s.tanOf[v.Name]; ok && ir.IsAtom(x.Args[0]) {
					return s.depsAll(p, ir.MkPrim(p, "index", x.Args[0], ir.Copy(ta, p)))
				}
			}
		}
		if x.Prim != nil && x.Prim.Pure && !x.Prim.LM {
			b := &binder{ns: s.ns}
			var all ir.Expr = s.emptySet(p)
			for _, a := range x.Args {
				if _, lam := a.(*ir.Lam); lam {
					return ir.Copy(s.all, p)
				}
				all = ir.MkPrim(p, "$union", b.atom(all), s.depsOf(p, a))
			}
			return b.wrap(all)
		}
	}
	return ir.Copy(s.all, p)
}

// denseHessian returns the second-order pattern of an opaque function
// (DensePattern's case) of result type t at an argument whose pattern is
// ps: every Float depends on all the argument's Floats do, with every
// pair of them, and the argument's pairs.
func denseHessian(p ir.Pos, t *types.Type, value func() ir.Expr, ps ir.Expr, ns *ir.Names) ir.Expr {
	s := &sem{ns: ns, mode: hessians}
	b := &binder{ns: ns}
	psv := b.atom(ps)
	all := b.atom(s.depsAll(p, psv))
	pairs := b.atom(ir.MkPrim(p, "$union", PairsAll(p, psv, ns), ir.MkPrim(p, "$pairs", all, all)))
	leaf := b.atom(ir.MkTuple(p, all, pairs))
	if t.IsUniform() {
		return b.wrap(s.patFillType(p, t, leaf))
	}
	return b.wrap(s.patFill(p, value(), leaf))
}
