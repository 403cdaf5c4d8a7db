package derive

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Derivatives of derivatives (issue 16). A derivation X of a derived
// function [Y g] is made once [Y g] is optimised (Ready): the driver
// derives, optimises, and derives again with Options.Nested. Then
//
//   - forward code ([fwd g], and the [fwdfull h] it calls) is a def like
//     any other: every derivation applies to its body, so [rev [fwd g]]
//     is reverse mode of forward mode;
//   - [rev g] is not differentiated as code (its in-place accumulators
//     have no derivative rules); by the symmetry of second derivatives,
//     with H_i the Hessian of g's i-th result,
//
//     [fwd [rev g]] ((x, dr), (dx, ddr)) = Σ dr_i H_i dx + [rev g] (x, ddr)
//     [rev [rev g]] ((x, dr), c)         = (Σ dr_i H_i c, [fwd g] (x, c))
//
//     where Σ dr_i H_i dx is the first part of [rev [fwd g]] ((x, dx), dr),
//     the gradient of dr · J(x) dx with respect to x. [jac [rev g]], the
//     Hessian for a Float g, is by columns of [fwd [rev g]].

// Waiting returns the derived functions of an optimised program that
// still wait for the optimised bodies of those they differentiate.
func Waiting(prog *ir.Program, opts Options) []*ir.Func {
	var out []*ir.Func
	for _, f := range prog.Funcs {
		// After the optimiser, a derived function without a body is one
		// that waited (whether or not the reason is still visible: the
		// call of a derived function that made it wait may be inlined).
		if f.Kind == ir.DerivedFunc && f.Body == nil && (opts.Skip == nil || !opts.Skip(f)) {
			out = append(out, f)
		}
	}
	return out
}

// waits reports whether f is made only once the functions it
// differentiates are optimised: it derives from a derived function, or
// from a def calling one.
func waits(f *ir.Func) bool { return nested(f) || callsDerived(f.Base) }

// nested reports whether f derives from a derived function and waits
// for its optimised body; [shape [X g]] and [X [CL g]] are made without.
func nested(f *ir.Func) bool {
	n := f.Name
	switch {
	case len(n.Derivs) < 2:
		return false
	case len(n.Derivs) == 2 && n.Derivs[0] == "shape":
		return false
	case len(n.Derivs) == 2 && n.Derivs[1] == "CL" && n.Wrt == nil:
		return false
	}
	return true
}

// Ready reports whether g's body, and those of the functions it calls,
// are ready to be differentiated as code: there, and free of linear maps
// (optimised), with no call of a derived function still to be made.
func Ready(g *ir.Func) bool {
	seen := map[*ir.Func]bool{}
	var ready func(g *ir.Func) bool
	ready = func(g *ir.Func) bool {
		if g == nil || seen[g] {
			return true // a primitive's derivation has no base function
		}
		seen[g] = true
		if g.Body == nil {
			return g.Kind != ir.DerivedFunc
		}
		if g.Arg.Contains(types.LM) || g.Result.Contains(types.LM) {
			return false
		}
		ok := true
		ir.Inspect(g.Body, func(e ir.Expr) bool {
			if t := e.Type(); t != nil && t.Contains(types.LM) {
				ok = false
			} else if c, isCall := e.(*ir.Call); isCall && c.Fn != nil && !ready(c.Fn) {
				ok = false
			}
			return ok
		})
		return ok
	}
	return ready(g)
}

// nestedRev makes a derivation of [rev g] (or of [vrev g]) by the
// identities above, and reports whether it did (or reported why not); it
// leaves the others, derivations of forward code, to the usual path.
func (d *deriver) nestedRev(f *ir.Func) bool {
	inner := f.Base
	if isVrev(inner) {
		return d.nestedVrev(f)
	}
	if inner == nil || !byIdentity(inner) {
		return false
	}
	p := usePos(f)
	g := inner.Base
	deriv := f.Name.Derivs[0]
	if deriv == "jac" || deriv == "pattern" || deriv == "sparsejac" {
		// By columns of [fwd [rev g]] (jacBody, sparseHessianBody), or
		// dense (patternBody).
		return false
	}
	if f.Name.Wrt != nil {
		d.errorf(p, "ksc cannot generate %s: derivations of %s take no positions; differentiate with respect to all its arguments", f.FullName(), inner.Name)
		return true
	}
	if deriv != "fwd" && deriv != "rev" && deriv != "fwdfull" && deriv != "revacc" && deriv != "D" {
		d.errorf(p, "ksc cannot generate %s: of the derivations of %s, ksc makes fwd, rev, jac and sparsejac", f.FullName(), inner.Name)
		return true
	}
	if d.byItsOwn(f, p) {
		return true
	}
	fw, err := d.need("fwd", g, p)
	var revFwd *ir.Func
	if err == nil {
		// Reverse mode of [fwd g] for x only: the gradient for the
		// direction u, J(x)^T dr, is not wanted.
		revFwd, err = d.needWrt("rev", fw, []int{0}, p)
	}
	if err != nil {
		d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
		return true
	}
	v := paramsOf(f, "xr", "t")
	x, dr := ir.MkGet(p, 1, v[0]), ir.MkGet(p, 2, v[0])
	// hvp is Σ dr_i H_i u, [rev [fwd g] 0] ((x, u), dr).
	hvp := func(u ir.Expr) ir.Expr {
		return ir.CallFunc(p, revFwd, ir.MkTuple(p, x, u), dr)
	}
	if deriv == "fwd" {
		dx, ddr := ir.MkGet(p, 1, v[1]), ir.MkGet(p, 2, v[1])
		var grad ir.Expr = ir.CallFunc(p, inner, x, ddr)
		if ddr.Type().Kind == types.Float {
			// A Hessian-vector product has ddr = 0: no gradient then.
			grad = ir.MkIf(p, ir.MkPrim(p, "eq", ddr, ir.Float(p, 0)), ir.MkPrim(p, "ts_zero", x), grad)
		}
		f.Body = ir.MkPrim(p, "ts_add", hvp(dx), grad)
		return true
	}
	f.Body = ir.MkTuple(p, hvp(v[1]), ir.CallFunc(p, fw, x, v[1]))
	return true
}

// ifoldsAsFolds rewrites the index loops of derived code as the folds they
// are, so that derived code differentiates like a def: ($ifold n s f) is
// (fold f s (build n (lam i i))), and $ifoldr the same over the indices
// counting down.
func ifoldsAsFolds(e ir.Expr, ns *ir.Names) ir.Expr {
	return ir.Map(e, func(x ir.Expr) ir.Expr {
		c, ok := x.(*ir.Call)
		if !ok || c.Prim == nil || c.Prim.Name != "$ifold" && c.Prim.Name != "$ifoldr" {
			return x
		}
		p := c.P
		n, s, f := c.Args[0], c.Args[1], c.Args[2]
		i := ns.FreshVar(p, "i", types.IntegerType)
		var idx ir.Expr = ir.Ref(p, i)
		if c.Prim.Name == "$ifoldr" {
			idx = ir.MkPrim(p, "sub", ir.MkPrim(p, "sub", n, ir.Int(p, 1)), idx)
		}
		return ir.MkPrim(p, "fold", f, s, ir.MkPrim(p, "build", n, ir.MkLam(p, i, idx)))
	})
}

// isVrev reports whether g is [vrev h], of all h's arguments.
func isVrev(g *ir.Func) bool {
	return g != nil && g.Kind == ir.DerivedFunc && g.Name.Outer() == "vrev" && g.Name.Wrt == nil
}

// nestedVrev makes a derivation of [vrev g], which is the pair of g and
// [rev g] (its one sweep computes both):
//
//	[vrev g] (x, dr)                        = (g x, [rev g] (x, dr))
//	[fwd [vrev g]] ((x, dr), (dx, ddr))     = ([fwd g] (x, dx), [fwd [rev g]] ((x, dr), (dx, ddr)))
//	[rev [vrev g]] ((x, dr), (cy, cg))      = ([rev g] (x, cy) + c1, c2)
//	                                          where (c1, c2) = [rev [rev g]] ((x, dr), cg)
//
// [jac [vrev g]] is by columns of [fwd [vrev g]], as for [rev g].
func (d *deriver) nestedVrev(f *ir.Func) bool {
	inner := f.Base
	p := usePos(f)
	g := inner.Base
	deriv := f.Name.Derivs[0]
	switch {
	case deriv == "jac":
		return false
	case f.Name.Wrt != nil:
		d.errorf(p, "ksc cannot generate %s: derivations of %s take no positions; differentiate with respect to all its arguments", f.FullName(), inner.Name)
		return true
	case deriv != "fwd" && deriv != "rev" && deriv != "fwdfull" && deriv != "revacc" && deriv != "D":
		d.errorf(p, "ksc cannot generate %s: of the derivations of %s, ksc makes fwd, rev and jac", f.FullName(), inner.Name)
		return true
	}
	if d.byItsOwn(f, p) {
		return true
	}
	switch deriv {
	case "fwd":
		fw, fwRev := d.needChain(f, p, g, "fwd"), d.needChain(f, p, g, "fwd", "rev")
		if fw == nil || fwRev == nil {
			return true
		}
		v := paramsOf(f, "xr", "t")
		x, dx := ir.MkGet(p, 1, v[0]), ir.MkGet(p, 1, v[1])
		f.Body = ir.MkTuple(p, ir.CallFunc(p, fw, x, dx), ir.CallFunc(p, fwRev, v[0], v[1]))
	case "rev":
		rv, revRev := d.needChain(f, p, g, "rev"), d.needChain(f, p, g, "rev", "rev")
		if rv == nil || revRev == nil {
			return true
		}
		v := paramsOf(f, "xr", "c")
		x := ir.MkGet(p, 1, v[0])
		cy, cg := ir.MkGet(p, 1, v[1]), ir.MkGet(p, 2, v[1])
		rr := d.ns.FreshVar(p, "rr", revRev.Result)
		ref := ir.Ref(p, rr)
		f.Body = ir.MkLet(p, rr, ir.CallFunc(p, revRev, v[0], cg),
			ir.MkTuple(p, ir.MkPrim(p, "ts_add", ir.CallFunc(p, rv, x, cy), ir.MkGet(p, 1, ref)), ir.MkGet(p, 2, ref)))
	}
	return true
}

// byItsOwn makes [D h], [fwdfull h] and [revacc h] for h = [rev g] or
// [vrev g] from h's own [fwd h] and [rev h], and reports whether f was
// one of them: [D h] is a declaration, applied through [fwd h] and
// [revacc h]; [fwdfull h] adds the value, for a caller's forward mode;
// [revacc h] adds into an accumulator, for a caller's reverse mode.
func (d *deriver) byItsOwn(f *ir.Func, p ir.Pos) bool {
	inner := f.Base
	switch f.Name.Derivs[0] {
	case "D":
	case "fwdfull":
		if fw := d.needChain(f, p, inner, "fwd"); fw != nil {
			v := paramsOf(f, "x", "dx")
			f.Body = ir.MkTuple(p, ir.CallFunc(p, inner, v[0]), ir.CallFunc(p, fw, v[0], v[1]))
		}
	case "revacc":
		if rv := d.needChain(f, p, inner, "rev"); rv != nil {
			v := paramsOf(f, "x", "dr", "acc")
			f.Body = ir.MkPrim(p, "$addTo", v[2], ir.CallFunc(p, rv, v[0], v[1]))
		}
	default:
		return false
	}
	return true
}

// needChain returns [d1 [d2 ... g]] for derivs = d1, d2, ..., or nil
// once it has reported against f why it cannot.
func (d *deriver) needChain(f *ir.Func, p ir.Pos, g *ir.Func, derivs ...string) *ir.Func {
	for i := len(derivs) - 1; i >= 0; i-- {
		var err error
		if g, err = d.need(derivs[i], g, p); err != nil {
			d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
			return nil
		}
	}
	return g
}

// byIdentity reports whether g is [rev h] or [sufrev h] (the same
// function, made by split reverse mode), whose derivatives nestedRev
// writes by the identities above rather than from its code.
func byIdentity(g *ir.Func) bool {
	outer := g.Name.Outer()
	return g.Kind == ir.DerivedFunc && (outer == "rev" || outer == "sufrev") && g.Name.Wrt == nil
}

// callsDerived reports whether g's body calls, directly or through the
// functions it calls, a derived function (other than [CL h], made
// beside it) that differentiating g must differentiate in turn: a def
// calling [rev h] waits, like [fwd [rev h]], for [rev h] to be optimised.
func callsDerived(g *ir.Func) bool {
	if g == nil {
		return false
	}
	seen := map[*ir.Func]bool{}
	var calls func(g *ir.Func) bool
	calls = func(g *ir.Func) bool {
		if seen[g] || g.Body == nil {
			return false
		}
		seen[g] = true
		found := false
		ir.Inspect(g.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Fn != nil {
				fn := c.Fn
				if fn.Kind == ir.DerivedFunc && !fn.Name.IsCL() && fn.Name.Outer() != "shape" || calls(fn) {
					found = true
				}
			}
			return !found
		})
		return found
	}
	return len(g.Name.Derivs) == 0 && calls(g)
}

// needWrt returns [deriv g I], the derivation with respect to the
// arguments at the positions wrt, declaring it if it is new.
func (d *deriver) needWrt(deriv string, g *ir.Func, wrt []int, pos ir.Pos) (*ir.Func, error) {
	name := g.Name.Derive(deriv)
	name.Wrt = wrt
	if f := d.prog.Lookup(name, g.BaseArg); f != nil {
		f.Uses = append(f.Uses, pos)
		return f, nil
	}
	arg, res, msg := ir.DerivedSig(deriv, g.Arg, g.Result, nil)
	if msg == "" {
		arg, res, msg = ir.WrtSig(deriv, wrt, g.Arg, arg, res)
	}
	if msg != "" {
		return nil, fmt.Errorf("ksc cannot differentiate %s: %s", g.FullName(), msg)
	}
	f := &ir.Func{P: g.P, Name: name, BaseArg: g.BaseArg, Arg: arg, Result: res,
		Kind: ir.DerivedFunc, Base: g, Uses: []ir.Pos{pos}, Implied: true}
	d.prog.Funcs = append(d.prog.Funcs, f)
	return f, nil
}
