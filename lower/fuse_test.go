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
		{"one element, in no loop",
			"(let (u (build n (lam (i : Integer) (exp (mul a (to_float i)))))) (add (index 2 u) 1.0))", true},
		{"one element, in a loop over something else (computed per iteration)",
			"(let (u (build n (lam (i : Integer) (exp (mul a (to_float i)))))) (sumbuild n (lam (j : Integer) (index 2 u))))", false},
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

// TestIfFieldsUnused checks that a pattern let of an if whose body reads
// some of the fields makes each branch yield only those (project), so
// that what computed the others is dead, and when it does not.
func TestIfFieldsUnused(t *testing.T) {
	vars := []*ir.Var{
		{Name: "c", T: types.BoolType}, {Name: "a", T: types.FloatType},
		{Name: "p", T: types.TupleOf(types.FloatType, types.FloatType)},
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"tuples written out: the unread field's computation dropped",
			"(let ((x y) (if c (tuple (exp a) 1.0) (let (z (sin a)) (tuple (cos z) (mul a 2.0))))) y)",
			"(if c 1.0 (mul a 2.0))"},
		{"a variable holding the tuple",
			"(let ((x y) (if c p (tuple a a))) (add y 1.0))",
			"(let (y (if c (get$2$2 p) a)) (add y 1.0))"},
		{"both read: unchanged",
			"(let ((x y) (if c (tuple (exp a) 1.0) p)) (add x y))",
			"(let ((x y) (if c (tuple (exp a) 1.0) p)) (add x y))"},
		{"the unread field prints: unchanged",
			"(let ((x y) (if c (tuple (to_float (print a)) 1.0) p)) y)",
			"(let ((x y) (if c (tuple (to_float (print a)) 1.0) p)) y)"},
	} {
		checkSimplified(t, &lower.Simplifier{}, vars, tc.name, tc.in, tc.want)
	}
}

// TestTupleFieldsApart checks that a tuple bound by a let and read only
// by its fields, or taken apart by a pattern, is one let per field, so
// that a field never read is dead (the argument of a callee's reverse
// pass, the tangent of its forward mode), and when it is not.
func TestTupleFieldsApart(t *testing.T) {
	vars := []*ir.Var{
		{Name: "n", T: types.IntegerType}, {Name: "a", T: types.FloatType},
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"read by fields: the unread one dead",
			"(let (v (tuple (mul a a) (build n (lam (i : Integer) a)))) (add (get$1$2 v) 1.0))",
			"(let (v$1 (mul a a)) (add v$1 1.0))"},
		{"atoms taken apart by a pattern: the unread one dead",
			"(let (u (build n (lam (i : Integer) a))) (let (v (tuple a u)) (let ((x w) v) (mul x x))))",
			"(mul a a)"},
		{"read whole: unchanged",
			"(let (v (tuple (mul a a) 1.0)) (tuple v (get$1$2 v)))",
			"(let (v (tuple (mul a a) 1.0)) (tuple v (get$1$2 v)))"},
	} {
		checkSimplified(t, &lower.Simplifier{Names: (&ir.Program{}).Names()}, vars, tc.name, tc.in, tc.want)
	}
}

// checkSimplified requires that s simplifies the expression in, over
// vars, to want (both ks text).
func checkSimplified(t *testing.T, s *lower.Simplifier, vars []*ir.Var, name, in, want string) {
	t.Helper()
	x, err := typecheck.CheckExpr("test", in, vars)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w, err := typecheck.CheckExpr("test", want, vars)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got := ir.FormatExpr(s.Simplify(x)); got != ir.FormatExpr(w) {
		t.Errorf("%s: %s became\n%s, want\n%s", name, in, got, ir.FormatExpr(w))
	}
}
