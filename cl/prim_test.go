package cl

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// TestCLEvalPrimitives checks that the evaluator runs every primitive of
// the table but the linear-map operations.
func TestCLEvalPrimitives(t *testing.T) {
	m := NewMachine(nil)
	for _, p := range ir.Prims() {
		if p.LM || p.Def != "" {
			continue
		}
		if len(p.Lams) > 0 {
			if combinator(&Comb{Prim: p, T: types.FloatType}) == nil {
				t.Errorf("the evaluator has no combinator %s", p.Name)
			}
			continue
		}
		if m.operation(p, Pos{}, types.FloatType, types.FloatType) == nil {
			t.Errorf("the evaluator has no primitive %s", p.Name)
		}
	}
}

// TestCLCheckValue checks the check of values against types.
func TestCLCheckValue(t *testing.T) {
	F, I := types.FloatType, types.IntegerType
	good := []struct {
		v Value
		t *types.Type
	}{
		{1.5, F},
		{int64(2), I},
		{TupleValue{}, types.Unit},
		{TupleValue{1.5, int64(2)}, types.TupleOf(F, I)},
		{Vec(1.0, 2.0), types.VecOf(F)},
		{&Tensor{Shape: []int64{2, 1}, Elems: []Value{int64(1), int64(2)}}, types.TensorOf(2, I)},
		{Variant{V: 1.0}, types.VariantOf(I, F)},
	}
	for _, g := range good {
		if err := checkValue(g.v, g.t); err != nil {
			t.Errorf("checkValue(%s, %s): %v", describe(g.v), g.t, err)
		}
	}
	bad := []struct {
		v Value
		t *types.Type
	}{
		{int64(1), F},
		{TupleValue{1.5}, types.TupleOf(F, I)},
		{TupleValue{1.5, 2.5}, types.TupleOf(F, I)},
		{Vec(1.0), types.TensorOf(2, F)},
		{&Tensor{Shape: []int64{3}, Elems: []Value{1.0}}, types.VecOf(F)},
		{Vec(int64(1)), types.VecOf(F)},
		{Variant{Left: true, V: 1.0}, types.VariantOf(I, F)},
		{nil, F},
		{1.0, types.LamOf(F, F)},
	}
	for _, b := range bad {
		if err := checkValue(b.v, b.t); err == nil {
			t.Errorf("checkValue(%s, %s) succeeds", describe(b.v), b.t)
		}
	}
}
