package lower

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Unzip keeps a vector of tuples of scalars as a tuple of vectors, one
// per scalar, where only its elements and its size are read:
//
//	(let (t (build n (lam i ... (tuple (tuple a b) c)))) ... (index x t) ... (size t) ...)
//
// becomes
//
//	(let ((t1 t2 t3) (unzip (build n (lam i ... (tuple a b c))))) ... (tuple (tuple (index x t1) (index x t2)) (index x t3)) ... (size t1) ...)
//
// Such vectors are the tapes and records derived code keeps per loop
// iteration (tape-loops, split reverse mode). The C backend stores a
// tensor of tuples as an array of structs, which gcc does not vectorise
// the loops storing; it compiles unzip of a build as one loop storing
// each scalar into its own array (emit/c's unzipBuild), which it does.
// The simplifier then takes the rebuilt tuples apart where they are read.
func Unzip(e ir.Expr, ns *ir.Names) ir.Expr {
	return ir.Map(e, func(e ir.Expr) ir.Expr {
		l, ok := e.(*ir.Let)
		if !ok || l.Pattern || len(l.Vars) != 1 {
			return e
		}
		return unzipLet(l, ns)
	})
}

// scalarLeaves returns the paths (field numbers from the outside in) to
// the scalars of t, a tuple of scalars and tuples of them, or false.
func scalarLeaves(t *types.Type) ([][]int, bool) {
	switch {
	case t.IsScalar():
		return [][]int{nil}, true
	case t.Kind == types.Tuple:
		var out [][]int
		for k, et := range t.Elems {
			sub, ok := scalarLeaves(et)
			if !ok {
				return nil, false
			}
			for _, path := range sub {
				out = append(out, append([]int{k}, path...))
			}
		}
		return out, true
	}
	return nil, false
}

func unzipLet(l *ir.Let, ns *ir.Names) ir.Expr {
	v := l.Vars[0]
	build, ok := l.Rhs.(*ir.Call)
	if !ok || build.Prim == nil || build.Prim.Name != "build" || len(build.Args) != 2 {
		return l
	}
	lam, ok := build.Args[1].(*ir.Lam)
	if !ok || lam.Param.T.Kind != types.Integer || v.T.Elem.Kind != types.Tuple {
		return l
	}
	elem := v.T.Elem
	leaves, ok := scalarLeaves(elem)
	if !ok || len(leaves) < 2 || !onlyElementsRead(v.Name, l.Body) {
		return l
	}
	p := l.P
	// The element, taken apart into its scalars.
	items, tail := ir.ChainItems(lam.Body)
	var binds []ir.Expr
	var parts []ir.Expr
	// A part that is a tuple but not written as one is bound and taken
	// apart; then every part is bound, so that all are evaluated in order.
	bindAll := false
	var flatten func(e ir.Expr)
	flatten = func(e ir.Expr) {
		if t, ok := e.(*ir.Tuple); ok {
			for _, x := range t.Elems {
				flatten(x)
			}
			return
		}
		if bindAll && !ir.IsAtom(e) {
			x := ns.FreshVar(p, "e", e.Type())
			binds = append(binds, &ir.Let{P: p, Vars: []*ir.Var{x}, Rhs: e})
			e = ir.Ref(p, x)
		}
		sub, _ := scalarLeaves(e.Type())
		for _, path := range sub {
			x := ir.Copy(e, ir.Pos{})
			for _, f := range path {
				x = ir.MkGet(p, f+1, x)
			}
			parts = append(parts, x)
		}
	}
	ir.Inspect(tail, func(x ir.Expr) bool {
		_, literal := x.(*ir.Tuple)
		bindAll = bindAll || !literal && x.Type().Kind == types.Tuple
		return literal
	})
	flatten(tail)
	flat := ir.WrapChain(binds, ir.MkTuple(p, parts...))
	body := ir.WrapChain(items, flat)
	unzip := ir.MkPrim(p, "unzip", ir.MkPrim(build.P, "build", build.Args[0], ir.MkLam(lam.P, lam.Param, body)))
	vars := make([]*ir.Var, len(leaves))
	for k := range leaves {
		vars[k] = ns.FreshVar(v.P, v.Name, unzip.T.Elems[k])
	}
	rest := ir.Map(l.Body, func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok || c.Prim == nil || len(c.Args) == 0 || !isVar(c.Args[len(c.Args)-1], v.Name) {
			return e
		}
		switch c.Prim.Name {
		case "size":
			return ir.MkPrim(c.P, "size", ir.Ref(c.P, vars[0]))
		case "index":
			return rebuild(c.P, c.Args[0], elem, leaves, vars, ns)
		}
		return e
	})
	return &ir.Let{P: p, Vars: vars, Pattern: true, Rhs: unzip, Body: copiesOf(rest, vars), Of: l.Of}
}

// copiesOf replaces the copies of the vectors vars, all of one size, that
// taking t apart again made: (build (size t) (lam j (get$k (index j t))))
// is now (build (size t1) (lam j (get$k (tuple (index j t1) ...)))), the
// k-th vector itself.
func copiesOf(e ir.Expr, vars []*ir.Var) ir.Expr {
	ours := map[string]bool{}
	for _, v := range vars {
		ours[v.Name] = true
	}
	return ir.Map(e, func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok || c.Prim == nil || c.Prim.Name != "build" || len(c.Args) != 2 {
			return e
		}
		size, ok := c.Args[0].(*ir.Call)
		if !ok || size.Prim == nil || size.Prim.Name != "size" || len(size.Args) != 1 {
			return e
		}
		if v, ok := size.Args[0].(*ir.Var); !ok || !ours[v.Name] {
			return e
		}
		lam, ok := c.Args[1].(*ir.Lam)
		if !ok {
			return e
		}
		get, ok := lam.Body.(*ir.Get)
		if !ok {
			return e
		}
		tuple, ok := get.X.(*ir.Tuple)
		if !ok {
			return e
		}
		read, ok := tuple.Elems[get.I-1].(*ir.Call)
		if !ok || read.Prim == nil || read.Prim.Name != "index" || !isVar(read.Args[0], lam.Param.Name) {
			return e
		}
		if v, ok := read.Args[1].(*ir.Var); ok && ours[v.Name] {
			return ir.Ref(c.P, v)
		}
		return e
	})
}

// rebuild returns the element at index x of the vector kept as vars: the
// tuple of type elem made of (index x var) for each scalar.
func rebuild(p ir.Pos, x ir.Expr, elem *types.Type, leaves [][]int, vars []*ir.Var, ns *ir.Names) ir.Expr {
	var xv *ir.Var
	at := x
	if !ir.IsAtom(x) {
		xv = ns.FreshVar(p, "i", x.Type())
		at = ir.Ref(p, xv)
	}
	next := 0
	var tuple func(t *types.Type) ir.Expr
	tuple = func(t *types.Type) ir.Expr {
		if t.Kind != types.Tuple {
			e := ir.MkPrim(p, "index", ir.Copy(at, ir.Pos{}), ir.Ref(p, vars[next]))
			next++
			return e
		}
		elems := make([]ir.Expr, len(t.Elems))
		for k, et := range t.Elems {
			elems[k] = tuple(et)
		}
		return ir.MkTuple(p, elems...)
	}
	out := tuple(elem)
	if xv != nil {
		return ir.MkLet(p, xv, x, out)
	}
	return out
}

// onlyElementsRead reports whether every occurrence of name in e is the
// vector of an index or a size, and name is bound nowhere in e.
func onlyElementsRead(name string, e ir.Expr) bool {
	ok := true
	ir.Inspect(e, func(x ir.Expr) bool {
		if !ok {
			return false
		}
		switch x := x.(type) {
		case *ir.Call:
			if x.Prim != nil && (x.Prim.Name == "index" && len(x.Args) == 2 || x.Prim.Name == "size" && len(x.Args) == 1) &&
				isVar(x.Args[len(x.Args)-1], name) {
				for _, a := range x.Args[:len(x.Args)-1] {
					ok = ok && onlyElementsRead(name, a)
				}
				return false
			}
		case *ir.Var:
			ok = x.Name != name
		case *ir.Let:
			for _, v := range x.Vars {
				ok = ok && v.Name != name
			}
		case *ir.Lam:
			ok = x.Param.Name != name
		}
		return ok
	})
	return ok
}
