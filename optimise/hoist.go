package optimise

import (
	"slices"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/types"
)

// hoistLoops moves what the iterations of a loop marked ($hoist (build n
// (lam k body))) compute alike in front of the loop. derive marks the
// sweeps of a Jacobian by columns: each column is [fwd f] at x along
// another unit tangent, so the primal part of every sweep (f's values,
// from x alone) is the same, and runs once here instead of n times
// (language.md section 5).
//
// The calls in the loop's body are inlined first (those of functions
// that are not recursive and have no effect), so that what is alike can
// be seen through calls. Then an item of the body's chain of lets that
// does not depend on k is moved out (LICM), and so are parts of inner
// loops and ifs (hoister.chain): an inner loop over i keeps, for each i,
// a record of the values it computes alike for every k, made by a loop
// before the outer one; a loop or an if whose value is a tuple is taken
// apart into one per field, so that the fields which do not depend on k
// (the primal values of a forward sweep) move out and those that do (the
// tangents) stay. The code moved out runs only if the loop runs at least
// once (it could fail where the loop, running no iteration, does not).
func hoistLoops(ctx *Context) error {
	prog := ctx.Prog
	eff := lower.ComputeEffects(prog)
	rec := ir.Recursive(prog.Funcs)
	var marked []*ir.Func
	forEachBody(prog, func(f *ir.Func) {
		found := false
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			loop, ok := hoistRequest(e)
			if !ok {
				return e
			}
			found = true
			n, lam := loop.Args[0], loop.Args[1].(*ir.Lam)
			p := loop.P
			inlined := &ir.Call{P: loop.P, T: loop.T, Prim: loop.Prim,
				Args: []ir.Expr{n, ir.MkLam(lam.P, lam.Param, inlineAll(lam.Body, eff, rec))}}
			// When the loop runs no iteration, its body is never
			// evaluated: any value of its type will do.
			none := ir.Expr(loop)
			if plain(lam.Body.Type()) {
				none = &ir.Call{P: p, T: loop.T, Prim: loop.Prim,
					Args: []ir.Expr{n, ir.MkLam(lam.P, lam.Param, &ir.Dummy{P: p, T: lam.Body.Type()})}}
			}
			return ir.MkIf(p, ir.MkPrim(p, "gt", ir.Copy(n, ir.Pos{}), ir.Int(p, 0)),
				ir.MkPrim(p, "$hoist", inlined), none)
		})
		if found {
			marked = append(marked, f)
		}
	})
	if len(marked) == 0 {
		return nil
	}
	ir.RenameApart(prog)
	sim, err := newSimplify(ctx)
	if err != nil {
		return err
	}
	h := &hoister{ns: prog.Names(), eff: eff}
	for _, f := range marked {
		sim(f)
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			c, ok := e.(*ir.Call)
			if !ok || c.Prim == nil || c.Prim.Name != "$hoist" {
				return e
			}
			if loop, ok := hoistRequest(e); ok {
				return h.loop(loop)
			}
			return c.Args[0]
		})
	}
	ir.RenameApart(prog)
	for _, f := range marked {
		sim(f)
	}
	return nil
}

// hoistRequest returns the loop of ($hoist (build n (lam k body))), of one
// Integer index, whose size is an atom.
func hoistRequest(e ir.Expr) (*ir.Call, bool) {
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Name != "$hoist" {
		return nil, false
	}
	loop, ok := c.Args[0].(*ir.Call)
	if !ok || loop.Prim == nil || loop.Prim.Name != "build" || !ir.IsAtom(loop.Args[0]) {
		return nil, false
	}
	lam, ok := loop.Args[1].(*ir.Lam)
	if !ok || lam.Param.T.Kind != types.Integer {
		return nil, false
	}
	return loop, true
}

// inlineBudget bounds the nodes of a loop body that inlining makes.
const inlineBudget = 200000

// inlineAll inlines, in e, the calls of functions with a body that are
// not recursive and have no effect, and the calls in what they inline,
// while e stays within inlineBudget nodes.
func inlineAll(e ir.Expr, eff lower.Effects, rec map[*ir.Func]bool) ir.Expr {
	for {
		changed := false
		next := ir.Map(e, func(x ir.Expr) ir.Expr {
			c, ok := x.(*ir.Call)
			if !ok || c.Fn == nil || c.Fn.Body == nil || rec[c.Fn] || eff[c.Fn] || c.Fn.Kind == ir.EdefFunc {
				return x
			}
			changed = true
			g := c.Fn
			return lower.BindParams(g, c.Args, ir.Copy(g.Body, ir.Pos{}), c.P)
		})
		if !changed || ir.Size(next) > inlineBudget {
			return e
		}
		e = next
	}
}

// A hoister moves the code a loop's iterations compute alike out of the
// loop (hoistLoops).
type hoister struct {
	ns  *ir.Names
	eff lower.Effects
	// parts maps a variable that was taken apart, one variable per field,
	// to those variables (rewrite replaces its uses).
	parts map[string]parts
}

// parts are the variables of the fields of a tuple, or, if tensor, of a
// tensor of tuples (each then the tensor of its field).
type parts struct {
	vars   []*ir.Var
	tensor bool
}

// loop returns (build n (lam k body)) with what does not depend on k
// moved in front of it.
func (h *hoister) loop(loop *ir.Call) ir.Expr {
	lam := loop.Args[1].(*ir.Lam)
	h.parts = map[string]parts{}
	// Every binder of the body its own name: the hoister tells variables
	// apart by name (V, h.parts), and inlining repeats names in sibling
	// scopes.
	lam = ir.FreshBinders(lam, h.ns).(*ir.Lam)
	pre, body := h.chain(lam.Body, map[string]bool{lam.Param.Name: true})
	return ir.WrapChain(pre, &ir.Call{P: loop.P, T: loop.T, Prim: loop.Prim,
		Args: []ir.Expr{loop.Args[0], ir.MkLam(lam.P, lam.Param, body)}})
}

// chain splits e, evaluated once per iteration of loops whose variant
// variables (the loops' indices, and what depends on them) are V, into
// the items (lets and asserts) that do not depend on V, pre, and the rest
// of e, in which pre's bindings are in scope. The variables that the
// rest binds are added to V.
func (h *hoister) chain(e ir.Expr, V map[string]bool) (pre []ir.Expr, rest ir.Expr) {
	items, tail := chainOf(e)
	if isLoop(tail) || isIf(tail) {
		v := h.ns.FreshVar(tail.Pos(), "t", tail.Type())
		items = append(items, &ir.Let{P: tail.Pos(), Vars: []*ir.Var{v}, Rhs: tail})
		tail = ir.Ref(tail.Pos(), v)
	}
	var kept []ir.Expr
	keep := func(its ...ir.Expr) {
		for _, it := range its {
			// The parts of its expression that do not depend on V.
			switch it := it.(type) {
			case *ir.Let:
				if !isLoop(it.Rhs) && !isIf(it.Rhs) {
					var rhs ir.Expr
					pre, rhs = h.extract(pre, it.Rhs, V)
					kept = append(kept, &ir.Let{P: it.P, Vars: it.Vars, Pattern: it.Pattern, Rhs: rhs, Of: it.Of})
					break
				}
				kept = append(kept, it)
			case *ir.Assert:
				c := it.Cond
				pre, c = h.extract(pre, c, V)
				kept = append(kept, &ir.Assert{P: it.P, Cond: c, Msg: it.Msg})
			}
		}
		for _, v := range ir.ChainVars(its) {
			V[v.Name] = true
		}
	}
	for len(items) > 0 {
		it := items[0]
		items = items[1:]
		if split := h.elemParts(it); split != nil {
			items = append(split, items...)
			continue
		}
		switch it := h.rewriteItem(it).(type) {
		case *ir.Assert:
			if ir.Mentions(it.Cond, V) || lower.HasEffect(it.Cond, h.eff) {
				keep(it)
			} else {
				pre = append(pre, it)
			}
		case *ir.Let:
			if !ir.Mentions(it.Rhs, V) && h.movable(it.Rhs) {
				pre = append(pre, it)
				continue
			}
			out, k := h.mixed(it, V)
			pre = append(pre, out...)
			keep(k...)
		}
	}
	tail = h.rewrite(tail)
	pre, tail = h.extract(pre, tail, V)
	return pre, ir.WrapChain(kept, tail)
}

// extract moves out of e the largest parts that do not depend on V and
// are not atoms, as lets appended to pre, and returns e reading them. It
// does not look into lambdas, the branches of an if, the operands of and
// and or after the first (which may not be evaluated), or lets.
func (h *hoister) extract(pre []ir.Expr, e ir.Expr, V map[string]bool) ([]ir.Expr, ir.Expr) {
	if !ir.Mentions(e, V) && !ir.IsAtom(e) && h.movable(e) {
		switch e.(type) {
		case *ir.Call, *ir.Tuple, *ir.Get:
			v := h.ns.FreshVar(e.Pos(), "h", e.Type())
			return append(pre, &ir.Let{P: e.Pos(), Vars: []*ir.Var{v}, Rhs: e}), ir.Ref(e.Pos(), v)
		}
		return pre, e
	}
	switch x := e.(type) {
	case *ir.Call:
		if isLoop(x) || x.Prim != nil && (x.Prim.Name == "and" || x.Prim.Name == "or") {
			return pre, e
		}
		args := make([]ir.Expr, len(x.Args))
		for k, a := range x.Args {
			if _, ok := a.(*ir.Lam); ok {
				return pre, e
			}
			pre, args[k] = h.extract(pre, a, V)
		}
		return pre, &ir.Call{P: x.P, T: x.T, Fn: x.Fn, Prim: x.Prim, Args: args}
	case *ir.Tuple:
		elems := make([]ir.Expr, len(x.Elems))
		for k, a := range x.Elems {
			pre, elems[k] = h.extract(pre, a, V)
		}
		return pre, &ir.Tuple{P: x.P, T: x.T, Elems: elems}
	case *ir.Get:
		var inner ir.Expr
		pre, inner = h.extract(pre, x.X, V)
		return pre, &ir.Get{P: x.P, T: x.T, I: x.I, N: x.N, X: inner}
	case *ir.If:
		var c ir.Expr
		pre, c = h.extract(pre, x.Cond, V)
		return pre, &ir.If{P: x.P, T: x.T, Cond: c, Then: x.Then, Else: x.Else}
	}
	return pre, e
}

// movable reports whether e, which does not depend on the loop, may be
// computed once before it for all iterations: it prints nothing and is
// not a fresh zero (freshZero, as in cse.go), nor a tuple holding one.
// Derived code starts an accumulator from such a zero and updates it in
// place ($addAt, $addTo), so one zero made before the loop would be every
// iteration's accumulator, each adding to what the ones before left in it
// (the sweeps of a Jacobian by rows, each a reverse pass, when they were
// hoisted). What a loop computes from such a zero inside it is its own.
func (h *hoister) movable(e ir.Expr) bool {
	return !lower.HasEffect(e, h.eff) && !holdsFreshZero(e)
}

// holdsFreshZero reports whether e is a fresh zero or a tuple with one.
func holdsFreshZero(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Call:
		return e.Prim != nil && freshZero[e.Prim.Name]
	case *ir.Tuple:
		for _, x := range e.Elems {
			if holdsFreshZero(x) {
				return true
			}
		}
	}
	return false
}

// mixed splits the let l, whose value depends on V, into items that do
// not, out, and those that do, kept.
func (h *hoister) mixed(l *ir.Let, V map[string]bool) (out, kept []ir.Expr) {
	switch {
	case isIf(l.Rhs):
		return h.mixedIf(l, V)
	case isLoop(l.Rhs):
		return h.mixedLoop(l, V)
	}
	if c, ok := l.Rhs.(*ir.Call); ok && l.Pattern && len(l.Vars) == 2 {
		return h.mixedCall(l, c, V)
	}
	return nil, []ir.Expr{l}
}

// mixedCall splits (let (y dy) ([fwdfull g] x dx)), x not depending on V,
// a call that is not inlined (of a recursion): y is (g x), which moves
// out, and the call stays for dy.
func (h *hoister) mixedCall(l *ir.Let, c *ir.Call, V map[string]bool) (out, kept []ir.Expr) {
	f := c.Fn
	if f == nil || len(f.Name.Derivs) != 1 || f.Name.Outer() != "fwdfull" || f.Base == nil || len(c.Args) != 2 ||
		ir.Mentions(c.Args[0], V) || h.eff[f.Base] || f.Base.Kind == ir.EdefFunc || !c.Args[0].Type().Equal(f.Base.Arg) {
		return nil, []ir.Expr{l}
	}
	p := l.P
	y := l.Vars[0]
	out = []ir.Expr{&ir.Let{P: p, Vars: []*ir.Var{y}, Rhs: ir.CallFunc(c.P, f.Base, ir.Copy(c.Args[0], ir.Pos{}))}}
	unused := h.ns.FreshVar(p, y.Name, y.T)
	kept = []ir.Expr{&ir.Let{P: p, Vars: []*ir.Var{unused, l.Vars[1]}, Pattern: true, Rhs: c}}
	return out, kept
}

// isLoop reports whether e is a build or sumbuild with a lambda, or the
// unzip of such a build.
func isLoop(e ir.Expr) bool {
	_, _, ok := loopParts(e)
	return ok
}

// loopParts returns the loop call of e (build or sumbuild, maybe inside
// unzip) and its lambda.
func loopParts(e ir.Expr) (*ir.Call, *ir.Lam, bool) {
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil {
		return nil, nil, false
	}
	if c.Prim.Name == "unzip" {
		inner, ok := c.Args[0].(*ir.Call)
		if !ok || inner.Prim == nil || inner.Prim.Name != "build" {
			return nil, nil, false
		}
		c = inner
	}
	if c.Prim.Name != "build" && c.Prim.Name != "sumbuild" {
		return nil, nil, false
	}
	lam, ok := c.Args[1].(*ir.Lam)
	return c, lam, ok
}

func isIf(e ir.Expr) bool {
	_, ok := e.(*ir.If)
	return ok
}

// fieldVars returns the variables l binds for the fields of its value,
// whose types are ts: its pattern, or new variables, the uses of l's one
// variable then taken apart (h.parts): a tuple, or if tensor a tensor of
// tuples.
func (h *hoister) fieldVars(l *ir.Let, ts []*types.Type, tensor bool) []*ir.Var {
	if l.Pattern {
		return l.Vars
	}
	v := l.Vars[0]
	vars := make([]*ir.Var, len(ts))
	for i, t := range ts {
		vars[i] = h.ns.FreshVar(v.P, v.Name, t)
	}
	h.parts[v.Name] = parts{vars: vars, tensor: tensor}
	return vars
}

// mixedIf splits (let x (if c t e)), whose condition does not depend on
// V: if its value is a tuple made by both branches, into one if per
// field, each keeping of its branches what the field needs, so that the
// fields that do not depend on V move out; the others, and an if of
// another type, have the code their branches compute alike moved out
// (branches).
func (h *hoister) mixedIf(l *ir.Let, V map[string]bool) (out, kept []ir.Expr) {
	e := l.Rhs.(*ir.If)
	if ir.Mentions(e.Cond, V) {
		return nil, []ir.Expr{l}
	}
	if e.T.Kind != types.Tuple {
		return h.branches(l, V)
	}
	if _, ok := fieldOf(e.Then, 0); !ok {
		return h.branches(l, V)
	}
	if _, ok := fieldOf(e.Else, 0); !ok {
		return h.branches(l, V)
	}
	vars := h.fieldVars(l, e.T.Elems, false)
	for i, v := range vars {
		then, _ := fieldOf(e.Then, i)
		els, _ := fieldOf(e.Else, i)
		rhs := ir.MkIf(e.P, e.Cond, then, els)
		it := &ir.Let{P: l.P, Vars: []*ir.Var{v}, Rhs: rhs}
		if ir.Mentions(rhs, V) || lower.HasEffect(rhs, h.eff) {
			o, k := h.branches(it, V)
			out = append(out, o...)
			kept = append(kept, k...)
		} else {
			out = append(out, it)
		}
	}
	return out, kept
}

// fieldOf returns the code computing field k of the tuple e makes, made
// of e's own code that the field needs: e ends with a tuple, a variable
// bound to one in e, or an if whose branches do (taken apart in turn).
func fieldOf(e ir.Expr, k int) (ir.Expr, bool) {
	items, tail := chainOf(e)
	var field ir.Expr
	switch t := tail.(type) {
	case *ir.Tuple:
		field = t.Elems[k]
	case *ir.If:
		then, ok1 := fieldOf(t.Then, k)
		els, ok2 := fieldOf(t.Else, k)
		if !ok1 || !ok2 {
			return nil, false
		}
		field = ir.MkIf(t.P, t.Cond, then, els)
	case *ir.Var:
		for j := len(items) - 1; j >= 0; j-- {
			if l, ok := items[j].(*ir.Let); ok && !l.Pattern && l.Vars[0].Name == t.Name {
				if tu, ok := l.Rhs.(*ir.Tuple); ok {
					field = tu.Elems[k]
				}
				break
			}
		}
		if field == nil {
			// A tuple from elsewhere: its field.
			field = ir.MkGet(t.P, k+1, t)
		}
	default:
		return nil, false
	}
	items, field = live(items, field, nil)
	return ir.Copy(ir.WrapChain(items, field), ir.Pos{}), true
}

// branches moves out of (let x (if c t e)), c not depending on V, the
// code each branch computes alike for every value of V: an if in front
// on c computes it and gives the values the branches read (the branch
// not taken gives zeros), and the if that stays reads them.
func (h *hoister) branches(l *ir.Let, V map[string]bool) (out, kept []ir.Expr) {
	e := l.Rhs.(*ir.If)
	p := e.P
	preT, restT := h.chain(e.Then, V)
	preE, restE := h.chain(e.Else, V)
	needT, needE := readOf(preT, restT), readOf(preE, restE)
	for _, v := range append(append([]*ir.Var{}, needT...), needE...) {
		if !plain(v.T) {
			return nil, []ir.Expr{l}
		}
	}
	kept = []ir.Expr{&ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: ir.MkIf(p, e.Cond, restT, restE), Of: l.Of}}
	vars := append(append([]*ir.Var{}, needT...), needE...)
	if len(vars) == 0 {
		return nil, kept
	}
	values := func(pre []ir.Expr, need []*ir.Var, first bool) ir.Expr {
		elems := make([]ir.Expr, 0, len(vars))
		for _, v := range vars {
			if slices.ContainsFunc(need, func(w *ir.Var) bool { return w.Name == v.Name }) {
				elems = append(elems, ir.Ref(p, v))
			} else {
				elems = append(elems, &ir.Dummy{P: p, T: v.T})
			}
		}
		if len(elems) == 1 {
			return ir.WrapChain(pre, elems[0])
		}
		return ir.WrapChain(pre, ir.MkTuple(p, elems...))
	}
	rhs := ir.MkIf(p, e.Cond, values(preT, needT, true), values(preE, needE, false))
	bind := make([]*ir.Var, len(vars))
	for k, v := range vars {
		bind[k] = &ir.Var{P: p, T: v.T, Name: v.Name}
	}
	out = []ir.Expr{&ir.Let{P: p, Vars: bind, Pattern: len(bind) > 1, Rhs: rhs}}
	return out, kept
}

// readOf returns the variables the items pre bind that rest reads.
func readOf(pre []ir.Expr, rest ir.Expr) []*ir.Var {
	free := ir.FreeVars(rest)
	var out []*ir.Var
	for _, v := range ir.ChainVars(pre) {
		if free[v.Name] {
			out = append(out, v)
		}
	}
	return out
}

// plain reports whether t is made of Float, Integer and Bool by tuples
// and tensors only (a zero of it, $dummy, is simple to make).
func plain(t *types.Type) bool { return t.IsPlain() && !t.Contains(types.String) }

// mixedLoop splits a loop over i whose body depends on V: what the body
// computes alike for every value of V is computed for each i by a loop
// in front, into a record r (one field per value the rest reads), and
// the loop that stays reads it; the fields of the loop's value (a tuple,
// or a tensor of tuples) that do not depend on V are made from the
// record in front too.
func (h *hoister) mixedLoop(l *ir.Let, V map[string]bool) (out, kept []ir.Expr) {
	loop, lam, _ := loopParts(l.Rhs)
	n := loop.Args[0]
	if ir.Mentions(n, V) {
		return nil, []ir.Expr{l}
	}
	p := loop.P
	i := lam.Param
	preC, restC := h.chain(lam.Body, V)
	// What the body computes alike for every i too moves out as it is.
	inner := map[string]bool{i.Name: true}
	var perI []ir.Expr
	for _, it := range preC {
		if mentionsItem(it, inner) {
			perI = append(perI, it)
			for _, v := range ir.ChainVars([]ir.Expr{it}) {
				inner[v.Name] = true
			}
		} else {
			out = append(out, it)
		}
	}
	keptC, tailC := chainOf(restC)
	// The fields of the value: those that depend on V stay.
	var fields []ir.Expr
	var fieldT []*types.Type
	tuple, isTuple := tailC.(*ir.Tuple)
	unzipped := l.Rhs != ir.Expr(loop)
	if isTuple {
		fields = tuple.Elems
		fieldT = tuple.T.Elems
	}
	var moved []int // fields made in front
	for k, f := range fields {
		if !ir.Mentions(f, V) {
			moved = append(moved, k)
		}
	}
	if len(moved) == 0 {
		fields = nil
	}
	// The record: the values of perI that the rest reads, then the moved
	// fields. A value read cheaply from i and what is bound outside (an
	// element of a vector, an index computed) is not recorded: the rest
	// reads it again (a record of it would cost more memory traffic).
	bound := map[string]bool{}
	for _, v := range ir.ChainVars(perI) {
		bound[v.Name] = true
	}
	var again []ir.Expr
	for _, it := range perI {
		if l, ok := it.(*ir.Let); ok && cheap(l.Rhs) && !mentionsOther(l.Rhs, bound, again) {
			again = append(again, l)
		}
	}
	for _, v := range ir.ChainVars(again) {
		delete(bound, v.Name)
	}
	var recVars []*ir.Var
	seen := map[string]bool{}
	restUses := ir.WrapChain(keptC, tailC)
	if fields != nil {
		var stay []ir.Expr
		for k, f := range fields {
			if !contains(moved, k) {
				stay = append(stay, f)
			}
		}
		restUses = ir.WrapChain(keptC, ir.MkTuple(p, append(stay, ir.Int(p, 0))...))
	}
	ir.Inspect(restUses, func(x ir.Expr) bool {
		if v, ok := x.(*ir.Var); ok && bound[v.Name] && !seen[v.Name] {
			seen[v.Name] = true
			recVars = append(recVars, v)
		}
		return true
	})
	if len(recVars) == 0 && len(moved) == 0 {
		// Nothing computed alike is read: the rest is the loop.
		body := ir.WrapChain(copyItems(again), restC)
		return out, []ir.Expr{&ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: h.withBody(l.Rhs, loop, body), Of: l.Of}}
	}
	recElems := make([]ir.Expr, 0, len(recVars)+len(moved))
	for _, v := range recVars {
		recElems = append(recElems, ir.Ref(p, v))
	}
	for _, k := range moved {
		recElems = append(recElems, ir.Copy(fields[k], ir.Pos{}))
	}
	recElem := recElems[0]
	if len(recElems) > 1 {
		recElem = ir.MkTuple(p, recElems...)
	}
	rec := ir.MkPrim(p, "build", ir.Copy(n, ir.Pos{}), ir.MkLam(lam.P, i, ir.WrapChain(perI, recElem)))
	r := h.ns.FreshVar(p, "rec", rec.T)
	out = append(out, &ir.Let{P: p, Vars: []*ir.Var{r}, Rhs: rec})
	field := func(idx ir.Expr, k int) ir.Expr {
		e := ir.MkPrim(p, "index", idx, ir.Ref(p, r))
		if len(recElems) == 1 {
			return e
		}
		return ir.MkGet(p, k+1, e)
	}
	// The rest reads the record.
	var readRec []ir.Expr
	for k, v := range recVars {
		readRec = append(readRec, &ir.Let{P: p, Vars: []*ir.Var{{P: p, T: v.T, Name: v.Name}}, Rhs: field(ir.Ref(p, i), k)})
	}
	readRec = append(copyItems(again), readRec...)
	if fields == nil {
		body := ir.WrapChain(readRec, restC)
		return out, []ir.Expr{&ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: h.withBody(l.Rhs, loop, body), Of: l.Of}}
	}
	// The loop's value taken apart: a variable per field, of a tensor
	// of that field if the loop is a build.
	tensor := loop.Prim.Name == "build"
	ts := fieldT
	if tensor {
		ts = make([]*types.Type, len(fieldT))
		for k, t := range fieldT {
			ts[k] = types.TensorOf(loop.T.Rank, t)
		}
	}
	vars := h.fieldVars(l, ts, tensor && !unzipped)
	for m, k := range moved {
		q := h.ns.FreshVar(p, "q", i.T)
		elem := field(ir.Ref(p, q), len(recVars)+m)
		out = append(out, &ir.Let{P: p, Vars: []*ir.Var{vars[k]}, Rhs: ir.MkPrim(p, loop.Prim.Name, ir.Copy(n, ir.Pos{}), ir.MkLam(p, q, elem))})
	}
	var stayVars []*ir.Var
	var stayElems []ir.Expr
	for k, f := range fields {
		if !contains(moved, k) {
			stayVars = append(stayVars, vars[k])
			stayElems = append(stayElems, f)
		}
	}
	if len(stayVars) == 0 {
		return out, nil
	}
	var tail ir.Expr
	if len(stayElems) == 1 {
		tail = stayElems[0]
	} else {
		tail = ir.MkTuple(p, stayElems...)
	}
	body := ir.WrapChain(append(readRec, keptC...), tail)
	newLoop := ir.MkPrim(p, loop.Prim.Name, ir.Copy(n, ir.Pos{}), ir.MkLam(lam.P, i, body))
	if len(stayVars) == 1 {
		return out, []ir.Expr{&ir.Let{P: l.P, Vars: stayVars, Rhs: newLoop}}
	}
	rhs := ir.Expr(newLoop)
	if tensor {
		rhs = ir.MkPrim(p, "unzip", newLoop)
	}
	return out, []ir.Expr{&ir.Let{P: l.P, Vars: stayVars, Pattern: true, Rhs: rhs}}
}

// cheap reports whether e is cheap to compute again: a variable, a
// constant, a field, the size or an element of a tensor, or an Integer or
// Bool computed from atoms.
func cheap(e ir.Expr) bool {
	switch x := e.(type) {
	case *ir.Var, *ir.Const:
		return true
	case *ir.Get:
		return ir.IsAtom(x.X)
	case *ir.Call:
		if x.Prim == nil {
			return false
		}
		for _, a := range x.Args {
			if !ir.IsAtom(a) {
				return false
			}
		}
		switch x.Prim.Name {
		case "index", "size":
			return true
		}
		return x.T.Kind == types.Integer || x.T.Kind == types.Bool
	}
	return false
}

// mentionsOther reports whether e mentions a variable of bound other than
// those the items again bind.
func mentionsOther(e ir.Expr, bound map[string]bool, again []ir.Expr) bool {
	ok := map[string]bool{}
	for _, v := range ir.ChainVars(again) {
		ok[v.Name] = true
	}
	for n := range ir.FreeVars(e) {
		if bound[n] && !ok[n] {
			return true
		}
	}
	return false
}

// copyItems returns copies of the items of a chain.
func copyItems(items []ir.Expr) []ir.Expr {
	out := make([]ir.Expr, len(items))
	for k, it := range items {
		l := it.(*ir.Let)
		out[k] = &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: ir.Copy(l.Rhs, ir.Pos{}), Of: l.Of}
	}
	return out
}

// withBody returns rhs (loop, or unzip of loop) with loop's body replaced.
func (h *hoister) withBody(rhs ir.Expr, loop *ir.Call, body ir.Expr) ir.Expr {
	lam := loop.Args[1].(*ir.Lam)
	nl := &ir.Call{P: loop.P, T: loop.T, Prim: loop.Prim, Args: []ir.Expr{loop.Args[0], ir.MkLam(lam.P, lam.Param, body)}}
	if rhs == ir.Expr(loop) {
		return nl
	}
	u := rhs.(*ir.Call)
	return &ir.Call{P: u.P, T: u.T, Prim: u.Prim, Args: []ir.Expr{nl}}
}

func contains(ks []int, k int) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// mentionsItem reports whether the item (let or assert) mentions set.
func mentionsItem(it ir.Expr, set map[string]bool) bool {
	switch it := it.(type) {
	case *ir.Let:
		return ir.Mentions(it.Rhs, set)
	case *ir.Assert:
		return ir.Mentions(it.Cond, set)
	}
	return true
}

// live returns the items of a chain that tail needs (and those with an
// effect, and the asserts), in order.
func live(items []ir.Expr, tail ir.Expr, eff lower.Effects) ([]ir.Expr, ir.Expr) {
	need := ir.FreeVars(tail)
	var out []ir.Expr
	for j := len(items) - 1; j >= 0; j-- {
		it := items[j]
		switch x := it.(type) {
		case *ir.Let:
			used := false
			for _, v := range x.Vars {
				used = used || need[v.Name]
			}
			if !used && !lower.HasEffect(x.Rhs, eff) {
				continue
			}
			for n := range ir.FreeVars(x.Rhs) {
				need[n] = true
			}
		case *ir.Assert:
			for n := range ir.FreeVars(x.Cond) {
				need[n] = true
			}
		}
		out = append(out, it)
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	return out, tail
}

// elemParts returns, for (let x (index i t)) of a tensor of tuples t
// taken apart, the lets of x's parts (index i t_k), x then taken apart
// too; or nil.
func (h *hoister) elemParts(it ir.Expr) []ir.Expr {
	l, ok := it.(*ir.Let)
	if !ok || l.Pattern {
		return nil
	}
	c, ok := l.Rhs.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Name != "index" {
		return nil
	}
	t, ok := c.Args[1].(*ir.Var)
	if !ok {
		return nil
	}
	ps, ok := h.parts[t.Name]
	if !ok || !ps.tensor {
		return nil
	}
	x := l.Vars[0]
	vars := make([]*ir.Var, len(ps.vars))
	out := make([]ir.Expr, len(ps.vars))
	for k, v := range ps.vars {
		e := ir.MkPrim(c.P, "index", ir.Copy(c.Args[0], ir.Pos{}), ir.Ref(c.P, v))
		vars[k] = h.ns.FreshVar(x.P, x.Name, e.T)
		out[k] = &ir.Let{P: l.P, Vars: []*ir.Var{vars[k]}, Rhs: e}
	}
	h.parts[x.Name] = parts{vars: vars}
	return out
}

// rewriteItem is rewrite of the expressions of a chain's item.
func (h *hoister) rewriteItem(it ir.Expr) ir.Expr {
	switch x := it.(type) {
	case *ir.Let:
		if r := h.rewrite(x.Rhs); r != x.Rhs {
			return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: r, Of: x.Of}
		}
	case *ir.Assert:
		if c := h.rewrite(x.Cond); c != x.Cond {
			return &ir.Assert{P: x.P, Cond: c, Msg: x.Msg}
		}
	}
	return it
}

// rewrite replaces, in an item or expression, the uses of the variables
// taken apart (h.parts) by their parts: (get$k$n x) by x's k-th part,
// (get$k$n (index i x)) by (index i x_k), (size x) by (size x_1), and any
// other use by the value made again from the parts.
func (h *hoister) rewrite(e ir.Expr) ir.Expr {
	if len(h.parts) == 0 {
		return e
	}
	part := func(x ir.Expr) (parts, bool) {
		v, ok := x.(*ir.Var)
		if !ok {
			return parts{}, false
		}
		ps, ok := h.parts[v.Name]
		return ps, ok
	}
	return ir.MapPre(e, func(x ir.Expr) ir.Expr {
		switch x := x.(type) {
		case *ir.Get:
			if ps, ok := part(x.X); ok && !ps.tensor {
				return ir.Ref(x.P, ps.vars[x.I-1])
			}
			if c, ok := x.X.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == "index" {
				if ps, ok := part(c.Args[1]); ok && ps.tensor {
					return ir.MkPrim(x.P, "index", h.rewrite(c.Args[0]), ir.Ref(x.P, ps.vars[x.I-1]))
				}
			}
		case *ir.Call:
			if x.Prim != nil && x.Prim.Name == "size" {
				if ps, ok := part(x.Args[0]); ok && ps.tensor {
					return ir.MkPrim(x.P, "size", ir.Ref(x.P, ps.vars[0]))
				}
			}
		case *ir.Var:
			if ps, ok := h.parts[x.Name]; ok {
				elems := make([]ir.Expr, len(ps.vars))
				for k, v := range ps.vars {
					elems[k] = ir.Ref(x.P, v)
				}
				if !ps.tensor {
					return ir.MkTuple(x.P, elems...)
				}
				// The tensor of tuples, zipped again.
				q := h.ns.FreshVar(x.P, "q", types.IntegerType)
				if r := ps.vars[0].T.Rank; r > 1 {
					q = h.ns.FreshVar(x.P, "q", ir.MkPrim(x.P, "size", elems[0]).T)
				}
				zip := make([]ir.Expr, len(elems))
				for k, el := range elems {
					zip[k] = ir.MkPrim(x.P, "index", ir.Ref(x.P, q), el)
				}
				return ir.MkPrim(x.P, "build", ir.MkPrim(x.P, "size", elems[0]), ir.MkLam(x.P, q, ir.MkTuple(x.P, zip...)))
			}
		}
		return nil
	})
}

// chainOf is ir.ChainItems, the lets of a chain inside a field selection
// at its tail ((get$k$n (let ...)), as fusion leaves) floated out.
func chainOf(e ir.Expr) ([]ir.Expr, ir.Expr) {
	items, tail := ir.ChainItems(e)
	for {
		g, ok := tail.(*ir.Get)
		if !ok {
			return items, tail
		}
		more, inner := ir.ChainItems(g.X)
		if len(more) == 0 {
			return items, tail
		}
		items = append(items, more...)
		tail = &ir.Get{P: g.P, T: g.T, I: g.I, N: g.N, X: inner}
	}
}
