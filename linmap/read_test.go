package linmap

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// TestReadByReverse: a call's value counts as read by the reverse pass
// when a map, an assert, or a primal let those need mentions it, even
// through other lets; not when only primal lets nothing needs (the
// program's unwanted value) do. (A tensor that a map's let is Of also
// counts, for its shape; Of is not written in ks, so it is not here.)
func TestReadByReverse(t *testing.T) {
	vars := []*ir.Var{
		{Name: "x", T: types.FloatType},
		{Name: "y", T: types.FloatType},
		{Name: "v", T: types.VecOf(types.FloatType)},
	}
	for _, tc := range []struct {
		name, rest string
		want       bool
	}{
		{"y", "(let (z (add y 1.0)) (lmOne x))", false},
		{"y", "(lmScale x y)", true},
		{"y", "(let (z (mul y 2.0)) (let (m (lmScale x z)) m))", true},
		{"y", "(let (z (mul y 2.0)) (let (w (add z 1.0)) (lmOne x)))", false},
		{"y", "(assert (gt y 0.0) (lmOne x))", true},
		{"v", "(lmScale x y)", false},
		{"v", "(let (n (size v)) (let (z (to_float n)) (lmScale x z)))", true},
	} {
		rest, err := typecheck.CheckExpr("t", tc.rest, vars)
		if err != nil {
			t.Fatalf("%s: %v", tc.rest, err)
		}
		if got := readByReverse(tc.name, rest); got != tc.want {
			t.Errorf("readByReverse(%s, %s) = %v, want %v", tc.name, tc.rest, got, tc.want)
		}
	}
}
