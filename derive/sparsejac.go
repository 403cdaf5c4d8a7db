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
// (an edef, a hand-written [fwd f]) is dense: each of its result's Floats
// depends on all of its argument's.
func (d *deriver) patternBody(f, base *ir.Func, p ir.Pos) {
	x, px := d.params(f, "x", "px")
	if hand := d.lookup("fwd", base); base.Kind == ir.EdefFunc || base.Body == nil || hand != nil && hand.Kind != ir.DerivedFunc {
		f.Body = linmap.DensePattern(p, base.Result, func() ir.Expr { return ir.CallFunc(p, base, x) }, px, d.ns)
		return
	}
	dg, err := d.jacobianOf(base, p)
	if err != nil {
		d.errorf(p, "%v", err)
		return
	}
	f.Body = ir.MkPrim(p, "lmPattern", ir.CallFunc(p, dg, x), px)
}

// sparsejacBody makes the body of [sparsejac f] for f : S -> T, the
// Jacobian at x (as [jac f], flat order) in CSR form: (tuple offsets
// columns values), row i's entries at offsets[i] up to offsets[i+1], its
// columns increasing. The pattern comes from [pattern f], at run time
// from the map's structure (no sweep of f's derivative); its entries
// are computed by compressed sweeps: the columns coloured so that no two
// of a colour share a row, one [fwd f] per colour along the sum of its
// unit vectors, or the rows coloured so that no two share a column, one
// [sufrevpass f] per colour from one BOG; whichever needs fewer sweeps
// (Curtis, Powell and Reid's compression, greedy colouring). [sparsejac
// f I...] has the columns of the arguments at the positions I only.
func (d *deriver) sparsejacBody(f, base *ir.Func, p ir.Pos) {
	if len(base.Name.Derivs) > 0 && !ir.IsCL(base) {
		d.errorf(p, "ksc cannot generate %s: the sparse Jacobian of a derived function is not supported; use [jac %s]", f.FullName(), base.Name)
		return
	}
	pat, err := d.need("pattern", base, p)
	var fw *ir.Func
	if err == nil {
		fw, err = d.need("fwd", base, p)
	}
	if err != nil {
		d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
		return
	}
	fwdPass, revPass, ok := d.splitPasses(base, p)
	if !ok {
		return
	}
	x := &ir.Var{P: f.P, T: f.Arg, Name: "x"}
	f.Params, f.OneParam = []*ir.Var{x}, true
	ref := func(v *ir.Var) ir.Expr { return ir.Ref(p, v) }
	let := func(base string, rhs ir.Expr, body func(v *ir.Var) ir.Expr) ir.Expr {
		v := d.ns.FreshVar(p, base, rhs.Type())
		return ir.MkLet(p, v, rhs, body(v))
	}
	idx := func(i, v ir.Expr) ir.Expr { return ir.MkPrim(p, "index", i, v) }
	// The columns are those of the arguments at the positions wrt
	// ([sparsejac f I...]), or all: the others' Floats depend on nothing,
	// their tangents are zero and their gradients are dropped.
	wrt := f.Name.Wrt
	if f.Arg.Kind != types.Tuple {
		wrt = nil // the only position is 0
	}
	chosen := func(e ir.Expr) ir.Expr {
		if wrt == nil {
			return e
		}
		return d.wrtParts(p, wrt, f.Arg, e)
	}
	emptyPart := func(p ir.Pos, field ir.Expr) ir.Expr { return linmap.EmptyPattern(p, field, d.ns) }
	seed := d.wrtSpread(p, wrt, ref(x), ir.MkPrim(p, "$patternSeed", chosen(ref(x))), emptyPart)
	// seeds are the colours' sums of unit vectors: count vectors of size
	// n, the c-th with ones where colour (index k colours) is c, each
	// given the structure of zero.
	seeds := func(count, n, colours, zero *ir.Var, sweep func(seed ir.Expr) ir.Expr) ir.Expr {
		c := d.ns.FreshVar(p, "c", types.IntegerType)
		k := d.ns.FreshVar(p, "k", types.IntegerType)
		one := ir.MkIf(p, ir.MkPrim(p, "eq", idx(ref(k), ref(colours)), ref(c)), ir.Float(p, 1), ir.Float(p, 0))
		seed := ir.MkPrim(p, "$unflatten", ir.MkPrim(p, "build", ref(n), ir.MkLam(p, k, one)), ref(zero))
		return ir.MkPrim(p, "build", ref(count), ir.MkLam(p, c, ir.MkPrim(p, "$flatten", sweep(seed))))
	}
	// values reads the entries from the sweeps: entry (i, j) is in the
	// sweep of column j's colour at row i, or of row i's at column j.
	values := func(m, off, cols, colours, sweeps *ir.Var, byRow bool) ir.Expr {
		i := d.ns.FreshVar(p, "i", types.IntegerType)
		q := d.ns.FreshVar(p, "q", types.IntegerType)
		row := let("o", idx(ref(i), ref(off)), func(o *ir.Var) ir.Expr {
			length := ir.MkPrim(p, "sub", idx(ir.MkPrim(p, "add", ref(i), ir.Int(p, 1)), ref(off)), ref(o))
			entry := let("j", idx(ir.MkPrim(p, "add", ref(o), ref(q)), ref(cols)), func(j *ir.Var) ir.Expr {
				if byRow {
					return idx(ref(j), idx(idx(ref(i), ref(colours)), ref(sweeps)))
				}
				return idx(ref(i), idx(idx(ref(j), ref(colours)), ref(sweeps)))
			})
			return ir.MkPrim(p, "build", length, ir.MkLam(p, q, entry))
		})
		return ir.MkPrim(p, "$flatten", ir.MkPrim(p, "build", ref(m), ir.MkLam(p, i, row)))
	}
	f.Body = let("csr", ir.MkPrim(p, "$patternCSR", ir.CallFunc(p, pat, ref(x), seed)), func(csr *ir.Var) ir.Expr {
		return let("off", ir.MkGet(p, 1, ref(csr)), func(off *ir.Var) ir.Expr {
			return let("cols", ir.MkGet(p, 2, ref(csr)), func(cols *ir.Var) ir.Expr {
				return let("m", ir.MkPrim(p, "sub", ir.MkPrim(p, "size", ref(off)), ir.Int(p, 1)), func(m *ir.Var) ir.Expr {
					return let("n", d.floats(p, ir.MkPrim(p, "$shape", chosen(ref(x))), chosen(ref(x)).Type()), func(n *ir.Var) ir.Expr {
						colouring := func(body func(byRows, count, colours *ir.Var) ir.Expr) ir.Expr {
							return let("cc", ir.MkPrim(p, "$colour", ref(off), ref(cols), ref(n)), func(cc *ir.Var) ir.Expr {
								return let("byRows", ir.MkGet(p, 1, ref(cc)), func(byRows *ir.Var) ir.Expr {
									return let("count", ir.MkGet(p, 2, ref(cc)), func(count *ir.Var) ir.Expr {
										return let("colours", ir.MkGet(p, 3, ref(cc)), func(colours *ir.Var) ir.Expr {
											return body(byRows, count, colours)
										})
									})
								})
							})
						}
						result := func(vals ir.Expr) ir.Expr { return ir.MkTuple(p, ref(off), ref(cols), vals) }
						return colouring(func(byRows, count, colours *ir.Var) ir.Expr {
							byCol := let("dx", ir.MkPrim(p, "ts_zero", chosen(ref(x))), func(dx *ir.Var) ir.Expr {
								return let("sweeps", seeds(count, n, colours, dx, func(seed ir.Expr) ir.Expr {
									return ir.CallFunc(p, fw, ref(x), d.wrtSpread(p, wrt, ref(x), seed, d.zeroPart))
								}), func(sweeps *ir.Var) ir.Expr {
									return result(values(m, off, cols, colours, sweeps, false))
								})
							})
							byRow := let("pb", ir.CallFunc(p, fwdPass, ref(x)), func(pb *ir.Var) ir.Expr {
								return let("dy", ir.MkPrim(p, "ts_zero", ir.MkGet(p, 1, ref(pb))), func(dy *ir.Var) ir.Expr {
									return let("bog", ir.MkGet(p, 2, ref(pb)), func(b *ir.Var) ir.Expr {
										return let("sweeps", seeds(count, m, colours, dy, func(seed ir.Expr) ir.Expr {
											return chosen(ir.CallFunc(p, revPass, seed, ref(b)))
										}), func(sweeps *ir.Var) ir.Expr {
											return result(values(m, off, cols, colours, sweeps, true))
										})
									})
								})
							})
							return ir.MkIf(p, ref(byRows), byRow, byCol)
						})
					})
				})
			})
		})
	})
}
