package optimise

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/linmap"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// eliminateLM removes every linear map from the functions that compute
// values: lets binding linear maps are inlined, and each application of a
// linear map (lmApply, lmApplyR, and $addTo of an lmApplyR) is replaced by
// what it computes (linmap.Forward, linmap.Reverse). Inside [fwd f] and
// [revacc f] the call of [D f] is inlined, so f's derivative is computed
// there; elsewhere a call of [D g] applies as a call of [fwd g] or
// [revacc g]. Functions whose types hold linear maps ([D f]) are then
// dropped. A linear map that is left is an error naming the function and
// the operation.
func eliminateLM(ctx *Context) error {
	prog := ctx.Prog
	ns := prog.Names()
	res := &resolver{prog: prog}
	var errs syntax.ErrorList
	for _, f := range prog.Funcs {
		if f.Body == nil || isLMFunc(f) || !mentionsLM(f.Body) {
			continue // nothing to apply, or applied in an earlier round (driver.Optimise)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if e, ok := r.(*linmap.Error); ok {
						errs.Add(e.Pos, "in %s: %s", f.FullName(), e.Msg)
						return
					}
					panic(ir.AtPos(r, f.P, f.FullName()))
				}
			}()
			if f.Name.Outer() == "revfull" {
				f.Body = reverseValue(f.Body.(*ir.Tuple), f, ns, res)
				return
			}
			if f.Name.Outer() == "vrev" && f.Name.Wrt != nil {
				// (let (r (tuple (f x) ($addTo ...))) (tuple r.1 parts of r.2)):
				// the value and gradient as [revfull f]'s.
				if l, ok := f.Body.(*ir.Let); ok {
					if t, ok := l.Rhs.(*ir.Tuple); ok {
						f.Body = &ir.Let{P: l.P, Vars: l.Vars, Rhs: reverseValue(t, f, ns, res), Body: l.Body}
						return
					}
				}
			}
			if f.Name.Outer() == "fwdfull" {
				f.Body = fwdfullBody(f, ns, res)
				return
			}
			body := linmap.InlineLMLets(f.Body)
			var elim func(e ir.Expr) ir.Expr
			elim = func(e ir.Expr) ir.Expr { return eliminateApply(e, f, ns, res, elim) }
			body = ir.MapPre(body, elim)
			f.Body = body
		}()
	}
	if len(errs) > 0 {
		errs.Sort()
		return errs
	}
	// Drop the functions of linear maps, then check that none is left.
	var kept []*ir.Func
	for _, f := range prog.Funcs {
		if !isLMFunc(f) {
			kept = append(kept, f)
		}
	}
	prog.Funcs = kept
	for _, f := range prog.Funcs {
		if f.Body == nil {
			continue
		}
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if len(errs) > 0 {
				return false
			}
			if c, ok := e.(*ir.Call); ok && c.Prim != nil && c.Prim.LM {
				errs.Add(c.P, "the linear-map operation %s is left in %s after optimisation", c.Prim.Name, f.FullName())
			} else if c, ok := e.(*ir.Call); ok && c.Fn != nil && isLMFunc(c.Fn) {
				errs.Add(c.P, "the linear map %s is left in %s after optimisation", c.Fn.FullName(), f.FullName())
			} else if e.Type().Contains(types.LM) {
				errs.Add(e.Pos(), "a linear map (%s) is left in %s after optimisation", e.Type(), f.FullName())
			}
			return true
		})
	}
	errs.Sort()
	return errs.Err()
}

// isLMFunc reports whether f takes or returns a linear map.
func isLMFunc(f *ir.Func) bool {
	return f.Arg.Contains(types.LM) || f.Result.Contains(types.LM)
}

// eliminateApply replaces one application of a linear map, or returns
// nil if e is none; rec maps the non-linear parts it keeps.
func eliminateApply(e ir.Expr, f *ir.Func, ns *ir.Names, res linmap.Resolver, rec func(ir.Expr) ir.Expr) ir.Expr {
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil {
		return nil
	}
	pre := func(x ir.Expr) ir.Expr { return ir.MapPre(x, rec) }
	var out ir.Expr
	var err error
	switch c.Prim.Name {
	case "lmApply":
		out, err = linmap.Forward(inlineSelf(c.Args[0], f), pre(c.Args[1]), ns, res)
	case "lmPattern":
		out, err = linmap.Pattern(inlineSelf(c.Args[0], f), pre(c.Args[1]), ns, res)
	case "lmHessianPattern":
		out, err = linmap.HessianPattern(inlineSelf(c.Args[0], f), pre(c.Args[1]), ns, res)
	case "lmApplyR":
		m := inlineSelf(c.Args[1], f)
		b := &ir.Let{P: c.P, Vars: []*ir.Var{ns.FreshVar(c.P, "zero", c.T)}}
		zero, xerr := linmap.Zero(m, ns)
		if xerr != nil {
			panic(xerr)
		}
		b.Rhs = zero
		var rev ir.Expr
		rev, err = linmap.Reverse(m, pre(c.Args[0]), ir.Ref(c.P, b.Vars[0]), ns, res)
		b.Body = rev
		out = b
	case "$addTo":
		r, ok := c.Args[1].(*ir.Call)
		if !ok || r.Prim == nil || r.Prim.Name != "lmApplyR" {
			return nil
		}
		out, err = linmap.Reverse(inlineSelf(r.Args[1], f), pre(r.Args[0]), pre(c.Args[0]), ns, res)
	default:
		return nil
	}
	if err != nil {
		panic(err)
	}
	return out
}

// inlineSelf inlines, inside [fwd g] or [revacc g], the call of [D g] that
// defines it.
func inlineSelf(m ir.Expr, f *ir.Func) ir.Expr {
	c, ok := m.(*ir.Call)
	if !ok || c.Fn == nil || f.Base == nil || c.Fn.Base != f.Base || c.Fn.Body == nil ||
		c.Fn.Name.Outer() != "D" {
		return m
	}
	return lower.BindParams(c.Fn, c.Args, ir.Copy(c.Fn.Body, ir.Pos{}), c.P)
}

// resolver finds derived functions for linmap.
type resolver struct {
	prog    *ir.Program
	effects lower.Effects // computed on first use
}

func (r *resolver) Fwd(g *ir.Func) (*ir.Func, error) {
	if f := r.prog.Lookup(g.Name.Derive("fwd"), g.BaseArg); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("no %s to apply [D %s] forwards", g.Name.Derive("fwd"), g.Name)
}

func (r *resolver) Pattern(g *ir.Func) (*ir.Func, error) {
	if f := r.prog.Lookup(g.Name.Derive("pattern"), g.BaseArg); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("no %s for the sparsity pattern of [D %s]", g.Name.Derive("pattern"), g.Name)
}

func (r *resolver) HessianPattern(g *ir.Func) (*ir.Func, error) {
	if f := r.prog.Lookup(g.Name.Derive("hpattern"), g.BaseArg); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("no %s for the second-order sparsity pattern of [D %s]", g.Name.Derive("hpattern"), g.Name)
}

func (r *resolver) FwdFull(g *ir.Func) *ir.Func {
	if f := r.prog.Lookup(g.Name.Derive("fwd"), g.BaseArg); f == nil || f.Kind != ir.DerivedFunc {
		return nil // written by hand, or none
	}
	return r.prog.Lookup(g.Name.Derive("fwdfull"), g.BaseArg)
}

func (r *resolver) FwdWrt(g *ir.Func, wrt []int, full bool) *ir.Func {
	deriv := "fwd"
	if full {
		deriv = "fwdfull"
	}
	name := g.Name.Derive(deriv)
	name.Wrt = wrt
	if f := r.prog.Lookup(name, g.BaseArg); f != nil && f.Kind == ir.DerivedFunc {
		return f
	}
	return nil
}

func (r *resolver) Split(g *ir.Func, valueRead bool) (fwd, rev *ir.Func) {
	if r.effects == nil {
		r.effects = lower.ComputeEffects(r.prog)
	}
	if !ir.SplitCalls || !valueRead && !r.effects[g] {
		return nil, nil
	}
	if f := r.prog.Lookup(g.Name.Derive("rev"), g.BaseArg); f != nil && f.Kind != ir.DerivedFunc {
		return nil, nil // written by hand
	}
	fwd, rev = r.prog.Lookup(g.Name.Derive("suffwdpass"), g.BaseArg), r.prog.Lookup(g.Name.Derive("bogrev"), g.BaseArg)
	if fwd == nil || rev == nil {
		return nil, nil
	}
	return fwd, rev
}

func (r *resolver) RevAcc(g *ir.Func) (*ir.Func, bool, error) {
	if f := r.prog.Lookup(g.Name.Derive("rev"), g.BaseArg); f != nil && f.Kind != ir.DerivedFunc {
		return f, false, nil // written by hand
	}
	if f := r.prog.Lookup(g.Name.Derive("revacc"), g.BaseArg); f != nil {
		return f, true, nil
	}
	return nil, false, fmt.Errorf("no %s to apply [D %s] in reverse", g.Name.Derive("rev"), g.Name)
}

// reverseValue computes the body of [revfull f](x, dr, acc) = (f x, acc +
// [rev f](x, dr)), t, from one inlined Jacobian of f, so that the value and
// the reverse pass share the primal computation (see linmap.ReverseValue).
// [vrev f I] has such a tuple too.
func reverseValue(t *ir.Tuple, f *ir.Func, ns *ir.Names, res linmap.Resolver) ir.Expr {
	// What derive made: (tuple (f x) ($addTo acc (lmApplyR dr ([D f] x)))).
	add := t.Elems[1].(*ir.Call)
	app := add.Args[1].(*ir.Call)
	m := inlineSelf(app.Args[1], f)
	out, err := linmap.ReverseValue(m, app.Args[0], add.Args[0], ns, res)
	if err != nil {
		panic(err)
	}
	return out
}

// fwdfullBody computes [fwdfull f](x, dx) = (f x, [fwd f](x, dx)) from one
// inlined Jacobian of f, so that the value and the tangent share the
// primal computation (see linmap.ForwardValue).
func fwdfullBody(f *ir.Func, ns *ir.Names, res linmap.Resolver) ir.Expr {
	// The body derive made: (tuple (f x) (lmApply ([D f] x) dx)).
	t := f.Body.(*ir.Tuple)
	app := t.Elems[1].(*ir.Call)
	m := inlineSelf(app.Args[0], f)
	out, err := linmap.ForwardValue(m, app.Args[1], ns, res)
	if err != nil {
		panic(err)
	}
	return out
}

// mentionsLM reports whether e has a subexpression whose type holds a
// linear map.
func mentionsLM(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if t := x.Type(); t != nil && t.Contains(types.LM) {
			found = true
		}
		return !found
	})
	return found
}
