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
//	(let (rows (build (if (gte (mul c n) 0) n (mul c n)) (lam (q : Integer)
//	             (let (i q) (let (e (f i))
//	               (build c (lam (r : Integer)
//	                 (let (k (add (mul c q) r)) (let (j (sub k (mul c i))) body)))))))))
//	  (build (mul c n) (lam (k : Integer)
//	    (index (sub k (mul c (div k c))) (index (div k c) rows)))))
//
// when c is an integer constant (at least 2) and the loop's count is
// (mul c n) or a variable bound to it (then (div m c) rows). Every
// (div k c) becomes q; a let of the body's chain that then reads neither
// k nor a variable of a let left in the row's loop moves out to q's,
// where it runs once per row instead of once per element (splitBody says
// which stay). It applies only if such a let runs a loop or calls a
// function: otherwise the rows cost more than they save. A sumbuild reads
// its terms from the rows the same way, adding the same values in the
// same order. A fold of derived code over k ($ifold, $ifoldr) becomes a
// fold over the rows of a fold over the row's elements, the state
// threaded through both in the same order:
//
//	($ifold (mul c n) s0 (lam (s_k : Tuple S Integer) (let ((s k) s_k) body)))
//
// becomes ($ifold n s0 (lam (s_q ...) (let ((s0' q) s_q) <the row's lets>
// ($ifold c s0' (lam (s_r ...) (let ((s r) s_r) (let (k ...) body'))))))).
// Each element is the same expression at the same k, so the values are
// the same bit for bit.
//
// Least-squares residuals are written this way, several coordinates of
// one point per row of a flat vector: GradBench's ht reads a skinned
// vertex for each of the 3 coordinates of a point, and gather, just
// before, computes that vertex (its tangent, in the Jacobian's sweeps)
// where it is read: three times per point, or once with the rows.
func splitRows(ctx *Context) error {
	eff := lower.ComputeEffects(ctx.Prog)
	ns := ctx.Prog.Names()
	upd := updatedParams(ctx.Prog)
	forEachBody(ctx.Prog, func(f *ir.Func) {
		mults := multiples(f)
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			if y, ok := splitRowsAt(e, mults, eff, upd, ns); ok {
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
func splitRowsAt(e ir.Expr, mults map[string]int64, eff lower.Effects, upd paramUpdates, ns *ir.Names) (ir.Expr, bool) {
	b, ok := e.(*ir.Call)
	if !ok || b.Prim == nil || len(b.Args) == 0 || b.Args[0].Type().Kind != types.Integer {
		return nil, false
	}
	switch {
	case (b.Prim.Name == "build" || b.Prim.Name == "sumbuild") && len(b.Args) == 2:
	case (b.Prim.Name == "$ifold" || b.Prim.Name == "$ifoldr") && len(b.Args) == 3:
	default:
		return nil, false
	}
	m := b.Args[0]
	c, ok := factor(m, mults)
	if !ok || !plainCount(m) {
		return nil, false
	}
	lam, ok := b.Args[len(b.Args)-1].(*ir.Lam)
	if !ok {
		return nil, false
	}
	for fv := range ir.FreeVars(m) {
		if lower.Binds(lam.Body, fv) {
			return nil, false
		}
	}
	p := b.P
	// A negative count fails as the flat loop would, with its size (a
	// fold runs no step either way).
	count := ir.MkIf(p, ir.MkPrim(p, "gte", ir.Copy(m, ir.Pos{}), ir.Int(p, 0)), rowCount(m, c), ir.Copy(m, ir.Pos{}))
	if b.Prim.Name != "$ifold" && b.Prim.Name != "$ifoldr" {
		sp, ok := splitBody(lam.Body, lam.Param, nil, c, eff, upd, ns)
		if !ok {
			return nil, false
		}
		inner := ir.MkPrim(p, "build", ir.Int(p, c), ir.MkLam(lam.P, sp.r, sp.row(p)))
		outer := ir.MkPrim(p, "build", count, ir.MkLam(lam.P, sp.q, wrapLets(sp.out, inner)))
		rows := ns.FreshVar(p, "rows", outer.T)
		// The flat loop reads element k as element (k mod c) of row
		// (k div c): a sum adds the same values in the same order.
		k := ns.FreshVar(p, lam.Param.Name, types.IntegerType)
		div := func() ir.Expr { return ir.MkPrim(p, "div", ir.Ref(p, k), ir.Int(p, c)) }
		mod := ir.MkPrim(p, "sub", ir.Ref(p, k), ir.MkPrim(p, "mul", ir.Int(p, c), div()))
		flat := &ir.Call{P: p, T: b.T, Prim: b.Prim, Args: []ir.Expr{m,
			ir.MkLam(lam.P, k, ir.MkPrim(p, "index", mod, ir.MkPrim(p, "index", div(), ir.Ref(p, rows))))}}
		return ir.MkLet(p, rows, outer, flat), true
	}
	// A fold's step takes (state, k) apart first: (let ((st k) s_k) ...).
	// The steps run in the same order, c to a row, the state threaded
	// through both folds.
	take, ok := lam.Body.(*ir.Let)
	if !ok || !take.Pattern || len(take.Vars) != 2 || !isVar(take.Rhs, lam.Param.Name) || take.Vars[1].T.Kind != types.Integer {
		return nil, false
	}
	st, k := take.Vars[0], take.Vars[1]
	sp, ok := splitBody(take.Body, k, st, c, eff, upd, ns)
	if !ok || ir.Occurs(lam.Param.Name, take.Body) {
		return nil, false
	}
	sq := ns.FreshVar(p, lam.Param.Name, lam.Param.T)
	sr := ns.FreshVar(p, lam.Param.Name, lam.Param.T)
	st0 := ns.FreshVar(p, st.Name, st.T)
	innerStep := ir.MkLam(lam.P, sr, &ir.Let{P: take.P, Vars: []*ir.Var{st, sp.r}, Pattern: true, Rhs: ir.Ref(p, sr), Body: sp.row(p)})
	inner := &ir.Call{P: p, T: b.T, Prim: b.Prim, Args: []ir.Expr{ir.Int(p, c), ir.Ref(p, st0), innerStep}}
	outerStep := ir.MkLam(lam.P, sq, &ir.Let{P: take.P, Vars: []*ir.Var{st0, sp.q}, Pattern: true, Rhs: ir.Ref(p, sq),
		Body: wrapLets(sp.out, inner)})
	return &ir.Call{P: p, T: b.T, Prim: b.Prim, Args: []ir.Expr{count, b.Args[1], outerStep}}, true
}

// A rowSplit is a loop's body over element k taken apart for rows of c:
// the lets that run once per row q (out, with q for (div k c)), and the
// rest of the body, run for each element r of the row (in, then tail).
type rowSplit struct {
	c       int64
	k, q, r *ir.Var
	out, in []*ir.Let
	tail    ir.Expr
}

// row returns the part of the body run for each element r of row q,
// with k bound to (add (mul c q) r) if it reads k.
func (sp *rowSplit) row(p ir.Pos) ir.Expr {
	row := wrapLets(sp.in, sp.tail)
	if ir.Occurs(sp.k.Name, row) {
		kq := ir.MkPrim(p, "add", ir.MkPrim(p, "mul", ir.Int(p, sp.c), ir.Ref(p, sp.q)), ir.Ref(p, sp.r))
		row = ir.MkLet(p, sp.k, kq, row)
	}
	return row
}

// splitBody takes apart a loop's body over element k (st, if not nil,
// the state a fold's step updates), or reports false if no let of its
// chain that runs a loop or calls a function can run once per row.
//
// A let stays in the element's part if it reads k (other than by
// (div k c)), st or a variable of a let that stays, has an effect or
// follows one, or binds a value that the element's part updates in
// place ($addAt and the other in-place primitives of derived code): run
// once per row, the second element would see the first one's update.
func splitBody(body ir.Expr, k, st *ir.Var, c int64, eff lower.Effects, upd paramUpdates, ns *ir.Names) (*rowSplit, bool) {
	if lower.Binds(body, k.Name) || (st != nil && lower.Binds(body, st.Name)) {
		return nil, false
	}
	p := body.Pos()
	sp := &rowSplit{c: c, k: k, q: ns.FreshVar(p, "q", types.IntegerType), r: ns.FreshVar(p, "r", types.IntegerType)}
	// (div k c) is q everywhere in the body.
	divK := func(x ir.Expr) ir.Expr {
		d, ok := x.(*ir.Call)
		if !ok || d.Prim == nil || d.Prim.Name != "div" || len(d.Args) != 2 || !isVar(d.Args[0], k.Name) {
			return x
		}
		if n, ok := d.Args[1].(*ir.Const); ok && n.Val == c {
			return ir.Ref(d.P, sp.q)
		}
		return x
	}
	var chain []*ir.Let
	tail := body
	for {
		l, ok := tail.(*ir.Let)
		if !ok {
			break
		}
		chain = append(chain, &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: ir.Map(l.Rhs, divK), Of: l.Of})
		tail = l.Body
	}
	sp.tail = ir.Map(tail, divK)
	stay := map[string]bool{} // variables of lets that must stay, found updated in place
	for {
		sp.out, sp.in = nil, nil
		rowDep := map[string]bool{k.Name: true}
		if st != nil {
			rowDep[st.Name] = true
		}
		inFree := map[string]bool{} // read by the lets left in the element's part so far
		costly, effect := false, false
		for _, x := range chain {
			effect = effect || lower.HasEffect(x.Rhs, eff)
			if effect || readsAny(x.Rhs, rowDep) || bindsAny(x, stay) {
				for _, v := range x.Vars {
					rowDep[v.Name] = true
				}
				for fv := range ir.FreeVars(x.Rhs) {
					inFree[fv] = true
				}
				sp.in = append(sp.in, x)
				continue
			}
			for _, v := range x.Vars {
				if inFree[v.Name] {
					return nil, false // moved in front of a let reading another v
				}
			}
			costly = costly || !plainCount(x.Rhs) // runs a loop or calls a function
			sp.out = append(sp.out, x)
		}
		if !costly {
			return nil, false
		}
		updated := map[string]bool{}
		for _, l := range sp.out {
			if updatedInPlace(l.Vars, wrapLets(sp.in, sp.tail), upd, st != nil) {
				for _, v := range l.Vars {
					updated[v.Name] = true
				}
			}
		}
		if len(updated) == 0 {
			return sp, true
		}
		for v := range updated {
			stay[v] = true
		}
	}
}

// bindsAny reports whether the let l binds a variable of set.
func bindsAny(l *ir.Let, set map[string]bool) bool {
	for _, v := range l.Vars {
		if set[v.Name] {
			return true
		}
	}
	return false
}

// updatedInPlace reports whether e may update a value of vars in place:
// a value holding a tensor that may share its storage (mayShare) reaches
// the first argument of an in-place primitive ($addAt and the others of
// derived code), the value $setAt stores, or an argument of a call that
// the function may update (upd), through lets, projections, calls and
// the initial states of loops; or, if e is a fold's step (state), e's
// value, the next step's state.
func updatedInPlace(vars []*ir.Var, e ir.Expr, upd paramUpdates, state bool) bool {
	alias := map[string]bool{}
	for _, v := range vars {
		if v.T.Contains(types.Tensor) {
			alias[v.Name] = true
		}
	}
	if len(alias) == 0 {
		return false
	}
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Let:
			if mayShare(x.Rhs, alias) {
				for _, v := range x.Vars {
					alias[v.Name] = true
				}
			}
		case *ir.Call:
			if x.Prim != nil && x.Prim.InPlace && len(x.Args) > 0 && mayShare(x.Args[0], alias) {
				found = true
			}
			// ($setAt acc i v) stores v where a later update of acc in
			// place reaches it.
			if x.Prim != nil && x.Prim.Name == "$setAt" && len(x.Args) == 3 && mayShare(x.Args[2], alias) {
				found = true
			}
			if x.Fn != nil && len(upd[x.Fn]) > 0 {
				for i, a := range x.Args {
					if (upd[x.Fn][i] || len(x.Args) != len(x.Fn.Params)) && mayShare(a, alias) {
						found = true
					}
				}
			}
			for _, a := range x.Args {
				if lam, ok := a.(*ir.Lam); ok && mayShareArg(x, alias) {
					alias[lam.Param.Name] = true
				}
			}
		}
		return !found
	})
	// A fold's step hands its value on as the next step's state, which
	// that step may update in place.
	return found || state && mayShare(e, alias)
}

// paramUpdates holds, for each function, the parameters (by position)
// whose values it may update in place: the accumulators of derived code.
type paramUpdates map[*ir.Func]map[int]bool

// updatedParams finds the parameters each function of prog may update in
// place, through its calls (to a fixpoint).
func updatedParams(prog *ir.Program) paramUpdates {
	upd := paramUpdates{}
	for changed := true; changed; {
		changed = false
		for _, f := range prog.Funcs {
			if f.Body == nil {
				continue
			}
			for i, p := range f.Params {
				if upd[f][i] || !updatedInPlace([]*ir.Var{p}, f.Body, upd, false) {
					continue
				}
				if upd[f] == nil {
					upd[f] = map[int]bool{}
				}
				upd[f][i] = true
				changed = true
			}
		}
	}
	return upd
}

// mayShare reports whether the value of e may hold storage of a variable
// of alias: the variable itself, a part or element of it, or a value
// holding a tensor computed from one by a call or a loop (which may
// return it). A value holding no tensor shares nothing.
func mayShare(e ir.Expr, alias map[string]bool) bool {
	if !e.Type().Contains(types.Tensor) {
		return false
	}
	switch e := e.(type) {
	case *ir.Var:
		return alias[e.Name]
	case *ir.Get:
		return mayShare(e.X, alias)
	case *ir.Tuple:
		for _, x := range e.Elems {
			if mayShare(x, alias) {
				return true
			}
		}
		return false
	case *ir.If:
		return mayShare(e.Then, alias) || mayShare(e.Else, alias)
	case *ir.Let:
		return mayShare(e.Rhs, alias) || mayShare(e.Body, alias)
	case *ir.Assert:
		return mayShare(e.Body, alias)
	case *ir.Lam:
		return mayShare(e.Body, alias)
	case *ir.Call:
		return mayShareArg(e, alias)
	}
	return false
}

// mayShareArg reports whether an argument of c, or the body of a lambda
// argument, may hold storage of a variable of alias.
func mayShareArg(c *ir.Call, alias map[string]bool) bool {
	for _, a := range c.Args {
		if mayShare(a, alias) {
			return true
		}
	}
	return false
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
