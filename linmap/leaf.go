package linmap

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// sem evaluates linear maps that mention no linear-map variable.
type sem struct {
	ns  *ir.Names
	res Resolver
	// bogs holds, for a call of [D g] whose primal call ran as
	// [suffwdpass g] (a recursive g: rev.splitCall), the BOG it recorded:
	// reverse-applying the call is then [bogrev g] of it.
	bogs map[*ir.Call]ir.Expr
	// tapes holds, for an lmFold whose primal fold was computed from its
	// tape (rev.splitFold), the tape: reverse-applying it reads that one.
	tapes map[*ir.Call]ir.Expr
	// mode says what a tangent is: a tangent or a sparsity pattern
	// (Pattern, HessianPattern).
	mode mode
	// In hessians mode, tanOf holds the tangent (pattern) of each primal
	// variable whose map gave one, rhsOf the value of each primal
	// variable bound by a let (a map may scale by the value its own let
	// binds: exp's derivative is exp), and all is the union of the
	// argument's sets, what a value of unknown dependence depends on.
	tanOf map[string]ir.Expr
	rhsOf map[string]ir.Expr
	all   ir.Expr
}

// A mode is the kind of tangent a forward application computes.
type mode int

const (
	tangents mode = iota // a tangent (Forward)
	patterns             // a sparsity pattern (Pattern): sums are unions, scalings keep the set
	hessians             // a second-order pattern (HessianPattern): scalings add pairs too
)

// ap returns m applied to the tangent t, an atom (Figure 4).
func (s *sem) ap(m, t ir.Expr) ir.Expr {
	p := m.Pos()
	switch m := m.(type) {
	case *ir.Let:
		if m.Rhs.Type().Contains(types.LM) {
			return s.ap(m.Body, t) // a map free of map variables never uses it
		}
		return &ir.Let{P: m.P, Vars: m.Vars, Pattern: m.Pattern, Rhs: m.Rhs, Body: s.ap(m.Body, t)}
	case *ir.If:
		then, els := s.ap(m.Then, t), s.ap(m.Else, t)
		return ir.MkIf(m.P, m.Cond, then, els)
	case *ir.Assert:
		return &ir.Assert{P: m.P, Cond: m.Cond, Body: s.ap(m.Body, t), Msg: m.Msg}
	case *ir.Var:
		fail(p, "internal: the linear-map variable %s cannot be applied here", m.Name)
	case *ir.Call:
		if c, g, ok := isDCall(m); ok {
			return s.callFwd(c, g, t)
		}
		if m.Prim == nil || !m.Prim.LM {
			fail(p, "internal: %s is not a linear map", ir.FormatExpr(m))
		}
		b := &binder{ns: s.ns}
		a := m.Args
		switch m.Prim.Name {
		case "lmZero":
			return s.zeroOf(p, a[1])
		case "lmOne":
			return t
		case "lmScale":
			return s.times(p, a[1], t)
		case "lmCompose":
			inner := b.atom(s.ap(a[1], t))
			return b.wrap(s.ap(a[0], inner))
		case "lmAdd":
			return s.plus(p, s.ap(a[0], t), s.ap(a[1], t))
		case "lmVCat":
			elems := make([]ir.Expr, len(a))
			for i, l := range a {
				elems[i] = s.ap(l, t)
			}
			return ir.MkTuple(p, elems...)
		case "lmHCat":
			if k, ok := projection(m); ok {
				return ir.MkGet(p, k+1, t)
			}
			var sum ir.Expr
			for i, l := range a {
				if isZero(l) {
					continue
				}
				x := s.ap(l, b.atom(ir.MkGet(p, i+1, t)))
				if sum == nil {
					sum = x
				} else {
					sum = s.plus(p, b.atom(sum), x)
				}
			}
			if sum == nil {
				return s.zeroOf(p, s.target(m))
			}
			return b.wrap(sum)
		case "lmBuild":
			lam := a[1].(*ir.Lam)
			return ir.MkPrim(p, "build", a[0], ir.MkLam(lam.P, lam.Param, s.ap(lam.Body, t)))
		case "lmBuildT":
			lam := a[1].(*ir.Lam)
			ti := s.ns.FreshVar(p, "ti", t.Type().Elem)
			body := ir.MkLet(p, ti, ir.MkPrim(p, "index", ir.Ref(p, lam.Param), t), s.ap(lam.Body, ir.Ref(p, ti)))
			return s.sumOver(p, a[0], lam, body)
		case "lmSumBuild":
			lam := a[1].(*ir.Lam)
			if out := s.sparseSum(p, a[0], lam, func(body ir.Expr) ir.Expr { return s.ap(body, t) }); out != nil {
				return out
			}
			return s.sumOver(p, a[0], lam, s.ap(lam.Body, t))
		case "lmIndex":
			return ir.MkPrim(p, "index", a[0], t)
		case "lmScatter":
			return s.scatterOne(p, m.Type().To, a[0], a[1], t)
		case "lmSum":
			return s.sumElems(p, t)
		case "lmRow":
			return s.dot(p, a[0], t)
		case "lmCol":
			return s.fill(p, a[0], t)
		case "lmTranspose":
			if s.mode != tangents {
				fail(p, "ksc cannot find the sparsity pattern of a transposed map (%s) yet", ir.FormatExpr(m))
			}
			return s.apR(t, a[0])
		}
		fail(p, "%s cannot be applied to a tangent", m.Prim.Name)
	}
	fail(p, "internal: %s is not a linear map", ir.FormatExpr(m))
	return nil
}

// callArg returns the argument of a call as one expression.
func callArg(c *ir.Call) ir.Expr {
	if len(c.Args) == 1 {
		return c.Args[0]
	}
	return ir.MkTuple(c.P, c.Args...)
}

// apR returns the cotangent r, an atom, reverse-applied to m: a fresh
// value (Figure 5).
func (s *sem) apR(r, m ir.Expr) ir.Expr {
	ex := s.example(m)
	b := &binder{ns: s.ns}
	acc := b.atom(ir.MkPrim(m.Pos(), "ts_zero", ex))
	return b.wrap(s.accR(m, r, acc))
}

// example returns an expression whose value has the type of m's source,
// to shape zero cotangents.
func (s *sem) example(m ir.Expr) ir.Expr {
	p := m.Pos()
	switch m := m.(type) {
	case *ir.Let:
		if m.Rhs.Type().Contains(types.LM) {
			return s.example(m.Body)
		}
		return &ir.Let{P: m.P, Vars: m.Vars, Pattern: m.Pattern, Rhs: m.Rhs, Body: s.example(m.Body)}
	case *ir.If:
		return ir.MkIf(m.P, m.Cond, s.example(m.Then), s.example(m.Else))
	case *ir.Assert:
		return s.example(m.Body)
	case *ir.Call:
		if c, _, ok := isDCall(m); ok {
			return callArg(c)
		}
		if m.Prim == nil || !m.Prim.LM {
			break
		}
		a := m.Args
		switch m.Prim.Name {
		case "lmZero", "lmOne", "lmScale":
			return a[0]
		case "lmCompose":
			return s.example(a[1])
		case "lmAdd", "lmVCat":
			return s.example(a[0])
		case "lmHCat":
			elems := make([]ir.Expr, len(a))
			for i, l := range a {
				elems[i] = s.example(l)
			}
			return ir.MkTuple(p, elems...)
		case "lmBuildT":
			lam := a[1].(*ir.Lam)
			return ir.MkPrim(p, "build", a[0], ir.MkLam(lam.P, lam.Param, s.example(lam.Body)))
		case "lmIndex":
			return a[1]
		case "lmScatter":
			return a[2]
		case "lmSum", "lmRow":
			return a[0]
		case "lmCol":
			return ir.Float(p, 0)
		}
	}
	fail(p, "ksc cannot find the shape of the cotangent of %s", ir.FormatExpr(m))
	return nil
}

// accR returns acc + (r reverse-applied to m): the accumulator acc, an
// atom that is not used again, updated in place (Figure 5, accumulating).
func (s *sem) accR(m, r, acc ir.Expr) ir.Expr {
	p := m.Pos()
	switch m := m.(type) {
	case *ir.Let:
		if m.Rhs.Type().Contains(types.LM) {
			return s.accR(m.Body, r, acc)
		}
		return &ir.Let{P: m.P, Vars: m.Vars, Pattern: m.Pattern, Rhs: m.Rhs, Body: s.accR(m.Body, r, acc)}
	case *ir.If:
		return ir.MkIf(m.P, m.Cond, s.accR(m.Then, r, acc), s.accR(m.Else, r, acc))
	case *ir.Assert:
		return &ir.Assert{P: m.P, Cond: m.Cond, Body: s.accR(m.Body, r, acc), Msg: m.Msg}
	case *ir.Var:
		fail(p, "internal: the linear-map variable %s cannot be reverse-applied here", m.Name)
	case *ir.Call:
		if c, g, ok := isDCall(m); ok {
			if b, split := s.bogs[c]; split {
				_, bogrev := s.res.Split(g, true)
				return ir.CallFunc(c.P, bogrev, r, b, acc)
			}
			rev, accumulating, err := s.res.RevAcc(g)
			if err != nil {
				panic(&Error{Pos: p, Msg: err.Error()})
			}
			if accumulating {
				return ir.CallFunc(c.P, rev, callArg(c), r, acc)
			}
			return ir.MkPrim(p, "$addTo", acc, ir.CallFunc(c.P, rev, callArg(c), r))
		}
		if m.Prim == nil || !m.Prim.LM {
			fail(p, "internal: %s is not a linear map", ir.FormatExpr(m))
		}
		b := &binder{ns: s.ns}
		a := m.Args
		switch m.Prim.Name {
		case "lmZero":
			return acc
		case "lmOne":
			return ir.MkPrim(p, "$addTo", acc, r)
		case "lmScale":
			return ir.MkPrim(p, "$addTo", acc, ir.MkPrim(p, "ts_scale", a[1], r))
		case "lmCompose":
			l1, l2 := a[0], a[1]
			if _, ok := isLMCall(l2, "lmOne"); ok { // m ∘ 1 = m
				return s.accR(l1, r, acc)
			}
			if isZero(l1) || isZero(l2) {
				return acc
			}
			if ix, ok := isLMCall(l2, "lmIndex"); ok {
				// l1 ∘ (index i): reverse-apply l1 into element i of acc
				// itself, with no zero temporary to add in.
				return s.accAt(p, acc, ix.Args[0], func(slot ir.Expr) ir.Expr { return s.accR(l1, r, slot) })
			}
			if k, ok := projection(l2); ok {
				// l1 ∘ (the projection to field k): add into field k only.
				parts := make([]*ir.Var, len(acc.Type().Elems))
				elems := make([]ir.Expr, len(parts))
				for i := range parts {
					parts[i] = s.ns.FreshVar(p, "acc", acc.Type().Elems[i])
					elems[i] = ir.Ref(p, parts[i])
				}
				elems[k] = s.accR(l1, r, elems[k])
				return &ir.Let{P: p, Vars: parts, Pattern: true, Rhs: acc, Body: ir.MkTuple(p, elems...)}
			}
			mid := b.atom(s.apR(r, l1))
			return b.wrap(s.accR(l2, mid, acc))
		case "lmAdd":
			acc1 := b.atom(s.accR(a[0], r, acc))
			return b.wrap(s.accR(a[1], r, acc1))
		case "lmVCat":
			for i, l := range a {
				ri := b.atom(ir.MkGet(p, i+1, r))
				acc = b.atom(s.accR(l, ri, acc))
			}
			return b.wrap(acc)
		case "lmHCat":
			parts := make([]*ir.Var, len(a))
			for i := range a {
				parts[i] = s.ns.FreshVar(p, "acc", acc.Type().Elems[i])
			}
			elems := make([]ir.Expr, len(a))
			for i, l := range a {
				elems[i] = s.accR(l, r, ir.Ref(p, parts[i]))
			}
			return &ir.Let{P: p, Vars: parts, Pattern: true, Rhs: acc, Body: ir.MkTuple(p, elems...)}
		case "lmBuild", "lmSumBuild":
			lam := a[1].(*ir.Lam)
			if m.Prim.Name == "lmBuild" {
				acc = checkedSize(p, a[0], r, acc)
			}
			return s.loop(p, a[0], lam, acc, func(i ir.Expr, st ir.Expr) ir.Expr {
				ri := r
				if m.Prim.Name == "lmBuild" {
					ri = ir.MkPrim(p, "index", i, r)
				}
				bb := &binder{ns: s.ns}
				return bb.wrap(s.accR(lam.Body, bb.atom(ri), st))
			})
		case "lmBuildT":
			lam := a[1].(*ir.Lam)
			return s.loop(p, a[0], lam, acc, func(i ir.Expr, st ir.Expr) ir.Expr {
				return s.accAt(p, st, i, func(slot ir.Expr) ir.Expr { return s.accR(lam.Body, r, slot) })
			})
		case "lmIndex":
			return ir.MkPrim(p, "$addAt", acc, a[0], r)
		case "lmScatter":
			return ir.MkPrim(p, "$addTo", acc, ir.MkPrim(p, "index", a[1], r))
		case "lmSum":
			return ir.MkPrim(p, "$addTo", acc, ir.MkPrim(p, "constVec", ir.MkPrim(p, "size", a[0]), r))
		case "lmRow":
			return ir.MkPrim(p, "$addTo", acc, ir.MkPrim(p, "ts_scale", r, a[0]))
		case "lmCol":
			return ir.MkPrim(p, "$addTo", acc, ir.MkPrim(p, "ts_dot", a[0], r))
		case "lmTranspose":
			return ir.MkPrim(p, "$addTo", acc, s.ap(a[0], r))
		}
		fail(p, "%s cannot be reverse-applied", m.Prim.Name)
	}
	fail(p, "internal: %s is not a linear map", ir.FormatExpr(m))
	return nil
}

// accAt returns acc with its element i updated by update, in place: the
// element is read, updated (a tensor element in place, being part of acc),
// and stored back ($setAt), which is acc + (deltaVec i x) for
// x = update(0), since update adds into its argument. It replaces
// ($addAt acc i update(ts_zero)), which would fill and add a temporary the
// size of the element.
func (s *sem) accAt(p ir.Pos, acc, i ir.Expr, update func(slot ir.Expr) ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	iv := b.atom(i)
	slot := b.atom(ir.MkPrim(p, "index", iv, acc))
	x := b.atom(update(slot))
	return b.wrap(ir.MkPrim(p, "$setAt", acc, iv, x))
}

// checkedSize returns init, the accumulators a reverse loop over the
// result of a build of n elements starts from, asserting first that the
// cotangent r, which the loop reads by index, has n elements: a longer
// one would be read in part, its extra elements ignored without a word.
// (The check is on the accumulators, which belong to the reverse pass
// with r, not on the count, which split reverse mode computes forwards.)
func checkedSize(p ir.Pos, n, r, init ir.Expr) ir.Expr {
	if n.Type().Kind != types.Integer {
		return init
	}
	return &ir.Assert{P: p, Cond: ir.MkPrim(p, "eq", ir.MkPrim(p, "size", r), n), Body: init,
		Msg: "size mismatch: the cotangent's size is not the result's"}
}

// loop builds ($ifold n acc (lam (st_i) body)) over the index space of
// size n (an Integer, or a tuple for rank N, looped over in row-major
// order), calling body with the index (bound to lam's parameter) and the
// state.
func (s *sem) loop(p ir.Pos, n ir.Expr, lam *ir.Lam, acc ir.Expr, body func(i, st ir.Expr) ir.Expr) ir.Expr {
	st := s.ns.FreshVar(p, "st", acc.Type())
	if n.Type().Kind == types.Integer {
		si := s.ns.FreshVar(p, "st_i", types.TupleOf(acc.Type(), types.IntegerType))
		inner := &ir.Let{P: p, Vars: []*ir.Var{st, lam.Param}, Pattern: true, Rhs: ir.Ref(p, si),
			Body: body(ir.Ref(p, lam.Param), ir.Ref(p, st))}
		return ir.MkPrim(p, "$ifold", n, acc, ir.MkLam(p, si, inner))
	}
	// Rank N: nested loops, the innermost binding the index tuple.
	b := &binder{ns: s.ns}
	nv := b.atom(n)
	var nest func(d int, comps []*ir.Var, acc ir.Expr) ir.Expr
	nest = func(d int, comps []*ir.Var, acc ir.Expr) ir.Expr {
		if d == len(n.Type().Elems) {
			idx := make([]ir.Expr, len(comps))
			for k, c := range comps {
				idx[k] = ir.Ref(p, c)
			}
			return ir.MkLet(p, lam.Param, ir.MkTuple(p, idx...), body(ir.Ref(p, lam.Param), acc))
		}
		st := s.ns.FreshVar(p, "st", acc.Type())
		i := s.ns.FreshVar(p, "i", types.IntegerType)
		si := s.ns.FreshVar(p, "st_i", types.TupleOf(acc.Type(), types.IntegerType))
		inner := &ir.Let{P: p, Vars: []*ir.Var{st, i}, Pattern: true, Rhs: ir.Ref(p, si),
			Body: nest(d+1, append(comps, i), ir.Ref(p, st))}
		return ir.MkPrim(p, "$ifold", ir.MkGet(p, d+1, nv), acc, ir.MkLam(p, si, inner))
	}
	return b.wrap(nest(0, nil, acc))
}

// projection reports whether m is the projection of a tuple to one field,
// (lmHCat 0 ... 1 ... 0), and which.
func projection(m ir.Expr) (int, bool) {
	c, ok := isLMCall(m, "lmHCat")
	if !ok {
		return 0, false
	}
	k := -1
	for i, x := range c.Args {
		if _, one := isLMCall(x, "lmOne"); one && k < 0 {
			k = i
		} else if !isZero(x) {
			return 0, false
		}
	}
	return k, k >= 0
}

// target returns an expression whose value has the type of m's target,
// for the rare zero map whose target is not at hand otherwise.
func (s *sem) target(m ir.Expr) ir.Expr {
	if c, ok := isLMCall(m, "lmZero"); ok {
		return c.Args[1]
	}
	if c, ok := isLMCall(m, "lmHCat"); ok {
		return s.target(c.Args[0])
	}
	fail(m.Pos(), "ksc cannot find the shape of the tangent of %s", ir.FormatExpr(m))
	return nil
}

// scatter returns (buildFromSparse sh n (lam k (tuple j x))) for j and x
// that do not read k: the tangent x applied to (lmScatter sh j ex).
func scatter(p ir.Pos, sh, n ir.Expr, j, x ir.Expr, ns *ir.Names) ir.Expr {
	k := ns.FreshVar(p, "k", n.Type())
	return ir.MkPrim(p, "buildFromSparse", sh, n, ir.MkLam(p, k, ir.MkTuple(p, j, x)))
}

// sparseSum applies (lmSumBuild n lam) whose map per index ends in
// (lmCompose (lmScatter sh j ex) m), the map of buildFromSparse (package
// derive), as one buildFromSparse of the tangents: apply maps the
// let-program ending in m to the code of its tangent. Summing one
// scattered tensor per index would cost the tensor's size per index, and
// fail on an empty range. It returns nil for any other map.
func (s *sem) sparseSum(p ir.Pos, n ir.Expr, lam *ir.Lam, apply func(ir.Expr) ir.Expr) ir.Expr {
	items, tail := ir.ChainItems(lam.Body)
	c, ok := isLMCall(tail, "lmCompose")
	if !ok {
		return nil
	}
	sc, ok := isLMCall(c.Args[0], "lmScatter")
	if !ok {
		return nil
	}
	titems, tt := ir.ChainItems(apply(ir.WrapChain(items, c.Args[1])))
	if s.mode != tangents {
		return s.patScatterSum(p, sc, n, lam.Param, titems, tt)
	}
	body := ir.WrapChain(titems, ir.MkTuple(p, sc.Args[1], tt))
	return ir.MkPrim(p, "buildFromSparse", sc.Args[0], n, ir.MkLam(lam.P, lam.Param, body))
}
