package ksgen

import (
	"fmt"
	"math/rand"
)

// Generate returns the program of a seed; its names start with prefix.
func Generate(seed int64, prefix string) *Program {
	g := &gen{rng: rand.New(rand.NewSource(seed)), prefix: prefix}
	p := &Program{K: g.rng.Intn(4)}
	// Switches of the program: each construct that exposes a known kind
	// of bug is on in some programs only, so that the others check the
	// rest.
	g.fanout = g.chance(3)
	g.inline = g.chance(6)
	g.constCond = g.chance(5)
	g.tensors = g.chance(3)
	g.ranhash = g.chance(30)
	nv := 1 + g.rng.Intn(4)
	n := []int{0, 1, 1, 2}[g.rng.Intn(4)]
	rec := -1 // the recursive helper, the first
	if g.chance(6) {
		rec, n = 0, max(n, 1)
	}
	for i := 0; i < n; i++ {
		f := &Func{Name: fmt.Sprintf("%sg%d", prefix, i), Result: tF}
		if i == rec {
			f.Params = []Param{{Name: "i", T: tI}, {Name: g.pick("a", "x"), T: tF}, {Name: "b", T: tF}}
			f.Body = g.recursive(f)
		} else {
			f.Params = g.helperParams()
			f.Body = g.function(f, 2)
		}
		g.funcs = append(g.funcs, f)
		p.Funcs = append(p.Funcs, f)
	}
	results := []Type{tF, tF, tF, {K: Vec, N: 1 + g.rng.Intn(3)}, {K: Vec, N: 1 + g.rng.Intn(3)}, tP,
		{K: VecVec, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)}}
	if g.tensors {
		results = append(results, Type{K: Tensor2, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)})
	}
	e := &Func{Name: prefix + "f", Result: results[g.rng.Intn(len(results))],
		Params: []Param{{Name: "x", T: tF}, {Name: "v", T: Type{K: Vec, N: nv}}, {Name: "k", T: tI}}}
	if g.tensors && g.chance(2) {
		e.Params = append(e.Params, Param{Name: "t", T: Type{K: Tensor2, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)}})
	}
	if g.chance(6) {
		e.Params = append(e.Params, Param{Name: "w", T: Type{K: VecVec, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)}})
	}
	e.Body = g.function(e, 3)
	p.Funcs = append(p.Funcs, e)
	// Drawn last, so that a seed's program is otherwise what it was
	// before the switch existed.
	for i, f := range p.Funcs[:n] {
		f.HandRev = i != rec && g.chance(8)
	}
	return p
}

// gen is the state of generating one program.
type gen struct {
	rng    *rand.Rand
	prefix string
	funcs  []*Func // the helpers callable so far
	vars   []Param // the variables in scope, innermost last
	// The program's switches.
	fanout    bool // calls pass one variable in several positions; aliases
	inline    bool // $inline calls
	constCond bool // conditions true, false, (gt e e)
	tensors   bool // Tensor 2 values
	ranhash   bool // $ranhashdoub
}

// Binder names: few, so that they shadow each other and the parameters.
var (
	letNames   = []string{"v", "a", "b", "i", "x", "y", "w"}
	loopNames  = []string{"i", "i", "j", "a", "x"}
	floatNames = []string{"x", "a", "b", "v"}
)

// chance reports true with probability 1/n.
func (g *gen) chance(n int) bool { return g.rng.Intn(n) == 0 }

func (g *gen) pick(names ...string) string { return names[g.rng.Intn(len(names))] }

// binder returns a name to bind: usually one of names, sometimes the
// name of a variable in scope (shadowing it), rarely a fresh one.
func (g *gen) binder(names []string) string {
	switch g.rng.Intn(8) {
	case 0:
		return fmt.Sprintf("y%d", g.rng.Intn(100))
	case 1:
		if vs := g.visible(); len(vs) > 0 {
			return vs[g.rng.Intn(len(vs))].Name
		}
	}
	return names[g.rng.Intn(len(names))]
}

// helperParams returns the parameters of a helper (Float result).
func (g *gen) helperParams() []Param {
	w := Param{Name: "w", T: Type{K: Vec, N: 1 + g.rng.Intn(3)}}
	switch g.rng.Intn(5) {
	case 0, 1:
		return []Param{{Name: "a", T: tF}, w}
	case 2:
		return []Param{{Name: g.pick("a", "x"), T: tF}, {Name: "b", T: tF}}
	case 3:
		return []Param{{Name: "x", T: tF}, {Name: "v", T: w.T}, {Name: "b", T: tF}}
	}
	return []Param{{Name: "a", T: tF}, {Name: "b", T: tF}, {Name: "x", T: tF}}
}

func (g *gen) function(f *Func, depth int) *Node {
	g.vars = append([]Param(nil), f.Params...)
	return g.expr(f.Result, depth)
}

// recursive returns the body of f, a helper ((i : Integer) (a : Float)
// (b : Float)) that calls itself once with i - 1 while i > 0: callers pass
// an i of at most 3. Half of them are tail recursions (the call is the
// level's value), the others use the value below. The arguments of the recursive call and the value of
// each level go through a bounded function (sin, cos or tanh), so values
// cannot grow as a power of the depth ((mul b b) passed down three times is
// b^8): a result of 1e18 beside one of 1 makes every finite difference of
// the pair meaningless.
func (g *gen) recursive(f *Func) *Node {
	g.vars = append([]Param(nil), f.Params...)
	cnt := f.Params[0].Name
	cond := call(tB, "gt", leaf(tI, cnt), leaf(tI, "0"))
	cond.Fixed = true
	dec := call(tI, "sub", leaf(tI, cnt), leaf(tI, "1"))
	dec.Fixed = true
	if g.chance(2) {
		// A tail recursion: the call below is the level's value, after a
		// let or not (split reverse mode makes loops of these:
		// bog.LoopTail).
		self := func() *Node { return call(tF, f.Name, dec, g.bounded(g.expr(tF, 1)), g.bounded(g.expr(tF, 1))) }
		var then *Node
		if g.chance(2) {
			y := g.binder(floatNames)
			for y == cnt {
				y = g.binder(floatNames) // the call below reads the counter
			}
			rhs := g.bounded(g.expr(tF, 1))
			then = &Node{T: tF, Head: "let", Bind: y, Kids: []*Node{rhs, g.with(Param{Name: y, T: tF}, self)}}
		} else {
			then = self()
		}
		n := call(tF, "if", cond, then, g.expr(tF, 1))
		n.Hold = true
		return n
	}
	self := call(tF, f.Name, dec, g.bounded(g.expr(tF, 1)), g.bounded(g.expr(tF, 1)))
	y := g.binder(floatNames)
	body := g.with(Param{Name: y, T: tF}, func() *Node { return g.bounded(g.expr(tF, 2)) })
	step := &Node{T: tF, Head: "let", Bind: y, Kids: []*Node{self, body}}
	n := call(tF, "if", cond, step, g.expr(tF, 1))
	n.Hold = true
	return n
}

// bounded returns n through sin, cos or tanh, whose values lie in [-1, 1]:
// a Hold node, which Shrink replaces only by a constant.
func (g *gen) bounded(n *Node) *Node {
	b := call(tF, g.pick("sin", "cos", "tanh"), n)
	b.Hold = true
	return b
}

func leaf(t Type, text string) *Node { return &Node{T: t, Text: text} }

func call(t Type, head string, kids ...*Node) *Node { return &Node{T: t, Head: head, Kids: kids} }

func fixed(n *Node) *Node {
	n.Fixed = true
	return n
}

var (
	tF = Type{K: Float}
	tI = Type{K: Integer}
	tB = Type{K: Bool}
	tP = Type{K: Pair}
)

// visible returns the variables in scope that no later one shadows,
// innermost first.
func (g *gen) visible() []Param {
	seen := map[string]bool{}
	var out []Param
	for i := len(g.vars) - 1; i >= 0; i-- {
		if v := g.vars[i]; !seen[v.Name] {
			seen[v.Name] = true
			out = append(out, v)
		}
	}
	return out
}

// varsOf returns the visible variables whose type satisfies ok.
func (g *gen) varsOf(ok func(Type) bool) []Param {
	var out []Param
	for _, v := range g.visible() {
		if ok(v.T) {
			out = append(out, v)
		}
	}
	return out
}

// varOf returns a variable of type t in scope, or nil.
func (g *gen) varOf(t Type) *Node {
	cands := g.varsOf(func(u Type) bool { return u == t })
	if len(cands) == 0 {
		return nil
	}
	v := cands[g.rng.Intn(len(cands))]
	return leaf(t, v.Name)
}

// with runs f with v in scope.
func (g *gen) with(v Param, f func() *Node) *Node {
	g.vars = append(g.vars, v)
	defer func() { g.vars = g.vars[:len(g.vars)-1] }()
	return f()
}

// expr returns an expression of type t.
func (g *gen) expr(t Type, depth int) *Node {
	if depth <= 0 || g.chance(5) {
		return g.atom(t)
	}
	d := depth - 1
	switch g.rng.Intn(5) {
	case 0: // let
		if g.fanout && g.chance(3) {
			if n := g.alias(t, d); n != nil {
				return n
			}
		}
		if g.tensors && g.chance(6) {
			if n := g.letSize(t, d); n != nil {
				return n
			}
		}
		rt := g.anyType()
		rhs := g.expr(rt, d)
		if rt.K == Pair && g.chance(2) {
			a := g.binder(floatNames)
			b := g.binder(floatNames)
			for b == a {
				b = g.pick(floatNames...)
			}
			g.vars = append(g.vars, Param{Name: a, T: tF}, Param{Name: b, T: tF})
			body := g.expr(t, d)
			g.vars = g.vars[:len(g.vars)-2]
			return &Node{T: t, Head: "let2", Bind: a + " " + b, Kids: []*Node{rhs, body}}
		}
		y := g.binder(letNames)
		body := g.with(Param{Name: y, T: rt}, func() *Node { return g.expr(t, d) })
		return &Node{T: t, Head: "let", Bind: y, Kids: []*Node{rhs, body}}
	case 1: // if on an Integer or Bool condition
		return call(t, "if", g.cond(d), g.expr(t, d), g.expr(t, d))
	}
	switch t.K {
	case Float:
		return g.float(d)
	case Integer:
		return g.integer(d)
	case Bool:
		return g.cond(d)
	case Vec:
		return g.vec(t.N, d)
	case VecVec:
		return g.loop("build", t, t.N, func() *Node { return g.vec(t.M, d) })
	case Pair:
		if g.fanout && g.chance(3) {
			if u := g.varOf(tF); u != nil {
				return call(t, "tuple", u, u.clone())
			}
		}
		return call(t, "tuple", g.float(d), g.float(d))
	case Tensor2:
		return g.tensor(t, d)
	}
	panic("ksgen: bad type")
}

// alias returns (let (y u) body) for a Float or vector variable u, the
// body using u and y together (as arguments of one call where it can), or
// nil.
func (g *gen) alias(t Type, d int) *Node {
	us := g.varsOf(func(u Type) bool { return u.K == Float || u.K == Vec })
	if len(us) == 0 {
		return nil
	}
	u := us[g.rng.Intn(len(us))]
	y := g.binder(letNames)
	for y == u.Name {
		y = g.pick(letNames...)
	}
	body := g.with(Param{Name: y, T: u.T}, func() *Node {
		if t.K == Float && g.chance(2) {
			a, b := leaf(u.T, u.Name), leaf(u.T, y)
			if g.chance(2) {
				a, b = b, a
			}
			for _, h := range g.funcs {
				if len(h.Params) >= 2 && h.Params[0].T == u.T && h.Params[1].T == u.T && h.Params[0].T.K == Float {
					return g.callWith(h, d, a, b)
				}
			}
			if u.T.K == Vec {
				return call(tF, "dot", a, b)
			}
			return call(tF, "mul", a, b)
		}
		return g.expr(t, d)
	})
	return &Node{T: t, Head: "let", Bind: y, Kids: []*Node{leaf(u.T, u.Name), body}}
}

// letSize returns (let ((a b) (size m)) body) for a matrix m in scope, or
// nil: a and b are sizes, which indices are computed from.
func (g *gen) letSize(t Type, d int) *Node {
	ms := g.varsOf(func(u Type) bool { return u.K == Tensor2 })
	if len(ms) == 0 {
		return nil
	}
	m := ms[g.rng.Intn(len(ms))]
	a := g.binder(loopNames)
	b := g.binder(loopNames)
	for b == a {
		b = g.pick("a", "b", "j")
	}
	g.vars = append(g.vars, Param{Name: a, T: tI, Lo: m.T.N, Hi: m.T.N + 1}, Param{Name: b, T: tI, Lo: m.T.M, Hi: m.T.M + 1})
	body := g.expr(t, d)
	g.vars = g.vars[:len(g.vars)-2]
	size := fixed(call(Type{K: IntPair, N: m.T.N, M: m.T.M}, "size", leaf(m.T, m.Name)))
	return &Node{T: t, Head: "let2", Bind: a + " " + b, Kids: []*Node{size, body}}
}

// anyType returns a random type for a let.
func (g *gen) anyType() Type {
	switch g.rng.Intn(8) {
	case 0:
		return tI
	case 1, 2:
		return Type{K: Vec, N: 1 + g.rng.Intn(3)}
	case 3:
		return tP
	case 4:
		return Type{K: VecVec, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)}
	case 5:
		if g.tensors {
			return Type{K: Tensor2, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)}
		}
	}
	return tF
}

// atom returns a variable or a constant of type t.
func (g *gen) atom(t Type) *Node {
	if v := g.varOf(t); v != nil && !g.chance(4) {
		return v
	}
	switch t.K {
	case Float:
		return leaf(t, g.pick("0.5", "1.25", "-0.75", "2.0", "0.1"))
	case Integer:
		return leaf(t, fmt.Sprint(g.rng.Intn(3)))
	case Bool:
		return leaf(t, g.pick("true", "false"))
	case Vec:
		return call(t, "constVec", g.size(t.N), g.atom(tF))
	case VecVec:
		row := Type{K: Vec, N: t.M}
		if g.chance(2) {
			return call(t, "constVec", g.size(t.N), g.atom(row))
		}
		return g.loop("build", t, t.N, func() *Node { return call(row, "constVec", g.size(t.M), g.atom(tF)) })
	case Pair:
		return call(t, "tuple", g.atom(tF), g.atom(tF))
	case Tensor2:
		return call(t, "constVec", g.size2(t.N, t.M), g.atom(tF))
	}
	panic("ksgen: bad type")
}

// cond returns a Bool from Integers and Bools, so that no Float is
// compared: with the switch constCond, also true, false, or a comparison
// of an expression with itself.
func (g *gen) cond(d int) *Node {
	op := g.pick("gt", "lt", "eq", "ne")
	if g.constCond && g.chance(2) {
		if g.chance(2) {
			return leaf(tB, g.pick("true", "false"))
		}
		e := g.integer(d)
		return call(tB, op, e, e.clone())
	}
	return call(tB, op, g.integer(d), g.integer(d))
}

func (g *gen) integer(d int) *Node {
	if d <= 0 {
		return g.atom(tI)
	}
	switch g.rng.Intn(5) {
	case 0:
		return call(tI, "add", g.integer(d-1), g.integer(d-1))
	case 1, 3:
		if n := g.anySize(); n != nil {
			return n
		}
	case 2:
		return call(tI, "sub", g.integer(d-1), g.atom(tI))
	}
	return g.atom(tI)
}

// sizes returns expressions of the sizes of the visible vectors and
// matrices, with their values.
func (g *gen) sizes() (ns []*Node, vals []int) {
	for _, v := range g.visible() {
		switch v.T.K {
		case Vec, VecVec:
			ns = append(ns, call(tI, "size", leaf(v.T, v.Name)))
			vals = append(vals, v.T.N)
		case Tensor2:
			s := call(Type{K: IntPair, N: v.T.N, M: v.T.M}, "size", leaf(v.T, v.Name))
			ns = append(ns, call(tI, "get$1$2", s), call(tI, "get$2$2", s.clone()))
			vals = append(vals, v.T.N, v.T.M)
		}
	}
	return ns, vals
}

// anySize returns the size of a visible vector (or a dimension of a
// matrix), or nil.
func (g *gen) anySize() *Node {
	ns, _ := g.sizes()
	if len(ns) == 0 {
		return nil
	}
	return ns[g.rng.Intn(len(ns))]
}

// size returns an Integer expression whose value is n, fixed: the
// constant, or the size of a variable of that size, or a variable known
// to be n.
func (g *gen) size(n int) *Node {
	cands := []*Node{leaf(tI, fmt.Sprint(n))}
	ns, vals := g.sizes()
	for i, s := range ns {
		if vals[i] == n {
			cands = append(cands, s)
		}
	}
	for _, v := range g.varsOf(func(u Type) bool { return u.K == Integer }) {
		if v.Lo == n && v.Hi == n+1 {
			cands = append(cands, leaf(tI, v.Name))
		}
	}
	if len(cands) > 1 && g.chance(3) {
		return fixed(cands[0])
	}
	return fixed(cands[g.rng.Intn(len(cands))])
}

// size2 returns (tuple N M), or the size of a matrix of that size, fixed.
func (g *gen) size2(n, m int) *Node {
	t := Type{K: IntPair, N: n, M: m}
	for _, v := range g.varsOf(func(u Type) bool { return u.K == Tensor2 && u.N == n && u.M == m }) {
		if g.chance(2) {
			return fixed(call(t, "size", leaf(v.T, v.Name)))
		}
	}
	return fixed(call(t, "tuple", g.size(n), g.size(m)))
}

// index returns an Integer expression whose value is in [0, n), fixed: a
// constant, a loop index over a range within n (or the same loop
// reversed), or a size minus a constant.
func (g *gen) index(n int) *Node {
	cands := []*Node{leaf(tI, fmt.Sprint(g.rng.Intn(n)))}
	for _, v := range g.varsOf(func(u Type) bool { return u.K == Integer }) {
		switch {
		case v.Hi <= v.Lo:
		case v.Lo >= 0 && v.Hi <= n:
			cands = append(cands, leaf(tI, v.Name))
			if v.Lo == 0 && v.Hi == n {
				// n - 1 - i
				cands = append(cands, call(tI, "sub", call(tI, "sub", g.size(n), leaf(tI, "1")), leaf(tI, v.Name)))
			}
		case v.Hi == v.Lo+1 && v.Lo >= 1 && v.Lo <= n:
			cands = append(cands, call(tI, "sub", leaf(tI, v.Name), leaf(tI, "1")))
		}
	}
	ns, vals := g.sizes()
	for i, s := range ns {
		// s - c in [0, n): c in [max(1, s-n+1), s]
		lo := max(1, vals[i]-n+1)
		if lo <= vals[i] {
			c := lo + g.rng.Intn(vals[i]-lo+1)
			cands = append(cands, call(tI, "sub", s, leaf(tI, fmt.Sprint(c))))
		}
	}
	return fixed(cands[g.rng.Intn(len(cands))])
}

// loop returns (head n (lam (i : Integer) body)), the size n written by
// size, with i in [0, n) in scope for the body.
func (g *gen) loop(head string, t Type, n int, body func() *Node) *Node {
	size := g.size(n)
	i := g.binder(loopNames)
	b := g.with(Param{Name: i, T: tI, Lo: 0, Hi: n}, body)
	return &Node{T: t, Head: head, Bind: i, Kids: []*Node{size, b}}
}

// call returns a call of the helper h: usually with arguments of their
// types; with the switch fanout, with one variable in every position of
// its type; sometimes through $inline.
func (g *gen) call(h *Func, d int) *Node {
	args := make([]*Node, len(h.Params))
	shared := map[Type]*Node{}
	for i, p := range h.Params {
		switch {
		case h.Params[0].T.K == Integer && i == 0:
			args[i] = g.counter()
		case g.fanout && g.chance(2):
			if shared[p.T] == nil {
				shared[p.T] = g.varOf(p.T)
			}
			if u := shared[p.T]; u != nil {
				args[i] = u.clone()
				break
			}
			fallthrough
		default:
			args[i] = g.expr(p.T, d)
		}
	}
	return g.callWith(h, d, args...)
}

// callWith returns a call of h with the first arguments given, the rest
// generated, sometimes through $inline.
func (g *gen) callWith(h *Func, d int, args ...*Node) *Node {
	for _, p := range h.Params[len(args):] {
		args = append(args, g.expr(p.T, d))
	}
	n := call(tF, h.Name, args...)
	if g.inline && h.Params[0].T.K != Integer && g.chance(2) {
		n = call(tF, "$inline", n)
	}
	return n
}

// counter returns the counter of a call of the recursive helper, at most
// 3: a constant or a size.
func (g *gen) counter() *Node {
	if s := g.anySize(); s != nil && g.chance(2) {
		return fixed(s)
	}
	return fixed(leaf(tI, fmt.Sprint(g.rng.Intn(4))))
}

// float returns a Float expression.
func (g *gen) float(d int) *Node {
	f := func() *Node { return g.expr(tF, d) }
	if len(g.funcs) > 0 && g.chance(3) {
		return g.call(g.funcs[g.rng.Intn(len(g.funcs))], d)
	}
	if g.ranhash && g.chance(3) {
		var n *Node
		if s := g.anySize(); s != nil && g.chance(2) {
			n = s
		} else {
			n = g.integer(d)
		}
		return call(tF, "mul", f(), call(tF, "$ranhashdoub", n))
	}
	switch g.rng.Intn(17) {
	case 0:
		return call(tF, "add", f(), f())
	case 1:
		return call(tF, "sub", f(), f())
	case 2, 3:
		return call(tF, "mul", f(), f())
	case 4: // division by a value at least 2
		b := f()
		return call(tF, "div", f(), call(tF, "add", leaf(tF, "2.0"), call(tF, "mul", b, b.clone())))
	case 5:
		return call(tF, g.pick("sin", "cos", "tanh"), f())
	case 6:
		return call(tF, "exp", call(tF, "sin", f()))
	case 7: // log and sqrt of values at least 0.5
		a := f()
		return call(tF, g.pick("log", "sqrt"), call(tF, "add", leaf(tF, "1.5"), call(tF, "mul", a, a.clone())))
	case 8:
		if n := g.indexVar(); n != nil {
			return n
		}
	case 9:
		n := 1 + g.rng.Intn(3)
		return call(tF, "sum", g.expr(Type{K: Vec, N: n}, d))
	case 10:
		n := 1 + g.rng.Intn(3)
		return g.loop("sumbuild", tF, n, f)
	case 11:
		v := g.expr(Type{K: Vec, N: 1 + g.rng.Intn(3)}, d)
		init := f()
		p := g.binder([]string{"p", "a", "x", "v"})
		a, x := g.binder(floatNames), g.binder(floatNames)
		for x == a {
			x = g.pick(floatNames...)
		}
		g.vars = append(g.vars, Param{Name: p, T: tP}, Param{Name: a, T: tF}, Param{Name: x, T: tF})
		body := g.expr(tF, d)
		g.vars = g.vars[:len(g.vars)-3]
		return &Node{T: tF, Head: "fold", Bind: p + " " + a + " " + x, Kids: []*Node{body, init, v}}
	case 12:
		return call(tF, g.pick("get$1$2", "get$2$2"), g.expr(tP, d))
	case 13:
		return call(tF, "mul", f(), call(tF, "to_float", g.integer(d)))
	case 14:
		n := 1 + g.rng.Intn(3)
		return call(tF, "dot", g.expr(Type{K: Vec, N: n}, d), g.expr(Type{K: Vec, N: n}, d))
	case 15, 16:
		if g.tensors {
			m := Type{K: Tensor2, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)}
			if g.chance(2) {
				return call(tF, "sum", g.expr(m, d))
			}
			return call(tF, "index", fixed(call(Type{K: IntPair}, "tuple", g.index(m.N), g.index(m.M))), g.expr(m, d))
		}
	}
	return g.atom(tF)
}

// indexVar returns an element of a visible vector, vector of vectors or
// matrix, at indices in range, or nil.
func (g *gen) indexVar() *Node {
	vs := g.varsOf(func(u Type) bool { return u.K == Vec || u.K == VecVec || u.K == Tensor2 })
	if len(vs) == 0 {
		return nil
	}
	v := vs[g.rng.Intn(len(vs))]
	x := leaf(v.T, v.Name)
	switch v.T.K {
	case VecVec:
		row := call(Type{K: Vec, N: v.T.M}, "index", g.index(v.T.N), x)
		return call(tF, "index", g.index(v.T.M), row)
	case Tensor2:
		return call(tF, "index", fixed(call(Type{K: IntPair}, "tuple", g.index(v.T.N), g.index(v.T.M))), x)
	}
	return call(tF, "index", g.index(v.T.N), x)
}

// vec returns a vector of n Floats.
func (g *gen) vec(n, d int) *Node {
	t := Type{K: Vec, N: n}
	switch g.rng.Intn(8) {
	case 0, 1:
		return g.loop("build", t, n, func() *Node { return g.expr(tF, d) })
	case 2:
		return call(t, "mul", g.expr(tF, d), g.expr(t, d))
	case 3:
		return call(t, "sub", g.expr(t, d), g.expr(t, d))
	case 4:
		y := g.binder(floatNames)
		body := g.with(Param{Name: y, T: tF}, func() *Node { return g.expr(tF, d) })
		return &Node{T: t, Head: "map", Bind: y, Kids: []*Node{body, g.expr(t, d)}}
	case 5:
		m := Type{K: VecVec, N: 1 + g.rng.Intn(2), M: n}
		if g.chance(3) {
			return call(t, "sum", g.expr(m, d))
		}
		return call(t, "index", g.index(m.N), g.expr(m, d))
	case 6:
		if g.tensors {
			m := Type{K: Tensor2, N: n, M: 1 + g.rng.Intn(3)}
			return call(t, "mul", g.expr(m, d), g.expr(Type{K: Vec, N: m.M}, d))
		}
	case 7:
		if g.chance(2) {
			return g.sparse(n, d)
		}
	}
	return g.atom(t)
}

// sparse returns a buildFromSparse of n Floats from up to 2n pairs (none,
// sometimes), pair i landing on element i mod n: several pairs add into
// one element.
func (g *gen) sparse(n, d int) *Node {
	t := Type{K: Vec, N: n}
	m := g.rng.Intn(2*n + 1)
	count := g.size(m)
	i := g.binder(loopNames)
	var idx, val *Node
	g.with(Param{Name: i, T: tI, Lo: 0, Hi: m}, func() *Node {
		idx = fixed(leaf(tI, fmt.Sprintf("(sub %[1]s (mul %[2]d (div %[1]s %[2]d)))", i, n)))
		val = g.expr(tF, d)
		return val
	})
	return &Node{T: t, Head: "sparse", Bind: i, Kids: []*Node{g.size(n), count, idx, val}}
}

// tensor returns a matrix of t's size.
func (g *gen) tensor(t Type, d int) *Node {
	if g.chance(3) {
		y := g.binder(floatNames)
		body := g.with(Param{Name: y, T: tF}, func() *Node { return g.expr(tF, d) })
		return &Node{T: t, Head: "map", Bind: y, Kids: []*Node{body, g.expr(t, d)}}
	}
	size := g.size2(t.N, t.M)
	p := g.binder([]string{"ij", "p", "i", "v"})
	i := g.binder(loopNames)
	j := g.binder(loopNames)
	for j == i {
		j = g.pick("j", "b", "a")
	}
	g.vars = append(g.vars, Param{Name: p, T: Type{K: IntPair, N: t.N, M: t.M}},
		Param{Name: i, T: tI, Lo: 0, Hi: t.N}, Param{Name: j, T: tI, Lo: 0, Hi: t.M})
	body := g.expr(tF, d)
	g.vars = g.vars[:len(g.vars)-3]
	return &Node{T: t, Head: "build2", Bind: p + " " + i + " " + j, Kids: []*Node{size, body}}
}
