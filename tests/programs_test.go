package tests

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/eval"
)

// TestPrograms runs every program of testdata/programs through each
// backend and compares its output with NAME.out.
func TestPrograms(t *testing.T) {
	testPrograms(t, driver.Options{})
}

// TestProgramsNoOpt is TestPrograms with the rewriting passes off
// (driver.Options.NoOpt): only the passes code generation needs run. C is
// compiled without the sanitizers, which TestPrograms runs, to keep the
// package's time down.
func TestProgramsNoOpt(t *testing.T) {
	testPrograms(t, driver.Options{NoOpt: true})
}

func testPrograms(t *testing.T, opts driver.Options) {
	needCC(t)
	for _, file := range programFiles(t, "programs") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(strings.TrimPrefix(name, "testdata/programs/"), func(t *testing.T) {
			t.Parallel()
			for _, b := range []string{"c", "go"} {
				if !wantBackend(b) {
					continue
				}
				if !opts.NoOpt {
					checkOutput(t, b+" backend", runProgramWith(t, b, opts, file), name)
					continue
				}
				r, err := tryProgram(b, opts, baseCC(o1Flags...), t.TempDir(), file)
				if err != nil {
					t.Fatal(err)
				}
				if r.warnings != "" {
					t.Errorf("the C compiler warned:\n%s", r.warnings)
				}
				checkOutput(t, b+" backend, --no-opt", r, name)
			}
		})
	}
}

// TestEvalPrograms runs the programs of testdata/programs and
// testdata/runtime with the reference evaluator (package eval), which
// must print what NAME.out has and fail as the compiled programs do.
// Only a program that calls a derived function may be one the evaluator
// does not run.
func TestEvalPrograms(t *testing.T) {
	for _, dir := range []string{"programs", "runtime"} {
		for _, file := range programFiles(t, dir) {
			name := strings.TrimSuffix(file, ".ks")
			t.Run(strings.TrimPrefix(name, "testdata/"), func(t *testing.T) {
				t.Parallel()
				r, err := tryProgram("eval", driver.Options{}, driver.CC{}, "", file)
				var u *eval.Unsupported
				if errors.As(err, &u) && callsDerived(t, file) {
					t.Skipf("the evaluator does not run it: %v", err)
				}
				if err != nil {
					t.Fatal(err)
				}
				if dir == "programs" {
					checkOutput(t, "evaluator", r, name)
				} else {
					checkRuntimeError(t, "evaluator", r, file)
				}
			})
		}
	}
}

// callsDerived reports whether the program has derived functions without
// a definition, which the evaluator does not run.
func callsDerived(t *testing.T, file string) bool {
	prog, err := driver.Load([]string{file}, driver.Typed)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range prog.Funcs {
		if f.Body == nil && len(f.Name.Derivs) > 0 {
			return true
		}
	}
	return false
}

// checkOutput checks the run r (by who) of the program name.ks of
// testdata/programs: status 0 and the output of name.out.
func checkOutput(t *testing.T, who string, r result, name string) {
	t.Helper()
	want, err := os.ReadFile(name + ".out")
	if err != nil {
		t.Fatalf("missing expected output: %v", err)
	}
	if r.code != 0 {
		t.Errorf("%s: exit status %d, stderr:\n%s", who, r.code, r.stderr)
	}
	if r.stdout != string(want) {
		t.Errorf("%s: output differs\n--- got ---\n%s--- want ---\n%s", who, r.stdout, want)
	}
}

var runtimeMark = regexp.MustCompile(`; RUNTIME "((?:[^"\\]|\\.)*)"`)

// TestRuntimeErrors runs the programs of testdata/runtime, each of which
// must stop with status 1 and a message naming the marked line.
func TestRuntimeErrors(t *testing.T) {
	needCC(t)
	for _, file := range programFiles(t, "runtime") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(strings.TrimPrefix(name, "testdata/runtime/"), func(t *testing.T) {
			t.Parallel()
			for _, b := range []string{"c", "go"} {
				if wantBackend(b) {
					checkRuntimeError(t, b+" backend", runProgram(t, b, file), file)
				}
			}
		})
	}
}

// runtimeMarkOf returns the line of a testdata/runtime program marked
// ; RUNTIME "regexp" and the regexp; the program must have one mark.
func runtimeMarkOf(t *testing.T, file string) (int, *regexp.Regexp) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line, re := 0, (*regexp.Regexp)(nil)
	for i, l := range strings.Split(string(src), "\n") {
		if m := runtimeMark.FindStringSubmatch(l); m != nil {
			if re != nil {
				t.Fatalf("%s: more than one RUNTIME mark", file)
			}
			line, re = i+1, regexp.MustCompile(unquote(m[1]))
		}
	}
	if re == nil {
		t.Fatalf("%s: no ; RUNTIME \"regexp\" mark", file)
	}
	return line, re
}

// callLine is a line of the chain of calls after a runtime error.
var callLine = regexp.MustCompile(`^  (in .+, called from .+:\d+:\d+|\(\d+ calls deeper not shown\))$`)

// checkRuntimeError checks the run r (by who) of a program of
// testdata/runtime: status 1, a line on stderr naming the line marked
// ; RUNTIME "regexp" with a message matching the regexp, then the chain
// of calls, and the output of NAME.out (none if there is no such file).
func checkRuntimeError(t *testing.T, who string, r result, file string) {
	t.Helper()
	line, re := runtimeMarkOf(t, file)
	wantOut, _ := os.ReadFile(strings.TrimSuffix(file, ".ks") + ".out")
	prefix := file + ":" + itoa(line) + ":"
	if r.code != 1 {
		t.Errorf("%s: exit status %d, want 1; stderr:\n%s", who, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if msg := lines[0]; !strings.HasPrefix(msg, prefix) || !re.MatchString(msg[len(prefix):]) {
		t.Errorf("%s: stderr %q, want %s<col>: matching %q", who, msg, prefix, re)
	}
	// Then the chain of calls that led there (which calls it lists depends
	// on what the optimiser inlined).
	for _, l := range lines[1:] {
		if !callLine.MatchString(l) {
			t.Errorf("%s: stderr line %q is not a call of the chain:\n%s", who, l, r.stderr)
		}
	}
	if r.stdout != string(wantOut) {
		t.Errorf("%s: stdout %q, want %q", who, r.stdout, wantOut)
	}
}

// TestCallChain: the chain of calls after a runtime error, the same from
// both backends and, but for the call the optimiser inlined, from the
// evaluator.
func TestCallChain(t *testing.T) {
	needCC(t)
	file := filepath.Join("testdata", "runtime", "call_chain.ks")
	at := func(lc string) string { return file + ":" + lc }
	compiled := []string{
		"  in h, called from " + at("10:16"),
		"  in g, called from " + at("12:11"),
	}
	for _, b := range []string{"c", "go", "eval"} {
		if b != "eval" && !wantBackend(b) {
			continue
		}
		want := compiled
		if b == "eval" {
			want = append([]string{"  in pick, called from " + at("8:34")}, compiled...)
		}
		r := runProgram(t, b, file)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if !slices.Equal(lines[1:], want) {
			t.Errorf("%s: stderr\n%s\nwant the calls\n%s", b, r.stderr, strings.Join(want, "\n"))
		}
	}
}

// TestDerivedPrograms runs the programs of testdata/derived, which call
// derived functions (so the reference evaluator and the CL evaluator of
// the typed program do not run them), through both backends and both
// reverse-mode strategies, and compares what they print with the line
// "; OUT ..." of the program, worked out by hand.
func TestDerivedPrograms(t *testing.T) {
	needCC(t)
	for _, file := range programFiles(t, "derived") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".ks"), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want string
			for _, l := range strings.Split(string(src), "\n") {
				if w, ok := strings.CutPrefix(l, "; OUT "); ok {
					want = w
				}
			}
			if want == "" {
				t.Fatalf("%s has no ; OUT line", file)
			}
			for _, run := range derivedRuns {
				if !wantBackend(run.backend) {
					continue
				}
				r := runProgramWith(t, run.backend, run.opts, file)
				if got := strings.TrimSuffix(r.stdout, "\n"); got != want || r.code != 0 {
					t.Errorf("%s --rev=%q: status %d, printed %q, want %q\n%s", run.backend, run.opts.Rev, r.code, got, want, r.stderr)
				}
			}
		})
	}
}
