package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
)

// lmLaws simplifies the Jacobians with the laws of linear maps, before
// they are applied.
func lmLaws(ctx *Context) error {
	laws, err := compileLaws(Laws)
	if err != nil {
		return err
	}
	var lm []*law
	for _, l := range laws {
		if l.LM {
			lm = append(lm, l)
		}
	}
	eff := lower.ComputeEffects(ctx.Prog)
	forEachBody(ctx.Prog, func(f *ir.Func) {
		if !isLMFunc(f) {
			return
		}
		r := newRewriter(lm, nil, eff, limit)
		f.Body = fixpoint(ctx, f, func(e ir.Expr) ir.Expr { return ir.Map(e, r.node) }, &r.steps)
	})
	return nil
}

// fixpoint applies step to f's body until it no longer changes, stopping
// (with a warning) after the rewriting limit.
func fixpoint(ctx *Context, f *ir.Func, step func(ir.Expr) ir.Expr, steps *int) ir.Expr {
	body := f.Body
	for round := 0; ; round++ {
		before := *steps
		body = step(body)
		if *steps == before {
			return body
		}
		if *steps >= limit || round > 1000 {
			ctx.warnf(f.P, "the optimiser stopped rewriting %s after %d rewrites (a law or rule may loop)", f.FullName(), *steps)
			return body
		}
	}
}

// unzipPass keeps the vectors of tuples of scalars that are read only by
// element as tuples of vectors (lower.Unzip).
func unzipPass(ctx *Context) error {
	ns := ctx.Prog.Names()
	forEachBody(ctx.Prog, func(f *ir.Func) { f.Body = lower.Unzip(f.Body, ns) })
	return nil
}

// simplifyPass applies the laws, the user's rules, constant folding and
// the structural simplifications to a fixpoint.
func simplifyPass(ctx *Context) error {
	simplify, err := newSimplify(ctx)
	if err != nil {
		return err
	}
	forEachBody(ctx.Prog, simplify)
	return nil
}

// newSimplify returns the function simplifying one function's body as
// simplifyPass does (functions of linear maps are left to lm-laws).
func newSimplify(ctx *Context) (func(f *ir.Func), error) {
	laws, err := compileLaws(Laws)
	if err != nil {
		return nil, err
	}
	var value []*law
	for _, l := range laws {
		if !l.LM {
			value = append(value, l)
		}
	}
	eff := lower.ComputeEffects(ctx.Prog)
	return func(f *ir.Func) {
		if isLMFunc(f) {
			return
		}
		r := newRewriter(value, ctx.Prog.Rules, eff, limit)
		s := &lower.Simplifier{Eff: eff, Names: ctx.Prog.Names()}
		steps := 0
		f.Body = fixpoint(ctx, f, func(e ir.Expr) ir.Expr {
			before := r.steps + s.Steps
			e = ir.Map(e, func(x ir.Expr) ir.Expr {
				x = r.node(x)
				if y := deadLoopState(zeroParts(foldIf(constFold(x)))); y != x {
					s.Steps++
					x = y
				}
				return s.Node(x)
			})
			steps += r.steps + s.Steps - before
			return e
		}, &steps)
	}, nil
}

// csePass shares equal let-bound values. cse needs binders apart, which
// the driver establishes after type checking.
func csePass(ctx *Context) error {
	if !ctx.Prog.NoShadow {
		ir.RenameApart(ctx.Prog)
	}
	eff := lower.ComputeEffects(ctx.Prog)
	forEachBody(ctx.Prog, func(f *ir.Func) { f.Body = cse(f.Body, eff) })
	return nil
}

// inlineRequested inlines the calls wrapped in $inline (of functions that
// do not call themselves) and removes the wrapper.
func inlineRequested(ctx *Context) error {
	forEachBody(ctx.Prog, func(f *ir.Func) {
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			c, ok := e.(*ir.Call)
			if !ok || c.Prim == nil || c.Prim.Name != "$inline" {
				return e
			}
			inner, ok := c.Args[0].(*ir.Call)
			if !ok || inner.Fn == nil || inner.Fn.Body == nil || calls(inner.Fn, inner.Fn) {
				return c.Args[0]
			}
			g := inner.Fn
			body := ir.Copy(g.Body, ir.Pos{})
			return lower.BindParams(g, inner.Args, body, c.P)
		})
	})
	return nil
}

// inlineLeaves inlines the calls of small leaf functions (lower.IsLeaf):
// bodies of a few nodes that call no function (primitives only), run no
// loop and print nothing, such as a sigmoid. A derivative calls such a
// function and its derived functions side by side (sigmoid's value, then
// [revacc sigmoid] at the same point, which computes the value again);
// inlined, cse computes what they share once, and split reverse mode
// records no BOG of its own for each call.
//
// A function is judged by its simplified body: [revacc g] of a leaf g,
// as eliminate-lm leaves it, is a chain of lets a few nodes over the bound
// that simplifies to half of it. A function that could be a leaf but for
// its size, up to a few times the bound, is simplified first (the
// simplify pass would do it next).
func inlineLeaves(ctx *Context) error {
	eff := lower.ComputeEffects(ctx.Prog)
	simplify, err := newSimplify(ctx)
	if err != nil {
		return err
	}
	ns := ctx.Prog.Names()
	hand := handDerived(ctx.Prog)
	leaf := map[*ir.Func]bool{}
	for _, f := range ctx.Prog.Funcs {
		if hand[f] {
			continue
		}
		if !lower.IsLeaf(f, eff) && lower.IsLeafWithin(f, eff, 4*lower.LeafSize) {
			simplify(f)
		}
		leaf[f] = lower.IsLeaf(f, eff)
	}
	forEachBody(ctx.Prog, func(f *ir.Func) {
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			c, ok := e.(*ir.Call)
			if !ok || c.Fn == nil || !leaf[c.Fn] || c.Fn == f {
				return e
			}
			g := c.Fn
			if len(g.Name.Derivs) > 0 {
				// Derived code is in A-normal form already, and a
				// hand-written derivative, ([rev g] x dr) = (mul (cos
				// x) dr), is kept as written: a costly operation of
				// its own let in a reverse pass is one split reverse
				// mode records, by a loop that runs the primal again.
				return lower.BindParams(g, c.Args, ir.Copy(g.Body, ir.Pos{}), c.P)
			}
			// A primal leaf in A-normal form, each operation a let of its
			// own, which tape-loops can pair with the same operation of
			// [revacc g] inlined in a later loop.
			body, params := lower.ANF(ir.Copy(g.Body, ir.Pos{}), g.Params, ns)
			anf := *g
			anf.Params = params
			return lower.BindParams(&anf, c.Args, body, c.P)
		})
	})
	return nil
}

// calls reports whether f's body calls g.
func calls(f, g *ir.Func) bool {
	for _, h := range ir.Funcs(f.Body) {
		if h == g {
			return true
		}
	}
	return false
}
