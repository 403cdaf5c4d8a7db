package derive

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/linmap"
	"github.com/ksc-lang/ksc/types"
)

// patternBody makes the body of [pattern f] for f : S -> T, forward mode
// over sets (types.Pattern, linmap.Pattern): given x and, for each Float
// of x, the set of the positions it depends on, it returns for each Float
// of f's result the union of the sets of the Floats of x it depends on
// through [D f]'s structure. A function whose derivative ksc cannot see
// (opaque) is dense: each of its result's Floats depends on all of its
// argument's.
//
// [hpattern f] is the same over sets and sets of pairs (second: the
// Hessian's pattern, types.HessianPattern, linmap.HessianPattern).
func (d *deriver) patternBody(f, base *ir.Func, p ir.Pos, second bool) {
	x, px := d.params(f, "x", "px")
	if d.opaque(base) {
		dense := linmap.DensePattern
		if second {
			dense = linmap.DenseHessianPattern
		}
		f.Body = dense(p, base.Result, func() ir.Expr { return ir.CallFunc(p, base, x) }, px, d.ns)
		return
	}
	dg, err := d.jacobianOf(base, p)
	if err != nil {
		d.errorf(p, "%v", err)
		return
	}
	prim := "lmPattern"
	if second {
		prim = "lmHessianPattern"
	}
	f.Body = ir.MkPrim(p, prim, ir.CallFunc(p, dg, x), px)
}

// sparsejacBody makes the body of [sparsejac f] for f : S -> T, the
// Jacobian at x (as [jac f], flat order) in CSR form: (tuple offsets
// columns values), row i's entries at offsets[i] up to offsets[i+1], its
// columns increasing. The pattern comes from [pattern f], at run time
// from the map's structure (no sweep of f's derivative); its entries
// are computed by compressed sweeps: the columns coloured so that no two
// of a colour share a row, one [fwd f] per colour along the sum of its
// unit vectors, or the rows coloured so that no two share a column, one
// [sufrevpass f] per colour from one BOG; whichever needs fewer (Curtis,
// Powell and Reid's compression, greedy colouring: $colour). [sparsejac
// f I...] has the columns of the arguments at the positions I only.
func (d *deriver) sparsejacBody(f, base *ir.Func, p ir.Pos) {
	if byIdentity(base) {
		d.sparseHessianBody(f, base, p) // hessian.go
		return
	}
	// Forward code ([fwd g]) is differentiated as code, its pattern as
	// any def's; its split passes are not made, so its sweeps are by
	// columns only (as [jac [fwd g]]'s).
	byColsOnly := forwardCode(base)
	if len(base.Name.Derivs) > 0 && !ir.IsCL(base) && !byColsOnly {
		d.errorf(p, "ksc cannot generate %s: the sparse Jacobian of a derived function other than [rev g] and [fwd g] is not supported; use [jac %s]", f.FullName(), base.Name)
		return
	}
	fs, ok := d.needs(f, base, p, "pattern")
	if !ok {
		return
	}
	pat := fs[0]
	var fwdPass, revPass *ir.Func
	if !byColsOnly {
		if fwdPass, revPass, ok = d.splitPasses(base, p); !ok {
			return
		}
	}
	x := &ir.Var{P: f.P, T: f.Arg, Name: "x"}
	f.Params, f.OneParam = []*ir.Var{x}, true
	ref := func(v *ir.Var) ir.Expr { return ir.Ref(p, v) }
	// The columns are those of the arguments at the positions wrt
	// ([sparsejac f I...]), or all: the others' Floats depend on nothing,
	// their tangents are zero and their gradients are dropped.
	wrt, chosen := d.columns(f.Name.Wrt, f.Arg, p)
	sweep, ok := d.forwardSweep(f, base, wrt, p)
	if !ok {
		return
	}

	// The pattern, in CSR form, and its colouring.
	l := &lets{ns: d.ns, p: p}
	sets := l.bind("sets", d.seedSets(p, wrt, ref(x), chosen(ref(x))))
	csr := l.bind("csr", ir.MkPrim(p, "$patternCSR", ir.CallFunc(p, pat, ref(x), ref(sets))))
	off := l.bind("off", ir.MkGet(p, 1, ref(csr)))
	cols := l.bind("cols", ir.MkGet(p, 2, ref(csr)))
	m := l.bind("m", ir.MkPrim(p, "sub", ir.MkPrim(p, "size", ref(off)), ir.Int(p, 1)))
	n := l.bind("n", d.floats(p, ir.MkPrim(p, "$shape", chosen(ref(x))), chosen(ref(x)).Type()))
	var cc, count, colours *ir.Var
	if byColsOnly {
		cc = l.bind("cc", ir.MkPrim(p, "$colourColumns", ref(off), ref(cols), ref(n)))
		count = l.bind("count", ir.MkGet(p, 1, ref(cc)))
		colours = l.bind("colours", ir.MkGet(p, 2, ref(cc)))
	} else {
		cc = l.bind("cc", ir.MkPrim(p, "$colour", ref(off), ref(cols), ref(n)))
		count = l.bind("count", ir.MkGet(p, 2, ref(cc)))
		colours = l.bind("colours", ir.MkGet(p, 3, ref(cc)))
	}

	cs := &compressed{d: d, p: p, off: off, cols: cols, m: m, count: count, colours: colours}
	idx := func(i, v ir.Expr) ir.Expr { return ir.MkPrim(p, "index", i, v) }

	// By columns: one [fwd f] per colour along the sum of the unit
	// tangents of its columns; entry (i, j) is row i of the sweep of j's
	// colour.
	cl := &lets{ns: d.ns, p: p}
	dx := cl.bind("dx", ir.MkPrim(p, "ts_zero", chosen(ref(x))))
	// Their primal parts are alike: the optimiser runs them once
	// ($hoist, optimise.hoistLoops).
	colSweeps := cl.bind("sweeps", ir.MkPrim(p, "$hoist", cs.sweeps(n, dx, func(seed ir.Expr) ir.Expr {
		return sweep(ref(x), seed)
	})))
	byCol := cl.in(cs.byColumns(colSweeps))
	if byColsOnly {
		f.Body = l.in(byCol)
		return
	}

	// By rows: one [sufrevpass f] per colour, from one BOG, along the sum
	// of the unit cotangents of its rows; entry (i, j) is column j of
	// the sweep of i's colour.
	rw := &lets{ns: d.ns, p: p}
	pb := rw.bind("pb", ir.CallFunc(p, fwdPass, ref(x)))
	dy := rw.bind("dy", ir.MkPrim(p, "ts_zero", ir.MkGet(p, 1, ref(pb))))
	bog := rw.bind("bog", ir.MkGet(p, 2, ref(pb)))
	rowSweeps := rw.bind("sweeps", cs.sweeps(m, dy, func(seed ir.Expr) ir.Expr {
		return chosen(ir.CallFunc(p, revPass, seed, ref(bog)))
	}))
	byRow := rw.in(cs.result(func(i, j ir.Expr) ir.Expr { return idx(j, idx(idx(i, ref(colours)), ref(rowSweeps))) }))

	f.Body = l.in(ir.MkIf(p, ir.MkGet(p, 1, ref(cc)), byRow, byCol))
}

// compressed makes the entries of a CSR pattern (off, cols), m rows,
// from compressed sweeps: count colours, colours giving each column's
// (or row's) colour.
type compressed struct {
	d                            *deriver
	p                            ir.Pos
	off, cols, m, count, colours *ir.Var
}

// sweeps makes one sweep per colour c, each of the seed whose size
// Floats (in the structure of zero) are 1 where colours says c.
func (cs *compressed) sweeps(size, zero *ir.Var, sweep func(seed ir.Expr) ir.Expr) ir.Expr {
	p, d := cs.p, cs.d
	c := d.ns.FreshVar(p, "c", types.IntegerType)
	k := d.ns.FreshVar(p, "k", types.IntegerType)
	one := ir.MkIf(p, ir.MkPrim(p, "eq", ir.MkPrim(p, "index", ir.Ref(p, k), ir.Ref(p, cs.colours)), ir.Ref(p, c)), ir.Float(p, 1), ir.Float(p, 0))
	seed := ir.MkPrim(p, "$unflatten", ir.MkPrim(p, "build", ir.Ref(p, size), ir.MkLam(p, k, one)), ir.Ref(p, zero))
	return ir.MkPrim(p, "build", ir.Ref(p, cs.count), ir.MkLam(p, c, ir.MkPrim(p, "$flatten", sweep(seed))))
}

// result is the CSR triple, entry k (row i, column j) at(i, j).
func (cs *compressed) result(at func(i, j ir.Expr) ir.Expr) ir.Expr {
	p, d := cs.p, cs.d
	ref := func(v *ir.Var) ir.Expr { return ir.Ref(p, v) }
	idx := func(i, v ir.Expr) ir.Expr { return ir.MkPrim(p, "index", i, v) }
	add := func(a, b ir.Expr) ir.Expr { return ir.MkPrim(p, "add", a, b) }
	i := d.ns.FreshVar(p, "i", types.IntegerType)
	q := d.ns.FreshVar(p, "q", types.IntegerType)
	rl := &lets{ns: d.ns, p: p}
	o := rl.bind("o", idx(ref(i), ref(cs.off)))
	el := &lets{ns: d.ns, p: p}
	j := el.bind("j", idx(add(ref(o), ref(q)), ref(cs.cols)))
	length := ir.MkPrim(p, "sub", idx(add(ref(i), ir.Int(p, 1)), ref(cs.off)), ref(o))
	row := rl.in(ir.MkPrim(p, "build", length, ir.MkLam(p, q, el.in(at(ref(i), ref(j))))))
	vals := ir.MkPrim(p, "$flatten", ir.MkPrim(p, "build", ref(cs.m), ir.MkLam(p, i, row)))
	return ir.MkTuple(p, ref(cs.off), ref(cs.cols), vals)
}

// byColumns is the CSR triple from the sweeps of the column colours:
// entry (i, j) is row i of the sweep of j's colour.
func (cs *compressed) byColumns(sweeps *ir.Var) ir.Expr {
	p := cs.p
	idx := func(i, v ir.Expr) ir.Expr { return ir.MkPrim(p, "index", i, v) }
	return cs.result(func(i, j ir.Expr) ir.Expr { return idx(i, idx(idx(j, ir.Ref(p, cs.colours)), ir.Ref(p, sweeps))) })
}

// lets builds a chain of lets, each bound to a fresh variable.
type lets struct {
	ns    *ir.Names
	p     ir.Pos
	items []*ir.Let
}

// bind adds the let of a fresh variable named from base to rhs and
// returns the variable.
func (l *lets) bind(base string, rhs ir.Expr) *ir.Var {
	v := l.ns.FreshVar(l.p, base, rhs.Type())
	l.items = append(l.items, &ir.Let{P: l.p, Vars: []*ir.Var{v}, Rhs: rhs})
	return v
}

// in returns the chain of lets around body.
func (l *lets) in(body ir.Expr) ir.Expr {
	for i := len(l.items) - 1; i >= 0; i-- {
		body = ir.MkLet(l.p, l.items[i].Vars[0], l.items[i].Rhs, body)
	}
	return body
}

// seedSets returns the pattern of the argument x of [sparsejac f I...]
// or [jac f I...]: each Float of the arguments at the positions wrt (all
// if nil), whose tuple or value is chosen, the set of its own column;
// the others' Floats the empty set.
func (d *deriver) seedSets(p ir.Pos, wrt []int, x, chosen ir.Expr) ir.Expr {
	empty := func(p ir.Pos, field ir.Expr) ir.Expr { return linmap.EmptyPattern(p, field, d.ns) }
	return d.wrtSpread(p, wrt, x, ir.MkPrim(p, "$patternSeed", chosen), empty)
}

// forwardCode reports whether g is forward mode of a function, [fwd h]
// or [fwdfull h] (of forward code, or of [CL h], at any depth), whose
// derivatives are those of its code.
func forwardCode(g *ir.Func) bool {
	if g.Kind != ir.DerivedFunc || g.Name.Wrt != nil || len(g.Name.Derivs) == 0 {
		return false
	}
	for _, d := range g.Name.Derivs {
		if d != "fwd" && d != "fwdfull" && d != "CL" {
			return false
		}
	}
	return g.Name.Outer() != "CL"
}

// opaque reports whether ksc differentiates g other than through its
// Jacobian's structure: an edef, a def with a hand-written [fwd g], or a
// derived function ([rev h], whose [D [rev h]] is a declaration applied
// through [fwd [rev h]]). Its pattern is dense.
func (d *deriver) opaque(g *ir.Func) bool {
	if g.Kind == ir.EdefFunc || g.Body == nil || len(g.Name.Derivs) > 0 && !ir.IsCL(g) && !forwardCode(g) {
		return true
	}
	hand := d.lookup("fwd", g)
	return hand != nil && hand.Kind != ir.DerivedFunc
}
