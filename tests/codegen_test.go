package tests

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
)

// TestIndexChecks checks which index checks the C backend leaves out:
// those of a loop index into the vector whose size bounds the loop, or
// into one asserted to be as large (bounds.go). Each case is a def f;
// want is the number of index checks left in its C (a sum of Floats emits
// its elements twice, see sumFloats in emit/c), and fast the number
// of those in the code that runs when the test before a versioned loop
// passes (the others are in the loop's second copy, which runs when it
// fails: loop versioning, emit/c/version.go).
func TestIndexChecks(t *testing.T) {
	for _, tc := range []struct {
		name, src  string
		want, fast int
	}{
		{"own size", `(def f (Vec Float) (v : Vec Float) (build (size v) (lam (i : Integer) (mul 2.0 (index i v)))))`, 0, 0},
		{"sum", `(def f Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (index i v))))`, 0, 0},
		{"size bound to a name", `(def f (Vec Float) (v : Vec Float) (let (n (size v)) (build n (lam (i : Integer) (index i v)))))`, 0, 0},
		{"other vector", `(def f (Vec Float) ((v : Vec Float) (w : Vec Float)) (build (size v) (lam (i : Integer) (index i w))))`, 1, 0},
		{"asserted sizes", `(def f (Vec Float) ((v : Vec Float) (w : Vec Float)) (sub v w))`, 0, 0},
		{"shifted index", `(def f (Vec Float) (v : Vec Float) (build (size v) (lam (i : Integer) (index (add i 1) v))))`, 1, 0},
		{"nested", `(def f (Vec Float) (m : Vec (Vec Float)) (build (size m) (lam (i : Integer) (sumbuild (size (index i m)) (lam (j : Integer) (index j (index i m)))))))`, 0, 0},
		// The outer loop's test proves both; the inner loop of its second
		// copy has a test of its own, and a third copy.
		{"other loop's bound", `(def f Float ((v : Vec Float) (w : Vec Float)) (sumbuild (size v) (lam (i : Integer) (sumbuild (size w) (lam (j : Integer) (mul (index i w) (index j v)))))))`, 4, 0},
		{"matrix", `(def f (Tensor 2 Float) (m : Tensor 2 Float) (build (size m) (lam (ij : Tuple Integer Integer) (index ij m))))`, 0, 0},
		{"assert in a branch", `(def f Float ((v : Vec Float) (w : Vec Float) (b : Bool))
  (add (if b (assert (eq (size v) (size w)) 1.0) 2.0)
       (sumbuild (size v) (lam (i : Integer) (index i w)))))`, 2, 0},
		// Gates stored one after another, as LSTM's weights are: a
		// constant times the count is a bound too (the test keeps it from
		// overflowing).
		{"strided blocks", `(def f (Vec Float) ((v : Vec Float) (w : Vec Float))
  (let (b (size v)) (build b (lam (j : Integer) (add (index (add j b) w) (index (add j (mul 3 b)) w))))))`, 2, 0},
		// An element read as an index is not known.
		{"index read from a vector", `(def f Float ((v : Vec Float) (w : Vec Integer)) (sumbuild (size w) (lam (i : Integer) (index (index i w) v))))`, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := cOf(t, tc.src, "ksu_f")
			got, fast := strings.Count(body, "ks_check_index"), strings.Count(withoutFallbacks(body), "ks_check_index")
			if got != tc.want || fast != tc.fast {
				t.Errorf("%d index checks, %d of them where the loops' tests pass; want %d and %d:\n%s", got, fast, tc.want, tc.fast, body)
			}
		})
	}
}

// TestFusion checks that a vector read only by the loop over its indices is
// not made: the loop computes each element where it reads it. want is the
// number of loops and of allocations left in f's C.
func TestFusion(t *testing.T) {
	for _, tc := range []struct {
		name, src     string
		loops, allocs int
	}{
		{"chain", `(def f (Vec Float) ((a : Vec Float) (b : Vec Float)) (exp (mul 2.0 (sub a b))))`, 1, 1},
		{"sum of a chain", `(def f Float ((a : Vec Float) (b : Vec Float)) (sum (exp (sub a b))))`, 1, 0},
		{"let-bound", `(def f Float (a : Vec Float)
  (let (e (build (size a) (lam (i : Integer) (exp (index i a)))))
    (sumbuild (size e) (lam (j : Integer) (mul 2.0 (index j e))))))`, 1, 0},
		// Read twice: computing each element twice could cost more than
		// the vector, so it stays.
		{"read twice", `(def f Float (a : Vec Float)
  (let (e (build (size a) (lam (i : Integer) (exp (index i a)))))
    (sumbuild (size e) (lam (j : Integer) (mul (index j e) (index j e))))))`, 2, 1},
		// Read at another index than the loop's.
		{"shifted", `(def f Float (a : Vec Float)
  (let (e (build (size a) (lam (i : Integer) (exp (index i a)))))
    (sumbuild (sub (size e) 1) (lam (j : Integer) (index (add j 1) e)))))`, 2, 1},
		// The vector escapes into a call (of a function with a loop, which
		// inline-leaves leaves alone).
		{"escapes", `(def g Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (mul 2.0 (index i v)))))
(def f Float (a : Vec Float) (g (exp a)))`, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := cOf(t, tc.src, "ksu_f")
			if got := countLoops(withoutFallbacks(body)); got != tc.loops {
				t.Errorf("%d loops, want %d:\n%s", got, tc.loops, body)
			}
			if got := strings.Count(body, "ks_alloc_array("); got != tc.allocs {
				t.Errorf("%d allocations, want %d:\n%s", got, tc.allocs, body)
			}
		})
	}
}

// countLoops counts the loops of C code, a sum of Floats in lanes (a loop
// by steps of 4 with a loop over the lanes inside, then a loop over the
// elements left) as one.
func countLoops(c string) int {
	return strings.Count(c, "for (int64_t") - len(laneRest.FindAllString(c, -1)) + len(laneLoop.FindAllString(c, -1))
}

// laneRest matches the loop over the elements left after the last step by 4.
var laneRest = regexp.MustCompile(`for \(int64_t l_\d+ = 0;`)

var laneLoop = regexp.MustCompile(`for \(; \w+ <= [\w.]+ - 4;`)

// versionedIf matches the test before a loop emitted twice (loop
// versioning, emit/c/version.go).
var versionedIf = regexp.MustCompile(`^(\s*)if \([\w.]+ <= 0 \|\| \(.*\)\) \{$`)

// withoutFallbacks returns C code without the second copies of versioned
// loops (the loops with their index checks, run when the test before them
// fails), so that counting loops counts each once.
func withoutFallbacks(c string) string {
	var out []string
	var indents []string // of the versioned ifs open
	skip := ""           // the closing line of the copy being left out
	for _, l := range strings.Split(c, "\n") {
		switch {
		case skip != "":
			if l == skip {
				skip = ""
			}
			continue
		case versionedIf.MatchString(l):
			indents = append(indents, versionedIf.FindStringSubmatch(l)[1])
		case len(indents) > 0 && l == indents[len(indents)-1]+"} else {":
			skip = indents[len(indents)-1] + "}"
			indents = indents[:len(indents)-1]
			out = append(out, skip)
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// cOf returns the C definition of the function named name in the program src.
func cOf(t *testing.T, src, name string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "f.ks")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prog, err := driver.LoadWith([]string{file}, driver.Derived, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	out, err := driver.EmitC(prog, cemit.Options{Prefix: "ks"})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?ms)^(?:KS_CLONES )?static [^;{]*\b` + name + `\(ks_ctx[^;{]*\{.*?^\}`).FindString(out.C)
	if m == "" {
		t.Fatalf("no definition of %s in:\n%s", name, out.C)
	}
	return m
}

// TestShortSums checks sums of Floats of constant length: up to 8 terms
// the C backend emits them as straight-line code, with no loop (emit/c's
// straightSum), and every backend adds their terms in the one summation
// order (language.md): term k into partial sum k mod 4, from -0.0, then
// (s0 + s1) + (s2 + s3). The terms are chosen so that adding them from
// left to right, or the partial sums from left to right, gives other
// values; the printed values are those sums minus 1e16 (print shows 6
// digits).
func TestShortSums(t *testing.T) {
	const longest = 8 // the longest sum emitted without a loop
	for n := 1; n <= longest+1; n++ {
		src := fmt.Sprintf(`(def f Float (v : Vec Float) (sumbuild %d (lam (k : Integer) (mul 2.0 (index k v)))))`, n)
		body := cOf(t, src, "ksu_f")
		want := 0
		if n > longest {
			want = 1
		}
		if loops := countLoops(withoutFallbacks(body)); loops != want {
			t.Errorf("a sum of %d terms: %d loops in its C, want %d:\n%s", n, loops, want, body)
		}
	}
	terms := []float64{1, 1, 1e16, 1, -1e16, 1, 1e16, 1, 1}
	negZero := math.Copysign(0, -1)
	var src, want strings.Builder
	src.WriteString("(def show Integer (v : Vec Float)\n  (let (")
	differ := 0
	for n := 1; n <= len(terms); n++ {
		fmt.Fprintf(&src, "(s%d (print (sub (sumbuild %d (lam (k : Integer) (index k v))) 1e16) \"\\n\"))\n    ", n, n)
		lanes := [4]float64{negZero, negZero, negZero, negZero}
		leftToRight := terms[0]
		for k, x := range terms[:n] {
			lanes[k%4] += x
			if k > 0 {
				leftToRight += x
			}
		}
		sum := (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
		if sum != leftToRight && sum != ((lanes[0]+lanes[1])+lanes[2])+lanes[3] {
			differ++
		}
		fmt.Fprintf(&want, "%.6g\n", sum-1e16)
	}
	if differ < 4 {
		t.Fatalf("the terms tell the summation order from the others at %d lengths only", differ)
	}
	src.WriteString(") 0))\n(def main Integer ()\n  (show (build 9 (lam (j : Integer)")
	for j, x := range terms[:len(terms)-1] {
		fmt.Fprintf(&src, " (if (eq j %d) %#g", j, x)
	}
	fmt.Fprintf(&src, " %#g%s))))\n", terms[len(terms)-1], strings.Repeat(")", len(terms)-1))
	file := writeAndRun(t, "sums.ks", src.String(), want.String())
	if r, err := evalProgram(file); err != nil || r.stdout != want.String() {
		t.Errorf("the evaluator printed %q (%v), want %q", r.stdout, err, want.String())
	}
}
