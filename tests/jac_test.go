package tests

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/eval"
	"github.com/ksc-lang/ksc/ir"
)

// jacCases are functions whose [jac f] TestJacobian checks. The flat
// order, the choice between columns (n <= m: forward sweeps) and rows
// (reverse sweeps), Integer arguments (no column), tensors, ragged
// vectors, tuples, if, fold and recursion all occur.
var jacCases = []struct {
	name, defs, f, argType, arg string
	wrt                         []int // [jac f wrt...]: the columns of these arguments only
}{
	{"scalar", `(def f Float ((x : Float)) (mul x (sin x)))`, "f", "Float", "0.7", nil},
	{"rows", `(def f Float ((v : Vec Float)) (sum (build (size v) (lam (i : Integer) (mul (index i v) (exp (index i v)))))))`,
		"f", "Vec Float", "(build 4 (lam (i : Integer) (mul 0.3 (to_float i))))", nil},
	{"columns", `(def f (Vec Float) ((x : Float) (k : Integer)) (build k (lam (i : Integer) (sin (mul x (to_float i))))))`,
		"f", "Tuple Float Integer", "(tuple 0.4 5)", nil},
	{"tuples", `(def f (Tuple Float (Vec Float)) ((a : Float) (v : Vec Float))
  (tuple (mul a (sum v)) (build (size v) (lam (i : Integer) (div (index i v) (add a 2.0))))))`,
		"f", "Tuple Float (Vec Float)", "(tuple 1.5 (build 3 (lam (i : Integer) (add 1.0 (to_float i)))))", nil},
	{"matrix", `(def f (Vec Float) ((m : Tensor 2 Float) (v : Vec Float))
  (build (size v) (lam (i : Integer) (sumbuild (size v) (lam (j : Integer) (mul (index (tuple i j) m) (tanh (index j v))))))))`,
		"f", "Tuple (Tensor 2 Float) (Vec Float)",
		"(tuple (build (tuple 2 2) (lam (ij : Tuple Integer Integer) (to_float (add (get$1$2 ij) (mul 2 (get$2$2 ij)))))) (build 2 (lam (i : Integer) (sub 0.5 (to_float i)))))", nil},
	{"ragged", `(def f Float ((vs : Vec (Vec Float)))
  (sumbuild (size vs) (lam (i : Integer) (let (v (index i vs)) (mul (to_float (add i 1)) (sum (build (size v) (lam (j : Integer) (mul (index j v) (index j v))))))))))`,
		"f", "Vec (Vec Float)", "(build 3 (lam (i : Integer) (build (add i 1) (lam (j : Integer) (to_float (sub j i))))))", nil},
	{"if", `(def f (Tuple Float Float) ((x : Float) (y : Float)) (if (gt x y) (tuple (mul x y) (sub x y)) (tuple (div x y) (log y))))`,
		"f", "Tuple Float Float", "(tuple 0.8 1.7)", nil},
	{"fold", `(def f Float ((v : Vec Float) (x : Float))
  (fold (lam (acc_a : Tuple Float Float) (let ((acc a) acc_a) (add (mul acc x) (sin a)))) 1.0 v))`,
		"f", "Tuple (Vec Float) Float", "(tuple (build 3 (lam (i : Integer) (to_float i))) 0.9)", nil},
	{"recursion", `(def f Float ((v : Vec Float) (i : Integer))
  (if (eq i (size v)) 1.0 (mul (cos (index i v)) (f v (add i 1)))))`,
		"f", "Tuple (Vec Float) Integer", "(tuple (build 3 (lam (i : Integer) (mul 0.5 (to_float i)))) 0)", nil},
	{"no columns", `(def f (Vec Float) ((k : Integer)) (build k (lam (i : Integer) (to_float i))))`,
		"f", "Integer", "2", nil},
	{"positions by columns", `(def f (Vec Float) ((a : Float) (v : Vec Float) (b : Float))
  (build (size v) (lam (i : Integer) (mul (mul a (exp b)) (index i v)))))`,
		"f", "Tuple Float (Vec Float) Float", "(tuple 2.0 (Vec_init 1.0 2.0 3.0) 0.5)", []int{0, 2}},
	{"alike", alikeDefs, "f", "Tuple Float Float (Vec (Vec Float))",
		"(tuple 0.3 0.7 (build 3 (lam (i : Integer) (build 2 (lam (j : Integer) (sub (to_float (add i j)) 1.2))))))", []int{0, 1}},
	{"recursive callee by columns", `(def g Float ((x : Float) (n : Integer)) (if (eq n 0) x (g (mul x (sin x)) (sub n 1))))
(def f (Vec Float) ((a : Float) (b : Float))
  (let (y (g (mul a b) 3)) (build 3 (lam (i : Integer) (mul (add y b) (to_float (add i 1)))))))`,
		"f", "Tuple Float Float", "(tuple 0.7 1.3)", nil},
	{"positions by rows", `(def f Float ((a : Float) (v : Vec Float) (w : Vec Float))
  (mul a (sumbuild (size v) (lam (i : Integer) (mul (index i w) (sin (index i v)))))))`,
		"f", "Tuple Float (Vec Float) (Vec Float)", "(tuple 2.0 (Vec_init 1.0 2.0 3.0) (Vec_init 0.5 0.25 2.0))", []int{1}},
}

// alikeDefs is a function whose Jacobian by columns (of a and b) runs
// the same primal code in every sweep: a helper, a sum, an inner loop
// per point, and an if whose value is a tuple (TestJacobian checks its
// values, TestJacobianSweepsShareThePrimal that the primal runs once).
const alikeDefs = `(def rot (Vec Float) ((a : Float) (p : Vec Float))
  (build 2 (lam (r : Integer)
    (if (eq r 0) (sub (mul (cos a) (index 0 p)) (mul (sin a) (index 1 p)))
                 (add (mul (sin a) (index 0 p)) (mul (cos a) (index 1 p)))))))
(def f (Vec (Vec Float)) ((a : Float) (b : Float) (ps : Vec (Vec Float)))
  (let (w (sumbuild (size ps) (lam (i : Integer) (exp (mul b (index 0 (index i ps)))))))
    (build (size ps) (lam (i : Integer)
      (let (q (rot a (index i ps)))
        (build 2 (lam (j : Integer)
          (let (t (if (gt (index j q) 0.0) (tuple (tanh (index j q)) 1.0) (tuple (sin (index j q)) b)))
            (mul (get$1$2 t) (div (get$2$2 t) w))))))))))`

// jacobianRuns are the ways TestJacobian and TestSparseJacobian run a
// program: each backend, with --rev bog and with --ad cps (which make the
// sweeps' derivatives differently).
var jacobianRuns = []struct {
	backend string
	opts    driver.Options
}{{"c", driver.Options{}}, {"go", driver.Options{}}, {"c", driver.Options{Rev: "bog"}}, {"go", driver.Options{AD: "cps"}}}

// TestJacobian checks [jac f] in each backend, and with --rev bog and
// --ad cps (which make the sweeps' derivatives differently), against
// central differences of f computed by the reference evaluator, which
// shares no code with derivation, optimisation or code generation.
func TestJacobian(t *testing.T) {
	needCC(t)
	for _, c := range jacCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := jacobianProgram(t, "jac", c.f, c.wrt, c.defs, c.argType, c.arg)
			want := finiteDifferenceJacobian(t, file, c.f, c.wrt)
			for _, run := range jacobianRuns {
				backend := run.backend + " " + run.opts.Rev + run.opts.AD
				if !wantBackend(run.backend) {
					continue
				}
				r := runProgramWith(t, run.backend, run.opts, file)
				if r.code != 0 {
					t.Fatalf("%s: status %d\n%s", backend, r.code, r.stderr)
				}
				got := parseMatrix(t, strings.TrimSpace(r.stdout))
				if len(got) != len(want) {
					t.Fatalf("%s: %d rows, want %d: %s", backend, len(got), len(want), r.stdout)
				}
				for i := range want {
					if len(got[i]) != len(want[i]) {
						t.Fatalf("%s: row %d has %d columns, want %d: %s", backend, i, len(got[i]), len(want[i]), r.stdout)
					}
					for j := range want[i] {
						if d := math.Abs(got[i][j] - want[i][j]); d > 1e-4*(1+math.Abs(want[i][j])) {
							t.Errorf("%s: J[%d][%d] = %g, central differences give %g", backend, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		})
	}
}

// jacobianProgram writes the program of defs whose main prints [deriv f
// wrt...] at (jacarg), the value arg of type argType, and returns its file.
func jacobianProgram(t *testing.T, deriv, f string, wrt []int, defs, argType, arg string) string {
	t.Helper()
	name := f
	for _, i := range wrt {
		name += " " + strconv.Itoa(i)
	}
	src := defs + "\n(def jacarg (" + argType + ") () " + arg + ")\n" +
		"(def main Integer () (print ([" + deriv + " " + name + "] (jacarg)) \"\\n\"))\n"
	file := filepath.Join(t.TempDir(), deriv+".ks")
	if err := os.WriteFile(file, []byte(src), 0o666); err != nil {
		t.Fatal(err)
	}
	return file
}

// finiteDifferenceJacobian returns the Jacobian of name at (jacarg) by
// central differences, evaluating f with the reference evaluator: the
// columns of the arguments at the positions wrt, or of all if nil.
func finiteDifferenceJacobian(t *testing.T, file, name string, wrt []int) [][]float64 {
	t.Helper()
	prog, err := driver.Load([]string{file}, driver.Typed)
	if err != nil {
		t.Fatal(err)
	}
	find := func(n string) *ir.Func {
		for _, f := range prog.Funcs {
			if f.Name.String() == n && f.Body != nil {
				return f
			}
		}
		t.Fatalf("no function %s", n)
		return nil
	}
	f := find(name)
	x, err := eval.Call(prog, find("jacarg"))
	if err != nil {
		t.Fatal(err)
	}
	call := func(x eval.Value) []float64 {
		args := []eval.Value{x}
		if len(f.Params) > 1 {
			args = x.(eval.Tuple)
		}
		y, err := eval.Call(prog, f, args...)
		if err != nil {
			t.Fatal(err)
		}
		return flattenValue(y, nil)
	}
	xs := flattenValue(x, nil)
	var cols []int // the flat positions of the chosen arguments' Floats
	if wrt == nil {
		for j := range xs {
			cols = append(cols, j)
		}
	} else {
		at := 0
		for i, a := range x.(eval.Tuple) {
			n := len(flattenValue(a, nil))
			if slices.Contains(wrt, i) {
				for j := at; j < at+n; j++ {
					cols = append(cols, j)
				}
			}
			at += n
		}
	}
	rows := len(call(x))
	jac := make([][]float64, rows)
	for i := range jac {
		jac[i] = make([]float64, len(cols))
	}
	for col, j := range cols {
		h := 1e-6 * (1 + math.Abs(xs[j]))
		at := func(d float64) []float64 {
			p := append([]float64(nil), xs...)
			p[j] += d
			k := 0
			return call(replaceFloats(x, p, &k))
		}
		hi, lo := at(h), at(-h)
		for i := range jac {
			jac[i][col] = (hi[i] - lo[i]) / (2 * h)
		}
	}
	return jac
}

// flattenValue appends the Floats of an evaluator value in flat order.
func flattenValue(v eval.Value, out []float64) []float64 {
	switch v := v.(type) {
	case float64:
		return append(out, v)
	case eval.Tuple:
		for _, e := range v {
			out = flattenValue(e, out)
		}
	case *eval.Tensor:
		for _, e := range v.Data {
			out = flattenValue(e, out)
		}
	}
	return out
}

// replaceFloats returns v with its Floats taken from xs[*k:] in flat order.
func replaceFloats(v eval.Value, xs []float64, k *int) eval.Value {
	switch v := v.(type) {
	case float64:
		*k++
		return xs[*k-1]
	case eval.Tuple:
		r := make(eval.Tuple, len(v))
		for i, e := range v {
			r[i] = replaceFloats(e, xs, k)
		}
		return r
	case *eval.Tensor:
		r := &eval.Tensor{Shape: v.Shape, Data: make([]eval.Value, len(v.Data))}
		for i, e := range v.Data {
			r.Data[i] = replaceFloats(e, xs, k)
		}
		return r
	}
	return v
}

// parseMatrix parses a printed (Tensor 2 Float), [[a, b], [c, d]].
func parseMatrix(t *testing.T, s string) [][]float64 {
	t.Helper()
	inner, ok := strings.CutPrefix(s, "[")
	if inner, ok = strings.CutSuffix(inner, "]"); !ok || inner == "" {
		t.Fatalf("not a matrix: %q", s)
	}
	var m [][]float64
	for _, row := range strings.Split(inner, "], [") {
		row = strings.Trim(row, "[]")
		r := []float64{}
		if row != "" {
			for _, x := range strings.Split(row, ", ") {
				f, err := strconv.ParseFloat(x, 64)
				if err != nil {
					t.Fatalf("not a matrix: %q: %v", s, err)
				}
				r = append(r, f)
			}
		}
		m = append(m, r)
	}
	return m
}

// TestJacobianSweeps counts the primal work of [jac f] with the counting
// edef (testdata/cost/counted.c). By rows (m < n), one forward pass
// records the BOG that every reverse sweep reads: f's calls, once,
// whatever m is. By columns, each of the n sweeps is a call of [fwd f]:
// the optimiser moves the primal code the sweeps share out of their loop
// (TestJacobianSweepsShareThePrimal), but not a call of an edef, which
// is an effect, so the count is n times [fwd f]'s calls.
func TestJacobianSweeps(t *testing.T) {
	cc := countingCC(t)
	src := `(edef counted Float Float)
(def [fwd counted] Float ((x : Float) (dx : Float)) (mul (cos x) dx))
(def [rev counted] Float ((x : Float) (dr : Float)) (mul (cos x) dr))
(edef ncount Integer Integer)
; 8 columns, 3 rows: by rows
(def rows (Vec Float) ((v : Vec Float))
  (let (s (sumbuild (size v) (lam (i : Integer) (counted (index i v)))))
    (build 3 (lam (k : Integer) (mul s (to_float (add k (size v))))))))
; 2 columns, 4 rows: by columns
(def cols (Vec Float) ((x : Float) (y : Float))
  (let (a (counted (mul x y)))
    (build 4 (lam (k : Integer) (mul a (add (to_float k) (counted y)))))))
(def main Integer ()
  (let (v (build 8 (lam (i : Integer) (to_float i))))
    (print (rows v) " " (ncount 1) " " ([jac rows] v) " " (ncount 2) " "
           (cols 0.5 0.25) " " (ncount 3) " " ([fwd cols] (tuple 0.5 0.25) (tuple 1.0 0.0)) " " (ncount 4) " "
           ([jac cols] 0.5 0.25) " " (ncount 5) "\n")))
`
	out := runCounted(t, cc, src)
	var counts []string
	for _, w := range strings.Fields(out) {
		if !strings.ContainsAny(w, "[],.") {
			counts = append(counts, w)
		}
	}
	if len(counts) != 5 {
		t.Fatalf("cannot read the counts in %q", out)
	}
	fwd, _ := strconv.Atoi(counts[3])
	want := []string{"8", "8", "5", counts[3], strconv.Itoa(2 * fwd)}
	if strings.Join(counts, " ") != strings.Join(want, " ") || fwd > 2*5 {
		t.Errorf("counted calls in rows, [jac rows], cols, [fwd cols], [jac cols]: %v, want %v ([fwd cols] at most 10)\n%s", counts, want, out)
	}
}

// TestJacobianSweepsShareThePrimal: the sweeps of a Jacobian by columns
// are forward sweeps at the same point, so their primal code is alike:
// the optimiser runs it once, before the loop over the columns
// (optimise.hoistLoops), through calls, sums, inner loops and ifs. What
// stays in the loop is tangent code, which calls no transcendental
// function (their derivatives' factors are primal values too).
func TestJacobianSweepsShareThePrimal(t *testing.T) {
	for _, deriv := range []string{"jac", "sparsejac"} {
		file := jacobianProgram(t, deriv, "f", []int{0, 1}, alikeDefs, "Tuple Float Float (Vec (Vec Float))", "(tuple 0.3 0.7 (build 3 (lam (i : Integer) (build 2 (lam (j : Integer) (to_float j))))))")
		f := optimisedFunc(t, file, "["+deriv+" f 0 1]")
		// The loop over the columns (or colours) is the build whose body
		// makes the tangent it sweeps along ($unflatten) and calls no
		// function (the loop for no column calls the sweep function).
		var cols *ir.Lam
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == "build" {
				if lam, ok := c.Args[1].(*ir.Lam); ok && cols == nil && mentionsPrim(lam.Body, "$unflatten") && !mentionsCall(lam.Body) {
					cols = lam
				}
			}
			return true
		})
		if cols == nil {
			t.Fatalf("%s: no loop over the columns without calls in\n%s", deriv, ir.FormatFunc(f))
		}
		for _, prim := range []string{"exp", "tanh", "sin", "cos"} {
			if mentionsPrim(cols.Body, prim) {
				t.Errorf("%s: the loop over the columns calls %s: its primal part was not moved out\n%s", deriv, prim, ir.FormatExpr(cols))
			}
		}
	}
}

// mentionsPrim reports whether e calls the primitive name.
func mentionsPrim(e ir.Expr, name string) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// mentionsCall reports whether e calls a function (not a primitive).
func mentionsCall(e ir.Expr) bool {
	return len(ir.Funcs(e)) > 0
}

// TestRandomJacobiansUnoptimised checks [jac f] and [sparsejac f] of 20
// random programs (and of [rev f] for a quarter of them: Hessians), whose column sweeps the optimiser rewrites (the hoist
// pass), against the same program compiled without the rewriting passes
// (--no-opt), which shares no rewriting with it.
func TestRandomJacobiansUnoptimised(t *testing.T) {
	var names, hessians []string
	add := func(rng *rand.Rand) func(c *check, main *strings.Builder) []string {
		names, hessians = names[:0], hessians[:0]
		return func(c *check, main *strings.Builder) []string {
			x, _, _ := c.point(rng)
			jacDef(main, "ju$"+c.name, c.name, c.name+" jac ", c.name+" sparse ", "x", x)
			names = append(names, c.name)
			if len(names)%4 != 1 {
				return []string{"ju$" + c.name}
			}
			// A quarter of them with their Hessians, whose sweeps are
			// hoisted too.
			x2, _, dy := c.point(rng)
			jacDef(main, "jh$"+c.name, "[rev "+c.name+"]", c.name+" hjac ", c.name+" hsparse ", "x", x2, "dr", dy)
			hessians = append(hessians, c.name)
			return []string{"ju$" + c.name, "jh$" + c.name}
		}
	}
	// 20 programs: without the rewriting passes their C is large, and
	// compiling 60 at once took more than the harness's 2 minutes on a
	// busy machine.
	n := 20
	if testing.Short() {
		n = 8
	}
	opt := randomProgramsWith(t, "jac", n, driver.Options{}, add(rand.New(rand.NewSource(7))))
	plain := randomProgramsWith(t, "jac", n, driver.Options{NoOpt: true}, add(rand.New(rand.NewSource(7))))
	check := func(name, jac, sparse string) {
		if opt[name+" "+jac] == "" || plain[name+" "+jac] == "" || opt[name+" "+sparse] == "" {
			t.Errorf("%s: no %s printed", name, jac)
			return
		}
		want := parseMatrix(t, plain[name+" "+jac])
		got := parseMatrix(t, opt[name+" "+jac])
		if len(got) != len(want) {
			t.Errorf("%s %s: %d rows, --no-opt %d", name, jac, len(got), len(want))
			return
		}
		for i := range want {
			for j := range want[i] {
				if j >= len(got[i]) || !(math.Abs(got[i][j]-want[i][j]) <= 1e-9*(1+math.Abs(want[i][j]))) {
					t.Errorf("%s %s: J[%d][%d]: %s, --no-opt %s", name, jac, i, j, opt[name+" "+jac], plain[name+" "+jac])
					return
				}
			}
		}
		sameAsDense(t, name+" "+sparse, opt[name+" "+sparse], want)
	}
	for _, name := range names {
		check(name, "jac", "sparse")
	}
	for _, name := range hessians {
		check(name, "hjac", "hsparse")
	}
}
