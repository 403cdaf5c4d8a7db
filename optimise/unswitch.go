package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// unswitchBudget bounds the nodes of a loop's body that unswitchLoops
// copies, and unswitchDepth the tests it moves out of one loop (so a
// loop is at most 1<<unswitchDepth copies).
const (
	unswitchBudget = 2000
	unswitchDepth  = 2
	// unswitchMinCount: a loop of a constant count below it keeps its
	// tests (the Jacobian's rows of a function of two results).
	unswitchMinCount = 16
)

// unswitchLoops moves the test of a Bool variable bound outside a loop
// out of the loop, one copy of the loop for each outcome:
//
//	(build n (lam (k : Integer) ... (if c a b) ...))
//
// becomes
//
//	(if c (build n (lam (k : Integer) ... a ...))
//	      (build n (lam (k : Integer) ... b ...)))
//
// for build and sumbuild. The loop runs the same operations in the same
// order either way, so values, errors and effects are unchanged. What it
// buys is a loop without the branch: gather's on-demand elements
// (ondemand) put a test and, on one side, calls of functions into the
// loop that reads them, and a loop with calls in it neither vectorises
// nor is split by the C compiler at the bound it tests (ba's Jacobian
// assembles its values in such a loop; gcc unswitches only loops much
// smaller than that). A loop's copy has binders of its own; the tests of
// the variable in each copy are folded. Loops whose body has more than
// unswitchBudget nodes, or of a constant count below unswitchMinCount,
// are left alone, and at most unswitchDepth tests move out of one loop.
func unswitchLoops(ctx *Context) error {
	ns := ctx.Prog.Names()
	forEachBody(ctx.Prog, func(f *ir.Func) {
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			return unswitch(e, ns, unswitchDepth)
		})
	})
	return nil
}

// unswitch returns loop with up to depth tests of invariant variables
// moved out of it, or loop itself if it is not a build or sumbuild, or
// tests none.
func unswitch(e ir.Expr, ns *ir.Names, depth int) ir.Expr {
	loop, ok := e.(*ir.Call)
	if depth == 0 || !ok || loop.Prim == nil || (loop.Prim.Name != "build" && loop.Prim.Name != "sumbuild") || len(loop.Args) != 2 {
		return e
	}
	lam, ok := loop.Args[1].(*ir.Lam)
	if !ok || ir.Size(lam.Body) > unswitchBudget {
		return e
	}
	if n, ok := loop.Args[0].(*ir.Const); ok {
		if k, ok := n.Val.(int64); ok && k < unswitchMinCount {
			return e // a few iterations: the test costs less than the copy
		}
	}
	c := invariantTest(lam)
	if c == nil {
		return e
	}
	with := func(l ir.Expr, val bool) (ir.Expr, bool) {
		folded := false
		out := ir.Map(ir.Subst(l, map[string]ir.Expr{c.Name: ir.Bool(c.P, val)}), func(x ir.Expr) ir.Expr {
			y := foldIf(x)
			folded = folded || y != x
			return y
		})
		return out, folded
	}
	yes, ok1 := with(ir.FreshBinders(loop, ns), true)
	no, ok2 := with(loop, false)
	if !ok1 || !ok2 {
		return e
	}
	return ir.MkIf(loop.P, ir.Ref(loop.P, c), unswitch(yes, ns, depth-1), unswitch(no, ns, depth-1))
}

// invariantTest returns a Bool variable free in lam that an if in lam's
// body tests, or nil.
func invariantTest(lam *ir.Lam) *ir.Var {
	free := ir.FreeVars(lam)
	var c *ir.Var
	ir.Inspect(lam.Body, func(x ir.Expr) bool {
		if c != nil {
			return false
		}
		if i, ok := x.(*ir.If); ok {
			if v, ok := i.Cond.(*ir.Var); ok && v.T.Kind == types.Bool && free[v.Name] {
				c = v
				return false
			}
		}
		return true
	})
	return c
}
