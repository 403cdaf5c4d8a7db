package proc

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// A Resolver gives the reverse translation what it needs of the program.
type Resolver interface {
	// Passes returns [suffwdpass g], [sufrevpass g] and [bogrev g], g's
	// split passes, for a call of g whose reverse pass is needed.
	Passes(g *ir.Func, pos ir.Pos) (fwd, rev, revAcc *ir.Func, err error)
	// Rule returns the derivative rule of part k of a primitive (Prim.D),
	// type-checked over the parameters x0, x1, ... and r.
	Rule(pr *ir.Prim, k int, params []*ir.Var) (ir.Expr, error)
}

// A Split is a function's split reverse mode by the rules of Figure 23:
// F[[p]], the forward pass, and R[[p]], the reverse pass, the variables
// Υ_p that F binds and R reads being the record (the tape).
type Split struct {
	// Fwd, over the block's inputs, is (tuple value tape).
	Fwd ir.Expr
	// Tape is the variable holding the tape (a tuple) in the reverse
	// passes.
	Tape *ir.Var
	// RevAcc, over the tape variable, the cotangent dr and the
	// accumulator acc (the cotangent of the inputs, one parameter or a
	// tuple of them) is acc plus the gradient.
	RevAcc ir.Expr
	// Rev, over the tape variable and dr, is the gradient.
	Rev ir.Expr
}

// Reverse translates b, a single-use block over params, to its split
// reverse mode (Figure 23). dr and acc are the variables the reverse
// passes read besides the tape. Cotangents the translation knows to be zero are
// not made: a Const's, an Elim's, a call's whose value's cotangent is
// zero (the call runs as a primal call and records nothing); zeros are
// made only where a value is needed, from the shape of the variable,
// recorded.
func Reverse(b *Block, params []*ir.Var, dr, acc *ir.Var, res Resolver, ns *ir.Names) (s *Split, err error) {
	defer catch(&err)
	t := &trans{res: res, ns: ns, def: map[string]*btape{}, root: map[string]*ir.Var{}, elem: map[string]*part{}, tapes: map[*Call]*ir.Var{},
		variant: map[*Case]*ir.Var{}, acc: map[string]ir.Expr{}, forced: map[string]bool{}, avail: map[string]bool{},
		loopTape: map[*Loop]*ir.Var{}, foldTape: map[*Fold]*ir.Var{}, stmt: map[string]Stmt{}, cheap: map[string]bool{}, leaf: map[string]*ir.Var{}, shared: map[string]bool{}}
	top := t.newTape(b, params, nil, false)
	p := b.Result.P
	// A parameter holding a tensor accumulates its cotangent in place
	// from an accumulator each pass binds first: [bogrev f]'s acc, or
	// zeros in [sufrevpass f].
	accIn := make([]*ir.Var, len(params))
	for i, v := range params {
		if t.accMode(v) {
			dt, _ := types.Tangent(v.T)
			accIn[i] = ns.FreshVar(p, "acc", dt)
			t.acc[v.Name] = ir.Ref(p, accIn[i])
		}
	}
	env := map[string]*cot{}
	var items []ir.Expr
	t.contribute(&items, env, b.Result, &cot{atom: ir.Ref(dr.P, dr)})
	t.rev(b, env, &items, top)
	grads := make([]*cot, len(params))
	for i, v := range params {
		if accIn[i] != nil {
			grads[i] = &cot{atom: t.acc[v.Name], owned: true}
		} else {
			grads[i] = env[v.Name]
		}
	}

	// The accumulating pass's prologue and ending, and the zero the
	// other starts it from, before the tape is fixed: the zero reads
	// the shapes of the parameters.
	var accPro, accEnd []ir.Expr
	accFields := []ir.Expr{ir.Ref(p, acc)}
	if len(params) > 1 {
		fields := make([]*ir.Var, len(params))
		for i, v := range params {
			dt, _ := types.Tangent(v.T)
			fields[i] = ns.FreshVar(p, "acc", dt)
		}
		accPro = append(accPro, &ir.Let{P: p, Vars: fields, Pattern: true, Rhs: ir.Ref(p, acc)})
		accFields = make([]ir.Expr, len(params))
		for i, f := range fields {
			accFields[i] = ir.Ref(p, f)
		}
	}
	sums := make([]ir.Expr, len(params))
	zeros := make([]ir.Expr, len(params))
	for i, v := range params {
		zeros[i] = zero(p, v.T, t.shapeOf(v))
		if accIn[i] != nil {
			accPro = append(accPro, &ir.Let{P: p, Vars: []*ir.Var{accIn[i]}, Rhs: accFields[i]})
			sums[i] = grads[i].atom
			continue
		}
		sums[i] = t.addInto(&accEnd, accFields[i], grads[i])
	}
	sum, zeroAcc := sums[0], zeros[0]
	if len(params) > 1 {
		sum, zeroAcc = ir.MkTuple(p, sums...), ir.MkTuple(p, zeros...)
	}
	revAcc := ir.WrapChain(accPro, ir.WrapChain(items, ir.WrapChain(accEnd, sum)))

	fwdItems, value, tapeVal := t.fwd(b, top)
	tape := ns.FreshVar(p, "tape", tapeVal.Type())
	s = &Split{Fwd: ir.WrapChain(fwdItems, ir.MkTuple(p, ir.Ref(p, value), tapeVal)), Tape: tape}
	s.RevAcc = top.unpack(ir.Ref(p, tape), nil, revAcc)
	// The other pass is the accumulating one from zero, bound first (the
	// shape of [sufrevpass f] loop-tail recognises).
	s.Rev = top.unpack(ir.Ref(p, tape), []ir.Expr{ir.MkLet(p, acc, zeroAcc, nil)}, ir.Copy(revAcc, ir.Pos{}))
	return s, nil
}

// A cot is a cotangent as the translation knows it: nil is zero, atom
// an expression holding it (a variable, or an expression used once),
// parts a tuple's cotangent field by field. owned says no other value
// shares atom's storage, so an accumulator may start as it.
type cot struct {
	atom  ir.Expr
	parts []*cot
	owned bool
}

// A btape is what F binds in one block for R to read: recorded variables
// (by the names F binds them), in order.
type btape struct {
	b      *Block
	parent *btape // the tape of the block around b, nil for the body's
	loop   bool   // b is a loop's or a fold's body
	rec    []*ir.Var
	seen   map[string]bool
	// again are the variables R binds itself at the start of b's reverse,
	// in order: a copy Dup made, bound to the variable it copies, and a
	// value recomputed from others rather than recorded.
	again  []*ir.Let
	shapes []*ir.Var // of the variables shapeOf recorded the shape of
	shOf   []*ir.Var
	shape  map[string]*ir.Var
}

// loopOf returns the tape of the innermost loop or fold body around tp's
// block, nil outside loops.
func (tp *btape) loopOf() *btape {
	for ; tp != nil; tp = tp.parent {
		if tp.loop {
			return tp
		}
	}
	return nil
}

type trans struct {
	res  Resolver
	ns   *ir.Names
	def  map[string]*btape  // the tape of the block binding a variable
	root map[string]*ir.Var // the variable a copy Dup made copies
	elem map[string]*part   // a variable bound to a part of a tensor-holding one
	// acc holds the accumulators started: for a variable holding a
	// tensor (accMode), by the name of the variable its copies copy, the
	// sum of its uses' cotangents so far, added into in place.
	acc     map[string]ir.Expr
	tapes   map[*Call]*ir.Var // the record of a split call
	variant map[*Case]*ir.Var // the record of a case: which branch ran, and its tape
	btapes  map[*Block]*btape // the tape of each block
	// forced are the variables (by the name of the variable their copies
	// copy) accumulated inside a loop's reverse though not in accMode:
	// the loop's state sums their cotangents over the iterations.
	forced map[string]bool
	// avail are the variables the reverse pass binds itself (a loop's
	// index), which no tape records.
	avail    map[string]bool
	loopTape map[*Loop]*ir.Var // the per-iteration tapes of a loop
	foldTape map[*Fold]*ir.Var // the per-step tapes of a fold
	noTapes  bool              // F of a block whose tape nothing reads
	// stmt is the statement binding each variable; cheap memoises
	// isCheap, and leaf holds a cheap variable's leaf.
	stmt  map[string]Stmt
	cheap map[string]bool
	leaf  map[string]*ir.Var
	// shared are the accumulators (by variable name) that are values
	// other values share, copied before they are updated in place (own).
	shared map[string]bool
}

// newTape makes the tape of block b, whose inputs are ins, inside the
// block of tape parent (nil for the body), b being a loop's or fold's
// body if loop.
func (t *trans) newTape(b *Block, ins []*ir.Var, parent *btape, loop bool) *btape {
	tp := &btape{b: b, parent: parent, loop: loop, seen: map[string]bool{}, shape: map[string]*ir.Var{}}
	if t.btapes == nil {
		t.btapes = map[*Block]*btape{}
	}
	t.btapes[b] = tp
	for _, v := range ins {
		if t.def[v.Name] == nil {
			t.def[v.Name] = tp
		}
	}
	for _, s := range b.Stmts {
		for _, v := range s.Outs() {
			t.def[v.Name] = tp
			t.stmt[v.Name] = s
		}
		switch s := s.(type) {
		case *Call:
			if s.Prim != nil && s.Prim.Name == "index" && len(s.Args) == 2 && t.accMode(s.Out) && t.accMode(s.Args[1]) {
				t.elem[s.Out.Name] = &part{step{Index: s.Args[0]}, s.Args[1]}
			}
		case *Untuple:
			if t.accMode(s.In) {
				for k, a := range s.Elems {
					if t.accMode(a) {
						t.elem[a.Name] = &part{step{Field: k + 1}, s.In}
					}
				}
			}
		}
		if d, ok := s.(*Dup); ok {
			r := d.In
			if rr := t.root[r.Name]; rr != nil {
				r = rr
			}
			t.root[d.Out1.Name] = r
			t.root[d.Out2.Name] = r
		}
	}
	return tp
}

// record makes the variable v available to the reverse pass in the
// block binding it: bound by R itself if it is cheap to recompute there
// (recompute), else part of that block's tape. A copy Dup made is bound
// to the variable it copies (one value, one field).
func (t *trans) record(v *ir.Var) {
	if t.avail[v.Name] {
		return
	}
	if r := t.root[v.Name]; r != nil {
		t.record(r)
		tp := t.def[r.Name]
		if t.avail[r.Name] {
			tp = t.def[v.Name]
		}
		if !tp.seen[v.Name] {
			tp.seen[v.Name] = true
			tp.again = append(tp.again, ir.MkLet(v.P, &ir.Var{P: v.P, T: v.T, Name: v.Name}, ir.Ref(v.P, r), nil))
		}
		return
	}
	tp := t.def[v.Name]
	if tp == nil {
		panic(fmt.Sprintf("proc: %s is bound by no block", v.Name))
	}
	if tp.seen[v.Name] {
		return
	}
	if e := t.recompute(v); e != nil {
		tp.seen[v.Name] = true
		tp.again = append(tp.again, ir.MkLet(v.P, &ir.Var{P: v.P, T: v.T, Name: v.Name}, e, nil))
		return
	}
	tp.seen[v.Name] = true
	tp.rec = append(tp.rec, &ir.Var{P: v.P, T: v.T, Name: v.Name})
}

// recompute returns the expression by which R recomputes v, having made
// what it reads available, or nil if v is to be recorded. R recomputes a
// constant, a tuple or a field of one, and a primitive call as cheap as
// reading a recorded value with the same bits (recomputable), when what
// it reads is available without recording more per iteration of v's loop
// than v itself: a loop index, a value bound outside the loop, one
// recomputed in turn, and at most one Float or Integer recorded in v's
// place (its leaf; not for a Bool v, smaller than its leaf). A loop then
// records only what its reverse cannot recompute (a matrix-vector
// product's loops, nothing: seed 003's tape holds what the rules read,
// and an element of an input is read again from it), and of a chain of
// cheap operations on one value, such as the sigmoid
// (div 1.0 (add 1.0 (exp (neg x)))), only the value (the exp's).
func (t *trans) recompute(v *ir.Var) ir.Expr {
	if !t.isCheap(v) {
		return nil
	}
	p := v.P
	refs := func(vs []*ir.Var) []ir.Expr {
		out := make([]ir.Expr, len(vs))
		for i, a := range vs {
			t.record(a)
			out[i] = ir.Ref(p, a)
		}
		return out
	}
	switch s := t.stmt[v.Name].(type) {
	case *Const:
		return ir.Copy(s.Val, p)
	case *Call:
		return &ir.Call{P: p, T: v.T, Prim: s.Prim, Args: refs(s.Args)}
	case *Tuple:
		return ir.MkTuple(p, refs(s.Elems)...)
	case *Untuple:
		t.record(s.In)
		for k, e := range s.Elems {
			if e.Name == v.Name {
				return ir.MkGet(p, k+1, ir.Ref(p, s.In))
			}
		}
	}
	panic(fmt.Sprintf("proc: %s is not recomputable", v.Name))
}

// isCheap reports whether R recomputes v (recompute), noting in leaf the
// scalar its recomputation has recorded, if any.
func (t *trans) isCheap(v *ir.Var) bool {
	if c, ok := t.cheap[v.Name]; ok {
		return c
	}
	t.cheap[v.Name] = false
	var leaf *ir.Var
	// reads reports whether R can read a, recording at most the one
	// scalar leaf for all of v's arguments.
	reads := func(a *ir.Var) bool {
		r := t.rootOf(a)
		var l *ir.Var
		switch {
		case t.avail[r.Name]:
		case t.isCheap(r):
			l = t.leaf[r.Name]
		case t.def[r.Name].loopOf() != t.def[v.Name].loopOf():
		case r.T.Kind == types.Float || r.T.Kind == types.Integer:
			l = r
		default:
			return false
		}
		if l == nil || leaf == nil || l.Name == leaf.Name {
			if l != nil {
				leaf = l
			}
			return true
		}
		return false
	}
	all := func(vs ...*ir.Var) bool {
		for _, a := range vs {
			if !reads(a) {
				return false
			}
		}
		return true
	}
	ok := false
	switch s := t.stmt[v.Name].(type) {
	case *Const:
		ok = true
	case *Call:
		ok = s.Prim != nil && recomputable(s.Prim, s.Args) && all(s.Args...)
	case *Tuple:
		ok = all(s.Elems...)
	case *Untuple:
		ok = all(s.In)
	}
	if leaf != nil && v.T.Kind == types.Bool {
		ok = false // a Bool is recorded rather than the larger leaf
	}
	t.cheap[v.Name] = ok
	if ok && leaf != nil {
		t.leaf[v.Name] = leaf
	}
	return ok
}

// recomputable reports whether a call of pr on args costs no more than
// reading its value from a tape and gives the same bits every time:
// IEEE arithmetic and comparisons (Exact), an element or the size of a
// tensor, and equality of values holding no tensor.
func recomputable(pr *ir.Prim, args []*ir.Var) bool {
	switch pr.Name {
	case "index", "size":
		return true
	case "eq", "ne":
		for _, a := range args {
			if !a.T.IsUniform() {
				return false
			}
		}
		return true
	}
	return pr.Exact && pr.Pure
}

// shapeOf returns a function giving the shape of v, recorded in the tape
// of v's block when first asked for (a uniform type's shape is a
// constant).
func (t *trans) shapeOf(v *ir.Var) func() ir.Expr {
	return func() ir.Expr {
		if v.T.IsUniform() {
			return ir.MkTuple(v.P)
		}
		tp := t.def[v.Name]
		sh := tp.shape[v.Name]
		if sh == nil {
			st, _ := types.Shape(v.T)
			sh = t.ns.FreshVar(v.P, "sh", st)
			tp.shape[v.Name] = sh
			tp.shapes = append(tp.shapes, sh)
			tp.shOf = append(tp.shOf, v)
			tp.rec = append(tp.rec, sh)
		}
		return ir.Ref(v.P, sh)
	}
}

// unpack binds the tape's variables from tv around body, then the lets
// pre, then the variables R binds itself.
func (tp *btape) unpack(tv ir.Expr, pre []ir.Expr, body ir.Expr) ir.Expr {
	for i := len(tp.again) - 1; i >= 0; i-- {
		l := tp.again[i]
		body = &ir.Let{P: l.P, Vars: l.Vars, Rhs: l.Rhs, Body: body}
	}
	body = ir.WrapChain(pre, body)
	if len(tp.rec) == 0 {
		return body
	}
	vars := make([]*ir.Var, len(tp.rec))
	for i, v := range tp.rec {
		vars[i] = &ir.Var{P: v.P, T: v.T, Name: v.Name}
	}
	return &ir.Let{P: tv.Pos(), Vars: vars, Pattern: true, Rhs: tv, Body: body}
}

// columns reports whether a loop keeps tp's records per iteration as a
// tensor per field, not a tensor of tuples: when it has several fields,
// all scalars. Each is then stored and read by the loops apart, which
// the C backend compiles to loops gcc vectorises (as lower.Unzip does
// for the vectors of tuples a program builds).
func (tp *btape) columns() bool {
	if len(tp.rec) < 2 {
		return false
	}
	for _, v := range tp.rec {
		if !v.T.IsScalar() {
			return false
		}
	}
	return true
}

// byColumns reports whether a loop's tapes variable (loopTapes) holds a
// tensor per field rather than a tensor of tapes.
func byColumns(tapes *ir.Var) bool { return tapes.T.Kind == types.Tuple }

func (tp *btape) typ() *types.Type {
	ts := make([]*types.Type, len(tp.rec))
	for i, v := range tp.rec {
		ts[i] = v.T
	}
	return types.TupleOf(ts...)
}

func differentiable(t *types.Type) bool {
	dt, ok := types.Tangent(t)
	return ok && dt.Contains(types.Float)
}

// bind emits (let (v e)) and returns v.
func (t *trans) bind(out *[]ir.Expr, base string, e ir.Expr) *ir.Var {
	v := t.ns.FreshVar(e.Pos(), base, e.Type())
	*out = append(*out, &ir.Let{P: e.Pos(), Vars: []*ir.Var{v}, Rhs: e})
	return ir.Ref(e.Pos(), v)
}

// zero returns the zero cotangent of a value of type vt and shape sh.
func zero(p ir.Pos, vt *types.Type, sh func() ir.Expr) ir.Expr {
	if vt.Kind == types.Float {
		return ir.Float(p, 0)
	}
	dt, _ := types.Tangent(vt)
	if vt.IsUniform() {
		return empty(p, dt)
	}
	return ir.MkPrim(p, "$zerosOfShape", sh(), &ir.Dummy{P: p, T: dt})
}

// fieldShape returns the shape of field i of a tuple of type vt whose
// shape sh gives.
func fieldShape(p ir.Pos, vt *types.Type, i int, sh func() ir.Expr) func() ir.Expr {
	return func() ir.Expr {
		if vt.IsUniform() {
			return ir.MkTuple(p)
		}
		return ir.MkGet(p, i+1, sh())
	}
}

// materialise returns c as one value, zeros made from the shape.
func (t *trans) materialise(out *[]ir.Expr, c *cot, vt *types.Type, sh func() ir.Expr) ir.Expr {
	p := ir.Pos{}
	switch {
	case c == nil:
		return zero(p, vt, sh)
	case c.atom != nil:
		return c.atom
	}
	fields := make([]ir.Expr, len(c.parts))
	for i, pc := range c.parts {
		fields[i] = t.materialise(out, pc, vt.Elems[i], fieldShape(p, vt, i, sh))
	}
	return ir.MkTuple(p, fields...)
}

// split returns the cotangents of the n fields of a tuple's cotangent.
func (t *trans) split(out *[]ir.Expr, c *cot, n int) []*cot {
	switch {
	case c == nil:
		return make([]*cot, n)
	case c.atom == nil:
		return c.parts
	}
	tt := c.atom.Type()
	vars := make([]*ir.Var, n)
	parts := make([]*cot, n)
	for i := range vars {
		vars[i] = t.ns.FreshVar(c.atom.Pos(), "d", tt.Elems[i])
		parts[i] = &cot{atom: ir.Ref(c.atom.Pos(), vars[i]), owned: c.owned}
	}
	*out = append(*out, &ir.Let{P: c.atom.Pos(), Vars: vars, Pattern: true, Rhs: c.atom})
	return parts
}

// add is Dup's reverse: the sum of two cotangents.
func (t *trans) add(out *[]ir.Expr, a, b *cot) *cot {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.atom != nil && b.atom != nil:
		return &cot{atom: t.bind(out, "d", ir.MkPrim(a.atom.Pos(), "ts_add", a.atom, b.atom))}
	}
	n := len(a.parts)
	if a.atom != nil {
		n = len(b.parts)
	}
	as, bs := t.split(out, a, n), t.split(out, b, n)
	parts := make([]*cot, n)
	for i := range parts {
		parts[i] = t.add(out, as[i], bs[i])
	}
	return &cot{parts: parts}
}

// addInto returns acc plus c.
func (t *trans) addInto(out *[]ir.Expr, acc ir.Expr, c *cot) ir.Expr {
	p := acc.Pos()
	switch {
	case c == nil:
		return acc
	case c.atom != nil:
		return ir.MkPrim(p, "$addTo", acc, c.atom)
	}
	sums := t.fields(out, acc)
	for i, f := range sums {
		sums[i] = t.addInto(out, f, c.parts[i])
	}
	return ir.MkTuple(p, sums...)
}

// accMode reports whether v's cotangent is accumulated in place: v holds
// a tensor, so a value per use (a one-hot vector for an index) would
// cost the tensor's size each time.
func (t *trans) accMode(v *ir.Var) bool {
	return differentiable(v.T) && !v.T.IsUniform()
}

// accumulates reports whether v's cotangent goes into an accumulator:
// in accMode, or summed by a loop's reverse.
func (t *trans) accumulates(v *ir.Var) bool {
	return t.accMode(v) || t.forced[t.rootOf(v).Name]
}

// rootOf returns the variable a copy copies, or v.
func (t *trans) rootOf(v *ir.Var) *ir.Var {
	if r := t.root[v.Name]; r != nil {
		return r
	}
	return v
}

// contribute gives v, consumed by the statement being reversed, the
// cotangent c: in env, or added into the accumulator of the variable v
// copies (started, from zeros or as c itself if c owns its storage).
func (t *trans) contribute(out *[]ir.Expr, env map[string]*cot, v *ir.Var, c *cot) {
	if !t.accumulates(v) {
		if c != nil && c.atom != nil {
			if _, ok := c.atom.(*ir.Var); !ok {
				c = &cot{atom: t.bind(out, "d", c.atom), owned: true}
			}
		}
		env[v.Name] = c
		return
	}
	if c == nil {
		return
	}
	r := t.rootOf(v)
	if t.elem[r.Name] != nil {
		t.contributeAt(out, v, nil, c)
		return
	}
	cur := t.acc[r.Name]
	if cur == nil {
		if c.atom != nil {
			// c itself, copied where first added into if other values
			// share its storage (own).
			a := t.atomOf(out, c.atom)
			if !c.owned {
				t.shared[a.(*ir.Var).Name] = true
			}
			t.acc[r.Name] = a
			return
		}
		cur = t.bind(out, "acc", zero(r.P, r.T, t.shapeOf(r)))
	}
	t.acc[r.Name] = t.bind(out, "acc", t.addInto(out, t.own(out, cur, r), c))
}

// own returns acc, the accumulator of key r, about to be updated in
// place: a copy of it if it is a value other values share (a cotangent
// that was not the translation's to update, such as dr).
func (t *trans) own(out *[]ir.Expr, acc ir.Expr, r *ir.Var) ir.Expr {
	if v, ok := acc.(*ir.Var); !ok || !t.shared[v.Name] || r.T.IsUniform() {
		return acc
	}
	return t.bind(out, "acc", ir.MkPrim(acc.Pos(), "$addTo", zero(r.P, r.T, t.shapeOf(r)), acc))
}

// isShared reports whether the accumulator acc is a value other values
// share (own).
func (t *trans) isShared(acc ir.Expr) bool {
	v, ok := acc.(*ir.Var)
	return ok && t.shared[v.Name]
}

// A step is a part of a value: element Index (a variable) of a tensor,
// or field Field (1-based) of a tuple.
type step struct {
	Index *ir.Var
	Field int
}

// A part is a variable bound to a part of another, Base, which holds a
// tensor: its cotangent goes into that part of Base's accumulator, in
// place, as linear-map reverse mode does for (index j (index i m)), not
// into an accumulator of its own (a zero row per element).
type part struct {
	step
	Base *ir.Var
}

// key returns the variable whose accumulator v's cotangent goes into:
// the variable its copies copy, or for a part the key of its base.
func (t *trans) key(v *ir.Var) *ir.Var {
	r := t.rootOf(v)
	for t.elem[r.Name] != nil {
		r = t.rootOf(t.elem[r.Name].Base)
	}
	return r
}

// contributeAt adds c into the part path of v's cotangent, following v's
// own place in its base to the accumulator of its key.
func (t *trans) contributeAt(out *[]ir.Expr, v *ir.Var, path []step, c *cot) {
	r, at := t.place(v)
	cur := t.acc[r.Name]
	if cur == nil {
		cur = t.bind(out, "acc", zero(r.P, r.T, t.shapeOf(r)))
	}
	t.acc[r.Name] = t.updateAt(out, t.own(out, cur, r), append(at, path...), c)
}

// place returns v's key and the path of v's part in it, recording the
// indexes on the way.
func (t *trans) place(v *ir.Var) (*ir.Var, []step) {
	var path []step
	r := t.rootOf(v)
	for e := t.elem[r.Name]; e != nil; e = t.elem[r.Name] {
		if e.Index != nil {
			t.record(e.Index)
		}
		path = append([]step{e.step}, path...)
		r = t.rootOf(e.Base)
	}
	return r, path
}

// partAt returns the part path of acc, and a function emitting acc with
// that part replaced (in place, as updateAt).
func (t *trans) partAt(out *[]ir.Expr, acc ir.Expr, path []step) (ir.Expr, func(*[]ir.Expr, ir.Expr) ir.Expr) {
	if len(path) == 0 {
		return acc, func(_ *[]ir.Expr, e ir.Expr) ir.Expr { return e }
	}
	p := acc.Pos()
	st := path[0]
	if st.Index != nil {
		i := ir.Ref(p, st.Index)
		inner, put := t.partAt(out, t.bind(out, "row", ir.MkPrim(p, "index", i, acc)), path[1:])
		return inner, func(out *[]ir.Expr, e ir.Expr) ir.Expr {
			return t.bind(out, "acc", ir.MkPrim(p, "$setAt", acc, i, put(out, e)))
		}
	}
	refs := t.fields(out, acc)
	inner, put := t.partAt(out, refs[st.Field-1], path[1:])
	return inner, func(out *[]ir.Expr, e ir.Expr) ir.Expr {
		refs[st.Field-1] = put(out, e)
		return t.bind(out, "acc", ir.MkTuple(p, refs...))
	}
}

// updateAt returns acc with c added into its part path, in place.
func (t *trans) updateAt(out *[]ir.Expr, acc ir.Expr, path []step, c *cot) ir.Expr {
	p := acc.Pos()
	if len(path) == 0 {
		return t.bind(out, "acc", t.addInto(out, acc, c))
	}
	st := path[0]
	if st.Index != nil {
		i := ir.Ref(p, st.Index)
		if len(path) == 1 && c.atom != nil {
			v := c.atom
			if _, ok := v.(*ir.Var); !ok {
				v = t.bind(out, "d", v)
			}
			return t.bind(out, "acc", ir.MkPrim(p, "$addAt", acc, i, v))
		}
		x := t.bind(out, "row", ir.MkPrim(p, "index", i, acc))
		return t.bind(out, "acc", ir.MkPrim(p, "$setAt", acc, i, t.updateAt(out, x, path[1:], c)))
	}
	refs := t.fields(out, acc)
	refs[st.Field-1] = t.updateAt(out, refs[st.Field-1], path[1:], c)
	return t.bind(out, "acc", ir.MkTuple(p, refs...))
}

// fields binds the fields of acc, a tuple, to fresh variables and returns
// them.
func (t *trans) fields(out *[]ir.Expr, acc ir.Expr) []ir.Expr {
	p := acc.Pos()
	tt := acc.Type()
	vars := make([]*ir.Var, len(tt.Elems))
	refs := make([]ir.Expr, len(vars))
	for k := range vars {
		vars[k] = t.ns.FreshVar(p, "acc", tt.Elems[k])
		refs[k] = ir.Ref(p, vars[k])
	}
	*out = append(*out, &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: acc})
	return refs
}

// rev emits R[[b]] into out, the statements in reverse order: env holds
// the cotangents of the variables consumed after the statement (each
// produced once: single use), and on return those of b's inputs; a
// variable in accMode has its cotangent in its accumulator instead,
// which becomes its value where the variable is bound.
func (t *trans) rev(b *Block, env map[string]*cot, out *[]ir.Expr, tp *btape) {
	take := func(v *ir.Var) *cot {
		c := env[v.Name]
		delete(env, v.Name)
		return c
	}
	for i := len(b.Stmts) - 1; i >= 0; i-- {
		st := b.Stmts[i]
		if _, ok := st.(*Dup); !ok {
			for _, o := range st.Outs() {
				if a := t.acc[o.Name]; a != nil && t.accMode(o) {
					env[o.Name] = &cot{atom: a, owned: !t.isShared(a)}
					delete(t.acc, o.Name)
				}
			}
		}
		switch s := st.(type) {
		case *Call:
			t.revCall(s, take(s.Out), env, out)
		case *Const:
			take(s.Out)
		case *Dup:
			if !t.accumulates(s.In) {
				env[s.In.Name] = t.add(out, take(s.Out1), take(s.Out2))
			}
		case *Elim:
			t.contribute(out, env, s.In, nil)
		case *Tuple:
			parts := t.split(out, take(s.Out), len(s.Elems))
			for k, v := range s.Elems {
				t.contribute(out, env, v, parts[k])
			}
		case *Untuple:
			parts := make([]*cot, len(s.Elems))
			any := false
			for k, v := range s.Elems {
				parts[k] = take(v)
				any = any || parts[k] != nil
			}
			if any {
				t.contribute(out, env, s.In, &cot{parts: parts})
			} else {
				t.contribute(out, env, s.In, nil)
			}
		case *Assert:
		case *Case:
			t.revCase(s, take(s.Out), env, out)
		case *Loop:
			t.revLoop(s, take(s.Out), env, out)
		case *Fold:
			t.revFold(s, take(s.Out), env, out)
		}
	}
}

// revLoop is the reverse of a build or sumbuild (seed 003): the forward
// pass records each iteration's tape (a vector of them), and the reverse
// pass is an $ifoldr over the iterations whose state holds the
// accumulators of the variables the body reads from outside: the
// accumulators of tensors, passed in, and sums of the others' cotangents.
//
// The order of the iterations is free, and chosen for the loads of the
// accumulators. An innermost loop runs up, the order gcc vectorises
// without permuting its vectors. A loop around another runs last first:
// the reverse of a triangular product (row r reads the columns 0..r,
// GMM's Q z) adds into a growing prefix of one accumulator row after row,
// and gcc cuts each row into vector chunks and a scalar tail. Going up, a
// row's wide load spans the narrower stores of the row before (a failed
// store-to-load forward, some 10 cycles each); going down, every load lies
// within one earlier store.
func (t *trans) revLoop(s *Loop, dr *cot, env map[string]*cot, out *[]ir.Expr) {
	if dr == nil || !differentiable(s.Out.T) {
		return
	}
	p := s.P
	drv := t.atomOf(out, t.materialise(out, dr, s.Out.T, t.shapeOf(s.Out)))
	tp := t.btapes[s.Body]
	if tp == nil {
		tp = t.newTape(s.Body, []*ir.Var{s.Index}, t.def[s.Out.Name], true)
	}
	t.avail[s.Index.Name] = true
	ls := t.enterLoop(p, s.Free)
	var items []ir.Expr
	e := map[string]*cot{}
	var elem *cot
	switch s.Kind {
	case "build":
		elem = &cot{atom: ir.MkPrim(p, "index", ir.Ref(p, s.Index), drv)}
	case "sumbuild":
		elem = &cot{atom: drv}
	case "buildFromSparse":
		// The iteration's (j, x): x's cotangent is the element j of the
		// result's, j read from the tuple's statement or its record.
		r := s.Body.Result
		var j ir.Expr = ir.MkGet(p, 1, ir.Ref(p, r))
		if tu, ok := t.stmt[r.Name].(*Tuple); ok && len(tu.Elems) == 2 {
			t.record(tu.Elems[0])
			j = ir.Ref(p, tu.Elems[0])
		} else {
			t.record(r)
		}
		elem = &cot{parts: []*cot{nil, {atom: ir.MkPrim(p, "index", j, drv)}}}
	}
	t.contribute(&items, e, s.Body.Result, elem)
	t.rev(s.Body, e, &items, tp)
	if !t.leaveLoop(ls) {
		return // nothing flows back through the loop: it runs as primal code
	}
	var tapes *ir.Var
	if len(tp.rec) > 0 {
		tapes = t.loopTapes(s.P, s.Out, types.IndexRank(s.N.T), tp, true)
		t.loopTape[s] = tapes
	}
	t.record(s.N)
	inits, phs, finals := t.loopState(out, p, ls)
	op := "$ifold"
	if holdsLoop(s.Body) {
		op = "$ifoldr"
	}
	res := t.iterate(out, op, ir.Ref(p, s.N), s.Index, tapes, tp, items, inits, phs, finals)
	t.afterLoop(out, env, ls, t.split(out, &cot{atom: res, owned: true}, len(ls.touched)))
}

// holdsLoop reports whether b holds a build, sumbuild or fold, in a branch
// or not.
func holdsLoop(b *Block) bool {
	for _, s := range b.Stmts {
		switch s := s.(type) {
		case *Loop, *Fold:
			return true
		case *Case:
			if holdsLoop(s.Then) || holdsLoop(s.Else) {
				return true
			}
		}
	}
	return false
}

// revFold is the reverse of a fold: the forward pass records each step's
// tape ($foldrec), and the reverse pass is an $ifoldr over the steps
// whose state holds the cotangent of the accumulator, from the fold's
// value's down to its initial value's, beside the accumulators of what
// the step reads from outside and of the vector folded over.
func (t *trans) revFold(s *Fold, dr *cot, env map[string]*cot, out *[]ir.Expr) {
	if dr == nil || !differentiable(s.Out.T) {
		return
	}
	p := s.P
	drv := t.atomOf(out, t.materialise(out, dr, s.Out.T, t.shapeOf(s.Out)))
	tp := t.btapes[s.Body]
	if tp == nil {
		tp = t.newTape(s.Body, []*ir.Var{s.Param}, t.def[s.Out.Name], true)
	}
	k := t.ns.FreshVar(p, "k", types.IntegerType)
	t.avail[k.Name] = true
	ls := t.enterLoop(p, append([]*ir.Var{s.Vec}, s.Free...))
	dt, _ := types.Tangent(s.Out.T)
	da := t.ns.FreshVar(p, "da", dt)
	var items []ir.Expr
	e := map[string]*cot{}
	t.contribute(&items, e, s.Body.Result, &cot{atom: ir.Ref(p, da)})
	t.rev(s.Body, e, &items, tp)
	// The step's parameter, the pair of the accumulator and the element.
	var pc *cot
	if t.accumulates(s.Param) {
		if a := t.acc[s.Param.Name]; a != nil {
			pc = &cot{atom: a, owned: !t.isShared(a)}
			delete(t.acc, s.Param.Name)
		}
	} else {
		pc = e[s.Param.Name]
	}
	parts := t.split(&items, pc, 2)
	if parts[1] != nil && differentiable(s.Vec.T.Elem) {
		t.contributeAt(&items, s.Vec, []step{{Index: k}}, parts[1])
	}
	prev := t.materialise(&items, parts[0], s.Out.T, fieldShape(p, s.Param.T, 0, t.shapeOf(s.Param)))
	t.leaveLoop(ls)
	var tapes *ir.Var
	var n ir.Expr
	if len(tp.rec) > 0 {
		tapes = t.loopTapes(s.P, s.Out, 1, tp, false)
		t.foldTape[s] = tapes
		n = ir.MkPrim(p, "size", ir.Ref(p, tapes))
	} else {
		t.record(s.Vec)
		n = ir.MkPrim(p, "size", ir.Ref(p, s.Vec))
	}
	inits, phs, finals := t.loopState(out, p, ls)
	inits = append([]ir.Expr{drv}, inits...)
	phs = append([]*ir.Var{da}, phs...)
	finals = append([]ir.Expr{prev}, finals...)
	res := t.iterate(out, "$ifoldr", n, k, tapes, tp, items, inits, phs, finals)
	st := t.split(out, &cot{atom: res, owned: true}, len(phs))
	t.afterLoop(out, env, ls, st[1:])
	t.contribute(out, env, s.Init, st[0])
}

// active reports whether a cotangent flows back through v: it holds a
// Float, and is not a constant.
func (t *trans) active(v *ir.Var) bool {
	_, k := t.stmt[t.rootOf(v).Name].(*Const)
	return !k && differentiable(v.T)
}

// atomOf returns e bound to a variable unless it is one.
func (t *trans) atomOf(out *[]ir.Expr, e ir.Expr) ir.Expr {
	if _, ok := e.(*ir.Var); ok {
		return e
	}
	return t.bind(out, "d", e)
}

// A loopAccs is what a loop's reverse does with the accumulators of the
// variables its body reads from outside: a placeholder for each (the
// state inside the reverse loop), and those the body adds into.
type loopAccs struct {
	before     map[string]ir.Expr
	after      map[string]ir.Expr
	cands      []*ir.Var
	ph         map[string]*ir.Var
	forcedHere map[string]bool // summed by this loop, not an outer one
	freeOf     map[string]*ir.Var
	touched    []*ir.Var
}

// enterLoop gives each of the keys of vars, read inside a loop, a
// placeholder accumulator, the loop's state.
func (t *trans) enterLoop(p ir.Pos, vars []*ir.Var) *loopAccs {
	ls := &loopAccs{before: t.acc, ph: map[string]*ir.Var{}, forcedHere: map[string]bool{}, freeOf: map[string]*ir.Var{}}
	t.acc = map[string]ir.Expr{}
	for k, v := range ls.before {
		t.acc[k] = v
	}
	for _, v := range vars {
		r := t.key(v)
		if !differentiable(r.T) || ls.ph[r.Name] != nil {
			continue
		}
		dt, _ := types.Tangent(r.T)
		ls.ph[r.Name] = t.ns.FreshVar(p, "acc", dt)
		t.acc[r.Name] = ir.Ref(p, ls.ph[r.Name])
		if !t.accMode(r) && !t.forced[r.Name] {
			ls.forcedHere[r.Name] = true
			t.forced[r.Name] = true
		}
		ls.cands = append(ls.cands, r)
		ls.freeOf[r.Name] = v
	}
	return ls
}

// leaveLoop restores the accumulators of outside the loop and reports
// whether the body added into any of the placeholders.
func (t *trans) leaveLoop(ls *loopAccs) bool {
	ls.after = t.acc
	t.acc = ls.before
	for name := range ls.forcedHere {
		delete(t.forced, name)
	}
	for _, r := range ls.cands {
		if a, ok := ls.after[r.Name].(*ir.Var); !ok || a.Name != ls.ph[r.Name].Name {
			ls.touched = append(ls.touched, r)
		}
	}
	return len(ls.touched) > 0
}

// loopTapes returns the variable recording a loop's per-iteration tapes,
// recorded in the block binding out: a tensor of tapes, or with columns
// and tapes of scalars (btape.columns) a tuple of tensors, one per field.
func (t *trans) loopTapes(p ir.Pos, out *ir.Var, rank int, tp *btape, columns bool) *ir.Var {
	tt := types.TensorOf(rank, tp.typ())
	if columns && tp.columns() {
		cols := make([]*types.Type, len(tp.rec))
		for k, v := range tp.rec {
			cols[k] = types.TensorOf(rank, v.T)
		}
		tt = types.TupleOf(cols...)
	}
	tapes := t.ns.FreshVar(p, "tapes", tt)
	t.def[tapes.Name] = t.def[out.Name]
	t.record(tapes)
	return tapes
}

// loopState returns the reverse loop's state for the accumulators the
// body adds into: their values before the loop (the loop takes them
// over) or zeros, their placeholders, and their values after the body.
func (t *trans) loopState(out *[]ir.Expr, p ir.Pos, ls *loopAccs) (inits []ir.Expr, phs []*ir.Var, finals []ir.Expr) {
	for _, r := range ls.touched {
		phs = append(phs, ls.ph[r.Name])
		finals = append(finals, ls.after[r.Name])
		if a := ls.before[r.Name]; a != nil {
			inits = append(inits, t.own(out, a, r))
			delete(t.acc, r.Name)
		} else {
			inits = append(inits, zero(p, r.T, t.shapeOf(r)))
		}
	}
	return inits, phs, finals
}

// iterate emits the reverse loop (op is $ifold or $ifoldr) over n
// iterations: each binds the state's placeholders and the index, reads
// its tape, and runs items, giving finals. An index of several Integers
// (a loop over a tuple of sizes) is iterated by nested $ifolds, the
// state passed through each.
func (t *trans) iterate(out *[]ir.Expr, op string, n ir.Expr, index *ir.Var, tapes *ir.Var, tp *btape, items, inits []ir.Expr, phs []*ir.Var, finals []ir.Expr) ir.Expr {
	p := index.P
	sts := make([]*types.Type, len(phs))
	for k, v := range phs {
		sts[k] = v.T
	}
	stT := types.TupleOf(sts...)
	body := ir.WrapChain(items, ir.MkTuple(p, finals...))
	if tapes != nil {
		rec := t.ns.FreshVar(p, "rec", tp.typ())
		body = tp.unpack(ir.Ref(p, rec), nil, body)
		var read ir.Expr
		if byColumns(tapes) {
			fields := make([]ir.Expr, len(tapes.T.Elems))
			for k := range fields {
				fields[k] = ir.MkPrim(p, "index", ir.Ref(p, index), ir.MkGet(p, k+1, ir.Ref(p, tapes)))
			}
			read = ir.MkTuple(p, fields...)
		} else {
			read = ir.MkPrim(p, "index", ir.Ref(p, index), ir.Ref(p, tapes))
		}
		body = ir.MkLet(p, rec, read, body)
	} else {
		body = tp.unpack(nil, nil, body)
	}
	dims := 1
	if index.T.Kind == types.Tuple {
		dims = len(index.T.Elems)
	}
	is := make([]*ir.Var, dims)
	for j := range is {
		is[j] = t.ns.FreshVar(p, "i", types.IntegerType)
	}
	if dims == 1 {
		is[0] = &ir.Var{P: p, T: index.T, Name: index.Name}
	} else {
		refs := make([]ir.Expr, dims)
		for j, v := range is {
			refs[j] = ir.Ref(p, v)
		}
		body = ir.MkLet(p, &ir.Var{P: p, T: index.T, Name: index.Name}, ir.MkTuple(p, refs...), body)
	}
	st := t.ns.FreshVar(p, "st", stT)
	body = &ir.Let{P: p, Vars: phs, Pattern: true, Rhs: ir.Ref(p, st), Body: body}
	// From the innermost level out: each binds its index and state, the
	// outer ones running the next level from their state.
	for j := dims - 1; j >= 0; j-- {
		si := t.ns.FreshVar(p, "s_i", types.TupleOf(stT, types.IntegerType))
		lam := ir.MkLam(p, si, &ir.Let{P: p, Vars: []*ir.Var{st, is[j]}, Pattern: true, Rhs: ir.Ref(p, si), Body: body})
		count := n
		if dims > 1 {
			count = ir.MkGet(p, j+1, n)
		}
		if j == 0 {
			return t.bind(out, "st", ir.MkPrim(p, op, count, ir.MkTuple(p, inits...), lam))
		}
		outer := t.ns.FreshVar(p, "st", stT)
		body = ir.MkPrim(p, op, count, ir.Ref(p, outer), lam)
		st = outer
	}
	panic("unreachable")
}

// afterLoop gives the accumulators the loop added into their values
// after it, from the parts of its result.
func (t *trans) afterLoop(out *[]ir.Expr, env map[string]*cot, ls *loopAccs, parts []*cot) {
	for k, c := range parts {
		r := ls.touched[k]
		if t.accMode(r) || !ls.forcedHere[r.Name] {
			t.acc[r.Name] = c.atom
		} else {
			c.owned = true
			t.contribute(out, env, ls.freeOf[r.Name], c)
		}
	}
}

// revCall is the reverse of b = Call f a: for a primitive, the transposes
// of its derivative rules applied to b's cotangent (lmApplyR, which the
// optimiser's eliminate-lm turns into code, in place where added into an
// accumulator), the values they read recorded; for a ks function g,
// [sufrevpass g] of the record [suffwdpass g] made, or [bogrev g] adding
// into the accumulators of its tensor arguments.
func (t *trans) revCall(s *Call, db *cot, env map[string]*cot, out *[]ir.Expr) {
	p := s.P
	active := false
	for _, a := range s.Args {
		active = active || t.active(a)
	}
	if db == nil || !active || !differentiable(s.Out.T) {
		return // zero in, zero out: a primal call, no record
	}
	dbv := t.materialise(out, db, s.Out.T, t.shapeOf(s.Out))
	if _, ok := dbv.(*ir.Var); !ok {
		dbv = t.bind(out, "d", dbv)
	}
	if s.Fn != nil {
		t.revFunc(s, dbv, env, out)
		return
	}
	pr := s.Prim
	if pr.Name == "index" && len(s.Args) == 2 && t.accumulates(s.Args[1]) {
		// An element's cotangent added into its place, not a one-hot
		// vector's.
		t.record(s.Args[0])
		t.contributeAt(out, s.Args[1], []step{{Index: s.Args[0]}}, &cot{atom: dbv})
		return
	}
	params := make([]*ir.Var, 0, len(s.Args)+1)
	subst := map[string]ir.Expr{}
	for i, a := range s.Args {
		name := fmt.Sprintf("x%d", i)
		params = append(params, &ir.Var{T: a.T, Name: name})
		subst[name] = ir.Ref(p, a)
	}
	params = append(params, &ir.Var{T: s.Out.T, Name: "r"})
	subst["r"] = ir.Ref(p, s.Out)
	for k, a := range s.Args {
		if !t.active(a) {
			continue
		}
		if pr.D == nil {
			panic(&NotProcedure{Pos: p, Why: "ksc has no derivative for " + pr.String()})
		}
		if k >= len(pr.D) || pr.D[k] == "" {
			continue
		}
		m, err := t.res.Rule(pr, k, params)
		if err != nil {
			panic(&NotProcedure{Pos: p, Why: fmt.Sprintf("the derivative rule of %s: %v", pr, err)})
		}
		m = examplesAsConstants(ir.Subst(ir.Copy(m, p), subst))
		for name := range ir.FreeVars(m) {
			for _, v := range append([]*ir.Var{s.Out}, s.Args...) {
				if v.Name == name {
					t.record(v)
				}
			}
		}
		t.contribute(out, env, a, &cot{atom: ir.MkPrim(p, "lmApplyR", dbv, m), owned: true})
	}
}

// exampleArgs are the arguments of the linear-map primitives that only
// give a type (a shape, for a tensor): the maps' sources and targets.
var exampleArgs = map[string][]int{"lmZero": {0, 1}, "lmOne": {0}, "lmScale": {0}, "lmIndex": {1}}

// examplesAsConstants replaces the Float variables that a derivative
// rule reads only for their type by constants, so the forward pass need not record them: exp's rule
// (lmScale x0 r) reads r, not x0.
func examplesAsConstants(m ir.Expr) ir.Expr {
	return ir.Map(m, func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok || c.Prim == nil || exampleArgs[c.Prim.Name] == nil {
			return e
		}
		args := append([]ir.Expr(nil), c.Args...)
		for _, k := range exampleArgs[c.Prim.Name] {
			if v, ok := args[k].(*ir.Var); ok && v.T.Kind == types.Float {
				args[k] = ir.Float(v.P, 0)
			}
		}
		return &ir.Call{P: c.P, T: c.T, Prim: c.Prim, Args: args}
	})
}

// ignored reports whether g, a def of several parameters, never reads
// parameter k: its split passes are then given an empty value of its
// type there, so that neither pass makes what the caller would pass
// (tests/testdata/ad/unused_arg.ks).
func ignored(g *ir.Func, k int) bool {
	return g.Kind == ir.DefFunc && g.Body != nil && len(g.Params) > 1 && k < len(g.Params) &&
		!g.Params[k].T.Contains(types.String) && !ir.Occurs(g.Params[k].Name, g.Body)
}

// empty returns a value of type t holding no tensor element: zeros, and
// tensors of size 0.
func empty(p ir.Pos, t *types.Type) ir.Expr {
	switch t.Kind {
	case types.Float:
		return ir.Float(p, 0)
	case types.Integer:
		return ir.Int(p, 0)
	case types.Bool:
		return &ir.Const{P: p, T: t, Val: false}
	case types.Tuple:
		fields := make([]ir.Expr, len(t.Elems))
		for i, e := range t.Elems {
			fields[i] = empty(p, e)
		}
		return ir.MkTuple(p, fields...)
	}
	sh, _ := types.Shape(t)
	return ir.MkPrim(p, "$zerosOfShape", empty(p, sh), &ir.Dummy{P: p, T: t})
}

// revFunc is the reverse of a call of a ks function g.
func (t *trans) revFunc(s *Call, dbv ir.Expr, env map[string]*cot, out *[]ir.Expr) {
	p := s.P
	fwd, rev, revAcc, err := t.res.Passes(s.Fn, p)
	if err != nil {
		panic(&NotProcedure{Pos: p, Why: err.Error()})
	}
	rec := t.tapes[s]
	if rec == nil {
		rec = t.ns.FreshVar(p, "bog", fwd.Result.Elems[1])
		t.tapes[s] = rec
		t.def[rec.Name] = t.def[s.Out.Name]
	}
	t.record(rec)
	// A tensor argument's accumulator is passed to [bogrev g], which adds
	// into it in place: the variable's own, or for a part of another
	// (an element of a vector of matrices) that part of its key's.
	n := len(s.Args)
	puts := make([]func(*[]ir.Expr, ir.Expr) ir.Expr, n)
	keys := make([]*ir.Var, n)
	accs := make([]ir.Expr, n)
	taken := map[string]bool{}
	// [bogrev g] too when all that is passed besides are constant zeros
	// (the shape of a recursion's passes loop-tail recognises).
	any := true
	for _, a := range s.Args {
		any = any && a.T.IsUniform()
	}
	for k, a := range s.Args {
		if ignored(s.Fn, k) {
			dt, _ := types.Tangent(a.T)
			accs[k] = empty(p, dt)
			continue
		}
		if r := t.key(a); t.accMode(a) && t.accMode(r) && !taken[r.Name] {
			taken[r.Name] = true
			any = true
			r, path := t.place(a)
			cur := t.acc[r.Name]
			if cur == nil {
				cur = t.bind(out, "acc", zero(p, r.T, t.shapeOf(r)))
			}
			cur = t.own(out, cur, r)
			delete(t.acc, r.Name)
			keys[k] = r
			accs[k], puts[k] = t.partAt(out, cur, path)
		}
	}
	var da ir.Expr
	if any {
		for k, a := range s.Args {
			if accs[k] == nil {
				accs[k] = zero(p, a.T, t.shapeOf(a))
			}
		}
		acc := accs[0]
		if n > 1 {
			acc = ir.MkTuple(p, accs...)
		}
		da = t.bind(out, "d", ir.CallFunc(p, revAcc, dbv, ir.Ref(p, rec), acc))
	} else {
		da = t.bind(out, "d", ir.CallFunc(p, rev, dbv, ir.Ref(p, rec)))
	}
	parts := []*cot{{atom: da, owned: true}}
	if n > 1 {
		parts = t.split(out, parts[0], n)
		for _, c := range parts {
			c.owned = true
		}
	}
	for k, a := range s.Args {
		if ignored(s.Fn, k) {
			continue
		}
		if puts[k] != nil {
			t.acc[keys[k].Name] = puts[k](out, parts[k].atom)
		} else {
			t.contribute(out, env, a, parts[k])
		}
	}
}

// revCase is the reverse of r = Case c (Then | Else): the case records
// which branch ran and that branch's tape (a variant), and the reverse
// pass runs that branch's reverse. A variable the branches consume gets
// a cotangent if either branch gives it one (zero from the other), and
// an accumulator either branch adds into is passed through both.
func (t *trans) revCase(s *Case, dr *cot, env map[string]*cot, out *[]ir.Expr) {
	p := s.P
	type side struct {
		items []ir.Expr
		env   map[string]*cot
		tape  *btape
		acc   map[string]ir.Expr
	}
	before := t.acc
	var sides [2]side
	for i, br := range []*Block{s.Then, s.Else} {
		tp := t.btapes[br]
		if tp == nil {
			tp = t.newTape(br, nil, t.def[s.Out.Name], false)
		}
		t.acc = map[string]ir.Expr{}
		for k, v := range before {
			t.acc[k] = v
		}
		e := map[string]*cot{}
		var items []ir.Expr
		t.contribute(&items, e, br.Result, dr)
		t.rev(br, e, &items, tp)
		sides[i] = side{items, e, tp, t.acc}
	}
	t.acc = before
	var live []*ir.Var
	for _, v := range s.Free {
		if !t.accumulates(v) && (sides[0].env[v.Name] != nil || sides[1].env[v.Name] != nil) {
			live = append(live, v)
		}
	}
	// The accumulators a branch started or added into, in a fixed order.
	var threaded []*ir.Var
	seen := map[string]bool{}
	for _, sd := range sides {
		for _, v := range s.Free {
			r := t.key(v)
			if seen[r.Name] || !t.accumulates(r) {
				continue
			}
			if a := sd.acc[r.Name]; a != nil && (before[r.Name] == nil || !ir.Equal(a, before[r.Name])) {
				seen[r.Name] = true
				threaded = append(threaded, r)
			}
		}
	}
	if len(live) == 0 && len(threaded) == 0 {
		return // nothing flows back through the case: it runs as primal code
	}
	// Which branch ran is the condition's value when neither branch
	// records anything, else a variant holding the branch's tape.
	var rec *ir.Var
	var cond ir.Expr = ir.Ref(p, s.Cond)
	if len(sides[0].tape.rec) > 0 || len(sides[1].tape.rec) > 0 {
		rec = t.variant[s]
		if rec == nil {
			rec = t.ns.FreshVar(p, "case", types.VariantOf(sides[0].tape.typ(), sides[1].tape.typ()))
			t.variant[s] = rec
			t.def[rec.Name] = t.def[s.Out.Name]
		}
		t.record(rec)
		cond = ir.MkPrim(p, "$isl", ir.Ref(p, rec))
	} else {
		t.record(s.Cond)
	}
	branch := func(k int, get string) ir.Expr {
		sd := sides[k]
		items := sd.items
		vals := make([]ir.Expr, 0, len(live)+len(threaded))
		for _, v := range live {
			vals = append(vals, t.materialise(&items, sd.env[v.Name], v.T, t.shapeOf(v)))
		}
		for _, r := range threaded {
			a := sd.acc[r.Name]
			if a == nil {
				a = zero(p, r.T, t.shapeOf(r))
			}
			vals = append(vals, a)
		}
		var tv ir.Expr
		if rec != nil {
			tv = ir.MkPrim(p, get, ir.Ref(p, rec))
		}
		return sd.tape.unpack(tv, nil, ir.WrapChain(items, ir.MkTuple(p, vals...)))
	}
	thenR, elseR := branch(0, "$outl"), branch(1, "$outr")
	vars := make([]*ir.Var, 0, len(live)+len(threaded))
	for _, v := range live {
		dt, _ := types.Tangent(v.T)
		d := t.ns.FreshVar(p, "d", dt)
		vars = append(vars, d)
		env[v.Name] = &cot{atom: ir.Ref(p, d), owned: true}
	}
	for _, r := range threaded {
		dt, _ := types.Tangent(r.T)
		d := t.ns.FreshVar(p, "acc", dt)
		vars = append(vars, d)
		t.acc[r.Name] = ir.Ref(p, d)
		// Shared if either branch leaves it a shared value.
		for _, sd := range sides {
			if a := sd.acc[r.Name]; a != nil && t.isShared(a) {
				t.shared[d.Name] = true
			}
		}
	}
	*out = append(*out, &ir.Let{P: p, Vars: vars, Pattern: true,
		Rhs: ir.MkIf(p, cond, thenR, elseR)})
}

// fwd emits F[[b]]: b's statements as lets, a split call through
// [suffwdpass g] with its record bound, a case recording its branch; it
// returns the lets, b's result and b's tape.
func (t *trans) fwd(b *Block, tp *btape) ([]ir.Expr, *ir.Var, ir.Expr) {
	var items []ir.Expr
	let := func(p ir.Pos, v *ir.Var, e ir.Expr) {
		items = append(items, &ir.Let{P: p, Vars: []*ir.Var{v}, Rhs: e})
	}
	refs := func(p ir.Pos, vs []*ir.Var) []ir.Expr {
		out := make([]ir.Expr, len(vs))
		for i, v := range vs {
			out[i] = ir.Ref(p, v)
		}
		return out
	}
	for _, st := range b.Stmts {
		switch s := st.(type) {
		case *Call:
			var call ir.Expr
			if s.Fn != nil {
				if rec := t.tapes[s]; rec != nil && !t.noTapes {
					fwd, _, _, _ := t.res.Passes(s.Fn, s.P)
					args := refs(s.P, s.Args)
					for k, a := range s.Args {
						if ignored(s.Fn, k) {
							args[k] = empty(s.P, a.T)
						}
					}
					items = append(items, &ir.Let{P: s.P, Vars: []*ir.Var{s.Out, rec}, Pattern: true,
						Rhs: ir.CallFunc(s.P, fwd, args...)})
					continue
				}
				call = ir.CallFunc(s.P, s.Fn, refs(s.P, s.Args)...)
			} else {
				call = &ir.Call{P: s.P, T: s.Out.T, Prim: s.Prim, Args: refs(s.P, s.Args)}
			}
			let(s.P, s.Out, call)
		case *Const:
			let(s.P, s.Out, s.Val)
		case *Dup:
			let(s.P, s.Out1, ir.Ref(s.P, s.In))
			let(s.P, s.Out2, ir.Ref(s.P, s.In))
		case *Elim:
		case *Tuple:
			let(s.P, s.Out, ir.MkTuple(s.P, refs(s.P, s.Elems)...))
		case *Untuple:
			items = append(items, &ir.Let{P: s.P, Vars: s.Elems, Pattern: true, Rhs: ir.Ref(s.P, s.In)})
		case *Assert:
			items = append(items, &ir.Assert{P: s.P, Cond: ir.Ref(s.P, s.Cond), Msg: s.Msg})
		case *Fold:
			tv := t.foldTape[s]
			if tv == nil || t.noTapes {
				lam := ir.MkLam(s.P, s.Param, t.primal(s.Body))
				let(s.P, s.Out, ir.MkPrim(s.P, "fold", lam, ir.Ref(s.P, s.Init), ir.Ref(s.P, s.Vec)))
				continue
			}
			bi, v, tape := t.fwd(s.Body, t.btapes[s.Body])
			step := ir.MkLam(s.P, s.Param, ir.WrapChain(bi, ir.MkTuple(s.P, ir.Ref(s.P, v), tape)))
			accs := t.ns.FreshVar(s.P, "accs", types.VecOf(s.Out.T))
			items = append(items, &ir.Let{P: s.P, Vars: []*ir.Var{accs, tv}, Pattern: true,
				Rhs: ir.MkPrim(s.P, "$foldrec", step, ir.Ref(s.P, s.Init), ir.Ref(s.P, s.Vec))})
			let(s.P, s.Out, ir.MkPrim(s.P, "index", ir.MkPrim(s.P, "size", ir.Ref(s.P, s.Vec)), ir.Ref(s.P, accs)))
		case *Loop:
			tv := t.loopTape[s]
			if tv == nil || t.noTapes {
				lam := ir.MkLam(s.P, s.Index, t.primal(s.Body))
				if s.Shape != nil {
					let(s.P, s.Out, ir.MkPrim(s.P, s.Kind, ir.Ref(s.P, s.Shape), ir.Ref(s.P, s.N), lam))
				} else {
					let(s.P, s.Out, ir.MkPrim(s.P, s.Kind, ir.Ref(s.P, s.N), lam))
				}
				continue
			}
			bi, v, tape := t.fwd(s.Body, t.btapes[s.Body])
			// Each iteration's value and tape, unzipped: into the value
			// and the tensor of tapes, or the tensor of each field.
			elems := []ir.Expr{ir.Ref(s.P, v), tape}
			var cols []*ir.Var
			if byColumns(tv) {
				elems = append(elems[:1], tape.(*ir.Tuple).Elems...)
				for _, ct := range tv.T.Elems {
					cols = append(cols, t.ns.FreshVar(s.P, "tape", ct))
				}
			}
			pairs := ir.MkPrim(s.P, "build", ir.Ref(s.P, s.N), ir.MkLam(s.P, s.Index, ir.WrapChain(bi, ir.MkTuple(s.P, elems...))))
			unzip := func(vals *ir.Var) {
				if cols == nil {
					items = append(items, &ir.Let{P: s.P, Vars: []*ir.Var{vals, tv}, Pattern: true, Rhs: ir.MkPrim(s.P, "unzip", pairs)})
					return
				}
				items = append(items, &ir.Let{P: s.P, Vars: append([]*ir.Var{vals}, cols...), Pattern: true, Rhs: ir.MkPrim(s.P, "unzip", pairs)})
				let(s.P, tv, ir.MkTuple(s.P, refs(s.P, cols)...))
			}
			if s.Kind == "build" {
				unzip(s.Out)
				continue
			}
			vals := t.ns.FreshVar(s.P, "vals", types.TensorOf(types.IndexRank(s.N.T), v.T))
			unzip(vals)
			j := t.ns.FreshVar(s.P, "j", s.N.T)
			each := ir.MkLam(s.P, j, ir.MkPrim(s.P, "index", ir.Ref(s.P, j), ir.Ref(s.P, vals)))
			if s.Shape != nil {
				let(s.P, s.Out, ir.MkPrim(s.P, "buildFromSparse", ir.Ref(s.P, s.Shape), ir.Ref(s.P, s.N), each))
			} else {
				let(s.P, s.Out, ir.MkPrim(s.P, "sumbuild", ir.Ref(s.P, s.N), each))
			}
		case *Case:
			rec := t.variant[s]
			if rec == nil || t.noTapes {
				// Nothing of the branches is needed backwards.
				then := t.primal(s.Then)
				els := t.primal(s.Else)
				let(s.P, s.Out, ir.MkIf(s.P, ir.Ref(s.P, s.Cond), then, els))
				continue
			}
			vt := rec.T
			branch := func(br *Block, inj string) ir.Expr {
				bi, v, tv := t.fwd(br, t.btapes[br])
				var rv ir.Expr
				if inj == "$inl" {
					rv = ir.MkPrim(s.P, "$inl", tv, &ir.Dummy{P: s.P, T: vt.Elems[1]})
				} else {
					rv = ir.MkPrim(s.P, "$inr", &ir.Dummy{P: s.P, T: vt.Elems[0]}, tv)
				}
				return ir.WrapChain(bi, ir.MkTuple(s.P, ir.Ref(s.P, v), rv))
			}
			items = append(items, &ir.Let{P: s.P, Vars: []*ir.Var{s.Out, rec}, Pattern: true,
				Rhs: ir.MkIf(s.P, ir.Ref(s.P, s.Cond), branch(s.Then, "$inl"), branch(s.Else, "$inr"))})
		}
	}
	for i, sh := range tp.shapes {
		v := tp.shOf[i]
		let(sh.P, sh, ir.MkPrim(sh.P, "$shape", ir.Ref(sh.P, v)))
	}
	return items, b.Result, ir.MkTuple(b.Result.P, refs(b.Result.P, tp.rec)...)
}

// primal returns a block's F without a tape (a branch nothing of which
// the reverse pass reads).
func (t *trans) primal(b *Block) ir.Expr {
	saved := t.noTapes
	t.noTapes = true
	items, v, _ := t.fwd(b, &btape{b: b})
	t.noTapes = saved
	return ir.WrapChain(items, ir.Ref(v.P, v))
}
