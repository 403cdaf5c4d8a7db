package optimise

import (
	"math"

	"github.com/ksc-lang/ksc/ir"
)

// constFold evaluates a call of an exact arithmetic primitive whose
// arguments are constants. Only operations that IEEE arithmetic defines
// exactly, and so give the same bits in every backend, are folded: not
// exp, log and friends, whose last bit depends on the library. A Float
// that is not finite (1.0 / 0.0) is left to run time: ks has no literal
// for it, and the printed program and its CL must parse again.
func constFold(e ir.Expr) ir.Expr {
	out := foldCall(e)
	if k, ok := out.(*ir.Const); ok {
		if x, isFloat := k.Val.(float64); isFloat && (math.IsInf(x, 0) || math.IsNaN(x)) {
			return e
		}
	}
	return out
}

// foldCall is constFold before the check that a Float is finite.
func foldCall(e ir.Expr) ir.Expr {
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Sig == nil || len(c.Args) != len(c.Prim.Sig.Args) {
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
	p := c.P
	switch c.Prim.Name {
	case "add", "sub", "mul", "div":
		switch x := vals[0].(type) {
		case float64:
			y, ok := vals[1].(float64)
			if !ok {
				if n, isInt := vals[1].(int64); isInt && c.Prim.Name == "mul" {
					return ir.Float(p, x*float64(n))
				}
				return e
			}
			switch c.Prim.Name {
			case "add":
				return ir.Float(p, x+y)
			case "sub":
				return ir.Float(p, x-y)
			case "mul":
				return ir.Float(p, x*y)
			case "div":
				return ir.Float(p, x/y)
			}
		case int64:
			y := vals[1].(int64)
			switch c.Prim.Name {
			case "add":
				return ir.Int(p, x+y)
			case "sub":
				return ir.Int(p, x-y)
			case "mul":
				return ir.Int(p, x*y)
			case "div":
				if y == 0 {
					return e // a runtime error, reported at run time
				}
				if y == -1 {
					return ir.Int(p, -x)
				}
				return ir.Int(p, x/y)
			}
		}
	case "neg":
		switch x := vals[0].(type) {
		case float64:
			return ir.Float(p, -x)
		case int64:
			return ir.Int(p, -x)
		}
	case "to_float":
		return ir.Float(p, float64(vals[0].(int64)))
	case "gt", "lt", "gte", "lte":
		var cmp int
		switch x := vals[0].(type) {
		case float64:
			y := vals[1].(float64)
			if math.IsNaN(x) || math.IsNaN(y) {
				return ir.Bool(p, false)
			}
			cmp = compare(x < y, x > y)
		case int64:
			y := vals[1].(int64)
			cmp = compare(x < y, x > y)
		}
		switch c.Prim.Name {
		case "gt":
			return ir.Bool(p, cmp > 0)
		case "lt":
			return ir.Bool(p, cmp < 0)
		case "gte":
			return ir.Bool(p, cmp >= 0)
		case "lte":
			return ir.Bool(p, cmp <= 0)
		}
	case "and":
		return ir.Bool(p, vals[0].(bool) && vals[1].(bool))
	case "or":
		return ir.Bool(p, vals[0].(bool) || vals[1].(bool))
	case "not":
		return ir.Bool(p, !vals[0].(bool))
	}
	return e
}

func compare(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
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
