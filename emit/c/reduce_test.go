package cemit

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
)

// TestIsReduction checks which fold bodies are reductions (reduce.go):
// bodies that only add into their state, and not those that read it; and
// which of the state's fields the iterations update at their own index
// only (disjoint: "1" for such a field, "0" for another).
func TestIsReduction(t *testing.T) {
	for _, c := range []struct {
		name, state, body string
		want              bool
		disjoint          string
	}{
		{"an add at the index", "Vec Float", "($addAt s i (h (index i w)))", true, "1"},
		{"two adds", "Vec Float", "($addAt ($addAt s i 1.0) k (index i w))", true, "0"},
		{"an add in one branch", "Vec Float", "(if (gt i k) ($addAt s i 1.0) s)", true, "1"},
		{"the state's size read", "Vec Float", "($addAt s (sub (size s) 1) 1.0)", true, "0"},
		{"a Float added to", "Float", "(add s (h (to_float i)))", true, "0"},
		{"a Float scaled", "Float", "(mul s 2.0)", false, ""},
		{"the state's element read", "Vec Float", "($addAt s i (index i s))", false, ""},
		{"the state returned from another field", "Tuple (Vec Float) (Vec Float)", "(let ((a b) s) (tuple b a))", false, ""},
		{"a vector from outside updated", "Vec Float", "(let (u ($addAt w i 1.0)) ($addAt s i (index i u)))", false, ""},
		{"a vector the body made updated", "Vec Float", "(let (u ($addAt (build n (lam (j : Integer) 0.0)) i 1.0)) ($addAt s i (index i u)))", true, "1"},
		{"an element of a vector from outside stored", "Vec Float", "($setAt s i (index i w))", false, ""},
		{"a row added into and stored back", "Vec (Vec Float)", "($setAt s i ($addAt (index i s) 0 1.0))", true, "1"},
		{"a row stored at another index", "Vec (Vec Float)", "($setAt s k ($addAt (index i s) 0 1.0))", false, ""},
		{"a row's values read", "Vec (Vec Float)", "($setAt s i ($addAt (index i s) 0 (sum (index i s))))", false, ""},
		{"an inner fold adding into the state", "Vec Float",
			"($ifold n s (lam (t_j : Tuple (Vec Float) Integer) (let ((t j) t_j) ($addAt t j (index i w)))))", true, "0"},
		{"an inner fold reading it", "Vec Float",
			"($ifold n s (lam (t_j : Tuple (Vec Float) Integer) (let ((t j) t_j) ($addAt t j (index j t)))))", false, ""},
		{"an inner loop adding into the state it does not carry", "Vec Float",
			"(let (u (build n (lam (j : Integer) (index 0 ($addAt s j 1.0))))) s)", false, ""},
		{"the initial state read", "Vec Float", "($addAt s i (index i init))", false, ""},
		{"a tuple: one field at the index, one elsewhere", "Tuple (Vec Float) (Vec Float)",
			"(let ((a b) s) (tuple ($addAt a i 1.0) ($addAt b k 1.0)))", true, "10"},
		{"a reverse pass adding into a vector from outside, in a nested tuple", "Tuple (Vec Float) (Vec Float)",
			"(let ((a b) s) (tuple ($addAt a i 1.0) (get$1$2 ([revacc [hv2 (Tuple (Vec Float) (Tuple (Vec Float) Float))]] (tuple w (tuple w 1.0)) 1.0 (tuple b (tuple w 0.0))))))", false, ""},
		{"the same, into a vector the body made", "Tuple (Vec Float) (Vec Float)",
			"(let ((a b) s) (tuple ($addAt a i 1.0) (get$1$2 ([revacc [hv2 (Tuple (Vec Float) (Tuple (Vec Float) Float))]] (tuple w (tuple w 1.0)) 1.0 (tuple b (tuple (build n (lam (j : Integer) 0.0)) 0.0))))))", true, "10"},
		{"a tuple: a field passed whole to a reverse pass", "Tuple (Vec Float) (Vec Float)",
			"(let ((a b) s) (tuple ($addAt a i 1.0) ([revacc [hv (Vec Float)]] w 1.0 b)))", true, "10"},
	} {
		st := "(" + c.state + ")"
		src := `(def h Float (x : Float) (mul x (sin x)))
(def hv Float (v : Vec Float) (sum v))
(def hv2 Float ((u : Vec Float) (p : Tuple (Vec Float) Float)) (mul (sum u) (get$2$2 p)))
(def g ` + st + ` ((v : ` + st + `) (w : Vec Float) (n : Integer) (k : Integer)) v)
(def [rev [g (Tuple ` + st + ` (Vec Float) Integer Integer)]] (Tuple ` + st + ` (Vec Float) (Tuple) (Tuple))
     ((x : Tuple ` + st + ` (Vec Float) Integer Integer) (init : ` + st + `))
  (let ((v w n k) x)
    (tuple ($ifold n init (lam (s_i : Tuple ` + st + ` Integer) (let ((s i) s_i) ` + c.body + `))) w (tuple) (tuple))))
`
		prog := checked(t, src)
		var fold *ir.Call
		for _, f := range prog.Funcs {
			if f.Name.Outer() != "rev" || f.Body == nil {
				continue
			}
			ir.Inspect(f.Body, func(e ir.Expr) bool {
				if call, ok := e.(*ir.Call); ok && call.Prim != nil && call.Prim.Name == "$ifold" && fold == nil {
					fold = call
				}
				return true
			})
		}
		if fold == nil {
			t.Fatalf("%s: no $ifold", c.name)
		}
		got, disjoint := reduction(fold.Args[1], fold.Args[2].(*ir.Lam))
		if got != c.want {
			t.Errorf("%s: isReduction = %v, want %v", c.name, got, c.want)
		}
		d := ""
		for _, b := range disjoint {
			d += map[bool]string{true: "1", false: "0"}[b]
		}
		if d != c.disjoint {
			t.Errorf("%s: disjoint fields %q, want %q", c.name, d, c.disjoint)
		}
	}
}
