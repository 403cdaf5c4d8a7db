package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// dropCopies removes the copies reverse mode makes of values nothing else
// holds. An accumulator that several maps add into starts as a zero the
// shape of its first contribution, which is then added in:
//
//	z = (ts_zero e)
//	w = ($addTo z y)
//
// a copy of y, made so that later additions into w, in place, cannot
// change y's storage. Where y is owned by this code (made in the same
// chain of lets, from fresh storage, by steps each read once: see
// owner.fresh) and read nowhere else, nothing else can see y's storage,
// and w is y. (LSTM's reverse pass copied the whole state, a vector of
// rows, this way at each layer and each character.)
func dropCopies(ctx *Context) error {
	forEachBody(ctx.Prog, func(f *ir.Func) {
		uses := map[string]int{}
		bound := map[string]int{}
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.Var:
				uses[e.Name]++
			case *ir.Let:
				for _, v := range e.Vars {
					bound[v.Name]++
				}
			case *ir.Lam:
				bound[e.Param.Name]++
			}
			return true
		})
		o := &owner{uses: uses, bound: bound}
		f.Body = mapChains(f.Body, o.chain)
	})
	return nil
}

// owner finds the values a chain of lets owns.
type owner struct {
	uses, bound map[string]int
}

// chain drops the copies of one chain of lets.
func (o *owner) chain(items []ir.Expr) []ir.Expr {
	defs := map[string]*ir.Let{} // the let of the chain binding each name
	zeros := map[string]int{}    // z = (ts_zero e) -> its item
	drop := map[int]bool{}
	for k, it := range items {
		l, ok := it.(*ir.Let)
		if !ok {
			continue
		}
		if c, ok := l.Rhs.(*ir.Call); ok && c.Prim != nil && !l.Pattern && len(l.Vars) == 1 {
			switch c.Prim.Name {
			case "ts_zero":
				zeros[l.Vars[0].Name] = k
			case "$addTo":
				z, zok := c.Args[0].(*ir.Var)
				y, yok := c.Args[1].(*ir.Var)
				if !zok || !yok {
					break
				}
				if at, isZero := zeros[z.Name]; isZero && o.uses[z.Name] == 1 &&
					o.uses[y.Name]-mentions(items[at].(*ir.Let).Rhs, y.Name) == 1 &&
					o.fresh(y.Name, defs, 0) {
					drop[at] = true
					l.Rhs = y
				}
			}
		}
		for _, v := range l.Vars {
			defs[v.Name] = l
		}
	}
	if len(drop) == 0 {
		return items
	}
	out := items[:0:0]
	for k, it := range items {
		if !drop[k] {
			out = append(out, it)
		}
	}
	return out
}

// fresh reports whether the variable name, bound by the chain (defs),
// holds storage nothing else holds: a value with no tensor in it; or a
// fresh zero; a constVec or build of elements without tensors; an
// in-place update ($addTo, $addAt, $setAt of a fresh element) of a fresh
// value read only there; a tuple of fresh values; or a part of a fresh
// tuple taken apart by a pattern. Each variable on the way
// is bound once and read once (where the next step consumes it).
func (o *owner) fresh(name string, defs map[string]*ir.Let, depth int) bool {
	l := defs[name]
	if l == nil || o.bound[name] != 1 || depth > 32 {
		return false
	}
	for _, v := range l.Vars {
		if v.Name == name && !v.T.Contains(types.Tensor) {
			return true
		}
	}
	// A part taken apart by a pattern is fresh if the whole is.
	return o.freshExpr(l.Rhs, defs, depth)
}

// freshExpr reports whether the value of e is fresh (see fresh): its
// variables are read only there.
func (o *owner) freshExpr(e ir.Expr, defs map[string]*ir.Let, depth int) bool {
	if !e.Type().Contains(types.Tensor) {
		return true
	}
	switch e := e.(type) {
	case *ir.Var:
		return o.uses[e.Name] == 1 && o.fresh(e.Name, defs, depth+1)
	case *ir.Tuple:
		for _, a := range e.Elems {
			if !o.freshExpr(a, defs, depth+1) {
				return false
			}
		}
		return true
	case *ir.Call:
		if e.Prim == nil {
			return false
		}
		switch e.Prim.Name {
		case "ts_zero":
			return true
		case "constVec", "build":
			// Elements that are tensors may be another value's (the
			// same vector in every element of a constVec).
			return !e.T.Elem.Contains(types.Tensor)
		case "$addTo", "$addAt":
			return o.freshExpr(e.Args[0], defs, depth+1) // adds values into its storage
		case "$setAt":
			// The element stored is held by the result.
			return o.freshExpr(e.Args[0], defs, depth+1) && o.freshExpr(e.Args[2], defs, depth+1)
		}
	}
	return false
}

// mentions counts the occurrences of the variable name in e.
func mentions(e ir.Expr, name string) int {
	n := 0
	ir.Inspect(e, func(x ir.Expr) bool {
		if v, ok := x.(*ir.Var); ok && v.Name == name {
			n++
		}
		return true
	})
	return n
}
