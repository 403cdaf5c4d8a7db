package tests

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/internal/ksgen"
	"github.com/ksc-lang/ksc/ir"
)

// sparseCases are functions whose Jacobians are sparse, with the exact
// pattern ksc must find from the map's structure (want: each row's
// columns). The pattern of a gather depends on Integers known only at
// run time; a field a function never reads, an index a build never
// touches and an Integer argument have no entry; a fold, a recursion and
// an if go through.
var sparseCases = []struct {
	name, defs, f, argType, arg string
	want                        [][]int
}{
	{"diagonal", `(def f (Vec Float) ((v : Vec Float)) (build (size v) (lam (i : Integer) (mul (index i v) (exp (index i v))))))`,
		"f", "Vec Float", "(build 4 (lam (i : Integer) (mul 0.3 (to_float i))))",
		[][]int{{0}, {1}, {2}, {3}}},
	{"stencil", `(def f (Vec Float) ((v : Vec Float))
  (let (n (size v))
    (build n (lam (i : Integer)
      (let (l (if (gt i 0) (index (sub i 1) v) 0.0))
        (let (r (if (lt (add i 1) n) (index (add i 1) v) 0.0))
          (add (mul l (index i v)) (sin r))))))))`,
		"f", "Vec Float", "(build 5 (lam (i : Integer) (add 0.5 (to_float i))))",
		[][]int{{0, 1}, {0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4}}},
	{"gather", `(def f (Vec Float) ((cams : Vec Float) (pts : Vec Float) (obs : Vec (Tuple Integer Integer)))
  (build (size obs) (lam (k : Integer)
    (let ((c p) (index k obs))
      (mul (index c cams) (cos (index p pts)))))))`,
		"f", "Tuple (Vec Float) (Vec Float) (Vec (Tuple Integer Integer))",
		"(tuple (Vec_init 1.0 2.0) (Vec_init 0.1 0.2 0.3) (Vec_init (tuple 1 0) (tuple 0 2) (tuple 1 2) (tuple 0 0)))",
		[][]int{{1, 2}, {0, 4}, {1, 4}, {0, 2}}},
	{"unread field", `(def f (Tuple Float Float) ((a : Float) (b : Float) (k : Integer))
  (tuple (mul a (to_float k)) (sin a)))`,
		"f", "Tuple Float Float Integer", "(tuple 0.3 0.7 2)",
		[][]int{{0}, {0}}},
	{"fold", `(def f (Vec Float) ((v : Vec Float) (x : Float))
  (build 2 (lam (j : Integer)
    (if (eq j 0)
      (fold (lam (acc_a : Tuple Float Float) (let ((acc a) acc_a) (add (mul acc x) (sin a)))) 1.0 v)
      (mul x x)))))`,
		"f", "Tuple (Vec Float) Float", "(tuple (build 3 (lam (i : Integer) (to_float i))) 0.9)",
		[][]int{{0, 1, 2, 3}, {3}}},
	{"recursion", `(def g Float ((v : Vec Float) (i : Integer) (acc : Float))
  (if (eq i (size v)) acc (g v (add i 1) (mul acc (cos (index i v))))))
(def f (Tuple Float Float) ((v : Vec Float) (w : Vec Float))
  (tuple (g v 0 1.0) (g w 1 1.0)))`,
		"f", "Tuple (Vec Float) (Vec Float)", "(tuple (Vec_init 0.1 0.2) (Vec_init 0.3 0.4 0.5))",
		[][]int{{0, 1}, {3, 4}}},
	{"sum of rows", `(def f (Vec Float) ((m : Vec (Vec Float)))
  (build (size m) (lam (i : Integer) (let (r (index i m)) (sumbuild (size r) (lam (j : Integer) (mul (index j r) (index j r))))))))`,
		"f", "Vec (Vec Float)", "(build 3 (lam (i : Integer) (build (add i 1) (lam (j : Integer) (to_float (add i j))))))",
		[][]int{{0}, {1, 2}, {3, 4, 5}}},
	{"scatter", `(def f (Vec Float) ((v : Vec Float))
  (buildFromSparse 4 (size v) (lam (k : Integer) (tuple (sub 3 k) (mul 2.0 (index k v))))))`,
		"f", "Vec Float", "(Vec_init 1.0 2.0 3.0)",
		[][]int{{}, {2}, {1}, {0}}},
}

// TestSparseJacobian checks [sparsejac f] in each backend and by each
// way of making derivatives: its CSR form is well formed, its pattern
// is the one the map's structure gives (sparseCases), and, as a dense
// matrix, it is the Jacobian by central differences of the reference
// evaluator (jacCases, with their positions, and sparseCases): no entry
// the differences see is missing from the pattern.
func TestSparseJacobian(t *testing.T) {
	needCC(t)
	type tcase struct {
		name, defs, f, argType, arg string
		wrt                         []int
		want                        [][]int
	}
	var cases []tcase
	for _, c := range jacCases {
		cases = append(cases, tcase{"dense " + c.name, c.defs, c.f, c.argType, c.arg, c.wrt, nil})
	}
	for _, c := range sparseCases {
		cases = append(cases, tcase{c.name, c.defs, c.f, c.argType, c.arg, nil, c.want})
	}
	// The gather's Jacobian by the cameras only: the points' Floats
	// are data.
	g := sparseCases[2]
	cases = append(cases, tcase{"gather by cameras", g.defs, g.f, g.argType, g.arg, []int{0}, [][]int{{1}, {0}, {1}, {0}}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := jacobianProgram(t, "sparsejac", c.f, c.wrt, c.defs, c.argType, c.arg)
			want := finiteDifferenceJacobian(t, file, c.f, c.wrt)
			cols := 0
			if len(want) > 0 {
				cols = len(want[0])
			}
			for _, run := range jacobianRuns {
				backend := run.backend + " " + run.opts.Rev + run.opts.AD
				if !wantBackend(run.backend) {
					continue
				}
				r := runProgramWith(t, run.backend, run.opts, file)
				if r.code != 0 {
					t.Fatalf("%s: status %d\n%s", backend, r.code, r.stderr)
				}
				off, idx, vals := parseCSR(t, strings.TrimSpace(r.stdout))
				rows := checkCSR(t, backend, off, idx, vals, len(want), cols)
				if c.want != nil && !slices.EqualFunc(rows, c.want, func(a, b []int) bool { return slices.Equal(a, b) }) {
					t.Errorf("%s: pattern %v, want %v", backend, rows, c.want)
				}
				dense := make([][]float64, len(want))
				for i := range dense {
					dense[i] = make([]float64, cols)
					for k := off[i]; k < off[i+1]; k++ {
						dense[i][idx[k]] = vals[k]
					}
				}
				for i := range want {
					for j := range want[i] {
						if d := math.Abs(dense[i][j] - want[i][j]); d > 1e-4*(1+math.Abs(want[i][j])) {
							t.Errorf("%s: J[%d][%d] = %g, central differences give %g", backend, i, j, dense[i][j], want[i][j])
						}
					}
				}
			}
		})
	}
}

// checkCSR checks that (off, idx, vals) is a well-formed CSR matrix of
// m rows and n columns, each row's columns increasing, and returns each
// row's columns.
func checkCSR(t *testing.T, backend string, off, idx []int, vals []float64, m, n int) [][]int {
	t.Helper()
	if len(off) != m+1 || off[0] != 0 || off[m] != len(idx) || len(vals) != len(idx) {
		t.Fatalf("%s: malformed CSR for %d rows: offsets %v, %d columns, %d values", backend, m, off, len(idx), len(vals))
	}
	rows := make([][]int, m)
	for i := range rows {
		if off[i+1] < off[i] {
			t.Fatalf("%s: offsets decrease at row %d: %v", backend, i, off)
		}
		rows[i] = idx[off[i]:off[i+1]]
		for k, j := range rows[i] {
			if j < 0 || j >= n || k > 0 && j <= rows[i][k-1] {
				t.Fatalf("%s: row %d's columns %v are not increasing in [0, %d)", backend, i, rows[i], n)
			}
		}
	}
	return rows
}

// parseCSR parses a printed (Tuple (Vec Integer) (Vec Integer) (Vec
// Float)): [a, b],[c, d],[x, y].
func parseCSR(t *testing.T, s string) (off, idx []int, vals []float64) {
	t.Helper()
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), "],[")
	if len(parts) != 3 {
		t.Fatalf("not a CSR triple: %q", s)
	}
	ints := func(p string) []int {
		out := []int{}
		if p == "" {
			return out
		}
		for _, w := range strings.Split(p, ", ") {
			k, err := strconv.Atoi(w)
			if err != nil {
				t.Fatalf("not a CSR triple: %q: %v", s, err)
			}
			out = append(out, k)
		}
		return out
	}
	off, idx = ints(parts[0]), ints(parts[1])
	vals = []float64{}
	if parts[2] != "" {
		for _, w := range strings.Split(parts[2], ", ") {
			x, err := strconv.ParseFloat(w, 64)
			if err != nil {
				t.Fatalf("not a CSR triple: %q: %v", s, err)
			}
			vals = append(vals, x)
		}
	}
	return off, idx, vals
}

// TestSparseJacobianSweeps counts the sweeps of [sparsejac f] with the
// counting edef, called only by the hand-written [fwd mysin] and [rev
// mysin] (mysin itself is sin, and its pattern, that of a function whose
// derivative ksc cannot see, is dense and calls nothing): each forward
// sweep calls [fwd mysin] once per element, and each reverse sweep [rev
// mysin]. So the count is the number of colours times the n elements: 1
// for a diagonal, 3 for a tridiagonal Jacobian (not n: the pattern comes
// from the map's structure, not from sweeps), and one reverse sweep for
// a Float result; [jac f] by columns takes n sweeps.
func TestSparseJacobianSweeps(t *testing.T) {
	cc := countingCC(t)
	src := `(edef counted Float Float)
(edef tan Float Float)
(edef ncount Integer Integer)
(def mysin Float ((x : Float)) (sin x))
(def [fwd mysin] Float ((x : Float) (dx : Float)) (mul (div (counted x) (tan x)) dx))
(def [rev mysin] Float ((x : Float) (dr : Float)) (mul (div (counted x) (tan x)) dr))
(def diag (Vec Float) ((v : Vec Float)) (build (size v) (lam (i : Integer) (mysin (index i v)))))
(def tri (Vec Float) ((v : Vec Float))
  (let (n (size v))
    (build n (lam (i : Integer)
      (let (l (if (gt i 0) (index (sub i 1) v) 0.0))
        (let (r (if (lt (add i 1) n) (index (add i 1) v) 0.0))
          (mysin (add (add l r) (index i v)))))))))
(def total Float ((v : Vec Float)) (sumbuild (size v) (lam (i : Integer) (mysin (index i v)))))
(def main Integer ()
  (let (v (build 40 (lam (i : Integer) (mul 0.01 (to_float (add i 1))))))
    (print ([sparsejac diag] v) "\n#" (ncount 1) "\n" ([sparsejac tri] v) "\n#" (ncount 2) "\n"
           ([sparsejac total] v) "\n#" (ncount 3) "\n" ([jac diag] v) "\n#" (ncount 4) "\n"
           ([jac total] v) "\n#" (ncount 5) "\n")))
`
	out := runCounted(t, cc, src)
	var counts []string
	for _, line := range strings.Split(out, "\n") {
		if w, ok := strings.CutPrefix(line, "#"); ok {
			counts = append(counts, w)
		}
	}
	want := []string{"40", "120", "40", "1600", "40"}
	if !slices.Equal(counts, want) {
		t.Errorf("calls of [fwd mysin] and [rev mysin] in [sparsejac diag], [sparsejac tri], [sparsejac total], [jac diag], [jac total]: %v, want %v\n%s", counts, want, out)
	}
}

// TestJacobianShapeOutsideLoops: the column count of [jac f] and
// [sparsejac f] for ragged arguments (a Vec (Vec Float)) sums the rows'
// sizes from the argument's shape, which is computed once, not once per
// row inside the sum (quadratic: 20% of the sparse Jacobian of bundle
// adjustment at 7776 points). Counted in the optimised code: no $shape
// inside a lambda.
func TestJacobianShapeOutsideLoops(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ragged.ks")
	src := `(def f (Vec Float) ((a : Vec (Vec Float)) (b : Vec (Vec Float)) (k : Integer))
  (build (size a) (lam (i : Integer) (mul (to_float k) (sum (index i a))))))
(gdef jac [f (Tuple (Vec (Vec Float)) (Vec (Vec Float)) Integer)] 0 1)
(gdef sparsejac [f (Tuple (Vec (Vec Float)) (Vec (Vec Float)) Integer)] 0 1)
`
	if err := os.WriteFile(file, []byte(src), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"[jac f 0 1]", "[sparsejac f 0 1]"} {
		f := optimisedFunc(t, file, name)
		shapes, inLoops := 0, 0
		var walk func(e ir.Expr, depth int)
		walk = func(e ir.Expr, depth int) {
			if c, ok := e.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == "$shape" {
				shapes++
				if depth > 0 {
					inLoops++
				}
			}
			ir.MapChildren(e, func(x ir.Expr) ir.Expr {
				d := depth
				if _, ok := x.(*ir.Lam); ok {
					d++
				}
				walk(x, d)
				return x
			})
		}
		walk(f.Body, 0)
		if shapes == 0 || inLoops > 0 {
			t.Errorf("%s: %d $shape, %d of them in a loop; want some, none in a loop\n%s", name, shapes, inLoops, ir.FormatExpr(f.Body))
		}
	}
}

// TestRandomSparseJacobians compares, for random programs (internal/ksgen,
// from seed -random.seed on, 60 of them, 20 with -short), [sparsejac f],
// as a dense matrix, with [jac f], in C: the pattern, found by a walk of
// its own over the map's structure, must miss no entry the sweeps of
// [jac f] see, and the compressed sweeps must give the same values (to
// rounding: a sweep adds the columns of a colour). A pattern entry whose
// value is zero is allowed (a structural dependence through a value that
// is zero).
func TestRandomSparseJacobians(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var names []string
	lines := randomPrograms(t, "sparse", func(c *check, main *strings.Builder) []string {
		x, _, _ := c.point(rng)
		jacDef(main, "sj$"+c.name, c.name, c.name+" jac ", c.name+" sparse ", "x", x)
		names = append(names, c.name)
		return []string{"sj$" + c.name}
	})
	for _, name := range names {
		sameAsDense(t, name, lines[name+" sparse"], parseMatrix(t, lines[name+" jac"]))
	}
}

// jacDef writes to main a def named def that prints ([jac d] args) after
// the label jl and ([sparsejac d] args) after sl, the arguments bound by
// lets (a name and its value each).
func jacDef(main *strings.Builder, def, d, jl, sl string, lets ...string) {
	var binds, args []string
	for k := 0; k+1 < len(lets); k += 2 {
		binds = append(binds, "("+lets[k]+" "+lets[k+1]+")")
		args = append(args, lets[k])
	}
	bind := strings.Join(binds, " ")
	if len(binds) > 1 {
		bind = "(" + bind + ")"
	}
	a := strings.Join(args, " ")
	fmt.Fprintf(main, "(def %s Integer ()\n  (let %s\n    (print %q ([jac %s] %s) \"\\n\" %q ([sparsejac %s] %s) \"\\n\")))\n",
		def, bind, jl, d, a, sl, d, a)
}

// randomPrograms writes the random programs of ksgen (60, or 20 with
// -short, from -random.seed on) and for each the defs that add(c, main)
// writes to main, returning the names of those to call; it runs them in
// C and returns their printed lines, keyed by their first two words.
func randomPrograms(t *testing.T, what string, add func(c *check, main *strings.Builder) []string) map[string]string {
	n := 60
	if testing.Short() {
		n = 20
	}
	return randomProgramsWith(t, what, n, driver.Options{}, add)
}

// randomProgramsWith is randomPrograms of n programs compiled with opts.
func randomProgramsWith(t *testing.T, what string, n int, opts driver.Options, add func(c *check, main *strings.Builder) []string) map[string]string {
	t.Helper()
	needCC(t)
	if !wantBackend("c") {
		t.Skip("C only")
	}
	var defs, mains strings.Builder
	var calls []string
	for seed := *randomSeed; seed < *randomSeed+int64(n); seed++ {
		p := ksgen.Generate(seed, fmt.Sprintf("p%d_", seed))
		args, dr := p.Specs()
		defs.WriteString(p.Defs())
		for _, name := range add(&check{name: p.Entry().Name, args: specs(args), dr: spec(dr)}, &mains) {
			calls = append(calls, "("+name+")")
		}
	}
	file := filepath.Join(t.TempDir(), what+".ks")
	src := defs.String() + mains.String() + "(def main Integer ()\n  " + sumOf(calls) + ")\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runProgramWith(t, "c", opts, file)
	if r.code != 0 {
		t.Fatalf("status %d\n%s", r.code, r.stderr)
	}
	lines := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if f := strings.SplitN(line, " ", 3); len(f) == 3 {
			lines[f[0]+" "+f[1]] = f[2]
		}
	}
	return lines
}
