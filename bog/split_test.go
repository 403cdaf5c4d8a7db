package bog

import (
	"sort"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

var testVars = []*ir.Var{
	{Name: "v", T: types.VecOf(types.FloatType)},
	{Name: "acc", T: types.VecOf(types.FloatType)},
	{Name: "dr", T: types.FloatType},
	{Name: "n", T: types.IntegerType},
}

func mustCheck(t *testing.T, src string) ir.Expr {
	t.Helper()
	e, err := typecheck.CheckExpr("test", src, testVars)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return e
}

// TestUpdated checks which variables an expression may update in place.
func TestUpdated(t *testing.T) {
	tests := []struct{ src, want string }{
		{"($addTo acc v)", "acc"},
		{"(add (index 0 v) dr)", ""},
		// Through a let, a tuple and its parts.
		{"(let (z (tuple acc v)) ($addTo (get$1$2 z) v))", "acc v z"},
		// A pattern let is taken whole: b may be any part.
		{"(let ((a b) (tuple acc v)) ($addTo b acc))", "acc b v"},
		// A new value made from v is not v.
		{"(let (z (mul 2.0 v)) ($addTo z acc))", "z"},
		// Both arms of an if.
		{"($addTo (if (gt n 0) acc v) v)", "acc v"},
		// The state of a loop.
		{"($ifold n acc (lam (si : Tuple (Vec Float) Integer) ($addAt (get$1$2 si) (get$2$2 si) dr)))", "acc si"},
		// The result of an update is the value updated.
		{"($addTo ($addTo acc v) v)", "acc"},
	}
	for _, tc := range tests {
		var got []string
		for name := range updated([]ir.Expr{mustCheck(t, tc.src)}) {
			got = append(got, name)
		}
		sort.Strings(got)
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("updated(%s) = %q, want %q", tc.src, s, tc.want)
		}
	}
}

// TestRematerialiseUpdated checks that a forward value the reverse part
// updates in place is made in the reverse part, not recorded, however
// dear, and that one it only reads is recorded.
func TestRematerialiseUpdated(t *testing.T) {
	items, tail := ir.ChainItems(mustCheck(t, `
		(let (z (constVec (size v) 0.0))
		(let (w (mul 2.0 v))
		(let (g ($addTo z (ts_scale dr w)))
		  ($addTo acc g))))`))
	fwd, rev := items[:2], items[2:]
	rev, need := rematerialise(fwd, rev, tail, nil)
	var names []string
	for _, v := range need {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, " "); got != "w" {
		t.Errorf("recorded %q, want w", got)
	}
	if l, ok := rev[0].(*ir.Let); !ok || l.Vars[0].Name != "z" {
		t.Errorf("the reverse part does not start by making z: %s", ir.FormatExpr(ir.WrapChain(rev, tail)))
	}
}
