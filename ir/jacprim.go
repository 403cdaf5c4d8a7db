package ir

import "github.com/ksc-lang/ksc/types"

// jacTable holds the primitives [jac f] is made of (derive/jac.go): a
// value's Floats in flat order (language.md section 5: tuple fields in
// order, tensor elements row-major) and back.
var jacTable = []*Prim{
	{Name: "$flatten", Arity: 1, Check: checkFlatten, Pure: true,
		Doc: "($flatten x): the Floats of x in flat order, as a vector (other scalars are left out)"},
	{Name: "$unflatten", Arity: 2, Check: checkUnflatten,
		Doc: "($unflatten v t): t with its Floats replaced, in flat order, by v's elements; fails unless v has as many"},
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
