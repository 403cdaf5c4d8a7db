package lower

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// TestEtaLet checks that a let of a call's value returning its variable,
// or the tuple of its pattern's variables in order, is the call (which is
// then in tail position), and that other lets are not.
func TestEtaLet(t *testing.T) {
	pos := ir.Pos{}
	ab := types.TupleOf(types.FloatType, types.FloatType)
	f := &ir.Func{Name: ir.Name{Base: "f"}, Arg: types.FloatType, Result: ab}
	e := ir.CallFunc(pos, f, ir.Float(pos, 1))
	a := &ir.Var{P: pos, T: types.FloatType, Name: "a"}
	b := &ir.Var{P: pos, T: types.FloatType, Name: "b"}
	x := &ir.Var{P: pos, T: ab, Name: "x"}
	pat := func(body ir.Expr) *ir.Let {
		return &ir.Let{P: pos, Vars: []*ir.Var{a, b}, Pattern: true, Rhs: e, Body: body}
	}
	tests := []struct {
		let  *ir.Let
		want bool
	}{
		{pat(ir.MkTuple(pos, ir.Ref(pos, a), ir.Ref(pos, b))), true},
		{pat(ir.MkTuple(pos, ir.Ref(pos, b), ir.Ref(pos, a))), false},
		{pat(ir.MkTuple(pos, ir.Ref(pos, a), ir.Ref(pos, a))), false},
		{ir.MkLet(pos, x, e, ir.Ref(pos, x)), true},
		{ir.MkLet(pos, x, e, ir.MkGet(pos, 1, ir.Ref(pos, x))), false},
		// Not of a primitive's value (a loop's state stays a pattern).
		{&ir.Let{P: pos, Vars: []*ir.Var{a, b}, Pattern: true, Rhs: ir.MkTuple(pos, ir.Float(pos, 1), ir.Float(pos, 2)),
			Body: ir.MkTuple(pos, ir.Ref(pos, a), ir.Ref(pos, b))}, false},
	}
	for _, tc := range tests {
		if got := etaLet(tc.let); got != tc.want {
			t.Errorf("etaLet(%s) = %v, want %v", ir.FormatExpr(tc.let), got, tc.want)
		}
		s := &Simplifier{}
		out := s.Node(tc.let)
		if (out == ir.Expr(e)) != tc.want && tc.let.Rhs == ir.Expr(e) {
			t.Errorf("simplifying %s gave %s", ir.FormatExpr(tc.let), ir.FormatExpr(out))
		}
	}
}
