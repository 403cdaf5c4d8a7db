package linmap

import (
	"fmt"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Forward returns m, a linear map (LM S T) that may be a let-program,
// applied to t, a tangent of S: an expression of the tangent type of T
// with no linear map left. Every linear-map variable of the program
// becomes a variable holding the tangent it maps t to.
//
// A part of t that is a zero (t a tuple written out, such as [jac f I]'s
// tangent, with ts_zero for the arguments it does not differentiate) is
// a structural zero: the map of a primal let that depends only on such
// parts is not applied, its tangent is ts_zero of the let's value, and
// a call's primal is not fused with a zero tangent.
func Forward(m, t ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	defer catch(&err)
	f := newFwd(sem{ns: ns, res: res})
	f.used = usedVars(m)
	b := &binder{ns: ns}
	f.setTangent(b, t)
	return b.wrap(f.conv(m)), nil
}

// newFwd returns a forward walk with the semantics s.
func newFwd(s sem) *fwd {
	return &fwd{sem: s, env: map[string]ir.Expr{}, ofs: map[string]*ir.Var{}, zero: map[string]bool{}}
}

// setTangent binds t, the tangent the map is applied to, by b; a tuple
// written out keeps its parts apart, those that are zeros marked
// (tZero).
func (f *fwd) setTangent(b *binder, t ir.Expr) {
	if tup, ok := t.(*ir.Tuple); ok {
		elems := make([]ir.Expr, len(tup.Elems))
		f.tZero = make([]bool, len(tup.Elems))
		for i, x := range tup.Elems {
			f.tZero[i] = zeroValue(x)
			elems[i] = b.atom(x)
		}
		t = ir.MkTuple(tup.P, elems...)
	}
	f.t = b.atom(t)
}

// primalTangent records, in hessians mode, that tv holds the tangent of
// the primal variable x (HessianPattern reads it where x scales a map).
func (f *fwd) primalTangent(x, tv *ir.Var) {
	if f.tanOf != nil {
		f.tanOf[x.Name] = ir.Ref(tv.P, tv)
	}
}

// zeroValue reports whether the tangent x is a zero by its expression.
func zeroValue(x ir.Expr) bool {
	switch x := x.(type) {
	case *ir.Call:
		return x.Prim != nil && x.Prim.Name == "ts_zero"
	case *ir.Const:
		return x.Val == 0.0
	}
	return false
}

// usedVars returns the names of the variables e refers to.
func usedVars(e ir.Expr) map[string]bool {
	used := map[string]bool{}
	ir.Inspect(e, func(x ir.Expr) bool {
		if v, ok := x.(*ir.Var); ok {
			used[v.Name] = true
		}
		return true
	})
	return used
}

// ForwardValue is Forward returning also the value of the primal program
// whose map m is (a Jacobian as derive builds it): the tuple (value,
// tangent), the primal computed once. It fails if the program's value
// cannot be found from its maps.
func ForwardValue(m, t ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	defer catch(&err)
	f := newFwd(sem{ns: ns, res: res})
	b := &binder{ns: ns}
	f.setTangent(b, t)
	withValue := f.withValue(m, nil)
	if withValue == nil {
		fail(m.Pos(), "internal: the value of the program is not bound to a variable")
	}
	f.used = usedVars(withValue)
	return b.wrap(f.conv(withValue)), nil
}

type fwd struct {
	sem
	t     ir.Expr
	tZero []bool             // the parts of t known to be zero, if t is a tuple
	env   map[string]ir.Expr // linear-map variable -> its tangent
	ofs   map[string]*ir.Var // linear-map variable -> the primal variable it is the map of
	used  map[string]bool    // the variables the program refers to
	zero  map[string]bool    // linear-map variables whose tangent is a structural zero
}

// zeroMap reports whether map m gives a structural zero: lmZero, a map
// variable known to, a composition with one, a sum or tuple of them, or a
// map of the input (free of map variables) that reads only its zero
// parts.
func (f *fwd) zeroMap(m ir.Expr) bool {
	switch e := m.(type) {
	case *ir.Var:
		return f.zero[e.Name]
	case *ir.Call:
		if e.Prim == nil || !e.Prim.LM {
			return false
		}
		a := e.Args
		switch e.Prim.Name {
		case "lmZero":
			return true
		case "lmCompose":
			return isZero(a[0]) || f.zeroMap(a[1])
		case "lmAdd":
			return f.zeroMap(a[0]) && f.zeroMap(a[1])
		case "lmVCat":
			for _, x := range a {
				if !f.zeroMap(x) {
					return false
				}
			}
			return true
		case "lmHCat":
			// Applied to the input t: zero if it reads only t's zero parts.
			if HasLMVar(e) || len(a) != len(f.tZero) {
				return false
			}
			for i, l := range a {
				if !isZero(l) && !f.tZero[i] {
					return false
				}
			}
			return true
		}
	}
	return false
}

// withValue returns the let-program m with its final map e replaced by
// (tuple v e), v the value e is the map of, or nil if v is not known. If
// m's map is zero, v is primal, the expression m's program computes (a
// branch of an if whose map is the zero map to the if's own value).
func (f *fwd) withValue(m, primal ir.Expr) ir.Expr {
	switch e := m.(type) {
	case *ir.Let:
		if e.Rhs.Type().Contains(types.LM) && len(e.Vars) == 1 && e.Of != nil {
			f.ofs[e.Vars[0].Name] = e.Of
		}
		body := f.withValue(e.Body, primal)
		if body == nil {
			return nil
		}
		return &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: e.Rhs, Body: body, Of: e.Of}
	case *ir.Assert:
		body := f.withValue(e.Body, primal)
		if body == nil {
			return nil
		}
		return &ir.Assert{P: e.P, Cond: e.Cond, Body: body, Msg: e.Msg}
	case *ir.Var:
		if of := f.ofs[e.Name]; of != nil && e.T.Kind == types.LM {
			return ir.MkTuple(e.P, ir.Ref(e.P, of), e)
		}
	case *ir.Call:
		if c, ok := isLMCall(e, "lmZero"); ok && !HasLMVar(e) {
			if primal == nil {
				primal = c.Args[1]
			}
			// The zero map to values like the value itself (the tuple
			// keeps a linear map, so that conv converts the whole).
			if !ir.IsAtom(primal) {
				v := f.ns.FreshVar(e.P, "v", primal.Type())
				return ir.MkLet(e.P, v, primal, ir.MkTuple(e.P, ir.Ref(e.P, v), ir.MkPrim(e.P, "lmZero", c.Args[0], ir.Ref(e.P, v))))
			}
			return ir.MkTuple(e.P, primal, ir.MkPrim(e.P, "lmZero", c.Args[0], primal))
		}
	}
	return nil
}

// fused converts the primal let x = rhs followed by the let of x's map
// into one let computing both, or returns nil: a call of g whose map is
// [D g] of the same argument (composed with the argument's map) becomes a
// call of [fwdfull g], and an if whose map is an if on the same condition
// becomes one if whose branches compute their value and tangent together.
// So neither a callee's primal code nor a branch's runs twice.
func (f *fwd) fused(e *ir.Let) ir.Expr {
	if e.Pattern || len(e.Vars) != 1 || f.mode != tangents {
		return nil
	}
	l, ok := e.Body.(*ir.Let)
	if !ok || l.Of == nil || l.Of.Name != e.Vars[0].Name || len(l.Vars) != 1 || l.Pattern {
		return nil
	}
	if f.zeroMap(l.Rhs) {
		return nil // the tangent is zero: the primal alone, then a zero
	}
	x, dx := e.Vars[0], l.Vars[0]
	var rhs ir.Expr
	b := &binder{ns: f.ns}
	switch r := e.Rhs.(type) {
	case *ir.Call:
		if r.Prim != nil {
			// A loop computing a value nothing uses is not worth
			// computing beside the tangent: the simplifier removes it.
			if !f.used[x.Name] {
				return nil
			}
			rhs = f.fusedLoop(r, l.Rhs, b)
			if rhs == nil {
				return nil
			}
			break
		}
		comp, ok := isLMCall(l.Rhs, "lmCompose")
		if !ok || r.Fn == nil {
			return nil
		}
		dc, g, ok := isDCall(comp.Args[0])
		if !ok || g != r.Fn || !sameExprs(dc.Args, r.Args) {
			return nil
		}
		if ffw, tan := f.chosenCall(g, comp.Args[1], true, b); ffw != nil {
			rhs = ir.CallFunc(r.P, ffw, callArg(r), tan)
			break
		}
		ff := f.res.FwdFull(g)
		if ff == nil {
			return nil
		}
		inner := b.atom(f.conv(comp.Args[1]))
		rhs = ir.CallFunc(r.P, ff, callArg(r), inner)
	case *ir.If:
		li, ok := l.Rhs.(*ir.If)
		if !ok || !ir.Equal(li.Cond, r.Cond) {
			return nil
		}
		then, els := f.withValue(li.Then, r.Then), f.withValue(li.Else, r.Else)
		if then == nil || els == nil {
			return nil
		}
		rhs = ir.MkIf(r.P, r.Cond, f.conv(then), f.conv(els))
	default:
		return nil
	}
	tx := f.ns.FreshVar(dx.P, "t"+dx.Name, f.convType(dx.T))
	f.env[dx.Name] = ir.Ref(dx.P, tx)
	f.ofs[dx.Name] = x
	return b.wrap(&ir.Let{P: e.P, Vars: []*ir.Var{x, tx}, Pattern: true, Rhs: rhs, Body: f.conv(l.Body)})
}

// chosenCall returns [fwdfull g I] (full) or [fwd g I] and the tangent
// to call it with, for a call of g whose argument's map is m, or nil: m
// is the tuple (lmVCat) of the maps of g's arguments, some of which, but
// not all, are structural zeros (or maps to values without a Float), and
// the program has the derivation of the others' positions I. The
// tangent, of those arguments only, is bound by b.
func (f *fwd) chosenCall(g *ir.Func, m ir.Expr, full bool, b *binder) (*ir.Func, ir.Expr) {
	vc, ok := isLMCall(m, "lmVCat")
	if !ok || g.Arg.Kind != types.Tuple || len(vc.Args) != len(g.Arg.Elems) {
		return nil, nil
	}
	var wrt []int
	for i, part := range vc.Args {
		if !f.zeroMap(part) && part.Type().To.Contains(types.Float) {
			wrt = append(wrt, i)
		}
	}
	if len(wrt) == 0 || len(wrt) == len(vc.Args) {
		return nil, nil
	}
	fw := f.res.FwdWrt(g, wrt, full)
	if fw == nil {
		return nil, nil
	}
	parts := make([]ir.Expr, len(wrt))
	for k, i := range wrt {
		parts[k] = b.atom(f.conv(vc.Args[i]))
	}
	if len(parts) == 1 {
		return fw, parts[0]
	}
	return fw, ir.MkTuple(m.Pos(), parts...)
}

// fusedLoop returns the loop computing the value of r, a build, sumbuild
// or fold, together with its tangent, where m, r's map, is the loop's
// map, or nil. A sumbuild sums (value, tangent) pairs; a build makes a
// vector of pairs and splits it (a copy, which costs less than running
// the body again); a fold carries both (foldState). b receives the lets
// the loop needs first.
func (f *fwd) fusedLoop(r *ir.Call, m ir.Expr, b *binder) ir.Expr {
	p := r.P
	mc, ok := m.(*ir.Call)
	if !ok || mc.Prim == nil {
		return nil
	}
	switch {
	case r.Prim.Name == "sumbuild" && mc.Prim.Name == "lmSumBuild",
		r.Prim.Name == "build" && mc.Prim.Name == "lmBuild":
		lam, mlam := r.Args[1].(*ir.Lam), mc.Args[1].(*ir.Lam)
		if !sameExprs(r.Args[:1], mc.Args[:1]) || lam.Param.Name != mlam.Param.Name {
			return nil
		}
		wv := f.withValue(mlam.Body, lam.Body)
		if wv == nil {
			return nil
		}
		loop := ir.MkPrim(p, r.Prim.Name, r.Args[0], ir.MkLam(lam.P, lam.Param, f.conv(wv)))
		if r.Prim.Name == "sumbuild" {
			return loop
		}
		pairs := b.atom(loop)
		part := func(k int) ir.Expr {
			j := f.ns.FreshVar(p, "j", lam.Param.T) // an index of the build's rank
			return ir.MkPrim(p, "build", ir.MkPrim(p, "size", pairs),
				ir.MkLam(p, j, ir.MkGet(p, k, ir.MkPrim(p, "index", ir.Ref(p, j), pairs))))
		}
		return ir.MkTuple(p, part(1), part(2))
	case r.Prim.Name == "fold" && mc.Prim.Name == "lmFold":
		if !ir.Equal(mc.Args[0], r.Args[0]) || !sameExprs(r.Args[1:3], mc.Args[2:4]) {
			return nil
		}
		return f.foldState(mc, b)
	}
	return nil
}

// sameExprs reports whether two lists of expressions are the same.
func sameExprs(a, b []ir.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !ir.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// convType maps a type holding linear maps to the type of their tangents
// (of their patterns in pattern mode).
func (s *sem) convType(t *types.Type) *types.Type {
	switch t.Kind {
	case types.LM:
		return s.tanType(t.To)
	case types.Tuple:
		elems := make([]*types.Type, len(t.Elems))
		for i, e := range t.Elems {
			elems[i] = s.convType(e)
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
	if c, ok := isLMCall(e, "lmFold"); ok {
		return f.fold(c)
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
			if f.rhsOf != nil && len(e.Vars) == 1 && !e.Pattern {
				f.rhsOf[e.Vars[0].Name] = e.Rhs
			}
			if out := f.fused(e); out != nil {
				return out
			}
			return &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: e.Rhs, Body: f.conv(e.Body)}
		}
		if len(e.Vars) == 1 && !e.Pattern && e.Of != nil && f.zeroMap(e.Rhs) {
			// A structural zero: the tangent of e.Of's value is zero.
			v := e.Vars[0]
			tv := f.ns.FreshVar(v.P, "t"+v.Name, f.convType(v.T))
			f.env[v.Name] = ir.Ref(v.P, tv)
			f.ofs[v.Name] = e.Of
			f.zero[v.Name] = true
			f.primalTangent(e.Of, tv)
			return &ir.Let{P: e.P, Vars: []*ir.Var{tv}, Rhs: f.zeroOf(e.P, ir.Ref(e.P, e.Of)), Body: f.conv(e.Body)}
		}
		rhs := f.conv(e.Rhs)
		vars := make([]*ir.Var, len(e.Vars))
		for i, v := range e.Vars {
			vars[i] = f.ns.FreshVar(v.P, "t"+v.Name, f.convType(v.T))
			f.env[v.Name] = ir.Ref(v.P, vars[i])
			if e.Of != nil && len(e.Vars) == 1 {
				f.ofs[v.Name] = e.Of
				f.primalTangent(e.Of, vars[i])
			}
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
			if dc, g, ok := isDCall(a[0]); ok && f.mode == tangents {
				if fw, tan := f.chosenCall(g, a[1], false, b); fw != nil {
					return b.wrap(ir.CallFunc(p, fw, callArg(dc), tan))
				}
			}
			inner := b.atom(f.conv(a[1]))
			return b.wrap(f.ap(a[0], inner))
		case "lmAdd":
			// A structural zero adds nothing.
			if f.zeroMap(a[0]) && !f.zeroMap(a[1]) {
				return f.conv(a[1])
			}
			if f.zeroMap(a[1]) {
				return f.conv(a[0])
			}
			return f.plus(p, f.conv(a[0]), f.conv(a[1]))
		case "lmVCat":
			elems := make([]ir.Expr, len(a))
			for i, x := range a {
				elems[i] = f.conv(x)
			}
			return ir.MkTuple(p, elems...)
		case "lmBuild":
			lam := a[1].(*ir.Lam)
			return ir.MkPrim(p, "build", a[0], ir.MkLam(lam.P, lam.Param, f.conv(lam.Body)))
		case "lmSumBuild":
			lam := a[1].(*ir.Lam)
			if out := f.sparseSum(p, a[0], lam, f.conv); out != nil {
				return out
			}
			return f.sumOver(p, a[0], lam, f.conv(lam.Body))
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
	return reverse(m, r, acc, ns, res, false)
}

// ReverseValue is Reverse returning also the value of the primal program
// whose map m is (a Jacobian as derive builds it, whose result's map is
// bound to a variable with Let.Of set): the tuple (value, accumulator).
func ReverseValue(m, r, acc ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	return reverse(m, r, acc, ns, res, true)
}

func reverse(m, r, acc ir.Expr, ns *ir.Names, res Resolver, withValue bool) (out ir.Expr, err error) {
	defer catch(&err)
	rv := &rev{sem: sem{ns: ns, res: res, bogs: map[*ir.Call]ir.Expr{}, tapes: map[*ir.Call]ir.Expr{}}, slots: map[string]*slot{}, blk: &block{}}
	rr := rv.blk.atom(ns, r)
	a := rv.blk.atom(ns, acc)
	rv.root = rv.splitRoot(a)
	rv.uses = map[string]int{}
	rv.elems = &elemUses{at: map[string][]ir.Expr{}, defs: map[string]ir.Expr{}}
	ir.Inspect(m, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Var:
			if x.T.Kind == types.LM {
				rv.uses[x.Name]++
			}
		case *ir.Call:
			if ix, w, ok := elementMap(x); ok {
				rv.elems.at[w.Name] = append(rv.elems.at[w.Name], ix)
			}
		case *ir.Let:
			if !x.Pattern && len(x.Vars) == 1 && !x.Rhs.Type().Contains(types.LM) {
				rv.elems.defs[x.Vars[0].Name] = x.Rhs
			}
		}
		return true
	})
	rv.wantValue = withValue
	rv.program(m, rr)
	grad := rv.value(rv.root, a.Pos())
	if withValue {
		if rv.primal == nil {
			fail(m.Pos(), "internal: the value of the program is not bound to a variable")
		}
		return rv.blk.wrap(ir.MkTuple(m.Pos(), rv.primal, grad)), nil
	}
	return rv.blk.wrap(grad), nil
}

// splitRoot returns the slot of the source's accumulator a (an atom),
// kept one field at a time, at any depth, so that a parameter's map, or a
// field's of a tuple parameter, adds into its own field.
func (rv *rev) splitRoot(a ir.Expr) *slot {
	t := a.Type()
	if t.Kind != types.Tuple || len(t.Elems) == 0 {
		return &slot{cur: a, typ: t}
	}
	parts := make([]*ir.Var, len(t.Elems))
	for i, et := range t.Elems {
		parts[i] = rv.ns.FreshVar(a.Pos(), "acc", et)
	}
	rv.blk.let(&ir.Let{P: a.Pos(), Vars: parts, Pattern: true, Rhs: a})
	s := &slot{typ: t}
	for _, v := range parts {
		s.parts = append(s.parts, rv.splitRoot(ir.Ref(v.P, v)))
	}
	return s
}

// A slot is an accumulator of cotangents: of one linear-map variable, or
// of the source. Variables bound to the identity or a projection of the
// source share the source's slot (or a field of it).
type slot struct {
	cur   ir.Expr // the current value (an atom), or nil before the first contribution
	of    *ir.Var // the primal variable whose tangent map it is, if known
	typ   *types.Type
	parts []*slot // a tuple accumulator kept one slot per field
	sink  bool    // contributions are dropped (the zero map)
	once  bool    // the variable is used once: its one contribution needs no copy

	// alias, for the variable of (lmCompose (lmIndex i v) w) whose values
	// hold vectors, with w used nowhere else: the slot starts as element i
	// of w's accumulator instead of a zero, so contributions go straight
	// into the gradient, and aliased says it did. When the let is reached,
	// the element is stored back ($setAt), which adds nothing new in place
	// and makes the functional reading (the CL evaluator) agree.
	alias   *elemOf
	aliased bool

	// pend are contributions not yet made, each reverse-applying a map
	// that writes one element (sparse: an lmIndex nearest the source):
	// when the let is reached, its own map is composed with each, so an
	// element goes straight into the accumulator below, where a zero the
	// size of the variable's value would otherwise be made and added (for
	// (index j (index i m)) in a loop, a row per element: quadratic). A
	// slot holds several only if its let's map writes one element of a
	// variable's accumulator too (elemMap), so that composing it with each
	// costs no more than applying it once. Any other use of the slot makes
	// them first (initSlot).
	pend    []pending
	elemMap bool
}

// pending is a contribution, r reverse-applied to l, not yet made.
type pending struct {
	l, r ir.Expr
	p    ir.Pos
}

// elemOf names element idx of the accumulator of slot acc.
type elemOf struct {
	acc *slot
	idx ir.Expr
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
	uses  map[string]int   // occurrences of each linear-map variable
	elems *elemUses        // the elements of linear-map variables the program takes

	wantValue bool    // the top-level program's value is wanted (ReverseValue)
	primal    ir.Expr // and here it is
	ofs       map[string]*ir.Var
}

// value returns a slot's current value (a tuple of its fields' values for
// a split slot), initialising it if needed.
func (rv *rev) value(s *slot, p ir.Pos) ir.Expr {
	if s.parts != nil {
		elems := make([]ir.Expr, len(s.parts))
		for i, q := range s.parts {
			elems[i] = rv.value(q, p)
		}
		return rv.blk.atom(rv.ns, ir.MkTuple(p, elems...))
	}
	rv.initSlot(s, p, nil)
	return s.cur
}

// set gives a slot a new value (splitting it into the fields of a split slot).
func (rv *rev) set(s *slot, e ir.Expr) {
	if s.sink {
		return
	}
	if s.parts == nil {
		s.cur = rv.blk.atom(rv.ns, e)
		return
	}
	vars := make([]*ir.Var, len(s.parts))
	for i, q := range s.parts {
		vars[i] = rv.ns.FreshVar(e.Pos(), "acc", q.typ)
	}
	rv.blk.let(&ir.Let{P: e.Pos(), Vars: vars, Pattern: true, Rhs: e})
	for i, q := range s.parts {
		if q.parts != nil {
			rv.set(q, ir.Ref(e.Pos(), vars[i])) // a field that is a tuple of slots (tupleSlot)
			continue
		}
		q.cur = ir.Ref(e.Pos(), vars[i])
	}
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
	var bound []string
	for {
		switch e := m.(type) {
		case *ir.Let:
			if !e.Rhs.Type().Contains(types.LM) {
				if !rv.splitCall(e) && !rv.splitFold(e) {
					rv.blk.let(&ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: e.Rhs})
				}
				m = e.Body
				continue
			}
			if e.Pattern || len(e.Vars) != 1 || e.Rhs.Type().Kind != types.LM {
				fail(e.P, "ksc cannot reverse-apply a pattern binding linear maps")
			}
			v := e.Vars[0]
			bound = append(bound, v.Name)
			if rv.ofs == nil {
				rv.ofs = map[string]*ir.Var{}
			}
			rv.ofs[v.Name] = e.Of
			if s := rv.rootMap(e.Rhs); s != nil {
				rv.slots[v.Name] = s // shares the source's accumulator
			} else if s := rv.tupleSlot(e.Rhs, v); s != nil {
				rv.slots[v.Name] = s // its fields share their variables' accumulators
			} else if s := rv.fieldSlot(e.Rhs); s != nil {
				rv.slots[v.Name] = s // a field of a tuple whose slot is kept by fields
			} else {
				s := &slot{of: e.Of, typ: tangent(v.T.To), once: rv.uses[v.Name] == 1}
				s.alias = rv.elementOf(e.Rhs, s.typ)
				s.elemMap = elemMap(e.Rhs)
				rv.slots[v.Name] = s
				lets = append(lets, lmLet{v: v, rhs: e.Rhs})
			}
			m = e.Body
			continue
		case *ir.Assert:
			rv.blk.items = append(rv.blk.items, &ir.Assert{P: e.P, Cond: e.Cond, Msg: e.Msg})
			m = e.Body
			continue
		}
		break
	}
	if rv.wantValue {
		rv.wantValue = false // only the top level's
		rv.primal = rv.valueOf(m)
	}
	rv.contribute(m, r)
	for i := len(lets) - 1; i >= 0; i-- {
		l := lets[i]
		s := rv.slots[l.v.Name]
		switch {
		case s.aliased:
			acc := s.alias.acc
			rv.set(acc, ir.MkPrim(l.v.P, "$setAt", rv.value(acc, l.v.P), s.alias.idx, s.cur))
		case s.pend != nil:
			ds := s.pend
			s.pend = nil
			for _, d := range ds {
				rv.contribute(ir.MkPrim(d.p, "lmCompose", d.l, l.rhs), d.r)
			}
		case s.cur != nil:
			rv.contribute(l.rhs, s.cur)
		}
	}
	for _, n := range bound {
		delete(rv.slots, n)
	}
}

// splitCall binds the primal let y = (g a), for a recursive g whose map
// the next let composes, through g's split passes: y is the value of
// [suffwdpass g](a), and the BOG it records is what reverse-applying
// [D g] a reads ([bogrev g], see sem.accR). So the reverse pass of each
// level of a recursion does not run the levels below it again. It reports
// whether it did. A call whose value the rest does not read, of a g that
// prints nothing, stays a call: it is dead, and [revacc g] runs each level
// once (a tail call), recording nothing.
func (rv *rev) splitCall(e *ir.Let) bool {
	c, ok := e.Rhs.(*ir.Call)
	if !ok || c.Fn == nil || e.Pattern || len(e.Vars) != 1 {
		return false
	}
	l, ok := e.Body.(*ir.Let)
	if !ok || l.Of == nil || l.Of.Name != e.Vars[0].Name {
		return false
	}
	comp, ok := isLMCall(l.Rhs, "lmCompose")
	if !ok {
		return false
	}
	dc, g, ok := isDCall(comp.Args[0])
	if !ok || g != c.Fn || !sameExprs(dc.Args, c.Args) {
		return false
	}
	// The value is read if the reverse pass needs it (a map scaled by it,
	// a primal let such a map needs), or if it is the program's value.
	read := rv.wantValue || readByReverse(e.Vars[0].Name, l.Body)
	fwd, _ := rv.res.Split(g, read)
	if fwd == nil {
		return false
	}
	p := e.P
	pb := rv.ns.FreshVar(p, "pb", fwd.Result)
	rv.blk.let(&ir.Let{P: p, Vars: []*ir.Var{pb}, Rhs: ir.CallFunc(c.P, fwd, callArg(c))})
	rv.blk.let(&ir.Let{P: p, Vars: e.Vars, Rhs: ir.MkGet(p, 1, ir.Ref(p, pb))})
	rv.bogs[dc] = rv.blk.atom(rv.ns, ir.MkGet(p, 2, ir.Ref(p, pb)))
	return true
}

// readByReverse reports whether the reverse pass of the let-program rest
// needs the value of the primal variable name: its result's map or a
// linear map of a let mentions it (or is the map of it, when it is a
// tensor, whose shape may shape a zero cotangent), an assert does, or a
// primal let whose value is itself needed. A primal let that only the
// program's value reads does not count: the caller asks whether the value
// is wanted separately. So (add (g x) (h x)) in reverse mode calls
// [revacc g], which computes and consumes g's values in one pass, rather
// than g's split passes, which record them.
func readByReverse(name string, rest ir.Expr) bool {
	items, tail := ir.ChainItems(rest)
	need := ir.FreeVars(tail)
	for i := len(items) - 1; i >= 0; i-- {
		switch it := items[i].(type) {
		case *ir.Assert:
			for n := range ir.FreeVars(it.Cond) {
				need[n] = true
			}
		case *ir.Let:
			if it.Rhs.Type().Contains(types.LM) {
				for n := range ir.FreeVars(it.Rhs) {
					need[n] = true
				}
				if it.Of != nil && !it.Of.T.IsUniform() {
					need[it.Of.Name] = true
				}
				continue
			}
			for _, v := range it.Vars {
				if need[v.Name] {
					for n := range ir.FreeVars(it.Rhs) {
						need[n] = true
					}
					break
				}
			}
		}
	}
	return need[name]
}

// splitFold binds the primal let x = (fold f init v), whose map the next
// let is, from the tape of accumulators the reverse pass reads: x is the
// tape's last entry, and the lmFold reverse-applies the tape (rev.fold).
// So the fold's steps run once, for the tape. It reports whether it did.
func (rv *rev) splitFold(e *ir.Let) bool {
	c, ok := e.Rhs.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Name != "fold" || e.Pattern || len(e.Vars) != 1 {
		return false
	}
	l, ok := e.Body.(*ir.Let)
	if !ok || l.Of == nil || l.Of.Name != e.Vars[0].Name {
		return false
	}
	mc, ok := isLMCall(l.Rhs, "lmFold")
	if !ok || !ir.Equal(mc.Args[0], c.Args[0]) || !sameExprs(c.Args[1:3], mc.Args[2:4]) {
		return false
	}
	p := c.P
	lam, init, v := c.Args[0].(*ir.Lam), c.Args[1], c.Args[2]
	tape := rv.blk.atom(rv.ns, ir.MkPrim(p, "$foldtape", lam, init, v))
	rv.tapes[mc] = tape
	n := rv.blk.atom(rv.ns, ir.MkPrim(p, "size", v))
	rv.blk.let(&ir.Let{P: e.P, Vars: e.Vars, Rhs: ir.MkPrim(p, "index", n, tape)})
	return true
}

// valueOf returns the primal value whose map m is: the variable a
// linear-map variable's let is Of, or the value a zero map is to.
func (rv *rev) valueOf(m ir.Expr) ir.Expr {
	if v, ok := m.(*ir.Var); ok {
		if of, known := rv.ofs[v.Name]; known && of != nil {
			return ir.Ref(v.P, of)
		}
	}
	if c, ok := isLMCall(m, "lmZero"); ok {
		return c.Args[1]
	}
	return nil
}

// rootMap returns the slot a map of the source adds into, for the
// identity (the source's slot), a projection (the field's slot) and the
// zero map (a sink); nil for any other map.
func (rv *rev) rootMap(m ir.Expr) *slot {
	if HasLMVar(m) {
		return nil
	}
	if _, ok := isLMCall(m, "lmOne"); ok {
		return rv.root
	}
	if k, ok := projection(m); ok && rv.root.parts != nil {
		return rv.root.parts[k]
	}
	if c, ok := isLMCall(m, "lmCompose"); ok {
		// A projection of a map whose slot is kept by fields: that field.
		if k, ok := projection(c.Args[0]); ok {
			if s := rv.rootMap(c.Args[1]); s != nil && s.parts != nil && !s.sink {
				return s.parts[k]
			}
		}
	}
	if isZero(m) {
		return &slot{sink: true, typ: tangent(target(m))}
	}
	return nil
}

// fieldSlot returns the slot of a variable bound to m, a projection to
// field k of a linear-map variable whose slot is kept by fields (the
// source's, split by splitRoot, or a tupleSlot): that field's slot, shared;
// or, m being such a variable itself, its slot.
// So a tuple parameter taken apart, (let ((q z) x) ...), adds into the
// fields of the accumulator itself, with no zero of its own.
func (rv *rev) fieldSlot(m ir.Expr) *slot {
	if w, ok := m.(*ir.Var); ok {
		// Another name for a map kept by fields (a pattern's tuple).
		if s, inScope := rv.slots[w.Name]; inScope && !s.sink && s.parts != nil {
			clearOnce(s)
			return s
		}
		return nil
	}
	c, ok := isLMCall(m, "lmCompose")
	if !ok {
		return nil
	}
	k, ok := projection(c.Args[0])
	w, isVar := c.Args[1].(*ir.Var)
	if !ok || !isVar {
		return nil
	}
	s, inScope := rv.slots[w.Name]
	if !inScope || s.sink || s.parts == nil || k >= len(s.parts) {
		return nil
	}
	q := s.parts[k]
	clearOnce(q) // the field now has the contributions of two variables
	return q
}

// clearOnce marks s and its fields as slots that may receive more than
// one contribution.
func clearOnce(s *slot) {
	s.once = false
	for _, q := range s.parts {
		clearOnce(q)
	}
}

// tupleSlot returns the slot of v, bound to m, if m is a tuple of maps
// (lmVCat) each a linear-map variable in scope or zero: a slot whose
// fields are those variables' slots (sinks for the zeros), so that what is
// added into v goes straight into them, with no zero tuple made to hold it
// and added into them when v's let is reached. It returns nil if two
// fields would share an accumulator (a tuple passed whole to [revacc g]
// must not hold one buffer twice) or v is not such a tuple.
func (rv *rev) tupleSlot(m ir.Expr, v *ir.Var) *slot {
	c, ok := isLMCall(m, "lmVCat")
	if !ok {
		return nil
	}
	t := tangent(v.T.To)
	s := &slot{typ: t}
	leaves := map[*slot]bool{}
	for i, a := range c.Args {
		if isZero(a) {
			if !t.Elems[i].IsUniform() {
				return nil // as below
			}
			s.parts = append(s.parts, &slot{sink: true, typ: t.Elems[i]})
			continue
		}
		av, ok := a.(*ir.Var)
		if !ok {
			return nil
		}
		q, inScope := rv.slots[av.Name]
		if !inScope || overlaps(leaves, q) || q.sink && !q.typ.IsUniform() {
			return nil // a sink's zero, passed to a call, would need a shape
		}
		markLeaves(leaves, q)
		s.parts = append(s.parts, q)
	}
	if rv.uses[v.Name] != 1 {
		// Each use of v adds into the fields' slots: none has a single
		// contribution any more.
		clearOnce(s)
	}
	return s
}

// initSlot gives an untouched slot its zero, shaped by example (or, if
// nil, by the slot's primal variable).
func (rv *rev) initSlot(s *slot, p ir.Pos, example ir.Expr) {
	if ds := s.pend; ds != nil {
		s.pend = nil
		rv.initSlot(s, ds[0].p, rv.example(ds[0].l))
		for _, d := range ds {
			rv.set(s, rv.accR(d.l, d.r, s.cur))
		}
		return
	}
	if s.cur != nil || s.parts != nil {
		return
	}
	if a := s.alias; a != nil && (a.acc.cur != nil || a.acc.parts != nil || a.acc.of == nil) {
		// Only into an accumulator that exists: one still untouched may
		// take its contributions pending (slot.pend) and never be made.
		acc := rv.value(s.alias.acc, p)
		s.cur = rv.blk.atom(rv.ns, ir.MkPrim(p, "index", s.alias.idx, acc))
		s.aliased = true
		s.once = false
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

// elementOf returns the element of an accumulator that the slot, of
// tangent type t, of a variable bound to m may start as (see slot.alias),
// or nil.
func (rv *rev) elementOf(m ir.Expr, t *types.Type) *elemOf {
	c, ok := isLMCall(m, "lmCompose")
	if !ok || t.IsUniform() {
		return nil
	}
	ix, ok := isLMCall(c.Args[0], "lmIndex")
	w, isVar := c.Args[1].(*ir.Var)
	if !ok || !isVar || !ir.IsAtom(ix.Args[0]) || !rv.elems.distinct(w.Name, rv.uses[w.Name]) {
		return nil
	}
	acc, bound := rv.slots[w.Name]
	if !bound || acc.sink || acc.parts != nil || acc.alias != nil {
		return nil
	}
	return &elemOf{acc: acc, idx: ix.Args[0]}
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

// add adds the cotangent r into a slot.
func (rv *rev) add(s *slot, r ir.Expr, p ir.Pos) {
	switch {
	case s.sink:
	case s.parts != nil:
		for i, q := range s.parts {
			rv.add(q, rv.blk.atom(rv.ns, ir.MkGet(p, i+1, r)), p)
		}
	case s.cur == nil && s.once && s.alias == nil && s.pend == nil:
		s.cur = r // its only contribution: no copy needed, nothing will add into it
	default:
		if s.cur == nil {
			rv.initSlot(s, p, r)
		}
		rv.set(s, ir.MkPrim(p, "$addTo", s.cur, r))
	}
}

// addR adds r reverse-applied to the map l (free of linear-map variables)
// into a slot, in place.
func (rv *rev) addR(s *slot, l, r ir.Expr, p ir.Pos) {
	if s.sink || isZero(l) {
		return
	}
	if s.parts == nil && s.cur == nil && sparse(l) && (s.elemMap || s.once && s.pend == nil) {
		s.pend = append(s.pend, pending{l: l, r: r, p: p})
		return
	}
	if s.parts == nil {
		rv.initSlot(s, p, rv.example(l))
		s.once = false
	} else {
		rv.initLeaves(s, p, rv.example(l))
	}
	rv.set(s, rv.accR(l, r, rv.value(s, p)))
}

// initLeaves initialises the untouched slots among the fields of s, at any
// depth, shaped by the fields of example (see tupleSlot).
func (rv *rev) initLeaves(s *slot, p ir.Pos, example ir.Expr) {
	for i, q := range s.parts {
		switch {
		case q.parts != nil:
			rv.initLeaves(q, p, rv.blk.atom(rv.ns, ir.MkGet(p, i+1, example)))
		case q.cur == nil && !q.sink && q.of == nil && q.alias == nil && !q.typ.IsUniform():
			rv.initSlot(q, p, rv.blk.atom(rv.ns, ir.MkGet(p, i+1, example)))
		}
	}
}

// contribute adds r reverse-applied to m into the accumulators.
func (rv *rev) contribute(m ir.Expr, r ir.Expr) {
	p := m.Pos()
	if zeroMap(m) {
		return // adding nothing: no slot may change (one inside a loop would escape it)
	}
	if c, ok := isLMCall(m, "lmFold"); ok {
		rv.fold(c, r)
		return
	}
	if !HasLMVar(m) {
		rv.addR(rv.root, m, r, p)
		return
	}
	switch e := m.(type) {
	case *ir.Var:
		rv.add(rv.slotOf(e), r, p)
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
			if isZero(l) {
				return
			}
			if v, ok := n.(*ir.Var); ok {
				rv.addR(rv.slotOf(v), l, r, p)
				return
			}
			if c, ok := isLMCall(n, "lmCompose"); ok && !HasLMVar(c.Args[0]) {
				// l ∘ (n1 ∘ n2) = (l ∘ n1) ∘ n2: reverse-applied as one
				// map into n2's slot, which an index in n1 updates in
				// place (see slot.pend).
				rv.contribute(ir.MkPrim(p, "lmCompose", ir.MkPrim(p, "lmCompose", l, c.Args[0]), c.Args[1]), r)
				return
			}
			if c, ok := isLMCall(n, "lmVCat"); ok && rv.allVars(c.Args) {
				rv.composeVCat(l, c.Args, r)
				return
			}
			if ix, ok := isLMCall(l, "lmIndex"); ok {
				if b, ok := isLMCall(n, "lmBuild"); ok && ix.Args[0].Type().Kind == types.Integer {
					// (index k) ∘ (build n (λi. m)) = m[i := k]: one
					// element's map, not a loop over the n (f reads
					// (index k (build ...)) as one element too).
					lam := ir.FreshBinders(b.Args[1], rv.ns).(*ir.Lam) // its binders land among others
					rv.contribute(&ir.Let{P: p, Vars: []*ir.Var{lam.Param}, Rhs: ix.Args[0], Body: lam.Body}, r)
					return
				}
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
			var check ir.Expr
			if e.Prim.Name == "lmBuild" {
				check = r
			}
			rv.loop(e, a[0], lam, check, func(in *rev, i ir.Expr) {
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

// sparse reports whether reverse-applying m writes one element of its
// source: m is an index, or a composition whose map nearest the source is.
func sparse(m ir.Expr) bool {
	if _, ok := isLMCall(m, "lmIndex"); ok {
		return true
	}
	if c, ok := isLMCall(m, "lmCompose"); ok {
		return sparse(c.Args[1])
	}
	return false
}

// elemMap reports whether m is a sparse map (see sparse) composed with a
// linear-map variable: reverse-applied to a cotangent with one non-zero
// element, it adds one element into the variable's accumulator.
func elemMap(m ir.Expr) bool {
	c, ok := isLMCall(m, "lmCompose")
	if !ok || !sparse(c.Args[0]) {
		return false
	}
	if _, ok := c.Args[1].(*ir.Var); ok {
		return true
	}
	return elemMap(c.Args[1])
}

// allVars reports whether every map is a linear-map variable or a zero.
func (rv *rev) allVars(ms []ir.Expr) bool {
	for _, m := range ms {
		if _, ok := m.(*ir.Var); !ok && !isZero(m) {
			return false
		}
	}
	return true
}

// composeVCat adds r reverse-applied to l ∘ (m1 × ... × mn), each mi a
// variable or zero: the slots of the mi are passed together, as one tuple
// accumulator, to l (for a call of [D g], into [revacc g], which updates
// them in place).
//
// A slot may be passed only once: when the same accumulator stands in
// two positions (a variable passed twice, (g u u), or two variables
// sharing the source's accumulator), the transpose of that duplication
// is addition. So every position after the first that reaches a slot
// already passed gets a fresh zero accumulator of its own, and what l
// adds into it is added into the shared slot afterwards.
func (rv *rev) composeVCat(l ir.Expr, ms []ir.Expr, r ir.Expr) {
	p := l.Pos()
	exv := rv.blk.atom(rv.ns, rv.example(l))
	slots := make([]*slot, len(ms))
	for i, m := range ms {
		if v, ok := m.(*ir.Var); ok && !rv.slotOf(v).sink {
			slots[i] = rv.slotOf(v)
		} else {
			slots[i] = &slot{sink: true}
		}
	}
	type later struct{ tmp, into *slot }
	var adds []later
	passed := map[*slot]bool{}
	whole := &slot{typ: tangent(exv.Type())}
	for i, s := range slots {
		q := s
		switch {
		case s.sink:
			q = &slot{typ: tangent(exv.Type().Elems[i])}
		case overlaps(passed, s):
			q = &slot{typ: tangent(exv.Type().Elems[i])}
			adds = append(adds, later{tmp: q, into: s})
		default:
			markLeaves(passed, s)
		}
		if q.parts == nil && q.cur == nil {
			rv.initSlot(q, p, ir.MkGet(p, i+1, exv))
		} else if q.parts != nil {
			rv.initLeaves(q, p, rv.blk.atom(rv.ns, ir.MkGet(p, i+1, exv)))
		}
		q.once = false
		whole.parts = append(whole.parts, q)
	}
	rv.set(whole, rv.accR(l, r, rv.value(whole, p)))
	for _, a := range adds {
		a.into.once = false
		rv.add(a.into, a.tmp.cur, p)
	}
}

// overlaps reports whether a leaf of the slot s (s itself, or the slots
// of its fields) is in set.
func overlaps(set map[*slot]bool, s *slot) bool {
	if set[s] {
		return true
	}
	for _, q := range s.parts {
		if overlaps(set, q) {
			return true
		}
	}
	return false
}

// markLeaves puts s and the slots of its fields in set.
func markLeaves(set map[*slot]bool, s *slot) {
	set[s] = true
	for _, q := range s.parts {
		markLeaves(set, q)
	}
}

// zeroMap reports whether m is zero: lmZero, or a composition with it.
func zeroMap(m ir.Expr) bool {
	if isZero(m) {
		return true
	}
	if c, ok := isLMCall(m, "lmCompose"); ok {
		return zeroMap(c.Args[0]) || zeroMap(c.Args[1])
	}
	return false
}

func isZero(m ir.Expr) bool {
	_, ok := isLMCall(m, "lmZero")
	return ok
}

// sub returns a generator for nested code with its own block.
func (rv *rev) sub() *rev {
	return &rev{sem: rv.sem, blk: &block{}, slots: map[string]*slot{}, root: rv.root, uses: rv.uses, elems: rv.elems}
}

// leafSlots returns the distinct slots that code reverse-applying ms adds
// into: those of the linear-map variables they mention, and the source's
// (field by field) if they have parts free of variables.
func (rv *rev) leafSlots(ms ...ir.Expr) []*slot {
	var out []*slot
	seen := map[*slot]bool{}
	addSlot := func(s *slot) {
		var leaves []*slot
		var flat func(s *slot)
		flat = func(s *slot) {
			if s.parts != nil {
				for _, q := range s.parts {
					flat(q)
				}
			} else if !s.sink {
				leaves = append(leaves, s)
			}
		}
		flat(s)
		for _, q := range leaves {
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	for _, m := range ms {
		ir.Inspect(m, func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok && v.T.Kind == types.LM {
				if s, inScope := rv.slots[v.Name]; inScope {
					addSlot(s)
				}
			}
			return true
		})
		if hasLeaf(m) {
			addSlot(rv.root)
		}
	}
	return out
}

// hasLeaf reports whether the map m has a part that mentions no
// linear-map variable and is not zero: such a part adds into the source.
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

// carry initialises the slots that code inside a loop or a branch adds
// into, and returns them with their current values.
func (rv *rev) carry(p ir.Pos, ms ...ir.Expr) ([]*slot, []ir.Expr) {
	slots := rv.leafSlots(ms...)
	vals := make([]ir.Expr, len(slots))
	for i, s := range slots {
		rv.initSlot(s, p, nil)
		s.once = false
		vals[i] = s.cur
	}
	return slots, vals
}

// enter returns a generator for code inside a loop or branch, in which
// each carried slot is replaced by one holding cur[i].
func (rv *rev) enter(carried []*slot, cur []ir.Expr) *rev {
	in := rv.sub()
	inner := map[*slot]*slot{}
	for i, s := range carried {
		inner[s] = &slot{cur: cur[i], of: s.of, typ: s.typ}
	}
	var mapSlot func(s *slot) *slot
	mapSlot = func(s *slot) *slot {
		if q, ok := inner[s]; ok {
			return q
		}
		if s.parts != nil {
			q := &slot{typ: s.typ}
			for _, part := range s.parts {
				q.parts = append(q.parts, mapSlot(part))
			}
			inner[s] = q
			return q
		}
		return s
	}
	for k, s := range rv.slots {
		in.slots[k] = mapSlot(s)
	}
	in.root = mapSlot(rv.root)
	return in
}

// leave returns the values of the inner slots standing for carried ones.
func (in *rev) leave(outer *rev, carried []*slot) []ir.Expr {
	var out []ir.Expr
	find := func(s *slot) *slot {
		for k, o := range outer.slots {
			if o == s {
				return in.slots[k]
			}
		}
		return nil
	}
	for _, s := range carried {
		q := find(s)
		if q == nil {
			q = findPart(outer.root, in.root, s)
		}
		if q == nil {
			panic("linmap: lost a carried slot")
		}
		out = append(out, q.cur)
	}
	return out
}

// findPart finds, in the inner root, the slot standing for the outer slot s.
func findPart(outer, inner *slot, s *slot) *slot {
	if outer == s {
		return inner
	}
	for i, q := range outer.parts {
		if r := findPart(q, inner.parts[i], s); r != nil {
			return r
		}
	}
	return nil
}

// rebind binds the carried values returned by code (a tuple) to the slots.
func (rv *rev) rebind(p ir.Pos, carried []*slot, tuple ir.Expr) {
	vars := make([]*ir.Var, len(carried))
	for i, s := range carried {
		vars[i] = rv.ns.FreshVar(p, "acc", s.cur.Type())
	}
	rv.blk.let(&ir.Let{P: p, Vars: vars, Pattern: true, Rhs: tuple})
	for i, s := range carried {
		s.cur = ir.Ref(p, vars[i])
	}
}

// loop reverse-applies the maps of a lmBuild or lmSumBuild: a loop over
// the index space carrying the accumulators its body adds into. A
// non-nil check is the cotangent of a build's result, whose size is
// checked (checkedSize).
func (rv *rev) loop(e *ir.Call, n ir.Expr, lam *ir.Lam, check ir.Expr, body func(in *rev, i ir.Expr)) {
	p := e.P
	carried, vals := rv.carry(p, lam.Body)
	if len(carried) == 0 {
		return
	}
	init := ir.Expr(ir.MkTuple(p, vals...))
	if check != nil {
		init = checkedSize(p, n, check, init)
	}
	res := rv.sem.loop(p, n, lam, init, func(i, st ir.Expr) ir.Expr {
		vars := make([]*ir.Var, len(vals))
		cur := make([]ir.Expr, len(vals))
		for k, v := range vals {
			vars[k] = rv.ns.FreshVar(p, "acc", v.Type())
			cur[k] = ir.Ref(p, vars[k])
		}
		in := rv.enter(carried, cur)
		body(in, i)
		out := in.blk.wrap(ir.MkTuple(p, in.leave(rv, carried)...))
		return &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: st, Body: out}
	})
	rv.rebind(p, carried, res)
}

// branches reverse-applies an if choosing between maps (REVIF): each
// branch adds into the union of the accumulators either touches.
func (rv *rev) branches(e *ir.If, r ir.Expr) {
	p := e.P
	carried, vals := rv.carry(p, e.Then, e.Else)
	if len(carried) == 0 {
		return
	}
	arm := func(m ir.Expr) ir.Expr {
		in := rv.enter(carried, vals)
		in.contribute(m, r)
		return in.blk.wrap(ir.MkTuple(p, in.leave(rv, carried)...))
	}
	rv.rebind(p, carried, ir.MkIf(p, e.Cond, arm(e.Then), arm(e.Else)))
}

// elemUses records, for each linear-map variable w, the indices of the
// elements (lmCompose (lmIndex i) w) the program takes of it, and the
// primal lets binding variables (to prove two indices different).
//
// A slot may start as element i of w's accumulator (slot.alias) only if
// nothing else adds into that element before the slot's value is stored
// back: in place, a contribution to the element would go into the slot
// too and count once, but read functionally (the CL evaluator, and the
// $setAt that stores the slot back) the store would drop it. So every use
// of w must be such an element, at indices that are all different: two
// rows of one matrix, (index (mul 2 i) m) and (index (add (mul 2 i) 1) m),
// each passed to a call (LSTM's weights and biases), are accumulated in
// place, where each would otherwise start as a zero row that is then added
// in.
type elemUses struct {
	at   map[string][]ir.Expr
	defs map[string]ir.Expr
}

// elementMap reports whether c is (lmCompose (lmIndex i) w) for an atom i
// and a variable w.
func elementMap(c *ir.Call) (ir.Expr, *ir.Var, bool) {
	if c.Prim == nil || c.Prim.Name != "lmCompose" || len(c.Args) != 2 {
		return nil, nil, false
	}
	ix, ok := isLMCall(c.Args[0], "lmIndex")
	w, isVar := c.Args[1].(*ir.Var)
	if !ok || !isVar || !ir.IsAtom(ix.Args[0]) {
		return nil, nil, false
	}
	return ix.Args[0], w, true
}

// distinct reports whether all the uses (of uses in all) of the
// linear-map variable w are elements at indices known to differ.
func (u *elemUses) distinct(w string, uses int) bool {
	at := u.at[w]
	if len(at) != uses {
		return false
	}
	for a := range at {
		for b := a + 1; b < len(at); b++ {
			if !u.differ(at[a], at[b]) {
				return false
			}
		}
	}
	return true
}

// differ reports whether the Integer atoms a and b are known to differ:
// different constants, or a base and an offset from it, (add x c) and x
// or (add x c1) and (add x c2), with different constant offsets.
func (u *elemUses) differ(a, b ir.Expr) bool {
	ba, oa := u.offset(a, 0)
	bb, ob := u.offset(b, 0)
	return ba == bb && oa != ob
}

// offset returns e as a base and a constant offset: the base is "" for
// a constant, else the expression the chain of additions of constants
// starts from, printed with each variable bound to an operation on atoms
// replaced by that operation (so two lets of (mul 2 i) are one base).
func (u *elemUses) offset(e ir.Expr, depth int) (string, int64) {
	if n, ok := constInt(e); ok {
		return "", n
	}
	v, ok := e.(*ir.Var)
	if !ok {
		return ir.FormatExpr(e), 0
	}
	def := u.defs[v.Name]
	if depth > 8 || def == nil {
		return v.Name, 0
	}
	if ir.IsAtom(def) {
		return u.offset(def, depth+1) // a copy, or a constant
	}
	c, ok := def.(*ir.Call)
	if !ok || c.Prim == nil {
		return v.Name, 0
	}
	if len(c.Args) == 2 && (c.Prim.Name == "add" || c.Prim.Name == "sub") {
		x, k := c.Args[0], c.Args[1]
		if _, ok := x.(*ir.Const); ok && c.Prim.Name == "add" {
			x, k = k, x // (add c x)
		}
		if n, ok := constInt(k); ok {
			if c.Prim.Name == "sub" {
				n = -n
			}
			base, off := u.offset(x, depth+1)
			return base, off + n
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if !ir.IsAtom(a) {
			return v.Name, 0
		}
		base, off := u.offset(a, depth+1)
		args[i] = fmt.Sprintf("%s+%d", base, off)
	}
	return "(" + c.Prim.Name + " " + strings.Join(args, " ") + ")", 0
}

// constInt returns the value of an Integer constant.
func constInt(e ir.Expr) (int64, bool) {
	c, ok := e.(*ir.Const)
	if !ok {
		return 0, false
	}
	n, ok := c.Val.(int64)
	return n, ok
}
