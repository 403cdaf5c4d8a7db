// Package ksgen generates random well-typed ks programs for differential
// testing: the C and Go backends must print the same values for them, and
// every way of differentiating them must agree with the others and with
// finite differences (tests/random_test.go).
//
// A program is a few helper functions and an entry function
//
//	(def P_f R ((x : Float) (v : Vec Float) (k : Integer)) ...)
//
// with gdefs of its derivatives. Bodies are built from Floats, Integers,
// Bools, vectors of known sizes, vectors of vectors, pairs, lets (with
// tuple patterns), ifs on Integer conditions (so the functions are smooth
// and finite differences apply), build, sumbuild, index, size, sum, fold,
// map, calls of the helpers defined before, and prelude functions on safe
// domains: log and sqrt of values kept positive, division by values kept
// away from zero, exp of a sine. Indices are constants within the size or
// the index of a loop over the vector's own size, so no index is out of
// range. Programs are trees of Nodes, so that a failing one can be shrunk
// (Shrink) by replacing subtrees with smaller ones of the same type.
package ksgen

import (
	"fmt"
	"math/rand"
	"strings"
)

// Kind is the kind of a generated value's type.
type Kind int

const (
	Float Kind = iota
	Integer
	Bool
	Vec     // Vec Float of N elements
	VecVec  // Vec (Vec Float) of N rows of M
	Pair    // Tuple Float Float
	numKind // the number of kinds
)

// Type is a generated value's type with its sizes.
type Type struct {
	K    Kind
	N, M int
}

// KS returns the ks spelling of t.
func (t Type) KS() string {
	return [...]string{"Float", "Integer", "Bool", "(Vec Float)", "(Vec (Vec Float))", "(Tuple Float Float)"}[t.K]
}

// A Node is an expression. Its form is one of:
//
//	leaf     Text
//	call     (Head Kids...)
//	let      (let (Bind Kids[0]) Kids[1]); Head "let"
//	let2     (let ((a b) Kids[0]) Kids[1]), Bind "a b"; Head "let2"
//	loop     (Head Kids[0] (lam (Bind : Integer) Kids[1])): build, sumbuild
//	map      (map (lam (Bind : Float) Kids[0]) Kids[1])
//	fold     (fold (lam (p : Tuple Float Float) (let ((a x) p) Kids[0])) Kids[1] Kids[2]), Bind "p a x"
type Node struct {
	T    Type
	Head string
	Text string
	Bind string
	Kids []*Node
}

// String returns the node as ks text.
func (n *Node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *Node) write(b *strings.Builder) {
	k := func(i int) { b.WriteByte(' '); n.Kids[i].write(b) }
	switch n.Head {
	case "":
		b.WriteString(n.Text)
	case "let":
		fmt.Fprintf(b, "(let (%s", n.Bind)
		k(0)
		b.WriteString(")")
		k(1)
		b.WriteString(")")
	case "let2":
		fmt.Fprintf(b, "(let ((%s)", n.Bind)
		k(0)
		b.WriteString(")")
		k(1)
		b.WriteString(")")
	case "build", "sumbuild":
		b.WriteString("(" + n.Head)
		k(0)
		fmt.Fprintf(b, " (lam (%s : Integer)", n.Bind)
		k(1)
		b.WriteString("))")
	case "map":
		fmt.Fprintf(b, "(map (lam (%s : Float)", n.Bind)
		k(0)
		b.WriteString(")")
		k(1)
		b.WriteString(")")
	case "fold":
		f := strings.Fields(n.Bind)
		fmt.Fprintf(b, "(fold (lam (%s : Tuple Float Float) (let ((%s %s) %s)", f[0], f[1], f[2], f[0])
		k(0)
		b.WriteString("))")
		k(1)
		k(2)
		b.WriteString(")")
	default:
		b.WriteString("(" + n.Head)
		for i := range n.Kids {
			k(i)
		}
		b.WriteString(")")
	}
}

// binds returns the names n binds for its kids.
func (n *Node) binds() []string { return strings.Fields(n.Bind) }

// A Func is a generated function.
type Func struct {
	Name   string
	Params []Param
	Result Type
	Body   *Node
}

// A Param is a function parameter.
type Param struct {
	Name string
	T    Type
}

// A Program is a generated program: helpers, then the entry function,
// which is the last.
type Program struct {
	Funcs []*Func
	K     int // the value of the entry's Integer argument
}

// Entry returns the entry function.
func (p *Program) Entry() *Func { return p.Funcs[len(p.Funcs)-1] }

// String returns the program as ks text, with gdefs of the entry's
// derivatives.
func (p *Program) String() string {
	var b strings.Builder
	b.WriteString(p.Defs())
	e := p.Entry()
	var ts []string
	for _, q := range e.Params {
		ts = append(ts, q.T.KS())
	}
	for _, d := range []string{"fwd", "rev", "sufrev"} {
		fmt.Fprintf(&b, "(gdef %s [%s (Tuple %s)])\n", d, e.Name, strings.Join(ts, " "))
	}
	return b.String()
}

// Defs returns the program's definitions without the gdefs.
func (p *Program) Defs() string {
	var b strings.Builder
	for _, f := range p.Funcs {
		var ps []string
		for _, q := range f.Params {
			ps = append(ps, fmt.Sprintf("(%s : %s)", q.Name, q.T.KS()))
		}
		fmt.Fprintf(&b, "(def %s %s (%s)\n  %s)\n", f.Name, f.Result.KS(), strings.Join(ps, " "), f.Body)
	}
	return b.String()
}

// Specs returns the argument specs of the entry function and the spec of
// its result's cotangent, in the notation of the derivative tests (f, v4,
// i2, t(f,f)).
func (p *Program) Specs() (args []string, result string) {
	spec := func(t Type) string {
		switch t.K {
		case Float:
			return "f"
		case Vec:
			return fmt.Sprintf("v%d", t.N)
		case Pair:
			return "t(f,f)"
		case VecVec:
			return fmt.Sprintf("vv%dx%d", t.N, t.M)
		}
		return fmt.Sprintf("i%d", p.K)
	}
	for _, q := range p.Entry().Params {
		args = append(args, spec(q.T))
	}
	return args, spec(p.Entry().Result)
}

// Generate returns the program of a seed; its names start with prefix.
func Generate(seed int64, prefix string) *Program {
	g := &gen{rng: rand.New(rand.NewSource(seed)), prefix: prefix}
	p := &Program{K: g.rng.Intn(4)}
	nv := 1 + g.rng.Intn(4)
	for i, n := 0, g.rng.Intn(3); i < n; i++ {
		f := &Func{Name: fmt.Sprintf("%sg%d", prefix, i), Result: Type{K: Float},
			Params: []Param{{"a", Type{K: Float}}, {"w", Type{K: Vec, N: 1 + g.rng.Intn(3)}}}}
		f.Body = g.function(f, 2)
		g.funcs = append(g.funcs, f)
		p.Funcs = append(p.Funcs, f)
	}
	results := []Type{{K: Float}, {K: Float}, {K: Vec, N: 1 + g.rng.Intn(3)}, {K: Pair}}
	e := &Func{Name: prefix + "f", Result: results[g.rng.Intn(len(results))],
		Params: []Param{{"x", Type{K: Float}}, {"v", Type{K: Vec, N: nv}}, {"k", Type{K: Integer}}}}
	e.Body = g.function(e, 3)
	p.Funcs = append(p.Funcs, e)
	return p
}

type gen struct {
	rng    *rand.Rand
	prefix string
	funcs  []*Func // the helpers callable so far
	vars   []Param // the variables in scope
	loops  map[string]int
	fresh  int
}

func (g *gen) function(f *Func, depth int) *Node {
	g.vars = append([]Param(nil), f.Params...)
	g.loops = map[string]int{}
	return g.expr(f.Result, depth)
}

func (g *gen) name(base string) string {
	g.fresh++
	return fmt.Sprintf("%s%d", base, g.fresh)
}

func leaf(t Type, text string) *Node { return &Node{T: t, Text: text} }

func call(t Type, head string, kids ...*Node) *Node { return &Node{T: t, Head: head, Kids: kids} }

var (
	tF = Type{K: Float}
	tI = Type{K: Integer}
	tB = Type{K: Bool}
	tP = Type{K: Pair}
)

// varOf returns a variable of type t in scope, or nil.
func (g *gen) varOf(t Type) *Node {
	var cands []Param
	for _, v := range g.vars {
		if v.T == t {
			cands = append(cands, v)
		}
	}
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
	if depth <= 0 || g.rng.Intn(6) == 0 {
		return g.atom(t)
	}
	d := depth - 1
	switch g.rng.Intn(5) {
	case 0: // let
		rt := g.anyType()
		rhs := g.expr(rt, d)
		if rt.K == Pair && g.rng.Intn(2) == 0 {
			a, b := g.name("a"), g.name("b")
			g.vars = append(g.vars, Param{a, tF}, Param{b, tF})
			body := g.expr(t, d)
			g.vars = g.vars[:len(g.vars)-2]
			return &Node{T: t, Head: "let2", Bind: a + " " + b, Kids: []*Node{rhs, body}}
		}
		y := g.name("y")
		body := g.with(Param{y, rt}, func() *Node { return g.expr(t, d) })
		return &Node{T: t, Head: "let", Bind: y, Kids: []*Node{rhs, body}}
	case 1: // if on an Integer condition
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
		i := g.name("i")
		g.loops[i] = t.N
		return &Node{T: t, Head: "build", Bind: i, Kids: []*Node{leaf(tI, fmt.Sprint(t.N)),
			g.with(Param{i, tI}, func() *Node { return g.vec(t.M, d) })}}
	case Pair:
		return call(t, "tuple", g.float(d), g.float(d))
	}
	panic("ksgen: bad type")
}

// anyType returns a random type for a let.
func (g *gen) anyType() Type {
	switch g.rng.Intn(7) {
	case 0:
		return tI
	case 1, 2:
		return Type{K: Vec, N: 1 + g.rng.Intn(3)}
	case 3:
		return tP
	case 4:
		return Type{K: VecVec, N: 1 + g.rng.Intn(2), M: 1 + g.rng.Intn(3)}
	}
	return tF
}

// atom returns a variable or a constant of type t.
func (g *gen) atom(t Type) *Node {
	if v := g.varOf(t); v != nil && g.rng.Intn(4) != 0 {
		return v
	}
	switch t.K {
	case Float:
		return leaf(t, []string{"0.5", "1.25", "-0.75", "2.0", "0.1"}[g.rng.Intn(5)])
	case Integer:
		return leaf(t, fmt.Sprint(g.rng.Intn(3)))
	case Bool:
		return leaf(t, []string{"true", "false"}[g.rng.Intn(2)])
	case Vec:
		return call(t, "constVec", leaf(tI, fmt.Sprint(t.N)), g.atom(tF))
	case VecVec:
		i := g.name("i")
		return &Node{T: t, Head: "build", Bind: i, Kids: []*Node{leaf(tI, fmt.Sprint(t.N)),
			call(Type{K: Vec, N: t.M}, "constVec", leaf(tI, fmt.Sprint(t.M)), g.atom(tF))}}
	case Pair:
		return call(t, "tuple", g.atom(tF), g.atom(tF))
	}
	panic("ksgen: bad type")
}

// cond returns a Bool from Integers, so that no Float is compared.
func (g *gen) cond(d int) *Node {
	op := []string{"gt", "lt", "eq", "ne"}[g.rng.Intn(4)]
	return call(tB, op, g.integer(d), g.integer(d))
}

func (g *gen) integer(d int) *Node {
	if d <= 0 {
		return g.atom(tI)
	}
	switch g.rng.Intn(4) {
	case 0:
		return call(tI, "add", g.integer(d-1), g.integer(d-1))
	case 1:
		if v := g.anyVec(); v != nil {
			return call(tI, "size", v)
		}
	case 2:
		return call(tI, "sub", g.integer(d-1), g.atom(tI))
	}
	return g.atom(tI)
}

// anyVec returns a vector variable in scope, or nil.
func (g *gen) anyVec() *Node {
	var cands []Param
	for _, v := range g.vars {
		if v.T.K == Vec {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	v := cands[g.rng.Intn(len(cands))]
	return leaf(v.T, v.Name)
}

// float returns a Float expression.
func (g *gen) float(d int) *Node {
	f := func() *Node { return g.expr(tF, d) }
	switch g.rng.Intn(16) {
	case 0:
		return call(tF, "add", f(), f())
	case 1:
		return call(tF, "sub", f(), f())
	case 2, 3:
		return call(tF, "mul", f(), f())
	case 4: // division by a value at least 2
		b := f()
		return call(tF, "div", f(), call(tF, "add", leaf(tF, "2.0"), call(tF, "mul", b, b)))
	case 5:
		return call(tF, []string{"sin", "cos", "tanh"}[g.rng.Intn(3)], f())
	case 6:
		return call(tF, "exp", call(tF, "sin", f()))
	case 7: // log and sqrt of values at least 0.5
		a := f()
		return call(tF, []string{"log", "sqrt"}[g.rng.Intn(2)], call(tF, "add", leaf(tF, "1.5"), call(tF, "mul", a, a)))
	case 8:
		if v := g.anyVec(); v != nil {
			// A constant index within the size, or a loop's index over it.
			for name, n := range g.loops {
				if n == v.T.N && g.inScope(name) && g.rng.Intn(2) == 0 {
					return call(tF, "index", leaf(tI, name), v)
				}
			}
			return call(tF, "index", leaf(tI, fmt.Sprint(g.rng.Intn(v.T.N))), v)
		}
	case 9:
		n := 1 + g.rng.Intn(3)
		return call(tF, "sum", g.expr(Type{K: Vec, N: n}, d))
	case 10:
		n := 1 + g.rng.Intn(3)
		i := g.name("i")
		g.loops[i] = n
		return &Node{T: tF, Head: "sumbuild", Bind: i, Kids: []*Node{leaf(tI, fmt.Sprint(n)),
			g.with(Param{i, tI}, func() *Node { return g.expr(tF, d) })}}
	case 11:
		v := g.expr(Type{K: Vec, N: 1 + g.rng.Intn(3)}, d)
		p, a, x := g.name("p"), g.name("acc"), g.name("e")
		g.vars = append(g.vars, Param{a, tF}, Param{x, tF})
		body := g.expr(tF, d)
		g.vars = g.vars[:len(g.vars)-2]
		return &Node{T: tF, Head: "fold", Bind: p + " " + a + " " + x, Kids: []*Node{body, f(), v}}
	case 12:
		return call(tF, "get$1$2", g.expr(tP, d))
	case 13:
		return call(tF, "mul", f(), call(tF, "to_float", g.integer(d)))
	case 14:
		if len(g.funcs) > 0 {
			h := g.funcs[g.rng.Intn(len(g.funcs))]
			return call(tF, h.Name, f(), g.expr(h.Params[1].T, d))
		}
	case 15:
		n := 1 + g.rng.Intn(3)
		return call(tF, "dot", g.expr(Type{K: Vec, N: n}, d), g.expr(Type{K: Vec, N: n}, d))
	}
	return g.atom(tF)
}

// inScope reports whether a variable is in scope.
func (g *gen) inScope(name string) bool {
	for _, v := range g.vars {
		if v.Name == name {
			return true
		}
	}
	return false
}

// vec returns a vector of n Floats.
func (g *gen) vec(n, d int) *Node {
	t := Type{K: Vec, N: n}
	switch g.rng.Intn(6) {
	case 0, 1:
		i := g.name("i")
		g.loops[i] = n
		return &Node{T: t, Head: "build", Bind: i, Kids: []*Node{leaf(tI, fmt.Sprint(n)),
			g.with(Param{i, tI}, func() *Node { return g.expr(tF, d) })}}
	case 2:
		return call(t, "mul", g.expr(tF, d), g.expr(t, d))
	case 3:
		return call(t, "sub", g.expr(t, d), g.expr(t, d))
	case 4:
		y := g.name("z")
		body := g.with(Param{y, tF}, func() *Node { return g.expr(tF, d) })
		return &Node{T: t, Head: "map", Bind: y, Kids: []*Node{body, g.expr(t, d)}}
	case 5:
		m := Type{K: VecVec, N: 1 + g.rng.Intn(2), M: n}
		return call(t, "index", leaf(tI, fmt.Sprint(g.rng.Intn(m.N))), g.expr(m, d))
	}
	return g.atom(t)
}

// Shrink returns a smaller program that still fails, by the predicate
// fails (which p must satisfy): it replaces subtrees by constants of their
// type, or by a child of the same type that does not refer to what the
// subtree binds, as long as the result fails, until no replacement does.
// p is changed in place and returned.
func Shrink(p *Program, fails func(*Program) bool) *Program {
	for changed := true; changed; {
		changed = false
		for _, f := range p.Funcs {
			for _, n := range nodes(f.Body) {
				for _, r := range smaller(n) {
					saved := *n
					*n = *r
					if fails(p) {
						changed = true
						break
					}
					*n = saved
				}
			}
		}
	}
	return p
}

// nodes returns the nodes of a tree, parents first.
func nodes(n *Node) []*Node {
	out := []*Node{n}
	for _, k := range n.Kids {
		out = append(out, nodes(k)...)
	}
	return out
}

// smaller returns the replacements of n to try, smallest first.
func smaller(n *Node) []*Node {
	if n.Head == "" {
		return nil
	}
	var out []*Node
	c := constant(n.T)
	if c.String() != n.String() {
		out = append(out, c)
	}
	bound := n.binds()
	for _, k := range n.Kids {
		if k.T == n.T && !mentions(k, bound) {
			out = append(out, k)
		}
	}
	return out
}

// constant returns a constant of type t.
func constant(t Type) *Node {
	switch t.K {
	case Float:
		return leaf(t, "1.0")
	case Integer:
		return leaf(t, "1")
	case Bool:
		return leaf(t, "true")
	case Vec:
		return call(t, "constVec", leaf(tI, fmt.Sprint(t.N)), leaf(tF, "1.0"))
	case VecVec:
		return call(t, "constVec", leaf(tI, fmt.Sprint(t.N)), constant(Type{K: Vec, N: t.M}))
	case Pair:
		return call(t, "tuple", leaf(tF, "1.0"), leaf(tF, "1.0"))
	}
	panic("ksgen: bad type")
}

// mentions reports whether n refers to any of the names.
func mentions(n *Node, names []string) bool {
	if len(names) == 0 {
		return false
	}
	words := strings.FieldsFunc(n.String(), func(r rune) bool {
		return !(r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
	for _, w := range words {
		for _, x := range names {
			if w == x {
				return true
			}
		}
	}
	return false
}
