package optimise

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestSmallVectors checks when a small vector is kept as its elements: a
// vector of a constant count of at most smallVecMax, read at constant
// indices, by a build or fold over its size, or updated in place at a
// constant index; and that the value keeps its bits (n = 4, v has 4
// elements). Kept whole: a vector passed to a primitive that reads it all,
// one of more elements, of a size known only at run time, or of vectors.
func TestSmallVectors(t *testing.T) {
	const w3 = "(build 3 (lam (i : Integer) (mul a (to_float (add i 1)))))"
	for _, tc := range []struct {
		name, in string
		applies  bool
	}{
		{"a build read at constants", "(let (w " + w3 + ") (add (index 0 w) (index 2 w)))", true},
		{"a Vec_init read at constants", "(let (w (Vec_init a b (index 1 v))) (mul (index 2 w) (index 0 w)))", true},
		{"a build over its size", "(let (w (Vec_init a b 1.0)) (let (z (build (size w) (lam (i : Integer) (mul 2.0 (index i w))))) (sub (index 1 z) (index 2 z))))", true},
		{"updated in place", "(let (w (constVec 3 0.0)) (let (w2 ($addAt w 1 a)) (let (w3 ($setAt w2 2 b)) (add (index 1 w3) (index 2 w3)))))", true},
		{"a fold of three steps", "(index 0 ($ifold 3 (constVec 2 a) (lam (s_i : Tuple (Vec Float) Integer) (let ((s i) s_i) ($addAt s 0 (mul (index 0 s) (to_float (add i 2))))))))", true},
		{"a reverse fold", "(index 1 ($ifoldr 3 (Vec_init a b) (lam (s_i : Tuple (Vec Float) Integer) (let ((s i) s_i) ($setAt s 1 (sub (index 1 s) (to_float i)))))))", true},
		{"an if of two small vectors", "(let (w (if (gt a b) (Vec_init a b) (let (c (mul a b)) (Vec_init c a)))) (sub (index 0 w) (index 1 w)))", true},
		{"an if of tuples holding one", "(let ((w x) (if (gt a b) (tuple (Vec_init a b) 1.0) (tuple (Vec_init b a) 2.0))) (mul x (index 1 w)))", true},
		{"an if of a record and a variant holding one", "(let ((x c) (if (gt a b) (tuple a ($inl (tuple (Vec_init a b) 3) ($dummy (Tuple Integer)))) (tuple b ($inr ($dummy (Tuple (Vec Float) Integer)) (tuple 2))))) (if ($isl c) (let ((w k) ($outl c)) (add (index 1 w) (to_float k))) (let ((k) ($outr c)) (mul x (to_float k)))))", true},
		{"an element named as the vector it makes (shadowed there: kept)", "(let (a (Vec_init b a)) (sub (index 1 a) (index 0 a)))", false},
		{"read at an index known at run time", "(let (w " + w3 + ") (index (sub n 2) w))", false},
		{"read whole", "(let (w " + w3 + ") (sum w))", false},
		{"a size known at run time", "(let (w (build n (lam (i : Integer) (to_float i)))) (index 0 w))", false},
		{"more elements", "(let (w (build 5 (lam (i : Integer) (mul a (to_float i))))) (index 4 w))", false},
		{"a vector of vectors", "(let (w (build 2 (lam (i : Integer) (Vec_init a (to_float i))))) (index 1 (index 1 w)))", false},
	} {
		_, text := passKeepsValue(t, tc.name, tc.in, smallVectors)
		applies := true
		for _, made := range []string{"Vec_init", "(build ", "constVec", "$ifold"} {
			if strings.Contains(text, made) {
				applies = false
			}
		}
		if applies != tc.applies {
			t.Errorf("%s: no vector left %v, want %v: %s", tc.name, applies, tc.applies, text)
		}
	}
}

// TestSmallVectorsInline checks which calls small-vectors inlines: of a
// function that returns a small vector, or is given one, or runs no loop
// and calls only such functions; not of one that runs a loop over a size
// known at run time and is given no small vector.
func TestSmallVectorsInline(t *testing.T) {
	src := `
(def pair (Vec Float) ((x : Float) (y : Float)) (Vec_init x y))
(def first Float (p : Vec Float) (index 0 p))
(def total Float (p : Vec Float) (sumbuild (size p) (lam (i : Integer) (index i p))))
(def outer Float (p : Vec Float) (first p))
(def f Float ((a : Float) (v : Vec Float))
  (add (add (first (pair a 2.0)) (outer v)) (add (total v) (total (pair a a)))))
`
	file, err := syntax.ParseFile("test.ks", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := typecheck.Check([]*syntax.File{file})
	if err != nil {
		t.Fatal(err)
	}
	if err := smallVectors(&Context{Prog: prog}); err != nil {
		t.Fatal(err)
	}
	var f *ir.Func
	for _, g := range prog.Funcs {
		if g.Name.Base == "f" {
			f = g
		}
	}
	var called []string
	for _, g := range ir.Funcs(f.Body) {
		called = append(called, g.Name.Base)
	}
	// first and outer are inlined (no loop), pair (returns a small vector),
	// total where it is given pair's vector; total of v stays a call.
	if got := strings.Join(called, " "); got != "total" {
		t.Errorf("f calls %q after the pass, want only total (of v): %s", got, ir.FormatExpr(f.Body))
	}
}
