package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/types"
)

// splitRows makes a loop over the elements of c rows at a time, each row
// computing once what it shares:
//
//	(build (mul c n) (lam (k : Integer)
//	  (let (i (div k c)) (let (e (f i)) (let (j (sub k (mul c i))) body)))))
//
// becomes
//
//	(let (rows (build (div (mul c n) c) (lam (q : Integer)
//	             (let (i q) (let (e (f i))
//	               (build c (lam (r : Integer)
//	                 (let (k (add (mul c q) r)) (let (j (sub k (mul c i))) body)))))))))
//	  (build (mul c n) (lam (k : Integer)
//	    (index (sub k (mul c (div k c))) (index (div k c) rows)))))
//
// when c is an integer constant (at least 2) and the loop's count is
// (mul c n) or a variable bound to it. Every (div k c) becomes q; a let of
// the body's chain (before any let with an effect) that then reads
// neither k nor a variable of a let left in the row's loop moves out to
// q's, where it runs once per row instead of once per element. It applies
// only if such a let runs a loop or calls a function: otherwise the rows
// cost more than they save. Each element is the same expression at the
// same k, so the values are the same bit for bit.
//
// Least-squares residuals are written this way, several coordinates of
// one point per row of a flat vector: GradBench's ht reads a skinned
// vertex for each of the 3 coordinates of a point, and gather, just
// before, computes that vertex (its tangent, in the Jacobian's sweeps)
// where it is read: three times per point, or once with the rows.
func splitRows(ctx *Context) error {
	eff := lower.ComputeEffects(ctx.Prog)
	ns := ctx.Prog.Names()
	forEachBody(ctx.Prog, func(f *ir.Func) {
		mults := multiples(f)
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			if y, ok := splitRowsAt(e, mults, eff, ns); ok {
				return y
			}
			return e
		})
	})
	return nil
}

// multiples returns the variables of f's body bound once (and nowhere
// else) to (mul c x) or (mul x c) with c an integer constant of at least
// 2, each with its c.
func multiples(f *ir.Func) map[string]int64 {
	binds := map[string]int{}
	for _, p := range f.Params {
		binds[p.Name]++
	}
	mults := map[string]int64{}
	ir.Inspect(f.Body, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Lam:
			binds[x.Param.Name]++
		case *ir.Let:
			for _, v := range x.Vars {
				binds[v.Name]++
			}
			if c, ok := factor(x.Rhs, nil); ok && !x.Pattern && len(x.Vars) == 1 {
				mults[x.Vars[0].Name] = c
			}
		}
		return true
	})
	for v := range mults {
		if binds[v] != 1 {
			delete(mults, v)
		}
	}
	return mults
}

// factor returns c if e is (mul c x) or (mul x c) with c an integer
// constant of at least 2, or a variable of mults.
func factor(e ir.Expr, mults map[string]int64) (int64, bool) {
	if v, ok := e.(*ir.Var); ok {
		c, ok := mults[v.Name]
		return c, ok
	}
	m, ok := e.(*ir.Call)
	if !ok || m.Prim == nil || m.Prim.Name != "mul" || len(m.Args) != 2 || m.T.Kind != types.Integer {
		return 0, false
	}
	for _, a := range m.Args {
		if k, ok := a.(*ir.Const); ok {
			if c, ok := k.Val.(int64); ok && c >= 2 {
				return c, true
			}
		}
	}
	return 0, false
}

// splitRowsAt rewrites e as splitRows does, if it applies.
func splitRowsAt(e ir.Expr, mults map[string]int64, eff lower.Effects, ns *ir.Names) (ir.Expr, bool) {
	b, ok := e.(*ir.Call)
	if !ok || b.Prim == nil || b.Prim.Name != "build" || len(b.Args) != 2 || b.Args[0].Type().Kind != types.Integer {
		return nil, false
	}
	m := b.Args[0]
	c, ok := factor(m, mults)
	if !ok || !plainCount(m) {
		return nil, false
	}
	lam, ok := b.Args[1].(*ir.Lam)
	if !ok {
		return nil, false
	}
	k := lam.Param
	if lower.Binds(lam.Body, k.Name) {
		return nil, false
	}
	for fv := range ir.FreeVars(m) {
		if lower.Binds(lam.Body, fv) {
			return nil, false
		}
	}
	p := b.P
	q := ns.FreshVar(p, "q", types.IntegerType)
	r := ns.FreshVar(p, "r", types.IntegerType)
	// (div k c) is q everywhere in the body.
	divK := func(x ir.Expr) ir.Expr {
		d, ok := x.(*ir.Call)
		if !ok || d.Prim == nil || d.Prim.Name != "div" || len(d.Args) != 2 || !isVar(d.Args[0], k.Name) {
			return x
		}
		if n, ok := d.Args[1].(*ir.Const); ok && n.Val == c {
			return ir.Ref(d.P, q)
		}
		return x
	}
	// The body's chain of lets, each let's value with q for (div k c).
	var out, in []*ir.Let
	rowDep := map[string]bool{k.Name: true} // what a let left in the row's loop binds
	costly := false
	tail := lam.Body
	effect := false
	inFree := map[string]bool{} // read by the lets left in the row's loop so far
	for {
		l, ok := tail.(*ir.Let)
		if !ok {
			break
		}
		x := &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: ir.Map(l.Rhs, divK), Of: l.Of}
		effect = effect || lower.HasEffect(x.Rhs, eff)
		if effect || readsAny(x.Rhs, rowDep) {
			for _, v := range x.Vars {
				rowDep[v.Name] = true
			}
			for fv := range ir.FreeVars(x.Rhs) {
				inFree[fv] = true
			}
			in = append(in, x)
		} else {
			for _, v := range x.Vars {
				if inFree[v.Name] {
					return nil, false // moved in front of a let reading another v
				}
			}
			costly = costly || runsWork(x.Rhs)
			out = append(out, x)
		}
		tail = l.Body
	}
	if !costly {
		return nil, false
	}
	tail = ir.Map(tail, divK)
	elem := lam.Body.Type()
	row := wrapLets(in, tail)
	if ir.Occurs(k.Name, row) {
		kq := ir.MkPrim(p, "add", ir.MkPrim(p, "mul", ir.Int(p, c), ir.Ref(p, q)), ir.Ref(p, r))
		row = ir.MkLet(p, k, kq, row)
	}
	inner := &ir.Call{P: p, T: types.VecOf(elem), Prim: b.Prim,
		Args: []ir.Expr{ir.Int(p, c), ir.MkLam(lam.P, r, row)}}
	// A negative count fails as the flat loop would, with its size.
	count := ir.MkIf(p, ir.MkPrim(p, "gte", ir.Copy(m, ir.Pos{}), ir.Int(p, 0)), rowCount(m, c), ir.Copy(m, ir.Pos{}))
	rowsT := types.VecOf(types.VecOf(elem))
	rows := ns.FreshVar(p, "rows", rowsT)
	outer := &ir.Call{P: p, T: rowsT, Prim: b.Prim,
		Args: []ir.Expr{count, ir.MkLam(lam.P, q, wrapLets(out, inner))}}
	// The flat vector: element k is element (k mod c) of row (k div c).
	k2 := ns.FreshVar(p, k.Name, types.IntegerType)
	div := func() ir.Expr { return ir.MkPrim(p, "div", ir.Ref(p, k2), ir.Int(p, c)) }
	mod := ir.MkPrim(p, "sub", ir.Ref(p, k2), ir.MkPrim(p, "mul", ir.Int(p, c), div()))
	flat := &ir.Call{P: p, T: b.T, Prim: b.Prim, Args: []ir.Expr{m,
		ir.MkLam(lam.P, k2, ir.MkPrim(p, "index", mod, ir.MkPrim(p, "index", div(), ir.Ref(p, rows))))}}
	return ir.MkLet(p, rows, outer, flat), true
}

// rowCount returns the number of rows of c elements in a loop over m
// elements, m a multiple of c: x if m is (mul c x) or (mul x c), else
// (div m c).
func rowCount(m ir.Expr, c int64) ir.Expr {
	if call, ok := m.(*ir.Call); ok {
		for i, a := range call.Args {
			if k, ok := a.(*ir.Const); ok && k.Val == c {
				return ir.Copy(call.Args[1-i], ir.Pos{})
			}
		}
	}
	return ir.MkPrim(m.Pos(), "div", ir.Copy(m, ir.Pos{}), ir.Int(m.Pos(), c))
}

// runsWork reports whether e runs a loop or calls a function.
func runsWork(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Lam:
			found = true
		case *ir.Call:
			if x.Fn != nil {
				found = true
			}
		}
		return !found
	})
	return found
}
