package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/types"
)

// smallVecMax is the largest count of a small vector: a vector of Floats
// or Integers whose size is a constant of at most this many elements (a
// point, a rotation, a colour), which the pass small-vectors keeps as its
// elements.
const smallVecMax = 4

// smallFuncSize bounds, in nodes, the body of a function whose calls
// small-vectors inlines; smallBodyBudget, the body it inlines them into;
// unrollBudget, the nodes an unrolled loop makes.
const (
	smallFuncSize   = 600
	smallBodyBudget = 50000
	unrollBudget    = 4000
)

// smallVectors keeps the small vectors of a body as their elements, one
// variable each, where it sees every use: a vector of a few elements of a
// size known at compile time (bundle adjustment's 3-vectors, made by
// (build 3 ...) and (Vec_init a b c)) otherwise lives in the arena, each
// read behind an index check, each small function that makes one a call
// returning a pointer. To a fixpoint with the simplifier, it
//
//   - inlines the calls of small functions that make or take such
//     vectors (inliner);
//   - unrolls a build or $ifold/$ifoldr of a constant count of at most
//     smallVecMax (the build into a Vec_init of its elements, a fold into
//     its steps, in the same order), and writes (constVec c x) of such a
//     count as (Vec_init x ... x), and so the zero accumulator
//     ($zerosOfShape c t) of one;
//   - gives a let-bound Vec_init a variable per element, used by the
//     reads (index k v) at a constant k, (size v), and the updates
//     ($addAt v k x) and ($setAt v k x) in its scope;
//   - has a let-bound if whose branches end in such vectors (or in
//     tuples, records or an $inl/$inr variant holding them) yield their
//     parts instead (splitIf);
//   - reads a let-bound record ($wrap t d) of a split pass, t a tuple of
//     atoms, as t where a later $unwrap takes it apart.
//
// What is left uses the vector as a whole (a call, a tuple, a result) and
// keeps its Vec_init. Every element is computed by the same operations in
// the same order as before, so the values are the same bits.
func smallVectors(ctx *Context) error {
	eff := lower.ComputeEffects(ctx.Prog)
	rec := ir.Recursive(ctx.Prog.Funcs)
	hand := handDerived(ctx.Prog)
	simplify, err := newSimplify(ctx)
	if err != nil {
		return err
	}
	inl := &inliner{candidate: map[*ir.Func]bool{}, makes: map[*ir.Func]bool{}}
	for _, g := range ctx.Prog.Funcs {
		inl.candidate[g] = !rec[g] && !eff[g] && !hand[g] && smallVecCandidate(g)
		inl.makes[g] = inl.candidate[g] && returnsSmallVec(g.Body)
	}
	// A loop-free function whose callees are all inlined is too (to a
	// fixpoint: the call graph of candidates has no cycle).
	for changed := true; changed; {
		changed = false
		for _, g := range ctx.Prog.Funcs {
			if inl.makes[g] || !inl.candidate[g] || !loopsOver(g.Body, nil) {
				continue
			}
			all := true
			for _, h := range ir.Funcs(g.Body) {
				all = all && inl.makes[h]
			}
			if all {
				inl.makes[g] = true
				changed = true
			}
		}
	}
	ns := ctx.Prog.Names()
	forEachBody(ctx.Prog, func(f *ir.Func) {
		if isLMFunc(f) {
			return
		}
		for round := 0; round < 16; round++ {
			s := &scalariser{ns: ns, eff: eff, inl: inl, f: f, budget: smallBodyBudget - ir.Size(f.Body)}
			body := s.expr(f.Body, nil)
			if s.steps == 0 {
				break
			}
			f.Body = ir.FreshBinders(body, ns)
			simplify(f)
		}
	})
	return nil
}

// An inliner says which calls small-vectors inlines: those of a candidate
// (a small function of vectors, smallVecCandidate) that returns a small
// vector it makes (returnsSmallVec) or runs no loop but small ones and
// calls only such functions (the reverse passes of such
// functions, which take small vectors apart in records and
// accumulators), or that is given one and runs no loop but small ones
// and those over the size of a vector it is given (loopsOver).
type inliner struct {
	candidate, makes map[*ir.Func]bool
}

// handDerived returns the functions with a derivative written by hand
// ([rev g], say): their calls stay calls, since code differentiated after
// the optimiser's inlining passes (a def a later round derives, the Go
// backend's --ad=cps) must apply that derivative, not differentiate g's
// body (tests/testdata/derived/hand_rev.ks).
func handDerived(prog *ir.Program) map[*ir.Func]bool {
	hand := map[*ir.Func]bool{}
	for _, f := range prog.Funcs {
		if f.Base != nil && f.Kind != ir.DerivedFunc {
			hand[f.Base] = true
		}
	}
	return hand
}

// smallVecCandidate reports whether g is a small function of vectors: a
// body of at most smallFuncSize nodes, and a vector of scalars among its
// parameters or in its result.
func smallVecCandidate(g *ir.Func) bool {
	if g.Body == nil || g.Prim != nil || g.Kind == ir.EdefFunc || isLMFunc(g) {
		return false
	}
	return (hasScalarVec(g.Arg) || hasScalarVec(g.Result)) && ir.Size(g.Body) <= smallFuncSize
}

// returnsSmallVec reports whether the value of e holds a small vector it
// makes: a build or constVec of a constant count of at most smallVecMax,
// or a Vec_init of at most so many scalars, as e's value, a field of it,
// or a field of a record ($wrap) or variant in it, directly or through a
// variable bound in e.
func returnsSmallVec(e ir.Expr) bool {
	bound := map[string]ir.Expr{}
	ir.Inspect(e, func(x ir.Expr) bool {
		if l, ok := x.(*ir.Let); ok && !l.Pattern && len(l.Vars) == 1 {
			bound[l.Vars[0].Name] = l.Rhs
		}
		return true
	})
	seen := map[string]bool{}
	var tail func(x ir.Expr) bool
	tail = func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Var:
			if rhs, ok := bound[x.Name]; ok && !seen[x.Name] {
				seen[x.Name] = true
				return tail(rhs)
			}
		case *ir.Let:
			return tail(x.Body)
		case *ir.Assert:
			return tail(x.Body)
		case *ir.If:
			return tail(x.Then) || tail(x.Else)
		case *ir.Tuple:
			for _, y := range x.Elems {
				if tail(y) {
					return true
				}
			}
		case *ir.Call:
			if x.Prim == nil {
				return false
			}
			switch x.Prim.Name {
			case "build", "constVec":
				n, ok := smallCount(x.Args[0])
				return ok && n > 0 && smallElem(x.T)
			case "Vec_init":
				_, ok := vecInit(x)
				return ok
			case "$wrap", "$inl", "$inr":
				return tail(x.Args[0]) || len(x.Args) > 1 && tail(x.Args[1])
			}
		}
		return false
	}
	return tail(e)
}

// loopsOver reports whether every loop of e is of a constant count of at
// most smallVecMax or over (size p) for a parameter p of small (with
// small nil, whether e runs no loop but small ones).
func loopsOver(e ir.Expr, small map[string]bool) bool {
	ok := true
	ir.Inspect(e, func(x ir.Expr) bool {
		c, isCall := x.(*ir.Call)
		if !isCall || c.Prim == nil || len(c.Prim.Lams) == 0 && c.Prim.Name != "build" && c.Prim.Name != "sumbuild" {
			return ok
		}
		switch c.Prim.Name {
		case "build", "sumbuild", "$ifold", "$ifoldr":
			if _, isSmall := smallCount(c.Args[0]); isSmall {
				return ok
			}
			if n, isSize := c.Args[0].(*ir.Call); isSize && n.Prim != nil && n.Prim.Name == "size" {
				if v, isVar := n.Args[0].(*ir.Var); isVar && small[v.Name] {
					return ok
				}
			}
		}
		ok = false
		return false
	})
	return ok
}

// hasScalarVec reports whether t holds a vector of scalars (through
// tuples, variants and records, recursive ones included).
func hasScalarVec(t *types.Type) bool {
	return scalarVecIn(t, map[*types.Type]bool{})
}

func scalarVecIn(t *types.Type, seen map[*types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	switch {
	case t.Kind == types.Tensor:
		return smallElem(t)
	case t.Kind == types.Named:
		return scalarVecIn(t.Def, seen)
	}
	for _, u := range t.Elems {
		if scalarVecIn(u, seen) {
			return true
		}
	}
	return false
}

// smallCount returns the count of a loop or vector if it is a constant of
// at most smallVecMax.
func smallCount(n ir.Expr) (int, bool) {
	k, ok := n.(*ir.Const)
	if !ok || k.T.Kind != types.Integer {
		return 0, false
	}
	c := k.Val.(int64)
	return int(c), c >= 0 && c <= smallVecMax
}

// A scalariser rewrites one body (smallVectors); steps counts its
// rewrites.
type scalariser struct {
	ns  *ir.Names
	eff lower.Effects
	inl *inliner
	f   *ir.Func
	// budget is what is left of smallBodyBudget, the nodes inlining
	// may add.
	budget int
	steps  int
}

// scope is what a scalariser knows of the variables in scope: a small
// vector's elements (atoms), or a record's fields.
type scope struct {
	elems   map[string][]ir.Expr
	records map[string]*ir.Tuple
}

// without returns sc with what mentions the variables vs forgotten (a
// binder that shadows them).
func (sc *scope) without(vs ...*ir.Var) *scope {
	if sc == nil {
		return nil
	}
	names := map[string]bool{}
	for _, v := range vs {
		names[v.Name] = true
	}
	drop := func(name string, atoms []ir.Expr) bool {
		if names[name] {
			return true
		}
		for _, a := range atoms {
			if v, ok := a.(*ir.Var); ok && names[v.Name] {
				return true
			}
		}
		return false
	}
	out := &scope{elems: map[string][]ir.Expr{}, records: map[string]*ir.Tuple{}}
	changed := false
	for name, atoms := range sc.elems {
		if drop(name, atoms) {
			changed = true
			continue
		}
		out.elems[name] = atoms
	}
	for name, t := range sc.records {
		if drop(name, t.Elems) {
			changed = true
			continue
		}
		out.records[name] = t
	}
	if !changed {
		return sc
	}
	return out
}

// with returns sc with name bound to the elements atoms, or to the record
// t.
func (sc *scope) with(name string, atoms []ir.Expr, t *ir.Tuple) *scope {
	out := &scope{elems: map[string][]ir.Expr{}, records: map[string]*ir.Tuple{}}
	if sc != nil {
		for k, v := range sc.elems {
			out.elems[k] = v
		}
		for k, v := range sc.records {
			out.records[k] = v
		}
	}
	if atoms != nil {
		out.elems[name] = atoms
	}
	if t != nil {
		out.records[name] = t
	}
	return out
}

// holdsSmallVec reports whether e is, or is a tuple holding, a small
// vector known in sc or a Vec_init.
func (sc *scope) holdsSmallVec(e ir.Expr) bool {
	if t, ok := e.(*ir.Tuple); ok {
		for _, x := range t.Elems {
			if sc.holdsSmallVec(x) {
				return true
			}
		}
		return false
	}
	_, ok := vecInit(e)
	return ok || sc.elemsOf(e) != nil
}

func (sc *scope) elemsOf(e ir.Expr) []ir.Expr {
	if sc == nil {
		return nil
	}
	if v, ok := e.(*ir.Var); ok {
		return sc.elems[v.Name]
	}
	return nil
}

// expr rewrites e, its subexpressions first.
func (s *scalariser) expr(e ir.Expr, sc *scope) ir.Expr {
	switch e := e.(type) {
	case *ir.Let:
		return s.let(e, sc)
	case *ir.Lam:
		return &ir.Lam{P: e.P, Param: e.Param, Body: s.expr(e.Body, sc.without(e.Param))}
	case *ir.Call:
		args := make([]ir.Expr, len(e.Args))
		for i, a := range e.Args {
			args[i] = s.expr(a, sc)
		}
		c := &ir.Call{P: e.P, T: e.T, Fn: e.Fn, Prim: e.Prim, Args: args}
		if c.Prim == nil {
			return s.call(c, sc)
		}
		return s.prim(c, sc)
	}
	return ir.MapChildren(e, func(x ir.Expr) ir.Expr { return s.expr(x, sc) })
}

// call inlines a call of a function that makes a small vector or is
// given one (inliner).
func (s *scalariser) call(c *ir.Call, sc *scope) ir.Expr {
	g := c.Fn
	if g == nil || g == s.f || !s.inl.candidate[g] || s.budget <= 0 {
		return c
	}
	// Given a small vector, g is inlined if its loops are small ones or
	// run over the size of a small vector it is given, which unrolling
	// can then see.
	given := false
	small := map[string]bool{}
	for i, a := range c.Args {
		if sc.holdsSmallVec(a) {
			given = true
			if !g.OneParam && i < len(g.Params) {
				small[g.Params[i].Name] = true
			}
		}
	}
	if !s.inl.makes[g] && !(given && loopsOver(g.Body, small)) {
		return c
	}
	s.steps++
	s.budget -= ir.Size(g.Body)
	return s.expr(lower.BindParams(g, c.Args, ir.Copy(g.Body, ir.Pos{}), c.P), sc)
}

// prim rewrites a call of a primitive whose arguments are rewritten.
func (s *scalariser) prim(c *ir.Call, sc *scope) ir.Expr {
	// A read of a vector that a chain of lets makes: the read moves to
	// the chain's end, where the vector may be seen ((index 0 (let (x
	// e) (Vec_init x y))), an unrolled fold's state).
	// The index must be a constant: a variable could be bound again in
	// the chain.
	vi := -1
	switch c.Prim.Name {
	case "size":
		vi = 0
	case "index":
		if _, ok := c.Args[0].(*ir.Const); ok {
			vi = 1
		}
	}
	if vi >= 0 && isChain(c.Args[vi]) {
		items, tail := ir.ChainItems(c.Args[vi])
		args := append([]ir.Expr(nil), c.Args...)
		args[vi] = tail
		s.steps++
		return s.expr(ir.WrapChain(items, &ir.Call{P: c.P, T: c.T, Prim: c.Prim, Args: args}), sc)
	}
	switch c.Prim.Name {
	case "index":
		k, ok := c.Args[0].(*ir.Const)
		if !ok || k.T.Kind != types.Integer {
			return c
		}
		i := int(k.Val.(int64))
		if atoms := sc.elemsOf(c.Args[1]); atoms != nil && i >= 0 && i < len(atoms) {
			s.steps++
			return ir.Copy(atoms[i], c.P)
		}
		if v, ok := vecInit(c.Args[1]); ok && i >= 0 && i < len(v.Args) && !lower.HasEffect(v, s.eff) && !callsFunc(v) {
			s.steps++
			return v.Args[i]
		}
	case "size":
		if atoms := sc.elemsOf(c.Args[0]); atoms != nil {
			s.steps++
			return ir.Int(c.P, int64(len(atoms)))
		}
		if v, ok := vecInit(c.Args[0]); ok && !lower.HasEffect(v, s.eff) && !callsFunc(v) {
			s.steps++
			return ir.Int(c.P, int64(len(v.Args)))
		}
	case "$addAt", "$setAt":
		atoms := sc.elemsOf(c.Args[0])
		if v, ok := vecInit(c.Args[0]); ok {
			atoms = v.Args
		}
		k, ok := c.Args[1].(*ir.Const)
		if atoms == nil || !ok || k.T.Kind != types.Integer || c.Prim.Name == "$addAt" && c.T.Elem.Kind != types.Float && c.T.Elem.Kind != types.Integer {
			return c
		}
		i := int(k.Val.(int64))
		if i < 0 || i >= len(atoms) {
			return c
		}
		elems := make([]ir.Expr, len(atoms))
		for j, a := range atoms {
			elems[j] = ir.Copy(a, c.P)
		}
		if c.Prim.Name == "$setAt" {
			elems[i] = c.Args[2]
		} else {
			elems[i] = ir.MkPrim(c.P, "add", elems[i], c.Args[2])
		}
		s.steps++
		return ir.MkPrim(c.P, "Vec_init", elems...)
	case "$zerosOfShape":
		// The zero accumulator of a small vector, its shape (its size)
		// a constant.
		n, ok := smallCount(c.Args[0])
		if !ok || n == 0 || !smallElem(c.T) || c.T.Elem.Kind != types.Float {
			return c
		}
		elems := make([]ir.Expr, n)
		for i := range elems {
			elems[i] = ir.Float(c.P, 0)
		}
		s.steps++
		return ir.MkPrim(c.P, "Vec_init", elems...)
	case "constVec":
		n, ok := smallCount(c.Args[0])
		if !ok || n == 0 || !ir.IsAtom(c.Args[1]) || !smallElem(c.T) {
			return c
		}
		elems := make([]ir.Expr, n)
		for i := range elems {
			elems[i] = ir.Copy(c.Args[1], c.P)
		}
		s.steps++
		return ir.MkPrim(c.P, "Vec_init", elems...)
	case "build":
		n, ok := smallCount(c.Args[0])
		lam, isLam := c.Args[1].(*ir.Lam)
		// An element that calls a function stays in the loop: unrolled,
		// an element never read would be dropped with its call, and the
		// call's failure with it (a recursion too deep).
		if !ok || n == 0 || !isLam || !smallElem(c.T) || lower.HasEffect(lam.Body, s.eff) || callsFunc(lam.Body) || n*ir.Size(lam.Body) > unrollBudget {
			return c
		}
		elems := make([]ir.Expr, n)
		for i := range elems {
			body := ir.Subst(ir.Copy(lam.Body, ir.Pos{}), map[string]ir.Expr{lam.Param.Name: ir.Int(c.P, int64(i))})
			elems[i] = s.expr(body, sc.without(lam.Param))
		}
		s.steps++
		return ir.MkPrim(c.P, "Vec_init", elems...)
	case "$unwrap":
		if x, ok := sc.unwrap(c); ok {
			s.steps++
			return x
		}
	case "$ifold", "$ifoldr":
		n, ok := smallCount(c.Args[0])
		lam, isLam := c.Args[2].(*ir.Lam)
		if !ok || !isLam || n*ir.Size(lam.Body) > unrollBudget {
			return c
		}
		s.steps++
		return s.unrollFold(c, n, lam, sc)
	}
	return c
}

// unrollFold returns the steps of ($ifold n s (lam (s_i) e)) (or $ifoldr),
// n a constant: lets binding each step's state, in the fold's order.
func (s *scalariser) unrollFold(c *ir.Call, n int, lam *ir.Lam, sc *scope) ir.Expr {
	st := c.Args[1]
	if n == 0 {
		return st
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
		if c.Prim.Name == "$ifoldr" {
			order[i] = n - 1 - i
		}
	}
	vars := make([]*ir.Var, n+1)
	for j := range vars {
		vars[j] = s.ns.FreshVar(c.P, "st", c.T)
	}
	var out ir.Expr = ir.Ref(c.P, vars[n])
	for j := n - 1; j >= 0; j-- {
		param := &ir.Var{P: lam.Param.P, T: lam.Param.T, Name: lam.Param.Name}
		arg := ir.MkTuple(c.P, ir.Ref(c.P, vars[j]), ir.Int(c.P, int64(order[j])))
		step := ir.MkLet(c.P, param, arg, ir.Copy(lam.Body, ir.Pos{}))
		out = ir.MkLet(c.P, vars[j+1], step, out)
	}
	return s.expr(ir.MkLet(c.P, vars[0], st, out), sc)
}

// vecInit returns e as a Vec_init of a small vector of scalars.
func vecInit(e ir.Expr) (*ir.Call, bool) {
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Name != "Vec_init" || len(c.Args) > smallVecMax || !smallElem(c.T) {
		return nil, false
	}
	return c, true
}

// smallElem reports whether t is a vector of Floats, Integers or Bools.
func smallElem(t *types.Type) bool {
	if t.Kind != types.Tensor || t.Rank != 1 {
		return false
	}
	k := t.Elem.Kind
	return k == types.Float || k == types.Integer || k == types.Bool
}

// let rewrites a let: its value, then its body with what the value tells
// of its variables.
func (s *scalariser) let(e *ir.Let, sc *scope) ir.Expr {
	rhs := s.expr(e.Rhs, sc)
	inner := sc.without(e.Vars...)
	if out, ok := s.splitIf(e, rhs, sc); ok {
		return out
	}
	if e.Pattern || len(e.Vars) != 1 {
		return &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: rhs, Body: s.expr(e.Body, inner), Of: e.Of}
	}
	v := e.Vars[0]
	// A small vector: its elements as atoms, bound first if they are not
	// (none may call a function: an element never read would be dropped
	// with its call, and the call's failure with it).
	if init, ok := vecInit(rhs); ok && !lower.HasEffect(init, s.eff) && !callsFunc(init) && !occursIn(init.Args, v.Name) {
		var pre []*ir.Let
		atoms := make([]ir.Expr, len(init.Args))
		for i, a := range init.Args {
			if ir.IsAtom(a) {
				atoms[i] = a
				continue
			}
			x := s.ns.FreshVar(a.Pos(), v.Name, a.Type())
			pre = append(pre, ir.MkLet(a.Pos(), x, a, nil))
			atoms[i] = ir.Ref(a.Pos(), x)
		}
		if len(pre) > 0 {
			s.steps++
			inner = inner.without(pre[0].Vars...)
			for _, l := range pre[1:] {
				inner = inner.without(l.Vars...)
			}
		}
		body := s.expr(e.Body, inner.with(v.Name, atoms, nil))
		var out ir.Expr = &ir.Let{P: e.P, Vars: e.Vars, Rhs: ir.MkPrim(init.P, "Vec_init", atoms...), Body: body, Of: e.Of}
		for i := len(pre) - 1; i >= 0; i-- {
			pre[i].Body = out
			out = pre[i]
		}
		return out
	}
	// A record of a split pass, its fields atoms.
	if w, ok := rhs.(*ir.Call); ok && w.Prim != nil && w.Prim.Name == "$wrap" {
		if t, ok := w.Args[0].(*ir.Tuple); ok && allAtoms(t.Elems) && !occursIn(t.Elems, v.Name) {
			return &ir.Let{P: e.P, Vars: e.Vars, Rhs: rhs, Body: s.expr(e.Body, inner.with(v.Name, nil, t)), Of: e.Of}
		}
	}
	return &ir.Let{P: e.P, Vars: e.Vars, Rhs: rhs, Body: s.expr(e.Body, inner), Of: e.Of}
}

// unwrap rewrites ($unwrap b) of a record b known in sc.
func (sc *scope) unwrap(c *ir.Call) (ir.Expr, bool) {
	if sc == nil || c.Prim == nil || c.Prim.Name != "$unwrap" {
		return nil, false
	}
	v, ok := c.Args[0].(*ir.Var)
	if !ok {
		return nil, false
	}
	t, ok := sc.records[v.Name]
	if !ok {
		return nil, false
	}
	return ir.Copy(t, c.P), true
}

// occursIn reports whether the variable name occurs in one of es (a
// vector's element would be its old value, shadowed by the let).
func occursIn(es []ir.Expr, name string) bool {
	for _, e := range es {
		if ir.Occurs(name, e) {
			return true
		}
	}
	return false
}

// callsFunc reports whether e calls a function (not a primitive).
func callsFunc(e ir.Expr) bool {
	return len(ir.Funcs(e)) > 0
}

// isChain reports whether e is a let or an assert: a chain of them with a
// value at its end.
func isChain(e ir.Expr) bool {
	switch e.(type) {
	case *ir.Let, *ir.Assert:
		return true
	}
	return false
}

func allAtoms(es []ir.Expr) bool {
	for _, e := range es {
		if !ir.IsAtom(e) {
			return false
		}
	}
	return true
}

// chainValue returns x, or, if x is a variable a let of items binds to
// a value made of atoms (a Vec_init, a tuple, a record or variant of a
// tuple), that value, if no later item binds an atom's name again (the
// atoms must be in scope at the end of the chain).
func chainValue(items []ir.Expr, x ir.Expr) ir.Expr {
	v, ok := x.(*ir.Var)
	if !ok {
		return x
	}
	for i := len(items) - 1; i >= 0; i-- {
		l, ok := items[i].(*ir.Let)
		if !ok || l.Pattern || len(l.Vars) != 1 || l.Vars[0].Name != v.Name {
			continue
		}
		atoms := madeOf(l.Rhs)
		if atoms == nil {
			return x
		}
		for _, later := range ir.ChainVars(items[i+1:]) {
			for _, a := range atoms {
				if w, ok := a.(*ir.Var); ok && w.Name == later.Name {
					return x
				}
			}
		}
		return l.Rhs
	}
	return x
}

// madeOf returns the atoms a small Vec_init, a tuple, or a record or
// variant of a tuple is made of, or nil if it is none of those or holds
// anything but atoms.
func madeOf(e ir.Expr) []ir.Expr {
	switch e := e.(type) {
	case *ir.Tuple:
		if allAtoms(e.Elems) {
			return append([]ir.Expr{}, e.Elems...)
		}
	case *ir.Call:
		if c, ok := vecInit(e); ok && allAtoms(c.Args) {
			return c.Args
		}
		if e.Prim != nil && (e.Prim.Name == "$wrap" || e.Prim.Name == "$inl" || e.Prim.Name == "$inr") {
			var out []ir.Expr
			for _, a := range e.Args {
				switch a := a.(type) {
				case *ir.Dummy:
				case *ir.Tuple:
					if !allAtoms(a.Elems) {
						return nil
					}
					out = append(out, a.Elems...)
				default:
					if !ir.IsAtom(a) {
						return nil
					}
					out = append(out, a)
				}
			}
			if out == nil {
				out = []ir.Expr{}
			}
			return out
		}
	}
	return nil
}

// splitIf rewrites a let of an if whose branches end in values the body
// takes apart, so that the if yields their parts, a variable each, and
// the body sees them (the let a pattern, the branches then ending in
// tuples, a field at a time):
//
//   - a small vector in both branches (or in one, the other a $dummy):
//     its elements, the vector made of them after;
//   - a tuple, or a record ($wrap) of a tuple: its fields, remade after;
//   - a variant, $inl in one branch and $inr in the other, that the body
//     reads only by $isl, $outl and $outr: whether it is the left one
//     and both alternatives (a $dummy for the one not taken), the reads
//     replaced by them.
//
// A field is split only if it holds a small vector in one branch. A split
// pass records the vectors of each branch of an if in a variant of
// records; taken apart, the vectors are small vectors again.
func (s *scalariser) splitIf(e *ir.Let, rhs ir.Expr, sc *scope) (ir.Expr, bool) {
	iff, ok := rhs.(*ir.If)
	if !ok {
		return nil, false
	}
	thItems, thTail := ir.ChainItems(iff.Then)
	elItems, elTail := ir.ChainItems(iff.Else)
	thFields, elFields := []ir.Expr{thTail}, []ir.Expr{elTail}
	if e.Pattern {
		tt, ok1 := thTail.(*ir.Tuple)
		et, ok2 := elTail.(*ir.Tuple)
		if !ok1 || !ok2 || len(tt.Elems) != len(e.Vars) || len(et.Elems) != len(e.Vars) {
			return nil, false
		}
		thFields, elFields = tt.Elems, et.Elems
	} else if len(e.Vars) != 1 {
		return nil, false
	}
	var vars []*ir.Var
	var th, el []ir.Expr
	var ts []*types.Type
	var after []*ir.Let
	subst := map[string][]*ir.Var{} // variant variable -> flag, left, right
	keep := func(v *ir.Var, a, b ir.Expr) {
		vars = append(vars, v)
		th, el, ts = append(th, a), append(el, b), append(ts, v.T)
	}
	split := false
	for j, v := range e.Vars {
		a, b := chainValue(thItems, thFields[j]), chainValue(elItems, elFields[j])
		if !holdsSmall(thItems, a, 0) && !holdsSmall(elItems, b, 0) {
			keep(v, thFields[j], elFields[j])
			continue
		}
		if s.splitVariant(e, v, a, b, &vars, &th, &el, &ts, subst) {
			split = true
			continue
		}
		parts, remake := splitParts(v.T, a, b)
		if parts == nil {
			keep(v, thFields[j], elFields[j])
			continue
		}
		split = true
		refs := make([]ir.Expr, len(parts))
		for i, pt := range parts {
			if k := constPart(pt); k != nil {
				refs[i] = k
				continue
			}
			x := s.ns.FreshVar(v.P, v.Name, pt.t)
			refs[i] = ir.Ref(v.P, x)
			vars = append(vars, x)
			th, el, ts = append(th, pt.a), append(el, pt.b), append(ts, pt.t)
		}
		after = append(after, ir.MkLet(e.P, v, remake(refs), nil))
	}
	if !split {
		return nil, false
	}
	tt := types.TupleOf(ts...)
	cond := &ir.If{P: iff.P, T: tt, Cond: iff.Cond,
		Then: ir.WrapChain(thItems, &ir.Tuple{P: thTail.Pos(), T: tt, Elems: th}),
		Else: ir.WrapChain(elItems, &ir.Tuple{P: elTail.Pos(), T: tt, Elems: el})}
	body := e.Body
	if len(subst) > 0 {
		body = readVariants(body, subst)
	}
	for i := len(after) - 1; i >= 0; i-- {
		after[i].Body = body
		body = after[i]
	}
	s.steps++
	return s.expr(&ir.Let{P: e.P, Vars: vars, Pattern: true, Rhs: cond, Body: body}, sc), true
}

// holdsSmall reports whether x, seen through the lets of items, is or
// holds (in a tuple, record or variant, to a depth of a few) a small
// Vec_init.
func holdsSmall(items []ir.Expr, x ir.Expr, depth int) bool {
	if depth > 4 {
		return false
	}
	x = chainValue(items, x)
	if _, ok := vecInit(x); ok {
		return true
	}
	var parts []ir.Expr
	switch x := x.(type) {
	case *ir.Tuple:
		parts = x.Elems
	case *ir.Call:
		if x.Prim != nil && (x.Prim.Name == "$wrap" || x.Prim.Name == "$inl" || x.Prim.Name == "$inr") {
			parts = x.Args
		}
	}
	for _, p := range parts {
		if t, ok := p.(*ir.Tuple); ok {
			p = t
		}
		if holdsSmall(items, p, depth+1) {
			return true
		}
	}
	return false
}

// constPart returns the constant a part is in the branch that gives it
// a value, the other a $dummy (or the same constant): a field of a
// record of one branch of a split pass, a size, read only where that
// branch was taken.
func constPart(pt part) ir.Expr {
	ka, okA := pt.a.(*ir.Const)
	kb, okB := pt.b.(*ir.Const)
	_, dA := pt.a.(*ir.Dummy)
	_, dB := pt.b.(*ir.Dummy)
	switch {
	case okA && (dB || okB && kb.Val == ka.Val && kb.T.Kind == ka.T.Kind):
		return ka
	case okB && dA:
		return kb
	}
	return nil
}

// A part is a part of a value split across an if's branches: its value in
// each branch and its type.
type part struct {
	a, b ir.Expr
	t    *types.Type
}

// splitParts returns the parts of the values a and b (of type t) that
// the branches of an if end in, and how to make the value of the parts'
// variables, if both are small vectors of the same count, tuples or
// records of tuples, or one is and the other a $dummy.
func splitParts(t *types.Type, a, b ir.Expr) ([]part, func([]ir.Expr) ir.Expr) {
	kind := func(x ir.Expr) (string, []ir.Expr) {
		switch x := x.(type) {
		case *ir.Dummy:
			return "dummy", nil
		case *ir.Tuple:
			return "tuple", x.Elems
		case *ir.Call:
			if c, ok := vecInit(x); ok {
				return "vec", c.Args
			}
			if x.Prim != nil && x.Prim.Name == "$wrap" {
				if tu, ok := x.Args[0].(*ir.Tuple); ok {
					return "wrap", tu.Elems
				}
			}
		}
		return "", nil
	}
	ka, ea := kind(a)
	kb, eb := kind(b)
	k := ka
	if ka == "dummy" {
		k = kb
	}
	if k == "" || k == "dummy" || kb != "dummy" && kb != k || ka == kb && len(ea) != len(eb) {
		return nil, nil
	}
	n := len(ea)
	if ka == "dummy" {
		n = len(eb)
	}
	var elemT []*types.Type
	switch k {
	case "vec":
		for range n {
			elemT = append(elemT, t.Elem)
		}
	case "tuple":
		elemT = t.Elems
	case "wrap":
		if t.Kind != types.Named || t.Def == nil || len(t.Def.Elems) != n {
			return nil, nil
		}
		elemT = t.Def.Elems
	}
	if len(elemT) != n {
		return nil, nil
	}
	parts := make([]part, n)
	for i := range parts {
		parts[i].t = elemT[i]
		parts[i].a, parts[i].b = &ir.Dummy{P: a.Pos(), T: elemT[i]}, &ir.Dummy{P: b.Pos(), T: elemT[i]}
		if ka != "dummy" {
			parts[i].a = ea[i]
		}
		if kb != "dummy" {
			parts[i].b = eb[i]
		}
	}
	p := a.Pos()
	return parts, func(refs []ir.Expr) ir.Expr {
		switch k {
		case "vec":
			return ir.MkPrim(p, "Vec_init", refs...)
		case "tuple":
			return &ir.Tuple{P: p, T: t, Elems: refs}
		}
		return ir.MkPrim(p, "$wrap", &ir.Tuple{P: p, T: t.Def, Elems: refs}, &ir.Dummy{P: p, T: t})
	}
}

// splitVariant splits a variant v that one branch makes by $inl and the
// other by $inr into whether it is the left one and both alternatives,
// appending them to the parts, if e's body reads v only by $isl, $outl
// and $outr; subst then maps v to their variables.
func (s *scalariser) splitVariant(e *ir.Let, v *ir.Var, a, b ir.Expr, vars *[]*ir.Var, th, el *[]ir.Expr, ts *[]*types.Type, subst map[string][]*ir.Var) bool {
	inj := func(x ir.Expr) string {
		if c, ok := x.(*ir.Call); ok && c.Prim != nil && (c.Prim.Name == "$inl" || c.Prim.Name == "$inr") {
			return c.Prim.Name
		}
		return ""
	}
	ia, ib := inj(a), inj(b)
	if ia == "" || ib == "" || ia == ib || v.T.Kind != types.Variant || !readsVariant(e.Body, v.Name) {
		return false
	}
	left, right := v.T.Elems[0], v.T.Elems[1]
	ca, cb := a.(*ir.Call), b.(*ir.Call)
	flag := s.ns.FreshVar(v.P, v.Name, types.BoolType)
	l := s.ns.FreshVar(v.P, v.Name, left)
	r := s.ns.FreshVar(v.P, v.Name, right)
	*vars = append(*vars, flag, l, r)
	*ts = append(*ts, types.BoolType, left, right)
	// ($inl x d) holds x, ($inr d y) holds y; the other argument is a
	// $dummy of the other alternative.
	*th = append(*th, ir.Bool(ca.P, ia == "$inl"), ca.Args[0], ca.Args[1])
	*el = append(*el, ir.Bool(cb.P, ib == "$inl"), cb.Args[0], cb.Args[1])
	subst[v.Name] = []*ir.Var{flag, l, r}
	return true
}

// readsVariant reports whether name occurs in e only as the argument of
// $isl, $outl and $outr, and is bound nowhere in e.
func readsVariant(e ir.Expr, name string) bool {
	if lower.Binds(e, name) {
		return false
	}
	ok := true
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Call:
			if x.Prim != nil && (x.Prim.Name == "$isl" || x.Prim.Name == "$outl" || x.Prim.Name == "$outr") {
				if _, isVar := x.Args[0].(*ir.Var); isVar {
					return false
				}
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

// readVariants replaces in e the reads of the variants of subst by the
// variables of their parts.
func readVariants(e ir.Expr, subst map[string][]*ir.Var) ir.Expr {
	return ir.Map(e, func(x ir.Expr) ir.Expr {
		c, ok := x.(*ir.Call)
		if !ok || c.Prim == nil || len(c.Args) != 1 {
			return x
		}
		v, ok := c.Args[0].(*ir.Var)
		if !ok || subst[v.Name] == nil {
			return x
		}
		parts := subst[v.Name]
		switch c.Prim.Name {
		case "$isl":
			return ir.Ref(c.P, parts[0])
		case "$outl":
			return ir.Ref(c.P, parts[1])
		case "$outr":
			return ir.Ref(c.P, parts[2])
		}
		return x
	})
}
