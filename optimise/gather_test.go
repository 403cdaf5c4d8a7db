package optimise

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/eval"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestGatherElements checks when gather computes the elements of a
// vector where one loop reads them: only for a vector of a size known at
// run time (n = 4 here), read only by index, in one loop whose count can
// be evaluated before the vector is made; and that the value does not
// change, whichever way the test (reads <= n) goes at run time.
func TestGatherElements(t *testing.T) {
	const w = "(build n (lam (i : Integer) (mul a (to_float i))))"
	for _, tc := range []struct {
		name, in string
		applies  bool
	}{
		{"a gather of 2 of 4", "(let (w " + w + ") (sumbuild 2 (lam (j : Integer) (index (sub 3 j) w))))", true},
		{"a gather of 12 of 4 (made as before)", "(let (w " + w + ") (sumbuild (mul 3 n) (lam (j : Integer) (index (div j 3) w))))", true},
		{"two reads in the loop", "(let (w " + w + ") (sumbuild 2 (lam (j : Integer) (add (index j w) (index (add j 1) w)))))", true},
		{"a call of no argument in the loop", "(let (w " + w + ") (sumbuild 2 (lam (j : Integer) (mul (pi) (index (sub 3 j) w)))))", true},
		{"in a build", "(let (w " + w + ") (sum (build 3 (lam (j : Integer) (mul (index (sub 3 j) w) b)))))", true},
		{"read outside the loop too", "(let (w " + w + ") (add (index 1 w) (sumbuild 2 (lam (j : Integer) (index j w)))))", false},
		{"read whole", "(let (w " + w + ") (add (sum w) (sumbuild 2 (lam (j : Integer) (index j w)))))", false},
		{"read in two loops", "(let (w " + w + ") (add (sumbuild 2 (lam (j : Integer) (index j w))) (sumbuild 2 (lam (j : Integer) (index j w)))))", false},
		{"read in an inner loop", "(let (w " + w + ") (sumbuild 2 (lam (j : Integer) (sumbuild 2 (lam (l : Integer) (index (add j l) w))))))", false},
		{"a count bound after the vector", "(let (w " + w + ") (let (m (sub n 2)) (sumbuild m (lam (j : Integer) (index j w)))))", true},
		{"a count read from the vector", "(let (w " + w + ") (let (m (sub (size w) 2)) (sumbuild m (lam (j : Integer) (index j w)))))", false},
		{"a count bound in the loop's body", "(let (w " + w + ") (sumbuild 2 (lam (j : Integer) (let (m (add j 1)) (sumbuild m (lam (l : Integer) (index l w)))))))", false},
		{"a fixed size", "(let (w (build 4 (lam (i : Integer) (mul a (to_float i))))) (sumbuild 2 (lam (j : Integer) (index j w))))", false},
		{"a variable of the element bound again", "(let (w " + w + ") (let (a 2.0) (sumbuild 2 (lam (j : Integer) (mul a (index j w))))))", false},
		{"the vector's name bound again", "(let (w " + w + ") (sumbuild 2 (lam (j : Integer) (let (w (build 2 (lam (i : Integer) b))) (index (sub 1 j) w)))))", false},
		{"an index reading the vector", "(let (w " + w + ") (sumbuild 2 (lam (j : Integer) (index (if (gt (index 0 w) 1.0) 1 0) w))))", false},
	} {
		_, text := passKeepsValue(t, tc.name, tc.in, gatherElements)
		if applies := strings.Contains(text, "ondemand"); applies != tc.applies {
			t.Errorf("%s: rewritten %v, want %v: %s", tc.name, applies, tc.applies, text)
		}
	}
}

// TestGatherKeepsIndexErrors: an element computed where it is read is
// checked as the read was, so a read out of the vector's range still
// fails at the read's position with the read's message ($checkIndex),
// rather than computing the element at an index the vector does not have.
func TestGatherKeepsIndexErrors(t *testing.T) {
	in := "(let (w (build n (lam (i : Integer) (to_float i)))) (sumbuild 2 (lam (j : Integer) (index (add j 3) w))))"
	e, err := typecheck.CheckExpr("test", in, tapeVars)
	if err != nil {
		t.Fatal(err)
	}
	f, prog := runPass(t, e, gatherElements)
	text := ir.FormatExpr(f.Body)
	if !strings.Contains(text, "ondemand") {
		t.Fatalf("not rewritten: %s", text)
	}
	_, err = eval.Call(prog, f, int64(4), 0.5, 0.25, eval.Vec(0.1, 0.2, 0.3, 0.4), eval.Vec(1.0, 2.0, 3.0))
	if err == nil || !strings.Contains(err.Error(), "test:1:84") || !strings.Contains(err.Error(), "index 4 out of range for size 4") {
		t.Errorf("reading element 4 of 4: %v, want index 4 out of range for size 4 at test:1:84, the read's own error\n%s", err, text)
	}
}

// runPass runs pass on a program of one function of tapeVars whose body
// is e.
func runPass(t *testing.T, e ir.Expr, pass func(*Context) error) (*ir.Func, *ir.Program) {
	t.Helper()
	args := make([]ir.Expr, len(tapeVars))
	for k, v := range tapeVars {
		args[k] = v
	}
	f := &ir.Func{Name: ir.Name{Base: "f"}, Params: tapeVars, Arg: ir.ArgType(args), Result: e.Type(), Body: e}
	prog := &ir.Program{Funcs: []*ir.Func{f}}
	if err := pass(&Context{Prog: prog}); err != nil {
		t.Fatal(err)
	}
	return f, prog
}

// passKeepsValue runs pass on a function whose body is the expression in
// (of tapeVars), checks the IR and that the value (evalExpr) is the same
// after, and returns the body as written and as rewritten.
func passKeepsValue(t *testing.T, name, in string, pass func(*Context) error) (before, after string) {
	t.Helper()
	e, err := typecheck.CheckExpr("test", in, tapeVars)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want := evalExpr(t, e)
	before = ir.FormatExpr(e)
	f, prog := runPass(t, e, pass)
	if err := ir.Check(prog); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	after = ir.FormatExpr(f.Body)
	if got := evalExpr(t, f.Body); got != want {
		t.Errorf("%s: value %v became %v in %s", name, want, got, after)
	}
	return before, after
}
