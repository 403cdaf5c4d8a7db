package optimise

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestCSE checks which equal let values cse makes one: pure values, but
// not the fresh zeros that derived code updates in place.
func TestCSE(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		shared   bool
	}{
		{"a pure value", "(let (p (exp a)) (let (q (exp a)) (add p q)))", true},
		{"a build", "(let (p (build n (lam (i : Integer) a))) (let (q (build n (lam (i : Integer) a))) (tuple p q)))", true},
		{"zeros made by constVec", "(let (p (constVec n 0.0)) (let (q (constVec n 0.0)) (tuple ($addAt p 0 a) ($addAt q 1 b))))", false},
		{"vectors made by Vec_init (a small constVec, optimise/smallvec.go)", "(let (p (Vec_init 0.0 0.0)) (let (q (Vec_init 0.0 0.0)) (tuple ($addAt p (sub n 4) a) ($addAt q (sub n 3) b))))", false},
		{"zeros made by ts_zero", "(let (p (ts_zero v)) (let (q (ts_zero v)) (tuple ($addAt p 0 a) ($addAt q 1 b))))", false},
		{"deltaVec", "(let (p (deltaVec n 0 a)) (let (q (deltaVec n 0 a)) (tuple ($addAt p 0 a) ($addAt q 1 b))))", false},
	} {
		in, err := typecheck.CheckExpr("test", tc.in, vars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out := ir.FormatExpr(cse(in, lower.Effects{}))
		// Shared: the second let is gone, its uses read the first.
		got := !strings.Contains(out, "(let (q")
		if got != tc.shared {
			t.Errorf("%s: %s became %s (shared: %v, want %v)", tc.name, tc.in, out, got, tc.shared)
		}
	}
}
