package types

import "testing"

var (
	vf  = VecOf(FloatType)
	vvf = VecOf(vf)
	m2  = TensorOf(2, FloatType)
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		t    *Type
		want string
	}{
		{FloatType, "Float"},
		{Unit, "(Tuple)"},
		{vf, "(Vec Float)"},
		{m2, "(Tensor 2 Float)"},
		{TupleOf(IntegerType, vvf), "(Tuple Integer (Vec (Vec Float)))"},
		{LamOf(IntegerType, FloatType), "(Lam Integer Float)"},
		{LMOf(vf, FloatType), "(LM (Vec Float) Float)"},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}

func TestTangent(t *testing.T) {
	for _, tc := range []struct{ t, want *Type }{
		{FloatType, FloatType},
		{IntegerType, Unit},
		{BoolType, Unit},
		{StringType, Unit},
		{VecOf(IntegerType), VecOf(Unit)},
		{TupleOf(FloatType, IntegerType, vf), TupleOf(FloatType, Unit, vf)},
		{m2, m2},
	} {
		got, ok := Tangent(tc.t)
		if !ok || !got.Equal(tc.want) {
			t.Errorf("Tangent(%s) = %s, want %s", tc.t, got, tc.want)
		}
	}
	if _, ok := Tangent(LamOf(FloatType, FloatType)); ok {
		t.Error("a Lam has no tangent type")
	}
}

func TestShape(t *testing.T) {
	for _, tc := range []struct{ t, want *Type }{
		{FloatType, Unit},
		{TupleOf(FloatType, IntegerType), Unit},
		{vf, IntegerType},
		{m2, TupleOf(IntegerType, IntegerType)},
		{vvf, VecOf(IntegerType)},
		{VecOf(TupleOf(FloatType, FloatType)), IntegerType},
		// The example of language.md section 5.
		{TupleOf(vf, IntegerType), TupleOf(IntegerType, Unit)},
	} {
		got, ok := Shape(tc.t)
		if !ok || !got.Equal(tc.want) {
			t.Errorf("Shape(%s) = %s, want %s", tc.t, got, tc.want)
		}
	}
}

func TestMangleIsInjective(t *testing.T) {
	all := []*Type{FloatType, IntegerType, BoolType, StringType, Unit, vf, vvf, m2,
		TupleOf(FloatType), TupleOf(FloatType, FloatType), TupleOf(TupleOf(FloatType), FloatType),
		TupleOf(FloatType, TupleOf(FloatType)), VecOf(TupleOf(FloatType, IntegerType)),
		TupleOf(VecOf(FloatType), IntegerType), TensorOf(3, vf)}
	seen := map[string]*Type{}
	for _, x := range all {
		m := Mangle(x)
		if y, ok := seen[m]; ok {
			t.Errorf("%s and %s both mangle to %s", x, y, m)
		}
		seen[m] = x
	}
}

func TestIndexRank(t *testing.T) {
	for _, tc := range []struct {
		t    *Type
		want int
	}{
		{IntegerType, 1},
		{TupleOf(IntegerType, IntegerType), 2},
		{TupleOf(IntegerType), 0},
		{FloatType, 0},
		{TupleOf(IntegerType, FloatType), 0},
	} {
		if got := IndexRank(tc.t); got != tc.want {
			t.Errorf("IndexRank(%s) = %d, want %d", tc.t, got, tc.want)
		}
	}
}
