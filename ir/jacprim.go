package ir

import "github.com/ksc-lang/ksc/types"

// jacTable holds the primitives [jac f] and [sparsejac f] are made of
// (derive/jac.go, derive/sparsejac.go): a value's Floats in flat order
// (language.md section 5: tuple fields in order, tensor elements
// row-major) and back, and the sets and colourings of sparsity patterns
// (types.Pattern: a set is a Vec Integer in increasing order).
var jacTable = []*Prim{
	{Name: "$flatten", Arity: 1, Check: checkFlatten, Pure: true,
		Doc: "($flatten x): the Floats of x in flat order, as a vector (other scalars are left out)"},
	{Name: "$unflatten", Arity: 2, Check: checkUnflatten,
		Doc: "($unflatten v t): t with its Floats replaced, in flat order, by v's elements; fails unless v has as many"},
	{Name: "$patternSeed", Arity: 1, Check: checkPatternSeed, Pure: true,
		Doc: "($patternSeed x): x's sparsity pattern as an argument: each Float replaced by the set of its own flat position"},
	{Name: "$patternCSR", Arity: 1, Check: checkPatternCSR, Pure: true,
		Doc: "($patternCSR p): the sets of the pattern p in flat order as CSR rows: (tuple offsets columns)"},
	{Name: "$union", Sig: sig(tVI, tVI, tVI), Pure: true,
		Doc: "($union a b): the union of two sets (increasing Vec Integers), increasing"},
	{Name: "$unionAll", Sig: sig(tVI, types.VecOf(tVI)), Pure: true,
		Doc: "($unionAll sets): the union of a vector of sets, increasing, in time proportional to their total size times its logarithm"},
	{Name: "$pairs", Sig: sig(tVI, tVI, tVI), Pure: true,
		Doc: "($pairs a b): the pairs (i, j) and (j, i) for i in the set a and j in the set b, each coded as i * 2^32 + j, as a set; fails on a position of 2^31 or more"},
	{Name: "$pairsCSR", Sig: sig(types.TupleOf(tVI, tVI), tVI, tVI, tVI, tI, tB),
		Doc: "($pairsCSR pairs off cols n withJ): the n x n pattern of the set of coded pairs as CSR rows, each row followed, if withJ, by the columns n + k of the rows k of the CSR pattern (off, cols) that have its position (that pattern transposed): (tuple offsets columns)"},
	{Name: "$colourColumns", Sig: sig(types.TupleOf(tI, tVI), tVI, tVI, tI),
		Doc: "($colourColumns offsets columns n): a greedy colouring of the n columns of the CSR pattern, no two sharing a row alike: (tuple colours colour-of-each); fails on a malformed pattern"},
	{Name: "$colour", Sig: sig(types.TupleOf(tB, tI, tVI), tVI, tVI, tI),
		Doc: "($colour offsets columns n): a greedy colouring of the columns of the CSR pattern with n columns, no two sharing a row alike, or of its rows, no two sharing a column alike, whichever has fewer colours (the columns on a tie): (tuple byRows colours colour-of-each); fails on a malformed pattern"},
}

var tVI = types.VecOf(types.IntegerType)

func checkPatternSeed(p []*types.Type) (*types.Type, string) {
	pt, ok := types.Pattern(p[0])
	if !ok || !p[0].IsPlain() {
		return nil, "$patternSeed: expected a value, not " + p[0].String()
	}
	return pt, ""
}

func checkPatternCSR(p []*types.Type) (*types.Type, string) {
	if !p[0].IsPlain() {
		return nil, "$patternCSR: expected a sparsity pattern, not " + p[0].String()
	}
	return types.TupleOf(tVI, tVI), ""
}

func checkFlatten(p []*types.Type) (*types.Type, string) {
	if !p[0].IsPlain() {
		return nil, "$flatten: expected a value, not " + p[0].String()
	}
	return tVF, ""
}

func checkUnflatten(p []*types.Type) (*types.Type, string) {
	if !p[0].Equal(tVF) || !p[1].IsPlain() {
		return nil, "$unflatten: expected a Vec Float and a value, got " + describeParts(p)
	}
	return p[1], ""
}
