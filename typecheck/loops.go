package typecheck

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// The loops of seed 002, Figures 16-19, are checked here and written as
// the forms every later stage already has (language.md section 6.1):
//
//	(nTimes n s0 (lam (s : S) e))          s0, then e applied n times
//	(ccl n s0 (lam (is : Tuple Integer S) e))  the same with the step's
//	                                       index, counting down from n-1
//
// (rewrite gives the checker of each, and of buildFromSparseTupled).
// nTimes is a fold over the indices 0 .. n-1, so its derivatives are the
// fold's, whose split reverse mode records one BOG per iteration. ccl's
// iterations are declared to commute: where its step adds to the state a
// value that does not read it, (add s e) or (ts_add s e), the loop is s0 plus the sum of
// the e over the indices (a sumbuild, summed in any order), whose reverse
// pass needs no record of the states; any other step is run as nTimes
// runs its own, counting down: its forward mode is that fold's, and its
// reverse pass a positioned error suggesting nTimes (ir.Program.NoReverse).
func (c *checker) rewrite(name string) func(e *syntax.Call, sc *scope) ir.Expr {
	switch name {
	case tupledName:
		return c.sparseTupled
	case "nTimes":
		return c.nTimes
	case "ccl":
		return c.ccl
	}
	return nil
}

// rewritten lists the forms of the language that the checker writes as
// other forms (rewrite gives the checker of each): like primitives, they
// cannot be redefined, take lambdas, and are offered in hints.
var rewritten = []string{tupledName, "nTimes", "ccl"}

// isRewritten reports whether name is one of the forms in rewritten.
func isRewritten(name string) bool {
	for _, n := range rewritten {
		if n == name {
			return true
		}
	}
	return false
}

// loopArgs checks the count, the initial state and the lambda of a loop
// form whose lambda takes param (given the state's type) and returns the
// state; it reports the errors and returns ok false if any.
func (c *checker) loopArgs(e *syntax.Call, sc *scope, param func(s *types.Type) *types.Type, shape string) (n, s0 ir.Expr, lam *ir.Lam, ok bool) {
	name := e.Fn.Base
	if len(e.Args) != 3 {
		c.errorf(e.Fn.P, "%s takes 3 arguments, a count, an initial state and %s, got %d", name, shape, len(e.Args))
		return nil, nil, nil, false
	}
	n, s0 = c.expr(e.Args[0], sc), c.expr(e.Args[1], sc)
	if n == nil || s0 == nil {
		return nil, nil, nil, false
	}
	if !n.Type().Equal(types.IntegerType) {
		c.errorf(e.Args[0].Pos(), "%s: the count must be an Integer, not %s", name, n.Type())
		return nil, nil, nil, false
	}
	st := s0.Type()
	l, written := e.Args[2].(*syntax.Lam)
	if !written {
		c.errorf(e.Args[2].Pos(), "argument 3 of %s must be %s", name, shape)
		return nil, nil, nil, false
	}
	want := param(st)
	if !l.Param.Type.T.Equal(want) {
		c.errorf(l.Param.Type.P, "%s: the lambda must take %s (the state is %s), not %s", name, want, st, l.Param.Type.T)
		return nil, nil, nil, false
	}
	v := &ir.Var{P: l.Param.P, T: want, Name: l.Param.Name}
	body := c.expr(l.Body, sc.push(v))
	if body == nil {
		return nil, nil, nil, false
	}
	if !body.Type().Equal(st) {
		c.errorf(l.Body.Pos(), "%s: the lambda must return the state, %s, not %s", name, st, body.Type())
		return nil, nil, nil, false
	}
	return n, s0, &ir.Lam{P: l.Lparen, Param: v, Body: body}, true
}

// nTimes checks (nTimes n s0 (lam (s : S) e)) and returns
//
//	(let (n' n)
//	  (assert (gte n' 0)
//	    (fold (lam (si : Tuple S Integer) (let (s (get$1$2 si)) e)) s0
//	          (build n' (lam (k : Integer) k)))))
func (c *checker) nTimes(e *syntax.Call, sc *scope) ir.Expr {
	n, s0, lam, ok := c.loopArgs(e, sc, func(s *types.Type) *types.Type { return s },
		"a lambda from the state to the state, (lam (s : S) e)")
	if !ok {
		return nil
	}
	p := e.Lparen
	st := s0.Type()
	nv, k := c.loopVars(p, sc)
	si := c.fresh.FreshVar(p, "si", types.TupleOf(st, types.IntegerType))
	step := ir.MkLam(p, si, ir.MkLet(p, lam.Param, ir.MkGet(p, 1, ir.Ref(p, si)), lam.Body))
	idx := ir.MkPrim(p, "build", ir.Ref(p, nv), ir.MkLam(p, k, ir.Ref(p, k)))
	return counted(p, "nTimes", nv, n, ir.MkPrim(p, "fold", step, s0, idx))
}

// ccl checks (ccl n s0 (lam (is : Tuple Integer S) e)): a step that adds
// to the state, (add s e) with e not reading s, becomes
//
//	(let (n' n) (s0' s0)
//	  (assert (gte n' 0)
//	    (if (eq n' 0) s0' (add s0' (sumbuild n' (lam (k : Integer)
//	      (let (is (tuple (sub (sub n' 1) k) s0')) e)))))))
//
// and any other the fold of nTimes over the indices n-1 down to 0.
func (c *checker) ccl(e *syntax.Call, sc *scope) ir.Expr {
	n, s0, lam, ok := c.loopArgs(e, sc, func(s *types.Type) *types.Type { return types.TupleOf(types.IntegerType, s) },
		"a lambda from the index and the state to the state, (lam (is : Tuple Integer S) e)")
	if !ok {
		return nil
	}
	p := e.Lparen
	st := s0.Type()
	nv, k := c.loopVars(p, sc)
	// The index of the k-th step, counting down.
	down := ir.MkPrim(p, "sub", ir.MkPrim(p, "sub", ir.Ref(p, nv), ir.Int(p, 1)), ir.Ref(p, k))
	if sum, add := additive(lam); sum != nil {
		s0v := c.fresh.FreshVar(p, "s0", st)
		body := ir.MkLet(p, lam.Param, ir.MkTuple(p, down, ir.Ref(p, s0v)), sum)
		total := ir.MkPrim(p, "sumbuild", ir.Ref(p, nv), ir.MkLam(p, k, body))
		plus := &ir.Call{P: add.P, T: add.T, Prim: add.Prim, Args: []ir.Expr{ir.Ref(p, s0v), total}}
		zero := ir.MkPrim(p, "eq", ir.Ref(p, nv), ir.Int(p, 0))
		return ir.MkLet(p, s0v, s0, counted(p, "ccl", nv, n, ir.MkIf(p, zero, ir.Ref(p, s0v), plus)))
	}
	if c.prog.NoReverse == nil {
		c.prog.NoReverse = map[ir.Pos]string{}
	}
	c.prog.NoReverse[p] = "ksc cannot make the reverse pass of this ccl: its step reads the state, so ksc cannot show " +
		"that its reverse iterations commute; write it with nTimes, whose reverse pass records each state"
	si := c.fresh.FreshVar(p, "si", types.TupleOf(st, types.IntegerType))
	step := ir.MkLam(p, si, ir.MkLet(p, lam.Param,
		ir.MkTuple(p, ir.MkGet(p, 2, ir.Ref(p, si)), ir.MkGet(p, 1, ir.Ref(p, si))), lam.Body))
	idx := ir.MkPrim(p, "build", ir.Ref(p, nv), ir.MkLam(p, k, down))
	return counted(p, "ccl", nv, n, ir.MkPrim(p, "fold", step, s0, idx))
}

// loopVars returns fresh variables for a loop form's count and index,
// named apart from the names in scope.
func (c *checker) loopVars(p ir.Pos, sc *scope) (n, k *ir.Var) {
	c.takeScope(sc)
	return c.fresh.FreshVar(p, "n", types.IntegerType), c.fresh.FreshVar(p, "k", types.IntegerType)
}

// counted returns (let (nv n) (assert (gte nv 0) body)): the count of a
// loop form, which must not be negative (the seed leaves it undefined).
func counted(p ir.Pos, form string, nv *ir.Var, n, body ir.Expr) ir.Expr {
	check := &ir.Assert{P: p, Cond: ir.MkPrim(p, "gte", ir.Ref(p, nv), ir.Int(p, 0)), Body: body,
		Msg: form + ": the count is negative"}
	return ir.MkLet(p, nv, n, check)
}

// additive returns, for the step of a ccl that adds to the state a value
// not reading it, the step's body with that value in place of the sum,
// and the addition; else nil. The step is (lam (is : Tuple Integer S)
// ...), its body lets (none reading the state) ending in (add s e),
// (add e s) or (ts_add s e), where s is the state, bound by (let ((i s) is) ...) or
// (get$2$2 is), and e does not read it.
func additive(lam *ir.Lam) (ir.Expr, *ir.Call) {
	state := map[string]bool{} // the names the state is bound to
	items, tail := ir.ChainItems(lam.Body)
	var kept []ir.Expr
	// An expression reads the state if it mentions a name bound to it, or
	// the step's parameter other than as (get$1$2 is), its index.
	reads := func(e ir.Expr) bool {
		if ir.Mentions(e, state) {
			return true
		}
		other := false
		var walk func(x ir.Expr)
		walk = func(x ir.Expr) {
			if g, ok := x.(*ir.Get); ok && g.I == 1 {
				if v, ok := g.X.(*ir.Var); ok && v.Name == lam.Param.Name {
					return
				}
			}
			if v, ok := x.(*ir.Var); ok && v.Name == lam.Param.Name {
				other = true
			}
			ir.MapChildren(x, func(y ir.Expr) ir.Expr { walk(y); return y })
		}
		walk(e)
		return other
	}
	for _, it := range items {
		l, isLet := it.(*ir.Let)
		if !isLet {
			if reads(it.(*ir.Assert).Cond) {
				return nil, nil
			}
			kept = append(kept, it)
			continue
		}
		switch r := l.Rhs.(type) {
		case *ir.Var:
			if r.Name == lam.Param.Name && l.Pattern && len(l.Vars) == 2 {
				state[l.Vars[1].Name] = true
				kept = append(kept, &ir.Let{P: l.P, Vars: []*ir.Var{l.Vars[0]}, Rhs: ir.MkGet(l.P, 1, r)})
				continue
			}
		case *ir.Get:
			if v, ok := r.X.(*ir.Var); ok && v.Name == lam.Param.Name && r.I == 2 && !l.Pattern {
				state[l.Vars[0].Name] = true
				continue
			}
		}
		if reads(l.Rhs) {
			return nil, nil
		}
		for _, v := range l.Vars {
			delete(state, v.Name) // a name rebound to something else
		}
		kept = append(kept, l)
	}
	add, ok := tail.(*ir.Call)
	if !ok || add.Prim == nil || add.Prim.Name != "add" && add.Prim.Name != "ts_add" || len(add.Args) != 2 {
		return nil, nil
	}
	// The state: a name bound to it, or (get$2$2 is) itself.
	isState := func(e ir.Expr) bool {
		switch e := e.(type) {
		case *ir.Var:
			return state[e.Name]
		case *ir.Get:
			v, ok := e.X.(*ir.Var)
			return ok && v.Name == lam.Param.Name && e.I == 2
		}
		return false
	}
	for i, a := range add.Args {
		if i == 1 && add.Prim.Name == "ts_add" {
			break // (ts_add value tangent): the state comes first
		}
		if isState(a) && !reads(add.Args[1-i]) {
			return ir.WrapChain(kept, add.Args[1-i]), add
		}
	}
	return nil, nil
}

// takeScope keeps the names in scope out of the checker's fresh names, so
// that a binder it writes around user code captures none of them (the
// step's parameter, bound by the rewrite itself, apart).
func (c *checker) takeScope(sc *scope) {
	for _, n := range sc.names() {
		c.fresh.Take(n)
	}
}
