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

// TestDedupe checks how the items of a reverse arm join the primal arm's:
// an item binding a name of the primal arm to the same value is left
// out, and one binding it to another value (inlining one body in two
// disjoint scopes can give one name to two values) is renamed, in the
// items after it and the tail too.
func TestDedupe(t *testing.T) {
	tests := []struct{ pre, arm, want string }{
		// The same value: left out.
		{"(let (y (mul dr dr)) 0.0)", "(let (y (mul dr dr)) (let (z (add y 1.0)) z))",
			"(let (y (mul dr dr)) (let (z (add y 1.0)) z))"},
		// Another value of the same name: renamed.
		{"(let (y (mul dr 3.0)) 0.0)", "(let (y (mul dr dr)) (let (z (add y 1.0)) (add z y)))",
			"(let (y (mul dr 3.0)) (let (y$1 (mul dr dr)) (let (z (add y$1 1.0)) (add z y$1))))"},
		// A value made from a renamed one is not the primal arm's.
		{"(let (y (mul dr 3.0)) (let (z (add y 1.0)) 0.0))", "(let (y (mul dr dr)) (let (z (add y 1.0)) z))",
			"(let (y (mul dr 3.0)) (let (z (add y 1.0)) (let (y$1 (mul dr dr)) (let (z$1 (add y$1 1.0)) z$1))))"},
	}
	for _, tc := range tests {
		pre, _ := ir.ChainItems(mustCheck(t, tc.pre))
		items, tail := ir.ChainItems(mustCheck(t, tc.arm))
		s := &splitter{ns: &ir.Names{}}
		out, tail := s.dedupe(pre, items, tail)
		if got := strings.Join(strings.Fields(ir.FormatExpr(ir.WrapChain(out, tail))), " "); got != tc.want {
			t.Errorf("dedupe(%s, %s)\n got %s\nwant %s", tc.pre, tc.arm, got, tc.want)
		}
	}
}

// TestNumbering checks which expressions the numbering finds of equal
// value: equal expressions of variables bound to equal values (a function
// inlined twice), through patterns, but not a name bound twice (two
// branches may give one name two values) nor different parts of a tuple.
func TestNumbering(t *testing.T) {
	tests := []struct {
		src  string // binds a and b, ending in (tuple a b)
		same bool
	}{
		{"(let (a (mul 2.0 dr)) (let (b (mul 2.0 dr)) (tuple a b)))", true},
		{"(let (a (mul 2.0 dr)) (let (b (mul 3.0 dr)) (tuple a b)))", false},
		// Through variables bound to equal values, by patterns too.
		{`(let ((x y) (tuple (index 0 v) dr))
		   (let (a (add x y))
		     (let ((x2 y2) (tuple (index 0 v) dr))
		       (let (b (add x2 y2)) (tuple a b)))))`, true},
		// Different parts of one tuple.
		{`(let ((x y) (tuple dr dr))
		   (let (a (mul x 2.0)) (let (b (mul y 2.0)) (tuple a b))))`, false},
		// A name bound twice, to different values, is equal to nothing.
		{`(let (z (mul 2.0 dr)) (let (a (add z 1.0))
		   (let (z (mul 3.0 dr)) (let (b (add z 1.0)) (tuple a b)))))`, false},
		// Nor is a let binding a parameter's name (dr, bound around the
		// expression).
		{`(let (a (add dr 1.0)) (let (dr (mul 3.0 n)) (let (b (add dr 1.0)) (tuple a b))))`, false},
		// A parameter stands for itself.
		{"(let (a (add dr 1.0)) (let (b (add dr 1.0)) (tuple a b)))", true},
	}
	for _, tc := range tests {
		e := mustCheck(t, tc.src)
		items, _ := ir.ChainItems(e)
		var a, b *ir.Var
		for _, v := range ir.ChainVars(items) {
			switch v.Name {
			case "a":
				a = v
			case "b":
				b = v
			}
		}
		n := newNumbering(e, testVars...)
		if got := n.key(ir.Ref(a.P, a)) == n.key(ir.Ref(b.P, b)); got != tc.same {
			t.Errorf("%s: a and b numbered equal: %v, want %v", tc.src, got, tc.same)
		}
	}
}
