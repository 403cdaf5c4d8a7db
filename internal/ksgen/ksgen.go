// Package ksgen generates random well-typed ks programs for differential
// testing: the C and Go backends must print the same values for them, and
// every way of differentiating them must agree with the others and with
// finite differences (tests/random_test.go).
//
// A program is a few helper functions and an entry function
//
//	(def P_f R ((x : Float) (v : Vec Float) (k : Integer) [(t : Tensor 2 Float)] [(w : Vec (Vec Float))]) ...)
//
// with gdefs of its derivatives. It is written the way users write: the
// same few binder names (v, a, b, i, x, ...) at every depth, shadowing
// outer ones and the parameters; one variable passed in several argument
// positions of a call, directly or through an alias; tuples of one
// variable twice; $inline calls; constant and degenerate conditions
// ((if true ...), (gt k k)); Tensor 2 and Vec (Vec Float) values; Integers
// computed from the sizes of active arguments feeding size, index and
// $ranhashdoub; a helper that calls itself with a decreasing counter; a
// helper whose [rev] is written by hand (Func.HandRev).
//
// Bodies are built from Floats, Integers, Bools, vectors, vectors of
// vectors, matrices, pairs, lets (with tuple patterns), ifs on Integer
// and Bool conditions (so the functions are smooth and finite differences
// apply), build (over an Integer or a pair of Integers), sumbuild,
// buildFromSparse (pairs landing on one element, or none), index,
// size, sum, fold, map, dot, calls of the helpers defined before, and
// prelude functions on safe domains: log and sqrt of values kept
// positive, division by values kept away from zero, exp of a sine. Every
// size is known to the generator, and an index is a constant within the
// size, a loop index over a range within it, or arithmetic on sizes kept
// within it, so no index is out of range. Programs are trees of Nodes, so
// that a failing one can be shrunk (Shrink) by replacing subtrees with
// smaller ones of the same type; Features names the constructs a program
// exercises.
package ksgen

import (
	"fmt"
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
	Tensor2 // Tensor 2 Float of N rows of M
	IntPair // Tuple Integer Integer: the size of a Tensor 2, N by M
)

// Type is a generated value's type with its sizes.
type Type struct {
	K    Kind
	N, M int
}

// KS returns the ks spelling of t.
func (t Type) KS() string {
	return [...]string{"Float", "Integer", "Bool", "(Vec Float)", "(Vec (Vec Float))", "(Tuple Float Float)",
		"(Tensor 2 Float)", "(Tuple Integer Integer)"}[t.K]
}

// A Node is an expression. Its form is one of:
//
//	leaf     Text
//	call     (Head Kids...); Head "$inline" has one kid, a call
//	let      (let (Bind Kids[0]) Kids[1]); Head "let"
//	let2     (let ((a b) Kids[0]) Kids[1]), Bind "a b"; Head "let2"
//	loop     (Head Kids[0] (lam (Bind : Integer) Kids[1])): build, sumbuild
//	build2   (build Kids[0] (lam (p : Tuple Integer Integer) (let ((i j) p) Kids[1]))), Bind "p i j"
//	map      (map (lam (Bind : Float) Kids[0]) Kids[1])
//	fold     (fold (lam (p : Tuple Float Float) (let ((a x) p) Kids[0])) Kids[1] Kids[2]), Bind "p a x"
//	sparse   (buildFromSparse Kids[0] Kids[1] (lam (Bind : Integer) (tuple Kids[2] Kids[3])))
type Node struct {
	T    Type
	Head string
	Text string
	Bind string
	Kids []*Node
	// Fixed marks a node that Shrink leaves alone, kids included: an
	// index or a size whose value the generator relies on, the counter of
	// a recursion.
	Fixed bool
	// Hold marks a node that Shrink may replace by a constant but not by
	// one of its kids: the if that ends a recursion, the bounded function
	// around a recursive call's arguments and each level's value.
	Hold bool
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
	case "build2":
		f := strings.Fields(n.Bind)
		b.WriteString("(build")
		k(0)
		fmt.Fprintf(b, " (lam (%s : Tuple Integer Integer) (let ((%s %s) %s)", f[0], f[1], f[2], f[0])
		k(1)
		b.WriteString(")))")
	case "sparse":
		b.WriteString("(buildFromSparse")
		k(0)
		k(1)
		fmt.Fprintf(b, " (lam (%s : Integer) (tuple", n.Bind)
		k(2)
		k(3)
		b.WriteString(")))")
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

// clone returns a deep copy of n.
func (n *Node) clone() *Node {
	c := *n
	c.Kids = make([]*Node, len(n.Kids))
	for i, k := range n.Kids {
		c.Kids[i] = k.clone()
	}
	return &c
}

// A Func is a generated function.
type Func struct {
	Name   string
	Params []Param
	Result Type
	Body   *Node
	// HandRev, for a helper, writes its reverse mode by hand: a def
	// NAME_body with the same parameters and body, and [rev NAME] as
	// [rev NAME_body]. It is the derivative of the body (so finite
	// differences still check it), reached through the paths of a
	// hand-written [rev g] (derive/handsplit.go), and the twin is made
	// from the body when written, so shrinking keeps the two equal.
	HandRev bool
}

// A Param is a function parameter, or a variable in scope while
// generating.
type Param struct {
	Name string
	T    Type
	// Lo and Hi, when Hi > Lo, bound an Integer's value: Lo <= value < Hi
	// (a loop index, a size).
	Lo, Hi int
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
		var ps, ts []string
		for _, q := range f.Params {
			ps = append(ps, fmt.Sprintf("(%s : %s)", q.Name, q.T.KS()))
			ts = append(ts, q.T.KS())
		}
		if f.HandRev {
			fmt.Fprintf(&b, "(def %s_body %s (%s)\n  %s)\n", f.Name, f.Result.KS(), strings.Join(ps, " "), f.Body)
		}
		fmt.Fprintf(&b, "(def %s %s (%s)\n  %s)\n", f.Name, f.Result.KS(), strings.Join(ps, " "), f.Body)
		if f.HandRev {
			arg := "(Tuple " + strings.Join(ts, " ") + ")"
			fmt.Fprintf(&b, "(def [rev %s] %s ((x : %s) (dr : %s))\n  ([rev %s_body] x dr))\n",
				f.Name, arg, arg, f.Result.KS(), f.Name)
		}
	}
	return b.String()
}

// Specs returns the argument specs of the entry function and the spec of
// its result's cotangent, in the notation of the derivative tests (f, v4,
// i2, t(f,f), vv2x3, m2x3).
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
		case Tensor2:
			return fmt.Sprintf("m%dx%d", t.N, t.M)
		}
		return fmt.Sprintf("i%d", p.K)
	}
	for _, q := range p.Entry().Params {
		args = append(args, spec(q.T))
	}
	return args, spec(p.Entry().Result)
}
