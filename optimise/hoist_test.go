package optimise

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestHoist checks what the hoister moves out of a loop over k (the
// sweeps of a Jacobian): the exp each case computes alike for every k
// moves in front of the loop, unless the case says it cannot, and the
// value is the same.
func TestHoist(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		moved      bool
	}{
		{"a let", "(let (x (exp a)) (mul x (to_float k)))", true},
		{"part of an expression", "(mul (exp a) (to_float k))", true},
		{"an inner loop's alike part", "(sumbuild n (lam (i : Integer) (mul (exp (index i v)) (to_float k))))", true},
		{"a branch's alike part", "(if (gt a 0.0) (mul (exp a) (to_float k)) (to_float k))", true},
		{"a field of a sum of pairs",
			"(let ((p q) (sumbuild n (lam (i : Integer) (tuple (exp (index i v)) (mul (to_float k) (index i v)))))) (add p q))", true},
		{"a field of a vector of pairs",
			"(let (t (build n (lam (i : Integer) (tuple (exp (index i v)) (to_float (add k i)))))) " +
				"(sum (build n (lam (j : Integer) (mul (get$1$2 (index j t)) (get$2$2 (index j t)))))))", true},
		{"a vector of pairs used whole",
			"(let (t (build n (lam (i : Integer) (tuple (exp (index i v)) (to_float (add k i)))))) " +
				"(let (u (index 1 t)) (mul (get$1$2 u) (get$2$2 u))))", true},
		{"a field of an if",
			"(let (e (if (gt a b) (tuple (exp a) (to_float k)) (tuple b (mul a (to_float k))))) (add (get$1$2 e) (get$2$2 e)))", true},
		{"a branch on k", "(if (gt (to_float k) 1.0) (exp a) 0.0)", false},
		{"an inner loop over a range that depends on k", "(sumbuild (add k 1) (lam (i : Integer) (exp (index i v))))", false},
	} {
		in := "(sum (build n (lam (k : Integer) " + tc.body + ")))"
		e, err := typecheck.CheckExpr("test", in, tapeVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := evalExpr(t, e)
		out := hoistK(e)
		text := ir.FormatExpr(out)
		if got := evalExpr(t, out); got != want {
			t.Errorf("%s: value %v became %v in %s", tc.name, want, got, text)
		}
		// The loop over k is the tail of the chain in front of it.
		_, loop := ir.ChainItems(out.(*ir.Call).Args[0])
		inside := strings.Contains(ir.FormatExpr(loop), "(exp ")
		if inside == tc.moved {
			t.Errorf("%s: exp moved out %v, want %v: %s", tc.name, !inside, tc.moved, text)
		}
	}
}

// TestHoistKeepsFreshZeros: a fresh zero that does not depend on k stays
// in the loop, whether let-bound, in a tuple or an argument: derived code
// updates it in place ($addAt), so one made before the loop would carry
// each iteration's additions into the next (the rows of a Jacobian,
// swept by reverse passes, came out summed when they were hoisted).
func TestHoistKeepsFreshZeros(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"a let", "(let (acc (constVec n 0.0)) (index 0 ($addAt acc 0 (to_float k))))"},
		{"a tuple", "(let ((acc e) (tuple (constVec n 0.0) (exp a))) (mul e (index 0 ($addAt acc 0 (to_float k)))))"},
		{"an argument", "(index 0 ($addAt (constVec n 0.0) 0 (to_float k)))"},
	} {
		in := "(sum (build n (lam (k : Integer) " + tc.body + ")))"
		e, err := typecheck.CheckExpr("test", in, tapeVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out := hoistK(e)
		_, loop := ir.ChainItems(out.(*ir.Call).Args[0])
		if !strings.Contains(ir.FormatExpr(loop), "constVec") {
			t.Errorf("%s: the zero moved out of the loop: %s", tc.name, ir.FormatExpr(out))
		}
	}
}

// hoistK runs the hoister on e's loop over k.
func hoistK(e ir.Expr) ir.Expr {
	h := &hoister{ns: &ir.Names{}, eff: lower.Effects{}}
	return ir.Map(e, func(x ir.Expr) ir.Expr {
		if c, ok := x.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == "build" {
			if lam, ok := c.Args[1].(*ir.Lam); ok && lam.Param.Name == "k" {
				return h.loop(c)
			}
		}
		return x
	})
}
