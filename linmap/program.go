package linmap

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Forward returns m, a linear map (LM S T) that may be a let-program,
// applied to t, a tangent of S: an expression of the tangent type of T
// with no linear map left. Every linear-map variable of the program
// becomes a variable holding the tangent it maps t to.
func Forward(m, t ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	defer catch(&err)
	f := &fwd{sem: sem{ns: ns, res: res}, env: map[string]ir.Expr{}}
	b := &binder{ns: ns}
	f.t = b.atom(t)
	return b.wrap(f.conv(m)), nil
}

type fwd struct {
	sem
	t   ir.Expr
	env map[string]ir.Expr // linear-map variable -> its tangent
}

// convType maps a type holding linear maps to the type of their tangents.
func convType(t *types.Type) *types.Type {
	switch t.Kind {
	case types.LM:
		return tangent(t.To)
	case types.Tuple:
		elems := make([]*types.Type, len(t.Elems))
		for i, e := range t.Elems {
			elems[i] = convType(e)
		}
		return types.TupleOf(elems...)
	}
	return t
}

// conv converts an expression whose type may hold linear maps.
func (f *fwd) conv(e ir.Expr) ir.Expr {
	if !e.Type().Contains(types.LM) {
		return e
	}
	if !HasLMVar(e) && e.Type().Kind == types.LM {
		return f.ap(e, f.t)
	}
	p := e.Pos()
	switch e := e.(type) {
	case *ir.Var:
		if t, ok := f.env[e.Name]; ok {
			return ir.Copy(t, p)
		}
		fail(p, "internal: linear-map variable %s is not bound in the program", e.Name)
	case *ir.Let:
		if !e.Rhs.Type().Contains(types.LM) {
			return &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: e.Rhs, Body: f.conv(e.Body)}
		}
		rhs := f.conv(e.Rhs)
		vars := make([]*ir.Var, len(e.Vars))
		for i, v := range e.Vars {
			vars[i] = f.ns.FreshVar(v.P, "t"+v.Name, convType(v.T))
			f.env[v.Name] = ir.Ref(v.P, vars[i])
		}
		return &ir.Let{P: e.P, Vars: vars, Pattern: e.Pattern, Rhs: rhs, Body: f.conv(e.Body)}
	case *ir.If:
		return ir.MkIf(e.P, e.Cond, f.conv(e.Then), f.conv(e.Else))
	case *ir.Assert:
		return &ir.Assert{P: e.P, Cond: e.Cond, Body: f.conv(e.Body), Msg: e.Msg}
	case *ir.Tuple:
		elems := make([]ir.Expr, len(e.Elems))
		for i, x := range e.Elems {
			elems[i] = f.conv(x)
		}
		return ir.MkTuple(e.P, elems...)
	case *ir.Get:
		return ir.MkGet(e.P, e.I, f.conv(e.X))
	case *ir.Call:
		if e.Prim == nil || !e.Prim.LM {
			break
		}
		a := e.Args
		switch e.Prim.Name {
		case "lmCompose":
			if HasLMVar(a[0]) {
				fail(p, "ksc cannot apply a composition whose left map depends on a linear-map variable")
			}
			b := &binder{ns: f.ns}
			inner := b.atom(f.conv(a[1]))
			return b.wrap(f.ap(a[0], inner))
		case "lmAdd":
			return ir.MkPrim(p, "ts_add", f.conv(a[0]), f.conv(a[1]))
		case "lmVCat":
			elems := make([]ir.Expr, len(a))
			for i, x := range a {
				elems[i] = f.conv(x)
			}
			return ir.MkTuple(p, elems...)
		case "lmBuild", "lmSumBuild":
			lam := a[1].(*ir.Lam)
			op := "build"
			if e.Prim.Name == "lmSumBuild" {
				op = "sumbuild"
			}
			return ir.MkPrim(p, op, a[0], ir.MkLam(lam.P, lam.Param, f.conv(lam.Body)))
		}
	}
	fail(p, "ksc cannot apply %s to a tangent here", ir.FormatExpr(e))
	return nil
}

// Reverse returns acc + (r reverse-applied to m), where m is a linear map
// (LM S T) that may be a let-program, r a cotangent of T and acc a
// cotangent of S that is not used again (it is updated in place). The
// primal lets of the program run first, in order; then its linear lets
// run backwards, each adding its contributions into the accumulators of
// the variables it mentions.
func Reverse(m, r, acc ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	defer catch(&err)
	rv := &rev{sem: sem{ns: ns, res: res}, slots: map[string]*slot{}}
	rv.blk = &block{}
	rr := rv.blk.atom(ns, r)
	rv.root = &slot{cur: rv.blk.atom(ns, acc)}
	rv.program(m, rr)
	return rv.blk.wrap(rv.root.cur), nil
}

// A slot is the accumulator of one linear-map variable's cotangent.
type slot struct {
	cur ir.Expr // the current value (an atom), or nil before the first contribution
	of  *ir.Var // the primal variable whose tangent map it is, if known
	typ *types.Type
}

// A block is a list of lets and asserts built in order, wrapped around a
// final expression at the end.
type block struct {
	items []ir.Expr // *ir.Let with a nil Body, or *ir.Assert with a nil Body
}

func (b *block) let(l *ir.Let) { b.items = append(b.items, l) }

// atom binds e to a fresh variable unless it is an atom.
func (b *block) atom(ns *ir.Names, e ir.Expr) ir.Expr {
	if ir.IsAtom(e) {
		return e
	}
	v := ns.FreshVar(e.Pos(), "r", e.Type())
	b.let(&ir.Let{P: e.Pos(), Vars: []*ir.Var{v}, Rhs: e})
	return ir.Ref(e.Pos(), v)
}

func (b *block) wrap(body ir.Expr) ir.Expr {
	for i := len(b.items) - 1; i >= 0; i-- {
		switch it := b.items[i].(type) {
		case *ir.Let:
			body = &ir.Let{P: it.P, Vars: it.Vars, Pattern: it.Pattern, Rhs: it.Rhs, Body: body, Of: it.Of}
		case *ir.Assert:
			body = &ir.Assert{P: it.P, Cond: it.Cond, Body: body, Msg: it.Msg}
		}
	}
	return body
}

type rev struct {
	sem
	blk   *block
	slots map[string]*slot // linear-map variables in scope
	root  *slot            // the accumulator of the source
}

// lmLet is a linear let of the program, replayed backwards.
type lmLet struct {
	v   *ir.Var
	rhs ir.Expr
}

// program emits the primal part of the let-program m forwards, then its
// linear part backwards with r the cotangent of its result.
func (rv *rev) program(m ir.Expr, r ir.Expr) {
	var lets []lmLet
	for {
		switch e := m.(type) {
		case *ir.Let:
			if !e.Rhs.Type().Contains(types.LM) {
				rv.blk.let(&ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: e.Rhs})
				m = e.Body
				continue
			}
			if e.Pattern || len(e.Vars) != 1 || e.Rhs.Type().Kind != types.LM {
				fail(e.P, "ksc cannot reverse-apply a pattern binding linear maps")
			}
			v := e.Vars[0]
			if isRootMap(e.Rhs) {
				// The identity or a projection of the source: its
				// contributions go straight into the source's accumulator.
				m = ir.Subst(e.Body, map[string]ir.Expr{v.Name: e.Rhs})
				continue
			}
			rv.slots[v.Name] = &slot{of: e.Of, typ: tangent(v.T.To)}
			lets = append(lets, lmLet{v: v, rhs: e.Rhs})
			m = e.Body
			continue
		case *ir.Assert:
			rv.blk.items = append(rv.blk.items, &ir.Assert{P: e.P, Cond: e.Cond, Msg: e.Msg})
			m = e.Body
			continue
		}
		break
	}
	rv.contribute(m, r)
	for i := len(lets) - 1; i >= 0; i-- {
		l := lets[i]
		if s := rv.slots[l.v.Name]; s.cur != nil {
			rv.contribute(l.rhs, s.cur)
		}
		delete(rv.slots, l.v.Name)
	}
}

// isRootMap reports whether m is the identity, a zero or a projection:
// maps of the source that the Jacobian binds for each parameter.
func isRootMap(m ir.Expr) bool {
	if HasLMVar(m) {
		return false
	}
	if _, ok := isLMCall(m, "lmOne"); ok {
		return true
	}
	if _, ok := projection(m); ok {
		return true
	}
	return isZero(m)
}

// initSlot gives an untouched slot its zero, shaped by example (or, if
// nil, by the slot's primal variable).
func (rv *rev) initSlot(s *slot, p ir.Pos, example ir.Expr) {
	if s.cur != nil {
		return
	}
	switch {
	case example != nil:
		s.cur = rv.blk.atom(rv.ns, ir.MkPrim(p, "ts_zero", example))
	case s.of != nil:
		s.cur = rv.blk.atom(rv.ns, ir.MkPrim(p, "ts_zero", ir.Ref(p, s.of)))
	case s.typ.IsUniform():
		s.cur = rv.blk.atom(rv.ns, zeroOf(p, s.typ))
	default:
		fail(p, "ksc cannot find the shape of a cotangent of type %s", s.typ)
	}
}

// zeroOf returns the zero of a uniform tangent type.
func zeroOf(p ir.Pos, t *types.Type) ir.Expr {
	switch t.Kind {
	case types.Float:
		return ir.Float(p, 0)
	case types.Tuple:
		elems := make([]ir.Expr, len(t.Elems))
		for i, e := range t.Elems {
			elems[i] = zeroOf(p, e)
		}
		return ir.MkTuple(p, elems...)
	}
	panic("linmap: no zero for " + t.String())
}

// slotOf returns the slot of a linear-map variable.
func (rv *rev) slotOf(v *ir.Var) *slot {
	s, ok := rv.slots[v.Name]
	if !ok {
		fail(v.P, "internal: linear-map variable %s is not bound in the program", v.Name)
	}
	return s
}

// set binds a new accumulator value to a slot.
func (rv *rev) set(s *slot, e ir.Expr) { s.cur = rv.blk.atom(rv.ns, e) }

// contribute adds r reverse-applied to m into the accumulators.
func (rv *rev) contribute(m ir.Expr, r ir.Expr) {
	p := m.Pos()
	if !HasLMVar(m) {
		if isZero(m) {
			return
		}
		if rv.root.cur == nil {
			fail(p, "internal: a contribution to the source inside a loop that does not carry it")
		}
		rv.set(rv.root, rv.accR(m, r, rv.root.cur))
		return
	}
	switch e := m.(type) {
	case *ir.Var:
		s := rv.slotOf(e)
		if s.cur == nil {
			rv.initSlot(s, p, r)
		}
		rv.set(s, ir.MkPrim(p, "$addTo", s.cur, r))
		return
	case *ir.Let, *ir.Assert:
		rv.program(m, r)
		return
	case *ir.If:
		rv.branches(e, r)
		return
	case *ir.Call:
		if e.Prim == nil || !e.Prim.LM {
			break
		}
		a := e.Args
		switch e.Prim.Name {
		case "lmCompose":
			l, n := a[0], a[1]
			if HasLMVar(l) {
				fail(p, "ksc cannot reverse-apply a composition whose left map depends on a linear-map variable")
			}
			if v, ok := n.(*ir.Var); ok {
				s := rv.slotOf(v)
				rv.initSlot(s, p, rv.example(l))
				rv.set(s, rv.accR(l, r, s.cur))
				return
			}
			if c, ok := isLMCall(n, "lmVCat"); ok && rv.varsOrLeaves(c.Args) {
				rv.composeVCat(l, c.Args, r)
				return
			}
			mid := rv.blk.atom(rv.ns, rv.apR(r, l))
			rv.contribute(n, mid)
			return
		case "lmAdd":
			rv.contribute(a[0], r)
			rv.contribute(a[1], r)
			return
		case "lmVCat":
			for i, x := range a {
				rv.contribute(x, rv.blk.atom(rv.ns, ir.MkGet(p, i+1, r)))
			}
			return
		case "lmBuild", "lmSumBuild":
			lam := a[1].(*ir.Lam)
			rv.loop(e, a[0], lam, func(in *rev, i ir.Expr) {
				ri := r
				if e.Prim.Name == "lmBuild" {
					ri = in.blk.atom(in.ns, ir.MkPrim(p, "index", i, r))
				}
				in.program(lam.Body, ri)
			})
			return
		}
	}
	fail(p, "ksc cannot reverse-apply %s", ir.FormatExpr(m))
}

// varsOrLeaves reports whether every map is a linear-map variable or free
// of them.
func (rv *rev) varsOrLeaves(ms []ir.Expr) bool {
	for _, m := range ms {
		if _, ok := m.(*ir.Var); !ok && HasLMVar(m) {
			return false
		}
	}
	return true
}

// composeVCat adds r reverse-applied to l ∘ (m1 × ... × mn): the slots of
// the mi are passed together, as one tuple accumulator, to l (for a call
// of [D g], into [revacc g], which updates them in place).
func (rv *rev) composeVCat(l ir.Expr, ms []ir.Expr, r ir.Expr) {
	p := l.Pos()
	ex := rv.example(l)
	exv := rv.blk.atom(rv.ns, ex)
	accs := make([]ir.Expr, len(ms))
	for i, m := range ms {
		if v, ok := m.(*ir.Var); ok {
			s := rv.slotOf(v)
			rv.initSlot(s, p, ir.MkGet(p, i+1, exv))
			accs[i] = s.cur
		} else {
			accs[i] = rv.blk.atom(rv.ns, ir.MkPrim(p, "ts_zero", ir.MkGet(p, i+1, exv)))
		}
	}
	res := rv.accR(l, r, rv.blk.atom(rv.ns, ir.MkTuple(p, accs...)))
	parts := make([]*ir.Var, len(ms))
	for i, a := range accs {
		parts[i] = rv.ns.FreshVar(p, "acc", a.Type())
	}
	rv.blk.let(&ir.Let{P: p, Vars: parts, Pattern: true, Rhs: res})
	for i, m := range ms {
		if v, ok := m.(*ir.Var); ok {
			rv.slotOf(v).cur = ir.Ref(p, parts[i])
		} else if !isZero(m) {
			rv.set(rv.root, rv.accR(m, ir.Ref(p, parts[i]), rv.root.cur))
		}
	}
}

func isZero(m ir.Expr) bool {
	_, ok := isLMCall(m, "lmZero")
	return ok
}

// sub returns a generator for nested code with its own block.
func (rv *rev) sub() *rev {
	return &rev{sem: rv.sem, blk: &block{}, slots: map[string]*slot{}, root: rv.root}
}

// touched returns the names of the linear-map variables of rv's scope
// that m mentions, in order of first mention, and whether m also has
// parts free of them (which add into the root).
func (rv *rev) touched(ms ...ir.Expr) (names []string, root bool) {
	seen := map[string]bool{}
	for _, m := range ms {
		ir.Inspect(m, func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok && v.T.Kind == types.LM {
				if _, inScope := rv.slots[v.Name]; inScope && !seen[v.Name] {
					seen[v.Name] = true
					names = append(names, v.Name)
				}
			}
			return true
		})
		root = root || hasLeaf(m)
	}
	return names, root
}

// hasLeaf reports whether the map m has a part that mentions no
// linear-map variable and is not zero: such a part adds into the root.
func hasLeaf(m ir.Expr) bool {
	if !m.Type().Contains(types.LM) {
		return false
	}
	if !HasLMVar(m) {
		return !isZero(m)
	}
	switch e := m.(type) {
	case *ir.Var:
		return false
	case *ir.Let:
		return hasLeaf(e.Rhs) || hasLeaf(e.Body)
	case *ir.Assert:
		return hasLeaf(e.Body)
	case *ir.If:
		return hasLeaf(e.Then) || hasLeaf(e.Else)
	case *ir.Tuple:
		for _, x := range e.Elems {
			if hasLeaf(x) {
				return true
			}
		}
		return false
	case *ir.Call:
		if e.Prim != nil && e.Prim.Name == "lmCompose" {
			return hasLeaf(e.Args[1])
		}
		for _, x := range e.Args {
			if l, ok := x.(*ir.Lam); ok {
				if hasLeaf(l.Body) {
					return true
				}
			} else if hasLeaf(x) {
				return true
			}
		}
	}
	return false
}

// carry prepares the slots updated by code inside a loop or a branch:
// they are initialised before it and passed through it as a tuple. It
// returns their names and current values (root last, if carried).
func (rv *rev) carry(p ir.Pos, ms ...ir.Expr) (names []string, vals []ir.Expr, root bool) {
	names, root = rv.touched(ms...)
	for _, n := range names {
		s := rv.slots[n]
		rv.initSlot(s, p, nil)
		vals = append(vals, s.cur)
	}
	if root {
		vals = append(vals, rv.root.cur)
	}
	return names, vals, root
}

// enter returns a generator for code inside a loop or branch whose carried
// slots are bound to the variables vars.
func (rv *rev) enter(names []string, root bool, vars []*ir.Var) *rev {
	in := rv.sub()
	for k, s := range rv.slots {
		in.slots[k] = s // visible (read-only) in the inner scope
	}
	for i, n := range names {
		outer := rv.slots[n]
		in.slots[n] = &slot{cur: ir.Ref(vars[i].P, vars[i]), of: outer.of, typ: outer.typ}
	}
	if root {
		v := vars[len(vars)-1]
		in.root = &slot{cur: ir.Ref(v.P, v), typ: v.T}
	} else {
		in.root = &slot{} // not carried: nothing inside adds into it
	}
	return in
}

// leave returns the carried values at the end of inner code.
func (in *rev) leave(names []string, root bool) []ir.Expr {
	var out []ir.Expr
	for _, n := range names {
		out = append(out, in.slots[n].cur)
	}
	if root {
		out = append(out, in.root.cur)
	}
	return out
}

// rebind binds the carried values that code returns (a tuple) to the
// outer slots.
func (rv *rev) rebind(p ir.Pos, names []string, root bool, tuple ir.Expr) {
	t := tuple.Type()
	vars := make([]*ir.Var, len(t.Elems))
	for i, et := range t.Elems {
		vars[i] = rv.ns.FreshVar(p, "acc", et)
	}
	rv.blk.let(&ir.Let{P: p, Vars: vars, Pattern: true, Rhs: tuple})
	for i, n := range names {
		rv.slots[n].cur = ir.Ref(p, vars[i])
	}
	if root {
		rv.root.cur = ir.Ref(p, vars[len(vars)-1])
	}
}

// freshVars returns new variables with the types of vals.
func (rv *rev) freshVars(p ir.Pos, vals []ir.Expr) []*ir.Var {
	vars := make([]*ir.Var, len(vals))
	for i, v := range vals {
		vars[i] = rv.ns.FreshVar(p, "acc", v.Type())
	}
	return vars
}

// loop reverse-applies the maps of a lmBuild or lmSumBuild: a loop over
// the index space carrying the accumulators its body updates.
func (rv *rev) loop(e *ir.Call, n ir.Expr, lam *ir.Lam, body func(in *rev, i ir.Expr)) {
	p := e.P
	names, vals, root := rv.carry(p, lam.Body)
	if len(vals) == 0 {
		return
	}
	state := ir.MkTuple(p, vals...)
	// The loop is built by sem.loop, which hands us the index and the state.
	res := rv.sem.loop(p, n, lam, state, func(i, st ir.Expr) ir.Expr {
		vars := rv.freshVars(p, vals)
		in := rv.enter(names, root, vars)
		body(in, i)
		out := in.blk.wrap(ir.MkTuple(p, in.leave(names, root)...))
		return &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: st, Body: out}
	})
	rv.rebind(p, names, root, res)
}

// branches reverse-applies an if choosing between maps (REVIF): each
// branch updates the union of the accumulators either touches.
func (rv *rev) branches(e *ir.If, r ir.Expr) {
	p := e.P
	names, vals, root := rv.carry(p, e.Then, e.Else)
	if len(vals) == 0 {
		return
	}
	arm := func(m ir.Expr) ir.Expr {
		in := rv.sub()
		for k, s := range rv.slots {
			in.slots[k] = &slot{cur: s.cur, of: s.of, typ: s.typ}
		}
		in.root = &slot{cur: rv.root.cur, typ: rv.root.typ}
		in.contribute(m, r)
		return in.blk.wrap(ir.MkTuple(p, in.leave(names, root)...))
	}
	rv.rebind(p, names, root, ir.MkIf(p, e.Cond, arm(e.Then), arm(e.Else)))
}
