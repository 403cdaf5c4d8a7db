package cemit

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Arena reuse in loops.
//
// Everything generated code allocates lives in the context's arena until
// the caller resets it. A loop whose iterations allocate temporaries (the
// vector x - mu inside a sum over data points, say) would keep all of them:
// n iterations, n temporaries. When nothing an iteration leaves behind can
// point into the arena, the loop takes a mark before its first iteration
// and returns the arena to it at the end of each one, so every iteration
// reuses the same memory, which stays in cache.
//
// What an iteration leaves behind is the value it stores (the element of a
// build or map, the addend of a sum, the new state of a fold) and whatever
// it writes into memory that outlives it. Derived code writes into outer
// accumulators only element by element ($addTo and $addAt add Floats into
// existing memory), except $setAt, which may store a pointer. So a loop
// releases when the stored value's type is uniform (scalars and tuples of
// scalars, which hold no pointers), the body stores no pointer with
// $setAt, and the body may allocate at all (else the mark is wasted work).

// releaseAfter starts arena reuse for a loop about to be emitted, whose
// iterations store values of type t computed by bodies. It returns the
// statement that ends each iteration, or "" when the loop cannot or need
// not release.
func (f *fn) releaseAfter(t *types.Type, bodies ...ir.Expr) string {
	if !t.IsUniform() {
		return ""
	}
	alloc := false
	for _, b := range bodies {
		if storesPointer(b) {
			return ""
		}
		if f.e.mayAllocate(b) {
			alloc = true
		}
	}
	if !alloc {
		return ""
	}
	m := f.fresh("mark")
	f.line("ks_mark %s = ks_arena_mark(ctx);", m)
	return "ks_arena_release(ctx, " + m + ");"
}

// storesPointer reports whether e may store a pointer into memory that
// outlives it: a $setAt of a non-uniform element.
func storesPointer(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == "$setAt" && !c.T.Elem.IsUniform() {
			found = true
		}
		return !found
	})
	return found
}

// noAlloc lists the primitives that return non-uniform values without
// allocating: they select from or update memory that exists already.
var noAlloc = map[string]bool{
	"index": true, "$inline": true, "$copydown": true, "$addTo": true, "$addAt": true, "$setAt": true,
	"$dup": true, "$elim": true, "$outl": true, "$outr": true, "$unwrap": true, "$inl": true, "$inr": true,
}

// mayAllocate reports whether evaluating e may allocate arena memory. It
// may answer true wrongly (the loop then releases nothing), never false.
func (e *emitter) mayAllocate(x ir.Expr) bool {
	found := false
	ir.Inspect(x, func(x ir.Expr) bool {
		c, ok := x.(*ir.Call)
		switch {
		case !ok:
		case c.Fn != nil:
			found = e.funcAllocates(c.Fn)
		case c.Prim != nil && !c.T.IsUniform() && !noAlloc[c.Prim.Name]:
			found = true
		}
		return !found
	})
	return found
}

// funcAllocates reports whether calling f may allocate. A function being
// analysed (recursion) is assumed to.
func (e *emitter) funcAllocates(f *ir.Func) bool {
	if a, ok := e.allocates[f]; ok {
		return a
	}
	if f.Body == nil {
		return f.Kind != ir.EdefFunc // an edef'd C function does not see the arena
	}
	e.allocates[f] = true
	a := e.mayAllocate(f.Body)
	e.allocates[f] = a
	return a
}
