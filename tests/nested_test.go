package tests

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nestedCases are Float functions of a Vec Float and a Float for
// TestNestedDerivatives: through calls, if, fold, build and sumbuild, and
// recursion.
var nestedCases = []struct{ name, src string }{
	{"poly", `(def f Float ((v : Vec Float) (a : Float))
  (mul (mul a a) (sumbuild (size v) (lam (i : Integer) (mul (index i v) (sin (index i v)))))))`},
	{"calls_if_fold", `(def sq Float (x : Float) (mul x x))
(def lse Float (v : Vec Float)
  (let (m (index 0 v))
    (add m (log (sumbuild (size v) (lam (i : Integer) (exp (sub (index i v) m))))))))
(def f Float ((v : Vec Float) (a : Float))
  (let ((w (build (size v) (lam (i : Integer) (mul a (sin (index i v))))))
        (s (fold (lam (acc_x : Tuple Float Float) (let ((acc x) acc_x) (add (mul acc 0.9) (sq x)))) a v)))
    (add (lse w) (if (gt s 1.0) (mul s s) (sin s)))))`},
	{"recursion", `(def pw Float ((x : Float) (n : Integer)) (if (eq n 0) 1.0 (mul x (pw x (sub n 1)))))
(def f Float ((v : Vec Float) (a : Float))
  (sumbuild (size v) (lam (i : Integer) (mul (pw (index i v) (add i 2)) (cos a)))))`},
}

// TestNestedDerivatives checks the derivatives of derivatives (issue 16)
// of each case's f against central differences of its first derivatives
// (which TestDerivativesOfPrograms checks against f), at one point x =
// (v, a) in one direction u, compiled to C, to Go, and with --rev bog:
//
//	[fwd [rev f]] (x, 1) (u, 0)   against ([rev f] (x+hu) - [rev f] (x-hu)) / 2h
//	[rev [rev f]] (x, 1) u        the same, and [fwd f] x u
//	[fwd [fwd f]] (x, u) (u, 0)   against ([fwd f] (x+hu) u - [fwd f] (x-hu) u) / 2h
//	[rev [fwd f]] (x, u) 1        the same Hessian-vector product, and [rev f] x 1
//	[jac [rev f]] (x, 1)          its column j against the product with e_j
//	[fwd [sufrev f]], [rev [sufrev f]]  as those of [rev f], the same function
//	[fwd [vrev f]] (x, 1) (u, 0)  the value's tangent against [fwd f] x u,
//	                              the gradient's as [fwd [rev f]]'s
//	[rev [vrev f]] (x, 1) (0.5, u)  H u + 0.5 [rev f] x 1, and [fwd f] x u
//
// The program prints the relative errors, each of which must be small.
func TestNestedDerivatives(t *testing.T) {
	needCC(t)
	const T = "(Tuple (Vec Float) Float)"
	main := `
(gdef fwd [rev [f ` + T + `]])
(gdef rev [rev [f ` + T + `]])
(gdef fwd [fwd [f ` + T + `]])
(gdef rev [fwd [f ` + T + `]])
(gdef jac [rev [f ` + T + `]])
(gdef fwd [sufrev [f ` + T + `]])
(gdef rev [sufrev [f ` + T + `]])
(gdef fwd [vrev [f ` + T + `]])
(gdef rev [vrev [f ` + T + `]])
(def err Float ((a : ` + T + `) (b : ` + T + `))
  (let (d (ts_add a (ts_neg b))) (div (sqrt (ts_dot d d)) (add 1e-12 (sqrt (ts_dot b b))))))
(def errf Float ((a : Float) (b : Float)) (div (abs (sub a b)) (add 1e-12 (abs b))))
(def main Integer ()
  (let ((x (tuple (Vec_init 0.3 -0.2 0.5) 0.7))
        (u (tuple (Vec_init 1.0 0.5 -0.25) 0.3))
        (h 1e-5)
        (xp (ts_add x (ts_scale h u)))
        (xm (ts_add x (ts_scale (neg h) u)))
        (fd (ts_scale (div 0.5 h) (ts_add ([rev f] xp 1.0) (ts_neg ([rev f] xm 1.0)))))
        (fdf (div (sub ([fwd f] xp u) ([fwd f] xm u)) (mul 2.0 h)))
        (hv ([fwd [rev f]] (tuple x 1.0) (tuple u 0.0)))
        (rr ([rev [rev f]] (tuple x 1.0) u))
        (rf ([rev [fwd f]] (tuple x u) 1.0))
        (jac ([jac [rev f]] x 1.0))
        (e0 (tuple (Vec_init 1.0 0.0 0.0) 0.0))
        (col0 (tuple (build 3 (lam (i : Integer) (index (tuple i 0) jac))) (index (tuple 3 0) jac)))
        (hv0 ([fwd [rev f]] (tuple x 1.0) (tuple e0 0.0)))
        (hs ([fwd [sufrev f]] (tuple x 1.0) (tuple u 0.0)))
        (rs ([rev [sufrev f]] (tuple x 1.0) u))
        (vf ([fwd [vrev f]] (tuple x 1.0) (tuple u 0.0)))
        (vr ([rev [vrev f]] (tuple x 1.0) (tuple 0.5 u))))
    (print (err hv fd) " " (err (get$1$2 rr) fd) " " (errf (get$2$2 rr) ([fwd f] x u)) " "
           (errf ([fwd [fwd f]] (tuple x u) (tuple u (ts_zero u))) fdf) " "
           (err (get$1$2 rf) fd) " " (err (get$2$2 rf) ([rev f] x 1.0)) " "
           (err col0 hv0) " " (err hs fd) " " (err (get$1$2 rs) fd) " "
           (errf (get$1$2 vf) ([fwd f] x u)) " " (err (get$2$2 vf) fd) " "
           (err (get$1$2 vr) (ts_add fd (ts_scale 0.5 ([rev f] x 1.0)))) " " (errf (get$2$2 vr) ([fwd f] x u)) "\n")))
`
	for _, tc := range nestedCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "nested.ks")
			if err := os.WriteFile(file, []byte(tc.src+"\n"+main), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, run := range derivedRuns {
				if !wantBackend(run.backend) {
					continue
				}
				r := runProgramWith(t, run.backend, run.opts, file)
				if r.code != 0 {
					t.Fatalf("%s --rev=%q: status %d\n%s", run.backend, run.opts.Rev, r.code, r.stderr)
				}
				fields := strings.Fields(r.stdout)
				if len(fields) != 13 {
					t.Fatalf("%s --rev=%q printed %q, want 13 errors", run.backend, run.opts.Rev, r.stdout)
				}
				for i, s := range fields {
					e, err := strconv.ParseFloat(s, 64)
					// Central differences with h = 1e-5 are good to ~1e-9
					// relative; 1e-6 leaves room and still fails a wrong
					// second derivative by far.
					if err != nil || !(e < 1e-6) || math.IsNaN(e) {
						t.Errorf("%s --rev=%q: check %d: relative error %s (all: %s)", run.backend, run.opts.Rev, i+1, s, fmt.Sprint(fields))
					}
				}
			}
		})
	}
}

// TestDerivativesOfCallsOfDerivatives differentiates defs that call
// derived functions (issue 16; GradBench's saddle and particle are such):
// maxf runs gradient ascent in y with [rev f] inside nTimes, then
// evaluates f there (maxs the same with [sufrev f], maxv with [vrev f],
// which gives the value too); slope reads [fwd f]
// in a sumbuild. [rev g] and
// [fwd g] of each are checked against central differences of g, in C, Go
// and with --rev bog.
func TestDerivativesOfCallsOfDerivatives(t *testing.T) {
	needCC(t)
	src := `
(def f Float ((x : Tuple Float Float) (y : Tuple Float Float))
  (let (((x1 x2) x) ((y1 y2) y))
    (sub (add (mul x1 x1) (mul (sin x1) (mul y1 y1))) (add (mul x2 x2) (mul y2 (mul y2 (cos x2)))))))
(def maxf Float ((x : Tuple Float Float) (y0 : Tuple Float Float))
  (f x (nTimes 6 y0 (lam (y : Tuple Float Float)
         (ts_add y (ts_scale 0.1 (get$2$2 ([rev f] (tuple x y) 1.0))))))))
(def maxs Float ((x : Tuple Float Float) (y0 : Tuple Float Float))
  (f x (nTimes 6 y0 (lam (y : Tuple Float Float)
         (ts_add y (ts_scale 0.1 (get$2$2 ([sufrev f] (tuple x y) 1.0))))))))
(def maxv Float ((x : Tuple Float Float) (y0 : Tuple Float Float))
  (get$1$2 ([vrev f] (tuple x (nTimes 6 y0 (lam (y : Tuple Float Float)
              (ts_add y (ts_scale 0.1 (get$2$2 (get$2$2 ([vrev f] (tuple x y) 1.0))))))))
            1.0)))
(def slope Float ((x : Tuple Float Float) (y0 : Tuple Float Float))
  (sumbuild 3 (lam (i : Integer)
    (let (d (to_float i))
      ([fwd f] (tuple x (ts_scale d y0)) (tuple (tuple 1.0 d) y0))))))
(gdef rev [maxf (Tuple (Tuple Float Float) (Tuple Float Float))])
(gdef fwd [maxf (Tuple (Tuple Float Float) (Tuple Float Float))])
(gdef rev [maxs (Tuple (Tuple Float Float) (Tuple Float Float))])
(gdef fwd [maxs (Tuple (Tuple Float Float) (Tuple Float Float))])
(gdef rev [maxv (Tuple (Tuple Float Float) (Tuple Float Float))])
(gdef fwd [maxv (Tuple (Tuple Float Float) (Tuple Float Float))])
(gdef rev [slope (Tuple (Tuple Float Float) (Tuple Float Float))])
(gdef fwd [slope (Tuple (Tuple Float Float) (Tuple Float Float))])
(def err Float ((a : Float) (b : Float)) (div (abs (sub a b)) (add 1e-12 (abs b))))
(def main Integer ()
  (let ((p (tuple (tuple 0.7 0.4) (tuple 0.5 -0.3)))
        (u (tuple (tuple 1.0 -0.5) (tuple 0.25 0.5)))
        (h 1e-5)
        (pp (ts_add p (ts_scale h u)))
        (pm (ts_add p (ts_scale (neg h) u)))
        (fdm (div (sub (maxf pp) (maxf pm)) (mul 2.0 h)))
        (fds (div (sub (slope pp) (slope pm)) (mul 2.0 h)))
        (fdx (div (sub (maxs pp) (maxs pm)) (mul 2.0 h))))
    (print (err ([fwd maxf] p u) fdm) " " (err (ts_dot ([rev maxf] p 1.0) u) fdm) " "
           (err ([fwd slope] p u) fds) " " (err (ts_dot ([rev slope] p 1.0) u) fds) " "
           (err ([fwd maxs] p u) fdx) " " (err (ts_dot ([rev maxs] p 1.0) u) fdx) " "
           (err ([fwd maxv] p u) fdm) " " (err (ts_dot ([rev maxv] p 1.0) u) fdm) "\n")))
`
	file := filepath.Join(t.TempDir(), "calls.ks")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, run := range derivedRuns {
		if !wantBackend(run.backend) {
			continue
		}
		r := runProgramWith(t, run.backend, run.opts, file)
		fields := strings.Fields(r.stdout)
		if r.code != 0 || len(fields) != 8 {
			t.Fatalf("%s --rev=%q: status %d, printed %q\n%s", run.backend, run.opts.Rev, r.code, r.stdout, r.stderr)
		}
		for i, s := range fields {
			if e, err := strconv.ParseFloat(s, 64); err != nil || !(e < 1e-6) {
				t.Errorf("%s --rev=%q: check %d: relative error %s (all: %v)", run.backend, run.opts.Rev, i+1, s, fields)
			}
		}
	}
}
