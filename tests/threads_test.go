package tests

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
	"github.com/ksc-lang/ksc/internal/ksgen"
)

// TestThreads runs every program of testdata/programs and testdata/runtime
// through the C backend with parallel loops (ksc --threads) on three
// threads and on one, which must print exactly the same, and requires what
// the serial build gives: the same runtime error with the same position and
// the same calls that led there, and the same output but for the last bits
// of numbers a reduction computes (a reverse pass's sums in chunks,
// emit/c's reduce.go).
func TestThreads(t *testing.T) {
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the C backend is not selected")
	}
	for _, dir := range []string{"programs", "runtime"} {
		for _, file := range programFiles(t, dir) {
			name := strings.TrimSuffix(file, ".ks")
			t.Run(strings.TrimPrefix(name, "testdata/"), func(t *testing.T) {
				t.Parallel()
				serial := runProgram(t, "c", file)
				par := runProgram(t, "c-threads", file)
				if par.code != serial.code || !sameNumbers(par.stdout, serial.stdout, 1e-12) || par.stderr != serial.stderr {
					t.Errorf("with threads: status %d, stdout:\n%s\nstderr:\n%s\nwithout: status %d, stdout:\n%s\nstderr:\n%s",
						par.code, par.stdout, par.stderr, serial.code, serial.stdout, serial.stderr)
				}
			})
		}
	}
}

// TestThreadsParallelise checks that --threads does make parallel loops
// of the outer build and sum of a program, and none inside loops or
// around prints (a test of the test above, which cannot fail if nothing
// runs in parallel).
func TestThreadsParallelise(t *testing.T) {
	src := `
(def f Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer)
    (sum (build 3 (lam (j : Integer) (mul (index i v) (to_float j))))))))
(def g (Vec Float) (v : Vec Float)
  (build (size v) (lam (i : Integer) (let (u (print i)) (index i v)))))
(def main Integer () (let (u (print (f (Vec_init 1.0 2.0)) (g (Vec_init 1.0)))) 0))
`
	dir := t.TempDir()
	file := dir + "/par.ks"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prog, err := driver.LoadWith([]string{file}, driver.Derived, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{}); err != nil {
		t.Fatal(err)
	}
	out, err := driver.EmitC(prog, cemit.Options{Prefix: "ks", Main: true, Threads: true})
	if err != nil {
		t.Fatal(err)
	}
	// One parallel loop: f's sum. Not the build inside it, not g's build
	// (it prints), not main's.
	if n := strings.Count(out.C, "KS_OMP(for schedule(static)"); n != 1 {
		t.Errorf("%d parallel loops, want 1:\n%s", n, out.C)
	}
}

// number matches a number in a program's output.
var number = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?`)

// sameNumbers reports whether outputs a and b are the same text with the
// same numbers, but for a relative difference of at most rel.
func sameNumbers(a, b string, rel float64) bool {
	if number.ReplaceAllString(a, "#") != number.ReplaceAllString(b, "#") {
		return false
	}
	x, y := number.FindAllString(a, -1), number.FindAllString(b, -1)
	for i := range x {
		if x[i] == y[i] {
			continue
		}
		p, err1 := strconv.ParseFloat(x[i], 64)
		q, err2 := strconv.ParseFloat(y[i], 64)
		if err1 != nil || err2 != nil || math.Abs(p-q) > rel*math.Max(math.Abs(p), math.Abs(q)) {
			return false
		}
	}
	return true
}

// reductionSource has a reverse pass that sums over rows ([rev cost]: the
// sum over i of [rev rowcost]) and one that is a fold reading its state
// ([rev prod], the reverse of a product of sums, whose loop body is as
// heavy). It prints the gradient, and the
// gradient's difference from forward mode's directional derivatives times
// 1e15, which shows the order of the reduction's additions.
const reductionSource = `
(def rowcost Float ((w : Vec Float) (x : Vec Float))
  (log (add 1.0 (sumbuild (size x) (lam (j : Integer) (exp (mul (index j w) (index j x))))))))
(def cost Float ((w : Vec Float) (xs : Vec (Vec Float)))
  (sumbuild (size xs) (lam (i : Integer) (rowcost w (index i xs)))))
(gdef rev [cost (Tuple (Vec Float) (Vec (Vec Float)))])
(gdef fwd [cost (Tuple (Vec Float) (Vec (Vec Float)))])
(def prod Float (xs : Vec (Vec Float))
  (fold (lam (acc_x : Tuple Float (Vec Float))
          (let ((acc x) acc_x) (mul acc (sumbuild (size x) (lam (j : Integer) (sin (index j x)))))))
        1.0 xs))
(gdef rev [prod (Vec (Vec Float))])
(def main Integer ()
  (let ((n 1000)
        (d 5)
        (w (build d (lam (j : Integer) (div (to_float (add j 1)) 7.0))))
        (xs (build n (lam (i : Integer)
              (build d (lam (j : Integer) (sin (to_float (add (mul i d) j))))))))
        (g ([rev cost] (tuple w xs) 1.0))
        (gw (get$1$2 g))
        (zs (build n (lam (i : Integer) (build d (lam (j : Integer) 0.0)))))
        (diffs (build d (lam (k : Integer)
                 (let (dw (build d (lam (j : Integer) (if (eq j k) 1.0 0.0))))
                   (mul 1e15 (sub (index k gw) ([fwd cost] (tuple w xs) (tuple dw zs)))))))))
    (let (u (print gw "\n" diffs "\n" ([rev prod] (build 3 (lam (i : Integer) (Vec_init (to_float i) 0.5))) 1.0) "\n"
                   (index 7 (get$2$2 g)) "\n" (index 999 (get$2$2 g)) "\n")) 0)))
`

// TestThreadsReduction checks a reduction on threads (emit/c's reduce.go):
// [rev cost]'s sum over rows is made one and [rev prod]'s fold is not; on
// one, two and three threads the program prints exactly the same, down to
// the last bits of the sums; and the gradient is the serial build's.
func TestThreadsReduction(t *testing.T) {
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the C backend is not selected")
	}
	dir := t.TempDir()
	file := dir + "/reduction.ks"
	if err := os.WriteFile(file, []byte(reductionSource), 0o644); err != nil {
		t.Fatal(err)
	}
	prog, err := driver.LoadWith([]string{file}, driver.Derived, driver.Options{CheckIR: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	out, err := driver.EmitC(prog, cemit.Options{Prefix: "ks", Main: true, Threads: true})
	if err != nil {
		t.Fatal(err)
	}
	// One reduction: its chunks' states are an array. The gradient with
	// respect to xs, updated at row i by iteration i only, is updated in
	// place by every chunk rather than zeroed in each.
	if n := strings.Count(out.C, "[KS_PAR_CHUNKS];"); n != 1 {
		t.Errorf("%d reductions, want 1 ([rev cost]'s sum over rows)", n)
	}
	if n := len(regexp.MustCompile(`(?m)^ *st_\d+\.f\d+ = acc_\d+\.f\d+;$`).FindAllString(out.C, -1)); n != 1 {
		t.Errorf("%d fields of a chunk's state updated in place, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exe, err := buildC(ctx, t, prog, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	var first result
	for _, threads := range []string{"1", "2", "3"} {
		r, err := runOnThreads(ctx, exe, threads)
		if err != nil {
			t.Fatal(err)
		}
		if r.code != 0 {
			t.Fatalf("on %s threads: status %d, stderr:\n%s", threads, r.code, r.stderr)
		}
		if threads == "1" {
			first = r
		} else if r.stdout != first.stdout {
			t.Errorf("on %s threads:\n%s\non 1:\n%s", threads, r.stdout, first.stdout)
		}
	}
	serial := runProgram(t, "c", file)
	par, ser := strings.Split(first.stdout, "\n"), strings.Split(serial.stdout, "\n")
	// The gradient with respect to w is a sum in chunks; the rows of the
	// gradient with respect to xs are each one iteration's, the same.
	if len(par) != len(ser) || !sameNumbers(par[0], ser[0], 1e-12) || par[2] != ser[2] || par[3] != ser[3] || par[4] != ser[4] {
		t.Errorf("with threads:\n%s\nwithout:\n%s", first.stdout, serial.stdout)
	}
	t.Logf("with threads:\n%s\nwithout:\n%s", first.stdout, serial.stdout)
}

// TestRandomProgramsThreads runs the derivatives of generated programs
// (internal/ksgen, as TestRandomPrograms) built with --threads: the same
// checks (against forward mode, finite differences and the adjoint
// identity), and the same output on one thread and on three (tryProgram).
// Many of these programs' reverse passes are reductions (reduce.go).
func TestRandomProgramsThreads(t *testing.T) {
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the C backend is not selected")
	}
	n := 100
	if testing.Short() {
		n = 25
	}
	var progs []*ksgen.Program
	var checks []*check
	var all []int
	for seed := int64(1); seed <= int64(n); seed++ {
		p := ksgen.Generate(seed, fmt.Sprintf("p%d_", seed))
		args, dr := p.Specs()
		progs = append(progs, p)
		checks = append(checks, &check{name: p.Entry().Name, args: specs(args), dr: spec(dr), fd: true, lean: true})
		all = append(all, len(all))
	}
	strategyFailures(t, progs, checks, all, "lm", []string{"c-threads"}) // reports what fails
}

// TestThreadsWarnings compiles the benchmarks' libraries built with
// --threads, with OpenMP and without (where the parallel loops run on the
// calling thread), at -O2 with -Wall -Wextra -Werror: issue 14 wants no
// warning either way (gcc warns of unknown pragmas without OpenMP, of
// variables live across the loops' setjmp, and of an inline function
// holding a setjmp, which only optimisation reports).
func TestThreadsWarnings(t *testing.T) {
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the C backend is not selected")
	}
	for _, file := range []string{"bench/gmm.ks", "bench/lstm.ks"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(filepath.Join("..", file))
			if err != nil {
				t.Fatal(err)
			}
			prog := optimisedText(t, filepath.Base(file), string(text))
			out, err := driver.EmitC(prog, cemit.Options{Prefix: "bench", Library: true, Threads: true})
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(t.TempDir(), "bench.c")
			if err := os.WriteFile(src, []byte(out.C), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, flags := range [][]string{nil, {"-fopenmp"}} {
				args := append([]string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-c", "-o", os.DevNull, src}, flags...)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				msg, err := baseCC().Command(ctx, args...).CombinedOutput()
				cancel()
				if err != nil {
					t.Errorf("with %q: %v\n%s", flags, err, msg)
				}
			}
		})
	}
}
