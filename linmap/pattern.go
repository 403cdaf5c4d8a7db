package linmap

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Pattern returns the sparsity pattern of m, a linear map (LM S T) that
// may be a let-program, applied to ps, a pattern of S (types.Pattern):
// an expression of the pattern type of T in which each Float's set is the
// union of the sets of the Floats of S it depends on. It is forward
// application (Forward) over the semiring of sets: a map's scalars become
// "depends", sums become unions, zero maps empty sets; a call of [D g]
// becomes a call of [pattern g]. A structural zero of the map (lmZero, a
// field an lmHCat does not read, an index a build does not touch) adds
// nothing, so the pattern is that of the map, not of its values: a
// multiplication by a value that happens to be zero still depends.
func Pattern(m, ps ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	defer catch(&err)
	f := newFwd(sem{ns: ns, res: res, mode: patterns})
	f.used = usedVars(m)
	b := &binder{ns: ns}
	f.t = b.atom(ps)
	return b.wrap(f.conv(m)), nil
}

// tanType returns the type of the tangents of values of type t: the
// tangent type, or the pattern type in pattern mode.
func (s *sem) tanType(t *types.Type) *types.Type {
	if s.mode != tangents {
		pattern := types.Pattern
		if s.mode == hessians {
			pattern = types.HessianPattern
		}
		pt, ok := pattern(t)
		if !ok {
			fail(ir.Pos{}, "internal: %s has no pattern type", t)
		}
		return pt
	}
	return tangent(t)
}

// callFwd returns the application of (call of [D g]) c to the tangent t:
// a call of [fwd g], or of [pattern g] in pattern mode.
func (s *sem) callFwd(c *ir.Call, g *ir.Func, t ir.Expr) ir.Expr {
	fwd, err := s.res.Fwd(g)
	switch s.mode {
	case patterns:
		fwd, err = s.res.Pattern(g)
	case hessians:
		fwd, err = s.res.HessianPattern(g)
	}
	if err != nil {
		panic(&Error{Pos: c.P, Msg: err.Error()})
	}
	return ir.CallFunc(c.P, fwd, callArg(c), t)
}

// zeroOf returns the zero tangent of values like ex.
func (s *sem) zeroOf(p ir.Pos, ex ir.Expr) ir.Expr {
	if s.mode != tangents {
		return s.patEmpty(p, ex)
	}
	return ir.MkPrim(p, "ts_zero", ex)
}

// plus returns the sum of two tangents.
func (s *sem) plus(p ir.Pos, a, b ir.Expr) ir.Expr {
	if s.mode != tangents {
		return s.patUnion(p, a, b)
	}
	return ir.MkPrim(p, "ts_add", a, b)
}

// times returns the tangent t scaled by the Float k.
func (s *sem) times(p ir.Pos, k, t ir.Expr) ir.Expr {
	switch s.mode {
	case patterns:
		return t
	case hessians:
		return s.hTimes(p, k, t)
	}
	return ir.MkPrim(p, "ts_scale", k, t)
}

// sumOver returns the sum of lam's tangents over the index range n.
func (s *sem) sumOver(p ir.Pos, n ir.Expr, lam *ir.Lam, body ir.Expr) ir.Expr {
	if s.mode != tangents {
		return s.patSum(p, n, lam.Param, body)
	}
	return ir.MkPrim(p, "sumbuild", n, ir.MkLam(lam.P, lam.Param, body))
}

// scatterOne returns (lmScatter sh j ex), whose target has type tt,
// applied to t: zeros but t at j.
func (s *sem) scatterOne(p ir.Pos, tt *types.Type, sh, j, t ir.Expr) ir.Expr {
	if s.mode != tangents {
		return s.patScatter(p, tt, sh, j, t)
	}
	return scatter(p, sh, ir.Int(p, 1), j, t, s.ns)
}

// sumElems returns (lmSum) applied to t, a tensor: its elements' sum.
func (s *sem) sumElems(p ir.Pos, t ir.Expr) ir.Expr {
	if s.mode != tangents {
		i := s.ns.FreshVar(p, "i", types.IndexType(t.Type().Rank))
		return s.patSum(p, ir.MkPrim(p, "size", t), i, ir.MkPrim(p, "index", ir.Ref(p, i), t))
	}
	return ir.MkPrim(p, "sum", t)
}

// dot returns (lmRow a) applied to t: a Float (in pattern mode, the
// union of all of t's sets).
func (s *sem) dot(p ir.Pos, a, t ir.Expr) ir.Expr {
	switch s.mode {
	case patterns:
		return s.patAll(p, t)
	case hessians:
		return s.hDot(p, a, t)
	}
	return ir.MkPrim(p, "ts_dot", a, t)
}

// fill returns (lmCol a) applied to t, a Float's tangent: a's shape,
// each Float scaled by t (in pattern mode, the set t).
func (s *sem) fill(p ir.Pos, a, t ir.Expr) ir.Expr {
	switch s.mode {
	case patterns:
		return s.patFill(p, a, t)
	case hessians:
		return s.hFill(p, a, t)
	}
	return ir.MkPrim(p, "ts_scale", t, a)
}

// emptySet is the empty (Vec Integer).
func (s *sem) emptySet(p ir.Pos) ir.Expr {
	i := s.ns.FreshVar(p, "i", types.IntegerType)
	return ir.MkPrim(p, "build", ir.Int(p, 0), ir.MkLam(p, i, ir.Ref(p, i)))
}

// isSet reports whether a pattern type is a set (the pattern of a Float).
func isSet(t *types.Type) bool {
	return t.Kind == types.Tensor && t.Rank == 1 && t.Elem.Kind == types.Integer
}

// mapFloats returns the value like ex (a tangent-like structure: its
// tuples and tensors) with each Float x replaced by leaf(x) and each other
// scalar by the unit tuple.
func (s *sem) mapFloats(p ir.Pos, ex ir.Expr, leaf func(x ir.Expr) ir.Expr) ir.Expr {
	t := ex.Type()
	switch t.Kind {
	case types.Float:
		return leaf(ex)
	case types.Tuple:
		b := &binder{ns: s.ns}
		x := b.atom(ex)
		elems := make([]ir.Expr, len(t.Elems))
		for i := range elems {
			elems[i] = s.mapFloats(p, ir.MkGet(p, i+1, x), leaf)
		}
		return b.wrap(ir.MkTuple(p, elems...))
	case types.Tensor:
		b := &binder{ns: s.ns}
		x := b.atom(ex)
		i := s.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		elem := s.mapFloats(p, ir.MkPrim(p, "index", ir.Ref(p, i), x), leaf)
		return b.wrap(ir.MkPrim(p, "build", ir.MkPrim(p, "size", x), ir.MkLam(p, i, elem)))
	}
	return ir.MkTuple(p) // Integer, Bool, String: the unit tangent
}

// patEmpty returns the pattern of no dependence shaped like the value ex.
func (s *sem) patEmpty(p ir.Pos, ex ir.Expr) ir.Expr {
	return s.mapFloats(p, ex, func(ir.Expr) ir.Expr { return s.emptyLeaf(p) })
}

// patUnion returns the element-wise union of two patterns of one shape.
func (s *sem) patUnion(p ir.Pos, ea, eb ir.Expr) ir.Expr {
	t := ea.Type()
	switch {
	case isSet(t):
		return ir.MkPrim(p, "$union", ea, eb)
	case t.Kind == types.Tuple:
		if len(t.Elems) == 0 {
			return ir.MkTuple(p)
		}
		b := &binder{ns: s.ns}
		x, y := b.atom(ea), b.atom(eb)
		elems := make([]ir.Expr, len(t.Elems))
		for i := range elems {
			elems[i] = s.patUnion(p, ir.MkGet(p, i+1, x), ir.MkGet(p, i+1, y))
		}
		return b.wrap(ir.MkTuple(p, elems...))
	case t.Kind == types.Tensor:
		b := &binder{ns: s.ns}
		x, y := b.atom(ea), b.atom(eb)
		i := s.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		at := func(v ir.Expr) ir.Expr { return ir.MkPrim(p, "index", ir.Ref(p, i), v) }
		build := ir.MkPrim(p, "build", ir.MkPrim(p, "size", x), ir.MkLam(p, i, s.patUnion(p, at(x), at(y))))
		same := ir.MkPrim(p, "eq", ir.MkPrim(p, "size", x), ir.MkPrim(p, "size", y))
		return b.wrap(&ir.Assert{P: p, Cond: same, Body: build, Msg: "size mismatch"})
	}
	fail(p, "internal: %s is not a sparsity pattern", t)
	return nil
}

// patFill returns the pattern shaped like the value ex whose every set is
// set: the map (lmCol ex) applied to set.
func (s *sem) patFill(p ir.Pos, ex, set ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	st := b.atom(set)
	return b.wrap(s.mapFloats(p, ex, func(ir.Expr) ir.Expr { return st }))
}

// patAll returns the union of all the sets of the pattern e: the map
// (lmRow a) applied to it.
func (s *sem) patAll(p ir.Pos, e ir.Expr) ir.Expr {
	return s.foldPattern(p, e, isSet, func(x ir.Expr) ir.Expr { return x })
}

// patSum returns the union over the index range n (an Integer or a tuple
// of them) of body, a pattern that reads the index i. An empty range is
// the error it is for sumbuild, unless the pattern's type says what no
// dependence looks like without a value to shape it.
func (s *sem) patSum(p ir.Pos, n ir.Expr, i *ir.Var, body ir.Expr) ir.Expr {
	if empty := s.emptyOfType(p, body.Type()); empty != nil {
		return s.unionOver(p, n, i, body)
	}
	b := &binder{ns: s.ns}
	nv := b.atom(n)
	return b.wrap(&ir.Assert{P: p, Cond: s.nonEmpty(p, nv), Body: s.unionOver(p, nv, i, body), Msg: "sumbuild over an empty range"})
}

// unionOver returns the union of body, a pattern that reads the index i,
// over the index range n: the patterns are gathered in a vector, then
// each set of their structure merged from all of them at once ($unionAll:
// a union per index would copy the growing set each time, quadratic in
// a sum's length). A range of patterns holding tensors must not be
// empty: the first one gives their sizes.
func (s *sem) unionOver(p ir.Pos, n ir.Expr, i *ir.Var, body ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	all := b.atom(s.gather(p, n, i, body))
	return b.wrap(s.unionAll(p, all))
}

// gather returns the vector of body, which reads the index i, at each
// index of the range n in row-major order.
func (s *sem) gather(p ir.Pos, n ir.Expr, i *ir.Var, body ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	nv := b.atom(n)
	q := s.ns.FreshVar(p, "q", types.IntegerType)
	lets := &binder{ns: s.ns}
	idx := s.rowMajor(p, nv, ir.Ref(p, q), lets)
	return b.wrap(ir.MkPrim(p, "build", s.count(p, nv), ir.MkLam(p, q, lets.wrap(ir.MkLet(p, i, idx, body)))))
}

// unionAll returns the union of the patterns of the vector all, an atom,
// set by set.
func (s *sem) unionAll(p ir.Pos, all ir.Expr) ir.Expr {
	t := all.Type().Elem
	j := s.ns.FreshVar(p, "j", types.IntegerType)
	each := func(part func(x ir.Expr) ir.Expr) ir.Expr {
		return ir.MkPrim(p, "build", ir.MkPrim(p, "size", all), ir.MkLam(p, j, part(ir.MkPrim(p, "index", ir.Ref(p, j), all))))
	}
	b := &binder{ns: s.ns}
	switch {
	case isSet(t):
		return ir.MkPrim(p, "$unionAll", each(func(x ir.Expr) ir.Expr { return x }))
	case t.Kind == types.Tuple:
		elems := make([]ir.Expr, len(t.Elems))
		for k := range elems {
			elems[k] = s.unionAll(p, b.atom(each(func(x ir.Expr) ir.Expr { return ir.MkGet(p, k+1, x) })))
		}
		return b.wrap(ir.MkTuple(p, elems...))
	case t.Kind == types.Tensor:
		// Element e of each, all of the first one's size.
		first := b.atom(ir.MkPrim(p, "index", ir.Int(p, 0), all))
		e := s.ns.FreshVar(p, "e", types.IndexType(t.Rank))
		part := func(x ir.Expr) ir.Expr {
			xv := s.ns.FreshVar(p, "x", t)
			same := ir.MkPrim(p, "eq", ir.MkPrim(p, "size", ir.Ref(p, xv)), ir.MkPrim(p, "size", first))
			return ir.MkLet(p, xv, x, &ir.Assert{P: p, Cond: same, Body: ir.MkPrim(p, "index", ir.Ref(p, e), ir.Ref(p, xv)), Msg: "size mismatch"})
		}
		eb := &binder{ns: s.ns}
		inner := s.unionAll(p, eb.atom(each(part)))
		return b.wrap(ir.MkPrim(p, "build", ir.MkPrim(p, "size", first), ir.MkLam(p, e, eb.wrap(inner))))
	}
	return ir.MkTuple(p) // the unit pattern
}

// emptyOfType returns the pattern of no dependence of type t, or nil if a
// value of t can hold a tensor, whose size only a value says.
func (s *sem) emptyOfType(p ir.Pos, t *types.Type) ir.Expr {
	switch {
	case isSet(t):
		return s.emptySet(p)
	case t.Kind == types.Tuple:
		elems := make([]ir.Expr, len(t.Elems))
		for k, e := range t.Elems {
			if elems[k] = s.emptyOfType(p, e); elems[k] == nil {
				return nil
			}
		}
		return ir.MkTuple(p, elems...)
	}
	return nil
}

// count returns the number of indices in the range n, an atom.
func (s *sem) count(p ir.Pos, n ir.Expr) ir.Expr {
	if n.Type().Kind == types.Integer {
		return n
	}
	c := ir.Expr(ir.MkGet(p, 1, n))
	for k := 2; k <= len(n.Type().Elems); k++ {
		c = ir.MkPrim(p, "mul", c, ir.MkGet(p, k, n))
	}
	return c
}

// nonEmpty is the condition that the range n, an atom, is not empty.
func (s *sem) nonEmpty(p ir.Pos, n ir.Expr) ir.Expr {
	return ir.MkPrim(p, "gt", s.count(p, n), ir.Int(p, 0))
}

// rowMajor returns the index of the range n, an atom (an Integer, or a
// tuple of them for a tensor's), at the flat position flat, the last
// index varying fastest; lets receives what it binds.
func (s *sem) rowMajor(p ir.Pos, n, flat ir.Expr, lets *binder) ir.Expr {
	nt := n.Type()
	if nt.Kind != types.Tuple {
		return flat
	}
	parts := make([]ir.Expr, len(nt.Elems))
	rest := lets.atom(flat)
	for k := len(parts) - 1; k >= 0; k-- {
		size := ir.MkGet(p, k+1, n)
		quo := lets.atom(ir.MkPrim(p, "div", rest, size))
		parts[k] = lets.atom(ir.MkPrim(p, "sub", rest, ir.MkPrim(p, "mul", quo, ir.Copy(size, p))))
		rest = quo
	}
	return ir.MkTuple(p, parts...)
}

// patScatter returns the pattern of the map (lmScatter sh j ex), whose
// target has type tt, applied to the pattern t: the tensor of shape sh
// with t at j and no dependence elsewhere.
func (s *sem) patScatter(p ir.Pos, tt *types.Type, sh, j, t ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	empty := b.atom(s.emptyOfShape(p, tt, sh))
	return b.wrap(ir.MkPrim(p, "$setAt", empty, j, t))
}

// emptyOfShape returns the pattern of no dependence of the tensors of
// type tt and shape sh.
func (s *sem) emptyOfShape(p ir.Pos, tt *types.Type, sh ir.Expr) ir.Expr {
	return s.patEmpty(p, ir.MkPrim(p, "$zerosOfShape", sh, &ir.Dummy{P: p, T: tt}))
}

// patScatterSum returns the pattern of buildFromSparse's map, the sum
// over the indices i < n of scatters (sc, to tensors of type tt) of the
// patterns pt, computed after the lets items: a loop uniting each into
// its element of a tensor of empty sets, so the work is that of the
// entries, not of the entries times the tensor. It returns nil for a
// range of tensor indices.
func (s *sem) patScatterSum(p ir.Pos, sc *ir.Call, n ir.Expr, i *ir.Var, items []ir.Expr, pt ir.Expr) ir.Expr {
	if n.Type().Kind != types.Integer {
		return nil
	}
	init := s.emptyOfShape(p, sc.Type().To, sc.Args[0])
	st := s.ns.FreshVar(p, "st", init.Type())
	q := s.ns.FreshVar(p, "q", types.IntegerType)
	sq := s.ns.FreshVar(p, "st_q", types.TupleOf(init.Type(), types.IntegerType))
	b := &binder{ns: s.ns}
	j := b.atom(sc.Args[1])
	old := b.atom(ir.MkPrim(p, "index", j, ir.Ref(p, st)))
	set := b.wrap(ir.MkPrim(p, "$setAt", ir.Ref(p, st), j, s.patUnion(p, old, pt)))
	step := &ir.Let{P: p, Vars: []*ir.Var{st, q}, Pattern: true, Rhs: ir.Ref(p, sq),
		Body: ir.MkLet(p, i, ir.Ref(p, q), ir.WrapChain(items, set))}
	return ir.MkPrim(p, "$ifold", n, init, ir.MkLam(p, sq, step))
}

// DenseHessianPattern is DensePattern's second-order pattern: every
// Float depends on all the argument's Floats do, with every pair of them.
func DenseHessianPattern(p ir.Pos, t *types.Type, value func() ir.Expr, ps ir.Expr, ns *ir.Names) ir.Expr {
	return denseHessian(p, t, value, ps, ns)
}

// DensePattern returns the pattern of a function whose derivative ksc
// cannot see (an edef, or a def with a hand-written [fwd g]) at an
// argument whose pattern is ps: every Float of its result, of type t,
// depends on every Float the argument depends on. value computes the
// result, which gives the sizes of its tensors; it is not called for a
// type without tensors.
func DensePattern(p ir.Pos, t *types.Type, value func() ir.Expr, ps ir.Expr, ns *ir.Names) ir.Expr {
	s := &sem{ns: ns, mode: patterns}
	b := &binder{ns: ns}
	all := b.atom(s.patAll(p, ps))
	if t.IsUniform() {
		return b.wrap(s.patFillType(p, t, all))
	}
	return b.wrap(s.patFill(p, value(), all))
}

// patFillType is patFill for a type without tensors, which needs no
// value to shape it.
func (s *sem) patFillType(p ir.Pos, t *types.Type, set ir.Expr) ir.Expr {
	switch t.Kind {
	case types.Float:
		return set
	case types.Tuple:
		elems := make([]ir.Expr, len(t.Elems))
		for i, e := range t.Elems {
			elems[i] = s.patFillType(p, e, set)
		}
		return ir.MkTuple(p, elems...)
	}
	return ir.MkTuple(p)
}

// EmptyPattern returns the pattern of no dependence shaped like the
// value ex: that of an argument whose Floats are not columns.
func EmptyPattern(p ir.Pos, ex ir.Expr, ns *ir.Names) ir.Expr {
	s := &sem{ns: ns, mode: patterns}
	return s.patEmpty(p, ex)
}
