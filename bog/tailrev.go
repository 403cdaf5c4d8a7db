package bog

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// TailReverse makes the call [bogrev f] makes of itself a tail call, and
// reports whether it did. In the reverse pass of a recursion that uses the
// value of the level below (f(x) = post(x, f(pre(x)))), the cotangent
// flows down: the level computes the cotangent of the value below, calls
// [bogrev f] on the level below with it, and then adds its own
// contributions into what the call returned (the accumulator, updated in
// place). By the accumulator's meaning ([bogrev f](dr, b, acc) = acc +
// [sufrevpass f](dr, b)), adding them into the accumulator passed down
// instead gives the same sums, so the call's value is the level's: a tail
// call, which the backends compile as a jump (ir.TailCalls), and the
// reverse pass is a loop from the top level down.
//
// The code after the call must only add into the call's result, part by
// part ($addAt, $addTo, add, ts_add of values that do not depend on it),
// and return each part in its place (a part of no Float, such as an
// Integer's empty gradient, may be anything); its other lets must have no
// effect, since they move before the call. Anything else is left as it is.
func TailReverse(rv *ir.Func, ns *ir.Names) bool {
	if rv.Body == nil || len(rv.Params) != 3 {
		return false
	}
	calls := 0
	ir.Inspect(rv.Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok && c.Fn == rv {
			calls++
		}
		return true
	})
	if calls != 1 || len(ir.TailCalls(rv)) == 1 {
		return false // no recursion, or a tail call already
	}
	t := &tailRev{rv: rv, ns: ns}
	body, ok := t.sink(rv.Body, func(v ir.Expr) ir.Expr { return v })
	if !ok || !t.done {
		return false
	}
	rv.Body = body
	return true
}

type tailRev struct {
	rv   *ir.Func
	ns   *ir.Names
	done bool
}

// sink returns k(e), with k moved into e down to the call of rv, which it
// then rewrites (call). k is the rest of the pass after e.
func (t *tailRev) sink(e ir.Expr, k func(ir.Expr) ir.Expr) (ir.Expr, bool) {
	if !callsFunc(e, t.rv) {
		return k(e), true
	}
	switch e := e.(type) {
	case *ir.Let:
		if callsFunc(e.Rhs, t.rv) {
			if c, ok := e.Rhs.(*ir.Call); ok && c.Fn == t.rv {
				return t.call(c, func(v ir.Expr) ir.Expr {
					return k(&ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: v, Body: e.Body, Of: e.Of})
				})
			}
			return t.sink(e.Rhs, func(v ir.Expr) ir.Expr {
				return k(&ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: v, Body: e.Body, Of: e.Of})
			})
		}
		body, ok := t.sink(e.Body, k)
		return &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: e.Rhs, Body: body, Of: e.Of}, ok
	case *ir.If:
		if callsFunc(e.Cond, t.rv) {
			return nil, false
		}
		then, ok1 := t.sink(e.Then, k)
		els, ok2 := t.sink(e.Else, k)
		if !ok1 || !ok2 {
			return nil, false
		}
		return ir.MkIf(e.P, e.Cond, then, els), true
	case *ir.Assert:
		if callsFunc(e.Cond, t.rv) {
			return nil, false
		}
		body, ok := t.sink(e.Body, k)
		return &ir.Assert{P: e.P, Cond: e.Cond, Body: body, Msg: e.Msg}, ok
	case *ir.Call:
		if e.Fn == t.rv {
			return t.call(e, k)
		}
	}
	return nil, false // the call inside a loop's body, or an argument
}

// call rewrites the call c, whose value the code post (k) continues
// from: the additions post makes into the value move into the
// accumulator passed down, and the call is the result.
func (t *tailRev) call(c *ir.Call, k func(ir.Expr) ir.Expr) (ir.Expr, bool) {
	if len(c.Args) != 3 || callsFunc(c.Args[0], t.rv) || callsFunc(c.Args[1], t.rv) || callsFunc(c.Args[2], t.rv) {
		return nil, false
	}
	p := c.P
	ds := t.rv.Result
	r := t.ns.FreshVar(p, "below", ds)
	post := k(ir.Ref(p, r))
	ev := &symEval{env: map[string]*sym{}}
	n := 1
	whole := &sym{part: -1}
	if ds.Kind == types.Tuple {
		n = len(ds.Elems)
		whole = &sym{elems: make([]*sym, n)}
		for i := range whole.elems {
			whole.elems[i] = &sym{part: i}
		}
	}
	ev.env[r.Name] = whole
	out, ok := ev.eval(post)
	if !ok {
		return nil, false
	}
	// Each part of the result: that part of the call's value, added into.
	ups := make([][]update, n)
	for i := 0; i < n; i++ {
		var s *sym
		switch {
		case ds.Kind != types.Tuple:
			s = out
		case out.elems != nil && len(out.elems) == n:
			s = out.elems[i]
		default:
			return nil, false
		}
		want := i
		if ds.Kind != types.Tuple {
			want = -1
		}
		if s.isPart() && s.part == want {
			ups[i] = s.ups
			continue
		}
		if ds.Kind == types.Tuple && !ds.Elems[i].Contains(types.Float) {
			continue // nothing to add: the call's part is as good
		}
		return nil, false
	}
	a := t.ns.FreshVar(p, "acc", c.Args[2].Type())
	parts := make([]ir.Expr, n)
	for i := range parts {
		var x ir.Expr = ir.Ref(p, a)
		if ds.Kind == types.Tuple {
			x = ir.MkGet(p, i+1, ir.Ref(p, a))
		}
		for _, u := range ups[i] {
			x = u.apply(p, x)
		}
		parts[i] = x
	}
	acc := parts[0]
	if ds.Kind == types.Tuple {
		acc = ir.MkTuple(p, parts...)
	}
	call := ir.CallFunc(p, t.rv, c.Args[0], c.Args[1], acc)
	t.done = true
	return ir.WrapChain(ev.lets, ir.MkLet(p, a, c.Args[2], call)), true
}

// A sym is what the code after the call makes of the call's value: a
// part of it (part, -1 for the whole of a value that is no tuple) with
// additions (ups), a tuple of syms, or a value that does not depend on
// it (opaque, expr).
type sym struct {
	part  int
	ups   []update
	elems []*sym
	expr  ir.Expr // opaque
}

func (s *sym) isPart() bool { return s.elems == nil && s.expr == nil }

// An update adds into a value: the primitive, its arguments, and the
// position of the value added into.
type update struct {
	prim string
	args []ir.Expr
	at   int
}

func (u update) apply(p ir.Pos, x ir.Expr) ir.Expr {
	args := append([]ir.Expr{}, u.args...)
	args[u.at] = x
	return ir.MkPrim(p, u.prim, args...)
}

// symEval evaluates the code after the call symbolically; lets binding
// values that do not depend on the call's value are kept (lets), to be
// made before the call.
type symEval struct {
	env  map[string]*sym
	lets []ir.Expr
}

func (ev *symEval) opaque(e ir.Expr) bool {
	for name := range ir.FreeVars(e) {
		if s, ok := ev.env[name]; ok && s.expr == nil {
			return false
		}
	}
	return true
}

func (ev *symEval) eval(e ir.Expr) (*sym, bool) {
	if ev.opaque(e) {
		if _, isLet := e.(*ir.Let); !isLet {
			return &sym{expr: e}, true
		}
	}
	switch e := e.(type) {
	case *ir.Var:
		return ev.env[e.Name], true
	case *ir.Tuple:
		s := &sym{elems: make([]*sym, len(e.Elems))}
		for i, x := range e.Elems {
			var ok bool
			if s.elems[i], ok = ev.eval(x); !ok {
				return nil, false
			}
		}
		return s, true
	case *ir.Get:
		x, ok := ev.eval(e.X)
		if !ok || x.elems == nil || len(x.elems) != e.N {
			return nil, false
		}
		return x.elems[e.I-1], true
	case *ir.Let:
		rhs, ok := ev.eval(e.Rhs)
		if !ok {
			return nil, false
		}
		if rhs.expr != nil {
			// A value not made from the call's: made before the call.
			if hasEffect(rhs.expr) {
				return nil, false
			}
			ev.lets = append(ev.lets, &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: rhs.expr, Of: e.Of})
			for _, v := range e.Vars {
				ev.env[v.Name] = &sym{expr: ir.Ref(e.P, v)}
			}
		} else if e.Pattern {
			if rhs.elems == nil || len(rhs.elems) != len(e.Vars) {
				return nil, false
			}
			for i, v := range e.Vars {
				ev.env[v.Name] = rhs.elems[i]
			}
		} else {
			ev.env[e.Vars[0].Name] = rhs
		}
		return ev.eval(e.Body)
	case *ir.Call:
		if e.Prim == nil {
			return nil, false
		}
		at := -1
		switch e.Prim.Name {
		case "$addAt", "$addTo":
			at = 0
		case "add", "ts_add":
			for i, x := range e.Args {
				if !ev.opaque(x) {
					at = i
				}
			}
		}
		if at < 0 {
			return nil, false
		}
		x, ok := ev.eval(e.Args[at])
		if !ok || !x.isPart() {
			return nil, false
		}
		for i, y := range e.Args {
			if i != at && (!ev.opaque(y) || hasEffect(y)) {
				return nil, false // y is computed before the call now
			}
		}
		ups := append(append([]update{}, x.ups...), update{prim: e.Prim.Name, args: e.Args, at: at})
		return &sym{part: x.part, ups: ups}, true
	}
	return nil, false
}
