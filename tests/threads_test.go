package tests

import (
	"os"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
)

// TestThreads runs every program of testdata/programs and testdata/runtime
// through the C backend with parallel loops (ksc --threads) on three
// threads, and requires exactly what the serial build gives: the same
// output, and the same runtime error with the same position and the same
// calls that led there.
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
				if par.code != serial.code || par.stdout != serial.stdout || par.stderr != serial.stderr {
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
	if n := strings.Count(out.C, "#pragma omp parallel for"); n != 1 {
		t.Errorf("%d parallel loops, want 1:\n%s", n, out.C)
	}
}
