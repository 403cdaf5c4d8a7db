package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// TestSingleUseForm converts every test program to single-use form,
// reads the printed form back, and runs it: it must print what the
// program prints.
func TestSingleUseForm(t *testing.T) {
	needCC(t)
	for _, file := range programFiles(t, "programs") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			prog, err := driver.Load([]string{file}, driver.Derived)
			if err != nil {
				t.Fatal(err)
			}
			text, err := driver.SUF(prog)
			if err != nil {
				t.Fatal(err)
			}
			sufFile := filepath.Join(t.TempDir(), filepath.Base(file))
			if err := os.WriteFile(sufFile, text, 0o644); err != nil {
				t.Fatal(err)
			}
			r := runProgram(t, "c", sufFile)
			if r.code != 0 || r.stdout != string(want) {
				t.Errorf("the single-use form prints %q (status %d, %s), the program %q", r.stdout, r.code, r.stderr, want)
			}
		})
	}
}

// bogOf compiles src and returns the definition of f's BOG type.
func bogOf(t *testing.T, src, f string) *types.Type {
	t.Helper()
	prog, err := driver.LoadSources([]driver.Source{{Name: "bog.ks", Text: []byte(src)}}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	for _, ty := range prog.Types {
		if strings.HasPrefix(ty.Name, "bog$"+f+"$") {
			if ty.Def == nil {
				t.Fatalf("%s has no definition", ty.Name)
			}
			return ty.Def
		}
	}
	t.Fatalf("no BOG type for %s in %s", f, ir.FormatExpr(&ir.Const{T: types.IntegerType, Val: int64(0)}))
	return nil
}

// floats returns how many Floats a value of type t holds, for vectors of
// n elements: per-element counts times n.
func floats(t *types.Type, n int) int {
	switch t.Kind {
	case types.Float:
		return 1
	case types.Tuple, types.Variant:
		c := 0
		for _, e := range t.Elems {
			c += floats(e, n)
		}
		return c
	case types.Tensor:
		return n * floats(t.Elem, n)
	}
	return 0
}

// TestBOGMemory checks what split reverse mode records: no more than the
// reverse pass needs.
func TestBOGMemory(t *testing.T) {
	sqnorm := bogOf(t, `
(def sqnorm Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))
(gdef sufrev [sqnorm (Vec Float)])`, "sqnorm")
	if got := floats(sqnorm, 1000); got > 1000 {
		t.Errorf("the BOG of sqnorm over 1000 elements holds %d Floats, want at most 1000: %s", got, sqnorm)
	}
	fold := bogOf(t, `
(def horner Float ((v : Vec Float) (x : Float))
  (fold (lam (a_c : Tuple Float Float) (let ((a c) a_c) (add (mul a x) c))) 0.0 v))
(gdef sufrev [horner (Tuple (Vec Float) Float)])`, "horner")
	if got := floats(fold, 1000); got > 4*1000 {
		t.Errorf("the BOG of a fold of 1000 steps with a scalar accumulator holds %d Floats, want O(n): %s", got, fold)
	}
	linear := bogOf(t, `
(def lin Float ((a : Float) (b : Float)) (add (sub a b) (neg b)))
(gdef sufrev [lin (Tuple Float Float)])`, "lin")
	if got := floats(linear, 1000); got != 0 {
		t.Errorf("the BOG of a linear function holds %d Floats, want none: %s", got, linear)
	}
	branch := bogOf(t, `
(def br Float ((x : Float) (n : Integer)) (if (gt n 0) (mul x (exp x)) (sin x)))
(gdef sufrev [br (Tuple Float Integer)])`, "br")
	if !branch.Contains(types.Variant) {
		t.Errorf("the BOG of an if must be a variant of the branches' records: %s", branch)
	}
}
