package ksgen

import (
	"fmt"
	"strings"
)

// Shrink returns a smaller program that still fails, by the predicate
// fails (which p must satisfy): it replaces subtrees by constants of their
// type, or by a child of the same type that does not refer to what the
// subtree binds, as long as the result fails, until no replacement does.
// It leaves Fixed nodes alone (indices and sizes the generator keeps in
// range, recursion counters) and replaces Hold nodes (the if that ends a
// recursion) only by constants, so that a shrunk program has no index out
// of range and no unbounded recursion the original did not have. p is
// changed in place and returned.
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

// nodes returns the nodes of a tree that Shrink may replace, parents
// first: all but Fixed ones and their descendants.
func nodes(n *Node) []*Node {
	if n.Fixed {
		return nil
	}
	out := []*Node{n}
	for _, k := range n.Kids {
		out = append(out, nodes(k)...)
	}
	return out
}

// smaller returns the replacements of n to try, smallest first.
func smaller(n *Node) []*Node {
	if n.Head == "" || n.Fixed {
		return nil
	}
	var out []*Node
	c := constant(n.T)
	if c.String() != n.String() {
		out = append(out, c)
	}
	if n.Hold {
		return out
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
	case Tensor2:
		return call(t, "constVec", constant(Type{K: IntPair, N: t.N, M: t.M}), leaf(tF, "1.0"))
	case IntPair:
		return call(t, "tuple", leaf(tI, fmt.Sprint(t.N)), leaf(tI, fmt.Sprint(t.M)))
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
