package derive

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// jacBody makes the body of [jac f] for f : S -> T, the dense Jacobian at
// x (language.md section 5): J[i][j] is the derivative of the i-th Float
// of f's result by the j-th Float of x, both in flat order ($flatten:
// tuple fields in order, tensor elements row-major; other scalars have no
// tangent and no row or column).
//
// With n columns and m rows, J is computed by whichever costs fewer
// sweeps: n columns by [fwd f] at the unit tangents, or, if m < n, m rows
// by [sufrevpass f] at the unit cotangents, all from one BOG of one
// [suffwdpass f], so the primal runs once. n and m are counted from the
// sizes of x and of [shape f], which computes no values, so the choice
// runs no sweep. [jac f I...] has the columns of the arguments at the
// positions I only.
func (d *deriver) jacBody(f, base *ir.Func, p ir.Pos) {
	fs, ok := d.needs(f, base, p, "shape")
	if !ok {
		return
	}
	sh := fs[0]
	wrt, chosen := d.columns(f.Name.Wrt, f.Arg, p)
	sweep, ok := d.forwardSweep(f, base, wrt, p)
	if !ok {
		return
	}
	// A derived function's Jacobian is by columns only: its split passes
	// are not made (nested.go).
	byColsOnly := len(base.Name.Derivs) > 0 && !ir.IsCL(base)
	var fwdPass, revPass *ir.Func
	if !byColsOnly {
		if fwdPass, revPass, ok = d.splitPasses(base, p); !ok {
			return
		}
	}
	x := &ir.Var{P: f.P, T: f.Arg, Name: "x"}
	f.Params, f.OneParam = []*ir.Var{x}, true
	ref := func(v *ir.Var) ir.Expr { return ir.Ref(p, v) }
	// unit is the k-th unit vector of the space whose zero is zero.
	unit := func(size, k, zero *ir.Var) ir.Expr {
		return ir.MkPrim(p, "$unflatten", ir.MkPrim(p, "deltaVec", ref(size), ref(k), ir.Float(p, 1)), ref(zero))
	}
	// vectors builds count vectors, the k-th made by sweep from k.
	vectors := func(count *ir.Var, sweep func(k *ir.Var) ir.Expr) ir.Expr {
		k := d.ns.FreshVar(p, "k", types.IntegerType)
		return ir.MkPrim(p, "build", ref(count), ir.MkLam(p, k, ir.MkPrim(p, "$flatten", sweep(k))))
	}
	// matrix is the m x n Jacobian from the vectors vs: its columns, or
	// its rows if byRow.
	matrix := func(m, n, vs *ir.Var, byRow bool) ir.Expr {
		ij := d.ns.FreshVar(p, "ij", types.TupleOf(types.IntegerType, types.IntegerType))
		outer, inner := ir.MkGet(p, 2, ref(ij)), ir.MkGet(p, 1, ref(ij))
		if byRow {
			outer, inner = inner, outer
		}
		elem := ir.MkPrim(p, "index", inner, ir.MkPrim(p, "index", outer, ref(vs)))
		return ir.MkPrim(p, "build", ir.MkTuple(p, ref(m), ref(n)), ir.MkLam(p, ij, elem))
	}
	// The columns are those of the arguments at the positions wrt ([jac f
	// I...]), or all: a tangent of those arguments (made by $unflatten) is
	// swept by [fwd f I...]; a gradient is cut down to those arguments'
	// parts.

	// n columns, m rows, counted from the shapes of x and of f's result.
	l := &lets{ns: d.ns, p: p}
	n := l.bind("n", d.floats(p, ir.MkPrim(p, "$shape", chosen(ref(x))), chosen(ref(x)).Type()))
	shy := l.bind("sh", ir.CallFunc(p, sh, ref(x)))
	m := l.bind("m", d.floats(p, ref(shy), base.Result))

	// By columns: [fwd f] at each unit tangent, made from the zero
	// tangent dx (made here, not before the choice: the rows never read
	// it, and it is a vector per argument).
	cl := &lets{ns: d.ns, p: p}
	dx := cl.bind("dx", ir.MkPrim(p, "ts_zero", chosen(ref(x))))
	// The sweeps' primal parts are alike: the optimiser runs them once
	// ($hoist, optimise.hoistLoops).
	cols := cl.bind("cols", ir.MkPrim(p, "$hoist", vectors(n, func(j *ir.Var) ir.Expr {
		return sweep(ref(x), unit(n, j, dx))
	})))
	byCol := cl.in(matrix(m, n, cols, false))
	if byColsOnly {
		f.Body = l.in(byCol)
		return
	}
	// By rows: [sufrevpass f] at each unit cotangent, from one BOG.
	rw := &lets{ns: d.ns, p: p}
	dy := rw.bind("dy", ir.MkPrim(p, "ts_zero", ir.MkPrim(p, "$zerosOfShape", ref(shy), &ir.Dummy{P: p, T: base.Result})))
	pb := rw.bind("pb", ir.CallFunc(p, fwdPass, ref(x)))
	bog := rw.bind("bog", ir.MkGet(p, 2, ref(pb)))
	rows := rw.bind("rows", vectors(m, func(i *ir.Var) ir.Expr {
		return chosen(ir.CallFunc(p, revPass, unit(m, i, dy), ref(bog)))
	}))
	byRow := rw.in(matrix(m, n, rows, true))
	f.Body = l.in(ir.MkIf(p, ir.MkPrim(p, "lte", ref(n), ref(m)), byCol, byRow))
}

// needs returns [deriv base] for each deriv, or reports why f, which
// calls them, cannot be generated.
func (d *deriver) needs(f, base *ir.Func, p ir.Pos, derivs ...string) ([]*ir.Func, bool) {
	fs := make([]*ir.Func, len(derivs))
	for i, deriv := range derivs {
		g, err := d.need(deriv, base, p)
		if err != nil {
			d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
			return nil, false
		}
		fs[i] = g
	}
	return fs, true
}

// forwardSweep returns the function making a forward sweep of base at x
// along u, a tangent of the arguments at the positions wrt (nil: all),
// for f: a call of [fwd base I...], whose other arguments' tangents are
// structural zeros (nothing is computed from them), or for a derived
// function, which has no such derivation, of [fwd base] at u spread with
// zeros.
func (d *deriver) forwardSweep(f, base *ir.Func, wrt []int, p ir.Pos) (func(x, u ir.Expr) ir.Expr, bool) {
	if wrt != nil && (len(base.Name.Derivs) == 0 || ir.IsCL(base)) {
		fw, err := d.needWrt("fwd", base, wrt, p)
		if err != nil {
			d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
			return nil, false
		}
		return func(x, u ir.Expr) ir.Expr { return ir.CallFunc(p, fw, x, u) }, true
	}
	fs, ok := d.needs(f, base, p, "fwd")
	if !ok {
		return nil, false
	}
	return func(x, u ir.Expr) ir.Expr {
		return ir.CallFunc(p, fs[0], x, d.wrtSpread(p, wrt, x, u, d.zeroPart))
	}, true
}

// columns returns the positions wrt of the arguments, of a function
// taking arg, that a derivation [X g I...] differentiates (nil: all of
// them; [jac g I...]'s columns), and the function cutting a value of
// arg, or its gradient, down to those arguments' parts.
func (d *deriver) columns(wrt []int, arg *types.Type, p ir.Pos) ([]int, func(ir.Expr) ir.Expr) {
	if arg.Kind != types.Tuple {
		wrt = nil // the only position is 0
	}
	return wrt, func(e ir.Expr) ir.Expr {
		if wrt == nil {
			return e
		}
		return d.wrtParts(p, wrt, arg, e)
	}
}

// spreadTangent returns the tangent of x, whose type is a tuple, made of
// u, an atom holding the tangents of the fields at the positions wrt
// (one, or a tuple of them), and zeros elsewhere: a tuple written out.
func (d *deriver) spreadTangent(p ir.Pos, wrt []int, x, u ir.Expr) ir.Expr {
	parts := make([]ir.Expr, len(x.Type().Elems))
	for j := range parts {
		parts[j] = d.zeroPart(p, ir.MkGet(p, j+1, x))
	}
	for k, j := range wrt {
		parts[j] = ir.Copy(u, p)
		if len(wrt) > 1 {
			parts[j] = ir.MkGet(p, k+1, ir.Copy(u, p))
		}
	}
	return ir.MkTuple(p, parts...)
}

// wrtSpread returns, for the parts u of a value at the positions wrt of
// x's fields (one part, or a tuple of them), the value of x's type made
// of them and, at the other positions, other(field): for a tangent, the
// zeros (zeroPart). With wrt nil, u is the whole value.
func (d *deriver) wrtSpread(p ir.Pos, wrt []int, x, u ir.Expr, other func(p ir.Pos, field ir.Expr) ir.Expr) ir.Expr {
	if wrt == nil {
		return u
	}
	v := d.ns.FreshVar(p, "u", u.Type())
	parts := make([]ir.Expr, len(x.Type().Elems))
	for j := range parts {
		parts[j] = other(p, ir.MkGet(p, j+1, x))
	}
	for k, j := range wrt {
		parts[j] = ir.Ref(p, v)
		if len(wrt) > 1 {
			parts[j] = ir.MkGet(p, k+1, ir.Ref(p, v))
		}
	}
	return ir.MkLet(p, v, u, ir.MkTuple(p, parts...))
}

// zeroPart is the zero tangent of field.
func (d *deriver) zeroPart(p ir.Pos, field ir.Expr) ir.Expr {
	return ir.MkPrim(p, "ts_zero", field)
}

// floats returns the number of Floats in a value of type t whose shape
// is sh (language.md section 5), the length of its $flatten, computed
// from the sizes without making or reading the value: a constant for a
// type whose values all look alike.
func (d *deriver) floats(p ir.Pos, sh ir.Expr, t *types.Type) ir.Expr {
	if t.IsUniform() {
		return ir.Int(p, int64(uniformFloats(t)))
	}
	if !ir.IsAtom(sh) {
		// Bound once: the count of a ragged tensor reads it in a loop.
		v := d.ns.FreshVar(p, "sh", sh.Type())
		return ir.MkLet(p, v, sh, d.floats(p, ir.Ref(p, v), t))
	}
	switch t.Kind {
	case types.Tuple:
		var sum ir.Expr = ir.Int(p, 0)
		for i, e := range t.Elems {
			if k := d.floats(p, ir.MkGet(p, i+1, sh), e); !isZero(k) {
				sum = ir.MkPrim(p, "add", sum, k)
			}
		}
		return sum
	case types.Tensor:
		if t.Elem.IsUniform() {
			// sh is the tensor's size: an Integer, or a tuple of them.
			count := sh
			if t.Rank > 1 {
				count = ir.MkGet(p, 1, sh)
				for i := 2; i <= t.Rank; i++ {
					count = ir.MkPrim(p, "mul", count, ir.MkGet(p, i, sh))
				}
			}
			return ir.MkPrim(p, "mul", count, ir.Int(p, int64(uniformFloats(t.Elem))))
		}
		// sh is the tensor of the elements' shapes.
		ix := d.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		elem := ir.MkPrim(p, "index", ir.Ref(p, ix), sh)
		return ir.MkPrim(p, "sumbuild", ir.MkPrim(p, "size", sh), ir.MkLam(p, ix, d.floats(p, elem, t.Elem)))
	}
	return ir.Int(p, 0)
}

// uniformFloats is the number of Floats in a value of a uniform type.
func uniformFloats(t *types.Type) int {
	switch t.Kind {
	case types.Float:
		return 1
	case types.Tuple:
		n := 0
		for _, e := range t.Elems {
			n += uniformFloats(e)
		}
		return n
	}
	return 0
}

func isZero(e ir.Expr) bool {
	c, ok := e.(*ir.Const)
	return ok && c.Val == int64(0)
}
