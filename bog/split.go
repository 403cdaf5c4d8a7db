// Package bog implements split reverse mode (seed 002, sections 6.1 and
// 9-11): f is split into a forward pass [suffwdpass f] : S -> (T, B),
// returning its value and a BOG, the record of what the reverse pass needs,
// and a reverse pass [sufrevpass f] : (dT, B) -> dS that consumes it.
//
// The split works on [revfull f], reverse mode computing the value too,
// after optimisation (so the record holds only what the optimised reverse
// pass reads). Its code is a forward part, which depends only on f's
// argument, followed by a reverse part, which reads the cotangent and
// the accumulator. The forward part becomes the forward pass; the values
// the reverse part reads from it become the BOG. Inside the reverse part:
//
//   - a loop ($ifold, $ifoldr: seed 002's nTimes and ccl) whose body
//     recomputes primal values is split in two: a build in the forward
//     pass records, per iteration, the values the body's reverse part
//     reads (one allocation per loop; a vector per value, (unzip (build
//     ...)), when they are scalars), and the reverse loop reads them;
//     the tape of a fold ($foldtape) is part of the forward pass, so the
//     reverse loop of a fold is REVLOOP of seed 003;
//   - an if records which branch ran and only that branch's record, as a
//     variant (a tagged union), and the reverse pass takes the branch it
//     names (REVIF);
//   - a call [revacc g](x, dr, acc) becomes [suffwdpass g](x) in the
//     forward pass, its BOG recorded, and [bogrev g](dr, b, acc) in the
//     reverse pass; a recursive function thus records a BOG per call
//     level, so each BOG type is a named type that may contain itself.
//
// A value the reverse pass does not read is not recorded, and the shape
// of f's argument (its sizes) is recorded for [sufrevpass f] to make its
// zero gradient.
package bog

import (
	"fmt"
	"strconv"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// A Program gives the split the derived functions it creates calls of.
type Program interface {
	// Lookup returns [deriv g], or nil.
	Lookup(deriv string, g *ir.Func) *ir.Func
}

// Passes are the functions of f's split reverse mode whose bodies Split
// fills (nil for those the program does not use).
type Passes struct {
	Fwd    *ir.Func // [suffwdpass f]
	Rev    *ir.Func // [sufrevpass f]
	RevAcc *ir.Func // [bogrev f]
}

// Split fills in the bodies of f's passes from the optimised body of
// [revfull f] (whose parameters are x, dr and acc), and defines f's BOG
// type bog.
func Split(revfull *ir.Func, bog *types.Type, passes Passes, prog Program, ns *ir.Names) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*failure); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	s := &splitter{prog: prog, ns: ns, params: revfull.Params}
	x, dr, acc := revfull.Params[0], revfull.Params[1], revfull.Params[2]
	items, tail := ir.ChainItems(revfull.Body)
	value, grad := splitTail(tail)
	reverse := map[string]bool{dr.Name: true, acc.Name: true}
	fwd, rev := s.items(items, reverse)
	p := revfull.P

	// The record: what the reverse part reads of the forward part, and
	// for the zero gradient of [sufrevpass f], the argument itself if
	// that is recorded anyway, else only its shape (its sizes).
	fwd = s.shareItems(fwd)
	rev, need := rematerialise(fwd, rev, grad, []*ir.Var{x})
	var zero ir.Expr = ir.MkPrim(p, "ts_zero", ir.Ref(p, x))
	hasX := false
	for _, v := range need {
		hasX = hasX || v == x
	}
	if !hasX {
		shape := ns.FreshVar(p, "shape", ir.MkPrim(p, "$shape", ir.Ref(p, x)).T)
		fwd = append(fwd, &ir.Let{P: p, Vars: []*ir.Var{shape}, Rhs: ir.MkPrim(p, "$shape", ir.Ref(p, x))})
		need = append(need, shape)
		zero = ir.MkPrim(p, "$zerosOfShape", ir.Ref(p, shape), &ir.Dummy{P: p, T: acc.T})
	}
	fields := make([]ir.Expr, len(need))
	ts := make([]*types.Type, len(need))
	for i, v := range need {
		fields[i] = ir.Ref(p, v)
		ts[i] = v.T
	}
	bog.SetDef(types.TupleOf(ts...))

	if f := passes.Fwd; f != nil {
		f.Params = []*ir.Var{x}
		f.OneParam = true
		rec := ir.MkPrim(p, "$wrap", ir.MkTuple(p, fields...), &ir.Dummy{P: p, T: bog})
		f.Body = s.shareSplitCalls(ir.WrapChain(fwd, ir.MkTuple(p, value, rec)))
	}
	unpack := func(b ir.Expr, body ir.Expr) ir.Expr {
		vars := make([]*ir.Var, len(need))
		for i, v := range need {
			vars[i] = &ir.Var{P: p, T: v.T, Name: v.Name}
		}
		return &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: ir.MkPrim(p, "$unwrap", b), Body: body}
	}
	if f := passes.RevAcc; f != nil {
		b := ns.FreshVar(p, "bog", bog)
		f.Params = []*ir.Var{dr, b, acc}
		f.Body = unpack(ir.Ref(p, b), ir.WrapChain(rev, grad))
	}
	if f := passes.Rev; f != nil {
		b := ns.FreshVar(p, "bog", bog)
		f.Params = []*ir.Var{dr, b}
		f.Body = unpack(ir.Ref(p, b), ir.MkLet(p, acc, zero, ir.WrapChain(rev, grad)))
	}
	return nil
}

type failure struct {
	pos ir.Pos
	msg string
}

func (f *failure) Error() string { return f.pos.String() + ": " + f.msg }

func fail(pos ir.Pos, format string, args ...any) {
	panic(&failure{pos: pos, msg: fmt.Sprintf(format, args...)})
}

type splitter struct {
	prog   Program
	ns     *ir.Names
	params []*ir.Var // [revfull f]'s
}

// splitTail takes apart (tuple value grad), the end of [revfull f].
func splitTail(tail ir.Expr) (value, grad ir.Expr) {
	t, ok := tail.(*ir.Tuple)
	if !ok || len(t.Elems) != 2 {
		fail(tail.Pos(), "internal: [revfull f] does not end in (tuple value gradient)")
	}
	return t.Elems[0], t.Elems[1]
}

// needed returns the variables of candidates (and extra) that the
// expressions mention free, in the candidates' order.
func needed(exprs []ir.Expr, candidates []*ir.Var, extra []*ir.Var) []*ir.Var {
	var out []*ir.Var
	seen := map[string]bool{}
	for _, v := range append(append([]*ir.Var{}, extra...), candidates...) {
		if seen[v.Name] {
			continue
		}
		for _, e := range exprs {
			if occursIn(v.Name, e) {
				seen[v.Name] = true
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// rematerialise chooses what the reverse part recomputes rather than
// reads from the record: the forward lets that are cheap (see cheap) and
// whose values it needs, and in turn those they need. It returns the
// reverse items preceded by the recomputed lets, and the variables of the
// forward part (and extra) still to be recorded. So a loop over an input
// vector records nothing per element: the reverse loop indexes the input
// again.
func rematerialise(fwd, rev []ir.Expr, tail ir.Expr, extra []*ir.Var) ([]ir.Expr, []*ir.Var) {
	binder := map[string]int{} // the forward let binding each name
	for k, it := range fwd {
		if l, ok := it.(*ir.Let); ok {
			for _, v := range l.Vars {
				binder[v.Name] = k
			}
		}
	}
	chosen := map[int]bool{}
	for {
		var exprs, remat []ir.Expr
		excluded := map[string]bool{}
		for k, it := range fwd {
			if chosen[k] {
				remat = append(remat, it)
				for _, v := range it.(*ir.Let).Vars {
					excluded[v.Name] = true
				}
			}
		}
		exprs = append(append(append(exprs, remat...), rev...), tail)
		var candidates []*ir.Var
		for _, v := range ir.ChainVars(fwd) {
			if !excluded[v.Name] {
				candidates = append(candidates, v)
			}
		}
		need := needed(exprs, candidates, extra)
		changed := false
		// A field of a forward tuple is recomputed only if the tuple is
		// recorded anyway, or all its fields are needed: else the record
		// holds the fields needed, not the whole tuple (the level below's
		// BOG, not also its value).
		needSet := map[string]bool{}
		for _, v := range need {
			needSet[v.Name] = true
		}
		fields := map[string]map[int]bool{} // tuple -> the fields needed
		for _, v := range need {
			if k, ok := binder[v.Name]; ok {
				if src, i, ok := field(fwd[k].(*ir.Let)); ok {
					if fields[src.Name] == nil {
						fields[src.Name] = map[int]bool{}
					}
					fields[src.Name][i] = true
				}
			}
		}
		for _, v := range need {
			k, ok := binder[v.Name]
			if !ok || chosen[k] {
				continue
			}
			l := fwd[k].(*ir.Let)
			if src, _, ok := field(l); ok && !needSet[src.Name] && len(fields[src.Name]) < len(src.Type().Elems) {
				continue
			}
			if cheap(l) {
				chosen[k], changed = true, true
			}
		}
		// A value the reverse part updates in place (a zero it starts an
		// accumulator from) is made there, whatever it costs: a record
		// is read by every reverse pass given it (a BOG may be consumed
		// more than once, and one call's BOG may serve two calls), so
		// nothing in it may be updated.
		for name := range updated(exprs) {
			if k, ok := binder[name]; ok && !chosen[k] {
				chosen[k], changed = true, true
			}
		}
		if !changed {
			return append(remat, rev...), need
		}
	}
}

// updated returns the variables whose values the expressions may update
// in place: the accumulator of an in-place primitive ($addTo, $addAt,
// $setAt) or of a derived function adding into its last argument
// (ir.AddsIntoLastArg), the initial state of a loop (whose iterations may
// update their state), and, through lets, tuples, parts and ifs, the
// variables those values are made of.
func updated(exprs []ir.Expr) map[string]bool {
	bindings := map[string]ir.Expr{}
	out := map[string]bool{}
	var todo []string
	for _, e := range exprs {
		// An item (a let or assert with no body) is inspected in parts.
		switch it := e.(type) {
		case *ir.Let:
			if it.Body == nil {
				for _, v := range it.Vars {
					bindings[v.Name] = it.Rhs
				}
				e = it.Rhs
			}
		case *ir.Assert:
			if it.Body == nil {
				e = it.Cond
			}
		}
		ir.Inspect(e, func(x ir.Expr) bool {
			switch x := x.(type) {
			case *ir.Let:
				for _, v := range x.Vars {
					bindings[v.Name] = x.Rhs
				}
			case *ir.Call:
				if acc := accArg(x); acc != nil {
					todo = append(todo, aliases(acc)...)
				}
			}
			return true
		})
	}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if out[name] {
			continue
		}
		out[name] = true
		if rhs, ok := bindings[name]; ok {
			todo = append(todo, aliases(rhs)...)
		}
	}
	return out
}

// accArg returns the argument a call updates in place, or nil.
func accArg(c *ir.Call) ir.Expr {
	switch {
	case c.Prim != nil && c.Prim.InPlace:
		return c.Args[0]
	case c.Prim != nil && (c.Prim.Name == "$ifold" || c.Prim.Name == "$ifoldr"):
		return c.Args[1]
	case c.Fn != nil && len(c.Fn.Name.Derivs) > 0 && ir.AddsIntoLastArg(c.Fn.Name.Derivs[0]):
		return c.Args[len(c.Args)-1]
	}
	return nil
}

// aliases returns the variables whose values, or parts of them, e's value
// may be (rather than a new value made from them).
func aliases(e ir.Expr) []string {
	switch e := e.(type) {
	case *ir.Var:
		return []string{e.Name}
	case *ir.Get:
		return aliases(e.X)
	case *ir.Tuple:
		var out []string
		for _, x := range e.Elems {
			out = append(out, aliases(x)...)
		}
		return out
	case *ir.If:
		return append(aliases(e.Then), aliases(e.Else)...)
	case *ir.Let:
		return aliases(e.Body)
	case *ir.Assert:
		return aliases(e.Body)
	case *ir.Call:
		if acc := accArg(e); acc != nil {
			return aliases(acc)
		}
		if e.Prim != nil && (e.Prim.Name == "index" || e.Prim.Name == "$unwrap") {
			return aliases(e.Args[len(e.Args)-1])
		}
	}
	return nil
}

// field returns the tuple variable and field index of a let binding one
// field of a variable, x = (get$i$n t).
func field(l *ir.Let) (*ir.Var, int, bool) {
	if g, ok := l.Rhs.(*ir.Get); ok && !l.Pattern {
		if t, ok := g.X.(*ir.Var); ok && t.Type().Kind == types.Tuple {
			return t, g.I, true
		}
	}
	return nil, 0, false
}

// cheap reports whether a forward let is better computed again than
// recorded: taking apart or making a tuple of atoms, indexing, a size,
// Integer or Bool arithmetic on atoms, or a zero (which costs the same in
// either pass, and need not be kept between them). (An index the forward pass did
// without error cannot fail when done again.)
func cheap(l *ir.Let) bool {
	var atom func(e ir.Expr) bool // an atom, or a tuple or part of one
	atom = func(e ir.Expr) bool {
		switch e := e.(type) {
		case *ir.Var, *ir.Const, *ir.Dummy:
			return true
		case *ir.Get:
			return atom(e.X)
		case *ir.Tuple:
			for _, x := range e.Elems {
				if !atom(x) {
					return false
				}
			}
			return true
		}
		return false
	}
	switch r := l.Rhs.(type) {
	case *ir.Var, *ir.Const, *ir.Get, *ir.Tuple:
		return atom(r)
	case *ir.Call:
		if r.Prim == nil {
			return false
		}
		for _, e := range r.Args {
			if !atom(e) {
				return false
			}
		}
		switch r.Prim.Name {
		case "index", "size", "ts_zero":
			return true
		case "add", "sub", "mul", "eq", "ne", "lt", "le", "gt", "ge", "not":
			return r.T.Kind == types.Integer || r.T.Kind == types.Bool
		}
	}
	return false
}

// occursIn reports whether name occurs free in an item or expression.
func occursIn(name string, e ir.Expr) bool {
	switch it := e.(type) {
	case *ir.Let:
		if it.Body == nil {
			return ir.Occurs(name, it.Rhs)
		}
	case *ir.Assert:
		if it.Body == nil {
			return ir.Occurs(name, it.Cond)
		}
	}
	return ir.Occurs(name, e)
}

// items splits a list of items into the forward ones (which depend on no
// variable of reverse) and the reverse ones, splitting loops, ifs and
// calls of the reverse part as the package comment says. Variables bound
// by reverse items are added to reverse.
func (s *splitter) items(items []ir.Expr, reverse map[string]bool) (fwd, rev []ir.Expr) {
	for _, it := range items {
		switch it := it.(type) {
		case *ir.Assert:
			if ir.Mentions(it.Cond, reverse) {
				rev = append(rev, it)
			} else {
				fwd = append(fwd, it)
			}
		case *ir.Let:
			if !ir.Mentions(it.Rhs, reverse) {
				fwd = append(fwd, it)
				continue
			}
			for _, v := range it.Vars {
				reverse[v.Name] = true
			}
			f, r := s.reverseLet(it, reverse, fwd)
			fwd = f
			rev = append(rev, r)
		}
	}
	return fwd, rev
}

// reverseLet splits one reverse let, returning the forward items (those
// given, plus the records it needs) and the rewritten reverse let.
func (s *splitter) reverseLet(l *ir.Let, reverse map[string]bool, fwd []ir.Expr) ([]ir.Expr, ir.Expr) {
	c, ok := l.Rhs.(*ir.Call)
	if ok && c.Prim != nil && (c.Prim.Name == "$ifold" || c.Prim.Name == "$ifoldr") {
		rec, loop := s.loop(c, reverse)
		if rec != nil {
			fwd = append(fwd, rec)
		}
		return fwd, &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: loop}
	}
	if ok && c.Fn != nil && c.Fn.Name.Outer() == "revacc" &&
		s.prog.Lookup("suffwdpass", c.Fn.Base) != nil && s.prog.Lookup("bogrev", c.Fn.Base) != nil {
		// A function without both split passes is one reverse mode runs
		// again (a leaf: lower.IsLeaf): the reverse pass calls [revacc g].
		// A user may have asked for [suffwdpass g] alone.
		return s.call(l, c, fwd)
	}
	if i, ok := l.Rhs.(*ir.If); ok && !ir.Mentions(i.Cond, reverse) {
		k := primalIf(i.Cond, fwd)
		var primal *ir.Let
		if k >= 0 {
			primal = fwd[k].(*ir.Let)
		}
		rec, branch, fused := s.branches(i, reverse, primal)
		if fused {
			fwd = append(fwd[:k:k], fwd[k+1:]...)
		}
		if rec != nil {
			fwd = append(fwd, rec)
		}
		return fwd, &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: branch}
	}
	return fwd, l
}

// call splits [revacc g](x, dr, acc) into [suffwdpass g](x), whose BOG the
// forward part records, and [bogrev g](dr, b, acc). A call of g with the
// same argument in the forward part takes its value from the forward pass.
func (s *splitter) call(l *ir.Let, c *ir.Call, fwd []ir.Expr) ([]ir.Expr, ir.Expr) {
	g := c.Fn.Base
	fw, rv := s.prog.Lookup("suffwdpass", g), s.prog.Lookup("bogrev", g)
	if fw == nil || rv == nil {
		fail(c.P, "internal: no split passes of %s", g.FullName())
	}
	p := c.P
	arg := c.Args[0]
	pb := s.ns.FreshVar(p, "pb", fw.Result)
	b := s.ns.FreshVar(p, "b", fw.Result.Elems[1])
	pbLet := &ir.Let{P: p, Vars: []*ir.Var{pb}, Rhs: ir.CallFunc(p, fw, ir.Copy(arg, ir.Pos{}))}
	bLet := &ir.Let{P: p, Vars: []*ir.Var{b}, Rhs: ir.MkGet(p, 2, ir.Ref(p, pb))}
	// Reuse a forward call g(x) if there is one: the forward pass moves
	// there, with that call's argument (the same value, in scope there).
	merged := false
	vn := newNumbering(ir.WrapChain(fwd, &ir.Tuple{}), s.params...)
	for k, it := range fwd {
		fl, ok := it.(*ir.Let)
		if !ok || len(fl.Vars) != 1 || fl.Pattern {
			continue
		}
		if fc, ok := fl.Rhs.(*ir.Call); ok && fc.Fn == g && vn.sameArg(fc, arg) {
			pbLet.Rhs = ir.CallFunc(p, fw, ir.Copy(callArg(fc), ir.Pos{}))
			y := &ir.Let{P: fl.P, Vars: fl.Vars, Rhs: ir.MkGet(p, 1, ir.Ref(p, pb)), Of: fl.Of}
			rest := append([]ir.Expr{pbLet, y, bLet}, fwd[k+1:]...)
			fwd = append(fwd[:k:k], rest...)
			merged = true
			break
		}
	}
	if !merged {
		fwd = append(fwd, pbLet, bLet)
	}
	call := ir.CallFunc(p, rv, c.Args[1], ir.Ref(p, b), c.Args[2])
	return fwd, &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: call}
}

// shareSplitCalls makes a call of g and a later call of [suffwdpass g] on
// the same argument, in one chain of lets, one call: y = (g a) ...
// pb = ([suffwdpass g] a) becomes pb = ([suffwdpass g] a), y = pb.1, ...
// (reverse mode calls a recursive function's split passes, and the value
// the primal code needs is the forward pass's: computing it apart would
// run the whole recursion below every level again). The argument's atoms
// are bound before the first call, so the forward pass can move there.
func (s *splitter) shareSplitCalls(e ir.Expr) ir.Expr {
	vn := newNumbering(e, s.params...)
	return ir.Map(e, func(x ir.Expr) ir.Expr {
		l, ok := x.(*ir.Let) // y = (g a), or (y1 y2) = (g a)
		if !ok {
			return x
		}
		c, ok := l.Rhs.(*ir.Call)
		if !ok || c.Fn == nil || c.Fn.Kind == ir.DerivedFunc {
			return x
		}
		fw := s.prog.Lookup("suffwdpass", c.Fn)
		if fw == nil {
			return x
		}
		for cur := l.Body; ; {
			cl, ok := cur.(*ir.Let)
			if !ok {
				return x
			}
			if fc, ok := cl.Rhs.(*ir.Call); ok && fc.Fn == fw && !cl.Pattern && len(cl.Vars) == 1 && vn.sameArg(c, fc.Args[0]) {
				pb := cl.Vars[0]
				y := &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: ir.MkGet(l.P, 1, ir.Ref(l.P, pb)), Body: withoutLet(l.Body, cl), Of: l.Of}
				// The primal call's argument: the same value, in scope here.
				return &ir.Let{P: cl.P, Vars: cl.Vars, Rhs: ir.CallFunc(cl.P, fw, callArg(c)), Body: y}
			}
			cur = cl.Body
		}
	})
}

// shareItems is shareSplitCalls on forward items, before the split
// chooses what to record: the value of a call then comes from the forward
// pass's result (y = pb.1), which the reverse part takes apart again
// rather than recording y beside pb.
func (s *splitter) shareItems(fwd []ir.Expr) []ir.Expr {
	items, _ := ir.ChainItems(s.shareSplitCalls(ir.WrapChain(fwd, &ir.Tuple{})))
	return items
}

// withoutLet returns the chain of lets e without the let drop.
func withoutLet(e ir.Expr, drop *ir.Let) ir.Expr {
	l, ok := e.(*ir.Let)
	if !ok {
		return e
	}
	if l == drop {
		return l.Body
	}
	return &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: l.Rhs, Body: withoutLet(l.Body, drop), Of: l.Of}
}

// callArg is a call's argument as one expression: its arguments' tuple
// if it takes several.
func callArg(c *ir.Call) ir.Expr {
	if len(c.Args) == 1 {
		return c.Args[0]
	}
	return ir.MkTuple(c.P, c.Args...)
}

// sameArg reports whether a call's argument has the value of the
// expression arg: the same expression, up to variables bound to the same
// values (inlining a function at two calls makes two copies of its
// body, which CSE shares only later).
func (n *numbering) sameArg(c *ir.Call, arg ir.Expr) bool {
	return n.key(callArg(c)) == n.key(arg)
}

// A numbering gives the values of an expression's variables numbers:
// two variables bound by lets to equal expressions (of variables with
// equal numbers) get the same number. Only a name bound once in the
// expression, by a let, is numbered; a name bound more than once (binders
// are apart only from the names in scope: two branches may bind one name
// to different values) is equal to nothing, and one never bound there (a
// parameter) to itself.
type numbering struct {
	binding map[string]*ir.Let
	index   map[string]int // a pattern variable's position
	twice   map[string]bool
	vars    map[string]string
	ids     map[string]string
	fresh   int
}

// newNumbering numbers the variables of e, inside a function whose
// parameters are params.
func newNumbering(e ir.Expr, params ...*ir.Var) *numbering {
	twice := map[string]bool{}
	n := &numbering{binding: map[string]*ir.Let{}, index: map[string]int{}, twice: twice, vars: map[string]string{}, ids: map[string]string{}}
	for _, p := range params {
		twice[p.Name] = false // bound: a let binding it too binds it twice
		n.binding[p.Name] = nil
	}
	bind := func(name string, l *ir.Let, i int) {
		if _, ok := n.binding[name]; ok {
			twice[name] = true
		}
		n.binding[name], n.index[name] = l, i
	}
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Let:
			for i, v := range x.Vars {
				if x.Pattern {
					bind(v.Name, x, i)
				} else {
					bind(v.Name, x, -1)
				}
			}
		case *ir.Lam:
			twice[x.Param.Name] = true
		}
		return true
	})
	for name, t := range twice {
		if !t {
			delete(twice, name)
		}
		delete(n.binding, name)
	}
	return n
}

// key returns a string equal for expressions of equal values (and, for
// any other, different).
func (n *numbering) key(e ir.Expr) string {
	var k string
	switch e := e.(type) {
	case *ir.Var:
		return n.varKey(e.Name)
	case *ir.Tuple:
		k = "(tuple"
		for _, x := range e.Elems {
			k += " " + n.key(x)
		}
		k += ")"
	case *ir.Get:
		k = "(get " + strconv.Itoa(e.I) + " " + n.key(e.X) + ")"
	case *ir.Call:
		if tape := n.tapeOf(e); tape != nil {
			// The last accumulator of a fold's tape is the fold's value:
			// a call's argument made from either is the same argument.
			return n.key(ir.MkPrim(e.P, "fold", tape.Args...))
		}
		if e.Fn != nil {
			k = "(" + e.Fn.Key()
		} else {
			k = "(" + e.Prim.Name + " " + e.T.String()
		}
		for _, x := range e.Args {
			k += " " + n.key(x)
		}
		k += ")"
	default:
		k = ir.FormatExpr(e)
	}
	return n.intern(k)
}

func (n *numbering) varKey(name string) string {
	if k, ok := n.vars[name]; ok {
		return k
	}
	if n.twice[name] {
		n.fresh++
		return "v:" + name + "?" + strconv.Itoa(n.fresh) // equal to nothing
	}
	l, ok := n.binding[name]
	if !ok {
		return "v:" + name
	}
	n.vars[name] = "v:" + name // while the right-hand side is keyed
	k := n.key(l.Rhs)
	if i := n.index[name]; i >= 0 {
		k = n.intern("(part " + strconv.Itoa(i) + " " + k + ")")
	}
	n.vars[name] = k
	return k
}

// tapeOf returns the $foldtape call t when e is (index (size v) t) for t
// a variable bound to ($foldtape f a v), else nil.
func (n *numbering) tapeOf(e *ir.Call) *ir.Call {
	if e.Prim == nil || e.Prim.Name != "index" {
		return nil
	}
	v, ok := e.Args[1].(*ir.Var)
	if !ok || n.twice[v.Name] {
		return nil
	}
	l := n.binding[v.Name]
	if l == nil || n.index[v.Name] >= 0 {
		return nil
	}
	t, ok := l.Rhs.(*ir.Call)
	if !ok || t.Prim == nil || t.Prim.Name != "$foldtape" {
		return nil
	}
	if n.key(e.Args[0]) != n.key(ir.MkPrim(e.P, "size", t.Args[2])) {
		return nil
	}
	return t
}

// intern keeps keys short: a key made of others is made of their numbers.
func (n *numbering) intern(k string) string {
	if id, ok := n.ids[k]; ok {
		return id
	}
	id := "#" + strconv.Itoa(len(n.ids))
	n.ids[k] = id
	return id
}

// loop splits a reverse loop ($ifold n init (lam si (let (st i) si ...)))
// into a build recording, per iteration, the values its reverse part reads
// (nil if it reads none) and the loop reading them.
func (s *splitter) loop(c *ir.Call, reverse map[string]bool) (*ir.Let, ir.Expr) {
	p := c.P
	lam := c.Args[2].(*ir.Lam)
	head, ok := lam.Body.(*ir.Let)
	if !ok || !head.Pattern || len(head.Vars) != 2 || !isRef(head.Rhs, lam.Param.Name) {
		// The simplifier removes the unpacking of (state, index) when the
		// iteration uses neither: put it back.
		elems := lam.Param.T.Elems
		vars := []*ir.Var{s.ns.FreshVar(p, "st", elems[0]), s.ns.FreshVar(p, "i", elems[1])}
		head = &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: ir.Ref(p, lam.Param), Body: lam.Body}
	}
	st, i := head.Vars[0], head.Vars[1]
	inner := map[string]bool{lam.Param.Name: true, st.Name: true}
	for k, v := range reverse {
		inner[k] = v
	}
	items, tail := ir.ChainItems(head.Body)
	fwd, rev := s.items(items, inner)
	fwd = s.shareItems(fwd)
	rev, need := rematerialise(fwd, rev, tail, nil)
	if len(need) == 0 {
		// The reverse part reads nothing the iteration computes.
		body := &ir.Let{P: head.P, Vars: head.Vars, Pattern: true, Rhs: head.Rhs, Body: ir.WrapChain(rev, tail)}
		return nil, ir.MkPrim(p, c.Prim.Name, c.Args[0], c.Args[1], ir.MkLam(lam.P, lam.Param, body))
	}
	fields := make([]ir.Expr, len(need))
	for k, v := range need {
		fields[k] = ir.Ref(p, v)
	}
	iv := &ir.Var{P: i.P, T: i.T, Name: i.Name}
	recBuild := ir.MkPrim(p, "build", c.Args[0], ir.MkLam(p, iv, ir.WrapChain(fwd, ir.MkTuple(p, fields...))))
	vars := make([]*ir.Var, len(need))
	scalars := len(need) > 1
	for k, v := range need {
		vars[k] = &ir.Var{P: p, T: v.T, Name: v.Name}
		scalars = scalars && v.T.IsScalar()
	}
	var recLet *ir.Let
	var readRhs ir.Expr
	if scalars {
		// Scalars are recorded a vector each, which the C backend's
		// loops store and read in vector registers (lower.Unzip): recs =
		// (unzip (build ...)).
		recBuild := ir.MkPrim(p, "unzip", recBuild)
		recs := make([]*ir.Var, len(need))
		reads := make([]ir.Expr, len(need))
		for k := range need {
			recs[k] = s.ns.FreshVar(p, "rec", recBuild.T.Elems[k])
			reads[k] = ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, recs[k]))
		}
		recLet = &ir.Let{P: p, Vars: recs, Pattern: true, Rhs: recBuild}
		readRhs = ir.MkTuple(p, reads...)
	} else {
		rec := s.ns.FreshVar(p, "rec", recBuild.T)
		recLet = &ir.Let{P: p, Vars: []*ir.Var{rec}, Rhs: recBuild}
		readRhs = ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, rec))
	}
	read := &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: readRhs, Body: ir.WrapChain(rev, tail)}
	body := &ir.Let{P: head.P, Vars: head.Vars, Pattern: true, Rhs: head.Rhs, Body: read}
	loop := ir.MkPrim(p, c.Prim.Name, c.Args[0], c.Args[1], ir.MkLam(lam.P, lam.Param, body))
	return recLet, loop
}

// primalIf returns the index of the last forward let x = (if cond ...)
// on the same condition, if x can move to the end of fwd (no later item
// reads it or asserts), or -1.
func primalIf(cond ir.Expr, fwd []ir.Expr) int {
	c, ok := cond.(*ir.Var)
	if !ok {
		return -1
	}
	for k := len(fwd) - 1; k >= 0; k-- {
		l, ok := fwd[k].(*ir.Let)
		if !ok {
			return -1 // an assert: x may not move past it
		}
		if i, ok := l.Rhs.(*ir.If); ok && !l.Pattern && len(l.Vars) == 1 {
			if ic, ok := i.Cond.(*ir.Var); ok && ic.Name == c.Name {
				for _, later := range fwd[k+1:] {
					if occursIn(l.Vars[0].Name, later) {
						return -1
					}
				}
				return k
			}
		}
	}
	return -1
}

// branches splits a reverse if: the forward part records which branch ran
// and that branch's record, as a variant; the reverse part takes the
// branch the variant names.
//
// If primal, a forward let x = (if cond A B) on the same condition, is
// given, the record is fused with it: the forward pass computes
// (x, record) in one if, and a call of g in A or B whose [revacc g] the
// branch calls takes its value from [suffwdpass g]. Without this a
// recursive function's forward pass would evaluate the whole recursion at
// every level. fused reports whether primal was used (and so must be
// dropped from the forward items).
func (s *splitter) branches(e *ir.If, reverse map[string]bool, primal *ir.Let) (recLet *ir.Let, revIf ir.Expr, fused bool) {
	p := e.P
	// prefix returns the items of a primal arm, ending in x = its value.
	prefix := func(arm ir.Expr) []ir.Expr {
		if primal == nil {
			return nil
		}
		items, tail := ir.ChainItems(arm)
		return append(items, &ir.Let{P: primal.P, Vars: primal.Vars, Rhs: tail, Of: primal.Of})
	}
	arm := func(x ir.Expr, pre []ir.Expr) (fwd, rev []ir.Expr, tail ir.Expr, need []*ir.Var) {
		inner := map[string]bool{}
		for k, v := range reverse {
			inner[k] = v
		}
		items, tail := ir.ChainItems(x)
		items, tail = s.dedupe(pre, items, tail)
		fwd, rev = s.items(items, inner)
		fwd = s.shareItems(fwd)
		rev, need = rematerialise(fwd, rev, tail, nil)
		return fwd, rev, tail, need
	}
	var preT, preE []ir.Expr
	if primal != nil {
		pi := primal.Rhs.(*ir.If)
		preT, preE = prefix(pi.Then), prefix(pi.Else)
	}
	fT, rT, tT, nT := arm(e.Then, preT)
	fE, rE, tE, nE := arm(e.Else, preE)
	if len(nT) == 0 && len(nE) == 0 {
		if primal != nil {
			// Nothing to record: split again without the primal arms.
			return s.branches(e, reverse, nil)
		}
		return nil, ir.MkIf(p, e.Cond, ir.WrapChain(rT, tT), ir.WrapChain(rE, tE)), false
	}
	record := func(need []*ir.Var) (ir.Expr, *types.Type) {
		fields := make([]ir.Expr, len(need))
		for k, v := range need {
			fields[k] = ir.Ref(p, v)
		}
		t := ir.MkTuple(p, fields...)
		return t, t.T
	}
	recT, typT := record(nT)
	recE, typE := record(nE)
	var fwdIf *ir.If
	if primal != nil {
		x := primal.Vars[0]
		inl := ir.MkPrim(p, "$inl", recT, &ir.Dummy{P: p, T: typE})
		inr := ir.MkPrim(p, "$inr", &ir.Dummy{P: p, T: typT}, recE)
		fwdIf = ir.MkIf(p, e.Cond, ir.WrapChain(fT, ir.MkTuple(p, ir.Ref(p, x), inl)), ir.WrapChain(fE, ir.MkTuple(p, ir.Ref(p, x), inr)))
	} else {
		inl := ir.MkPrim(p, "$inl", ir.WrapChain(fT, recT), &ir.Dummy{P: p, T: typE})
		inr := ir.MkPrim(p, "$inr", &ir.Dummy{P: p, T: typT}, ir.WrapChain(fE, recE))
		fwdIf = ir.MkIf(p, e.Cond, inl, inr)
	}
	var rec *ir.Var
	if primal != nil {
		rec = s.ns.FreshVar(p, "rec", fwdIf.T.Elems[1])
	} else {
		rec = s.ns.FreshVar(p, "rec", fwdIf.T)
	}
	unpack := func(need []*ir.Var, out string, body ir.Expr) ir.Expr {
		vars := make([]*ir.Var, len(need))
		for k, v := range need {
			vars[k] = &ir.Var{P: p, T: v.T, Name: v.Name}
		}
		return &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: ir.MkPrim(p, out, ir.Ref(p, rec)), Body: body}
	}
	revIf = ir.MkIf(p, ir.MkPrim(p, "$isl", ir.Ref(p, rec)),
		unpack(nT, "$outl", ir.WrapChain(rT, tT)), unpack(nE, "$outr", ir.WrapChain(rE, tE)))
	if primal != nil {
		x := primal.Vars[0]
		xv := &ir.Var{P: x.P, T: x.T, Name: x.Name}
		return &ir.Let{P: p, Vars: []*ir.Var{xv, rec}, Pattern: true, Rhs: fwdIf, Of: primal.Of}, revIf, true
	}
	return &ir.Let{P: p, Vars: []*ir.Var{rec}, Rhs: fwdIf}, revIf, false
}

// dedupe returns pre followed by items and tail, leaving out an item
// that binds the names a let of pre binds to the same value. The primal
// and reverse arms of an if both compute the primal values they need,
// from the same primal code, so both usually bind a value by one name;
// keeping both would bind it twice in one chain. But a name bound in
// both need not be the same value: binders are only renamed apart from
// the names in scope (ir.RenameApart), and two arms are disjoint scopes,
// so inlining one body in both may give one name to different values.
// An item is left out only if its right-hand side is pre's (ir.Equal,
// after the renamings before it); a name of pre it binds otherwise is
// renamed fresh, in the items after it and the tail too. (The reverse arm
// may read a recursive callee's value from its forward pass, y = pb.1
// after pb = ([suffwdpass g] a), where the primal arm calls g, y = (g a):
// y is then renamed, and shareSplitCalls later makes the two calls one.)
func (s *splitter) dedupe(pre, items []ir.Expr, tail ir.Expr) ([]ir.Expr, ir.Expr) {
	if len(pre) == 0 {
		return items, tail
	}
	have := map[string]*ir.Let{}
	for _, it := range pre {
		if l, ok := it.(*ir.Let); ok {
			for _, v := range l.Vars {
				have[v.Name] = l
			}
		}
	}
	out := append([]ir.Expr{}, pre...)
	m := map[string]ir.Expr{}
	for _, it := range items {
		switch it := it.(type) {
		case *ir.Assert:
			out = append(out, &ir.Assert{P: it.P, Cond: ir.Subst(it.Cond, m), Msg: it.Msg})
		case *ir.Let:
			rhs := ir.Subst(it.Rhs, m)
			if len(it.Vars) > 0 && sameLet(have[it.Vars[0].Name], it, rhs) {
				continue
			}
			vars := make([]*ir.Var, len(it.Vars))
			for k, v := range it.Vars {
				vars[k] = v
				if have[v.Name] != nil {
					vars[k] = s.ns.FreshVar(v.P, v.Name, v.T)
					m[v.Name] = ir.Ref(v.P, vars[k])
				} else {
					delete(m, v.Name)
				}
			}
			out = append(out, &ir.Let{P: it.P, Vars: vars, Pattern: it.Pattern, Rhs: rhs, Of: it.Of})
		default:
			out = append(out, it)
		}
	}
	return out, ir.Subst(tail, m)
}

// sameLet reports whether the let l binds the variables of p, as p does,
// to p's right-hand side (rhs, l's after renaming).
func sameLet(p, l *ir.Let, rhs ir.Expr) bool {
	if p == nil || p.Pattern != l.Pattern || len(p.Vars) != len(l.Vars) {
		return false
	}
	for k, v := range p.Vars {
		if l.Vars[k].Name != v.Name {
			return false
		}
	}
	return ir.Equal(p.Rhs, rhs)
}

// isRef reports whether e is the variable name.
func isRef(e ir.Expr, name string) bool {
	v, ok := e.(*ir.Var)
	return ok && v.Name == name
}
