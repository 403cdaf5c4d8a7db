package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/types"
)

// tapeLoops makes a build, a sumbuild or a fold's tape record, per index,
// what a later loop over the same range computes again, and the loop read
// it (seed 003's loop tape). The reverse loop of derived code runs the
// primal code of an iteration again to differentiate it; where the same
// chain of lets already made each element of a build (or summand of a
// sumbuild) over that range, or each step of the fold whose accumulators
// the loop reads ($foldtape), the values the reverse loop recomputes at a
// cost (a call, a loop, anything but cheap arithmetic: see cheapLet) are
// kept instead:
//
//	v = (build n (lam j ... x = E(j) ... e))
//	... ($ifoldr n init (lam si (let ((st j2) si) ... y = E(j2) ...)))
//
// becomes
//
//	tape = (build n (lam j ... x = E(j) ... (tuple e x)))
//	v = (build n (lam i (get$1$2 (index i tape))))
//	... ($ifoldr n init (lam si (let ((st j2) si) ... y = (get$2$2 (index j2 tape)) ...)))
//
// and a fold's tape T = ($foldtape (lam p ... x = E(p) ... s) init xs),
// whose step the loop replays from p2 = (tuple (index j2 T) (index j2
// xs)), becomes TR = ($foldrec (lam p ... (tuple s x)) init xs), T =
// (get$1$2 TR), the loop reading x from (index j2 (get$2$2 TR)). Where the
// loop calls [suffwdpass g] on what the source passes to g, the source
// calls the forward pass and records its BOG.
//
// Two lets compute the same value when their right-hand sides are the same
// up to the names the matching has paired (j with j2, then each x with its
// y), read no variable the other loop binds nor one bound between the
// source and the loop, and have no effect.
func tapeLoops(ctx *Context) error {
	eff := lower.ComputeEffects(ctx.Prog)
	t := &taper{eff: eff, ns: ctx.Prog.Names()}
	forEachBody(ctx.Prog, func(f *ir.Func) { f.Body = t.expr(f.Body) })
	return nil
}

type taper struct {
	eff lower.Effects
	ns  *ir.Names
}

// expr rewrites every chain of lets in e.
func (t *taper) expr(e ir.Expr) ir.Expr {
	return mapChains(e, func(items []ir.Expr) []ir.Expr {
		for k := 0; k < len(items); k++ {
			items = t.tapeFrom(items, k)
		}
		return items
	})
}

// mapChains rewrites every chain of lets and asserts in e by rewrite,
// outermost first: rewrite gets a chain's items, then the right-hand
// sides, conditions and tail of what it returns are rewritten in turn.
func mapChains(e ir.Expr, rewrite func(items []ir.Expr) []ir.Expr) ir.Expr {
	inner := func(x ir.Expr) ir.Expr { return mapChains(x, rewrite) }
	switch e.(type) {
	case *ir.Let, *ir.Assert:
		items, tail := ir.ChainItems(e)
		items = rewrite(items)
		for _, it := range items {
			switch it := it.(type) {
			case *ir.Let:
				it.Rhs = inner(it.Rhs)
			case *ir.Assert:
				it.Cond = inner(it.Cond)
			}
		}
		return ir.WrapChain(items, inner(tail))
	}
	return ir.MapChildren(e, inner)
}

// A source is a loop whose iterations may record values: a build, a
// sumbuild (which then sums the recorded summands), or the steps of a
// $foldtape.
type source struct {
	let   *ir.Let
	call  *ir.Call
	fold  bool
	rng   string    // the range, printed
	rngOf ir.Expr   // what the range reads
	j     *ir.Var   // the index
	items []ir.Expr // the iteration's chain of lets
	tail  ir.Expr
	bound map[string]bool // what the iteration binds
	// pre are the items written for the fold's step, binding its parameter
	// from the tape, to pair with the loop's: they are not the source's.
	pre map[ir.Expr]bool
	// alias names the variables of the fold's step that are parts of its
	// parameter, with the pre variable each is (y = (get$1$2 p) is the
	// accumulator a): a loop that already took the parameter apart reads
	// a where the step reads y.
	alias map[string]*ir.Var
	// named is the variable a build's element was bound to, if sourceAt
	// named it (the tail of the chain was not an atom).
	named *ir.Var
}

// sourceAt returns the source items[k] is, if it is one.
func (t *taper) sourceAt(items []ir.Expr, k int) *source {
	l, ok := items[k].(*ir.Let)
	if !ok {
		return nil
	}
	c, ok := l.Rhs.(*ir.Call)
	if !ok || c.Prim == nil {
		return nil
	}
	// A sumbuild of tuples may be taken apart by a pattern, (v dv) =
	// (sumbuild n ...) in forward-mode code; anything else binds a
	// variable.
	if (l.Pattern || len(l.Vars) != 1) && !(l.Pattern && c.Prim.Name == "sumbuild") {
		return nil
	}
	switch c.Prim.Name {
	case "build", "sumbuild":
		lam, ok := c.Args[1].(*ir.Lam)
		if !ok || !ir.IsAtom(c.Args[0]) || lam.Param.T.Kind != types.Integer {
			return nil
		}
		s := &source{let: l, call: c, rng: ir.FormatExpr(c.Args[0]), rngOf: c.Args[0], j: lam.Param}
		s.items, s.tail = ir.ChainItems(lam.Body)
		if !ir.IsAtom(s.tail) && !cheapLet(s.tail) {
			// The element itself, (exp t) at the end of the chain, may be
			// what the loop computes again: it is named, to be paired like
			// the lets, and recorded once (the element is the record).
			v := t.ns.FreshVar(c.P, "e", s.tail.Type())
			s.items = append(s.items, &ir.Let{P: c.P, Vars: []*ir.Var{v}, Rhs: s.tail})
			s.tail, s.named = ir.Ref(c.P, v), v
		}
		s.bound = map[string]bool{lam.Param.Name: true}
		return s.bind()
	case "$foldtape":
		lam, ok := c.Args[0].(*ir.Lam)
		xs, isVar := c.Args[2].(*ir.Var)
		if !ok || !isVar {
			return nil
		}
		p := c.P
		j := t.ns.FreshVar(p, "j", types.IntegerType)
		tapeT := l.Vars[0]
		a := t.ns.FreshVar(p, "a", tapeT.T.Elem)
		x := t.ns.FreshVar(p, "x", xs.T.Elem)
		pre := []ir.Expr{
			&ir.Let{P: p, Vars: []*ir.Var{a}, Rhs: ir.MkPrim(p, "index", ir.Ref(p, j), ir.Ref(p, tapeT))},
			&ir.Let{P: p, Vars: []*ir.Var{x}, Rhs: ir.MkPrim(p, "index", ir.Ref(p, j), ir.Ref(p, xs))},
			&ir.Let{P: p, Vars: []*ir.Var{lam.Param}, Rhs: ir.MkTuple(p, ir.Ref(p, a), ir.Ref(p, x))},
		}
		s := &source{let: l, call: c, fold: true, rng: "(size " + xs.Name + ")", rngOf: xs, j: j, pre: map[ir.Expr]bool{}}
		for _, it := range pre {
			s.pre[it] = true
		}
		body, tail := ir.ChainItems(lam.Body)
		s.alias = paramParts(body, lam.Param, a, x)
		s.items, s.tail = append(pre, body...), tail
		s.bound = map[string]bool{j.Name: true, lam.Param.Name: true}
		return s.bind()
	}
	return nil
}

// paramParts returns the variables of the chain items that are parts of
// the parameter p = (tuple a x): bound to (get$1$2 p) or (get$2$2 p), or
// by a pattern ((y z) p), before p is bound again.
func paramParts(items []ir.Expr, p, a, x *ir.Var) map[string]*ir.Var {
	parts := []*ir.Var{a, x}
	out := map[string]*ir.Var{}
	for _, it := range items {
		l, ok := it.(*ir.Let)
		if !ok {
			continue
		}
		switch rhs := l.Rhs.(type) {
		case *ir.Get:
			if isVar(rhs.X, p.Name) && !l.Pattern && len(l.Vars) == 1 && rhs.N == 2 {
				out[l.Vars[0].Name] = parts[rhs.I-1]
			}
		case *ir.Var:
			if rhs.Name == p.Name && l.Pattern && len(l.Vars) == 2 {
				out[l.Vars[0].Name], out[l.Vars[1].Name] = a, x
			}
		}
		for _, v := range l.Vars {
			if v.Name == p.Name {
				return out
			}
		}
	}
	return out
}

func (s *source) bind() *source {
	for _, v := range ir.ChainVars(s.items) {
		s.bound[v.Name] = true
	}
	return s
}

// rangeOf returns the range of a loop, printed: a variable bound to the
// size of a vector in the same chain (not rebound since) stands for it.
func rangeOf(e ir.Expr, lets map[string]*ir.Let, between map[string]bool) string {
	if v, ok := e.(*ir.Var); ok && lets[v.Name] != nil {
		rhs := lets[v.Name].Rhs
		if c, ok := rhs.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == "size" {
			if x, ok := c.Args[0].(*ir.Var); ok && !between[x.Name] {
				return ir.FormatExpr(rhs)
			}
		}
	}
	return ir.FormatExpr(e)
}

// tapeFrom tapes the source items[k], if it is one, for the first later
// loop over the same range that recomputes some of its values, and
// returns the items.
func (t *taper) tapeFrom(items []ir.Expr, k int) []ir.Expr {
	src := t.sourceAt(items, k)
	if src == nil {
		return items
	}
	// The variables bound after the source, and the lets binding them.
	between := map[string]bool{}
	for _, v := range src.let.Vars {
		between[v.Name] = true
	}
	lets := map[string]*ir.Let{}
	for m := k + 1; m < len(items); m++ {
		lm, ok := items[m].(*ir.Let)
		if !ok {
			continue
		}
		if c := consumerAt(lm); c != nil && rangeOf(c.rng(), lets, between) == src.rng && !readsAny(src.rngOf, between) {
			c.at = m
			if out, ok := t.tape(items, k, c, src, between); ok {
				return out
			}
		}
		for _, v := range lm.Vars {
			between[v.Name] = true
		}
		if !lm.Pattern && len(lm.Vars) == 1 {
			lets[lm.Vars[0].Name] = lm
		}
	}
	return items
}

// tape pairs the lets of the source items[k] with those of the consumer
// and, if some pair is worth recording, rewrites both.
func (t *taper) tape(items []ir.Expr, k int, c *consumer, src *source, between map[string]bool) ([]ir.Expr, bool) {
	j2, items2, bound2 := c.j, c.items, c.bound
	items1 := append([]ir.Expr{}, src.items...)
	// The fold's step reads its own tape: the loop may too.
	selfName := src.let.Vars[0].Name
	betweenButSelf := map[string]bool{}
	for name := range between {
		betweenButSelf[name] = name != selfName
	}
	pair := map[string]*ir.Var{src.j.Name: j2} // a name of the source -> the loop's
	paired := map[string]bool{j2.Name: true}
	var xs []*ir.Var // the source's values the loop reads from the tape
	var ys []int     // the items of the loop's body that read them
	used := map[int]bool{}
	for iy, it := range items2 {
		// A part of the fold's parameter is whatever its pre variable
		// is paired with.
		for y, a := range src.alias {
			if to, ok := pair[a.Name]; ok && pair[y] == nil {
				pair[y] = to
			}
		}
		ly, ok := it.(*ir.Let)
		if !ok || lower.HasEffect(ly.Rhs, t.eff) {
			continue
		}
		want := ir.FormatExpr(ly.Rhs)
		for ix, jt := range items1 {
			lx, ok := jt.(*ir.Let)
			if !ok || used[ix] {
				continue
			}
			// y = ([suffwdpass g] a) may pair with a pattern taking
			// (g a) apart; any other pair binds alike.
			if (lx.Pattern != ly.Pattern || len(lx.Vars) != len(ly.Vars)) &&
				(ly.Pattern || !isForwardPassCall(ly.Rhs)) {
				continue
			}
			pre := src.pre[jt]
			notY := between
			if pre {
				notY = betweenButSelf
			}
			if !reads(ly.Rhs, bound2, paired, notY, src.bound) {
				break
			}
			if !pre && !reads(lx.Rhs, src.bound, pairedNames(pair), bound2) {
				continue
			}
			sub := map[string]ir.Expr{}
			for from, to := range pair {
				sub[from] = ir.Ref(to.P, to)
			}
			if g, a := forwardPass(ly.Rhs, lx.Rhs, sub); g != nil && !ly.Pattern {
				// y = ([suffwdpass g] a) where the source has x = (g a):
				// the source calls the forward pass, records its result
				// and takes x from it.
				y := ly.Vars[0]
				pb := t.ns.FreshVar(lx.P, "pb", y.T)
				items1, used = splitItem(items1, used, ix,
					&ir.Let{P: lx.P, Vars: []*ir.Var{pb}, Rhs: ir.CallFunc(lx.P, g, a)},
					&ir.Let{P: lx.P, Vars: lx.Vars, Pattern: lx.Pattern, Rhs: ir.MkGet(lx.P, 1, ir.Ref(lx.P, pb)), Of: lx.Of})
				used[ix] = true
				pair[pb.Name] = y
				paired[y.Name] = true
				xs = append(xs, pb)
				ys = append(ys, iy)
				break
			}
			if lx.Pattern != ly.Pattern || len(lx.Vars) != len(ly.Vars) ||
				ir.FormatExpr(ir.Subst(lx.Rhs, sub)) != want || !sameTypes(lx.Vars, ly.Vars) {
				continue
			}
			used[ix] = true
			for n, x := range lx.Vars {
				pair[x.Name] = ly.Vars[n]
				paired[ly.Vars[n].Name] = true
			}
			// A value the same in every iteration (it reads nothing the
			// loop binds) is computed by both, not recorded per index.
			if !pre && !cheapLet(lx.Rhs) && readsAny(lx.Rhs, src.bound) {
				x := lx.Vars[0]
				if lx.Pattern {
					// (a b) = E: the source names the tuple E to record
					// it, and the loop takes the record apart.
					x = t.ns.FreshVar(lx.P, "t", lx.Rhs.Type())
					items1, used = splitItem(items1, used, ix,
						&ir.Let{P: lx.P, Vars: []*ir.Var{x}, Rhs: lx.Rhs},
						&ir.Let{P: lx.P, Vars: lx.Vars, Pattern: true, Rhs: ir.Ref(lx.P, x), Of: lx.Of})
					used[ix], used[ix+1] = true, true
				}
				xs = append(xs, x)
				ys = append(ys, iy)
			}
			break
		}
	}
	if len(xs) == 0 {
		return nil, false
	}
	var own []ir.Expr // the source's items, without those written for pairing
	for _, it := range items1 {
		if !src.pre[it] {
			own = append(own, it)
		}
	}
	if src.fold {
		return t.rewriteFold(items, k, src, own, xs, ys, c)
	}
	return t.rewriteBuild(items, k, src, own, xs, ys, c)
}

// rewriteBuild makes the build record (element, x1, ..., xm) per index and
// the loop read them.
func (t *taper) rewriteBuild(items []ir.Expr, k int, src *source, own []ir.Expr, xs []*ir.Var, ys []int, c *consumer) ([]ir.Expr, bool) {
	l, build := src.let, src.call
	lam := build.Args[1].(*ir.Lam)
	p := l.P
	elems := []ir.Expr{src.tail}
	field := make([]int, len(xs)) // where each x is in a record
	for n, x := range xs {
		if x == src.named {
			field[n] = 1 // the element itself
			continue
		}
		elems = append(elems, ir.Ref(p, x))
		field[n] = len(elems)
	}
	if len(elems) == 1 && build.Prim.Name == "build" {
		// The loop reads only the elements: the build's value is the
		// record.
		v := l.Vars[0]
		items[c.at] = c.read(ys, func(_ int, y *ir.Let) ir.Expr {
			return ir.MkPrim(y.P, "index", ir.Ref(y.P, c.j), ir.Ref(y.P, v))
		})
		return items, true
	}
	var tapeBody ir.Expr = ir.MkTuple(p, elems...)
	if len(elems) == 1 {
		tapeBody = src.tail // the summands are all the loop reads
	}
	tapeBuild := ir.MkPrim(p, "build", build.Args[0], ir.MkLam(lam.P, lam.Param, ir.WrapChain(own, tapeBody)))
	tapeVar := t.ns.FreshVar(p, "tape", tapeBuild.T)
	i := t.ns.FreshVar(p, "i", types.IntegerType)
	at := func(p ir.Pos, k ir.Expr, n int) ir.Expr {
		e := ir.Expr(ir.MkPrim(p, "index", k, ir.Ref(p, tapeVar)))
		if len(elems) > 1 {
			e = ir.MkGet(p, n, e)
		}
		return e
	}
	value := ir.MkPrim(p, build.Prim.Name, build.Args[0], ir.MkLam(p, i, at(p, ir.Ref(p, i), 1)))
	items[c.at] = c.read(ys, func(n int, y *ir.Let) ir.Expr {
		return at(y.P, ir.Ref(y.P, c.j), field[n])
	})
	// The value's let follows the tape's: what comes after reads it.
	out := append([]ir.Expr{}, items[:k]...)
	out = append(out, &ir.Let{P: p, Vars: []*ir.Var{tapeVar}, Rhs: tapeBuild},
		&ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: value, Of: l.Of})
	return append(out, items[k+1:]...), true
}

// rewriteFold makes the fold's steps return (accumulator, x) or
// (accumulator, (tuple x1 ... xm)) for $foldrec to record, and the loop
// read them.
func (t *taper) rewriteFold(items []ir.Expr, k int, src *source, own []ir.Expr, xs []*ir.Var, ys []int, cons *consumer) ([]ir.Expr, bool) {
	l, c := src.let, src.call
	lam := c.Args[0].(*ir.Lam)
	p := l.P
	var rec ir.Expr = ir.Ref(p, xs[0])
	if len(xs) > 1 {
		var elems []ir.Expr
		for _, x := range xs {
			elems = append(elems, ir.Ref(p, x))
		}
		rec = ir.MkTuple(p, elems...)
	}
	step := ir.MkLam(lam.P, lam.Param, ir.WrapChain(own, ir.MkTuple(p, src.tail, rec)))
	foldrec := ir.MkPrim(c.P, "$foldrec", step, c.Args[1], c.Args[2])
	both := t.ns.FreshVar(p, "taperec", foldrec.T)
	recs := t.ns.FreshVar(p, "recs", foldrec.T.Elems[1])
	items[cons.at] = cons.read(ys, func(n int, y *ir.Let) ir.Expr {
		r := ir.Expr(ir.MkPrim(y.P, "index", ir.Ref(y.P, cons.j), ir.Ref(y.P, recs)))
		if len(xs) > 1 {
			r = ir.MkGet(y.P, n+1, r)
		}
		return r
	})
	out := append([]ir.Expr{}, items[:k]...)
	out = append(out, &ir.Let{P: p, Vars: []*ir.Var{both}, Rhs: foldrec},
		&ir.Let{P: l.P, Vars: l.Vars, Rhs: ir.MkGet(p, 1, ir.Ref(p, both)), Of: l.Of},
		&ir.Let{P: p, Vars: []*ir.Var{recs}, Rhs: ir.MkGet(p, 2, ir.Ref(p, both))})
	return append(out, items[k+1:]...), true
}

// A consumer is a loop after a source, over the same range, whose
// iterations may read what the source records: a $ifold or $ifoldr (the
// reverse loop of derived code), or a build (the record of split reverse
// mode's forward pass).
type consumer struct {
	let   *ir.Let
	at    int       // the index of let in its chain
	j     *ir.Var   // the index
	items []ir.Expr // the iteration's chain of lets
	tail  ir.Expr
	bound map[string]bool // what the iteration binds
	// wrap makes the loop again around a new chain of its iteration.
	wrap func(body ir.Expr) ir.Expr
	// count is the loop's range (its first argument).
	count ir.Expr
}

// consumerAt returns the consumer l binds, if it binds one.
func consumerAt(l *ir.Let) *consumer {
	loop, ok := l.Rhs.(*ir.Call)
	if !ok || loop.Prim == nil {
		return nil
	}
	c := &consumer{let: l, bound: map[string]bool{}}
	var body ir.Expr
	switch loop.Prim.Name {
	case "$ifold", "$ifoldr":
		lam, ok := loop.Args[2].(*ir.Lam)
		if !ok {
			return nil
		}
		head, ok := lam.Body.(*ir.Let)
		if !ok || !head.Pattern || len(head.Vars) != 2 || !isVar(head.Rhs, lam.Param.Name) {
			return nil
		}
		c.j, body = head.Vars[1], head.Body
		c.bound[lam.Param.Name], c.bound[head.Vars[0].Name] = true, true
		c.wrap = func(body ir.Expr) ir.Expr {
			b := &ir.Let{P: head.P, Vars: head.Vars, Pattern: true, Rhs: head.Rhs, Body: body, Of: head.Of}
			return ir.MkPrim(loop.P, loop.Prim.Name, loop.Args[0], loop.Args[1], ir.MkLam(lam.P, lam.Param, b))
		}
	case "build", "unzip":
		// (unzip (build ...)) is a record kept as a vector per value
		// (split reverse mode's, lower.Unzip's).
		unzip := loop
		if loop.Prim.Name == "unzip" {
			inner, ok := loop.Args[0].(*ir.Call)
			if !ok || inner.Prim == nil || inner.Prim.Name != "build" {
				return nil
			}
			loop = inner
		}
		lam, ok := loop.Args[1].(*ir.Lam)
		if !ok || lam.Param.T.Kind != types.Integer {
			return nil
		}
		c.j, body = lam.Param, lam.Body
		c.wrap = func(body ir.Expr) ir.Expr {
			b := ir.MkPrim(loop.P, "build", loop.Args[0], ir.MkLam(lam.P, lam.Param, body))
			if unzip != loop {
				return ir.MkPrim(unzip.P, "unzip", b)
			}
			return b
		}
	default:
		return nil
	}
	c.count = loop.Args[0]
	c.bound[c.j.Name] = true
	c.items, c.tail = ir.ChainItems(body)
	for _, v := range ir.ChainVars(c.items) {
		c.bound[v.Name] = true
	}
	return c
}

// range returns the loop's range.
func (c *consumer) rng() ir.Expr { return c.count }

// read returns the consumer's let with the lets ys of its iteration
// replaced by reads of the tape.
func (c *consumer) read(ys []int, read func(n int, y *ir.Let) ir.Expr) *ir.Let {
	items := append([]ir.Expr{}, c.items...)
	for n, iy := range ys {
		ly := items[iy].(*ir.Let)
		items[iy] = &ir.Let{P: ly.P, Vars: ly.Vars, Pattern: ly.Pattern, Rhs: read(n, ly), Of: ly.Of}
	}
	l := c.let
	return &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Of: l.Of, Rhs: c.wrap(ir.WrapChain(items, c.tail))}
}

func sameTypes(xs, ys []*ir.Var) bool {
	for i := range xs {
		if !xs[i].T.Equal(ys[i].T) {
			return false
		}
	}
	return true
}

// isForwardPassCall reports whether e is a call of a function's forward
// pass, [suffwdpass g].
func isForwardPassCall(e ir.Expr) bool {
	c, ok := e.(*ir.Call)
	return ok && c.Fn != nil && c.Fn.Name.Outer() == "suffwdpass"
}

// forwardPass returns [suffwdpass g] and x's argument if y is a call of it
// and x a call of g on the same argument (x's names renamed by sub).
func forwardPass(y, x ir.Expr, sub map[string]ir.Expr) (*ir.Func, ir.Expr) {
	cy, ok := y.(*ir.Call)
	if !ok || cy.Fn == nil || cy.Fn.Name.Outer() != "suffwdpass" {
		return nil, nil
	}
	cx, ok := x.(*ir.Call)
	if !ok || cx.Fn == nil || cx.Fn != cy.Fn.Base {
		return nil, nil
	}
	arg := func(c *ir.Call) ir.Expr {
		if len(c.Args) == 1 {
			return c.Args[0]
		}
		return ir.MkTuple(c.P, c.Args...)
	}
	if ir.FormatExpr(ir.Subst(arg(cx), sub)) != ir.FormatExpr(arg(cy)) {
		return nil, nil
	}
	return cy.Fn, arg(cx)
}

// splitItem replaces items[ix] by a and b, moving the marks of the items
// after it one on.
func splitItem(items []ir.Expr, used map[int]bool, ix int, a, b ir.Expr) ([]ir.Expr, map[int]bool) {
	items = append(items[:ix:ix], append([]ir.Expr{a, b}, items[ix+1:]...)...)
	return items, shiftUsed(used, ix)
}

// shiftUsed moves the marks of items after ix one on (a let was split in
// two at ix).
func shiftUsed(used map[int]bool, ix int) map[int]bool {
	out := map[int]bool{}
	for k := range used {
		if k > ix {
			out[k+1] = true
		} else {
			out[k] = true
		}
	}
	return out
}

// reads reports whether e reads, of the variables bound in its loop
// (bound), only the paired ones, and, of the others, none that is in one
// of the sets not: a name the other loop binds would mean a different
// variable on each side, and one bound between the build and the loop is
// not the build's.
func reads(e ir.Expr, bound, paired map[string]bool, not ...map[string]bool) bool {
	for name := range ir.FreeVars(e) {
		if bound[name] {
			if !paired[name] {
				return false
			}
			continue
		}
		for _, set := range not {
			if set[name] {
				return false
			}
		}
	}
	return true
}

// readsAny reports whether e reads a variable of the set.
func readsAny(e ir.Expr, set map[string]bool) bool {
	for name := range ir.FreeVars(e) {
		if set[name] {
			return true
		}
	}
	return false
}

func pairedNames(pair map[string]*ir.Var) map[string]bool {
	out := map[string]bool{}
	for name := range pair {
		out[name] = true
	}
	return out
}

// cheapLet reports whether a value is cheaper to compute again than to
// record: made only of variables, constants, indexing, sizes, tuples and
// their parts, and scalar arithmetic.
func cheapLet(e ir.Expr) bool {
	cheap := true
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Call:
			if x.Fn != nil || !cheapPrims[x.Prim.Name] || x.T.Kind == types.Tensor && x.Prim.Name != "index" {
				cheap = false
			}
		case *ir.Lam, *ir.Let, *ir.If:
			cheap = false
		}
		return cheap
	})
	return cheap
}

var cheapPrims = map[string]bool{
	"index": true, "size": true, "add": true, "sub": true, "mul": true, "neg": true,
	"eq": true, "ne": true, "lt": true, "gt": true, "lte": true, "gte": true, "not": true,
	"to_float": true, "abs": true,
}

func isVar(e ir.Expr, name string) bool {
	v, ok := e.(*ir.Var)
	return ok && v.Name == name
}
