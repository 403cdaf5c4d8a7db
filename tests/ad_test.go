package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
)

// primChecks differentiates every primitive and prelude function whose
// result has a tangent, each wrapped in a function of its own.
var primChecks = []*check{
	{name: "p_add", src: "(def p_add Float ((x : Float) (y : Float)) (add x y))", args: []spec{"f", "f"}, dr: "f", fd: true},
	{name: "p_sub", src: "(def p_sub Float ((x : Float) (y : Float)) (sub x y))", args: []spec{"f", "f"}, dr: "f", fd: true},
	{name: "p_mul", src: "(def p_mul Float ((x : Float) (y : Float)) (mul x y))", args: []spec{"f", "f"}, dr: "f", fd: true},
	{name: "p_div", src: "(def p_div Float ((x : Float) (y : Float)) (div x y))", args: []spec{"f", "p"}, dr: "f", fd: true},
	{name: "p_neg", src: "(def p_neg Float (x : Float) (neg x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_mulfi", src: "(def p_mulfi Float ((x : Float) (n : Integer)) (mul x n))", args: []spec{"f", "i3"}, dr: "f", fd: true},
	{name: "p_to_float", src: "(def p_to_float Float ((x : Float) (n : Integer)) (mul x (to_float n)))", args: []spec{"f", "i5"}, dr: "f", fd: true},
	{name: "p_bool_to_float", src: "(def p_bool_to_float Float (x : Float) (mul x (bool_to_float (gt x 0.0))))", args: []spec{"p"}, dr: "f", fd: true},
	{name: "p_exp", src: "(def p_exp Float (x : Float) (exp x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_log", src: "(def p_log Float (x : Float) (log x))", args: []spec{"p"}, dr: "f", fd: true},
	{name: "p_sin", src: "(def p_sin Float (x : Float) (sin x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_cos", src: "(def p_cos Float (x : Float) (cos x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_tanh", src: "(def p_tanh Float (x : Float) (tanh x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_sqrt", src: "(def p_sqrt Float (x : Float) (sqrt x))", args: []spec{"p"}, dr: "f", fd: true},
	{name: "p_erf", src: "(def p_erf Float (x : Float) (erf x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_lgamma", src: "(def p_lgamma Float (x : Float) (lgamma x))", args: []spec{"p"}, dr: "f", fd: true},
	{name: "p_cosh", src: "(def p_cosh Float (x : Float) (cosh x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_abs", src: "(def p_abs Float (x : Float) (abs x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_pow", src: "(def p_pow Float ((x : Float) (n : Integer)) (pow x n))", args: []spec{"f", "i3"}, dr: "f", fd: true},
	{name: "p_max2", src: "(def p_max2 Float ((x : Float) (y : Float)) (max x y))", args: []spec{"f", "f"}, dr: "f", fd: true},
	{name: "p_pi", src: "(def p_pi Float (x : Float) (mul x (pi)))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_maxv", src: "(def p_maxv Float (v : Vec Float) (max v))", args: []spec{"v5"}, dr: "f", fd: true},
	{name: "p_expv", src: "(def p_expv (Vec Float) (v : Vec Float) (exp v))", args: []spec{"v4"}, dr: "v4", fd: true},
	{name: "p_subvv", src: "(def p_subvv (Vec Float) ((a : Vec Float) (b : Vec Float)) (sub a b))", args: []spec{"v3", "v3"}, dr: "v3", fd: true},
	{name: "p_subvf", src: "(def p_subvf (Vec Float) ((a : Vec Float) (b : Float)) (sub a b))", args: []spec{"v3", "f"}, dr: "v3", fd: true},
	{name: "p_mulfv", src: "(def p_mulfv (Vec Float) ((k : Float) (v : Vec Float)) (mul k v))", args: []spec{"f", "v3"}, dr: "v3", fd: true},
	{name: "p_mulmv", src: "(def p_mulmv (Vec Float) ((m : Tensor 2 Float) (v : Vec Float)) (mul m v))", args: []spec{"m2x3", "v3"}, dr: "v2", fd: true},
	{name: "p_dot", src: "(def p_dot Float ((a : Vec Float) (b : Vec Float)) (dot a b))", args: []spec{"v4", "v4"}, dr: "f", fd: true},
	{name: "p_build", src: "(def p_build (Vec Float) (x : Float) (build 4 (lam (i : Integer) (mul x (to_float i)))))", args: []spec{"f"}, dr: "v4", fd: true},
	{name: "p_build2", src: "(def p_build2 (Tensor 2 Float) (v : Vec Float) (build (tuple 2 3) (lam (ij : Tuple Integer Integer) (let ((i j) ij) (mul (index i v) (index j v))))))", args: []spec{"v3"}, dr: "m2x3", fd: true},
	{name: "p_sumbuild", src: "(def p_sumbuild Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (mul (index i v) (index i v)))))", args: []spec{"v5"}, dr: "f", fd: true},
	{name: "p_sum", src: "(def p_sum Float (v : Vec Float) (sum v))", args: []spec{"v4"}, dr: "f", fd: true},
	{name: "p_sumvv", src: "(def p_sumvv (Vec Float) (m : Vec (Vec Float)) (sum m))", args: []spec{"vv3x2"}, dr: "v2", fd: true},
	{name: "p_index", src: "(def p_index Float ((v : Vec Float) (i : Integer)) (index i v))", args: []spec{"v4", "i2"}, dr: "f", fd: true},
	{name: "p_index2", src: "(def p_index2 Float (m : Tensor 2 Float) (index (tuple 1 2) m))", args: []spec{"m2x3"}, dr: "f", fd: true},
	{name: "p_fold", src: "(def p_fold Float (v : Vec Float) (fold (lam (a_x : Tuple Float Float) (let ((a x) a_x) (add (mul a x) (sin x)))) 0.5 v))", args: []spec{"v4"}, dr: "f", fd: true},
	{name: "p_map", src: "(def p_map (Vec Float) (v : Vec Float) (map (lam (x : Float) (mul x (exp x))) v))", args: []spec{"v3"}, dr: "v3", fd: true},
	{name: "p_map2", src: "(def p_map2 (Vec Float) ((a : Vec Float) (b : Vec Float)) (map2 (lam (p : Tuple Float Float) (let ((x y) p) (div x y))) a b))", args: []spec{"v3", "pv3"}, dr: "v3", fd: true},
	{name: "p_constVec", src: "(def p_constVec (Vec Float) (x : Float) (constVec 3 (mul x x)))", args: []spec{"f"}, dr: "v3", fd: true},
	{name: "p_deltaVec", src: "(def p_deltaVec (Vec Float) (x : Float) (deltaVec 4 2 (sin x)))", args: []spec{"f"}, dr: "v4", fd: true},
	{name: "p_delta", src: "(def p_delta Float ((x : Float) (i : Integer)) (add (delta i 2 x) (delta i 3 (mul x x))))", args: []spec{"f", "i2"}, dr: "f", fd: true},
	{name: "p_Vec_init", src: "(def p_Vec_init (Vec Float) ((x : Float) (y : Float)) (Vec_init x (mul x y) y))", args: []spec{"f", "f"}, dr: "v3", fd: true},
	{name: "p_unzip", src: "(def p_unzip (Tuple (Vec Float) (Vec Float)) (v : Vec Float) (unzip (build (size v) (lam (i : Integer) (tuple (index i v) (mul 2.0 (index i v)))))))", args: []spec{"v3"}, dr: "t(v3,v3)", fd: true},
	{name: "p_ts_add", src: "(def p_ts_add (Vec Float) ((a : Vec Float) (b : Vec Float)) (ts_add a b))", args: []spec{"v3", "v3"}, dr: "v3", fd: true},
	{name: "p_ts_scale", src: "(def p_ts_scale (Vec Float) ((k : Float) (v : Vec Float)) (ts_scale k v))", args: []spec{"f", "v3"}, dr: "v3", fd: true},
	{name: "p_ts_dot", src: "(def p_ts_dot Float ((a : Vec Float) (b : Vec Float)) (ts_dot a b))", args: []spec{"v3", "v3"}, dr: "f", fd: true},
	{name: "p_ts_neg", src: "(def p_ts_neg (Tuple Float (Vec Float)) (t : Tuple Float (Vec Float)) (ts_neg t))", args: []spec{"t(f,v2)"}, dr: "t(f,v2)", fd: true},
	{name: "p_trace", src: "(def p_trace Float (x : Float) (mul x x))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_inline", src: "(def p_inl Float (x : Float) (sin x))\n(def p_inline Float (x : Float) ($inline (p_inl x)))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_copydown", src: "(def p_copydown (Vec Float) (v : Vec Float) ($copydown (exp v)))", args: []spec{"v2"}, dr: "v2", fd: true},
	{name: "p_get", src: "(def p_get Float (t : Tuple Float Float Integer) (mul (get$1$3 t) (get$2$3 t)))", args: []spec{"t(f,f,i4)"}, dr: "f", fd: true},
	{name: "p_if", src: "(def p_if Float ((x : Float) (y : Float)) (if (gt x y) (mul x x) (exp y)))", args: []spec{"f", "f"}, dr: "f", fd: true},
	{name: "p_assert", src: "(def p_assert Float (x : Float) (assert (gt (mul x x) 0.0) (sin x)))", args: []spec{"f"}, dr: "f", fd: true},
	{name: "p_let", src: "(def p_let Float (x : Float) (let ((a (mul x x)) ((b c) (tuple a (sin a)))) (add b c)))", args: []spec{"f"}, dr: "f", fd: true},
}

// runChecks builds the check program and runs it through the backends,
// failing on any error above the tolerances.
func runChecks(t *testing.T, name, prelude string, checks []*check, n int, selfCheck bool) {
	t.Helper()
	runChecksWith(t, name, prelude, checks, n, selfCheck, "", []string{"c", "go"})
}

// runChecksWith is runChecks with [rev f] built by the strategy rev, on
// the given backends: "" or "lm" (through linear maps), "bog" (split
// reverse mode), or "cps" ([rev f] and [sufrev f] generated by the Go
// backend by continuations, ksc --ad=cps; Go backend only).
func runChecksWith(t *testing.T, name, prelude string, checks []*check, n int, selfCheck bool, rev string, backends []string) {
	t.Helper()
	if rev == "cps" {
		for _, b := range backends {
			if b != "go" {
				t.Fatalf("--ad=cps needs the Go backend, not %s", b)
			}
		}
	} else {
		needCC(t)
	}
	probs, err := evalChecks(t.TempDir(), name, prelude, checks, n, selfCheck, rev, backends, testCC())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
}

// A problem is a check that failed: the check's name ("" for the whole
// program) and what is wrong.
type problem struct {
	check, msg string
}

func (p problem) String() string { return p.msg }

// evalChecks is runChecksWith returning the failed checks instead of
// reporting them, for the random tests, which shrink what fails. It builds
// in dir, C with cc. An error is a failure to build or run the check
// program.
func evalChecks(dir, name, prelude string, checks []*check, n int, selfCheck bool, rev string, backends []string, cc driver.CC) ([]problem, error) {
	opts := driver.Options{Rev: rev}
	if rev == "cps" {
		opts = driver.Options{AD: "cps"}
	}
	src := program(prelude, checks, n, 1, selfCheck)
	file := filepath.Join(dir, name+".ks")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		return nil, err
	}
	tol := map[string]float64{"self_check": 1e-4}
	for _, c := range checks {
		tol[c.name] = c.tol
		if tol[c.name] == 0 {
			tol[c.name] = 1e-5
		}
	}
	var probs []problem
	bad := func(check, format string, args ...any) {
		probs = append(probs, problem{check, fmt.Sprintf(format, args...)})
	}
	for _, b := range backends {
		if !wantBackend(b) {
			continue
		}
		bdir := filepath.Join(dir, b)
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			return nil, err
		}
		r, err := tryProgram(b, opts, cc, bdir, file)
		if err != nil {
			return nil, err
		}
		if r.warnings != "" {
			return nil, fmt.Errorf("the C compiler warned:\n%s", r.warnings)
		}
		if r.code != 0 {
			return nil, fmt.Errorf("%s backend: status %d\n%s", b, r.code, r.stderr)
		}
		seen := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			f := strings.Fields(line)
			if len(f) != 7 {
				return nil, fmt.Errorf("%s backend: bad line %q", b, line)
			}
			seen[f[0]]++
			adj, err1 := strconv.ParseFloat(f[1], 64)
			fd, err2 := strconv.ParseFloat(f[2], 64)
			sufadj, err3 := strconv.ParseFloat(f[3], 64)
			vadj, err4 := strconv.ParseFloat(f[4], 64)
			vval, err5 := strconv.ParseFloat(f[5], 64)
			wrt, err6 := strconv.ParseFloat(f[6], 64)
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil {
				bad(f[0], "%s backend, %s: cannot read %q", b, f[0], line)
				continue
			}
			if f[0] == "self_check" {
				if !(adj <= tol[f[0]]) {
					bad("", "%s backend: (self_check) = %g, want at most %g", b, adj, tol[f[0]])
				}
				continue
			}
			// The adjoint identity's error has a floor for derivatives
			// that are zero by cancellation (see program: 1e-2 |dx| |dr|,
			// since a rounding of the terms that cancel can be far above
			// |dx| |dr|, as in random_702247.ks).
			if !(adj <= 1e-10) {
				bad(f[0], "%s backend, %s: adjoint identity off by %g (relative)", b, f[0], adj)
			}
			if !(sufadj <= 1e-10) {
				bad(f[0], "%s backend, %s: adjoint identity with [sufrev] off by %g (relative)", b, f[0], sufadj)
			}
			if !(vadj <= 1e-10) {
				bad(f[0], "%s backend, %s: adjoint identity with the gradient of [vrev] off by %g (relative)", b, f[0], vadj)
			}
			// The value of [vrev f] is computed by other code than f's
			// (the optimised [revfull f]), so it may round otherwise.
			if !(vval <= 1e-9) {
				bad(f[0], "%s backend, %s: the value of [vrev] differs from f's by %g (relative)", b, f[0], vval)
			}
			// [rev f k] is [rev f]'s code with the other parts dropped.
			if !(wrt <= 1e-9) {
				bad(f[0], "%s backend, %s: [rev f k] differs from that part of [rev f] by %g (relative)", b, f[0], wrt)
			}
			if fd != -1 && !(fd <= tol[f[0]]) {
				bad(f[0], "%s backend, %s: forward mode differs from central differences by %g (relative)", b, f[0], fd)
			}
		}
		for _, c := range checks {
			if seen[c.name] != n {
				bad(c.name, "%s backend: %s checked %d times, want %d", b, c.name, seen[c.name], n)
			}
		}
	}
	return probs, nil
}

// TestDerivativesOfPrimitives checks [fwd f] against central finite
// differences, and [fwd f] against [rev f] and [sufrev f] (split reverse
// mode) by the adjoint identity <fwd(x, dx), dr> = <dx, rev(x, dr)>, at
// random points, for every primitive and prelude function.
func TestDerivativesOfPrimitives(t *testing.T) {
	runChecks(t, "prims", "", primChecks, 3, false)
}

// TestDerivativesWithBOGRev runs the checks of TestDerivativesOfPrimitives
// and TestDerivativesOfPrograms with [rev f] built by split reverse mode
// (ksc --rev=bog), on the C backend: both strategies stay tested.
func TestDerivativesWithBOGRev(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Run("prims", func(t *testing.T) {
		t.Parallel()
		runChecksWith(t, "prims", "", primChecks, 2, false, "bog", []string{"c"})
	})
	checkCorpus(t, 1, "bog", []string{"c"})
}

// TestDerivativesWithSUFRev runs the same checks with split reverse mode's
// passes translated from the single-use form by Figure 23's rules (ksc
// --rev=suf; package proc) where the procedure language has the function's
// loops, on the C backend.
func TestDerivativesWithSUFRev(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Run("prims", func(t *testing.T) {
		t.Parallel()
		runChecksWith(t, "prims", "", primChecks, 2, false, "suf", []string{"c"})
	})
	checkCorpus(t, 1, "suf", []string{"c"})
}

// TestDerivativesCPS runs the checks of TestDerivativesOfPrimitives and
// TestDerivativesOfPrograms with [rev f] and [sufrev f] generated by the
// Go backend by continuations (ksc --ad=cps), an oracle independent of
// package derive: the adjoint identity checks them against [fwd f], which
// is checked against central differences.
func TestDerivativesCPS(t *testing.T) {
	if !wantBackend("go") {
		t.Skip("the Go backend is not selected")
	}
	t.Run("prims", func(t *testing.T) {
		t.Parallel()
		runChecksWith(t, "prims", "", primChecks, 2, false, "cps", []string{"go"})
	})
	checkCorpus(t, 2, "cps", []string{"go"})
}

// TestDerivativesOfPrograms checks the functions named by the ; CHECK
// lines of every program in testdata/ad the same way, and runs the
// program's own (self_check), which uses $check, when it has one.
func TestDerivativesOfPrograms(t *testing.T) {
	checkCorpus(t, 2, "", []string{"c", "go"})
}

// checkCorpus checks every program of testdata/ad, each in a subtest, at
// n random points, with [rev f] by the strategy rev on the backends.
func checkCorpus(t *testing.T, n int, rev string, backends []string) {
	for _, file := range programFiles(t, "ad") {
		name := strings.TrimSuffix(filepath.Base(file), ".ks")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, checks := fileChecks(t, file)
			if len(checks) == 0 {
				t.Fatalf("%s: no ; CHECK lines", file)
			}
			self := strings.Contains(src, "(def self_check ")
			runChecksWith(t, name, src, checks, n, self, rev, backends)
		})
	}
}

// fileChecks reads a program of the corpus and its ; CHECK lines.
func fileChecks(t *testing.T, file string) (string, []*check) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := parseChecks(string(src))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return string(src), checks
}
