package cemit

import (
	"strings"
	"testing"
)

// TestSplitLoops checks which builds are split at a cut (split.go) and
// that both parts lose their index checks: checks counts them in all the
// function's code (the parts, their versioned copies and the loop as it
// was).
func TestSplitLoops(t *testing.T) {
	for _, c := range []struct {
		name, body string
		split      bool
		checks     int
	}{
		{"a concatenation",
			"(if (lt k (size v)) (index k v) (index (sub k (size v)) w))", true, 4},
		{"the test the other way round",
			"(if (gt (size v) k) (index k v) (index (sub k (size v)) w))", true, 4},
		{"the second branch below the cut",
			"(if (gte k (size v)) (index (sub k (size v)) w) (index k v))", true, 4},
		{"the test bound by a let",
			"(let (t (lt k (size v))) (if t (index k v) (index (sub k (size v)) w)))", true, 4},
		{"the cut a variable",
			"(if (lt k m) (mul x (index k v)) (index (sub k m) w))", true, 5},
		{"below or at the cut",
			"(if (lte k m) (index k v) x)", true, 2},
		{"an update of one element",
			"(if (eq k m) x (index k v))", true, 3},
		{"an update of one element, the test the other way round",
			"(if (ne m k) (index k v) (mul x x))", true, 3},
		{"a cut that reads an element is not split",
			"(if (lt k (size (index 0 vs))) (index k v) x)", false, 2},
		{"a cut that may fail is not split",
			"(if (lt k (div m 2)) (index k v) x)", false, 1},
		{"a cut that depends on the index is not split",
			"(if (lt k (mul k 2)) (index k v) x)", false, 1},
		{"a test of an element is not split",
			"(if (gt (index k v) 0.0) (index k v) x)", false, 2},
	} {
		src := "(def f (Vec Float) ((x : Float) (v : Vec Float) (w : Vec Float) (vs : Vec (Vec Float)) (m : Integer)) " +
			"(build (add (size v) (size w)) (lam (k : Integer) " + c.body + ")))"
		code := funcCode(t, c.name, src)
		split := strings.Contains(code, "if (0 <= ")
		checks := strings.Count(code, "ks_check_index")
		if split != c.split || checks != c.checks {
			t.Errorf("%s: split %v with %d checks, want %v with %d\n%s", c.name, split, checks, c.split, c.checks, code)
		}
	}
}

// TestSplitFolds checks that folds split too, the part below the cut
// first for $ifold and last for $ifoldr (whose iterations run
// downwards), so that the state goes through the iterations in their
// order.
func TestSplitFolds(t *testing.T) {
	for _, fold := range []string{"$ifold", "$ifoldr"} {
		src := "(def f Float ((v : Vec Float) (w : Vec Float)) (" + fold + " (add (size v) (size w)) 0.0 " +
			"(lam (s_k : Tuple Float Integer) (let ((s k) s_k) (if (lt k (size v)) " +
			"(add (mul 2.0 s) (index k v)) (sub (mul 3.0 s) (index (sub k (size v)) w)))))))"
		code := funcCode(t, fold, src)
		split := strings.Index(code, "if (0 <= ")
		low, high := strings.Index(code, "(2.0 * "), strings.Index(code, "(3.0 * ")
		if split < 0 || low < split || high < split {
			t.Fatalf("%s: not split\n%s", fold, code)
		}
		if (fold == "$ifold") != (low < high) {
			t.Errorf("%s: the part below the cut at %d, the rest at %d\n%s", fold, low, high, code)
		}
		if n := strings.Count(code, "ks_check_index"); n != 4 {
			t.Errorf("%s: %d index checks, want 4 (one in each part's second copy, two in the loop as it was)\n%s", fold, n, code)
		}
	}
}

// TestSplitDepth checks that split loops nest at most maxSplitDepth deep:
// each emits its body three times.
func TestSplitDepth(t *testing.T) {
	src := "(def f (Vec Float) ((v : Vec Float) (m : Integer)) (build (size v) (lam (a : Integer) " +
		"(if (lt a m) 0.0 (sum (build (size v) (lam (b : Integer) " +
		"(if (lt b m) 1.0 (sum (build (size v) (lam (c : Integer) " +
		"(if (lt c m) 2.0 (index c v)))))))))))))"
	code := funcCode(t, "three nested splits", src)
	// The outer loop splits; the middle loop, in its second part and in
	// the loop as it was, splits too; the innermost loops, inside two
	// splits, do not (nor would they in a branch of an if, emitted by a
	// generator of its own: fn.sub).
	if n := strings.Count(code, "if (0 <= "); n != 3 {
		t.Errorf("%d split tests, want 3 (the innermost loops not split)\n%s", n, code)
	}
}
