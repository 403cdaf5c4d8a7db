package derive

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/linmap"
)

// Sparse Hessians: [sparsejac [rev g]]. The Jacobian of [rev g] at (x,
// dr) has a row per Float of x (the gradient's) and a column per Float
// of x, then of dr: the Hessian of dr . g at x, beside J(x) transposed.
// Its pattern comes from [hpattern g], second-order sparsity by forward
// mode over sets of pairs (linmap.HessianPattern) at run time, from the
// structure of g's derivative, never from sweeps; its entries from one
// [fwd [rev g]] per colour of a greedy colouring of its columns (no
// two of a colour sharing a row), as for [sparsejac g] by columns.
// [sparsejac [rev g] 0] has the columns of x only: the Hessian.

// sparseHessianBody makes the body of f = [sparsejac [rev g] I...] (base
// is [rev g]), I nothing or 0.
func (d *deriver) sparseHessianBody(f, base *ir.Func, p ir.Pos) {
	g := base.Base
	wrt := f.Name.Wrt
	if wrt != nil && !(len(wrt) == 1 && wrt[0] == 0) {
		d.errorf(p, "ksc cannot generate %s: the sparse Jacobian of %s takes the columns of all its arguments, or of the first (the Hessian: %s 0]", f.FullName(), base.Name, "[sparsejac "+base.Name.String())
		return
	}
	if d.opaque(g) {
		d.errorf(p, "ksc cannot generate %s: the sparsity of %s's second derivative is not known (an edef, or forward mode written by hand); use [jac %s]", f.FullName(), g.Name, base.Name)
		return
	}
	hp, err := d.need("hpattern", g, p)
	var fw *ir.Func
	if err == nil {
		fw, err = d.need("fwd", base, p)
	}
	if err != nil {
		d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
		return
	}
	x := &ir.Var{P: f.P, T: f.Arg, Name: "x"}
	f.Params, f.OneParam = []*ir.Var{x}, true
	ref := func(v *ir.Var) ir.Expr { return ir.Ref(p, v) }
	_, chosen := d.columns(wrt, f.Arg, p)
	withJ := wrt == nil

	l := &lets{ns: d.ns, p: p}
	xs := l.bind("xs", ir.MkGet(p, 1, ref(x)))
	seed := linmap.HessianSeed(p, ir.MkPrim(p, "$patternSeed", ref(xs)), d.ns)
	hps := l.bind("hp", ir.CallFunc(p, hp, ref(xs), seed))
	jcsr := l.bind("jcsr", ir.MkPrim(p, "$patternCSR", linmap.FirstOrder(p, ref(hps), d.ns)))
	pairs := l.bind("pairs", linmap.PairsAll(p, ref(hps), d.ns))
	n := l.bind("n", d.floats(p, ir.MkPrim(p, "$shape", ref(xs)), xs.T))
	csr := l.bind("csr", ir.MkPrim(p, "$pairsCSR", ref(pairs), ir.MkGet(p, 1, ref(jcsr)), ir.MkGet(p, 2, ref(jcsr)), ref(n),
		ir.Bool(p, withJ)))
	off := l.bind("off", ir.MkGet(p, 1, ref(csr)))
	cols := l.bind("cols", ir.MkGet(p, 2, ref(csr)))
	ncols := l.bind("ncols", d.floats(p, ir.MkPrim(p, "$shape", chosen(ref(x))), chosen(ref(x)).Type()))
	cc := l.bind("cc", ir.MkPrim(p, "$colourColumns", ref(off), ref(cols), ref(ncols)))
	count := l.bind("count", ir.MkGet(p, 1, ref(cc)))
	colours := l.bind("colours", ir.MkGet(p, 2, ref(cc)))
	cs := &compressed{d: d, p: p, off: off, cols: cols, m: n, count: count, colours: colours}

	// One [fwd [rev g]] per colour along the sum of its columns' unit
	// tangents.
	dx := l.bind("dx", ir.MkPrim(p, "ts_zero", chosen(ref(x))))
	// Their primal parts ([rev g] at x) are alike: the optimiser runs
	// them once ($hoist, optimise.hoistLoops).
	sweeps := l.bind("sweeps", ir.MkPrim(p, "$hoist", cs.sweeps(ncols, dx, func(u ir.Expr) ir.Expr {
		return ir.CallFunc(p, fw, ref(x), d.wrtSpread(p, wrt, ref(x), u, d.zeroPart))
	})))
	f.Body = l.in(cs.byColumns(sweeps))
}
