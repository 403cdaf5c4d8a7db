package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
)

// ksc runs the command line in-process and returns stdout, stderr and
// the exit status.
func ksc(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"ksc"}, args...), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func needCC(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
}

const example = `(def sqnorm Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))
(def main Integer ()
  (let (v (build 3 (lam (i : Integer) (to_float (add i 1)))))
    (print (sqnorm v) "\n")))
`

func TestRun(t *testing.T) {
	needCC(t)
	f := write(t, "ex.ks", example)
	out, errs, code := ksc(t, "run", f)
	if code != 0 || out != "14\n" {
		t.Errorf("ksc run: status %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestRunGoBackend(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	f := write(t, "ex.ks", example)
	out, errs, code := ksc(t, "run", "--backend", "go", f)
	if code != 0 || out != "14\n" {
		t.Errorf("ksc run --backend go: status %d, stdout %q, stderr %q", code, out, errs)
	}
	src, errs, code := ksc(t, "emit", "--stage", "go", f)
	if code != 0 || !strings.Contains(src, "package main") || !strings.Contains(src, "func ksu_sqnorm(") {
		t.Errorf("ksc emit --stage go: status %d, stderr %q\n%s", code, errs, src)
	}
}

func TestRuntimeErrorStatus(t *testing.T) {
	needCC(t)
	f := write(t, "bad.ks", "(def main Integer ()\n  (print \"before\\n\" (index 3 (Vec_init 1.0))))\n")
	out, errs, code := ksc(t, "run", f)
	if code != exitProgram {
		t.Errorf("status %d, want %d", code, exitProgram)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing (the arguments of print are evaluated first)", out)
	}
	if !strings.HasPrefix(errs, f+":2:") || !strings.Contains(errs, "index 3 out of range for size 1") {
		t.Errorf("stderr %q", errs)
	}
}

func TestTestCommand(t *testing.T) {
	needCC(t)
	pass := write(t, "pass.ks", `(def main Integer ()
  (print "TESTS FOLLOW\n----\nadd\n" (eq (add 1 2) 3) "\n----\nmul\n" (eq (mul 2 3) 6) "\n"))`)
	if _, errs, code := ksc(t, "test", pass); code != 0 || !strings.Contains(errs, "2 tests passed") {
		t.Errorf("passing tests: status %d, stderr %q", code, errs)
	}
	fail := write(t, "fail.ks", `(def main Integer ()
  (print "TESTS FOLLOW\n----\nadd\n" (eq (add 1 2) 4) "\n"))`)
	if _, errs, code := ksc(t, "test", fail); code != exitProgram || !strings.Contains(errs, "FAIL: add") {
		t.Errorf("failing test: status %d, stderr %q", code, errs)
	}
}

func TestCheckErrors(t *testing.T) {
	f := write(t, "bad.ks", "(def f Float (x : Float)\n  (add x 1))\n(def g Float (y : Float) (h y))\n")
	_, errs, code := ksc(t, "check", f)
	if code != exitProgram {
		t.Errorf("status %d, want %d", code, exitProgram)
	}
	lines := errorLines(errs)
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(f) + `:\d+:\d+: `)
	if len(lines) != 2 {
		t.Errorf("want 2 errors, got:\n%s", errs)
	}
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Errorf("error not in file:line:col form: %q", l)
		}
	}
	if !strings.Contains(errs, ":2:4:") || !strings.Contains(errs, ":3:27:") {
		t.Errorf("wrong positions:\n%s", errs)
	}
}

// TestErrorCorpusStatus runs ksc check on every error test: status 1 and
// every line of stderr positioned.
func TestErrorCorpusStatus(t *testing.T) {
	files, _ := filepath.Glob("../../tests/testdata/errors/*.ks")
	if len(files) == 0 {
		t.Skip("no error corpus")
	}
	for _, f := range files {
		_, errs, code := ksc(t, "check", f)
		if code != exitProgram {
			t.Errorf("%s: status %d, want %d\n%s", f, code, exitProgram, errs)
		}
		for _, l := range errorLines(errs) {
			if !strings.HasPrefix(l, f+":") {
				t.Errorf("%s: unpositioned error line %q", f, l)
			}
		}
	}
}

// errorLines returns the lines of stderr that begin errors, leaving out
// the source excerpts and hints under them.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "help: ") {
			out = append(out, l)
		}
	}
	return out
}

// TestErrorExcerpt checks how an error is shown: its position and
// message, the source line with a caret under the name, and the hint.
func TestErrorExcerpt(t *testing.T) {
	f := write(t, "typo.ks", "(def f Float (x : Float)\n\t(lett (y (mul x x)) y))\n")
	_, errs, code := ksc(t, "check", f)
	want := f + ":2:3: unknown function lett\n" +
		"   2 | \t(lett (y (mul x x)) y))\n" +
		"     | \t ^^^^\n" +
		"help: did you mean let?\n"
	if code != exitProgram || errs != want {
		t.Errorf("status %d, stderr:\n%s\nwant:\n%s", code, errs, want)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"run"},
		{"check"},
		{"emit", "--stage", "nonsense", "x.ks"},
		{"run", "--backend", "fortran", write(t, "ok.ks", example)},
		{"run", "--no-such-flag", "x.ks"},
		{"run", "--rev", "forwards", write(t, "ok.ks", example)},
		{"emit", "--rev", "forwards", write(t, "ok.ks", example)},
		{"run", "--ad", "cps", write(t, "ok.ks", example)},
		{"run", "--backend", "c", "--ad=cps", write(t, "ok.ks", example)},
		{"test", "--ad", "cps", write(t, "ok.ks", example)},
		{"emit", "--stage", "c", "--ad", "cps", write(t, "ok.ks", example)},
		{"emit", "--stage", "optimised", "--ad", "cps", write(t, "ok.ks", example)},
		{"build", write(t, "ok.ks", example), "-o", filepath.Join(t.TempDir(), "libok.so"), "--ad", "cps"},
		{"run", "--backend", "go", "--ad", "backwards", write(t, "ok.ks", example)},
		{"build", write(t, "ok.ks", example)},
		{"build", write(t, "ok.ks", example), "-o", "notalib.txt"},
		{"frobnicate"},
	} {
		_, errs, code := ksc(t, args...)
		if code != exitUsage {
			t.Errorf("ksc %s: status %d, want %d; stderr %q", strings.Join(args, " "), code, exitUsage, errs)
		}
	}
}

func TestFmt(t *testing.T) {
	f := write(t, "messy.ks", "; comment\n(def   f Float ( x : Float )\n   (add x\n 1.0))\n")
	out, _, code := ksc(t, "fmt", f)
	want := "; comment\n(def f Float (x : Float) (add x 1.0))\n"
	if code != 0 || out != want {
		t.Errorf("ksc fmt: status %d, got %q, want %q", code, out, want)
	}
	if out, _, _ := ksc(t, "fmt", "-l", f); out != f+"\n" {
		t.Errorf("ksc fmt -l: %q", out)
	}
	ksc(t, "fmt", "-w", f)
	if b, _ := os.ReadFile(f); string(b) != want {
		t.Errorf("ksc fmt -w wrote %q", b)
	}
}

func TestEmitStages(t *testing.T) {
	f := write(t, "ex.ks", example)
	for _, stage := range []string{"parsed", "typed", "derived", "optimised", "c"} {
		out, errs, code := ksc(t, "emit", "--stage", stage, "--check", f)
		if code != 0 || out == "" {
			t.Errorf("emit --stage %s: status %d, stderr %q", stage, code, errs)
		}
	}
}

// TestSplitReverseMode runs [rev f] by both strategies and prints the
// split passes and their BOG.
func TestSplitReverseMode(t *testing.T) {
	f := write(t, "split.ks", `
(def sqnorm Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))
(gdef sufrev [sqnorm (Vec Float)])
(def main Integer ()
  (let (v (Vec_init 1.0 2.0 3.0))
    (print ([rev sqnorm] v 1.0) " " ([sufrev sqnorm] v 0.5) "\n")))
`)
	for _, rev := range []string{"lm", "bog"} {
		out, errs, code := ksc(t, "run", "--rev", rev, f)
		if want := "[2, 4, 6] [1, 2, 3]\n"; code != 0 || out != want {
			t.Errorf("ksc run --rev %s: status %d, got %q, want %q; stderr %q", rev, code, out, want, errs)
		}
	}
	out, errs, code := ksc(t, "emit", "--stage", "bog", "--check", f)
	if code != 0 || !strings.Contains(out, "(deftype bog$sqnorm$") || !strings.Contains(out, "(def [sufrevpass [sqnorm (Vec Float)]]") {
		t.Errorf("emit --stage bog: status %d, stderr %q, got:\n%s", code, errs, out)
	}
	out, errs, code = ksc(t, "emit", "--stage", "suf", f)
	if code != 0 || !strings.Contains(out, "$dup") {
		t.Errorf("emit --stage suf: status %d, stderr %q, got:\n%s", code, errs, out)
	}
	// A program without split reverse mode: the stage says there is none.
	out, errs, code = ksc(t, "emit", "--stage", "bog", write(t, "nobog.ks", "(def f Float (x : Float) x)\n"))
	if code != 0 || out != "" || !strings.Contains(errs, "no BOG to print") {
		t.Errorf("emit --stage bog without a BOG: status %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestCPSReverseMode runs [rev f] and [sufrev f] generated by the Go
// backend by continuations (--ad=cps), and checks the generated Go.
func TestCPSReverseMode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	f := write(t, "cps.ks", `
(def sqnorm Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))
(gdef sufrev [sqnorm (Vec Float)])
(def main Integer ()
  (let (v (Vec_init 1.0 2.0 3.0))
    (print ([rev sqnorm] v 1.0) " " ([sufrev sqnorm] v 0.5) " " ([fwd sqnorm] v (Vec_init 1.0 0.0 0.5)) "\n")))
`)
	out, errs, code := ksc(t, "run", "--backend", "go", "--ad", "cps", f)
	if want := "[2, 4, 6] [1, 2, 3] 5\n"; code != 0 || out != want {
		t.Errorf("ksc run --backend go --ad cps: status %d, got %q, want %q; stderr %q", code, out, want, errs)
	}
	src, errs, code := ksc(t, "emit", "--stage", "go", "--ad=cps", f)
	if code != 0 || !strings.Contains(src, "func cps_sqnorm(ctx *Ctx, x []float64, xc *[]float64, k func(float64, *float64))") ||
		!strings.Contains(src, "[rev [sqnorm (Vec Float)]], by continuations") ||
		!strings.Contains(src, "func dual_sqnorm(ctx *Ctx, x []float64, dx []float64) (float64, float64)") {
		t.Errorf("ksc emit --stage go --ad=cps: status %d, stderr %q\n%s", code, errs, src)
	}
	_, errs, code = ksc(t, "run", "--backend", "c", "--ad", "cps", f)
	if code != exitUsage || !strings.Contains(errs, "--ad=cps needs the Go backend") {
		t.Errorf("ksc run --backend c --ad cps: status %d, stderr %q", code, errs)
	}
	// What the translation does not support is a positioned error.
	bad := write(t, "check.ks", `
(def chk Float (x : Float)
  ($check (lam (y : Float) (mul y y)) (lam (t : Tuple Float Float) (mul 2.0 (get$1$2 t))) x 0.001 1.0))
(def main Integer ()
  (print ([rev chk] 1.0 1.0) "\n"))
`)
	_, errs, code = ksc(t, "emit", "--stage", "go", "--ad", "cps", bad)
	if code != exitProgram || !regexp.MustCompile(`check\.ks:3:3: --ad=cps: cannot differentiate \$check`).MatchString(errs) {
		t.Errorf("ksc emit --stage go --ad cps with $check: status %d, stderr %q", code, errs)
	}
}

// TestBuildExport: --export leaves the other entry points out of the
// header and the manifest (and of the library's symbols); a name that is
// not an entry point is an error naming those that are.
func TestBuildExport(t *testing.T) {
	needCC(t)
	f := write(t, "sq.ks", "(def sq Float (x : Float) (mul x x))\n(def cube Float (x : Float) (mul x (sq x)))\n(gdef rev [cube Float])\n")
	dir := t.TempDir()
	_, errs, code := ksc(t, "build", f, "-o", filepath.Join(dir, "libsq.so"), "--export", "rev_cube, cube")
	if code != 0 {
		t.Fatalf("build: status %d: %s", code, errs)
	}
	h, err := os.ReadFile(filepath.Join(dir, "sq.h"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(dir, "sq.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"int sq_cube(", "int sq_rev_cube("} {
		if !strings.Contains(string(h), want) {
			t.Errorf("the header lacks %s", want)
		}
	}
	if strings.Contains(string(h), "int sq_sq(") || strings.Contains(string(m), `"sq_sq"`) {
		t.Errorf("sq is exported:\n%s", h)
	}
	_, errs, code = ksc(t, "build", f, "-o", filepath.Join(dir, "libsq.so"), "--export", "rev_cub")
	if code != exitProgram || !strings.Contains(errs, "no entry point rev_cub; it has sq, cube, rev_cube") || !strings.Contains(errs, "help: did you mean rev_cube?") {
		t.Errorf("status %d, stderr %q", code, errs)
	}
}

// TestBuildShowsWarnings: a C compiler warning during ksc build is shown
// (here one the command line causes, as generated C should draw none).
func TestBuildShowsWarnings(t *testing.T) {
	needCC(t)
	t.Setenv("CC", "cc -DKSC_TEST_X -DKSC_TEST_X=2")
	t.Setenv("CFLAGS", "")
	_, errs, code := ksc(t, "build", write(t, "w.ks", example), "-o", filepath.Join(t.TempDir(), "libw.so"))
	if code != 0 || !strings.Contains(errs, "the C compiler warned about the generated code") || !strings.Contains(errs, "KSC_TEST_X") {
		t.Errorf("status %d, stderr %q", code, errs)
	}
}

func TestBuild(t *testing.T) {
	needCC(t)
	f := write(t, "ex.ks", example)
	dir := t.TempDir()
	_, errs, code := ksc(t, "build", f, "-o", filepath.Join(dir, "libex.so"), "--emit-c", filepath.Join(dir, "ex.c"))
	if code != 0 {
		t.Fatalf("build: status %d: %s", code, errs)
	}
	for _, name := range []string{"libex.so", "ex.h", "ex.c"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	h, _ := os.ReadFile(filepath.Join(dir, "ex.h"))
	if !strings.Contains(string(h), "int ex_sqnorm(ex_ctx *ctx, ex_vec_f64 v, double *out);") {
		t.Errorf("header lacks ex_sqnorm:\n%s", h)
	}
}

func TestInternalErrorStatus(t *testing.T) {
	var stderr bytes.Buffer
	code := report(&driver.InternalError{Stage: "the optimiser", What: "f", Value: "boom"}, &stderr)
	if code != exitInternal || !strings.Contains(stderr.String(), "internal compiler error") {
		t.Errorf("status %d, stderr %q", code, stderr.String())
	}
}

func TestRunEval(t *testing.T) {
	f := write(t, "ex.ks", example)
	out, errs, code := ksc(t, "run", "--backend", "eval", f)
	if code != 0 || out != "14\n" {
		t.Errorf("ksc run --backend eval: status %d, stdout %q, stderr %q", code, out, errs)
	}
	bad := write(t, "bad.ks", "(def main Integer ()\n  (let (u (print \"before\\n\")) (print (index 3 (Vec_init 1.0)))))\n")
	out, errs, code = ksc(t, "run", "--backend", "eval", bad)
	if want := bad + ":2:38: runtime error: index 3 out of range for size 1\n"; code != exitProgram || out != "before\n" || errs != want {
		t.Errorf("runtime error: status %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errs, exitProgram, "before\n", want)
	}
	rev := write(t, "rev.ks", "(def f Float (x : Float) (mul x x))\n(def main Integer () (print ([rev f] 1.0 1.0)))\n")
	_, errs, code = ksc(t, "run", "--backend", "eval", rev)
	if code != exitProgram || !strings.Contains(errs, "the evaluator does not run derived function [rev f]") {
		t.Errorf("derived function: status %d, stderr %q", code, errs)
	}
	_, errs, code = ksc(t, "run", "--backend", "eval", "--rev", "bog", f)
	if code != exitUsage {
		t.Errorf("--backend eval --rev bog: status %d, want %d; stderr %q", code, exitUsage, errs)
	}
	test := write(t, "t.ks", "(def main Integer () (print \"TESTS FOLLOW\\n----\\nadd\\n\" (eq (add 1 1) 3) \"\\n\"))\n")
	if _, errs, code = ksc(t, "test", "--backend", "eval", test); code != exitProgram {
		t.Errorf("ksc test --backend eval with a failing check: status %d, stderr %q", code, errs)
	}
}

// The program of issue 22 whose optimised code captured a name computes
// 0 with the rewriting passes off.
func TestNoOpt(t *testing.T) {
	needCC(t)
	f := write(t, "capture.ks", `(def f Float ((x : Float) (k : Integer))
  (dot (mul x (constVec 1 x)) (sub (constVec 1 x) (mul x (constVec 1 1.0)))))
(def main Integer () (print (f 1.7 2) "\n"))
`)
	out, errs, code := ksc(t, "run", "--no-opt", f)
	if code != 0 || out != "0\n" {
		t.Errorf("ksc run --no-opt: status %d, stdout %q, stderr %q", code, out, errs)
	}
	src, errs, code := ksc(t, "emit", "--stage", "optimised", "--no-opt", f)
	if code != 0 || !strings.Contains(src, "constVec 1 1.0") {
		t.Errorf("ksc emit --stage optimised --no-opt: status %d, stderr %q\n%s", code, errs, src)
	}
}

// TestVersion: ksc --version names the build (the module version, and the
// Go release that built it), exits 0 and writes nothing else.
func TestVersion(t *testing.T) {
	out, errOut, code := ksc(t, "--version")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "ksc version ") || !strings.Contains(out, "go1.") {
		t.Errorf("ksc --version: status %d, stdout %q, stderr %q", code, out, errOut)
	}
}
