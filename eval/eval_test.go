package eval_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/eval"
	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
)

func load(t *testing.T, src string) *ir.Program {
	t.Helper()
	prog, err := driver.LoadSources([]driver.Source{{Name: "t.ks", Text: []byte(src)}}, driver.Typed)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

func lookup(t *testing.T, prog *ir.Program, name string) *ir.Func {
	t.Helper()
	for _, f := range prog.Funcs {
		if f.Name.String() == name {
			return f
		}
	}
	t.Fatalf("no function %s", name)
	return nil
}

// run runs main and returns what it printed and the error.
func run(t *testing.T, src string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := eval.Run(load(t, src), &out)
	return out.String(), err
}

func TestPrint(t *testing.T) {
	out, err := run(t, `
(def main Integer ()
  (let ((v (build 3 (lam (i : Integer) (div (to_float i) 3.0))))
        (m (build (tuple 2 2) (lam (ij : Tuple Integer Integer) (add (get$1$2 ij) (get$2$2 ij))))))
    (print v " " m " " (tuple 1 2.5 true "s") " [" (tuple) "] " (neg 0.0) " " 1e-5 " " (div 1.0 0.0) "|"
           (tuple 7 8) (print "x") "\n")))`)
	if err != nil {
		t.Fatal(err)
	}
	want := "x[0, 0.333333, 0.666667] [[0, 1], [1, 2]] 1,2.5,1,s [] -0 1e-05 inf|7,80\n"
	if out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestCall(t *testing.T) {
	prog := load(t, `
(def f Float ((x : Float) (v : Vec Float)) (mul x (sum v)))
(def g Float (x : Float) (f x (Vec_init 1.0 2.0)))
(def h Integer ((a : Integer) (b : Integer)) (sub (mul a 10) b))`)
	v, err := eval.Call(prog, lookup(t, prog, "f"), 2.0, eval.Vec(1.5, 2.0))
	if err != nil || v != 7.0 {
		t.Errorf("f 2 [1.5, 2] = %v, %v; want 7", v, err)
	}
	v, err = eval.Call(prog, lookup(t, prog, "g"), 0.5)
	if err != nil || v != 1.5 {
		t.Errorf("g 0.5 = %v, %v; want 1.5", v, err)
	}
	v, err = eval.Call(prog, lookup(t, prog, "h"), int64(3), int64(4))
	if err != nil || v != int64(26) {
		t.Errorf("h 3 4 = %v, %v; want 26", v, err)
	}
}

// The program of issue 22 whose optimised code captured a name: the value
// is x*x - x*x = 0.
func TestCapture(t *testing.T) {
	prog := load(t, `
(def f Float ((x : Float) (k : Integer))
  (dot (mul x (constVec 1 x)) (sub (constVec 1 x) (mul x (constVec 1 1.0)))))`)
	v, err := eval.Call(prog, lookup(t, prog, "f"), 1.7, int64(2))
	if err != nil || v != 0.0 {
		t.Errorf("f 1.7 2 = %v, %v; want 0", v, err)
	}
}

// Float sums add in flat order from the first element, so -0.0 stays
// -0.0 and the rounding is that of a left fold.
func TestSumOrder(t *testing.T) {
	out, err := run(t, `
(def main Integer ()
  (let (v (Vec_init 1.0 1e16 -1e16))
    (print (sum v) " " (sumbuild 3 (lam (i : Integer) (index (sub 2 i) v))) " "
           (sum (Vec_init -0.0 -0.0)) " " (dot v v) "\n")))`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0 1 -0 2e+32\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestRuntimeError(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"(def main Integer () (let (u (print \"a\")) (print (index 3 (Vec_init 1.0 2.0)))))", "t.ks:1:50: runtime error: index 3 out of range for size 2"},
		{"(def main Integer () (div 1 (sub 2 2)))", "t.ks:1:22: runtime error: integer division by zero"},
		{"(def main Integer () (print (dot (Vec_init 1.0) (Vec_init 1.0 2.0))))", "t.ks:1:29: runtime error: size mismatch"},
		{"(def main Integer () (assert (gt 1 2) 0))", "t.ks:1:22: runtime error: assertion failed"},
		{"(def f Integer (n : Integer) (f n)) (def main Integer () (f 1))",
			"t.ks:1:6: runtime error: recursion too deep in f: more than 100000 nested calls\n  in f, called from t.ks:1:58"},
		// The chain of calls: g's call of h, main's of g.
		{"(def h Float (v : Vec Float) (index 2 v)) (def g Float (v : Vec Float) (h v)) (def main Integer () (print (g (Vec_init 1.0))))",
			"t.ks:1:30: runtime error: index 2 out of range for size 1\n  in h, called from t.ks:1:72\n  in g, called from t.ks:1:107"},
	} {
		out, err := run(t, c.src)
		var re *ksrt.Error
		if !errors.As(err, &re) || err.Error() != c.want {
			t.Errorf("%s: error %v, want %s", c.src, err, c.want)
		}
		if strings.Contains(c.src, `"a"`) && out != "a" {
			t.Errorf("%s: printed %q before the error, want %q", c.src, out, "a")
		}
	}
}

func TestUnsupported(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"(def f Float (x : Float) (mul x x)) (def main Integer () (print ([rev f] 1.0 1.0)))",
			"t.ks:1:65: the evaluator does not run derived function [rev f]"},
		{"(edef g Float (Float)) (def main Integer () (print (g 1.0)))",
			"t.ks:1:52: the evaluator does not run [g Float]: it is declared by edef and has no definition"},
		{"(deftype L (Tuple Float L)) (def main Integer () (let (x ($dummy L)) 0))",
			"t.ks:1:58: the evaluator has no value of type L for $dummy (a type that contains itself, or a variant)"},
	} {
		_, err := run(t, c.src)
		var u *eval.Unsupported
		if !errors.As(err, &u) || err.Error() != c.want {
			t.Errorf("%s: error %v, want %s", c.src, err, c.want)
		}
	}
}

// TestDummyNamed: ($dummy T) of a named type is the zero of its
// definition (it was an internal error).
func TestDummyNamed(t *testing.T) {
	out, err := run(t, `(deftype P (Tuple Float (Vec Float) Integer))
(def main Integer () (let (x ($dummy P)) (print "ok\n")))`)
	if err != nil || out != "ok\n" {
		t.Errorf("got %q, %v", out, err)
	}
}

func TestMath(t *testing.T) {
	prog := load(t, `(def f Float (x : Float) (add (exp x) (mul (sin x) (pow x 3))))`)
	v, err := eval.Call(prog, lookup(t, prog, "f"), 0.75)
	want := ksrt.Exp(0.75) + ksrt.Sin(0.75)*ksrt.PowI(0.75, 3)
	if err != nil || v != want || math.IsNaN(want) {
		t.Errorf("f 0.75 = %v, %v; want %v", v, err, want)
	}
}
