package cemit

import (
	"regexp"
	"strings"
	"testing"
)

// TestInlineTwins checks which functions get an inline twin and who calls
// it: a small function that loops, called by functions that loop (compiled
// twice, KS_CLONES), which call the twin; a function that does not loop,
// and the library's entry points, call the original. A recursive or a
// large function gets no twin.
func TestInlineTwins(t *testing.T) {
	src := `
(def sq Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (let (e (index i v)) (mul e e)))))
(def rows Float (m : Vec (Vec Float)) (sumbuild (size m) (lam (r : Integer) (sq (index r m)))))
(def once Float (v : Vec Float) (add (sq v) 1.0))
(def [rev [sq (Vec Float)]] (Vec Float) ((v : Vec Float) (dr : Float))
  (build (size v) (lam (i : Integer) (mul (mul 2.0 dr) (index i v)))))
(def grads Float (m : Vec (Vec Float)) (sumbuild (size m) (lam (r : Integer) (sum ([rev sq] (index r m) 1.0)))))
(def cnt Float ((v : Vec Float) (n : Integer))
  (if (eq n 0) (sq v) (cnt v (sub n 1))))
(def big Float (v : Vec Float)
  (add (add (sumbuild (size v) (lam (i : Integer)
    (let ((a (index i v)) (b (mul a a)) (c (mul b a)) (d (add c b)) (e (sub d a)) (f (mul e e))
          (g (add f d)) (h (mul g c)) (k (add h b)) (l (mul k k)) (m (add l a)) (n (mul m g)))
      (add (add (add n m) (add l k)) (add (add h g) (add f e))))))
  (sumbuild (size v) (lam (i : Integer)
    (let ((a (index i v)) (b (mul a a)) (c (mul b a)) (d (add c b)) (e (sub d a)) (f (mul e e))
          (g (add f d)) (h (mul g c)) (k (add h b)) (l (mul k k)) (m (add l a)) (n (mul m g)))
      (add (add (add n m) (add l k)) (add (add h g) (add f e)))))))
  (sumbuild (size v) (lam (i : Integer)
    (let ((a (index i v)) (b (mul a a)) (c (mul b a)) (d (add c b)) (e (sub d a)) (f (mul e e))
          (g (add f d)) (h (mul g c)) (k (add h b)) (l (mul k k)) (m (add l a)) (n (mul m g)))
      (add (add (add n m) (add l k)) (add (add h g) (add f e))))))))
(def rowsbig Float (m : Vec (Vec Float)) (sumbuild (size m) (lam (r : Integer) (big (index r m)))))
`
	out, err := Emit(checked(t, src), Options{Library: true, Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	body := func(name string) string {
		re := regexp.MustCompile(`(?m)^.*static [^\n]* ` + name + `\(ks_ctx \*ctx[^\n]*\{$`)
		loc := re.FindStringIndex(out.C)
		if loc == nil {
			return ""
		}
		b := out.C[loc[0]:]
		return b[:strings.Index(b, "\n}\n")]
	}
	for _, c := range []struct {
		fn, calls string // fn's definition has (or not, with "!") a call of calls
	}{
		{"ksi_sq", ""},                 // sq has a twin
		{"ksu_rows", "ksi_sq(ctx"},     // called from a loop
		{"ksu_once", "ksu_sq(ctx"},     // called from a function without loops
		{"ksu_rowsbig", "ksu_big(ctx"}, // big is too large for a twin
	} {
		b := body(c.fn)
		if b == "" {
			t.Errorf("no definition of %s", c.fn)
			continue
		}
		if c.calls != "" && !strings.Contains(b, c.calls) {
			t.Errorf("%s does not call %s:\n%s", c.fn, c.calls, b)
		}
	}
	// A derived function's twin is always inlined, a primal one's left
	// to gcc.
	if b := body("ksi_rev_sq"); !strings.Contains(b, "static inline KS_ALWAYS_INLINE") {
		t.Errorf("the twin of [rev sq] is not always inlined:\n%s", b)
	}
	if b := body("ksi_sq"); b == "" || strings.Contains(b, "KS_ALWAYS_INLINE") {
		t.Errorf("the twin of sq is always inlined:\n%s", b)
	}
	for _, none := range []string{"ksi_big", "ksi_cnt", "ksi_once"} {
		if strings.Contains(out.C, none+"(") {
			t.Errorf("%s exists", none)
		}
	}
	if !regexp.MustCompile(`ks_r = ksu_sq\(ctx`).MatchString(out.C) {
		t.Errorf("the entry point of sq does not call ksu_sq")
	}
}
