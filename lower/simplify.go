package lower

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Effects says which functions print (directly or through calls): their
// calls are kept even when their values are not used. Runtime errors are
// not effects here: an unused computation that would fail is removed
// with the rest of it, as in any lazy reading of the program.
type Effects map[*ir.Func]bool

// ComputeEffects computes Effects for a program.
func ComputeEffects(prog *ir.Program) Effects {
	eff := Effects{}
	for changed := true; changed; {
		changed = false
		for _, f := range prog.Funcs {
			if eff[f] {
				continue
			}
			if f.Kind == ir.EdefFunc || f.Body != nil && HasEffect(f.Body, eff) {
				eff[f] = true
				changed = true
			}
		}
	}
	return eff
}

// HasEffect reports whether evaluating e prints, or calls an edef (whose
// effects ksc cannot see).
func HasEffect(e ir.Expr, eff Effects) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok {
			if c.Prim != nil && (c.Prim.Name == "print" || c.Prim.Name == "$trace") {
				found = true
			}
			if c.Fn != nil && (eff[c.Fn] || c.Fn.Kind == ir.EdefFunc) {
				found = true
			}
		}
		return !found
	})
	return found
}

// A Simplifier applies the structural simplifications of the optimiser:
// dead lets, copy propagation, selecting a field of a tuple expression,
// splitting a let of a tuple pattern bound to a tuple, floating lets out of
// let right-hand sides, and fusing a vector into the loop that reads it
// (fuse.go). Steps counts the rewrites done.
type Simplifier struct {
	Eff   Effects
	Steps int
	// Names, if set, gives fresh names to the binders of a let floated
	// over code that binds the same names, so that floating never makes a
	// binder shadow another (ir.Program.NoShadow); without it such a let
	// is not floated.
	Names *ir.Names
}

// Simplify simplifies e to a fixpoint.
func (s *Simplifier) Simplify(e ir.Expr) ir.Expr {
	for {
		before := s.Steps
		e = ir.Map(e, s.Node)
		if s.Steps == before {
			return e
		}
	}
}

// Node simplifies one node whose children are simplified.
func (s *Simplifier) Node(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Get:
		if t, ok := e.X.(*ir.Tuple); ok {
			keep := true
			for i, x := range t.Elems {
				if i != e.I-1 && HasEffect(x, s.Eff) {
					keep = false
				}
			}
			if keep {
				s.Steps++
				return t.Elems[e.I-1]
			}
		}
	case *ir.Let:
		return s.let(e)
	case *ir.Call:
		// (p (let x = a in b)) for a primitive of one argument:
		// let x = a in (p b), so that laws about (p b) apply (sum of
		// build); (p (assert c b)) likewise.
		if e.Prim != nil && len(e.Args) == 1 && len(e.Prim.Lams) == 0 {
			switch a := e.Args[0].(type) {
			case *ir.Let:
				s.Steps++
				return &ir.Let{P: a.P, Vars: a.Vars, Pattern: a.Pattern, Rhs: a.Rhs, Of: a.Of,
					Body: &ir.Call{P: e.P, T: e.T, Prim: e.Prim, Args: []ir.Expr{a.Body}}}
			case *ir.Assert:
				s.Steps++
				return &ir.Assert{P: a.P, Cond: a.Cond, Msg: a.Msg,
					Body: &ir.Call{P: e.P, T: e.T, Prim: e.Prim, Args: []ir.Expr{a.Body}}}
			}
		}
	}
	return e
}

func (s *Simplifier) let(e *ir.Let) ir.Expr {
	// A let whose variables are unused and whose value has no effect.
	used := false
	for _, v := range e.Vars {
		if ir.Occurs(v.Name, e.Body) {
			used = true
		}
	}
	if !used && !HasEffect(e.Rhs, s.Eff) {
		s.Steps++
		return e.Body
	}
	// let (x y) = (if c a b) in body, with x unused: each branch yields
	// only the fields body reads, and what computed the others is dead.
	// Forward mode of a recursion pairs each level's value with its
	// tangent, and a caller that reads only the tangent ran the primal
	// recursion below every level (quadratic) until this dropped it.
	if iff, ok := e.Rhs.(*ir.If); ok && e.Pattern {
		var keep []int
		for i, v := range e.Vars {
			if ir.Occurs(v.Name, e.Body) {
				keep = append(keep, i)
			}
		}
		if len(keep) > 0 && len(keep) < len(e.Vars) {
			th, ok1 := project(iff.Then, keep, s.Eff)
			el, ok2 := project(iff.Else, keep, s.Eff)
			if ok1 && ok2 {
				s.Steps++
				vars := make([]*ir.Var, len(keep))
				for i, k := range keep {
					vars[i] = e.Vars[k]
				}
				return &ir.Let{P: e.P, Vars: vars, Pattern: len(vars) > 1,
					Rhs: ir.MkIf(iff.P, iff.Cond, th, el), Body: e.Body, Of: e.Of}
			}
		}
	}
	if body, ok := s.fuseBuild(e); ok {
		s.Steps++
		return body
	}
	// let x = a in x, and let (x y) = a in (tuple x y): a. A call whose
	// value a function returns so is in tail position (ir.TailCalls): a
	// tail recursion's forward mode, which takes the value and tangent of
	// the call below apart and puts them together again, becomes a loop.
	if etaLet(e) {
		s.Steps++
		return e.Rhs
	}
	// let x = y in body, with y an atom: substitute, unless a binder in
	// body would capture y.
	if !e.Pattern && ir.IsAtom(e.Rhs) && !e.Rhs.Type().Contains(types.LM) {
		if v, ok := e.Rhs.(*ir.Var); !ok || !Binds(e.Body, v.Name) {
			s.Steps++
			return ir.Subst(e.Body, map[string]ir.Expr{e.Vars[0].Name: e.Rhs})
		}
	}
	// let (a b) = (tuple x y) in body: one let per field, when no field
	// expression mentions or binds a pattern variable (y comes into a's
	// scope).
	if t, ok := e.Rhs.(*ir.Tuple); ok && e.Pattern {
		clash := false
		for _, x := range t.Elems {
			for _, v := range e.Vars {
				if ir.Occurs(v.Name, x) || Binds(x, v.Name) {
					clash = true
				}
			}
		}
		if !clash {
			s.Steps++
			body := e.Body
			for i := len(e.Vars) - 1; i >= 0; i-- {
				body = ir.MkLet(e.P, e.Vars[i], t.Elems[i], body)
			}
			return body
		}
	}
	// let v = (tuple x y) in body, x and y atoms: a part (get$1$2 v) in
	// body is x, and a pattern (let ((a b) v) ...) binds a to x, unless a
	// binder in body would capture it (or rebinds v).
	if t, ok := e.Rhs.(*ir.Tuple); ok && !e.Pattern && !Binds(e.Body, e.Vars[0].Name) {
		safe := true
		for _, x := range t.Elems {
			if !ir.IsAtom(x) {
				safe = false
			} else if v, ok := x.(*ir.Var); ok && Binds(e.Body, v.Name) {
				safe = false
			}
		}
		if safe {
			changed := false
			body := ir.Map(e.Body, func(x ir.Expr) ir.Expr {
				if g, ok := x.(*ir.Get); ok {
					if v, ok := g.X.(*ir.Var); ok && v.Name == e.Vars[0].Name {
						changed = true
						return ir.Copy(t.Elems[g.I-1], ir.Pos{})
					}
				}
				// (let ((a b) v) body): a and b are the atoms, so that
				// one the body does not read is seen dead.
				if l, ok := x.(*ir.Let); ok && l.Pattern && len(l.Vars) == len(t.Elems) {
					if v, ok := l.Rhs.(*ir.Var); ok && v.Name == e.Vars[0].Name {
						changed = true
						out := l.Body
						for i := len(l.Vars) - 1; i >= 0; i-- {
							out = ir.MkLet(l.P, l.Vars[i], ir.Copy(t.Elems[i], ir.Pos{}), out)
						}
						return out
					}
				}
				return x
			})
			if changed {
				s.Steps++
				return &ir.Let{P: e.P, Vars: e.Vars, Rhs: e.Rhs, Body: body, Of: e.Of}
			}
		}
	}
	// let v = (tuple a b) in body, v read only by its fields (get$k$n v):
	// one let per field, so that one never read is dead (forward mode
	// pairs a callee's argument tangents, a zero for one the callee
	// ignores among them).
	if t, ok := e.Rhs.(*ir.Tuple); ok && !e.Pattern && s.Names != nil && onlyFields(e.Body, e.Vars[0].Name) {
		s.Steps++
		vars := make([]*ir.Var, len(t.Elems))
		for i, x := range t.Elems {
			vars[i] = s.Names.FreshVar(x.Pos(), e.Vars[0].Name, x.Type())
		}
		name := e.Vars[0].Name
		body := ir.Map(e.Body, func(x ir.Expr) ir.Expr {
			if g, ok := x.(*ir.Get); ok && isVar(g.X, name) {
				return ir.Ref(g.P, vars[g.I-1])
			}
			return x
		})
		for i := len(vars) - 1; i >= 0; i-- {
			body = ir.MkLet(e.P, vars[i], t.Elems[i], body)
		}
		return body
	}
	// let x = (assert c e) in body: assert c (let x = e in body), which
	// checks c at the same point.
	if a, ok := e.Rhs.(*ir.Assert); ok {
		s.Steps++
		return &ir.Assert{P: a.P, Cond: a.Cond, Msg: a.Msg,
			Body: &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: a.Body, Body: e.Body, Of: e.Of}}
	}
	// let x = (let y = a in b) in body: float the inner let out when y is
	// not free in body, renaming y if body binds it.
	if inner, ok := e.Rhs.(*ir.Let); ok {
		free, bound := false, false
		for _, v := range inner.Vars {
			if ir.Occurs(v.Name, e.Body) {
				free = true
			}
			if Binds(e.Body, v.Name) {
				bound = true
			}
			for _, x := range e.Vars {
				if x.Name == v.Name {
					bound = true
				}
			}
		}
		if bound && s.Names != nil {
			inner = s.renameBinders(inner)
			bound = false
		}
		if !free && !bound {
			s.Steps++
			outer := &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: inner.Body, Body: e.Body, Of: e.Of}
			return &ir.Let{P: inner.P, Vars: inner.Vars, Pattern: inner.Pattern, Rhs: inner.Rhs, Body: outer, Of: inner.Of}
		}
	}
	return e
}

// onlyFields reports whether every occurrence of the variable name in e is
// the tuple of a (get$k$n name), and no binder in e rebinds it.
func onlyFields(e ir.Expr, name string) bool {
	if Binds(e, name) {
		return false
	}
	ok := true
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Get:
			if isVar(x.X, name) {
				return false // a field: fine, and not a bare use
			}
		case *ir.Var:
			if x.Name == name {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// project returns e, an expression whose value is a tuple, made to yield
// only the fields keep (ascending), or that field alone if there is one:
// through the lets, asserts and ifs around the value, to a tuple written
// out (whose dropped fields have no effect) or a variable. It reports
// false for a value of another form.
func project(e ir.Expr, keep []int, eff Effects) (ir.Expr, bool) {
	switch x := e.(type) {
	case *ir.Let:
		body, ok := project(x.Body, keep, eff)
		return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: x.Rhs, Body: body, Of: x.Of}, ok
	case *ir.Assert:
		body, ok := project(x.Body, keep, eff)
		return &ir.Assert{P: x.P, Cond: x.Cond, Body: body, Msg: x.Msg}, ok
	case *ir.If:
		th, ok1 := project(x.Then, keep, eff)
		el, ok2 := project(x.Else, keep, eff)
		return ir.MkIf(x.P, x.Cond, th, el), ok1 && ok2
	case *ir.Tuple:
		kept := map[int]bool{}
		for _, k := range keep {
			kept[k] = true
		}
		for i, y := range x.Elems {
			if !kept[i] && HasEffect(y, eff) {
				return e, false
			}
		}
		return pick(x.P, keep, func(k int) ir.Expr { return x.Elems[k] }), true
	case *ir.Var:
		return pick(x.P, keep, func(k int) ir.Expr { return ir.MkGet(x.P, k+1, x) }), true
	}
	return e, false
}

// pick returns field(k) for the one k of keep, or the tuple of them.
func pick(p ir.Pos, keep []int, field func(k int) ir.Expr) ir.Expr {
	if len(keep) == 1 {
		return field(keep[0])
	}
	elems := make([]ir.Expr, len(keep))
	for i, k := range keep {
		elems[i] = field(k)
	}
	return ir.MkTuple(p, elems...)
}

// etaLet reports whether a let's body is its variable, or the tuple of
// its pattern's variables in order, and its value a call of a function or
// an if (where a tail call may be). A loop's state stays taken apart by a
// pattern: that is the form the optimiser's loop passes read
// (optimise/deadstate.go).
func etaLet(e *ir.Let) bool {
	switch r := e.Rhs.(type) {
	case *ir.If:
	case *ir.Call:
		if r.Fn == nil {
			return false
		}
	default:
		return false
	}
	if !e.Pattern {
		v, ok := e.Body.(*ir.Var)
		return ok && len(e.Vars) == 1 && v.Name == e.Vars[0].Name
	}
	t, ok := e.Body.(*ir.Tuple)
	if !ok || len(t.Elems) != len(e.Vars) {
		return false
	}
	for i, x := range t.Elems {
		if v, ok := x.(*ir.Var); !ok || v.Name != e.Vars[i].Name {
			return false
		}
	}
	return true
}

// renameBinders returns the let with fresh names for its variables.
func (s *Simplifier) renameBinders(l *ir.Let) *ir.Let {
	vars := make([]*ir.Var, len(l.Vars))
	m := map[string]ir.Expr{}
	for i, v := range l.Vars {
		vars[i] = s.Names.FreshVar(v.P, v.Name, v.T)
		m[v.Name] = ir.Ref(v.P, vars[i])
	}
	return &ir.Let{P: l.P, Vars: vars, Pattern: l.Pattern, Rhs: l.Rhs, Body: ir.Subst(l.Body, m), Of: l.Of}
}

// Binds reports whether e binds name anywhere (a let or a lambda).
func Binds(e ir.Expr, name string) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Let:
			for _, v := range x.Vars {
				if v.Name == name {
					found = true
				}
			}
		case *ir.Lam:
			if x.Param.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}
