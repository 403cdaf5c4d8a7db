package lower

import "github.com/ksc-lang/ksc/ir"

// LeafSize bounds the body of a leaf function (IsLeaf), in nodes.
const LeafSize = 40

// IsLeaf reports whether f is a leaf: a body of at most LeafSize nodes that
// calls no function (primitives only), runs no loop and has no effect,
// such as a sigmoid. The optimiser inlines the calls of a leaf
// (inline-leaves), and reverse mode runs a leaf again ([revacc g]) where it
// would split the call of another function: a record per call costs more
// than running it again, and, inlined, cse computes what the two share once.
func IsLeaf(f *ir.Func, eff Effects) bool {
	return IsLeafWithin(f, eff, LeafSize)
}

// IsLeafWithin is IsLeaf with a bound of size nodes on the body.
func IsLeafWithin(f *ir.Func, eff Effects, size int) bool {
	if f.Body == nil || f.Prim != nil || len(f.Params) == 0 || HasEffect(f.Body, eff) {
		return false
	}
	n, ok := 0, true
	ir.Inspect(f.Body, func(e ir.Expr) bool {
		n++
		switch e := e.(type) {
		case *ir.Lam:
			ok = false
		case *ir.Call:
			if e.Fn != nil {
				ok = false
			}
		}
		return ok && n <= size
	})
	return ok && n <= size
}
