package ir

import (
	"math"
	"testing"

	"github.com/ksc-lang/ksc/types"
)

// TestPrimEval: every scalar row of the primitive table (a fixed
// signature of Integers, Floats and Bools, not defined in ks) has its
// meaning in the row (Eval), which the optimiser's constant folding and
// the CL evaluator use; and Eval computes what the language says.
func TestPrimEval(t *testing.T) {
	scalar := func(t *types.Type) bool {
		return t.Kind == types.Integer || t.Kind == types.Float || t.Kind == types.Bool
	}
	for _, p := range Prims() {
		if p.Sig == nil || p.Def != "" || p.LM || !scalar(p.Sig.Result) {
			continue
		}
		all := true
		for _, a := range p.Sig.Args {
			all = all && scalar(a)
		}
		if all && p.Eval == nil {
			t.Errorf("%s has no Eval", p)
		}
		if p.Exact && p.Eval == nil {
			t.Errorf("%s is Exact but has no Eval", p)
		}
	}
	lookup := func(name string, args ...any) *Prim {
		for _, p := range LookupPrim(name) {
			if p.Sig == nil || len(p.Sig.Args) != len(args) {
				continue
			}
			ok := true
			for i, a := range args {
				switch a.(type) {
				case int64:
					ok = ok && p.Sig.Args[i].Kind == types.Integer
				case float64:
					ok = ok && p.Sig.Args[i].Kind == types.Float
				case bool:
					ok = ok && p.Sig.Args[i].Kind == types.Bool
				}
			}
			if ok {
				return p
			}
		}
		t.Fatalf("no row %s for %v", name, args)
		return nil
	}
	for _, tc := range []struct {
		name string
		args []any
		want any
	}{
		{"div", []any{int64(7), int64(-2)}, int64(-3)}, // truncates
		{"div", []any{int64(math.MinInt64), int64(-1)}, int64(math.MinInt64)},
		{"add", []any{int64(math.MaxInt64), int64(1)}, int64(math.MinInt64)}, // wraps
		{"mul", []any{2.5, int64(3)}, 7.5},
		{"max", []any{math.NaN(), 1.0}, math.NaN()}, // the first unless the second is greater
		{"gt", []any{math.NaN(), 1.0}, false},
		{"and", []any{true, false}, false},
		{"to_float", []any{int64(-3)}, -3.0},
		{"pow", []any{2.0, int64(-2)}, 0.25},
	} {
		got, err := lookup(tc.name, tc.args...).Eval(tc.args)
		if err != nil {
			t.Errorf("%s %v: %v", tc.name, tc.args, err)
			continue
		}
		if w, ok := tc.want.(float64); ok && math.IsNaN(w) {
			if g, ok := got.(float64); !ok || !math.IsNaN(g) {
				t.Errorf("%s %v = %v, want NaN", tc.name, tc.args, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s %v = %v, want %v", tc.name, tc.args, got, tc.want)
		}
	}
	if _, err := lookup("div", int64(1), int64(0)).Eval([]any{int64(1), int64(0)}); err == nil {
		t.Errorf("div 1 0: no error")
	}
}
