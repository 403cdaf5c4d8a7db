package optimise

import "testing"

// TestSplitRows checks when a loop over (mul c n) elements is run by rows
// of c: only when its count is a multiple of c it can see, and a let of
// its body that runs a loop reads k only by (div k c); and that the value
// does not change (n = 4, u has 3 elements).
func TestSplitRows(t *testing.T) {
	// shared is a loop reading i, a row's index.
	const shared = "(sumbuild n (lam (l : Integer) (mul a (to_float (add l i)))))"
	for _, tc := range []struct {
		name, in string
		applies  bool
	}{
		{"three a row", "(sum (build (mul 3 n) (lam (k : Integer) (let (i (div k 3)) (let (e " + shared + ") (let (j (sub k (mul 3 i))) (mul e (index j u))))))))", true},
		{"k read in the row", "(sum (build (mul n 3) (lam (k : Integer) (let (i (div k 3)) (let (e " + shared + ") (mul e (to_float k)))))))", true},
		{"a count bound to a multiple", "(let (m (mul 2 n)) (sum (build m (lam (k : Integer) (let (i (div k 2)) (let (e " + shared + ") (add e (to_float k))))))))", true},
		{"the shared loop after a let of the row", "(sum (build (mul 3 n) (lam (k : Integer) (let (j (sub k (mul 3 (div k 3)))) (let (i (div k 3)) (let (e " + shared + ") (mul e (index j u))))))))", true},
		{"nothing costly shared", "(sum (build (mul 3 n) (lam (k : Integer) (let (i (div k 3)) (let (e (to_float i)) (mul e (to_float k)))))))", false},
		{"a count not a multiple", "(sum (build (add n 3) (lam (k : Integer) (let (i (div k 3)) (let (e " + shared + ") (mul e (to_float k)))))))", false},
		{"another divisor", "(sum (build (mul 3 n) (lam (k : Integer) (let (i (div k 2)) (let (e " + shared + ") (mul e (to_float k)))))))", false},
		{"the loop reads k", "(sum (build (mul 3 n) (lam (k : Integer) (let (i k) (let (e " + shared + ") e)))))", false},
		{"a shared vector updated in place", "(sum (build (mul 3 n) (lam (k : Integer) (let (i (div k 3)) (let (z (build n (lam (l : Integer) (mul a (to_float (add l i)))))) (let (w ($addAt z 0 (to_float k))) (index 0 w)))))))", false},
		{"a shared vector updated in place by another name", "(sum (build (mul 3 n) (lam (k : Integer) (let (i (div k 3)) (let (z (build n (lam (l : Integer) (mul a (to_float (add l i)))))) (let (y (tuple z 1.0)) (let (w ($addAt (get$1$2 y) 0 (to_float k))) (index 0 w))))))))", false},
		{"a shared vector read beside one updated in place", "(sum (build (mul 3 n) (lam (k : Integer) (let (i (div k 3)) (let (z (build n (lam (l : Integer) (mul a (to_float (add l i)))))) (let (w ($addAt (constVec (size z) 0.0) 0 (index (sub k (mul 3 i)) u))) (mul (index 0 w) (index 1 z))))))))", true},
		{"a fold's shared vector read by each step", "(sum ($ifold (mul 3 n) (constVec 2 0.0) (lam (s_k : Tuple (Vec Float) Integer) (let ((s k) s_k) (let (z (build n (lam (l : Integer) (mul a (to_float (add l (div k 3))))))) ($addAt s 0 (index 1 z)))))))", true},
		{"a fold's shared vector handed on as its state", "(sum ($ifold (mul 3 n) (constVec 4 0.0) (lam (s_k : Tuple (Vec Float) Integer) (let ((s k) s_k) (let (z (build n (lam (l : Integer) (mul a (to_float (add l (div k 3))))))) (let (w ($addAt s 0 (index 1 z))) z))))))", false},
		{"a shared vector stored by $setAt", "(sum (index 0 ($ifold (mul 3 n) (build 2 (lam (l : Integer) (constVec 4 0.0))) (lam (s_k : Tuple (Vec (Vec Float)) Integer) (let ((s k) s_k) (let (z (build n (lam (l : Integer) (mul a (to_float (add l (div k 3))))))) ($setAt s 0 z)))))))", false},
		{"a count bound twice", "(let (m (mul 2 n)) (add (let (m (add n 1)) (to_float m)) (sum (build m (lam (k : Integer) (let (i (div k 2)) (let (e " + shared + ") (add e (to_float k)))))))))", false},
	} {
		before, text := passKeepsValue(t, tc.name, tc.in, splitRows)
		if applies := text != before; applies != tc.applies {
			t.Errorf("%s: rewritten %v, want %v: %s", tc.name, applies, tc.applies, text)
		}
	}
}
