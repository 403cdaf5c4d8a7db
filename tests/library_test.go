package tests

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
)

// TestLibrary builds testdata/library/model.ks with ksc build, compiles
// host.c against the library and its header, and runs it: host.c calls
// functions taking and returning vectors and tuples and checks results
// and the error paths, as a hostile host would. It runs optimised, and
// with both the library and the host under the sanitizers.
func TestLibrary(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"O2", []string{"-O2"}},
		{"sanitizers", sanFlags},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := runHost(t, "library", "model", "", c.flags...)
			if !strings.HasSuffix(out, "ok\n") {
				t.Errorf("host printed:\n%s", out)
			}
		})
	}
}

// TestHostileNames builds testdata/names/model.ks, whose edefs are named
// like C library functions and macros (malloc, isnan) and like the
// generated C's own names (ks_alloc, ksu_twice), and whose defs like the
// library's interface (ctx_new, OK) and C's (free, int); host.c links it,
// supplies two of the edefs and calls it.
func TestHostileNames(t *testing.T) {
	out := runHost(t, "names", "model", "", "-O1")
	if !strings.HasSuffix(out, "ok\n") {
		t.Errorf("host printed:\n%s", out)
	}
}

// TestContextPerThread runs testdata/threads/host.c, four threads calling the
// library at once with a context each, with the library and the host
// built with -fsanitize=thread: one context per thread is the rule, and
// there must be no race between contexts (no global mutable state).
func TestContextPerThread(t *testing.T) {
	out := runHost(t, "threads", "model", "", "-O1", "-g", "-fsanitize=thread")
	if !strings.HasSuffix(out, "ok\n") || strings.Contains(out, "ThreadSanitizer") {
		t.Errorf("host printed:\n%s", out)
	}
}

// TestArenaReuse checks that loops reuse the memory of their iterations:
// f of testdata/arena/loops.ks allocates a vector per row of its input,
// and [rev f] three, so without reuse the context would grow with the
// rows; with it, f keeps to one chunk of the arena and [rev f] to its
// result (the gradient, as large as the input) and one chunk.
func TestArenaReuse(t *testing.T) {
	const rows, cols = 8000, 64
	out := runHost(t, "arena", "loops", strconv.Itoa(rows), "-O2")
	bytes := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 {
			bytes[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	const chunk = 1 << 20
	input := rows * cols * 8
	if got := bytes["f"]; got == 0 || got > chunk {
		t.Errorf("f holds %d bytes after a call, want at most %d (host printed %q)", got, chunk, out)
	}
	// The gradient with respect to the rows is as large as the input; the
	// arena's chunks double, so it may take up to twice that.
	if got := bytes["rev"]; got == 0 || got > 2*input+chunk {
		t.Errorf("[rev f] holds %d bytes after a call, want at most %d (host printed %q)", got, 2*input+chunk, out)
	}
	// A fold whose state is a new vector each step keeps one state (copied
	// down), not one per step, and the copies hold the right values: y1 is
	// mu_1/2 + (mu_1/2) 0.9998^n by the closed form of the Euler steps.
	if got := bytes["steps"]; got == 0 || got > chunk {
		t.Errorf("steps holds %d bytes after a call, want at most %d (host printed %q)", got, chunk, out)
	}
	// So does a fold whose state is several new tensors, one a vector of
	// vectors (steps2, copied through the scratch buffer, which holds one
	// state: 1600 bytes): z holds twice the previous step's Euler step.
	if got, want := bytes["steps2"], chunk+4096; got == 0 || got > want {
		t.Errorf("steps2 holds %d bytes after a call, want at most %d (host printed %q)", got, want, out)
	}
	var y1s []float64
	var z11 float64
	for _, l := range strings.Split(out, "\n") {
		var y1 float64
		if _, err := fmt.Sscanf(l, "y1 %g", &y1); err == nil {
			y1s = append(y1s, y1)
		}
		fmt.Sscanf(l, "z11 %g", &z11)
	}
	euler := func(k int) float64 { return 0.005 + 0.005*math.Pow(0.9998, float64(k)) }
	if len(y1s) != 2 {
		t.Fatalf("host printed %d values of y1, want 2: %q", len(y1s), out)
	}
	for i, name := range []string{"steps", "steps2"} {
		if want := euler(rows); math.Abs(y1s[i]-want) > 1e-12 {
			t.Errorf("%s: y1 = %.17g, want %.17g", name, y1s[i], want)
		}
	}
	if want := 2 * 0.0001 * (0.01 - 2*euler(rows-1)); math.Abs(z11-want) > 1e-15 {
		t.Errorf("steps2: z[1][1] = %.17g, want %.17g", z11, want)
	}
	// A build of vectors each made with a temporary 32 times as large
	// keeps its elements (rows x 2 doubles and their headers: 256 KB, and
	// the scratch buffer), not every row's temporary too (4 MB more), and
	// the kept rows hold the right values: row i is (sum_j i mu_j, i mu_1).
	if got, want := bytes["blocks"], chunk+4096; got == 0 || got > want {
		t.Errorf("blocks holds %d bytes after a call, want at most %d (host printed %q)", got, want, out)
	}
	var b0, b1 float64
	for _, l := range strings.Split(out, "\n") {
		fmt.Sscanf(l, "b0 %g", &b0)
		fmt.Sscanf(l, "b1 %g", &b1)
	}
	last := float64(rows - 1)
	if want0, want1 := last*0.01*float64(cols*(cols-1)/2), last*0.01; math.Abs(b0-want0) > 1e-12*want0 || b1 != want1 {
		t.Errorf("blocks: last row (%.17g, %.17g), want (%.17g, %.17g)", b0, b1, want0, want1)
	}
	// A reset keeps one chunk as large as the call used, so the same call
	// again allocates nothing more.
	if got, kept := bytes["again"], bytes["reset"]; kept != bytes["rev"] || got != kept {
		t.Errorf("after a reset the context holds %d bytes and after [rev f] again %d, want %d both (host printed %q)", kept, got, bytes["rev"], out)
	}
}

// runHost builds testdata/DIR/NAME.ks into libNAME.so with ksc build,
// compiles testdata/DIR/host.c against it, both with the C flags given,
// runs it with the argument arg (if any) and returns what it printed.
func runHost(t *testing.T, dir, name, arg string, flags ...string) string {
	t.Helper()
	needCC(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exe := buildHost(ctx, t, t.TempDir(), dir, name, flags...)
	var args []string
	if arg != "" {
		args = append(args, arg)
	}
	out, err := exec.CommandContext(ctx, exe, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("host failed: %v\n%s", err, out)
	}
	return string(out)
}

// buildHost builds testdata/DIR/NAME.ks into tmp/libNAME.so and
// testdata/DIR/host.c against it into tmp/host, both with the C flags
// given, and returns the host's path.
func buildHost(ctx context.Context, t testing.TB, tmp, dir, name string, flags ...string) string {
	t.Helper()
	prog, err := driver.Load([]string{filepath.Join("testdata", dir, name+".ks")}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	cc := baseCC(append([]string{"-Werror"}, flags...)...)
	if err := driver.BuildLibrary(ctx, prog, name, tmp, cc, ""); err != nil {
		t.Fatal(err)
	}
	// The library exports only NAME_ symbols.
	if out, err := exec.CommandContext(ctx, "nm", "-D", "--defined-only", filepath.Join(tmp, "lib"+name+".so")).Output(); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			if len(f) == 3 && (f[1] == "T" || f[1] == "D" || f[1] == "B") && !strings.HasPrefix(f[2], name+"_") {
				t.Errorf("the library exports %s", f[2])
			}
		}
	}
	host, err := filepath.Abs(filepath.Join("testdata", dir, "host.c"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(tmp, "host")
	ccArgs := append([]string{"-std=c11", "-Wall", "-Wextra", "-Werror"}, flags...)
	ccArgs = append(ccArgs, "-I", tmp, "-o", exe, host, "-L", tmp, "-l"+name, "-Wl,-rpath,"+tmp, "-pthread", "-lm")
	cmd := baseCC().Command(ctx, ccArgs...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling host.c: %v\n%s", err, out)
	}
	return exe
}
