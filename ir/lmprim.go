package ir

import (
	"fmt"

	"github.com/ksc-lang/ksc/types"
)

// lmTable holds the linear-map operations of seed 002, Figure 3, and the
// primitives that derived code uses to run linear maps: tangent zeros,
// accumulation in place, and indexed loops. A linear map of type (LM S T)
// maps tangents of S to tangents of T.
//
// Operations that take a type as an argument take a value of that type
// instead ("an example"), since primitives are typed by their arguments:
// (lmOne x) is the identity on the tangent space of x's type.
var lmTable = []*Prim{
	{Name: "lmZero", Arity: 2, Check: checkLMZero, LM: true,
		Doc: "(lmZero s t): the zero map from the tangents of s's type to those of t's"},
	{Name: "lmOne", Arity: 1, Check: checkLMOne, LM: true,
		Doc: "(lmOne s): the identity on the tangents of s's type"},
	{Name: "lmScale", Arity: 2, Check: checkLMScale, LM: true,
		Doc: "(lmScale s k): multiplies every Float of a tangent of s's type by k"},
	{Name: "lmCompose", Arity: 2, Check: checkLMCompose, LM: true,
		Doc: "(lmCompose m1 m2) = m1 ∘ m2: first m2, then m1"},
	{Name: "lmAdd", Arity: 2, Check: checkLMAdd, LM: true,
		Doc: "(lmAdd m1 m2) = m1 ⊕ m2: the sum of two maps with the same type"},
	{Name: "lmVCat", Arity: -1, Check: checkLMVCat, LM: true,
		Doc: "(lmVCat m1 ... mn) = m1 × ... × mn: (LM S Ti)... to (LM S (Tuple T1 ... Tn))"},
	{Name: "lmHCat", Arity: -1, Check: checkLMHCat, LM: true,
		Doc: "(lmHCat m1 ... mn) = m1 ⋈ ... ⋈ mn: (LM Ti T)... to (LM (Tuple T1 ... Tn) T)"},
	{Name: "lmBuild", Arity: 2, Check: checkLMBuild, Lams: []int{1}, LM: true,
		Doc: "(lmBuild n (lam i m)) = V: (LM S T) per index to (LM S (Tensor N T))"},
	{Name: "lmBuildT", Arity: 2, Check: checkLMBuildT, Lams: []int{1}, LM: true,
		Doc: "(lmBuildT n (lam i m)) = H, the transpose of lmBuild: (LM T S) per index to (LM (Tensor N T) S)"},
	{Name: "lmSumBuild", Arity: 2, Check: checkLMSumBuild, Lams: []int{1}, LM: true,
		Doc: "(lmSumBuild n (lam i m)): the sum of the maps m over the index range"},
	{Name: "lmIndex", Arity: 2, Check: checkLMIndex, LM: true,
		Doc: "(lmIndex i v): the tangent of (index i v) with respect to v, (LM (Tensor N T) T)"},
	{Name: "lmScatter", Arity: 3, Check: checkLMScatter, LM: true,
		Doc: "(lmScatter sh j x): dx -> the tensor of shape sh that is zero but for dx at index j, (LM T (Tensor N T)) for x : T; the map of one element of buildFromSparse"},
	{Name: "lmSum", Arity: 1, Check: checkLMSum, LM: true,
		Doc: "(lmSum v): the tangent of (sum v), (LM (Tensor N T) T)"},
	{Name: "lmRow", Arity: 1, Check: checkLMRow, LM: true,
		Doc: "(lmRow v): dx -> ts_dot(v, dx), (LM T Float); the row of a dot product"},
	{Name: "lmCol", Arity: 1, Check: checkLMCol, LM: true,
		Doc: "(lmCol v): k -> ts_scale(k, v), (LM Float T); the transpose of lmRow"},
	{Name: "lmFold", Arity: 6, Check: checkLMFold, Lams: []int{0, 1}, LM: true,
		Doc: "(lmFold f g acc v macc mv): the map of (fold f acc v) given the maps of acc and v; g gives the map of one step from the maps of its accumulator and element (seed 002, Figures 12-15)"},
	{Name: "lmTranspose", Arity: 1, Check: checkLMTranspose, LM: true,
		Doc: "(lmTranspose m): the transpose, (LM T S) for m : (LM S T)"},
	{Name: "lmApply", Arity: 2, Check: checkLMApply, LM: true,
		Doc: "(lmApply m dx): apply m : (LM S T) to a tangent of S"},
	{Name: "lmPattern", Arity: 2, Check: checkLMPattern, LM: true,
		Doc: "(lmPattern m ps): the sparsity pattern of m : (LM S T) applied to a pattern of S: each Float of T replaced by the union of the sets of the Floats of S it depends on (types.Pattern)"},
	{Name: "lmHessianPattern", Arity: 2, Check: checkLMHessianPattern, LM: true,
		Doc: "(lmHessianPattern m ps): the second-order sparsity pattern of the program m : (LM S T) applied to one of S: each Float of T replaced by the sets of the Floats of S it depends on and of the pairs of them its second derivative may involve (types.HessianPattern)"},
	{Name: "lmApplyR", Arity: 2, Check: checkLMApplyR, LM: true,
		Doc: "(lmApplyR dr m): reverse-apply m : (LM S T) to a cotangent of T"},

	// Runtime support for derived code.
	{Name: "ts_zero", Arity: 1, Check: checkTsZero, D: []string{""},
		Doc: "the zero tangent shaped like a value (its derivative is zero: only the value's shape counts)"},
	{Name: "$addTo", Arity: 2, Check: checkAddTo, InPlace: true,
		Doc: "($addTo acc x): acc + x, adding into acc in place (acc must not be used again)"},
	{Name: "$addAt", Arity: 3, Check: checkAddAt, InPlace: true,
		Doc: "($addAt acc i x): acc with x added to element i, in place (acc must not be used again)"},
	{Name: "$setAt", Arity: 3, Check: checkSetAt, InPlace: true,
		Doc: "($setAt acc i x): acc with element i replaced by x, in place (acc must not be used again)"},
	{Name: "$ifold", Arity: 3, Check: checkIFold, Lams: []int{2},
		Doc: "($ifold n s (lam (s_i : Tuple S Integer) e)): s updated by e for i = 0 .. n-1"},
	{Name: "$ifoldr", Arity: 3, Check: checkIFold, Lams: []int{2},
		Doc: "($ifoldr n s (lam (s_i : Tuple S Integer) e)): s updated by e for i = n-1 down to 0"},
	{Name: "$foldtape", Arity: 3, Check: checkFoldTape, Lams: []int{0},
		Doc: "($foldtape f acc v): the accumulators a fold sees before each step, then its value: a vector of size (size v) + 1"},
	{Name: "$foldrec", Arity: 3, Check: checkFoldRec, Lams: []int{0},
		Doc: "($foldrec f acc v), f from (Tuple acc x) to (Tuple acc r): the tape of $foldtape, and the r each step returns beside its accumulator (size (size v))"},
}

func lmParts(t *types.Type) (s, u *types.Type, ok bool) {
	if t.Kind != types.LM {
		return nil, nil, false
	}
	return t.From, t.To, true
}

func checkLMZero(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() || !p[1].IsValue() {
		return nil, "lmZero: expected two example values, got " + describeParts(p)
	}
	return types.LMOf(p[0], p[1]), ""
}

func checkLMOne(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() {
		return nil, "lmOne: expected an example value, got " + describeParts(p)
	}
	return types.LMOf(p[0], p[0]), ""
}

func checkLMScale(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() || !p[1].Equal(tF) {
		return nil, "lmScale: expected an example value and a Float, got " + describeParts(p)
	}
	return types.LMOf(p[0], p[0]), ""
}

func checkLMCompose(p []*types.Type) (*types.Type, string) {
	b, c, ok1 := lmParts(p[0])
	a, b2, ok2 := lmParts(p[1])
	if !ok1 || !ok2 || !b.Equal(b2) {
		return nil, "lmCompose: expected (LM B C) and (LM A B), got " + describeParts(p)
	}
	return types.LMOf(a, c), ""
}

func checkLMAdd(p []*types.Type) (*types.Type, string) {
	if _, _, ok := lmParts(p[0]); !ok || !p[0].Equal(p[1]) {
		return nil, "lmAdd: expected two linear maps of the same type, got " + describeParts(p)
	}
	return p[0], ""
}

func checkLMVCat(p []*types.Type) (*types.Type, string) {
	if len(p) == 0 {
		return nil, "lmVCat: needs at least one linear map"
	}
	var s *types.Type
	ts := make([]*types.Type, len(p))
	for i, t := range p {
		from, to, ok := lmParts(t)
		if !ok || s != nil && !from.Equal(s) {
			return nil, "lmVCat: expected linear maps from one type, got " + describeParts(p)
		}
		s, ts[i] = from, to
	}
	return types.LMOf(s, types.TupleOf(ts...)), ""
}

func checkLMHCat(p []*types.Type) (*types.Type, string) {
	if len(p) == 0 {
		return nil, "lmHCat: needs at least one linear map"
	}
	var t *types.Type
	ss := make([]*types.Type, len(p))
	for i, m := range p {
		from, to, ok := lmParts(m)
		if !ok || t != nil && !to.Equal(t) {
			return nil, "lmHCat: expected linear maps to one type, got " + describeParts(p)
		}
		ss[i], t = from, to
	}
	return types.LMOf(types.TupleOf(ss...), t), ""
}

func checkLMBuild(p []*types.Type) (*types.Type, string) {
	rank := types.IndexRank(p[0])
	from, to, ok := lamParts(p[1])
	if rank == 0 || !ok || !from.Equal(p[0]) {
		return nil, "lmBuild: expected a size and a lambda from the index, got " + describeParts(p)
	}
	s, t, ok := lmParts(to)
	if !ok {
		return nil, "lmBuild: the lambda must return a linear map, not " + to.String()
	}
	return types.LMOf(s, types.TensorOf(rank, t)), ""
}

func checkLMBuildT(p []*types.Type) (*types.Type, string) {
	rank := types.IndexRank(p[0])
	from, to, ok := lamParts(p[1])
	if rank == 0 || !ok || !from.Equal(p[0]) {
		return nil, "lmBuildT: expected a size and a lambda from the index, got " + describeParts(p)
	}
	t, s, ok := lmParts(to)
	if !ok {
		return nil, "lmBuildT: the lambda must return a linear map, not " + to.String()
	}
	return types.LMOf(types.TensorOf(rank, t), s), ""
}

func checkLMSumBuild(p []*types.Type) (*types.Type, string) {
	from, to, ok := lamParts(p[1])
	if types.IndexRank(p[0]) == 0 || !ok || !from.Equal(p[0]) {
		return nil, "lmSumBuild: expected a size and a lambda from the index, got " + describeParts(p)
	}
	if _, _, ok := lmParts(to); !ok {
		return nil, "lmSumBuild: the lambda must return a linear map, not " + to.String()
	}
	return to, ""
}

func checkLMIndex(p []*types.Type) (*types.Type, string) {
	t, msg := checkIndex(p)
	if msg != "" {
		return nil, "lmIndex: " + msg
	}
	return types.LMOf(p[1], t), ""
}

func checkLMScatter(p []*types.Type) (*types.Type, string) {
	rank := types.IndexRank(p[1])
	if rank == 0 || !p[2].IsValue() {
		return nil, "lmScatter: expected a shape, an index and an example element, got " + describeParts(p)
	}
	res := types.TensorOf(rank, p[2])
	if sh, ok := types.Shape(res); !ok || !sh.Equal(p[0]) {
		return nil, fmt.Sprintf("lmScatter: the shape of a %s is not a %s", res, p[0])
	}
	return types.LMOf(p[2], res), ""
}

func checkLMSum(p []*types.Type) (*types.Type, string) {
	t, msg := checkSum(p)
	if msg != "" {
		return nil, "lmSum: " + msg
	}
	return types.LMOf(p[0], t), ""
}

func checkLMRow(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() {
		return nil, "lmRow: expected a value, got " + describeParts(p)
	}
	return types.LMOf(p[0], tF), ""
}

func checkLMCol(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() {
		return nil, "lmCol: expected a value, got " + describeParts(p)
	}
	return types.LMOf(tF, p[0]), ""
}

func checkLMTranspose(p []*types.Type) (*types.Type, string) {
	s, t, ok := lmParts(p[0])
	if !ok {
		return nil, "lmTranspose: expected a linear map, got " + describeParts(p)
	}
	return types.LMOf(t, s), ""
}

func checkLMApply(p []*types.Type) (*types.Type, string) {
	s, t, ok := lmParts(p[0])
	if !ok {
		return nil, "lmApply: expected a linear map and a tangent, got " + describeParts(p)
	}
	ds, _ := types.Tangent(s)
	dt, _ := types.Tangent(t)
	if !p[1].Equal(ds) {
		return nil, fmt.Sprintf("lmApply: a map from %s applies to a tangent of type %s, not %s", s, ds, p[1])
	}
	return dt, ""
}

func checkLMHessianPattern(p []*types.Type) (*types.Type, string) {
	s, t, ok := lmParts(p[0])
	if !ok {
		return nil, "lmHessianPattern: expected a linear map and a pattern, got " + describeParts(p)
	}
	ps, _ := types.HessianPattern(s)
	pt, _ := types.HessianPattern(t)
	if !p[1].Equal(ps) {
		return nil, fmt.Sprintf("lmHessianPattern: a map from %s applies to a pattern of type %s, not %s", s, ps, p[1])
	}
	return pt, ""
}

func checkLMPattern(p []*types.Type) (*types.Type, string) {
	s, t, ok := lmParts(p[0])
	if !ok {
		return nil, "lmPattern: expected a linear map and a pattern, got " + describeParts(p)
	}
	ps, _ := types.Pattern(s)
	pt, _ := types.Pattern(t)
	if !p[1].Equal(ps) {
		return nil, fmt.Sprintf("lmPattern: a map from %s applies to a pattern of type %s, not %s", s, ps, p[1])
	}
	return pt, ""
}

func checkLMApplyR(p []*types.Type) (*types.Type, string) {
	s, t, ok := lmParts(p[1])
	if !ok {
		return nil, "lmApplyR: expected a cotangent and a linear map, got " + describeParts(p)
	}
	ds, _ := types.Tangent(s)
	dt, _ := types.Tangent(t)
	if !p[0].Equal(dt) {
		return nil, fmt.Sprintf("lmApplyR: a map to %s reverse-applies to a cotangent of type %s, not %s", t, dt, p[0])
	}
	return ds, ""
}

func checkTsZero(p []*types.Type) (*types.Type, string) {
	dt, ok := types.Tangent(p[0])
	if !ok {
		return nil, "ts_zero: expected a value, got " + describeParts(p)
	}
	return dt, ""
}

func checkAddTo(p []*types.Type) (*types.Type, string) {
	if !p[0].Equal(p[1]) || !p[0].IsValue() {
		return nil, "$addTo: expected two tangents of the same type, got " + describeParts(p)
	}
	return p[0], ""
}

func checkAddAt(p []*types.Type) (*types.Type, string) {
	if p[0].Kind != types.Tensor || !p[1].Equal(types.IndexType(p[0].Rank)) || !p[2].Equal(p[0].Elem) {
		return nil, "$addAt: expected a tensor, an index and an element, got " + describeParts(p)
	}
	return p[0], ""
}

func checkSetAt(p []*types.Type) (*types.Type, string) {
	if p[0].Kind != types.Tensor || !p[1].Equal(types.IndexType(p[0].Rank)) || !p[2].Equal(p[0].Elem) {
		return nil, "$setAt: expected a tensor, an index and an element, got " + describeParts(p)
	}
	return p[0], ""
}

func checkIFold(p []*types.Type) (*types.Type, string) {
	from, to, ok := lamParts(p[2])
	if !p[0].Equal(tI) || !ok || !from.Equal(types.TupleOf(p[1], tI)) || !to.Equal(p[1]) {
		return nil, "$ifold: expected a count, a state and a lambda from (Tuple state Integer) to the state, got " + describeParts(p)
	}
	return p[1], ""
}

func checkFoldTape(p []*types.Type) (*types.Type, string) {
	acc, msg := checkFold(p)
	if msg != "" {
		return nil, "$foldtape: " + msg
	}
	return types.VecOf(acc), ""
}

func checkFoldRec(p []*types.Type) (*types.Type, string) {
	from, to, ok := lamParts(p[0])
	acc, v := p[1], p[2]
	if !ok || v.Kind != types.Tensor || v.Rank != 1 || !from.Equal(types.TupleOf(acc, v.Elem)) ||
		to.Kind != types.Tuple || len(to.Elems) != 2 || !to.Elems[0].Equal(acc) {
		return nil, "$foldrec: expected a lambda from (Tuple acc x) to (Tuple acc r), an acc and a vector of x, got " + describeParts(p)
	}
	return types.TupleOf(types.VecOf(acc), types.VecOf(to.Elems[1])), ""
}

func checkLMFold(p []*types.Type) (*types.Type, string) {
	acc, msg := checkFold([]*types.Type{p[0], p[2], p[3]})
	if msg != "" {
		return nil, "lmFold: " + msg
	}
	s, t, ok := lmParts(p[4])
	if !ok || !t.Equal(acc) || !p[5].Equal(types.LMOf(s, p[3])) {
		return nil, "lmFold: expected the maps of the accumulator and the vector, got " + describeParts(p[4:])
	}
	elem := p[3].Elem
	want := types.LamOf(types.TupleOf(types.TupleOf(acc, elem), types.TupleOf(types.LMOf(s, acc), types.LMOf(s, elem))), types.LMOf(s, acc))
	if !p[1].Equal(want) {
		return nil, fmt.Sprintf("lmFold: the step's map must be %s, not %s", want, p[1])
	}
	return types.LMOf(s, acc), ""
}
