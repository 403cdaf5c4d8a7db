// Package tests runs whole ks programs through the compiler and both
// backends. The programs live under testdata/:
//
//	programs/NAME.ks, NAME.out   run with C and Go (optimised and not) and the evaluator; stdout must equal NAME.out
//	runtime/NAME.ks [NAME.out]   must fail at run time (C, Go, the evaluator) at the line marked ; RUNTIME "regexp"
//	errors/NAME.ks               every line marked ; ERROR "regexp" must get that error, no other line any
//	golden/NAME.ks, NAME.golden  the program after each stage; refresh with go test -update
//
// C is compiled with -Wall -Wextra (no warnings allowed) and with
// -fsanitize=address,undefined.
package tests

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
	"github.com/ksc-lang/ksc/ir"
)

var (
	update   = flag.Bool("update", false, "rewrite the golden files under testdata/golden")
	backends = flag.String("backends", "c,go", "comma-separated backends to run programs through")
	noSan    = flag.Bool("nosan", false, "compile C without sanitizers (faster)")
)

// testCC returns the C compiler used by the tests: with the sanitizers
// unless -nosan.
func testCC() driver.CC {
	if *noSan {
		return baseCC(o1Flags...)
	}
	return baseCC(sanFlags...)
}

// o1Flags are the C flags of the tests' quick builds. At -O1 gcc
// vectorises no loop, so the AVX2 copies of looping functions (KS_CLONES
// in ksc_runtime.h) would gain nothing and make compiling ~60% slower;
// the tests at -O3 (TestHotLoopsVectorised, TestVectorMath, adbench's)
// build them.
var o1Flags = []string{"-O1", "-DKS_NO_CLONES"}

// sanFlags are the C flags of the tests' sanitized builds.
var sanFlags = []string{"-O1", "-DKS_NO_CLONES", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"}

// baseCC is the C compiler of $CC (default cc, its words split) with the
// given flags.
func baseCC(flags ...string) driver.CC {
	cc := driver.DefaultCC()
	cc.Flags = flags
	return cc
}

func wantBackend(name string) bool {
	if name == "c-threads" {
		name = "c" // C with --threads
	}
	for _, b := range strings.Split(*backends, ",") {
		if strings.TrimSpace(b) == name {
			return true
		}
	}
	return false
}

// result is the outcome of running a program.
type result struct {
	stdout, stderr string
	code           int
	warnings       string // the C compiler's warnings
}

// runProgram compiles the files with a backend and runs main.
func runProgram(t *testing.T, backend string, files ...string) result {
	t.Helper()
	return runProgramWith(t, backend, driver.Options{}, files...)
}

// runProgramWith is runProgram with the reverse-mode strategy of opts.
func runProgramWith(t *testing.T, backend string, opts driver.Options, files ...string) result {
	t.Helper()
	r, err := tryProgram(backend, opts, testCC(), t.TempDir(), files...)
	if err != nil {
		t.Fatal(err)
	}
	if r.warnings != "" {
		t.Errorf("the C compiler warned:\n%s", r.warnings)
	}
	return r
}

// tryProgram compiles the files with a backend (C with cc) in dir and runs
// main; opts.NoOpt turns the rewriting passes off. The backend "eval" is
// the reference evaluator instead (opts and cc do not apply). An error is
// a failure to compile (or to start) the program.
func tryProgram(backend string, opts driver.Options, cc driver.CC, dir string, files ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if backend == "eval" {
		return evalProgram(files...)
	}
	prog, err := driver.LoadWith(files, driver.Derived, driver.Options{Rev: opts.Rev, AD: opts.AD, CheckIR: true})
	if err != nil {
		return result{}, fmt.Errorf("load: %v", err)
	}
	if err := driver.Optimise(prog, driver.Options{AD: opts.AD, CheckIR: true, NoOpt: opts.NoOpt}); err != nil {
		return result{}, fmt.Errorf("optimise: %v", err)
	}
	var exe, warnings string
	switch backend {
	case "c":
		exe, warnings, err = compileC(ctx, prog, dir, cc)
	case "c-threads":
		cc.Threads = true
		exe, warnings, err = compileC(ctx, prog, dir, cc)
	case "go":
		exe, err = driver.BuildGoWith(ctx, prog, dir, opts)
	}
	if err != nil {
		return result{}, fmt.Errorf("%s backend: %v", backend, err)
	}
	// c-threads: more threads than cores, splitting loops unevenly.
	r, err := runOnThreads(ctx, exe, "3")
	if err != nil {
		return result{}, err
	}
	r.warnings = warnings
	if backend == "c-threads" {
		// The result may not depend on the number of threads.
		one, err := runOnThreads(ctx, exe, "1")
		if err != nil {
			return result{}, err
		}
		if one.code != r.code || one.stdout != r.stdout || one.stderr != r.stderr {
			return result{}, fmt.Errorf("on 1 thread: status %d, stdout:\n%s\nstderr:\n%s\non 3: status %d, stdout:\n%s\nstderr:\n%s",
				one.code, one.stdout, one.stderr, r.code, r.stdout, r.stderr)
		}
	}
	return r, nil
}

// runOnThreads runs a compiled program on the given number of OpenMP threads.
func runOnThreads(ctx context.Context, exe, threads string) (result, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0", "UBSAN_OPTIONS=print_stacktrace=1",
		"OMP_NUM_THREADS="+threads)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return result{}, fmt.Errorf("running %s: %v", exe, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}, nil
}

// evalProgram runs main with the reference evaluator (package eval) on
// the typed program, with the result a compiled program would have: a
// runtime error on stderr and status 1. An error is a program the
// evaluator does not run (a derived function, say).
func evalProgram(files ...string) (result, error) {
	prog, err := driver.Load(files, driver.Typed)
	if err != nil {
		return result{}, fmt.Errorf("load: %v", err)
	}
	var stdout, stderr bytes.Buffer
	code, err := driver.Eval(prog, &stdout, &stderr)
	if err != nil {
		return result{}, fmt.Errorf("eval: %w", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}, nil
}

// buildC emits and compiles C, with parallel loops if threads, failing the
// test on any compiler warning.
func buildC(ctx context.Context, t *testing.T, prog *ir.Program, dir string, threads bool) (string, error) {
	t.Helper()
	cc := testCC()
	cc.Threads = threads
	exe, warnings, err := compileC(ctx, prog, dir, cc)
	if warnings != "" {
		t.Errorf("the C compiler warned:\n%s", warnings)
	}
	return exe, err
}

// compileC emits and compiles C with cc (with parallel loops if
// cc.Threads), and returns the executable and the compiler's warnings.
func compileC(ctx context.Context, prog *ir.Program, dir string, cc driver.CC) (exe, warnings string, err error) {
	out, err := driver.EmitC(prog, cemit.Options{Prefix: "ks", Main: true, Threads: cc.Threads})
	if err != nil {
		return "", "", err
	}
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(out.C), 0o644); err != nil {
		return "", "", err
	}
	exe = filepath.Join(dir, "prog")
	w, err := cc.CompileC(ctx, src, exe)
	if err != nil {
		return "", "", err
	}
	// Notes (such as gcc giving up variable tracking on a huge function)
	// are not warnings.
	if strings.Contains(w, "warning:") {
		warnings = w
	}
	return exe, warnings, nil
}

// programFiles returns the .ks files of a testdata directory.
func programFiles(t *testing.T, dir string) []string {
	t.Helper()
	fs, err := filepath.Glob(filepath.Join("testdata", dir, "*.ks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) == 0 {
		t.Fatalf("no programs in testdata/%s", dir)
	}
	return fs
}

var ccOnce sync.Once
var ccMissing bool

// needCC skips the test when no C compiler is available.
func needCC(t *testing.T) {
	ccOnce.Do(func() {
		_, err := exec.LookPath(baseCC().Cmd)
		ccMissing = err != nil
	})
	if ccMissing {
		t.Skip("no C compiler")
	}
}

// derivedRuns are the configurations a program with derived functions is
// run in: C, Go, and C with [rev f] through split reverse mode.
var derivedRuns = []struct {
	backend string
	opts    driver.Options
}{{"c", driver.Options{}}, {"go", driver.Options{}}, {"c", driver.Options{Rev: "bog"}}}
