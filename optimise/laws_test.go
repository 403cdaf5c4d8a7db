package optimise

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

var (
	tF   = types.FloatType
	tI   = types.IntegerType
	tVF  = types.VecOf(types.FloatType)
	tLM  = types.LMOf(types.FloatType, types.FloatType)
	tLMV = types.LMOf(tVF, types.FloatType)
)

// lawTests gives, for each law, an expression where it applies and the
// result of applying it (alone, to a fixpoint).
var lawTests = []struct {
	law, in, want string
}{
	{"compose-one-right", "(lmCompose m (lmOne x))", "m"},
	{"compose-one-left", "(lmCompose (lmOne x) m)", "m"},
	{"add-zero-right", "(lmAdd m (lmZero x y))", "m"},
	{"add-zero-left", "(lmAdd (lmZero x y) m)", "m"},
	{"scale-compose", "(lmCompose (lmScale x a) (lmScale y b))", "(lmScale y (mul a b))"},
	{"scale-add", "(lmAdd (lmScale x a) (lmScale y b))", "(lmScale x (add a b))"},
	{"factor-right", "(lmAdd (lmCompose (lmScale x a) m) (lmCompose (lmScale x b) m))", "(lmCompose (lmAdd (lmScale x a) (lmScale x b)) m)"},
	{"transpose-transpose", "(lmTranspose (lmTranspose m))", "m"},
	{"compose-zero-left", "(lmCompose (lmZero x y) (lmScale a b))", "(lmZero a y)"},
	{"compose-zero-left", "(lmCompose (lmZero x y) (lmTranspose (lmZero a b)))", "(lmZero b y)"},
	{"compose-zero-right", "(lmCompose (lmOne a) (lmZero x y))", "(lmZero x a)"},
	{"compose-zero-right", "(lmCompose (lmHCat (lmOne a) (lmScale b x)) (lmZero x (tuple a b)))", "(lmZero x a)"},
	{"compose-hcat", "(lmCompose (lmScale x a) (lmHCat m m))", "(lmHCat (lmCompose (lmScale x a) m) (lmCompose (lmScale x a) m))"},
	{"vcat-compose", "(lmCompose (lmVCat m m) (lmScale x a))", "(lmVCat (lmCompose m (lmScale x a)) (lmCompose m (lmScale x a)))"},
	{"hcat-vcat", "(lmCompose (lmHCat m m) (lmVCat m m))", "(lmAdd (lmCompose m m) (lmCompose m m))"},
	{"index-build", "(index 2 (build n (lam (i : Integer) (mul a (to_float i)))))", "(let (i 2) (mul a (to_float i)))"},
	{"size-build", "(size (build n (lam (i : Integer) a)))", "n"},
	{"build-index", "(build (size v) (lam (i : Integer) (index i v)))", "v"},
	{"sum-build", "(sum (build n (lam (i : Integer) (mul a a))))", "(sumbuild n (lam (i : Integer) (mul a a)))"},
	{"sumbuild-deltaVec", "(sumbuild n (lam (i : Integer) (deltaVec n i (mul a (to_float i)))))", "(build n (lam (i : Integer) (mul a (to_float i))))"},
	{"ts_add-float", "(ts_add a b)", "(add a b)"},
	{"ts_scale-float", "(ts_scale a b)", "(mul a b)"},
	{"ts_neg-float", "(ts_neg a)", "(neg a)"},
	{"ts_dot-float", "(ts_dot a b)", "(mul a b)"},
	{"ts_zero-float", "(ts_zero a)", "0.0"},
	{"ts_zero-flat", "(ts_zero (tuple a n (tuple b true)))", "(tuple 0.0 (tuple) (tuple 0.0 (tuple)))"},
	{"ts_zero-tensor", "(ts_zero v)", "(constVec (size v) 0.0)"},
	{"shape-tensor", "($shape v)", "(size v)"},
	{"addTo-float", "($addTo a b)", "(add a b)"},
	{"add-zero-left-float", "(add 0.0 a)", "a"},
	{"add-zero-right-float", "(add a 0.0)", "a"},
	{"mul-one-left", "(mul 1.0 a)", "a"},
	{"mul-one-right", "(mul a 1.0)", "a"},
	{"gt-self", "(gt n n)", "false"},
	{"lt-self", "(lt (size v) (size v))", "false"},
	{"gte-self", "(gte n n)", "true"},
	{"lte-self", "(lte n n)", "true"},
	{"eq-self", "(eq n n)", "true"},
	{"ne-self", "(ne n n)", "false"},
	{"union-empty-left", "($union (build 0 (lam (i : Integer) i)) s)", "s"},
	{"union-empty-right", "($union s (build 0 (lam (i : Integer) i)))", "s"},
	{"union-self", "($union s s)", "s"},
	{"pairs-empty-left", "($pairs (build 0 (lam (i : Integer) i)) s)", "(build 0 (lam (i : Integer) i))"},
	{"pairs-empty-right", "($pairs s (build 0 (lam (i : Integer) i)))", "(build 0 (lam (i : Integer) i))"},
}

// vars are the variables the law tests may use.
var vars = []*ir.Var{
	{Name: "m", T: tLM}, {Name: "x", T: tF}, {Name: "y", T: tF},
	{Name: "a", T: tF}, {Name: "b", T: tF}, {Name: "n", T: tI}, {Name: "v", T: tVF},
	{Name: "s", T: types.VecOf(tI)},
}

func TestLaws(t *testing.T) {
	laws, err := compileLaws(Laws)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*law{}
	for _, l := range laws {
		if l.Eq == "" {
			t.Errorf("law %s has no equation", l.Name)
		}
		if byName[l.Name] != nil {
			t.Errorf("law %s is in the table twice", l.Name)
		}
		byName[l.Name] = l
	}
	tested := map[string]bool{}
	for _, tc := range lawTests {
		tested[tc.law] = true
		l := byName[tc.law]
		if l == nil {
			t.Errorf("no law %s", tc.law)
			continue
		}
		in, err := typecheck.CheckExpr("test", tc.in, vars)
		if err != nil {
			t.Errorf("%s: %v", tc.law, err)
			continue
		}
		r := newRewriter([]*law{l}, nil, lower.Effects{}, limit)
		out := in
		for i := 0; i < 10; i++ {
			out = ir.Map(out, r.node)
		}
		if r.used[l.Name] == 0 {
			t.Errorf("%s did not apply to %s", tc.law, tc.in)
		}
		if got := ir.FormatExpr(out); got != tc.want {
			t.Errorf("%s: %s became %s, want %s", tc.law, tc.in, got, tc.want)
		}
		if !out.Type().Equal(in.Type()) {
			t.Errorf("%s changed the type from %s to %s", tc.law, in.Type(), out.Type())
		}
	}
	for _, l := range laws {
		if !tested[l.Name] {
			t.Errorf("law %s has no test", l.Name)
		}
	}
}

// TestLawSideConditions checks that a law does not apply when its side
// condition fails.
func TestLawSideConditions(t *testing.T) {
	laws, err := compileLaws(Laws)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in string }{
		{"(ts_add v v)"}, // not Float
		{"(sumbuild n (lam (i : Integer) (deltaVec (add n i) i a)))"}, // i free in the size
		{"(size (build n (lam (i : Integer) (to_float (print a)))))"}, // the body prints
		{"(ts_zero (tuple a (to_float (print a))))"},                  // the value prints
		{"(ts_zero (tuple a v))"},                                     // holds a tensor
		{"(lmCompose (lmZero x y) m)"},                                // no example of m's source
		{"(lmCompose m (lmZero x y))"},                                // nor of its target
		{"(lmCompose (lmZero x y) (lmScale (mul a b) b))"},            // the example is not an atom
		{"(lmCompose m (lmHCat m m))"},                                // m is not cheap to copy
		{"(lmCompose (lmVCat m m) (lmScale x (mul a b)))"},            // nor is the scale
	} {
		in, err := typecheck.CheckExpr("test", tc.in, vars)
		if err != nil {
			t.Fatal(err)
		}
		r := newRewriter(laws, nil, lower.Effects{}, limit)
		out := ir.Map(in, r.node)
		if got := ir.FormatExpr(out); got != ir.FormatExpr(in) {
			t.Errorf("%s became %s", tc.in, got)
		}
	}
}
