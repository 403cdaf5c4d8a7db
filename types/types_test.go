package types

import (
	"strings"
	"testing"
)

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

func TestNamer(t *testing.T) {
	nest := func(d int, leaf *Type) *Type {
		t := leaf
		for i := 0; i < d; i++ {
			t = TupleOf(t)
		}
		return t
	}
	n := NewNamer()
	short := nest(3, FloatType)
	if got := n.Name(short); got != Mangle(short) {
		t.Errorf("Name(%s) = %q, want Mangle's %q", short, got, Mangle(short))
	}
	a, a2, b := nest(200, FloatType), nest(200, FloatType), nest(200, IntegerType)
	na, na2, nb := n.Name(a), n.Name(a2), n.Name(b)
	if len(na) > MaxName || len(nb) > MaxName || !strings.Contains(na, "_h") {
		t.Errorf("names %q, %q longer than %d", na, nb, MaxName)
	}
	if na != na2 {
		t.Errorf("equal types named %q and %q", na, na2)
	}
	if na == nb || na == n.Name(nest(201, FloatType)) {
		t.Errorf("different types share the name %q", na)
	}
	if got := NewNamer().Name(a); got != na {
		t.Errorf("another Namer names %s %q, not %q", a, got, na)
	}
	if s := Brief(a); len(s) > 100 {
		t.Errorf("Brief is %d long", len(s))
	}
}
