package optimise

import (
	"sort"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// A loop is a let binding the state of a loop by a pattern, in the form
// reverse mode makes it:
//
//	(let ((v1 ... vn) ($ifold m (tuple e1 ... en)
//	        (lam (si : ...) (let ((st i) si) (let ((a1 ... an) st)
//	          items... (tuple r1 ... rn))))))
//	  body)
type loop struct {
	let          *ir.Let
	call         *ir.Call
	init, tail   *ir.Tuple
	lam          *ir.Lam
	head, unpack *ir.Let
	items        []ir.Expr
}

// matchLoop returns e as a loop, if it is one.
func matchLoop(e ir.Expr) (*loop, bool) {
	l, ok := e.(*ir.Let)
	if !ok || !l.Pattern {
		return nil, false
	}
	c, ok := l.Rhs.(*ir.Call)
	if !ok || c.Prim == nil || (c.Prim.Name != "$ifold" && c.Prim.Name != "$ifoldr") {
		return nil, false
	}
	init, ok1 := c.Args[1].(*ir.Tuple)
	lam, ok2 := c.Args[2].(*ir.Lam)
	n := len(l.Vars)
	if !ok1 || !ok2 || len(init.Elems) != n {
		return nil, false
	}
	head, ok := lam.Body.(*ir.Let)
	if !ok || !head.Pattern || len(head.Vars) != 2 || !isVar(head.Rhs, lam.Param.Name) || ir.Occurs(lam.Param.Name, head.Body) {
		return nil, false
	}
	st := head.Vars[0]
	unpack, ok := head.Body.(*ir.Let)
	if !ok || !unpack.Pattern || len(unpack.Vars) != n || !isVar(unpack.Rhs, st.Name) || ir.Occurs(st.Name, unpack.Body) {
		return nil, false
	}
	items, tailExpr := ir.ChainItems(unpack.Body)
	tail, ok := tailExpr.(*ir.Tuple)
	if !ok || len(tail.Elems) != n {
		return nil, false
	}
	return &loop{let: l, call: c, init: init, tail: tail, lam: lam, head: head, unpack: unpack, items: items}, true
}

// taintItems adds to set the variables of items whose values depend on
// those of set, and reports whether an assert does. Through a loop, only
// the parts of its state that depend on set are (see loop.parts).
func taintItems(items []ir.Expr, set map[string]bool) (asserted bool) {
	for _, it := range items {
		switch it := it.(type) {
		case *ir.Let:
			if !ir.Mentions(it.Rhs, set) {
				continue
			}
			if lp, ok := matchLoop(it); ok {
				if parts, ok := lp.parts(set); ok {
					for q := range parts {
						set[it.Vars[q].Name] = true
					}
					continue
				}
			}
			for _, v := range it.Vars {
				set[v.Name] = true
			}
		case *ir.Assert:
			if ir.Mentions(it.Cond, set) {
				return true
			}
		}
	}
	return false
}

// parts returns the parts of the loop's final state that depend on the
// variables of set, when only its initial state does: those initialised
// from set, and those an iteration computes from those. It reports false
// if the count, the iteration's free variables or an assert depend on
// set (then every part may).
func (lp *loop) parts(set map[string]bool) (map[int]bool, bool) {
	if ir.Mentions(lp.call.Args[0], set) || ir.Mentions(lp.lam, set) {
		return nil, false
	}
	n := len(lp.init.Elems)
	edges := make([][]int, n) // part m of a state feeds parts edges[m] of the next
	for m := 0; m < n; m++ {
		s := map[string]bool{lp.unpack.Vars[m].Name: true}
		if taintItems(lp.items, s) {
			return nil, false
		}
		for q, r := range lp.tail.Elems {
			if ir.Mentions(r, s) {
				edges[m] = append(edges[m], q)
			}
		}
	}
	out := map[int]bool{}
	var todo []int
	for m, e := range lp.init.Elems {
		if ir.Mentions(e, set) {
			out[m] = true
			todo = append(todo, m)
		}
	}
	for len(todo) > 0 {
		m := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, q := range edges[m] {
			if !out[q] {
				out[q] = true
				todo = append(todo, q)
			}
		}
	}
	return out, true
}

// deadLoopState drops the parts of a loop's state that nothing reads:
// the parts K of a loop (see loop) are dead if its body mentions no vk of
// K and neither an assert of the items nor a part rj outside K depends on
// an ak of K. The loop then carries the other parts only, without the
// items that compute those of K. Reverse mode makes such loops: a
// gradient with respect to some arguments only ([rev f 0]) accumulates
// the others' parts too, which it then drops. (An index the dropped items
// would check is not checked: dead code goes, errors and all, as a dead
// let does.)
//
// An inner loop whose state is only partly computed from K stays, its
// parts from K initialised with ($dummy T): those parts are now dead in
// it, and the same rewrite drops them there, and with them the dummies.
// Other expressions are returned unchanged.
func deadLoopState(e ir.Expr) ir.Expr {
	lp, ok := matchLoop(e)
	if !ok || lp.let.Body == nil {
		return e
	}
	l, n := lp.let, len(lp.let.Vars)
	dead := map[int]bool{}
	for k, v := range l.Vars {
		if !ir.Occurs(v.Name, l.Body) {
			dead[k] = true
		}
	}
	// Keep a part another one needs, until none is left to keep.
	for changed := true; changed && len(dead) > 0; {
		changed = false
		for k := range dead {
			s := map[string]bool{lp.unpack.Vars[k].Name: true}
			needed := taintItems(lp.items, s)
			for j, r := range lp.tail.Elems {
				if !dead[j] && ir.Mentions(r, s) {
					needed = true
				}
			}
			if needed {
				delete(dead, k)
				changed = true
			}
		}
	}
	if len(dead) == 0 || len(dead) == n {
		return e // nothing to drop, or the whole loop (a dead let)
	}

	set := map[string]bool{}
	for k := range dead {
		set[lp.unpack.Vars[k].Name] = true
	}
	taintItems(lp.items, set)
	gone := map[string]*ir.Var{} // variables no longer bound
	for k := range dead {
		gone[lp.unpack.Vars[k].Name] = lp.unpack.Vars[k]
	}
	var kept []ir.Expr
	for _, it := range lp.items {
		if l, ok := it.(*ir.Let); ok && allIn(l.Vars, set) {
			for _, v := range l.Vars {
				gone[v.Name] = v
			}
			continue
		}
		kept = append(kept, it)
	}
	// A kept inner loop may still read a variable gone (see above).
	var dummies []ir.Expr
	for _, v := range sortedVars(gone) {
		for _, it := range kept {
			if occursItem(v.Name, it) {
				dummies = append(dummies, ir.MkLet(v.P, v, &ir.Dummy{P: v.P, T: v.T}, nil))
				break
			}
		}
	}
	kept = append(dummies, kept...)

	var inits, rs []ir.Expr
	var outer, inner []*ir.Var
	var ts []*types.Type
	for k := 0; k < n; k++ {
		if dead[k] {
			continue
		}
		inits = append(inits, lp.init.Elems[k])
		rs = append(rs, lp.tail.Elems[k])
		outer = append(outer, l.Vars[k])
		inner = append(inner, lp.unpack.Vars[k])
		ts = append(ts, lp.unpack.Vars[k].T)
	}
	p := lp.call.P
	st, si := lp.head.Vars[0], lp.lam.Param
	state := types.TupleOf(ts...)
	nst := &ir.Var{P: st.P, T: state, Name: st.Name}
	nsi := &ir.Var{P: si.P, T: types.TupleOf(state, lp.head.Vars[1].T), Name: si.Name}
	body := &ir.Let{P: lp.unpack.P, Vars: inner, Pattern: true, Rhs: ir.Ref(p, nst), Body: ir.WrapChain(kept, ir.MkTuple(lp.tail.P, rs...))}
	body = &ir.Let{P: lp.head.P, Vars: []*ir.Var{nst, lp.head.Vars[1]}, Pattern: true, Rhs: ir.Ref(p, nsi), Body: body}
	loopCall := ir.MkPrim(p, lp.call.Prim.Name, lp.call.Args[0], ir.MkTuple(lp.init.P, inits...), ir.MkLam(lp.lam.P, nsi, body))
	return &ir.Let{P: l.P, Vars: outer, Pattern: true, Rhs: loopCall, Body: l.Body, Of: l.Of}
}

// allIn reports whether every variable of vs is in set.
func allIn(vs []*ir.Var, set map[string]bool) bool {
	for _, v := range vs {
		if !set[v.Name] {
			return false
		}
	}
	return len(vs) > 0
}

// occursItem reports whether name occurs free in an item of a chain.
func occursItem(name string, it ir.Expr) bool {
	switch it := it.(type) {
	case *ir.Let:
		return ir.Occurs(name, it.Rhs)
	case *ir.Assert:
		return ir.Occurs(name, it.Cond)
	}
	return ir.Occurs(name, it)
}

// sortedVars returns the variables of m by name.
func sortedVars(m map[string]*ir.Var) []*ir.Var {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*ir.Var, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

// zeroParts rewrites the zero of a tuple x taken apart,
//
//	(let (z (ts_zero x)) (let ((a b) z) body))
//
// with z not free in body, to (let ((a b) (tuple (ts_zero x.1) (ts_zero
// x.2))) body), which the simplifier makes one let per part: so a part
// nothing reads (the accumulator of a gradient not asked for) is not made.
// x is a variable or a tuple of atoms, (ts_zero (tuple y s)), whose
// parts are then (ts_zero y) and (ts_zero s).
func zeroParts(e ir.Expr) ir.Expr {
	l, ok := e.(*ir.Let)
	if !ok || l.Pattern || len(l.Vars) != 1 {
		return e
	}
	c, ok := l.Rhs.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Name != "ts_zero" {
		return e
	}
	x := c.Args[0]
	pat, ok := l.Body.(*ir.Let)
	if !ok || x.Type().Kind != types.Tuple || !pat.Pattern || len(pat.Vars) != len(x.Type().Elems) ||
		!isVar(pat.Rhs, l.Vars[0].Name) || ir.Occurs(l.Vars[0].Name, pat.Body) {
		return e
	}
	parts := make([]ir.Expr, len(x.Type().Elems))
	switch x := x.(type) {
	case *ir.Var:
		for i := range parts {
			parts[i] = ir.MkPrim(c.P, "ts_zero", ir.MkGet(c.P, i+1, ir.Ref(c.P, x)))
		}
	case *ir.Tuple:
		for i, el := range x.Elems {
			if !ir.IsAtom(el) {
				return e
			}
			parts[i] = ir.MkPrim(c.P, "ts_zero", ir.Copy(el, ir.Pos{}))
		}
	default:
		return e
	}
	return &ir.Let{P: pat.P, Vars: pat.Vars, Pattern: true, Rhs: ir.MkTuple(c.P, parts...), Body: pat.Body, Of: pat.Of}
}
