package optimise

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestZeroParts checks when zero-parts gives each part of a zero taken
// apart its own zero, (ts_zero (tuple a v)) as (ts_zero a) and (ts_zero
// v): for a tuple variable or a tuple of atoms, when the whole zero is
// read only by the pattern; the value must not change.
func TestZeroParts(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		split    bool
	}{
		{"a tuple variable", "(let (p (tuple a v)) (let (z (ts_zero p)) (let ((x y) z) (add x (sum ($addTo y v))))))", true},
		{"a tuple of atoms", "(let (z (ts_zero (tuple a v))) (let ((x y) z) (add x (sum ($addTo y v)))))", true},
		{"a part computed", "(let (z (ts_zero (tuple (mul a b) v))) (let ((x y) z) (add x (sum ($addTo y v)))))", false},
		{"the whole read again", "(let (z (ts_zero (tuple a v))) (let ((x y) z) (add (get$1$2 z) (sum ($addTo y v)))))", false},
	} {
		e, err := typecheck.CheckExpr("test", tc.in, tapeVars)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := evalExpr(t, e)
		got := ir.Map(e, zeroParts)
		text := ir.FormatExpr(got)
		if v := evalExpr(t, got); v != want {
			t.Errorf("%s: value %v became %v in %s", tc.name, want, v, text)
		}
		if split := strings.Count(text, "ts_zero") > strings.Count(tc.in, "ts_zero"); split != tc.split {
			t.Errorf("%s: split %v, want %v: %s", tc.name, split, tc.split, text)
		}
	}
}
