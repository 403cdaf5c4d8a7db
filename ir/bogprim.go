package ir

import "github.com/ksc-lang/ksc/types"

// bogTable holds the primitives of split reverse mode's records (BOGs):
// variants, which record which branch of an if ran and that branch's
// record only, and named types, which let the record of a recursive
// function hold the records of its recursive calls.
var bogTable = []*Prim{
	{Name: "$inl", Arity: 2, Check: checkInj, Pure: true,
		Doc: "($inl a b): the variant holding a, of type (Variant A B); b only gives B"},
	{Name: "$inr", Arity: 2, Check: checkInj, Pure: true,
		Doc: "($inr a b): the variant holding b, of type (Variant A B); a only gives A"},
	{Name: "$isl", Arity: 1, Check: checkIsl, Pure: true, Doc: "whether a variant holds its left alternative"},
	{Name: "$outl", Arity: 1, Check: checkOut(0), Pure: true, Doc: "the left alternative of a variant that holds it"},
	{Name: "$outr", Arity: 1, Check: checkOut(1), Pure: true, Doc: "the right alternative of a variant that holds it"},
	{Name: "$wrap", Arity: 2, Check: checkWrap,
		Doc: "($wrap x n): a value of the named type of n (only its type counts) holding x, its definition"},
	{Name: "$unwrap", Arity: 1, Check: checkUnwrap, Pure: true, Doc: "the value a named type's value holds"},
	{Name: "$dup", Arity: 1, Check: checkDup, Pure: true, Doc: "(tuple x x): sharing made explicit in single-use form"},
	{Name: "$elim", Arity: 1, Check: checkElim, Pure: true, Doc: "(tuple), discarding x: an unused value in single-use form"},
	{Name: "$shape", Arity: 1, Check: checkShape, Doc: "the shape of a value (language.md section 5): its sizes"},
	{Name: "$zerosOfShape", Arity: 2, Check: checkZerosOfShape,
		Doc: "($zerosOfShape sh t): zeros of the type of t with the shape sh (only t's type counts)"},
}

func checkShape(p []*types.Type) (*types.Type, string) {
	sh, ok := types.Shape(p[0])
	if !ok || !p[0].IsPlain() {
		return nil, "shape: a value of type " + p[0].String() + " has no shape"
	}
	return sh, ""
}

func checkZerosOfShape(p []*types.Type) (*types.Type, string) {
	sh, ok := types.Shape(p[1])
	if !ok || !sh.Equal(p[0]) || !p[1].IsPlain() {
		return nil, "$zerosOfShape: expected a shape of the type of the second argument, got " + describeParts(p)
	}
	return p[1], ""
}

func checkInj(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() || !p[1].IsValue() {
		return nil, "$inl/$inr: expected two values, got " + describeParts(p)
	}
	return types.VariantOf(p[0], p[1]), ""
}

func checkIsl(p []*types.Type) (*types.Type, string) {
	if p[0].Kind != types.Variant {
		return nil, "$isl: expected a variant, not " + p[0].String()
	}
	return tB, ""
}

func checkOut(k int) func(p []*types.Type) (*types.Type, string) {
	return func(p []*types.Type) (*types.Type, string) {
		if p[0].Kind != types.Variant {
			return nil, "$outl/$outr: expected a variant, not " + p[0].String()
		}
		return p[0].Elems[k], ""
	}
}

func checkWrap(p []*types.Type) (*types.Type, string) {
	if p[1].Kind != types.Named || p[1].Def == nil || !p[1].Def.Equal(p[0]) {
		return nil, "$wrap: expected a value and a named type it defines, got " + describeParts(p)
	}
	return p[1], ""
}

func checkUnwrap(p []*types.Type) (*types.Type, string) {
	if p[0].Kind != types.Named || p[0].Def == nil {
		return nil, "$unwrap: expected a value of a named type, not " + p[0].String()
	}
	return p[0].Def, ""
}

func checkDup(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() {
		return nil, "$dup: expected a value, not " + p[0].String()
	}
	return types.TupleOf(p[0], p[0]), ""
}

func checkElim(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() {
		return nil, "$elim: expected a value, not " + p[0].String()
	}
	return types.Unit, ""
}
