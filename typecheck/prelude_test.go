package typecheck

import (
	"sync"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// TestTableCompiledOnce: every prelude definition and derivative rule of
// the primitive table type-checks, and each is compiled once for the
// process: asking again, from several goroutines at once, returns the
// same shared value.
func TestTableCompiledOnce(t *testing.T) {
	for _, p := range ir.Prims() {
		if p.Def == "" {
			continue
		}
		f, err := PreludeDef(p)
		if err != nil || f == nil {
			t.Fatalf("%s: %v", p, err)
		}
		if g, _ := PreludeDef(p); g != f {
			t.Errorf("%s: compiled twice", p)
		}
	}
	var mul *ir.Prim
	for _, p := range ir.LookupPrim("mul") {
		if p.Sig != nil && p.Sig.Result.Equal(types.FloatType) && p.Sig.Args[1].Equal(types.FloatType) {
			mul = p
		}
	}
	params := []*ir.Var{
		{Name: "x0", T: types.FloatType}, {Name: "x1", T: types.FloatType}, {Name: "r", T: types.FloatType},
	}
	var wg sync.WaitGroup
	got := make([]ir.Expr, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := Rule(mul, 1, params)
			if err != nil {
				t.Error(err)
			}
			got[i] = e
		}()
	}
	wg.Wait()
	first, _ := Rule(mul, 1, params)
	for i, e := range got {
		if e != first {
			t.Errorf("call %d: a rule compiled again", i)
		}
	}
	if ir.FormatExpr(first) != "(lmScale x1 x0)" {
		t.Errorf("mul's rule 1 is %s", ir.FormatExpr(first))
	}
}
