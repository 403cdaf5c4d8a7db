package goemit_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	goemit "github.com/ksc-lang/ksc/emit/go"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// programs are run through both backends, which must print the same.
var programs = map[string]string{
	"tensors": `; Structural primitives over vectors, nested vectors and rank-2/3 tensors.
(def mat (Tensor 2 Float) ((r : Integer) (c : Integer))
  (build (tuple r c) (lam (ij : Tuple Integer Integer)
    (let ((i j) ij) (add (to_float (mul 10 i)) (div (to_float j) 4.0))))))
(def jag (Vec (Vec Float)) (n : Integer)
  (build n (lam (i : Integer) (build i (lam (j : Integer) (to_float (add i j)))))))
(def main Integer ()
  (let ((m (mat 2 3))
        (t3 (build (tuple 2 3 2) (lam (ijk : Tuple Integer Integer Integer)
              (let ((i j k) ijk) (tuple i (mul j k) (to_float k))))))
        (v (build 5 (lam (i : Integer) (mul 0.5 (to_float i)))))
        (j (jag 4)))
    (print
      "m " m "\n" "size m " (size m) "\n" "m[1,2] " (index (tuple 1 2) m) "\n"
      "t3 " t3 "\n" "size t3 " (size t3) "\n"
      "sum m " (sum m) " sumbuild " (sumbuild (tuple 2 3) (lam (ij : Tuple Integer Integer) (index ij m))) "\n"
      "jag " j " sizes " (map (lam (x : Vec Float) (size x)) j) "\n"
      "empty " (build 0 (lam (i : Integer) 1.0)) (build (tuple 2 0) (lam (ij : Tuple Integer Integer) 1)) (build (tuple 0 2) (lam (ij : Tuple Integer Integer) 1)) "\n"
      "map2 " (map2 (lam (ab : Tuple Float Float) (mul (get$1$2 ab) (get$2$2 ab))) v v) "\n"
      "map m " (map (lam (x : Float) (tuple x (gt x 10.0))) m) "\n"
      "sum vecs " (sum (build 3 (lam (i : Integer) (build 2 (lam (k : Integer) (to_float (add i k))))))) "\n"
      "sum tuples " (sumbuild 4 (lam (i : Integer) (tuple i (to_float i) (Vec_init (to_float i) 1.0)))) "\n"
      "sum mats " (sum (build 2 (lam (i : Integer) (mat 2 2)))) "\n"
      "sum -0 " (sum (Vec_init -0.0)) " " (sum (Vec_init -0.0 -0.0)) " " (sum (Vec_init -0.0 0.0)) " " (sumbuild 1 (lam (i : Integer) -0.0)) "\n"
      "sum ints " (sum (Vec_init 9223372036854775807 1)) "\n"
      "vec of tuples " (Vec_init (tuple 1 2.5) (tuple 3 4.5)) "\n"
      "nested " (Vec_init (Vec_init (Vec_init 1 2) (Vec_init 3)) (Vec_init (Vec_init 4))) "\n")))
`,
	"folds": `; fold with tuple accumulators, recursion, lets, ifs.
(def fact Integer (n : Integer) (if (lte n 1) 1 (mul n (fact (sub n 1)))))
(def fib Integer (n : Integer) (if (lt n 2) n (add (fib (sub n 1)) (fib (sub n 2)))))
(def count_down (Vec Integer) ((n : Integer) (acc : Vec Integer))
  (if (eq n 0) acc (count_down (sub n 1) (build (add (size acc) 1) (lam (i : Integer) (if (lt i (size acc)) (index i acc) n))))))
(def stats (Tuple Float Float Integer) (v : Vec Float)
  (fold (lam (acc_x : Tuple (Tuple Float Float Integer) Float)
          (let ((acc x) acc_x)
            (let ((s ss n) acc)
              (tuple (add s x) (add ss (mul x x)) (add n 1)))))
        (tuple 0.0 0.0 0) v))
(def tup_arg Float (t : Tuple Float (Tuple Integer Float)) (let ((a bc) t) (let ((b c) bc) (add a (mul (to_float b) c)))))
(def main Integer ()
  (let ((v (build 6 (lam (i : Integer) (sub (to_float i) 2.5))))
        ((s ss n) (stats v))
        (unused (print "side effect in let\n")))
    (print "fact " (fact 20) " " (fact 25) " fib " (fib 20) "\n"
           "count_down " (count_down 5 (build 0 (lam (i : Integer) 0))) "\n"
           "stats " (stats v) " mean " (div s (to_float n)) "\n"
           "fold empty " (fold (lam (a_x : Tuple Float Float) (add (get$1$2 a_x) (get$2$2 a_x))) 7.0 (build 0 (lam (i : Integer) 1.0))) "\n"
           "fold vec acc " (fold (lam (a_x : Tuple (Vec Float) Float) (let ((a x) a_x) (map (lam (y : Float) (add y x)) a))) (Vec_init 0.0 1.0) v) "\n"
           "tup_arg " (tup_arg 1.0 (tuple 2 3.5)) " " (tup_arg (tuple 1.0 (tuple 2 3.5))) "\n"
           "if " (if (gt s 0.0) "pos" "nonpos") " " (if (and (gt n 3) (lt n 10)) (tuple 1 2) (tuple 3 4)) "\n"
           "print returns " (print) " " (print 1 2 3) " " (print (tuple 1 2 3)) "\n")))
`,
	"misc": `; constVec, deltaVec, delta, unzip, buildFromSparse, Vec_init, ts_*, eq/ne, $trace, $check, $dummy.
(def f Float (xy : Tuple Float (Vec Float))
  (let ((x v) xy) (mul x (sumbuild (size v) (lam (i : Integer) (mul (index i v) (index i v)))))))
(def main Integer ()
  (let ((v (Vec_init 1.0 2.0 3.0))
        (m (build (tuple 2 2) (lam (ij : Tuple Integer Integer) (to_float (add (get$1$2 ij) (get$2$2 ij))))))
        (tv (Vec_init (tuple 1 1.5 "a") (tuple 2 2.5 "b"))))
    (print
      "constVec " (constVec 3 (tuple 1.0 true)) " " (constVec (tuple 2 2) v) " " (constVec 0 1) "\n"
      "deltaVec " (deltaVec 4 2 1.5) " " (deltaVec 3 -1 1.5) " " (deltaVec 3 7 1.5) " " (deltaVec (tuple 2 3) (tuple 1 2) v) " " (deltaVec 2 0 (tuple 1 v)) "\n"
      "delta " (delta 1 1 v) " " (delta 1 2 v) " " (delta (tuple 1 2) (tuple 1 2) 3) " " (delta 0 1 (tuple 2.0 (Vec_init 4))) "\n"
      "unzip " (unzip tv) " " (unzip (build (tuple 2 2) (lam (ij : Tuple Integer Integer) (tuple (get$1$2 ij) (to_float (get$2$2 ij)))))) "\n"
      "sparse " (buildFromSparse (tuple 2 2) 3 (lam (i : Integer) (tuple (tuple (div i 2) 1) (to_float i)))) " "
                (buildFromSparse 3 2 (lam (i : Integer) (tuple i (tuple 1.0 (tuple))))) "\n"
      "ts_add " (ts_add (tuple 1.0 2 v) (tuple 0.5 (tuple) (Vec_init 1.0 1.0 1.0))) " " (ts_add m m) "\n"
      "ts_scale " (ts_scale 2.0 (tuple 1.0 3 v "s" true)) " " (ts_scale -1.0 m) "\n"
      "ts_dot " (ts_dot (tuple 1.0 v) (tuple 2.0 v)) " " (ts_dot m m) " " (ts_dot 3 4) "\n"
      "ts_neg " (ts_neg (tuple 1.0 0.0 -0.0 v 7)) "\n"
      "eq " (eq v v) (eq v (Vec_init 1.0 2.0)) (eq m m) (eq tv tv) (ne tv (Vec_init (tuple 1 1.5 "a") (tuple 2 2.5 "c"))) (eq 0.0 -0.0) (eq (div 0.0 0.0) (div 0.0 0.0)) (eq "a" "a") (eq (tuple) (tuple)) "\n"
      "trace " ($trace (tuple 1 v m)) " " ($trace "s") " " ($trace (tuple)) "|\n"
      "check " (lt ($check (lam (xy : Tuple Float (Vec Float)) (f xy))
                   (lam (xy_dt : Tuple (Tuple Float (Vec Float)) Float)
                     (let ((xw dt) xy_dt) (let ((x w) xw)
                       (tuple (mul dt (sumbuild (size w) (lam (i : Integer) (mul (index i w) (index i w)))))
                              (build (size w) (lam (i : Integer) (mul dt (mul 2.0 (mul x (index i w))))))))))
                   (tuple 1.5 v) (tuple 1e-7 (Vec_init 1e-7 -1e-7 2e-7)) 1.0) 1e-5) "\n"
      "check0 " ($check (lam (x : Float) 3.0) (lam (x_dt : Tuple Float Float) 0.0) 1.0 0.5 1.0) "\n"
      "dummy " ($dummy Float) ($dummy Integer) ($dummy (Vec Float)) ($dummy (Tensor 2 Float)) (size ($dummy (Tensor 3 Integer))) ($dummy (Tuple Float (Vec Integer))) "\n"
      "inline " ($inline (f (tuple 2.0 v))) " copydown " ($copydown v) "\n")))
`,
	"derived": `(def g Float ((x : Float) (v : Vec Float))
  (let (s (sumbuild (size v) (lam (i : Integer) (mul (sin (index i v)) x))))
    (if (gt s 0.0) (mul s s) (exp s))))
(gdef fwd [g (Tuple Float (Vec Float))])
(gdef rev [g (Tuple Float (Vec Float))])
(def h Float (v : Vec Float) (fold (lam (a_x : Tuple Float Float) (let ((a x) a_x) (add (mul a x) 1.0))) 0.5 v))
(gdef rev [h (Vec Float)])
(gdef fwd [h (Vec Float)])
(def main Integer ()
  (let (v (Vec_init 0.5 -1.0 2.0))
    (print ([fwd g] (tuple 1.5 v) (tuple 1.0 (Vec_init 0.0 1.0 0.0))) "\n"
           ([rev g] (tuple 1.5 v) 1.0) "\n"
           ([rev h] v 1.0) " " ([fwd h] v (Vec_init 1.0 0.0 0.0)) "\n")))
`,
	"floats": `(def show Integer (x : Float) (print x " "))
(def main Integer ()
  (let ((z 0.0) (one 1.0) (inf (div 1.0 0.0)))
  (print
    0.0 " " -0.0 " " 1.0 " " 0.1 " " 1e-05 " " 0.0001 " " 0.00012345678 " " (div 2.0 3.0) " " 1e6 " " 999999.0 " " 999999.5 " " 1234567.0 "\n"
    123456.0 " " 100000.0 " " 1e300 " " 1e-300 " " 4.9e-324 " " 1.7976931348623157e308 " " -2.5e-7 " " 12345.678 " " 0.000099999 " " 999999.49 " " 9999995.0 "\n"
    inf " " (neg inf) " " (div z z) " " (neg (div z z)) " " (sub inf inf) " " (mul inf z) " " (sqrt -1.0) " " (log -1.0) " " (log 0.0) "\n"
    (exp 1000.0) " " (exp -1000.0) " " (pow 0.0 -1) " " (pow -2.0 3) " " (pow 2.0 -3) " " (pow 10.0 22) " " (pow 1.5 0) "\n"
    (add 0.1 0.2) " " (mul 1e308 10.0) " " (to_float 9007199254740993) " " (to_float -9223372036854775807) "\n"
    1234565.0 " " 1234575.0 " " 0.5 " " 2.5 " " 1048576.5 " " 123456.5 " " 1.0000005 " " 0.000012345 "\n"
    (lgamma 0.5) " " (lgamma -0.5) " " (lgamma 0.0) " " (lgamma -1.0) " " (erf 0.5) " " (tanh 0.5) " " (cosh 2.0) " " (abs -0.0) " " (max -0.0 0.0) " " (max 0.0 -0.0) " " (max (div z z) 1.0) " " (max 1.0 (div z z)) "\n"
    (sin 1e22) " " (cos 1e22) " " (sin 3.0) " " (exp 0.5) " " (log 10.0) " " (sqrt 2.0) " " (pi) " " (digamma 1.0) " " (digamma -0.5) " " (digamma 0.0) "\n"
    (show 1.5) (show (div -1.0 3.0)) "\n")))
`,
	"ints": `(def main Integer ()
  (let ((big 9223372036854775807) (small (sub 0 9223372036854775807)))
  (print
    (add big 1) " " (sub (sub small 1) 1) " " (mul big 2) " " (neg (sub small 1)) " " (div (sub small 1) -1) " " (div -7 2) " " (div 7 -2) " " (div -7 -2) "\n"
    -9223372036854775808 " " (mul 3037000500 3037000500) " " 0x7fffffffffffffff " " (to_float 0x10) "\n"
    (gt 1 2) (lt 1 2) (gte 2 2) (lte 3 2) " " (and true false) (or true false) (not true) " " (bool_to_float true) " " (bool_to_float false) "\n"
    ($ranhashdoub 0) " " ($ranhashdoub 1) " " ($ranhashdoub 20000) " " ($ranhashdoub -1) " " ($ranhashdoub 4294967296) " " ($ranhashdoub 2147483648) " " ($ranhashdoub -9223372036854775808) "\n")))
`,
}

// failing are programs that stop with a runtime error: both backends
// must print the same output, the same message and exit with status 1.
var failing = map[string]string{
	"idx": `(def main Integer () (let (v (Vec_init 1.0 2.0 3.0)) (print "before\n" (index 5 v))))
`,
	"idx2": `(def main Integer () (let (m (build (tuple 2 3) (lam (ij : Tuple Integer Integer) 1.0))) (print (index (tuple 1 3) m))))
`,
	"assert": `(def f Float (x : Float) (assert (gt x 0.0) (sqrt x)))
(def main Integer () (print (f 4.0) "\n" (f -1.0)))
`,
	"sumempty": `(def main Integer () (print (sum (build 0 (lam (i : Integer) 1.0)))))
`,
	"sbempty2": `(def main Integer () (print (sumbuild (tuple 3 -1) (lam (i : Tuple Integer Integer) 1))))
`,
	"negbuild2": `(def main Integer () (print (build (tuple 2 -3) (lam (i : Tuple Integer Integer) 1.0))))
`,
	"map2mm2": `(def main Integer () (print (map2 (lam (ab : Tuple Float Float) (add (get$1$2 ab) (get$2$2 ab))) (build (tuple 2 3) (lam (i : Tuple Integer Integer) 1.0)) (build (tuple 2 2) (lam (i : Tuple Integer Integer) 1.0)))))
`,
	"divzero": `(def main Integer () (let (z (sub 1 1)) (print "x" (div 7 z))))
`,
	"sumvecmm": `(def main Integer () (print (sumbuild 3 (lam (i : Integer) (build (add i 1) (lam (j : Integer) 1.0))))))
`,
	"tsdotmm": `(def main Integer () (print (ts_dot (tuple 1.0 (Vec_init 1.0 2.0)) (tuple 1.0 (Vec_init 1.0)))))
`,
	"submm": `(def main Integer () (print (sub (Vec_init 1.0 2.0) (Vec_init 1.0))))
`,
	"sparseidx2": `(def main Integer () (print (buildFromSparse (tuple 2 2) 2 (lam (i : Integer) (tuple (tuple i 2) 1.0)))))
`,
	"checkmm": `(def main Integer () (print ($check (lam (v : Vec Float) (sum v)) (lam (v_dt : Tuple (Vec Float) Float) (Vec_init 1.0)) (Vec_init 1.0 2.0) (Vec_init 1.0) 1.0)))
`,
	"traceerr": `(def main Integer () (print ($trace (Vec_init 1 2)) (index 3 (Vec_init 1 2))))
`,
	"vecinit_big": `(def main Integer () (print (constVec 100000000000000000 1.0)))
`,
}

// needTools skips the test unless a C compiler and the go command are
// available.
func needTools(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds programs")
	}
	for _, tool := range []string{"cc", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
}

// compile loads and optimises a program given as text.
func compile(t *testing.T, name, src string) *ir.Program {
	t.Helper()
	prog, err := driver.LoadSources([]driver.Source{{Name: name + ".ks", Text: []byte(src)}}, driver.Derived)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatalf("optimise: %v", err)
	}
	return prog
}

// outcome is what running a program did.
type outcome struct {
	stdout, stderr string
	code           int
}

// run builds prog with a backend and runs it.
func run(t *testing.T, prog *ir.Program, backend string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	var exe string
	var err error
	switch backend {
	case "c":
		exe, err = driver.BuildC(ctx, prog, driver.CC{Cmd: "cc", Flags: []string{"-O1"}}, dir)
	case "go":
		exe, err = driver.BuildGo(ctx, prog, dir)
	}
	if err != nil {
		t.Fatalf("%s backend: %v", backend, err)
	}
	var stdout, stderr bytes.Buffer
	code, err := driver.Run(ctx, exe, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%s backend: running: %v", backend, err)
	}
	return outcome{stdout.String(), stderr.String(), code}
}

// compare runs a program through both backends and compares.
func compare(t *testing.T, name, src string, wantCode int) {
	prog := compile(t, name, src)
	c, g := run(t, prog, "c"), run(t, prog, "go")
	if c != g {
		t.Errorf("the backends differ\n--- C (status %d) ---\n%s\n%s\n--- Go (status %d) ---\n%s\n%s",
			c.code, c.stdout, c.stderr, g.code, g.stdout, g.stderr)
	}
	if c.code != wantCode {
		t.Errorf("C: status %d, want %d; stderr: %s", c.code, wantCode, c.stderr)
	}
	if wantCode == 1 && (!strings.Contains(g.stderr, ": runtime error: ") || strings.Count(g.stderr, "\n") != 1) {
		t.Errorf("Go: stderr %q, want one line with a runtime error", g.stderr)
	}
}

// TestBackendsAgree runs programs that use every structural primitive,
// print every kind of value and stop with each kind of runtime error,
// through the C and the Go backend, and compares stdout, stderr and exit
// status byte for byte.
func TestBackendsAgree(t *testing.T) {
	needTools(t)
	for name, src := range programs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			compare(t, name, src, 0)
		})
	}
	for name, src := range failing {
		t.Run("fail_"+name, func(t *testing.T) {
			t.Parallel()
			compare(t, name, src, 1)
		})
	}
}

// TestVet checks that the generated code passes go vet and gofmt, built
// against the runtime package itself.
func TestVet(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	for name, src := range programs {
		src, err := goemit.Emit(compile(t, name, src), goemit.Options{Runtime: "github.com/ksc-lang/ksc/runtime/go"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sub := filepath.Join(dir, name)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "main.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("gofmt", "-l", sub).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("%s: not gofmt'ed: %v %s", name, err, out)
		}
	}
	// The generated packages live under the test's temporary directory,
	// outside the module: vet them as files with the module's go.mod.
	for name := range programs {
		cmd := exec.Command("go", "vet", filepath.Join(dir, name, "main.go"))
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: go vet: %v\n%s", name, err, out)
		}
	}
}

// TestEdefError checks that calling an edef the Go backend cannot
// implement is an error at the call, and that a C library function it
// knows is called.
func TestEdefError(t *testing.T) {
	prog := compile(t, "edef", `(edef mystery Float (Float))
(def main Integer ()
  (print (mystery 1.0)))`)
	_, err := driver.EmitGo(prog)
	var se *syntax.Error
	if !errors.As(err, &se) || se.Pos.Line != 3 || !strings.Contains(se.Msg, "mystery") {
		t.Errorf("got %v (%T), want an error at line 3 naming mystery", err, err)
	}
	if driver.IsInternal(err) {
		t.Errorf("an internal error: %v", err)
	}
	prog = compile(t, "atan2", `(edef atan2 Float (Tuple Float Float))
(edef floor Float (Float))
(def main Integer ()
  (print (atan2 1.0 2.0) " " (floor 2.5)))`)
	if _, err := driver.EmitGo(prog); err != nil {
		t.Errorf("atan2 and floor: %v", err)
	}
}

// TestNoMain checks that a program without main is an error, not a panic.
func TestNoMain(t *testing.T) {
	prog := compile(t, "nomain", `(def f Float (x : Float) x)`)
	if _, err := driver.EmitGo(prog); err == nil || driver.IsInternal(err) {
		t.Errorf("got %v, want an error about main", err)
	}
}
