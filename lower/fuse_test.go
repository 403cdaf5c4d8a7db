package lower_test

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// TestFuseBuild checks when the simplifier fuses a let-bound build into
// the code that reads it (fuseBuild): the vector is not made.
func TestFuseBuild(t *testing.T) {
	vars := []*ir.Var{
		{Name: "n", T: types.IntegerType}, {Name: "a", T: types.FloatType},
		{Name: "v", T: types.VecOf(types.FloatType)},
	}
	for _, tc := range []struct {
		name, in string
		fused    bool
	}{
		{"one index in the loop over its indices",
			"(let (u (build n (lam (i : Integer) (mul a (to_float i))))) (sumbuild (size u) (lam (j : Integer) (index j u))))", true},
		{"read only by size (a zero shaped like it)",
			"(let (u (build n (lam (i : Integer) (exp (mul a (to_float i)))))) (constVec (size u) 0.0))", true},
		{"two reads",
			"(let (u (build n (lam (i : Integer) (exp (mul a (to_float i)))))) (add (index 0 u) (index 1 u)))", false},
		{"read whole",
			"(let (u (build n (lam (i : Integer) (exp (mul a (to_float i)))))) (tuple u (size u)))", false},
		{"the elements print",
			"(let (u (build n (lam (i : Integer) (to_float (print a))))) (size u))", false},
	} {
		in, err := typecheck.CheckExpr("test", tc.in, vars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := &lower.Simplifier{}
		out := ir.FormatExpr(s.Simplify(in))
		if got := !strings.Contains(out, "(build"); got != tc.fused {
			t.Errorf("%s: %s became %s (fused: %v, want %v)", tc.name, tc.in, out, got, tc.fused)
		}
	}
}
