package optimise

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestDropCopies checks when drop-copies makes an accumulator started as a
// zero and given y, z = (ts_zero y), w = ($addTo z y), be y itself: only
// when y is owned by the chain (made there from fresh storage, each step
// read once) and read nowhere else, since w is then updated in place.
// The value must not change (the evaluator reads it functionally, so it
// cannot see a wrongly shared vector: the cases that must keep their copy
// are the test of that).
func TestDropCopies(t *testing.T) {
	const fresh = "(build n (lam (i : Integer) (mul a (to_float i))))"
	for _, tc := range []struct {
		name, in string
		dropped  bool
	}{
		{"a fresh build", "(let (y " + fresh + ") (let (z (ts_zero y)) (let (w ($addTo z y)) (sum w))))", true},
		{"a parameter", "(let (z (ts_zero v)) (let (w ($addTo z v)) (sum w)))", false},
		{"read again", "(let (y " + fresh + ") (let (z (ts_zero y)) (let (w ($addTo z y)) (add (sum w) (sum y)))))", false},
		{"the zero read again", "(let (y " + fresh + ") (let (z (ts_zero y)) (let (w ($addTo z y)) (add (sum w) (sum z)))))", false},
		{"an update in place of a fresh zero",
			"(let (y0 (ts_zero v)) (let (y ($addTo y0 v)) (let (z (ts_zero y)) (let (w ($addTo z y)) (sum w)))))", true},
		{"a tuple with a parameter in it",
			"(let (y (tuple v " + fresh + ")) (let (z (ts_zero y)) (let (w ($addTo z y)) (sum (get$1$2 w)))))", false},
		{"a tuple of fresh values",
			"(let (p " + fresh + ") (let (q " + fresh + ") (let (y (tuple p q)) (let (z (ts_zero y)) (let (w ($addTo z y)) (sum (get$1$2 w)))))))", true},
		{"a part of a fresh tuple",
			"(let (p " + fresh + ") (let (q " + fresh + ") (let ((y r) (tuple p q)) (let (z (ts_zero y)) (let (w ($addTo z y)) (add (sum w) (sum r)))))))", true},
		{"a vector repeated", "(let (y (constVec n v)) (let (z (ts_zero y)) (let (w ($addTo z y)) (sum (index 0 w)))))", false},
		{"rows of a parameter", "(let (y (build n (lam (i : Integer) v))) (let (z (ts_zero y)) (let (w ($addTo z y)) (sum (index 0 w)))))", false},
		{"made outside the loop", "(let (y " + fresh + ") (sumbuild n (lam (i : Integer) (let (z (ts_zero y)) (let (w ($addTo z y)) (index i w))))))", false},
	} {
		e, err := typecheck.CheckExpr("test", tc.in, tapeVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := evalExpr(t, e)
		f := &ir.Func{Name: ir.Name{Base: "f"}, Params: tapeVars, Result: e.Type(), Body: e}
		if err := dropCopies(&Context{Prog: &ir.Program{Funcs: []*ir.Func{f}}}); err != nil {
			t.Fatal(err)
		}
		text := ir.FormatExpr(f.Body)
		if got := evalExpr(t, f.Body); got != want {
			t.Errorf("%s: value %v became %v in %s", tc.name, want, got, text)
		}
		if dropped := strings.Count(text, "ts_zero") < strings.Count(tc.in, "ts_zero"); dropped != tc.dropped {
			t.Errorf("%s: copy dropped %v, want %v: %s", tc.name, dropped, tc.dropped, text)
		}
	}
}
