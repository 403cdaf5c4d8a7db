package optimise

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/eval"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// TestTapeLoops checks when tape-loops makes a build record a value that a
// later loop over the same range computes again, and that the rewritten
// expression has the original's value. The loop is written the way derived
// code writes a reverse loop, (let (r ($ifoldr n init (lam si (let ((st j)
// si) ...)))) ...), or is a build (as split reverse mode's record is).
func TestTapeLoops(t *testing.T) {
	const build = "(let (w (build n (lam (j : Integer) (let (x (exp (index j v))) (mul x 2.0))))) "
	loop := func(body string) string {
		return "(let (r ($ifoldr n 0.0 (lam (si : (Tuple Float Integer)) (let ((st j2) si) " + body + ")))) r)"
	}
	for _, tc := range []struct {
		name, in string
		taped    bool
	}{
		{"the loop computes the build's value again",
			build + loop("(let (y (exp (index j2 v))) (add st (mul y (index j2 w))))"), true},
		{"the loop's value differs",
			build + loop("(let (y (exp (add (index j2 v) 1.0))) (add st (mul y (index j2 w))))"), false},
		{"another range",
			build + loop("(let (y (exp (index j2 v))) (add st (mul y (index j2 w))))"), false},
		{"cheaper to compute again",
			"(let (w (build n (lam (j : Integer) (let (x (mul (index j v) 3.0)) (mul x 2.0))))) " +
				loop("(let (y (mul (index j2 v) 3.0)) (add st (mul y (index j2 w))))"), false},
		{"the value reads the loop's state",
			"(let (w (build n (lam (j : Integer) (let (x (exp a)) (mul x 2.0))))) " +
				loop("(let (y (exp st)) (add st (mul y (index j2 w))))"), false},
		{"a variable rebound between the build and the loop",
			build + "(let (v (build n (lam (k : Integer) 1.0))) " +
				loop("(let (y (exp (index j2 v))) (add st (mul y (index j2 w))))"), false},
		{"a name each loop binds for itself",
			"(let (w (build n (lam (j : Integer) (let (c (index j v)) (let (x (exp b)) (mul x c)))))) " +
				loop("(let (b (index j2 v)) (let (y (exp b)) (add st (mul y (index j2 w)))))"), false},
		{"a chain of paired values",
			"(let (w (build n (lam (j : Integer) (let (c (index j v)) (let (x (exp c)) (let (z (log (add x 1.0))) (mul z c))))))) " +
				loop("(let (c2 (index j2 v)) (let (y (exp c2)) (let (z2 (log (add y 1.0))) (add st (mul z2 (index j2 w))))))"), true},
		{"a fold's steps",
			"(let (T ($foldtape (lam (p : (Tuple Float Float)) (let ((s x) p) (let (y (exp (mul s x))) (add s y)))) 0.5 v)) " +
				"(let (r ($ifoldr (size v) 0.0 (lam (si : (Tuple Float Integer)) (let ((st j2) si) (let (a (index j2 T)) " +
				"(let (e (index j2 v)) (let (p2 (tuple a e)) (let ((s2 x2) p2) (let (y2 (exp (mul s2 x2))) (add st y2)))))))))) r", true},
		{"a fold's steps, other elements",
			"(let (T ($foldtape (lam (p : (Tuple Float Float)) (let ((s x) p) (let (y (exp (mul s x))) (add s y)))) 0.5 v)) " +
				"(let (r ($ifoldr (size v) 0.0 (lam (si : (Tuple Float Integer)) (let ((st j2) si) (let (a (index j2 T)) " +
				"(let (e (index (sub 3 j2) v)) (let (p2 (tuple a e)) (let ((s2 x2) p2) (let (y2 (exp (mul s2 x2))) (add st y2)))))))))) r", false},
		{"a fold's steps, the parameter taken apart by get, the loop reading the tape directly",
			"(let (T ($foldtape (lam (p : (Tuple Float Float)) (let (s (get$1$2 p)) (let (x (get$2$2 p)) (let (y (exp (mul s x))) (add s y))))) 0.5 v)) " +
				"(let (r ($ifoldr (size v) 0.0 (lam (si : (Tuple Float Integer)) (let ((st j2) si) (let (a (index j2 T)) " +
				"(let (e (index j2 v)) (let (y2 (exp (mul a e))) (add st y2)))))))) r", true},
		{"a value the same at every index",
			"(let (w (build n (lam (j : Integer) (let (x (exp a)) (mul x (index j v)))))) " +
				loop("(let (y (exp a)) (add st (mul y (index j2 w))))"), false},
		{"a sumbuild",
			"(let (w (sumbuild n (lam (j : Integer) (let (x (exp (index j v))) (mul x 2.0))))) " +
				loop("(let (y (exp (index j2 v))) (add st (mul y w)))"), true},
		{"a pair taken apart by a pattern",
			"(let (w (build n (lam (j : Integer) (let ((x c) (tuple (exp (index j v)) (cos (index j v)))) (mul x c))))) " +
				loop("(let ((y d) (tuple (exp (index j2 v)) (cos (index j2 v)))) (add st (mul (mul y d) (index j2 w))))"), true},
		{"a sumbuild of pairs taken apart by a pattern",
			"(let ((w dw) (sumbuild n (lam (j : Integer) (let (x (exp (index j v))) (tuple x (mul x 2.0)))))) " +
				loop("(let (y (exp (index j2 v))) (add st (mul y (add w dw))))"), true},
		{"a later build",
			build + "(let (w2 (build n (lam (j2 : Integer) (let (y (exp (index j2 v))) (mul y 3.0))))) (add (sum w) (sum w2)))", true},
	} {
		// The cases leave their outer lets open.
		in := tc.in + strings.Repeat(")", strings.Count(tc.in, "(")-strings.Count(tc.in, ")"))
		if tc.name == "another range" {
			in = strings.Replace(in, "($ifoldr n", "($ifoldr (size u)", 1)
		}
		e, err := typecheck.CheckExpr("test", in, tapeVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := evalExpr(t, e)
		tp := &taper{eff: lower.Effects{}, ns: &ir.Names{}}
		out := tp.expr(e)
		got := evalExpr(t, out)
		if got != want {
			t.Errorf("%s: value %v became %v in %s", tc.name, want, got, ir.FormatExpr(out))
		}
		text := ir.FormatExpr(out)
		if taped := strings.Contains(text, "(let (tape") || strings.Contains(text, "$foldrec"); taped != tc.taped {
			t.Errorf("%s: taped %v, want %v: %s", tc.name, taped, tc.taped, text)
		}
	}
}

// TestTapeLoopsElement: a loop computing again a build's or sumbuild's
// element itself (the end of the iteration's chain, not a let) reads it
// instead: from the build's value, or from a tape of the summands (lse's
// gradient ran exp twice per element). The value is kept, and exp is
// computed at one place.
func TestTapeLoopsElement(t *testing.T) {
	loop := "(let (r ($ifoldr n 0.0 (lam (si : (Tuple Float Integer)) (let ((st j2) si) " +
		"(let (y (exp (index j2 v))) (add st (mul y %s))))))) r))"
	for _, tc := range []struct{ name, source, use string }{
		{"a build's element", "(let (w (build n (lam (j : Integer) (exp (index j v))))) ", "(index j2 w)"},
		{"a sumbuild's summand", "(let (w (sumbuild n (lam (j : Integer) (exp (index j v))))) ", "w"},
	} {
		in := tc.source + strings.Replace(loop, "%s", tc.use, 1)
		e, err := typecheck.CheckExpr("test", in, tapeVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := evalExpr(t, e)
		out := (&taper{eff: lower.Effects{}, ns: &ir.Names{}}).expr(e)
		text := ir.FormatExpr(out)
		if got := evalExpr(t, out); got != want {
			t.Errorf("%s: value %v became %v in %s", tc.name, want, got, text)
		}
		if n := strings.Count(text, "(exp "); n != 1 {
			t.Errorf("%s: exp at %d places, want 1: %s", tc.name, n, text)
		}
	}
}

var tapeVars = []*ir.Var{
	{Name: "n", T: types.IntegerType}, {Name: "a", T: types.FloatType}, {Name: "b", T: types.FloatType},
	{Name: "v", T: tVF}, {Name: "u", T: tVF},
}

// evalExpr evaluates e, a Float, with n = 4 and fixed values for the rest.
func evalExpr(t *testing.T, e ir.Expr) float64 {
	t.Helper()
	f := &ir.Func{Name: ir.Name{Base: "f"}, Params: tapeVars, Result: e.Type(), Body: e}
	v, err := eval.Call(&ir.Program{Funcs: []*ir.Func{f}}, f,
		int64(4), 0.5, 0.25, eval.Vec(0.1, 0.2, 0.3, 0.4), eval.Vec(1.0, 2.0, 3.0))
	if err != nil {
		t.Fatalf("%s: %v", ir.FormatExpr(e), err)
	}
	return v.(float64)
}
