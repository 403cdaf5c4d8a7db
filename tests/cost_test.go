package tests

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
	"github.com/ksc-lang/ksc/eval"
	"github.com/ksc-lang/ksc/ir"
)

// chainSource returns a def of k chained lets, each using the previous
// variable twice, with its forward, reverse and split reverse modes.
func chainSource(k int) string {
	var b strings.Builder
	b.WriteString("(def chain Float (x0 : Float)\n  (let (x x0)\n")
	for i := 0; i < k; i++ {
		b.WriteString("  (let (x (mul x (sin x)))\n")
	}
	b.WriteString("  x" + strings.Repeat(")", k+2) + "\n")
	b.WriteString("(gdef fwd [chain Float])\n(gdef rev [chain Float])\n(gdef sufrev [chain Float])\n")
	return b.String()
}

// TestChainedLetsCost pins the cost of differentiating a chain of k lets
// (issue 12): the generated C grows linearly with k, and what ksc
// allocates compiling it at most quadratically (the simplifier rewrites
// to a fixpoint; substituting let-bound linear maps into their uses made
// it exponential: 20 lets took 3 GB). Counted, not timed: the bytes of C
// and the bytes the Go runtime reports allocated, for the three reverse
// strategies.
func TestChainedLetsCost(t *testing.T) {
	ks := []int{10, 20, 40, 80}
	for _, rev := range []string{"lm", "bog", "suf"} {
		size := map[int]float64{}
		alloc := map[int]float64{}
		for _, k := range ks {
			file := filepath.Join(t.TempDir(), "chain.ks")
			if err := os.WriteFile(file, []byte(chainSource(k)), 0o644); err != nil {
				t.Fatal(err)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			opts := driver.Options{Rev: rev}
			prog, err := driver.LoadWith([]string{file}, driver.Derived, opts)
			if err == nil {
				err = driver.Optimise(prog, opts)
			}
			var out *cemit.Output
			if err == nil {
				out, err = driver.EmitC(prog, cemit.Options{Prefix: "ks"})
			}
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatalf("--rev %s, %d lets: %v", rev, k, err)
			}
			size[k] = float64(len(out.C))
			alloc[k] = float64(m1.TotalAlloc - m0.TotalAlloc)
			// At most quadratic: doubling the chain at most quadruples
			// (with a margin) what is allocated. Checked before the next
			// size, which an exponential cost would not finish.
			if k > ks[0] {
				if r := alloc[k] / alloc[k/2]; r > 4.5 {
					t.Fatalf("--rev %s: from %d to %d lets, allocation grows %.1f times (%v)", rev, k/2, k, r, alloc)
				}
			}
		}
		report := fmt.Sprintf("--rev %s: C bytes %v, bytes allocated %v", rev, size, alloc)
		t.Log(report)
		// Linear: the C each let adds between 40 and 80 lets is what it
		// adds between 10 and 20, within 30%.
		perLet := func(m map[int]float64, a, b int) float64 { return (m[b] - m[a]) / float64(b-a) }
		if late, early := perLet(size, 40, 80), perLet(size, 10, 20); late > 1.3*early {
			t.Errorf("the C grows faster than the chain: %.0f bytes per let from 40 to 80, %.0f from 10 to 20\n%s", late, early, report)
		}
		if alloc[80] > 200<<20 {
			t.Errorf("80 lets allocate %.0f MB, want at most 200\n%s", alloc[80]/(1<<20), report)
		}
	}
}

// primalCounts lists the functions of testdata/cost/counted.ks with an
// argument, and, for those whose derivatives do not yet keep to the bound
// of TestPrimalEvaluations, which do not (the test fails when one of
// these starts keeping to it, so that the list stays true).
var primalCounts = []struct {
	name, typ, arg string
	over           map[string]bool // "strategy derivative": over the bound today
}{
	{name: "c_line", typ: "Float", arg: "0.7"},
	{name: "c_calls", typ: "Float", arg: "0.7"},
	{name: "c_if", typ: "Float", arg: "0.7"},
	{name: "c_build", typ: "(Vec Float)", arg: "(Vec_init 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0)"},
	{name: "c_sumbuild", typ: "(Vec Float)", arg: "(Vec_init 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0)"},
	// Reverse mode of a fold runs each step once for the tape of
	// accumulators (whose last entry is the value), and again in the
	// reverse loop, whose linear-map code recomputes what a step needs.
	{name: "c_fold", typ: "(Vec Float)", arg: "(Vec_init 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0)"},
	// Reverse mode calls a recursive callee's split passes
	// (ir.SplitCalls), so each level runs once.
	{name: "c_recursive", typ: "Float", arg: "0.7"},
	{name: "c_product", typ: "Float", arg: "0.7"},
	// Reverse mode calls the split passes of every callee whose value
	// the caller reads (ir.SplitCalls), so no level runs a callee twice.
	{name: "c_nested", typ: "Float", arg: "0.7"},
}

// TestPrimalEvaluations counts the calls of an edef (counted, a C
// function with a counter: testdata/cost/counted.c) in f and in [fwd f],
// [rev f], [sufrev f] and [vrev f], with the three reverse strategies: a derivative that
// evaluates each primal operation at most twice calls it at most twice as
// often as f. A derivative that re-runs its callees' primal code (at every
// level of a recursion, say) calls it more often, by a factor that grows
// with the program.
func TestPrimalEvaluations(t *testing.T) {
	cc := countingCC(t)
	src, err := os.ReadFile(filepath.Join("testdata", "cost", "counted.ks"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(src)
	derivs := []string{"fwd", "rev", "sufrev", "vrev"}
	k := 0
	line := func(label, call string) {
		k++
		fmt.Fprintf(&b, "\n    %q %s \" \" (ncount %d) \"\\n\"", label+" ", call, k)
	}
	for _, c := range primalCounts {
		for _, d := range derivs {
			fmt.Fprintf(&b, "(gdef %s [%s %s])\n", d, c.name, c.typ)
		}
	}
	b.WriteString("(def main Integer ()\n  (print")
	for _, c := range primalCounts {
		line(c.name+" f", fmt.Sprintf("(%s %s)", c.name, c.arg))
		dx := "1.0" // the tangent of the argument: ones
		if c.typ != "Float" {
			dx = fmt.Sprintf("(constVec (size %s) 1.0)", c.arg)
		}
		line(c.name+" fwd", fmt.Sprintf("([fwd %s] %s %s)", c.name, c.arg, dx))
		line(c.name+" rev", fmt.Sprintf("(ts_dot ([rev %s] %s 1.0) %s)", c.name, c.arg, dx))
		line(c.name+" sufrev", fmt.Sprintf("(ts_dot ([sufrev %s] %s 1.0) %s)", c.name, c.arg, dx))
		line(c.name+" vrev", fmt.Sprintf("(ts_dot (get$2$2 ([vrev %s] %s 1.0)) %s)", c.name, c.arg, dx))
	}
	b.WriteString("))\n")
	file := filepath.Join(t.TempDir(), "counted.ks")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{"lm", "bog", "suf"} {
		r, err := tryProgram("c", driver.Options{Rev: rev}, cc, t.TempDir(), file)
		if err != nil {
			t.Fatalf("--rev %s: %v", rev, err)
		}
		if r.code != 0 || r.warnings != "" {
			t.Fatalf("--rev %s: status %d\n%s%s", rev, r.code, r.warnings, r.stderr)
		}
		counts := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var name, what, value string
			var n int
			if _, err := fmt.Sscan(l, &name, &what, &value, &n); err != nil {
				t.Fatalf("--rev %s: cannot read %q", rev, l)
			}
			counts[name+" "+what] = n
		}
		for _, c := range primalCounts {
			f := counts[c.name+" f"]
			if f == 0 {
				t.Errorf("%s calls counted %d times", c.name, f)
				continue
			}
			for _, d := range derivs {
				n := counts[c.name+" "+d]
				over := n > 2*f
				t.Logf("--rev %s: %s: %d calls in f, %d in [%s f]", rev, c.name, f, n, d)
				switch {
				case over && !c.over[rev+" "+d]:
					t.Errorf("--rev %s: [%s %s] calls counted %d times, f %d: more than twice", rev, d, c.name, n, f)
				case !over && c.over[rev+" "+d]:
					t.Errorf("--rev %s: [%s %s] calls counted %d times, f %d: within the bound now, so take it off primalCounts' list", rev, d, c.name, n, f)
				}
			}
		}
	}
}

// TestReverseLoopRecords counts, in the reverse mode of the benchmarks'
// objectives, the calls that run a callee's primal code: the callee, its
// [suffwdpass] or its [revacc]. Each is called at as many places as in
// the primal (one, but for ode's Runge-Kutta step): the loop that makes
// the value records what the reverse loop (or split reverse mode's
// record) needs, instead of that loop running the callee again (the
// optimiser's tape-loops pass). Counted in the optimised program, not
// timed.
func TestReverseLoopRecords(t *testing.T) {
	for _, tc := range []struct {
		file, fn string
		callees  []string
		places   int
	}{
		{"lstm.ks", "[revacc lstm_objective]", []string{"lstm_predict"}, 1},
		{"lstm.ks", "[suffwdpass lstm_predict]", []string{"lstm_layer"}, 1},
		{"gmm.ks", "[revacc gmm_points]", []string{"ltri_times", "sqnorm"}, 1},
		// The fold's step takes its parameter apart before the calls,
		// the record's build reads the accumulator directly: 8 and 6
		// places when the two were not paired.
		{"gradbench/evals/ode.ks", "[suffwdpass ode]", []string{"ode_fun"}, 4},
		{"gradbench/evals/ode.ks", "[suffwdpass ode]", []string{"step_to"}, 3},
	} {
		fn := optimisedFunc(t, filepath.Join("..", "bench", tc.file), tc.fn)
		for _, g := range tc.callees {
			n := 0
			ir.Inspect(fn.Body, func(e ir.Expr) bool {
				if c, ok := e.(*ir.Call); ok && c.Fn != nil && c.Fn.Name.Base == g &&
					(len(c.Fn.Name.Derivs) == 0 || c.Fn.Name.Derivs[0] == "suffwdpass" || c.Fn.Name.Derivs[0] == "revacc") {
					n++
				}
				return true
			})
			if n != tc.places {
				t.Errorf("%s: %s runs %s's primal code at %d places, want %d:\n%s", tc.file, tc.fn, g, n, tc.places, ir.FormatExpr(fn.Body))
			}
		}
	}
}

// TestLeavesRunOnce: a call of a leaf (lower.IsLeaf: a sigmoid, inlined
// by the optimiser) differentiated in a loop runs its primal operations
// once per gradient. Reverse mode calls [revacc sigmoid], which computes
// the sigmoid again; it is a leaf too once simplified, so it is inlined
// (in A-normal form, as derived code is, and the sigmoid is put in it),
// and the loop that computes the value records what the reverse loop
// would compute again (tape-loops).
// Before, [revacc sigmoid] (44 nodes unsimplified, over the bound) was
// called from the reverse loop: LSTM's reverse loop ran 3 exps per
// element, and split reverse mode's record loop ran the 3 again. Counted
// in the optimised program: the places of exp and tanh, and the calls of
// [revacc sigmoid].
func TestLeavesRunOnce(t *testing.T) {
	sig := filepath.Join(t.TempDir(), "sig.ks")
	src := `(def sigmoid Float (x : Float) (div 1.0 (add 1.0 (exp (neg x)))))
(def f Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (mul (sigmoid (index i v)) (index i v)))))
(gdef rev [f (Vec Float)])
(gdef sufrev [f (Vec Float)])
`
	if err := os.WriteFile(sig, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	lstm := filepath.Join("..", "bench", "lstm.ks")
	for _, tc := range []struct {
		file, fn         string
		exp, tanh, calls int
	}{
		{sig, "[revacc f]", 1, 0, 0},
		{sig, "[suffwdpass f]", 1, 0, 0},
		{sig, "[sufrevpass f]", 0, 0, 0},
		{lstm, "[suffwdpass lstm_layer]", 3, 2, 0},
		{lstm, "[bogrev lstm_layer]", 0, 0, 0},
	} {
		fn := optimisedFunc(t, tc.file, tc.fn)
		counts := map[string]int{}
		ir.Inspect(fn.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok {
				switch {
				case c.Prim != nil:
					counts[c.Prim.Name]++
				case c.Fn.Name.String() == "[revacc sigmoid]":
					counts["revacc"]++
				}
			}
			return true
		})
		if counts["exp"] != tc.exp || counts["tanh"] != tc.tanh || counts["revacc"] != tc.calls {
			t.Errorf("%s: %d exp, %d tanh, %d calls of [revacc sigmoid]; want %d, %d and %d:\n%s",
				tc.fn, counts["exp"], counts["tanh"], counts["revacc"], tc.exp, tc.tanh, tc.calls, ir.FormatExpr(fn.Body))
		}
	}
}

// TestForwardCodeRecords: reverse mode of forward-mode code (a
// Hessian-vector product, [fwd [rev f]] = [rev [fwd f] 0] + ...; split
// reverse mode of [fwd f]) records the values a loop's iterations bind by
// a pattern, (z dz) = ([fwdfull g] ...), as it records any other, and a
// sumbuild of pairs taken apart by a pattern is a source like any other.
// In GMM's product the reverse loop over the components reads
// [fwdfull ltri_times] and [fwdfull sqnorm] from the forward loop's tape
// (2 places each before); in [suffwdpass [fwdfull gmm_points]], sqnorm's
// forward code runs at 2 places (3 before: the value's loop, the loop
// recording the BOG, and the forward pass there), and make_q's at one:
// the value's loop calls [suffwdpass [fwdfull make_q]] and the record
// reads its BOGs (since commit fde7325; [fwdfull make_q] at one more
// place before). Counted in the optimised program.
func TestForwardCodeRecords(t *testing.T) {
	for _, tc := range []struct {
		fn     string
		places map[string]int
	}{
		{"[revacc [fwdfull gmm_points]]", map[string]int{"[fwdfull ltri_times]": 1, "[fwdfull sqnorm]": 1}},
		{"[suffwdpass [fwdfull gmm_points]]", map[string]int{
			"[fwdfull make_q]": 0, "[suffwdpass [fwdfull make_q]]": 1,
			"[fwdfull sqnorm]": 1, "[suffwdpass [fwdfull sqnorm]]": 1}},
	} {
		fn := optimisedFunc(t, filepath.Join("..", "bench", "gmm.ks"), tc.fn,
			filepath.Join("..", "bench", "gmm_hvp.ks"), filepath.Join("testdata", "cost", "gmm_sufrev_fwd.ks"))
		counts := map[string]int{}
		ir.Inspect(fn.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Fn != nil {
				counts[c.Fn.Name.String()]++
			}
			return true
		})
		for g, want := range tc.places {
			if counts[g] != want {
				t.Errorf("%s: %s is called at %d places, want %d:\n%s", tc.fn, g, counts[g], want, ir.FormatExpr(fn.Body))
			}
		}
	}
}

// TestTupleArgumentsInPlace: reverse mode of a call whose argument is a
// tuple of variables adds the call's cotangent into the fields'
// accumulators (an element of a vector's accumulator among them) in
// place; it used to fill a zero tuple per call, pass that, and add it
// into the fields afterwards (one ts_zero per function here before). And
// a tuple parameter taken apart, (let (((q z) (get$1$2 p)) ...)), adds
// into the fields of the accumulator passed in, at any depth: tup_quad
// made a zero per field and added it in (12 zeros and additions before).
// The values are checked by testdata/ad/tuple_args.ks. Counted in the
// optimised program.
func TestTupleArgumentsInPlace(t *testing.T) {
	file := filepath.Join("testdata", "ad", "tuple_args.ks")
	for _, fn := range []string{"[revacc tup_rows]", "[revacc tup_nested]", "[revacc tup_twice]", "[revacc tup_quad]"} {
		f := optimisedFunc(t, file, fn, filepath.Join("testdata", "cost", "tuple_args_rev.ks"))
		n := 0
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Prim != nil && (c.Prim.Name == "ts_zero" || c.Prim.Name == "constVec" || c.Prim.Name == "$addTo") {
				n++
			}
			return true
		})
		if n != 0 {
			t.Errorf("%s makes or adds %d zeros, want none:\n%s", fn, n, ir.FormatExpr(f.Body))
		}
	}
}

// TestElementsInPlace: reverse mode of (index j (index i m)) in a loop
// over j adds each element's cotangent into row i of m's accumulator in
// place. It made a zero the size of the row, set the element and added
// the row in, per element: a loop over a row's n elements cost n^2. Counted
// in the optimised program: no zero is made inside a loop (elem_whole
// reads its row whole, (sum row), once per element, so its reverse loop
// adds a row per element as the function reads one; it is here to pin
// that it still does, its values checked with the others' by
// testdata/ad/elements.ks).
func TestElementsInPlace(t *testing.T) {
	file := filepath.Join("testdata", "ad", "elements.ks")
	for _, tc := range []struct {
		fn    string
		zeros int
	}{
		{"elem_build", 0}, {"elem_two_rows", 0}, {"elem_twice", 0}, {"elem_varying", 0},
		{"elem_deep", 0}, {"elem_fold", 0}, {"elem_whole", 2},
	} {
		f := optimisedFunc(t, file, "[revacc "+tc.fn+"]", filepath.Join("testdata", "cost", "elements_rev.ks"))
		if n := zerosInLoops(f.Body, false); n != tc.zeros {
			t.Errorf("[revacc %s] makes %d zeros inside loops, want %d:\n%s", tc.fn, n, tc.zeros, ir.FormatExpr(f.Body))
		}
	}
}

// zerosInLoops counts the calls of ts_zero and constVec in e that are
// inside a lambda (a loop's body), or anywhere if inLoop.
func zerosInLoops(e ir.Expr, inLoop bool) int {
	n := 0
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Lam:
			if !inLoop {
				n += zerosInLoops(x.Body, true)
				return false
			}
		case *ir.Call:
			if inLoop && x.Prim != nil && (x.Prim.Name == "ts_zero" || x.Prim.Name == "constVec") {
				n++
			}
		}
		return true
	})
	return n
}

// TestUnreadValueNotRecorded: a call whose value the reverse pass does not
// read (gmm_objective adds gmm_points' value to the prior's, and the
// reverse of an addition reads neither) is reverse-applied by [revacc g],
// one pass, not split into [suffwdpass g], which would record g's values,
// and its reverse pass. Counted in the optimised program.
func TestUnreadValueNotRecorded(t *testing.T) {
	fn := optimisedFunc(t, filepath.Join("..", "bench", "gmm.ks"), "[revacc gmm_objective]")
	counts := map[string]int{}
	ir.Inspect(fn.Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok && c.Fn != nil && len(c.Fn.Name.Derivs) > 0 {
			counts[c.Fn.Name.Derivs[0]+" "+c.Fn.Name.Base]++
		}
		return true
	})
	if counts["revacc gmm_points"] != 1 || counts["suffwdpass gmm_points"] != 0 || counts["revacc wishart_prior"] != 1 {
		t.Errorf("[revacc gmm_objective] calls %v, want [revacc gmm_points] and [revacc wishart_prior] once each, no split passes:\n%s", counts, ir.FormatExpr(fn.Body))
	}
}

// TestUntapedFold: the gradient of lse (max, then a sum of exponentials)
// writes no tape of max's fold: reverse mode binds the fold's value from
// its tape, and the tape's only other reader, the reverse pass of an
// index-valued fold, is dropped; optimise's untape pass makes it a fold
// again. Counted in the optimised program.
func TestUntapedFold(t *testing.T) {
	fn := optimisedFunc(t, filepath.Join("..", "bench", "gradbench", "evals", "lse.ks"), "[revacc lse]")
	counts := map[string]int{}
	ir.Inspect(fn.Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok && c.Prim != nil {
			counts[c.Prim.Name]++
		}
		return true
	})
	if counts["$foldtape"] != 0 || counts["$foldrec"] != 0 || counts["fold"] != 1 {
		t.Errorf("[revacc lse] has %d $foldtape, %d $foldrec, %d fold; want 0, 0, 1:\n%s", counts["$foldtape"], counts["$foldrec"], counts["fold"], ir.FormatExpr(fn.Body))
	}
}

// TestRecordHoldsNoProjection: split reverse mode records, per level of a
// recursion, what the reverse pass reads of the level below and no more.
// Cut from [revfull f] (--rev=bog): prodnt's caller reads the value
// below, so its recursive arm records the forward pass's result of the
// level below (value and BOG) once, not the value again beside it;
// prodrec's is a tail call, whose reverse reads only the BOG below, not
// its value, and whose records are linked to the level above
// (bog.LoopTail), so its arm records nothing. Translated (the default):
// each level records the Floats its reverse reads (prodnt: the value
// below and the element; prodrec: acc and the element) beside the index
// and the size, and the BOG below, nothing else. Counted in the record's
// type, not timed (the record's size is much of the reverse pass's cost
// for a cheap recursion: docs/performance.md).
func TestRecordHoldsNoProjection(t *testing.T) {
	const (
		prodnt = `(def prodnt Float ((v : Vec Float) (i : Integer))
  (if (eq i (size v)) 1.0 (mul (index i v) (prodnt v (add i 1)))))
(gdef sufrev [prodnt (Tuple (Vec Float) Integer)])
`
		prodrec = `(def prodrec Float ((v : Vec Float) (i : Integer) (acc : Float))
  (if (eq i (size v)) acc (prodrec v (add i 1) (mul acc (index i v)))))
(gdef sufrev [prodrec (Tuple (Vec Float) Integer Float)])
`
	)
	for _, tc := range []struct {
		name, src, rev string
		want           string // the record's type; with --rev=bog its recursive arm's
	}{
		{"prodnt", prodnt, "bog", "(Tuple (Tuple Float bog$prodnt$tup2_vec_f64_i64))"},
		{"prodrec", prodrec, "bog", "(Tuple)"},
		{"prodnt", prodnt, "", "(Tuple Integer (Variant (Tuple) (Tuple Float Float bog$prodnt$tup2_vec_f64_i64)) Integer)"},
		{"prodrec", prodrec, "", "(Tuple Float Integer (Variant (Tuple) (Tuple Float)) Integer (Variant (Tuple) (Tuple bog$prodrec$tup3_vec_f64_i64_f64)))"},
	} {
		prog := optimisedWith(t, tc.name+".ks", tc.src, driver.Options{Rev: tc.rev})
		var fw *ir.Func
		for _, f := range prog.Funcs {
			if f.Name.String() == "[suffwdpass "+tc.name+"]" {
				fw = f
			}
		}
		if fw == nil {
			t.Errorf("--rev=%s: no [suffwdpass %s]", tc.rev, tc.name)
			continue
		}
		if len(fw.Result.Elems) != 2 || fw.Result.Elems[1].Def == nil {
			t.Errorf("--rev=%s: [suffwdpass %s] returns %s, not a value and a named BOG", tc.rev, tc.name, fw.Result)
			continue
		}
		bog := fw.Result.Elems[1].Def // (Tuple x (Variant (Tuple) arm)) when cut
		got := bog
		if tc.rev == "bog" {
			if len(bog.Elems) < 2 || len(bog.Elems[1].Elems) < 2 {
				t.Errorf("--rev=bog: %s's BOG is %s, not (Tuple x (Variant (Tuple) arm))", tc.name, bog)
				continue
			}
			got = bog.Elems[1].Elems[1]
		}
		if got.String() != tc.want {
			t.Errorf("--rev=%s: %s records %s, want %s (the BOG is %s)", tc.rev, tc.name, got, tc.want, bog)
		}
	}
}

// optimisedFunc loads and optimises file and returns its function named
// name (as ir.Name.String prints it).
func optimisedFunc(t *testing.T, file, name string, more ...string) *ir.Func {
	t.Helper()
	prog, err := driver.Load(append([]string{file}, more...), driver.Derived)
	if err == nil {
		err = driver.Optimise(prog, driver.Options{})
	}
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, f := range prog.Funcs {
		if f.Name.String() == name {
			return f
		}
	}
	t.Fatalf("%s: no %s", file, name)
	return nil
}

// TestShapeComputesNoValues: [shape f] computes the shape of f's result
// without its values (language.md section 5): the counting edef that
// fills f's tensors, and those of the function it calls, is not called
// (f calls it 7 times: 4 for v, 1 + 2 for the rows). A condition that
// read a value would need it: that one reads n. Counted by the C of
// testdata/cost/counted.c.
func TestShapeComputesNoValues(t *testing.T) {
	cc := countingCC(t)
	src := `(edef counted Float Float)
(edef ncount Integer Integer)
(def fill (Vec Float) ((x : Float) (n : Integer))
  (build n (lam (i : Integer) (counted (mul x (to_float i))))))
(def f (Tuple (Vec Float) (Vec (Vec Float)) Float) ((x : Float) (n : Integer))
  (let (v (fill x n))
    (tuple (if (gt n 2) v (fill 1.0 3))
           (build 2 (lam (i : Integer) (fill x (add i 1))))
           (sum v))))
(def main Integer ()
  (print ([shape f] 0.5 4) " " (ncount 1) " " (f 0.5 4) " " (ncount 2) "\n"))
`
	out := runCounted(t, cc, src)
	f := strings.Fields(out)
	if len(f) < 3 || f[0] != "4,[1," || f[1] != "2]," || f[2] != "0" {
		t.Errorf("[shape f] 0.5 4 and the calls it made: %q, want 4,[1, 2], and 0 calls", out)
	}
	if n := f[len(f)-1]; n != "7" {
		t.Errorf("f 0.5 4 called counted %s times, want 7 (so the count counts)", n)
	}
}

// runCounted compiles the program src with the C compiler cc (the
// counting one) and runs it, failing the test unless it runs cleanly;
// it returns what the program printed.
func runCounted(t *testing.T, cc driver.CC, src string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "counted.ks")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := tryProgram("c", driver.Options{}, cc, t.TempDir(), file)
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || r.warnings != "" {
		t.Fatalf("status %d\n%s%s", r.code, r.warnings, r.stderr)
	}
	return r.stdout
}

// countingCC returns the C compiler of the tests with the counting edef
// linked in (testdata/cost/counted.c: counted(x) is sin(x) and counts its
// calls, ncount(k) returns the count and resets it), or skips the test
// where there is no C backend to count with.
func countingCC(t *testing.T) driver.CC {
	t.Helper()
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the count is kept by C code")
	}
	counter, err := filepath.Abs(filepath.Join("testdata", "cost", "counted.c"))
	if err != nil {
		t.Fatal(err)
	}
	cc := testCC()
	cc.Flags = append(cc.Flags, counter)
	return cc
}

// TestSparseTangentsScattered: the tangent of buildFromSparse is one
// buildFromSparse of the values' tangents, O(1) per pair, not a sumbuild
// of one scattered tensor per pair (the size of the result per pair, and
// an error on no pairs). Counted in the optimised [fwd f] of the
// functions of testdata/ad/build_from_sparse.ks; captured reads its
// buildFromSparse's value too, which is a loop of its own.
func TestSparseTangentsScattered(t *testing.T) {
	file := filepath.Join("testdata", "ad", "build_from_sparse.ks")
	for _, tc := range []struct {
		fn    string
		loops int
	}{{"fold_sq", 1}, {"to_matrix", 1}, {"to_rows", 1}, {"captured", 2}, {"no_pairs", 1}} {
		fn := optimisedFunc(t, file, "[fwd "+tc.fn+"]")
		counts := map[string]int{}
		ir.Inspect(fn.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Prim != nil {
				counts[c.Prim.Name]++
			}
			return true
		})
		if counts["sumbuild"] != 0 || counts["buildFromSparse"] != tc.loops {
			t.Errorf("[fwd %s] has %d sumbuilds and %d buildFromSparse, want 0 and %d:\n%s",
				tc.fn, counts["sumbuild"], counts["buildFromSparse"], tc.loops, ir.FormatExpr(fn.Body))
		}
	}
}

// TestInactiveTangents: forward mode with respect to some arguments
// computes nothing from the others (data), in the function and in the
// functions it calls ([fwdfull g I], derive's activity analysis): a
// callee's forward mode takes the tangents of its active arguments only.
// Counted by the calls of tangent_work, which the hand-written [fwd
// data_term] makes once per tangent of data_term it computes
// (testdata/cost/inactive.ks, counted.c); each was once per data point
// when the data's zero tangents were passed to the callees as values.
func TestInactiveTangents(t *testing.T) {
	cc := countingCC(t)
	src, err := os.ReadFile(filepath.Join("testdata", "cost", "inactive.ks"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		label, call string
		value       float64
		calls       int
	}{
		{"fwd_loss_0", "([fwd loss 0] (tuple 0.5 ds) 1.0)", 14, 0},
		{"fwd_loss", "([fwd loss] (tuple 0.5 ds) (tuple 1.0 (constVec 3 1.0)))", 20, 3},
		{"jac_loss_0", "(index (tuple 0 0) ([jac loss 0] 0.5 ds))", 14, 0},
		{"fwd_walk_0", "([fwd walk 0] (tuple 0.5 ds 0) 1.0)", 14, 0},
		{"fwd_made", "([fwd made] (tuple 0.5 3) (tuple 1.0 (tuple)))", 9, 0},
		{"fwd_both_0", "([fwd both 0] (tuple 0.5 ds) 1.0)", 15, 1},
	}
	var b strings.Builder
	b.Write(src)
	b.WriteString("\n(def main Integer ()\n  (let (ds (Vec_init 1.0 2.0 3.0))\n    (print")
	for k, c := range cases {
		fmt.Fprintf(&b, "\n      %q %s \" \" (ntangent %d) \"\\n\"", c.label+" ", c.call, k)
	}
	b.WriteString(")))\n")
	out := runCounted(t, cc, b.String())
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		var label string
		var value float64
		var n int
		if _, err := fmt.Sscan(lines[i], &label, &value, &n); err != nil || label != c.label {
			t.Fatalf("cannot read %q as %s", lines[i], c.label)
		}
		if math.Abs(value-c.value) > 1e-12 {
			t.Errorf("%s = %g, want %g", c.call, value, c.value)
		}
		if n != c.calls {
			t.Errorf("%s: tangent_work called %d times, want %d", c.call, n, c.calls)
		}
	}
}

// tailRecursion is prodrec, a tail recursion with two accumulators and an
// integrator whose state is a tuple made by another function, whose
// derivatives run a million levels deep. main checks the gradients against
// a hand calculation made with the primal (each dv_k * v_k is 2P, P the
// product; the moments' are a + 2 b v_k), [rev f] against [sufrev f], and
// the integrator's [rev f] against its [fwd f] by the adjoint identity,
// and prints whether the largest errors are small (1 for true).
const tailRecursion = `
(def prodrec Float ((v : Vec Float) (i : Integer) (acc : Float))
  (if (eq i (size v)) acc (prodrec v (add i 1) (mul acc (index i v)))))
(def moments (Tuple Float Float) ((v : Vec Float) (i : Integer) (s : Float) (q : Float))
  (if (eq i (size v))
      (tuple s q)
      (let (x (index i v))
        (moments v (add i 1) (add s x) (add q (mul x x))))))
(def step (Tuple Float Float) ((s : Tuple Float Float) (h : Float))
  (let ((x v) s) (tuple (add x (mul h v)) (sub v (mul h (sin x))))))
(def integ (Tuple Float Float) ((s : Tuple Float Float) (k : Integer) (h : Float))
  (if (eq k 0) s (integ (step s h) (sub k 1) h)))
(def main Integer ()
  (let (n 1000000)
  (let (v (build n (lam (i : Integer) (add 1.0 (mul 0.000001 (sin (to_float i)))))))
  (let (p (prodrec v 0 1.0))
  (let ((dv _ dacc) ([sufrev prodrec] (tuple v 0 2.0) 1.0))
  (let ((dv2 _ dacc2) ([rev prodrec] (tuple v 0 2.0) 1.0))
  (let (x (tuple (tuple 1.0 0.0) n 0.000001))
  (let ((g _ gh) ([rev integ] x (tuple 1.0 0.5)))
  (let ((gx gv) g)
  (let ((tx tv) ([fwd integ] x (tuple (tuple 0.3 -0.2) (tuple) 0.7)))
  (let (adjoint (div (abs (sub (add (mul gx 0.3) (add (mul gv -0.2) (mul gh 0.7)))
                               (add tx (mul 0.5 tv))))
                    (add 1.0 (add (abs tx) (abs tv)))))
  (let (e1 (fold (lam (m_k : Tuple Float Integer)
                   (let ((m k) m_k) (max m (abs (sub (div (mul (index k dv) (index k v)) (mul 2.0 p)) 1.0)))))
                 0.0 (build n (lam (k : Integer) k))))
  (let ((mv _ ms mq) ([sufrev moments] (tuple v 0 0.5 0.25) (tuple 3.0 0.5)))
  (let (e2 (fold (lam (m_k : Tuple Float Integer)
                   (let ((m k) m_k) (max m (abs (sub (index k mv) (add 3.0 (index k v)))))))
                 0.0 (build n (lam (k : Integer) k))))
    (print (lt e1 1e-9) " " (lt (abs (sub (div dacc p) 1.0)) 1e-12) " "
           (lt e2 1e-12) " " ms " " mq " "
           (lt (abs (sub (index 0 dv2) (index 0 dv))) 1e-12) " " (lt (abs (sub dacc2 dacc)) 1e-12) " "
           (lt adjoint 1e-12) "\n")))))))))))))))
`

// TestTailRecursionLoops: the split passes of a tail recursion are loops
// (bog.LoopTail, and the backends' jumps for tail calls), and so are
// [rev f], made from them, and [fwd f], so the derivatives of one a
// million levels deep run in the default stack, as f does: before, each
// recursed as deep as f (the C program failed with "recursion too deep",
// the Go one past its million nested calls), and the integrator's
// forward pass ran the primal recursion again at every level. The
// gradients are checked by hand (see tailRecursion) in both backends, and
// the optimised program is checked to have the loops and no other
// recursion of the passes, with the passes cut and translated (--rev=suf).
func TestTailRecursionLoops(t *testing.T) {
	file := writeAndRun(t, "tail.ks", tailRecursion, "1 1 1 3 0.5 1 1 1\n")
	for _, name := range []string{"prodrec", "moments", "integ"} {
		primal := optimisedFunc(t, file, name)
		for _, pass := range []string{"suffwdloop", "bogup"} {
			f := optimisedFunc(t, file, "["+pass+" "+name+"]")
			if tail, all := len(ir.TailCalls(f)), len(callsOf(f.Body, f)); tail != 1 || all != 1 {
				t.Errorf("[%s %s] calls itself %d times, %d of them tail calls; want one, a tail call", pass, name, all, tail)
			}
			// The value of the level below comes from the loop, not from
			// running the primal recursion below each level again.
			if n := len(callsOf(f.Body, primal)); n != 0 {
				t.Errorf("[%s %s] calls %s %d times, want none", pass, name, name, n)
			}
		}
		for _, pass := range []string{"suffwdpass", "bogrev", "revacc"} {
			if pass == "revacc" && name == "moments" {
				continue // main takes [sufrev moments] only
			}
			f := optimisedFunc(t, file, "["+pass+" "+name+"]")
			if n := len(callsOf(f.Body, f)); n != 0 {
				t.Errorf("[%s %s] calls itself %d times, want none (it starts the loop)", pass, name, n)
			}
		}
	}
	// So are the passes translated from the procedure language.
	suf := optimisedWith(t, "tail.ks", tailRecursion, driver.Options{Rev: "suf"})
	for _, name := range []string{"prodrec", "moments", "integ"} {
		for _, pass := range []string{"suffwdloop", "bogup"} {
			var f *ir.Func
			for _, g := range suf.Funcs {
				if g.Name.String() == "["+pass+" "+name+"]" {
					f = g
				}
			}
			if f == nil {
				t.Errorf("--rev=suf: no [%s %s]", pass, name)
			} else if tail, all := len(ir.TailCalls(f)), len(callsOf(f.Body, f)); tail != 1 || all != 1 {
				t.Errorf("--rev=suf: [%s %s] calls itself %d times, %d of them tail calls; want one, a tail call", pass, name, all, tail)
			}
		}
	}
	// Forward mode of a tail call returns the call's value and tangent
	// as they come: a tail call too.
	f := optimisedFunc(t, file, "[fwdfull integ 0 2]")
	if tail, all := len(ir.TailCalls(f)), len(callsOf(f.Body, f)); tail != 1 || all != 1 {
		t.Errorf("[fwdfull integ 0 2] calls itself %d times, %d of them tail calls; want one, a tail call", all, tail)
	}
}

// callsOf returns the calls of f in e.
func callsOf(e ir.Expr, f *ir.Func) []*ir.Call {
	var out []*ir.Call
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && c.Fn == f {
			out = append(out, c)
		}
		return true
	})
	return out
}

// TestReverseOfRecursionTailCalls: the reverse pass of a recursion that
// uses the value below (prodnt, and Horner's rule, whose x gradient is a
// Float summed over the levels) adds each level's contributions into the
// accumulator it passes down, so its call of itself is a tail call, a
// loop (bog.TailReverse); before, it added them after the call returned.
// Values by hand: Horner's polynomial 1 + 2x + ... + 5x^4 at x = 0.5 has
// gradient (1, x, x^2, x^3, x^4) in c and 2 + 6x + 12x^2 + 20x^3 = 10.5
// in x; prodnt's gradient in v_k is the product of the others.
func TestReverseOfRecursionTailCalls(t *testing.T) {
	const src = `
(def horner Float ((c : Vec Float) (x : Float) (i : Integer))
  (if (eq i (size c)) 0.0 (add (index i c) (mul x (horner c x (add i 1))))))
(def prodnt Float ((v : Vec Float) (i : Integer))
  (if (eq i (size v)) 1.0 (mul (index i v) (prodnt v (add i 1)))))
(def main Integer ()
  (let (c (build 5 (lam (i : Integer) (add 1.0 (to_float i)))))
  (let ((dc dx _) ([sufrev horner] (tuple c 0.5 0) 1.0))
  (let ((dc2 dx2 _) ([rev horner] (tuple c 0.5 0) 1.0))
  (let ((dv _) ([sufrev prodnt] (tuple (build 4 (lam (i : Integer) (add 2.0 (to_float i)))) 0) 1.0))
    (print dc " " dx " " dc2 " " dx2 " " dv "\n"))))))
`
	file := writeAndRun(t, "nontail.ks", src, "[1, 0.5, 0.25, 0.125, 0.0625] 10.5 [1, 0.5, 0.25, 0.125, 0.0625] 10.5 [60, 40, 30, 24]\n")
	for _, name := range []string{"horner", "prodnt"} {
		var f *ir.Func
		prog, err := driver.Load([]string{file}, driver.Derived)
		if err == nil {
			err = driver.Optimise(prog, driver.Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range prog.Funcs {
			if g.Name.Outer() == "bogrev" && g.Name.Base == name {
				f = g
			}
		}
		if f == nil {
			t.Fatalf("no [bogrev %s]", name)
		}
		if tail, all := len(ir.TailCalls(f)), len(callsOf(f.Body, f)); tail != 1 || all != 1 {
			t.Errorf("[bogrev %s] calls itself %d times, %d of them tail calls; want one, a tail call:\n%s", name, all, tail, ir.FormatExpr(f.Body))
		}
	}
}

// writeAndRun writes src to a file named name, runs its main in C and Go,
// checks that each prints want and exits 0, and returns the file's path.
func writeAndRun(t *testing.T, name, src, want string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"c", "go"} {
		if !wantBackend(backend) {
			continue
		}
		if r := runProgram(t, backend, file); r.stdout != want || r.code != 0 {
			t.Errorf("%s: exit %d, printed %q, want %q (stderr: %s)", backend, r.code, r.stdout, want, r.stderr)
		}
	}
	return file
}

// TestGatherComputesReadElements: a vector read by one loop at indices
// of its choosing (a gather) has its elements computed where they are
// read when the loop reads fewer than it has (optimise's gather pass),
// and is made as written when it reads more: never more operations than
// the program as written, and about as many as the loop reads. Counted
// by the evaluator (eval.CallCounting) on the program optimised and as
// written: f reads 10 elements of 1000, fc too of a vector a call makes,
// g 300 of 100, h 2 x 5 of 1000; an element costs a sum of 20 terms.
func TestGatherComputesReadElements(t *testing.T) {
	src := `(def elem Float ((x : Float) (i : Integer))
  (sumbuild 20 (lam (k : Integer) (sin (mul x (to_float (add i k)))))))
(def f Float ((x : Float) (n : Integer) (m : Integer))
  (let (v (build n (lam (i : Integer) (elem x i))))
    (sumbuild m (lam (j : Integer) (index (sub (sub n 1) (mul 7 j)) v)))))
(def made (Vec Float) ((x : Float) (n : Integer))
  (let (y (mul x 2.0))
    (build n (lam (i : Integer) (elem y i)))))
(def fc Float ((x : Float) (n : Integer) (m : Integer))
  (let (v (made x n))
    (sumbuild m (lam (j : Integer) (index (sub (sub n 1) (mul 7 j)) v)))))
(def g Float ((x : Float) (n : Integer))
  (let (v (build n (lam (i : Integer) (elem x i))))
    (sumbuild (mul 3 n) (lam (j : Integer) (index (div j 3) v)))))
(def h (Vec Float) ((x : Float) (n : Integer) (m : Integer))
  (let (v (build n (lam (i : Integer) (elem x i))))
    (build m (lam (j : Integer) (sub (index (mul 2 j) v) (index (add (mul 2 j) 1) v))))))
`
	compareCounts(t, src, []countCase{
		{"f", []eval.Value{0.001, int64(1000), int64(10)}, 0.02},
		{"fc", []eval.Value{0.001, int64(1000), int64(10)}, 0.02},
		{"g", []eval.Value{0.001, int64(100)}, 1.01},
		{"h", []eval.Value{0.001, int64(1000), int64(5)}, 0.02},
	})
}

// TestRowsComputeSharedOnce: a loop over the 3 coordinates of n points,
// each coordinate computing its point (a call running a loop), runs by
// rows of 3 (optimise's rows pass), computing each point once instead of
// three times: a third of the operations as written, and a little more,
// for a build (f) and a sum (g). Counted by the evaluator, as
// TestGatherComputesReadElements. The reverse loop of [rev g] (a fold
// over the coordinates) runs by rows too: the forward pass of each point
// once a row, so that the gradient stays within 6 times g optimised
// (7.4 when each coordinate ran its point's forward pass).
func TestRowsComputeSharedOnce(t *testing.T) {
	src := `(def point (Vec Float) ((x : Float) (i : Integer))
  (build 3 (lam (r : Integer)
    (sumbuild 50 (lam (b : Integer) (sin (mul x (to_float (add i (add r b))))))))))
(def f (Vec Float) ((x : Float) (n : Integer))
  (build (mul 3 n) (lam (k : Integer)
    (let ((i (div k 3)) (p (point x i)))
      (mul (index (sub k (mul 3 i)) p) (to_float k))))))
(def g Float ((x : Float) (n : Integer))
  (sumbuild (mul 3 n) (lam (k : Integer)
    (let ((i (div k 3)) (p (point x i)))
      (mul (index (sub k (mul 3 i)) p) (to_float k))))))
(gdef rev [g (Tuple Float Integer)])
`
	optimised := compareCounts(t, src, []countCase{
		{"f", []eval.Value{0.001, int64(100)}, 0.4},
		{"g", []eval.Value{0.001, int64(100)}, 0.4},
	})
	count := func(name string, args ...eval.Value) int64 {
		for _, f := range optimised.Funcs {
			if f.Name.String() == name {
				_, n, err := eval.CallCounting(optimised, f, costLimit, args...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return n
			}
		}
		t.Fatalf("no function %s", name)
		return 0
	}
	g := count("g", 0.001, int64(100))
	rev := count("[rev g]", eval.Tuple{0.001, int64(100)}, 1.0)
	t.Logf("[rev g]: %d operations, g %d", rev, g)
	if rev > 6*g {
		t.Errorf("[rev g]: %d operations, more than 6 times g's %d", rev, g)
	}
}

// A countCase is a function of a program called with args, and the
// largest ratio allowed of the operations it runs optimised to those it
// runs as written.
type countCase struct {
	name string
	args []eval.Value
	most float64
}

// compareCounts loads src as written and optimised, and checks for each
// case that both give the same value and that the optimised count of
// operations (eval.CallCounting) is at most most times the written one.
// It returns the optimised program.
func compareCounts(t *testing.T, src string, cases []countCase) *ir.Program {
	t.Helper()
	file := filepath.Join(t.TempDir(), "count.ks")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := driver.Load([]string{file}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	optimised, err := driver.Load([]string{file}, driver.Derived)
	if err == nil {
		err = driver.Optimise(optimised, driver.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		var before, after int64
		var want, got eval.Value
		for _, f := range written.Funcs {
			if f.Name.String() == tc.name {
				want, before, err = eval.CallCounting(written, f, costLimit, tc.args...)
			}
		}
		for _, f := range optimised.Funcs {
			if f.Name.String() == tc.name && err == nil {
				got, after, err = eval.CallCounting(optimised, f, costLimit, tc.args...)
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if before == 0 || after == 0 {
			t.Fatalf("%s: not found, or no operation counted", tc.name)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v optimised, %v as written", tc.name, got, want)
		}
		t.Logf("%s: %d operations optimised, %d as written", tc.name, after, before)
		if r := float64(after) / float64(before); r > tc.most {
			t.Errorf("%s: %d operations optimised, %d as written: %.3g times, want at most %g", tc.name, after, before, r, tc.most)
		}
	}
	return optimised
}

// TestSmallVectorsNotAllocated: bundle adjustment's 3-vectors (a point
// moved into the camera's frame, the rotation's axis, cross products, a
// rotated point) are kept as their elements (optimise/smallvec.go): the
// primal project makes none (it made 3 and called rodrigues, which made
// and called cross for 3 more), and ba_objective makes only its results;
// [jac reproj]'s split passes keep some whole in their records. Counted
// in the optimised program, through the functions called (each call of
// a function adding what its body makes), not timed.
func TestSmallVectorsNotAllocated(t *testing.T) {
	file := filepath.Join("..", "bench", "gradbench", "evals", "ba.ks")
	for _, tc := range []struct {
		fn   string
		most int
	}{
		{"project", 0},
		{"reproj", 0},
		{"ba_objective", 3},
		{"[jac reproj]", 24},
	} {
		fn := optimisedFunc(t, file, tc.fn)
		n := vectorsMade(fn.Body)
		t.Logf("%s: %d vectors made", tc.fn, n)
		if n > tc.most {
			t.Errorf("%s makes %d vectors (builds, Vec_inits and constVecs, through its calls), want at most %d:\n%s", tc.fn, n, tc.most, ir.FormatExpr(fn.Body))
		}
	}
}

// vectorsMade counts the builds, Vec_inits, constVecs, zeros and deltaVecs in e and, for
// each call of a function, in its body (e calls no recursion).
func vectorsMade(e ir.Expr) int {
	n := 0
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok {
			if c.Prim != nil && (c.Prim.Name == "build" || c.Prim.Name == "Vec_init" || c.Prim.Name == "constVec" || c.Prim.Name == "$zerosOfShape" || c.Prim.Name == "deltaVec") {
				n++
			}
			if c.Fn != nil && c.Fn.Body != nil {
				n += vectorsMade(c.Fn.Body)
			}
		}
		return true
	})
	return n
}
