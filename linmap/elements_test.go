package linmap

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// TestIndicesDiffer: two elements of one accumulator may both be
// accumulated in place only if their indices are known to differ
// (elemUses.differ). The lets bind the indices; a and b are compared.
func TestIndicesDiffer(t *testing.T) {
	vars := []*ir.Var{{Name: "i", T: types.IntegerType}, {Name: "j", T: types.IntegerType}}
	for _, tc := range []struct {
		lets string
		want bool
	}{
		{"(let (a 0) (let (b 2) 0))", true},
		{"(let (a 1) (let (b 1) 0))", false},
		{"(let (a i) (let (b (add i 1)) 0))", true},
		{"(let (a (add 1 i)) (let (b (add i 1)) 0))", false},
		{"(let (a i) (let (b j) 0))", false},
		// Two lets of one index: the same base, the same offset.
		{"(let (a (mul 2 i)) (let (b (mul 2 i)) 0))", false},
		// LSTM's rows: (mul 2 i) and (add (mul 2 i) 1), the product bound twice.
		{"(let (a (mul 2 i)) (let (t (mul 2 i)) (let (b (add t 1)) 0)))", true},
		{"(let (t (add i 2)) (let (a (sub t 1)) (let (b i) 0)))", true},
		{"(let (t (add i 2)) (let (a (sub t 2)) (let (b i) 0)))", false},
		{"(let (a (mul 2 i)) (let (b (mul 3 i)) 0))", false},
		{"(let (a (mul 2 i)) (let (b (add (mul 2 j) 1)) 0))", false},
	} {
		e, err := typecheck.CheckExpr("t", tc.lets, vars)
		if err != nil {
			t.Fatalf("%s: %v", tc.lets, err)
		}
		u := &elemUses{defs: map[string]ir.Expr{}}
		names := map[string]*ir.Var{}
		ir.Inspect(e, func(x ir.Expr) bool {
			if l, ok := x.(*ir.Let); ok && !l.Pattern && len(l.Vars) == 1 {
				u.defs[l.Vars[0].Name] = l.Rhs
				names[l.Vars[0].Name] = l.Vars[0]
			}
			return true
		})
		a, b := names["a"], names["b"]
		if a == nil || b == nil {
			t.Fatalf("%s: no a or b among %v", tc.lets, u.defs)
		}
		if got := u.differ(ir.Ref(a.P, a), ir.Ref(b.P, b)); got != tc.want {
			t.Errorf("%s: differ(a, b) = %v, want %v", tc.lets, got, tc.want)
		}
	}
}
