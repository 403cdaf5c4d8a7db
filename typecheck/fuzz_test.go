package typecheck_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// FuzzCheck checks that no input that parses makes the type checker
// panic, that every error has a position in the file, and that a program
// that checks passes the IR checker and prints as ks that checks again.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"(def f Float (x : Float) (add x 1.0))",
		"(def f Float (x : Float) (add x 1))",
		"(def f Float (v : Vec Float) (sum (build (size v) (lam (i : Integer) (index i v)))))",
		"(def f Integer (n : Integer) (if (lt n 1) 0 (f (sub n 1))))",
		"(edef g Float Float) (def [rev g] Float ((x : Float) (d : Float)) d) (def h Float (x : Float) ([rev g] x 1.0))",
		"(def f (Tuple Float Integer) ((a : Float) (b : Integer)) (let ((x y) (tuple a b)) (tuple x y)))",
		"(gdef rev [f Float])",
		"(def f Float (x : Float) (get$1$2 (tuple x x)))",
	} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("../tests/testdata/*/*.ks")
	for _, file := range files {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := syntax.ParseFile("fuzz.ks", src)
		if err != nil {
			return
		}
		prog, err := typecheck.Check([]*syntax.File{file})
		if err != nil {
			var el syntax.ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("error is not an ErrorList: %v", err)
			}
			for _, e := range el {
				if e.Pos.File != "fuzz.ks" || !e.Pos.IsValid() {
					t.Fatalf("error without a position in the file: %v", e)
				}
			}
			return
		}
		if err := ir.Check(prog); err != nil {
			t.Fatalf("IR check failed on a program that type-checks: %v", err)
		}
		text := prog.Format()
		again, err := syntax.ParseFile("printed.ks", text)
		if err != nil {
			t.Fatalf("the typed program does not parse: %v\n%s", err, text)
		}
		if _, err := typecheck.Check([]*syntax.File{again}); err != nil {
			t.Fatalf("the typed program does not check: %v\n%s", err, text)
		}
	})
}
