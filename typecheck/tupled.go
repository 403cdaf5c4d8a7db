package typecheck

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// tupledName is Knossos' primitive buildFromSparseTupled. It has no row in
// the primitive table: the type checker rewrites each call into build and
// buildFromSparse (sparseTupled), so that the later stages (derivatives,
// optimiser, backends, evaluators) handle it without code of their own.
const tupledName = "buildFromSparseTupled"

// sparseTupled checks a call
//
//	(buildFromSparseTupled (tuple sh1 ... shm) n
//	  (lam (k : I) (tuple (tuple j1 x1) ... (tuple jm xm))))
//
// whose result is (tuple t1 ... tm), ti being what
// (buildFromSparse shi n (lam (k : I) (tuple ji xi))) returns, with the
// lambda evaluated once per index k. It returns the call rewritten as
//
//	(let (shapes SHAPES)
//	  (let (count N)
//	    (let (pairs (build count' (lam (k : I) BODY)))
//	      (tuple (buildFromSparse (get$1$m shapes) (size pairs)
//	               (lam (k2 : I) (get$1$m (index k2 pairs))))
//	             ...))))
//
// where count' is count with each negative size replaced by 0 (build
// fails on a negative size; buildFromSparse runs no iterations). A shape
// written uncompressed is converted as buildFromSparse's (knossosShape).
// The variables are fresh (c.fresh) and not bound where the call is, so
// the code around the user's expressions captures none of their
// variables. Every node written here has the call's position.
func (c *checker) sparseTupled(e *syntax.Call, sc *scope) ir.Expr {
	if len(e.Args) != 3 {
		c.errorf(e.Fn.P, "%s takes 3 arguments, got %d", tupledName, len(e.Args))
		return nil
	}
	args, ok := c.lamArgs(e, tupledName, []int{2}, sc)
	if !ok {
		return nil
	}
	shapes, count, lam := args[0], args[1], args[2].(*ir.Lam)
	synLam := e.Args[2].(*syntax.Lam)

	ct := count.Type()
	if types.IndexRank(ct) == 0 {
		c.errorf(e.Args[1].Pos(), "%s: the count must be an Integer or a tuple of Integers, not %s", tupledName, ct)
		return nil
	}
	if !lam.Param.T.Equal(ct) {
		c.errorf(synLam.Param.Type.P, "%s: the lambda must take %s, the count's type, not %s", tupledName, ct, lam.Param.T)
		return nil
	}
	pairs := lam.Body.Type()
	if pairs.Kind != types.Tuple || len(pairs.Elems) == 0 {
		c.errorf(synLam.Body.Pos(), "%s: the lambda must return a tuple of pairs (Tuple index value), one per result, not %s", tupledName, pairs)
		return nil
	}
	m := len(pairs.Elems)
	results := make([]*types.Type, m)
	for i, pr := range pairs.Elems {
		if pr.Kind != types.Tuple || len(pr.Elems) != 2 || types.IndexRank(pr.Elems[0]) == 0 || !ir.Summable(pr.Elems[1]) {
			c.errorf(elemPos(synLam.Body, i, m), "%s: pair %d of the lambda's result must be (Tuple index value), with an Integer or a tuple of Integers and a summable value, not %s", tupledName, i+1, pr)
			ok = false
			continue
		}
		results[i] = types.TensorOf(types.IndexRank(pr.Elems[0]), pr.Elems[1])
	}
	if !ok {
		return nil
	}
	st := shapes.Type()
	if st.Kind != types.Tuple || len(st.Elems) != m {
		what := fmt.Sprintf("%d shapes", m)
		if m == 1 {
			what = "1 shape"
		}
		c.errorf(e.Args[0].Pos(), "%s: the first argument must be a tuple of %s, one per pair the lambda returns, not %s", tupledName, what, st)
		return nil
	}
	for i, res := range results {
		sh, un := mustShape(res), uncompressed(res)
		if st.Elems[i].Equal(sh) || st.Elems[i].Equal(un) {
			continue
		}
		c.errorf(elemPos(e.Args[0], i, m), "%s: shape %d: the shape of a %s has type %s (or %s, uncompressed), not %s", tupledName, i+1, res, sh, un, st.Elems[i])
		ok = false
	}
	if !ok {
		return nil
	}

	// The checks above make every call written here well-typed, so
	// MkPrim, which panics on an ill-typed call, cannot fail.
	p := e.Lparen
	c.takeScope(sc)
	shv := c.fresh.FreshVar(p, "shapes", st)
	cv := c.fresh.FreshVar(p, "count", ct)
	pv := c.fresh.FreshVar(p, "pairs", types.TensorOf(types.IndexRank(ct), pairs))
	elems := make([]ir.Expr, m)
	for i := range results {
		k := c.fresh.FreshVar(p, "k", ct)
		pair := ir.MkLam(p, k, ir.MkGet(p, i+1, ir.MkPrim(p, "index", ir.Ref(p, k), ir.Ref(p, pv))))
		sh := knossosShape(ir.MkGet(p, i+1, ir.Ref(p, shv)), pair)
		elems[i] = ir.MkPrim(p, "buildFromSparse", sh, ir.MkPrim(p, "size", ir.Ref(p, pv)), pair)
	}
	build := ir.MkPrim(p, "build", nonNegative(p, cv), lam)
	return ir.MkLet(p, shv, shapes,
		ir.MkLet(p, cv, count,
			ir.MkLet(p, pv, build, ir.MkTuple(p, elems...))))
}

// nonNegative returns the sizes held by n, an Integer or a tuple of
// Integers, with each negative size replaced by 0.
func nonNegative(p syntax.Pos, n *ir.Var) ir.Expr {
	clamp := func(x func() ir.Expr) ir.Expr {
		return ir.MkIf(p, ir.MkPrim(p, "lt", x(), ir.Int(p, 0)), ir.Int(p, 0), x())
	}
	if n.T.Kind == types.Integer {
		return clamp(func() ir.Expr { return ir.Ref(p, n) })
	}
	sizes := make([]ir.Expr, len(n.T.Elems))
	for d := range sizes {
		sizes[d] = clamp(func() ir.Expr { return ir.MkGet(p, d+1, ir.Ref(p, n)) })
	}
	return ir.MkTuple(p, sizes...)
}

// elemPos returns the position of element i of e if e is a tuple written
// with n elements, else that of e: where an error in part i of its value
// is reported.
func elemPos(e syntax.Expr, i, n int) syntax.Pos {
	if t, ok := e.(*syntax.Tuple); ok && len(t.Elems) == n {
		return t.Elems[i].Pos()
	}
	return e.Pos()
}
