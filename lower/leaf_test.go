package lower_test

import (
	"testing"

	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestIsLeaf checks which functions are leaves (inlined by the optimiser,
// run again by reverse mode).
func TestIsLeaf(t *testing.T) {
	src := `
(def sigmoid Float (x : Float) (div 1.0 (add 1.0 (exp (neg x)))))
(def twice Float (x : Float) (mul 2.0 (sigmoid x)))
(def total Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (index i v))))
(def noisy Float (x : Float) (let (k (print x)) x))
(def big Float (x : Float)
  (add (add (add (add (add x x) (add x x)) (add (add x x) (add x x)))
            (add (add (add x x) (add x x)) (add (add x x) (add x x))))
       (add (add (add (add x x) (add x x)) (add (add x x) (add x x)))
            (add (add (add x x) (add x x)) (add (add x x) (add x x))))))
`
	f, err := syntax.ParseFile("leaf.ks", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := typecheck.Check([]*syntax.File{f})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"sigmoid": true, "twice": false, "total": false, "noisy": false, "big": false}
	eff := lower.ComputeEffects(prog)
	for _, fn := range prog.Funcs {
		w, ok := want[fn.Name.Base]
		if !ok || fn.Body == nil {
			continue
		}
		if got := lower.IsLeaf(fn, eff); got != w {
			t.Errorf("IsLeaf(%s) = %v, want %v", fn.Name.Base, got, w)
		}
		delete(want, fn.Name.Base)
	}
	for name := range want {
		t.Errorf("no function %s", name)
	}
}
