package tests

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
)

// hessianCases are functions with the exact pattern of [sparsejac [rev
// f] 0], the Hessian (want: each row's columns), that ksc must find from
// the structure of f's derivative: a second derivative is nonzero only
// where a product or a nonlinear function meets two dependences (a * sin
// b has none by a twice; a product of all has no square).
var hessianCases = []struct {
	name, defs, f, argType, arg string
	want                        [][]int
}{
	{"rosenbrock", `(def f Float (x : Vec Float)
  (sumbuild (sub (size x) 1) (lam (i : Integer)
    (let ((a (index i x)) (b (index (add i 1) x)))
      (add (mul 100.0 (mul (sub b (mul a a)) (sub b (mul a a))))
           (mul (sub 1.0 a) (sub 1.0 a)))))))`,
		"f", "Vec Float", "(Vec_init 1.0 2.0 0.5 -1.0 3.0)",
		[][]int{{0, 1}, {0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4}}},
	{"separable", `(def f Float (x : Vec Float) (sum (build (size x) (lam (i : Integer) (mul (index i x) (exp (index i x)))))))`,
		"f", "Vec Float", "(Vec_init 0.1 0.2 0.3 0.4)",
		[][]int{{0}, {1}, {2}, {3}}},
	{"square of a sum", `(def f Float (x : Vec Float) (let (s (sum x)) (mul s s)))`,
		"f", "Vec Float", "(Vec_init 0.1 0.2 0.3)",
		[][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}}},
	{"calls", `(def h Float ((a : Float) (b : Float)) (mul a (sin b)))
(def f Float (x : Vec Float)
  (sumbuild (sub (size x) 1) (lam (i : Integer) (h (index i x) (index (add i 1) x)))))`,
		"f", "Vec Float", "(Vec_init 0.3 0.5 0.7 0.9)",
		[][]int{{1}, {0, 1, 2}, {1, 2, 3}, {2, 3}}},
	{"product by recursion", `(def g Float ((v : Vec Float) (i : Integer) (acc : Float))
  (if (eq i (size v)) acc (g v (add i 1) (mul acc (index i v)))))
(def f Float (v : Vec Float) (g v 0 1.0))`,
		"f", "Vec Float", "(Vec_init 0.5 1.5 2.0)",
		[][]int{{1, 2}, {0, 2}, {0, 1}}},
	{"if", `(def f Float ((a : Float) (b : Float) (c : Float))
  (if (gt a 0.0) (mul a b) (mul c c)))`,
		"f", "Tuple Float Float Float", "(tuple 0.5 2.0 3.0)",
		[][]int{{1}, {0}, {}}},
	{"fold", `(def f Float ((v : Vec Float) (x : Float))
  (fold (lam (acc_a : Tuple Float Float) (let ((acc a) acc_a) (add (mul acc x) (sin a)))) 1.0 v))`,
		"f", "Tuple (Vec Float) Float", "(tuple (Vec_init 0.1 0.2 0.3) 0.9)",
		nil},
	{"dot of vectors", `(def f Float ((u : Vec Float) (v : Vec Float)) (mul 2.0 (dot u (exp v))))`,
		"f", "Tuple (Vec Float) (Vec Float)", "(tuple (Vec_init 0.1 0.2) (Vec_init 0.3 0.4))",
		[][]int{{2}, {3}, {0, 2}, {1, 3}}},
}

// TestSparseHessian checks [sparsejac [rev f] 0], the Hessian in CSR
// form, and [sparsejac [rev f]], with the columns of the cotangent too
// (the gradient), in each backend: well formed, the exact pattern of
// hessianCases, symmetric, and as a dense matrix equal to [jac [rev f]]
// (which TestJacobian checks against central differences): an entry the
// dense Hessian has is never missing from the pattern.
func TestSparseHessian(t *testing.T) {
	needCC(t)
	for _, c := range hessianCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := c.defs + "\n(def harg (" + c.argType + ") () " + c.arg + ")\n" +
				"(def main Integer () (let (x (harg)) (print" +
				" ([sparsejac [rev " + c.f + "] 0] x 1.0) \"\\n\" ([jac [rev " + c.f + "] 0] x 1.0) \"\\n\"" +
				" ([sparsejac [rev " + c.f + "]] x 1.0) \"\\n\" ([jac [rev " + c.f + "]] x 1.0) \"\\n\")))\n"
			file := filepath.Join(t.TempDir(), "hessian.ks")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, run := range jacobianRuns {
				backend := run.backend + " " + run.opts.Rev + run.opts.AD
				if !wantBackend(run.backend) || run.opts.AD == "cps" {
					continue // --ad cps makes [rev f] itself, not as code to differentiate
				}
				r := runProgramWith(t, run.backend, run.opts, file)
				if r.code != 0 {
					t.Fatalf("%s: status %d\n%s", backend, r.code, r.stderr)
				}
				lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
				if len(lines) != 4 {
					t.Fatalf("%s: %d lines:\n%s", backend, len(lines), r.stdout)
				}
				rows := sameAsDense(t, backend+" [sparsejac [rev f] 0]", lines[0], parseMatrix(t, lines[1]))
				if c.want != nil && !slices.EqualFunc(rows, c.want, func(a, b []int) bool { return slices.Equal(a, b) }) {
					t.Errorf("%s: Hessian pattern %v, want %v", backend, rows, c.want)
				}
				for i, row := range rows {
					for _, j := range row {
						if !slices.Contains(rows[j], i) {
							t.Errorf("%s: the pattern has (%d, %d) but not (%d, %d)", backend, i, j, j, i)
						}
					}
				}
				full := sameAsDense(t, backend+" [sparsejac [rev f]]", lines[2], parseMatrix(t, lines[3]))
				for i := range rows {
					if !slices.Equal(full[i][:len(rows[i])], rows[i]) {
						t.Errorf("%s: row %d: %v with the cotangent's columns, %v without", backend, i, full[i], rows[i])
					}
				}
			}
		})
	}
}

// sameAsDense checks that the printed CSR matrix s is well formed and, as
// a dense matrix, equal to dense (to rounding: a compressed sweep adds
// the columns of a colour), and returns each row's columns.
func sameAsDense(t *testing.T, what, s string, dense [][]float64) [][]int {
	t.Helper()
	cols := 0
	if len(dense) > 0 {
		cols = len(dense[0])
	}
	off, idx, vals := parseCSR(t, s)
	rows := checkCSR(t, what, off, idx, vals, len(dense), cols)
	for i, row := range dense {
		k := off[i]
		for j, want := range row {
			got := 0.0
			if k < off[i+1] && idx[k] == j {
				got = vals[k]
				k++
			}
			if d := math.Abs(got - want); !(d <= 1e-9*(1+math.Abs(want))) {
				t.Errorf("%s: entry (%d, %d) = %g, the dense matrix has %g", what, i, j, got, want)
			}
		}
	}
	return rows
}

// TestRandomSparseHessians checks [sparsejac [rev f]] of the random
// programs of ksgen against [jac [rev f]]: the pattern's walk over sets
// of pairs shares no code with the sweeps, and a pair it misses is an
// entry of the dense matrix left out. And [sparsejac [fwd f]] (forward
// code, whose pattern is a def's) against [jac [fwd f]].
func TestRandomSparseHessians(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var names, fwdNames []string
	lines := randomPrograms(t, "hessian", func(c *check, main *strings.Builder) []string {
		x, _, dy := c.point(rng)
		jacDef(main, "sh$"+c.name, "[rev "+c.name+"]", c.name+" jac ", c.name+" sparse ", "x", x, "dr", dy)
		names = append(names, c.name)
		if len(names)%3 != 1 {
			return []string{"sh$" + c.name}
		}
		// A third of them for forward code (compiling all takes minutes
		// under the sanitizers).
		x2, dx, _ := c.point(rng)
		jacDef(main, "sf$"+c.name, "[fwd "+c.name+"]", c.name+" fjac ", c.name+" fsparse ", "x", x2, "dx", dx)
		fwdNames = append(fwdNames, c.name)
		return []string{"sh$" + c.name, "sf$" + c.name}
	})
	for _, name := range names {
		sameAsDense(t, name, lines[name+" sparse"], parseMatrix(t, lines[name+" jac"]))
	}
	for _, name := range fwdNames {
		sameAsDense(t, name+" [fwd f]", lines[name+" fsparse"], parseMatrix(t, lines[name+" fjac"]))
	}
}

// TestPatternOfASumIsLinear: the pattern of a sum over n terms gathers
// the terms' sets and merges them once ($unionAll), where a loop uniting
// each term into the growing set ($union of the loop's state) would
// copy it every time, quadratic in n (at n = 10^5 Rosenbrock's Hessian
// pattern took more memory than the machine had). Counted in the
// optimised [pattern f] and [hpattern f] of a sum: no loop carries a set.
func TestPatternOfASumIsLinear(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sum.ks")
	src := hessianCases[0].defs + `
(gdef sparsejac [f (Vec Float)])
(gdef sparsejac [rev [f (Vec Float)]] 0)
`
	if err := os.WriteFile(file, []byte(src), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"[pattern f]", "[hpattern f]"} {
		f := optimisedFunc(t, file, name)
		folds, merges := 0, 0
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Prim != nil {
				switch c.Prim.Name {
				case "$ifold", "fold":
					folds++
				case "$unionAll":
					merges++
				}
			}
			return true
		})
		if folds > 0 || merges == 0 {
			t.Errorf("%s: %d loops carrying a state, %d merges; want none, some\n%s", name, folds, merges, ir.FormatExpr(f.Body))
		}
	}
}
