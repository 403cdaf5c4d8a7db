package optimise

import (
	"regexp"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
)

// loopRE matches the start of a build or sumbuild as ir.FormatExpr prints it.
var loopRE = regexp.MustCompile(`\((sum)?build\s`)

// TestUnswitchLoops checks which loops unswitch splits on a test of a
// Bool bound outside them (c is true here, d false), how many loops it
// makes, and that the value does not change.
func TestUnswitchLoops(t *testing.T) {
	const cd = "(let ((c (gt a 0.3)) (d (lt a 0.3))) "
	for _, tc := range []struct {
		name, in string
		loops    int // builds and sumbuilds in the result
	}{
		{"a sumbuild testing c", cd + "(sumbuild n (lam (i : Integer) (if c (to_float i) (index i v)))))", 2},
		{"a build testing d", cd + "(sum (build n (lam (i : Integer) (if d (to_float i) (mul a (index i v)))))))", 2},
		{"two tests", cd + "(sumbuild n (lam (i : Integer) (add (if c (to_float i) a) (if d b (index i v))))))", 4},
		{"a test inside an inner loop", cd + "(sumbuild n (lam (i : Integer) (sumbuild (add i 1) (lam (j : Integer) (if c (to_float j) b))))))", 4},
		{"a test of a variable bound in the loop", cd + "(sumbuild n (lam (i : Integer) (let (e (gt (to_float i) a)) (if e a b)))))", 1},
		{"a test of the variable shadowed in the loop", cd + "(sumbuild n (lam (i : Integer) (let (c (gt (to_float i) a)) (if c a b)))))", 1},
		{"a test not of a variable", cd + "(sumbuild n (lam (i : Integer) (if (gt (to_float i) a) a b))))", 1},
		{"a loop of a constant count of a few", cd + "(sumbuild 3 (lam (i : Integer) (if c (to_float i) (index i v)))))", 1},
		{"a loop of a constant count of many", cd + "(sumbuild 40 (lam (i : Integer) (if c (to_float i) (index (sub i (mul 4 (div i 4))) v)))))", 2},
		{"the variable read but not tested", cd + "(sumbuild n (lam (i : Integer) (let (e (and c (gt (to_float i) a))) (if e a b)))))", 1},
	} {
		_, text := passKeepsValue(t, tc.name, tc.in, unswitchLoops)
		if loops := len(loopRE.FindAllString(text, -1)); loops != tc.loops {
			t.Errorf("%s: %d loops, want %d: %s", tc.name, loops, tc.loops, text)
		}
	}
}

// TestUnswitchBudget: a loop whose body is larger than unswitchBudget
// keeps its test.
func TestUnswitchBudget(t *testing.T) {
	sum := "(index i v)"
	for k := 0; k < unswitchBudget/2; k++ {
		sum = "(add " + sum + " a)"
	}
	in := "(let (c (gt a 0.3)) (sumbuild n (lam (i : Integer) (if c " + sum + " b))))"
	e, err := typecheck.CheckExpr("test", in, tapeVars)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := runPass(t, e, unswitchLoops)
	if text := ir.FormatExpr(f.Body); len(loopRE.FindAllString(text, -1)) != 1 {
		t.Errorf("a body of %d nodes was unswitched", ir.Size(e))
	}
}
