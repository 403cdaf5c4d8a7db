package bog

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Loops are the functions LoopTail defines: a tail recursion's passes as
// loops.
type Loops struct {
	// Fwd is [suffwdloop f] (x, parent): the forward pass from the level
	// of argument x down, whose record's parent is parent (a variant:
	// none, or the record of the level above).
	Fwd *ir.Func
	// Up is [bogup f] (dr, b, d): the reverse pass from the record b up
	// to the top, d being what the level below b returned.
	Up *ir.Func
}

// ParentType is the type of a record's link to the level above: a
// variant holding nothing (the top level) or the parent's record.
func ParentType(bog *types.Type) *types.Type {
	return types.VariantOf(types.Unit, types.TupleOf(bog))
}

// LoopTail rewrites the split passes of f, a function whose recursion is
// a tail call, into loops, and reports whether it did. A tail call's
// forward pass recorded the level below's BOG in each level's record, so
// it was a recursion making its record after the call returned, and the
// reverse pass was a recursion too, as deep as f's: f itself, a loop
// once compiled, ran at a fraction of the cost, and a deep recursion
// could exhaust the stack in the derivative only.
//
// After LoopTail each record holds its parent's instead (the level
// above), and the BOG [suffwdpass f] returns is the bottom level's
// record: [suffwdloop f] makes a level's record before it calls itself
// on the level below, a tail call, and [bogup f] walks from the bottom
// record to the top, applying at each level the reverse of its step to
// what the level below returned, a tail call too. This relies on the
// accumulator's meaning ([bogrev f](dr, b, acc) = acc + [sufrevpass
// f](dr, b), linear in acc): the level's reverse pass passes the parts
// of acc that it updates in place to the call below and adds the others
// afterwards, so the loop starts at the bottom with acc's in-place parts
// and zeros, and adds acc's other parts once at the top.
//
// The passes must have the shapes bog.Split gives a tail recursion after
// optimisation: the forward pass ending in an if whose one branch calls
// [suffwdpass f] and puts the BOG it returns into the variant it
// records, and the reverse pass calling [bogrev f] once, with dr itself,
// on that BOG, passing parts of acc or zeros; the parts of acc not passed
// (added afterwards) must have types whose zero has no size (Floats and
// tuples of them). Anything else is left as it is.
func LoopTail(p Passes, loops Loops, bog *types.Type, ns *ir.Names) bool {
	if p.Fwd == nil || p.RevAcc == nil || p.Fwd.Body == nil || p.RevAcc.Body == nil || bog.Def == nil {
		return false
	}
	fm, ok := matchFwd(p.Fwd)
	if !ok {
		return false
	}
	rm, ok := matchRev(p.RevAcc, fm.recIndex)
	if !ok {
		return false
	}
	var zero ir.Expr
	if p.Rev != nil {
		if zero, ok = matchSufRev(p.Rev); !ok {
			return false
		}
	}

	// The record's new type: the variant's recursive side without the
	// level below's BOG, and the parent last.
	pos := p.Fwd.P
	parentT := ParentType(bog)
	oldRec := bog.Def.Elems[fm.recIndex]
	sides := append([]*types.Type{}, oldRec.Elems...)
	sides[fm.recSide] = types.TupleOf(without(sides[fm.recSide].Elems, fm.payloadIndex)...)
	newRec := types.VariantOf(sides[0], sides[1])
	fields := append([]*types.Type{}, bog.Def.Elems...)
	fields[fm.recIndex] = newRec
	fields = append(fields, parentT)
	bog.SetDef(types.TupleOf(fields...))

	x := p.Fwd.Params[0]
	parent := ns.FreshVar(pos, "parent", parentT)
	loops.Fwd.Params = []*ir.Var{x, parent}
	loops.Fwd.Body = fm.loopBody(loops.Fwd, parent, newRec, bog)
	p.Fwd.Body = ir.CallFunc(pos, loops.Fwd, ir.Ref(pos, x), none(pos, bog))

	dr, b, acc := p.RevAcc.Params[0], p.RevAcc.Params[1], p.RevAcc.Params[2]
	d := ns.FreshVar(pos, "d", acc.T)
	loops.Up.Params = []*ir.Var{dr, b, d}
	loops.Up.Body = rm.upBody(loops.Up, p.RevAcc, dr, b, d, acc, newRec, parentT, ns)
	p.RevAcc.Body = rm.accBody(loops.Up, dr, b, acc, ns)

	if p.Rev != nil {
		// The zero gradient is made from the bottom record: the parts
		// passed down in place have the same sizes at every level, the
		// others have no sizes.
		dr, b := p.Rev.Params[0], p.Rev.Params[1]
		a := ns.FreshVar(pos, "acc", acc.T)
		body := ir.MkLet(pos, a, zero, ir.CallFunc(pos, p.RevAcc, ir.Ref(pos, dr), ir.Ref(pos, b), ir.Ref(pos, a)))
		p.Rev.Body = unpackRecord(pos, p.Rev.Body.(*ir.Let), fm.recIndex, newRec, ns.FreshVar(pos, "parent", parentT), body, "")
	}
	return true
}

// none is the parent of the top level.
func none(pos ir.Pos, bog *types.Type) ir.Expr {
	return ir.MkPrim(pos, "$inl", ir.MkTuple(pos), &ir.Dummy{P: pos, T: types.TupleOf(bog)})
}

func without(ts []*types.Type, i int) []*types.Type {
	return append(append([]*types.Type{}, ts[:i]...), ts[i+1:]...)
}

// fwdMatch is the forward pass of a tail recursion taken apart:
//
//	head...
//	(let ((r rec) (if cond then else))
//	  (tuple r ($wrap (tuple fields...) bog)))
//
// where one branch ends (tuple r2 ($inX _ (tuple ... b2 ...))) after
// pb = ([suffwdpass f] args), r2 = (get$1$2 pb), b2 = (get$2$2 pb).
type fwdMatch struct {
	head         []ir.Expr
	ifLet        *ir.Let
	fields       []ir.Expr // the record's fields, rec among them
	recIndex     int       // rec's position in the record
	recSide      int       // which side of the variant the recursive branch records
	payloadIndex int       // b2's position in that side's tuple
	recBranch    int       // 0: then, 1: else
	before       []ir.Expr // the recursive branch's items before the call
	args         ir.Expr   // the call's argument
	payload      []ir.Expr // the recursive side's tuple, b2 left out
}

func matchFwd(fp *ir.Func) (*fwdMatch, bool) {
	if len(fp.Params) != 1 {
		return nil, false
	}
	items, tail := ir.ChainItems(fp.Body)
	// The if binding (r rec) is the last let calling fp; the lets after it
	// (the argument's shape, for the zero gradient) must not read r or
	// rec, and move before it: the record is made in the branches.
	k := -1
	for i, it := range items {
		if callsFunc(it, fp) {
			k = i
		}
	}
	if k < 0 {
		return nil, false
	}
	l, ok := items[k].(*ir.Let)
	if !ok || !l.Pattern || len(l.Vars) != 2 {
		return nil, false
	}
	m := &fwdMatch{head: append(append([]ir.Expr{}, items[:k]...), items[k+1:]...)}
	for _, it := range items[k+1:] {
		after, ok := it.(*ir.Let)
		if !ok || ir.Occurs(l.Vars[0].Name, after.Rhs) || ir.Occurs(l.Vars[1].Name, after.Rhs) || hasEffect(after.Rhs) {
			return nil, false
		}
	}
	cond, ok := l.Rhs.(*ir.If)
	if !ok || callsFunc(cond.Cond, fp) {
		return nil, false
	}
	m.ifLet = l
	r, rec := l.Vars[0], l.Vars[1]
	t, ok := tail.(*ir.Tuple)
	if !ok || len(t.Elems) != 2 || !isRef(t.Elems[0], r.Name) {
		return nil, false
	}
	wrap, ok := t.Elems[1].(*ir.Call)
	if !ok || wrap.Prim == nil || wrap.Prim.Name != "$wrap" {
		return nil, false
	}
	ft, ok := wrap.Args[0].(*ir.Tuple)
	if !ok {
		return nil, false
	}
	m.fields, m.recIndex = ft.Elems, -1
	for i, e := range ft.Elems {
		if isRef(e, rec.Name) {
			if m.recIndex >= 0 {
				return nil, false
			}
			m.recIndex = i
		} else if !ir.IsAtom(e) || ir.Occurs(r.Name, e) {
			return nil, false
		}
	}
	if m.recIndex < 0 {
		return nil, false
	}
	branches := []ir.Expr{cond.Then, cond.Else}
	m.recBranch = -1
	for i, br := range branches {
		if callsFunc(br, fp) {
			if m.recBranch >= 0 {
				return nil, false
			}
			m.recBranch = i
		}
	}
	if m.recBranch < 0 || !m.matchRecBranch(fp, branches[m.recBranch]) {
		return nil, false
	}
	if _, bt := ir.ChainItems(branches[1-m.recBranch]); injected(bt) == nil {
		return nil, false
	}
	// The other branch's items must not bind a field's name, since the
	// record is now made inside the branches.
	other, _ := ir.ChainItems(branches[1-m.recBranch])
	for _, v := range ir.ChainVars(append(other, m.before...)) {
		for _, f := range m.fields {
			if ir.Occurs(v.Name, f) {
				return nil, false
			}
		}
	}
	return m, true
}

// matchRecBranch takes apart the recursive branch of the forward pass.
func (m *fwdMatch) matchRecBranch(fp *ir.Func, br ir.Expr) bool {
	items, tail := ir.ChainItems(br)
	k := -1
	for i, it := range items {
		if callsFunc(it, fp) {
			l, ok := it.(*ir.Let)
			if k >= 0 || !ok || len(l.Vars) != 1 && !(l.Pattern && len(l.Vars) == 2) {
				return false
			}
			c, ok := l.Rhs.(*ir.Call)
			if !ok || c.Fn != fp || len(c.Args) == 0 {
				return false
			}
			for _, a := range c.Args {
				if callsFunc(a, fp) {
					return false
				}
			}
			k, m.args = i, c.Args[0]
			if len(c.Args) > 1 {
				m.args = ir.MkTuple(c.P, c.Args...)
			}
		}
	}
	if k < 0 {
		return false
	}
	// The value and the BOG below: taken from the pair by gets, or by
	// the call's pattern (procedure-language passes).
	var pb, r2, b2 *ir.Var
	if l := items[k].(*ir.Let); l.Pattern {
		r2, b2 = l.Vars[0], l.Vars[1]
	} else {
		pb = l.Vars[0]
	}
	for _, it := range items[k+1:] {
		if a, ok := it.(*ir.Assert); ok && checkedBefore(a, items[:k]) {
			continue // made before the call (the record is made there)
		}
		l, ok := it.(*ir.Let)
		if !ok || len(l.Vars) != 1 {
			return false
		}
		g, ok := l.Rhs.(*ir.Get)
		if !ok || pb == nil || !isRef(g.X, pb.Name) || g.N != 2 {
			return false
		}
		switch {
		case g.I == 1 && r2 == nil:
			r2 = l.Vars[0]
		case g.I == 2 && b2 == nil:
			b2 = l.Vars[0]
		default:
			return false
		}
	}
	if r2 == nil || b2 == nil {
		return false
	}
	m.before = items[:k]
	t, ok := tail.(*ir.Tuple)
	if !ok || len(t.Elems) != 2 || !isRef(t.Elems[0], r2.Name) {
		return false
	}
	inj, ok := t.Elems[1].(*ir.Call)
	if !ok || inj.Prim == nil || (inj.Prim.Name != "$inl" && inj.Prim.Name != "$inr") {
		return false
	}
	m.recSide = 0
	if inj.Prim.Name == "$inr" {
		m.recSide = 1
	}
	pt, ok := inj.Args[m.recSide].(*ir.Tuple)
	if !ok {
		return false
	}
	m.payloadIndex = -1
	for i, e := range pt.Elems {
		switch {
		case isRef(e, b2.Name):
			if m.payloadIndex >= 0 {
				return false
			}
			m.payloadIndex = i
		case ir.Occurs(b2.Name, e) || ir.Occurs(r2.Name, e) || pb != nil && ir.Occurs(pb.Name, e):
			return false
		default:
			m.payload = append(m.payload, e)
		}
	}
	return m.payloadIndex >= 0
}

// loopBody is [suffwdloop f]'s body: each branch makes the level's
// record, the recursive one before it calls itself on the level below.
func (m *fwdMatch) loopBody(loop *ir.Func, parent *ir.Var, newRec, bog *types.Type) ir.Expr {
	pos := m.ifLet.P
	cond := m.ifLet.Rhs.(*ir.If)
	record := func(rec ir.Expr) ir.Expr {
		fs := append([]ir.Expr{}, m.fields...)
		fs[m.recIndex] = rec
		fs = append(fs, ir.Ref(pos, parent))
		return ir.MkPrim(pos, "$wrap", ir.MkTuple(pos, fs...), &ir.Dummy{P: pos, T: bog})
	}
	inject := func(side int, v ir.Expr) ir.Expr {
		args := []ir.Expr{&ir.Dummy{P: pos, T: newRec.Elems[0]}, &ir.Dummy{P: pos, T: newRec.Elems[1]}}
		args[side] = v
		return ir.MkPrim(pos, [2]string{"$inl", "$inr"}[side], args...)
	}
	branches := []ir.Expr{cond.Then, cond.Else}
	// The base branch: its value and the record of the bottom level.
	items, tail := ir.ChainItems(branches[1-m.recBranch])
	inj := injected(tail)
	side := 0
	if inj.Prim.Name == "$inr" {
		side = 1
	}
	base := ir.WrapChain(items, ir.MkTuple(pos, tail.(*ir.Tuple).Elems[0], record(inject(side, inj.Args[side]))))
	// The recursive branch: this level's record, then the level below.
	me := &ir.Var{P: pos, T: bog, Name: m.ifLet.Vars[1].Name}
	step := ir.MkLet(pos, me, record(inject(m.recSide, ir.MkTuple(pos, m.payload...))),
		ir.CallFunc(pos, loop, m.args,
			ir.MkPrim(pos, "$inr", ir.MkTuple(pos), ir.MkTuple(pos, ir.Ref(pos, me)))))
	rec := ir.WrapChain(m.before, step)
	out := []ir.Expr{nil, nil}
	out[m.recBranch], out[1-m.recBranch] = rec, base
	return ir.WrapChain(m.head, ir.MkIf(cond.P, cond.Cond, out[0], out[1]))
}

// revMatch is the reverse pass [bogrev f](dr, b, acc) of a tail
// recursion taken apart: its record unpacked, and the one call
// ([bogrev f] dr b2 A) on the level below's BOG b2, A passing parts of
// acc (the ones updated in place) or zeros.
type revMatch struct {
	unpack   *ir.Let // (let ((fields...) ($unwrap b)) rest)
	recIndex int
	call     *ir.Call
	below    string // b2's name
	pass     []bool // the parts of acc passed to the call
	parts    []*types.Type
}

func matchRev(rv *ir.Func, recIndex int) (*revMatch, bool) {
	if len(rv.Params) != 3 {
		return nil, false
	}
	dr, b, acc := rv.Params[0], rv.Params[1], rv.Params[2]
	u, ok := rv.Body.(*ir.Let)
	if !ok || !u.Pattern || !isUnwrap(u.Rhs, b) || recIndex >= len(u.Vars) || ir.Occurs(b.Name, u.Body) {
		return nil, false
	}
	m := &revMatch{unpack: u, recIndex: recIndex}
	rec := u.Vars[recIndex]
	bindings := map[string]ir.Expr{}
	accParts := map[string]int{} // the variables bound to acc's parts
	nCalls, accUses := 0, 0
	ok = true
	ir.Inspect(u.Body, func(e ir.Expr) bool {
		switch e := e.(type) {
		case *ir.Let:
			if len(e.Vars) == 1 && !e.Pattern {
				bindings[e.Vars[0].Name] = e.Rhs
			}
			if isRef(e.Rhs, acc.Name) {
				if e.Pattern {
					for i, v := range e.Vars {
						accParts[v.Name] = i
					}
				} else {
					accParts[e.Vars[0].Name] = -1
				}
			}
			if c, isCall := e.Rhs.(*ir.Call); isCall && c.Prim != nil && (c.Prim.Name == "$outl" || c.Prim.Name == "$outr") && isRef(c.Args[0], rec.Name) {
				// The level below's BOG is taken from the variant by a pattern.
				if !e.Pattern {
					ok = false
				}
			}
		case *ir.Var:
			if e.Name == acc.Name {
				accUses++
			}
		case *ir.Call:
			if e.Fn == rv {
				nCalls++
				m.call = e
			}
		}
		return true
	})
	if !ok || nCalls != 1 || accUses != 1 || len(m.call.Args) != 3 || !isRef(m.call.Args[0], dr.Name) {
		return nil, false
	}
	below, isVar := m.call.Args[1].(*ir.Var)
	if !isVar {
		return nil, false
	}
	m.below = below.Name
	// A, resolved through lets: a part of acc or a zero, per part.
	a := resolve(m.call.Args[2], bindings)
	m.parts = []*types.Type{acc.T}
	elems := []ir.Expr{a}
	if acc.T.Kind == types.Tuple {
		m.parts = acc.T.Elems
		t, isTuple := a.(*ir.Tuple)
		if !isTuple {
			return nil, false
		}
		elems = t.Elems
	}
	for i, e := range elems {
		e = resolve(e, bindings)
		if v, isVar := e.(*ir.Var); isVar {
			if k, isPart := accParts[v.Name]; isPart && (k == i || k == -1 && len(elems) == 1) {
				m.pass = append(m.pass, true)
				continue
			}
		}
		if !isZero(e, bindings) || !sizeless(m.parts[i]) {
			return nil, false
		}
		m.pass = append(m.pass, false)
	}
	return m, true
}

// upBody is [bogup f](dr, b, d): the level of record b, given what the
// level below returned (d, in place of the call), then the level above.
func (m *revMatch) upBody(up, rv *ir.Func, dr, b, d, acc *ir.Var, newRec, parentT *types.Type, ns *ir.Names) ir.Expr {
	pos := m.unpack.P
	// acc, as the level sees it: the parts passed down in place come
	// from below (at the bottom, the accumulator given at the top), the
	// others are zero (added once, at the top).
	parts := make([]ir.Expr, len(m.parts))
	for i, t := range m.parts {
		if m.pass[i] {
			parts[i] = part(pos, d, i, len(m.parts))
		} else {
			parts[i] = zeroOf(pos, t)
		}
	}
	accVal := parts[0]
	if acc.T.Kind == types.Tuple {
		accVal = ir.MkTuple(pos, parts...)
	}
	rest := ir.Map(m.unpack.Body, func(e ir.Expr) ir.Expr {
		if c, ok := e.(*ir.Call); ok && c.Fn == rv {
			return ir.Ref(c.P, d)
		}
		return e
	})
	result := ns.FreshVar(pos, "d", d.T)
	parent := ns.FreshVar(pos, "parent", parentT)
	next := ir.MkIf(pos, ir.MkPrim(pos, "$isl", ir.Ref(pos, parent)), ir.Ref(pos, result),
		ir.CallFunc(pos, up, ir.Ref(pos, dr), ir.MkGet(pos, 1, ir.MkPrim(pos, "$outr", ir.Ref(pos, parent))), ir.Ref(pos, result)))
	body := ir.MkLet(pos, acc, accVal, ir.MkLet(pos, result, rest, next))
	return unpackRecord(pos, m.unpack, m.recIndex, newRec, parent, body, m.below)
}

// accBody is the new [bogrev f](dr, b, acc): the loop from the bottom
// record b, started with acc's parts passed down and zeros, then acc's
// other parts added.
func (m *revMatch) accBody(up *ir.Func, dr, b, acc *ir.Var, ns *ir.Names) ir.Expr {
	pos := m.unpack.P
	n := len(m.parts)
	start := make([]ir.Expr, n)
	for i, t := range m.parts {
		if m.pass[i] {
			start[i] = part(pos, acc, i, n)
		} else {
			start[i] = zeroOf(pos, t)
		}
	}
	g := ns.FreshVar(pos, "g", acc.T)
	out := make([]ir.Expr, n)
	for i := range m.parts {
		if m.pass[i] {
			out[i] = part(pos, g, i, n)
		} else {
			out[i] = ir.MkPrim(pos, "ts_add", part(pos, acc, i, n), part(pos, g, i, n))
		}
	}
	if n == 1 && acc.T.Kind != types.Tuple {
		return ir.MkLet(pos, g, ir.CallFunc(pos, up, ir.Ref(pos, dr), ir.Ref(pos, b), start[0]), out[0])
	}
	return ir.MkLet(pos, g, ir.CallFunc(pos, up, ir.Ref(pos, dr), ir.Ref(pos, b), ir.MkTuple(pos, start...)),
		ir.MkTuple(pos, out...))
}

// matchSufRev returns the zero gradient [sufrevpass f] starts from:
// its body is (let ((fields...) ($unwrap b)) (let (acc zero) ...)).
func matchSufRev(rv *ir.Func) (ir.Expr, bool) {
	if len(rv.Params) != 2 {
		return nil, false
	}
	u, ok := rv.Body.(*ir.Let)
	if !ok || !u.Pattern || !isUnwrap(u.Rhs, rv.Params[1]) {
		return nil, false
	}
	z, ok := u.Body.(*ir.Let)
	if !ok || z.Pattern || len(z.Vars) != 1 {
		return nil, false
	}
	for _, v := range u.Vars {
		if v.T.Contains(types.Variant) && ir.Occurs(v.Name, z.Rhs) {
			return nil, false
		}
	}
	return z.Rhs, true
}

// unpackRecord is (let ((fields... parent) ($unwrap b)) body) for the
// new record type, from u, the old pass's unpacking: the variant field
// retyped, and in body its $outl/$outr without the level below's BOG
// (named below, if not "") in the pattern taking it apart.
func unpackRecord(pos ir.Pos, u *ir.Let, recIndex int, newRec *types.Type, parent *ir.Var, body ir.Expr, below string) ir.Expr {
	vars := append([]*ir.Var{}, u.Vars...)
	rec := &ir.Var{P: vars[recIndex].P, T: newRec, Name: vars[recIndex].Name}
	vars[recIndex] = rec
	vars = append(vars, parent)
	body = ir.Map(body, func(e ir.Expr) ir.Expr {
		switch e := e.(type) {
		case *ir.Var:
			if e.Name == rec.Name {
				return ir.Ref(e.P, rec)
			}
		case *ir.Call:
			if e.Prim != nil && (e.Prim.Name == "$outl" || e.Prim.Name == "$outr") {
				if v, ok := e.Args[0].(*ir.Var); ok && v.Name == rec.Name {
					return ir.MkPrim(e.P, e.Prim.Name, ir.Ref(e.P, rec))
				}
			}
		case *ir.Let:
			if c, ok := e.Rhs.(*ir.Call); ok && c.Prim != nil && (c.Prim.Name == "$outl" || c.Prim.Name == "$outr") && below != "" {
				var vs []*ir.Var
				for _, v := range e.Vars {
					if v.Name != below {
						vs = append(vs, v)
					}
				}
				if len(vs) == 0 {
					return e.Body
				}
				if len(vs) != len(e.Vars) {
					return &ir.Let{P: e.P, Vars: vs, Pattern: true, Rhs: e.Rhs, Body: e.Body, Of: e.Of}
				}
			}
		}
		return e
	})
	return &ir.Let{P: u.P, Vars: vars, Pattern: true, Rhs: ir.MkPrim(u.Rhs.Pos(), "$unwrap", u.Rhs.(*ir.Call).Args[0]), Body: body}
}

// part is the i-th of n parts of v (v itself if n is 1 and v no tuple).
func part(pos ir.Pos, v *ir.Var, i, n int) ir.Expr {
	if v.T.Kind != types.Tuple {
		return ir.Ref(pos, v)
	}
	return ir.MkGet(pos, i+1, ir.Ref(pos, v))
}

// sizeless reports whether t, a gradient's type, has zeros of no sizes:
// Floats and tuples of them.
func sizeless(t *types.Type) bool {
	return !t.Contains(types.Tensor) && !t.Contains(types.Named) && !t.Contains(types.Variant)
}

// zeroOf is the zero of a sizeless type.
func zeroOf(pos ir.Pos, t *types.Type) ir.Expr {
	if t.Kind == types.Float {
		return ir.Float(pos, 0)
	}
	elems := make([]ir.Expr, len(t.Elems))
	for i, e := range t.Elems {
		elems[i] = zeroOf(pos, e)
	}
	return ir.MkTuple(pos, elems...)
}

// isZero reports whether e (resolved through bindings) is a zero of a
// sizeless type.
func isZero(e ir.Expr, bindings map[string]ir.Expr) bool {
	e = resolve(e, bindings)
	switch e := e.(type) {
	case *ir.Const:
		f, ok := e.Val.(float64)
		return ok && f == 0
	case *ir.Tuple:
		for _, x := range e.Elems {
			if !isZero(x, bindings) {
				return false
			}
		}
		return true
	case *ir.Call:
		return e.Prim != nil && e.Prim.Name == "ts_zero" && sizeless(e.T)
	}
	return false
}

// resolve follows a variable to the expression a let binds it to.
func resolve(e ir.Expr, bindings map[string]ir.Expr) ir.Expr {
	for i := 0; i < 100; i++ {
		v, ok := e.(*ir.Var)
		if !ok {
			return e
		}
		rhs, ok := bindings[v.Name]
		if !ok {
			return e
		}
		e = rhs
	}
	return e
}

// checkedBefore reports whether one of the items asserts a's condition.
func checkedBefore(a *ir.Assert, items []ir.Expr) bool {
	for _, it := range items {
		if b, ok := it.(*ir.Assert); ok && ir.Equal(a.Cond, b.Cond) {
			return true
		}
	}
	return false
}

// hasEffect reports whether e may print or fail (or do anything but
// compute its value), conservatively: any call of a function or of a
// primitive not marked pure, but $shape (the shape recorded for the zero
// gradient).
func hasEffect(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && (c.Fn != nil || c.Prim != nil && !c.Prim.Pure && c.Prim.Name != "$shape") {
			found = true
		}
		return !found
	})
	return found
}

// injected returns the variant a branch of the forward pass records, if
// it ends in (tuple value ($inl/$inr ...)), else nil.
func injected(tail ir.Expr) *ir.Call {
	t, ok := tail.(*ir.Tuple)
	if !ok || len(t.Elems) != 2 {
		return nil
	}
	inj, ok := t.Elems[1].(*ir.Call)
	if !ok || inj.Prim == nil || (inj.Prim.Name != "$inl" && inj.Prim.Name != "$inr") {
		return nil
	}
	return inj
}

func isUnwrap(e ir.Expr, b *ir.Var) bool {
	c, ok := e.(*ir.Call)
	return ok && c.Prim != nil && c.Prim.Name == "$unwrap" && isRef(c.Args[0], b.Name)
}

// callsFunc reports whether e (or an item of a chain: a let or assert
// without a body) calls f.
func callsFunc(e ir.Expr, f *ir.Func) bool {
	switch it := e.(type) {
	case *ir.Let:
		if it.Body == nil {
			e = it.Rhs
		}
	case *ir.Assert:
		if it.Body == nil {
			e = it.Cond
		}
	}
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && c.Fn == f {
			found = true
		}
		return !found
	})
	return found
}
