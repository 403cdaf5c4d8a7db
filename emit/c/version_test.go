package cemit

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestLoopVersioning checks which loops get a test before them that
// proves their index checks (version.go), and that the loop is then
// emitted twice: without those checks, and as it was.
func TestLoopVersioning(t *testing.T) {
	for _, c := range []struct {
		name, body string
		guarded    bool
		checks     int // index checks in all the function's code (a sum's elements are emitted twice: sumFloats)
	}{
		{"index plus a value fixed for the loop",
			"(sumbuild n (lam (i : Integer) (index (add i k) v)))", true, 2},
		{"the other order",
			"(sumbuild n (lam (i : Integer) (index (add k i) v)))", true, 2},
		{"an index fixed for the loop",
			"(sumbuild n (lam (i : Integer) (mul (to_float i) (index k v))))", true, 2},
		{"a row fixed for the loop, a column that runs",
			"(sumbuild n (lam (i : Integer) (index (tuple k i) m)))", true, 2},
		{"through lets and an if",
			"(sumbuild n (lam (i : Integer) (let (j (add i k)) (if (gt x 0.0) (index j v) (index k v)))))", true, 4},
		{"both indices of one vector, one test each",
			"(sum (build n (lam (i : Integer) (add (index i v) (index k v)))))", true, 2},
		{"a multiple of the index is not proven",
			"(sumbuild n (lam (i : Integer) (index (mul i 2) v)))", false, 2},
		{"an index that depends on an element is not proven",
			"(sumbuild n (lam (i : Integer) (index (if (gt (index i v) 0.0) 0 1) v)))", true, 6},
		{"the loop over a vector's own indices needs no test",
			"(sumbuild (size v) (lam (i : Integer) (index i v)))", false, 0},
		{"a nest: the outer loop's test proves the inner loop's checks",
			"(sumbuild n (lam (i : Integer) (sumbuild n (lam (j : Integer) (index (tuple i j) m)))))", true, 2},
		{"a triangle",
			"(sumbuild n (lam (r : Integer) (sumbuild (add r 1) (lam (c : Integer) (mul (index (tuple r c) m) (index c v))))))", true, 4},
		{"an index below the loop's count minus a constant",
			"(sumbuild (sub n 2) (lam (i : Integer) (index (add i 2) v)))", true, 2},
		{"a vector and an offset that are parts of a tuple from outside the loop",
			"(let (p (tuple v k)) (sumbuild n (lam (i : Integer) (index (add i (get$2$2 p)) (get$1$2 p)))))", true, 2},
		{"a value fixed for the loop added, then subtracted (the second part of a split loop)",
			"(sumbuild n (lam (i : Integer) (index (sub (add i k) k) v)))", true, 2},
		{"a value subtracted that the index was not given is not proven",
			"(sumbuild n (lam (i : Integer) (index (sub (add i k) n) v)))", false, 2},
		{"a subtracted index may be negative",
			"(sumbuild n (lam (i : Integer) (index (sub i 1) v)))", false, 2},
	} {
		src := "(def f Float ((x : Float) (v : Vec Float) (m : Tensor 2 Float) (n : Integer) (k : Integer)) " + c.body + ")"
		code := funcCode(t, c.name, src)
		guarded := strings.Contains(code, "<= 0 || (")
		checks := strings.Count(code, "ks_check_index")
		if guarded != c.guarded || checks != c.checks {
			t.Errorf("%s: guarded %v with %d checks, want %v with %d\n%s", c.name, guarded, checks, c.guarded, c.checks, code)
		}
	}
}

// funcCode returns the C code of the function f of the program src (not
// that of its inline twin); name names the case in errors.
func funcCode(t *testing.T, name, src string) string {
	t.Helper()
	file, err := syntax.ParseFile("t.ks", []byte(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	prog, err := typecheck.Check([]*syntax.File{file})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, err := Emit(prog, Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	code := out.C[strings.LastIndex(out.C, "ksu_f(ks_ctx *ctx"):]
	return code[:strings.Index(code, "\n}\n")]
}

// TestFoldIvdep checks which reverse loops (folds updating their state's
// vectors in place) get KS_IVDEP, and under which conditions: the updates
// at the loop's index plus shifts far enough apart, nothing else written,
// the updated vectors not read. A matrix's updates (matrix: the state is
// a Tensor 2, r a row fixed for the loop) qualify in one row.
func TestFoldIvdep(t *testing.T) {
	for _, c := range []struct {
		name, body string
		ivdep      bool
		cond       string // a condition of the guard, if any
		matrix     bool
	}{
		{"one update", "($addAt s i (index i w))", true, "", false},
		{"two updates at the index", "($addAt ($addAt s i (index i w)) i 1.0)", true, "", false},
		{"updates a shift apart", "($addAt ($addAt s i (index i w)) (add i k) 2.0)", true, "((k_4) >= 8 || (k_4) <= -8)", false},
		{"shifts of a size apart", "($addAt ($addAt s (add i (size w)) (index i w)) (add i (mul 2 (size w))) 2.0)", true, " >= 8 || ", false},
		{"updates one apart", "($addAt ($addAt s i (index i w)) (add i 1) 2.0)", false, "", false},
		{"the updated vector read", "($addAt s i (index i s))", false, "", false},
		{"an update not at a shift of the index", "($addAt s (mul i 2) 1.0)", false, "", false},
		{"a set", "($setAt s i (index i w))", false, "", false},
		{"a call", "($addAt s i (h (index i w)))", false, "", false},
		{"a row at the index", "($addAt s (tuple r i) (index i w))", true, "", true},
		{"a row a shift apart", "($addAt ($addAt s (tuple r i) (index i w)) (tuple r (add i k)) 2.0)", true, "((k_4) >= 8 || (k_4) <= -8)", true},
		{"two rows", "($addAt ($addAt s (tuple r i) (index i w)) (tuple k i) 2.0)", false, "", true},
		{"a row that varies", "($addAt s (tuple i i) (index i w))", false, "", true},
	} {
		src := `(def h Float (x : Float) (mul x (sin x)))
(def g (Vec Float) ((v : Vec Float) (w : Vec Float) (n : Integer) (k : Integer)) v)
(def [rev [g (Tuple (Vec Float) (Vec Float) Integer Integer)]] (Tuple (Vec Float) (Vec Float) (Tuple) (Tuple))
     ((x : Tuple (Vec Float) (Vec Float) Integer Integer) (dr : Vec Float))
  (let ((v w n k) x)
    (tuple ($ifold n dr (lam (s_i : Tuple (Vec Float) Integer) (let ((s i) s_i) ` + c.body + `))) w (tuple) (tuple))))
`
		if c.matrix {
			src = `(def g (Tensor 2 Float) ((m : Tensor 2 Float) (w : Vec Float) (n : Integer) (k : Integer) (r : Integer)) m)
(def [rev [g (Tuple (Tensor 2 Float) (Vec Float) Integer Integer Integer)]] (Tuple (Tensor 2 Float) (Vec Float) (Tuple) (Tuple) (Tuple))
     ((x : Tuple (Tensor 2 Float) (Vec Float) Integer Integer Integer) (dr : Tensor 2 Float))
  (let ((m w n k r) x)
    (tuple ($ifold n dr (lam (s_i : Tuple (Tensor 2 Float) Integer) (let ((s i) s_i) ` + c.body + `))) w (tuple) (tuple) (tuple))))
`
		}
		out, err := Emit(checked(t, src), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		code := out.C[strings.LastIndex(out.C, "ksu_rev_g(ks_ctx *ctx"):]
		code = code[:strings.Index(code, "\n}\n")]
		if got := strings.Count(code, "KS_IVDEP"); got != map[bool]int{true: 1, false: 0}[c.ivdep] {
			t.Errorf("%s: %d KS_IVDEP, want ivdep %v\n%s", c.name, got, c.ivdep, code)
		}
		if c.cond != "" && !strings.Contains(code, c.cond) {
			t.Errorf("%s: no condition %q\n%s", c.name, c.cond, code)
		}
		// Under a condition, the loop without checks is there twice:
		// with KS_IVDEP when the condition holds, and without.
		loops := map[bool]int{true: 3, false: 2}[c.cond != ""]
		if got := strings.Count(code, "for (int64_t"); c.ivdep && got != loops {
			t.Errorf("%s: %d copies of the loop, want %d\n%s", c.name, got, loops, code)
		}
	}
}

// TestInnerFoldIvdep: the inner loop of a reverse loop nest (the reverse
// of a triangular product: row r of a matrix and a prefix of a vector
// updated for c <= r), whose checks the outer loop's guard proves, gets
// KS_IVDEP too, though it has no check of its own left to prove.
func TestInnerFoldIvdep(t *testing.T) {
	src := `(def g (Tensor 2 Float) ((m : Tensor 2 Float) (w : Vec Float) (n : Integer)) m)
(def [rev [g (Tuple (Tensor 2 Float) (Vec Float) Integer)]] (Tuple (Tensor 2 Float) (Vec Float) (Tuple))
     ((x : Tuple (Tensor 2 Float) (Vec Float) Integer) (dr : Tensor 2 Float))
  (let ((m w n) x)
    (let ((dm dw)
          ($ifold n (tuple dr (constVec (size w) 0.0))
            (lam (s_r : Tuple (Tuple (Tensor 2 Float) (Vec Float)) Integer)
              (let ((s r) s_r)
                ($ifold (add r 1) s
                  (lam (t_c : Tuple (Tuple (Tensor 2 Float) (Vec Float)) Integer)
                    (let ((t c) t_c)
                      (let ((a b) t)
                        (tuple ($addAt a (tuple r c) (index c w))
                               ($addAt b c (index (tuple r c) m)))))))))))
      (tuple dm dw (tuple)))))
`
	out, err := Emit(checked(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	code := out.C[strings.LastIndex(out.C, "ksu_rev_g(ks_ctx *ctx"):]
	code = code[:strings.Index(code, "\n}\n")]
	if got := strings.Count(code, "KS_IVDEP"); got != 1 {
		t.Errorf("%d KS_IVDEP, want 1 (the inner loop of the copy without checks)\n%s", got, code)
	}
}
