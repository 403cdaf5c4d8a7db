package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzCompile checks that no input makes the compiler panic: whatever
// parses and type-checks is derived, optimised with the IR checker after
// every pass, and emitted as C and Go, and every failure is an error with
// a position, never an internal compiler error.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"(def f Float (x : Float) (mul x (sin x))) (gdef rev [f Float]) (gdef fwd [f Float])",
		"(def f Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (index i v)))) (gdef rev [f (Vec Float)])",
		"(def f Float ((v : Vec Float) (n : Integer)) (if (gt n 0) (f v (sub n 1)) (sum v))) (gdef rev [f (Tuple (Vec Float) Integer)])",
		"(def f Float (v : Vec Float) (fold (lam (a_x : Tuple Float Float) (let ((a x) a_x) (mul a x))) 1.0 v)) (gdef fwd [f (Vec Float)]) (gdef rev [f (Vec Float)])",
		"(def main Integer () (print 1.0 \"\\n\"))",
	} {
		f.Add([]byte(s))
	}
	for _, dir := range []string{"programs", "ad", "golden"} {
		files, _ := filepath.Glob(filepath.Join("..", "tests", "testdata", dir, "*.ks"))
		for _, file := range files {
			if src, err := os.ReadFile(file); err == nil {
				f.Add(src)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			compileAll(t, src)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("compiling took more than 10 s:\n%s", src)
		}
	})
}

// compileAll runs the whole compiler on src, failing the test on a panic.
func compileAll(t *testing.T, src []byte) {
	{
		prog, err := LoadSources([]Source{{Name: "fuzz.ks", Text: src}}, Derived)
		if err != nil {
			if IsInternal(err) {
				t.Fatalf("internal compiler error: %v", err)
			}
			return
		}
		if err := Optimise(prog, Options{CheckIR: true}); err != nil {
			if IsInternal(err) || strings.Contains(err.Error(), "IR check") {
				t.Fatalf("optimising: %v", err)
			}
			return
		}
		if _, err := EmitC(prog, cemitOptions()); IsInternal(err) {
			t.Fatalf("C backend: %v", err)
		}
		if _, err := EmitGo(prog); IsInternal(err) {
			t.Fatalf("Go backend: %v", err)
		}
	}
}
