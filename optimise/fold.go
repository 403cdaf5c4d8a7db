package optimise

import (
	"math"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// constFold evaluates a call of a primitive whose arguments are
// constants, by the primitive's row (ir.Prim.Eval), where the row says
// IEEE arithmetic defines the result exactly (Exact), so that it has the
// same bits in every backend: not exp, log and friends, whose last bit
// depends on the library. A call that fails (an Integer division by
// zero) is left to fail at run time, with its position; so is a Float
// that is not finite (1.0 / 0.0): ks has no literal for it, and the
// printed program and its CL must parse again.
func constFold(e ir.Expr) ir.Expr {
	if b, ok := constEq(e); ok {
		return b
	}
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil || !c.Prim.Exact || c.Prim.Sig == nil || len(c.Args) != len(c.Prim.Sig.Args) {
		return e
	}
	vals := make([]any, len(c.Args))
	for i, a := range c.Args {
		k, ok := a.(*ir.Const)
		if !ok {
			return e
		}
		vals[i] = k.Val
	}
	v, err := c.Prim.Eval(vals)
	if err != nil {
		return e
	}
	switch v := v.(type) {
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return e
		}
		return ir.Float(c.P, v)
	case int64:
		return ir.Int(c.P, v)
	case bool:
		return ir.Bool(c.P, v)
	}
	return e
}

// constEq folds (eq a b) and (ne a b) of two Integer or Bool constants
// (an unrolled loop's tests of its index). eq and ne are structural, so
// they have no row of their own to evaluate by.
func constEq(e ir.Expr) (ir.Expr, bool) {
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil || (c.Prim.Name != "eq" && c.Prim.Name != "ne") || len(c.Args) != 2 {
		return nil, false
	}
	a, ok1 := c.Args[0].(*ir.Const)
	b, ok2 := c.Args[1].(*ir.Const)
	if !ok1 || !ok2 || a.T.Kind != b.T.Kind || (a.T.Kind != types.Integer && a.T.Kind != types.Bool) {
		return nil, false
	}
	return ir.Bool(c.P, (a.Val == b.Val) == (c.Prim.Name == "eq")), true
}

// foldIf picks the branch of an if whose condition is a constant.
func foldIf(e ir.Expr) ir.Expr {
	if i, ok := e.(*ir.If); ok {
		if k, ok := i.Cond.(*ir.Const); ok {
			if k.Val.(bool) {
				return i.Then
			}
			return i.Else
		}
	}
	return e
}
