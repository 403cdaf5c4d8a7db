package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/types"
)

// gatherElements computes on demand the elements of a vector that one
// loop reads at indices of its own choosing (a gather), when that loop
// reads fewer elements than the vector has:
//
//	(let (v (build n (lam (i : Integer) e)))
//	  ... (build m (lam (j : Integer) ... (index k v) ...)) ...)
//
// becomes
//
//	(let (c (lte (mul s m) n))
//	  (let (v (build (if c 0 n) (lam (i : Integer) e)))
//	    ... (build m (lam (j : Integer)
//	          ... (if c (let (i ($checkIndex k n)) e) (index k v)) ...)) ...))
//
// where s is the number of places the loop reads v. When the loop reads
// at most n elements (c), each is computed where it is read and v is
// empty; otherwise v is made as before. Either way no element is computed
// more often than the program as written computes them all, and the
// values are the same: an element is the same expression at the same
// index. (GradBench's ht computes the skinned positions of all 10,000
// vertices of its hand model and reads those of 100 to 200 points, and
// each of its Jacobian's 26 forward sweeps did the same with their
// tangents.)
//
// It applies when v is read by (index k v) only (k not reading v), in
// one loop (a build or sumbuild, not inside another lambda between the
// let and it) whose count is an expression of variables bound outside
// the let's body (or by lets after v's that do not read v, which move in
// front of it), without calls of functions; n is an atom or the size
// of one; e has no effect; and no binder of the body captures a free
// variable of e. An element computed where it is read is checked as the
// read was: an index out of v's range fails as the read would, with the
// same message at the read ($checkIndex). An element that is never read is never computed, so it cannot
// fail, as a dead let cannot.
//
// The pass runs once, between two rounds of simplification: the second
// computes only the part of an element that is read (a coordinate of a
// vertex), and leaves alone the vector made here, whose count is not an
// atom (lower's fusion needs one), as this pass would.
func gatherElements(ctx *Context) error {
	eff := lower.ComputeEffects(ctx.Prog)
	rec := ir.Recursive(ctx.Prog.Funcs)
	ns := ctx.Prog.Names()
	forEachBody(ctx.Prog, func(f *ir.Func) {
		f.Body = ir.Map(f.Body, func(e ir.Expr) ir.Expr {
			l, ok := e.(*ir.Let)
			if !ok {
				return e
			}
			if g, ok := gather(l, eff, ns); ok {
				return g
			}
			if g, ok := gatherCall(l, eff, rec, ns); ok {
				return g
			}
			return e
		})
	})
	return nil
}

// gatherCall applies gather to a vector made by a call, (let (v (g x))
// body), whose function's body is a chain of lets ending in the build:
// the call is inlined, its binders renamed apart, and the let of v moved
// to the end of the chain, if gather then applies (GradBench's ht calls
// skinned for its vertices). g must not call itself, have an effect or
// be an edef.
func gatherCall(l *ir.Let, eff lower.Effects, rec map[*ir.Func]bool, ns *ir.Names) (ir.Expr, bool) {
	c, ok := l.Rhs.(*ir.Call)
	if l.Pattern || len(l.Vars) != 1 || !ok || c.Fn == nil {
		return nil, false
	}
	g := c.Fn
	if g.Body == nil || rec[g] || eff[g] || g.Kind == ir.EdefFunc || c.T.Kind != types.Tensor {
		return nil, false
	}
	inl := ir.FreshBinders(lower.BindParams(g, c.Args, ir.Copy(g.Body, ir.Pos{}), c.P), ns)
	// The chain's lets, outermost first, down to the build.
	var chain []*ir.Let
	tail := inl
	for {
		x, ok := tail.(*ir.Let)
		if !ok {
			break
		}
		chain = append(chain, x)
		tail = x.Body
	}
	if b, ok := tail.(*ir.Call); !ok || b.Prim == nil || b.Prim.Name != "build" {
		return nil, false
	}
	out, ok := gather(&ir.Let{P: l.P, Vars: l.Vars, Rhs: tail, Body: l.Body, Of: l.Of}, eff, ns)
	if !ok {
		return nil, false
	}
	return wrapLets(chain, out), true
}

// gather rewrites one let as gatherElements does, if it applies.
func gather(l *ir.Let, eff lower.Effects, ns *ir.Names) (ir.Expr, bool) {
	if l.Pattern || len(l.Vars) != 1 {
		return nil, false
	}
	// The lets after v's that do not read it (the loop's count, say) and
	// have no effect are moved in front of it, where the test can read
	// what they bind.
	var before []*ir.Let
	body := l.Body
	for {
		x, ok := body.(*ir.Let)
		if !ok || ir.Occurs(l.Vars[0].Name, x.Rhs) || bindsFree(x, l.Rhs) || lower.HasEffect(x.Rhs, eff) {
			break
		}
		before = append(before, x)
		body = x.Body
	}
	if len(before) > 0 {
		out, ok := gatherAt(&ir.Let{P: l.P, Vars: l.Vars, Rhs: l.Rhs, Body: body, Of: l.Of}, eff, ns)
		if !ok {
			return nil, false
		}
		return wrapLets(before, out), true
	}
	return gatherAt(l, eff, ns)
}

// bindsFree reports whether the let l binds a variable free in e.
func bindsFree(l *ir.Let, e ir.Expr) bool {
	free := ir.FreeVars(e)
	for _, v := range l.Vars {
		if free[v.Name] {
			return true
		}
	}
	return false
}

// gatherAt is gather once the lets that can move in front of v's have.
func gatherAt(l *ir.Let, eff lower.Effects, ns *ir.Names) (ir.Expr, bool) {
	b, ok := l.Rhs.(*ir.Call)
	if !ok || b.Prim == nil || b.Prim.Name != "build" || len(b.Args) != 2 || b.Args[0].Type().Kind != types.Integer {
		return nil, false
	}
	n := b.Args[0] // an atom, or the size of one: copies cost nothing
	if c, isSize := n.(*ir.Call); !ir.IsAtom(n) && !(isSize && c.Prim != nil && c.Prim.Name == "size" && ir.IsAtom(c.Args[0])) {
		return nil, false
	}
	if _, isConst := n.(*ir.Const); isConst {
		return nil, false // a vector of fixed size, a few coordinates: made as written
	}
	lam, ok := b.Args[1].(*ir.Lam)
	if !ok || lower.HasEffect(lam.Body, eff) {
		return nil, false
	}
	v := l.Vars[0].Name
	if lower.Binds(l.Body, v) {
		return nil, false // the reads are found by name: v must mean one vector
	}
	sites, loop, ok := gatherSites(l.Body, v)
	if !ok || len(sites) == 0 || loop == nil {
		return nil, false
	}
	m := loop.Args[0]
	for fv := range ir.FreeVars(m) {
		if lower.Binds(l.Body, fv) {
			return nil, false
		}
	}
	if !plainCount(m) {
		return nil, false
	}
	for fv := range ir.FreeVars(lam) {
		if lower.Binds(l.Body, fv) {
			return nil, false
		}
	}
	for fv := range ir.FreeVars(n) {
		if lower.Binds(l.Body, fv) {
			return nil, false
		}
	}
	p := l.P
	reads := ir.Copy(m, ir.Pos{})
	if len(sites) > 1 {
		reads = ir.MkPrim(p, "mul", ir.Int(p, int64(len(sites))), reads)
	}
	c := ns.FreshVar(p, "ondemand", types.BoolType)
	cond := ir.MkPrim(p, "lte", reads, ir.Copy(n, ir.Pos{}))
	count := ir.MkIf(p, c, ir.Int(p, 0), ir.Copy(n, ir.Pos{}))
	made := map[*ir.If]bool{} // the ifs made for the reads
	body := ir.Map(l.Body, func(x ir.Expr) ir.Expr {
		read, ok := x.(*ir.Call)
		if !ok {
			return x
		}
		if sites[read] {
			// (let (i ($checkIndex k n)) e): the read's own check, an
			// index out of range still its error.
			elem := ir.FreshBinders(ir.Copy(lam, ir.Pos{}), ns).(*ir.Lam)
			checked := ir.MkPrim(read.P, "$checkIndex", read.Args[0], ir.Copy(n, ir.Pos{}))
			y := ir.MkIf(read.P, c, ir.MkLet(read.P, elem.Param, checked, elem.Body), read)
			made[y] = true
			return y
		}
		// An index into a read, (index j (if c e (index k v))), goes into
		// both branches, so that simplify computes only what it reads.
		if read.Prim == nil || read.Prim.Name != "index" || len(read.Args) != 2 {
			return x
		}
		if y, ok := read.Args[1].(*ir.If); ok && made[y] {
			z := ir.MkIf(read.P, c,
				ir.MkPrim(read.P, "index", read.Args[0], y.Then),
				ir.MkPrim(read.P, "index", ir.Copy(read.Args[0], ir.Pos{}), y.Else))
			made[z] = true
			return z
		}
		return x
	})
	build := &ir.Call{P: b.P, T: b.T, Prim: b.Prim, Args: []ir.Expr{count, lam}}
	return ir.MkLet(p, c, cond, &ir.Let{P: l.P, Vars: l.Vars, Rhs: build, Body: body, Of: l.Of}), true
}

// gatherSites returns the reads (index k v) of v in body, and the loop
// they are all in: a build or sumbuild of body, in no other lambda of
// body, each read in its lambda and no lambda inside it. ok is false if
// body uses v otherwise, or reads it in another place.
func gatherSites(body ir.Expr, v string) (map[*ir.Call]bool, *ir.Call, bool) {
	sites := map[*ir.Call]bool{}
	var loop *ir.Call
	ok := true
	// walk visits x, inside the loop in (nil outside any lambda of body)
	// and inside another lambda than its own if deep.
	var walk func(x ir.Expr, in *ir.Call, deep bool)
	walk = func(x ir.Expr, in *ir.Call, deep bool) {
		if !ok {
			return
		}
		switch x := x.(type) {
		case *ir.Var:
			if x.Name == v {
				ok = false // a use other than index
			}
			return
		case *ir.Call:
			if x.Prim != nil && x.Prim.Name == "index" && len(x.Args) == 2 && isVar(x.Args[1], v) {
				if in == nil || deep || (loop != nil && loop != in) || ir.Occurs(v, x.Args[0]) {
					ok = false
					return
				}
				loop = in
				sites[x] = true
				return
			}
			for _, a := range x.Args {
				lam, isLam := a.(*ir.Lam)
				if !isLam {
					walk(a, in, deep)
					continue
				}
				isLoop := x.Prim != nil && (x.Prim.Name == "build" || x.Prim.Name == "sumbuild") &&
					len(x.Args) == 2 && x.Args[0].Type().Kind == types.Integer
				if in == nil && isLoop {
					walk(lam.Body, x, false)
				} else {
					walk(lam.Body, in, true)
				}
			}
			return
		case *ir.Lam:
			walk(x.Body, in, true)
			return
		}
		ir.Inspect(x, func(y ir.Expr) bool {
			if y == x {
				return true
			}
			walk(y, in, deep)
			return false
		})
	}
	walk(body, nil, false)
	return sites, loop, ok
}

// plainCount reports whether a loop's count may be evaluated once more,
// in front of the let: it calls no function and runs no loop.
func plainCount(m ir.Expr) bool {
	ok := true
	ir.Inspect(m, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Lam:
			ok = false
		case *ir.Call:
			if x.Fn != nil {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// wrapLets returns body inside copies of the lets of chain (outermost
// first), each with body in place of its own.
func wrapLets(chain []*ir.Let, body ir.Expr) ir.Expr {
	for k := len(chain) - 1; k >= 0; k-- {
		x := chain[k]
		body = &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: x.Rhs, Body: body, Of: x.Of}
	}
	return body
}
