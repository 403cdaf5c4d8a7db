package cl

import "github.com/ksc-lang/ksc/ir"

// Expr returns the meaning of d's body on the context of its parameters,
// (x1, ..., xn) ◇ c, as an IR expression over d.Params. Its binders get
// fresh names from ns.
func (d *Def) Expr(ns *ir.Names) (ir.Expr, error) {
	if err := CheckDef(d); err != nil {
		return nil, err
	}
	for _, v := range d.Params {
		ns.Take(v.Name)
	}
	refs := make([]ir.Expr, len(d.Params))
	for i, v := range d.Params {
		refs[i] = ir.Ref(v.P, v)
	}
	b := &block{ns: ns}
	v := b.back(d.Body, val{tuple: true, elems: refs})
	return b.wrap(v.expr(d.Body.Pos())), nil
}

// Apply returns t ◇ c, the meaning of c applied to t (Figure 10,
// "Semantics"), as an IR expression:
//
//	t ◇ I = t
//	t ◇ K(k) = k
//	t ◇ P[i1 .. im / n] = (π(i1, n) t, .., π(im, n) t)
//	t ◇ π(i, n) = get$i$n t
//	t ◇ F(f) = f(t)
//	t ◇ (c1; c2) = (t ◇ c1) ◇ c2
//	t ◇ (c1, .., cn) = (t ◇ c1, .., t ◇ cn)
//	t ◇ IF(c1, c2, c3) = if (t ◇ c1) (t ◇ c2) (t ◇ c3)
//	t ◇ L(x, cr, cb) = let x = t ◇ cr in (t > x) ◇ cb
//	t ◇ A(c1, c2) = assert (t ◇ c1) (t ◇ c2)
//	t ◇ p(.., λx.c, ..) = p(.., λx.(t > x) ◇ c, ..)
//
// where t > x is the tuple t extended by x. A value used more than once
// (or not at all) is bound to a variable first, so that every part of t
// is computed once and in order; contexts are kept as tuples of variables,
// so the projections of the context become those variables.
func Apply(c Term, t ir.Expr, ns *ir.Names) (ir.Expr, error) {
	s, _, err := Check(c)
	if err != nil {
		return nil, err
	}
	if !s.Equal(t.Type()) {
		return nil, errorf(c, "a term on %s applied to %s", s, t.Type())
	}
	b := &block{ns: ns}
	in := val{e: t}
	if tup, ok := t.(*ir.Tuple); ok {
		in = val{tuple: true, elems: tup.Elems}
	}
	v := b.back(c, in)
	return b.wrap(v.expr(c.Pos())), nil
}

// A val is a value during conversion back: an IR expression, or a tuple
// given by the expressions of its fields. A val's expressions have not
// been evaluated yet; they are evaluated where the val is used.
type val struct {
	tuple bool
	elems []ir.Expr
	e     ir.Expr
}

// expr returns v as one expression.
func (v val) expr(pos Pos) ir.Expr {
	if v.tuple {
		return ir.MkTuple(pos, v.elems...)
	}
	return v.e
}

// args returns v as the arguments of a call of a function, or of a
// primitive p taking v's fields as its argument parts.
func (v val) args(pos Pos, p *ir.Prim) []ir.Expr {
	if v.tuple && len(v.elems) != 1 && (p == nil || p.Arity < 0 || p.Arity == len(v.elems)) {
		return v.elems
	}
	return []ir.Expr{v.expr(pos)}
}

// pure reports whether evaluating e has no effect and costs next to
// nothing, so that it may be dropped or repeated.
func pure(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Var, *ir.Const, *ir.Dummy:
		return true
	case *ir.Get:
		return pure(e.X)
	}
	return false
}

// A block is a sequence of bindings and asserts being built, which wrap
// the expression it ends with.
type block struct {
	ns    *ir.Names
	items []item
}

// An item is (let (vars rhs) ...) or, if cond is set, (assert cond ...).
type item struct {
	pos     Pos
	vars    []*ir.Var
	pattern bool
	rhs     ir.Expr
	cond    ir.Expr
	msg     string
}

// wrap returns the block's items around e.
func (b *block) wrap(e ir.Expr) ir.Expr {
	for i := len(b.items) - 1; i >= 0; i-- {
		it := b.items[i]
		if it.cond != nil {
			e = &ir.Assert{P: it.pos, Cond: it.cond, Body: e, Msg: it.msg}
		} else {
			e = &ir.Let{P: it.pos, Vars: it.vars, Pattern: it.pattern, Rhs: it.rhs, Body: e}
		}
	}
	return e
}

// insert adds an item at position at.
func (b *block) insert(at int, it item) {
	b.items = append(b.items, item{})
	copy(b.items[at+1:], b.items[at:])
	b.items[at] = it
}

// bindAt binds e to a fresh variable, at position at of the block, and
// returns a reference to the variable.
func (b *block) bindAt(at int, name string, e ir.Expr) ir.Expr {
	v := b.ns.FreshVar(e.Pos(), name, e.Type())
	b.insert(at, item{pos: e.Pos(), vars: []*ir.Var{v}, rhs: e})
	return ir.Ref(e.Pos(), v)
}

// atomizeAt binds the parts of v that are not pure, in order, at position
// at of the block.
func (b *block) atomizeAt(at int, v val) val {
	if !v.tuple {
		if pure(v.e) {
			return v
		}
		return val{e: b.bindAt(at, "t", v.e)}
	}
	out := make([]ir.Expr, len(v.elems))
	for i, e := range v.elems {
		if pure(e) {
			out[i] = e
			continue
		}
		out[i] = b.bindAt(at, "t", e)
		at++
	}
	return val{tuple: true, elems: out}
}

// atomize binds the parts of v that are not pure at the end of the block.
func (b *block) atomize(v val) val { return b.atomizeAt(len(b.items), v) }

// fields returns the fields of v, a tuple whose parts are pure.
func fields(v val, pos Pos) []ir.Expr {
	if v.tuple {
		return v.elems
	}
	t := v.e.Type()
	out := make([]ir.Expr, len(t.Elems))
	for i := range out {
		out[i] = ir.MkGet(pos, i+1, v.e)
	}
	return out
}

// keep returns the fields keep (1-based) of v, a tuple. The parts of v
// that are not pure are bound first, in order, up to the last one that is
// dropped, so that dropping it does not drop its effects.
func (b *block) keep(v val, pos Pos, keep ...int) []ir.Expr {
	if !v.tuple {
		v = b.atomize(v)
	} else {
		kept := map[int]bool{}
		for _, i := range keep {
			kept[i-1] = true
		}
		last := -1
		for i, e := range v.elems {
			if !kept[i] && !pure(e) {
				last = i
			}
		}
		if last >= 0 {
			head := b.atomize(val{tuple: true, elems: v.elems[:last+1]})
			v = val{tuple: true, elems: append(head.elems, v.elems[last+1:]...)}
		}
	}
	fs := fields(v, pos)
	out := make([]ir.Expr, len(keep))
	for k, i := range keep {
		out[k] = fs[i-1]
	}
	return out
}

// back returns in ◇ c. The term is well typed.
func (b *block) back(c Term, in val) val {
	switch c := c.(type) {
	case *Id:
		return in
	case *Const:
		b.atomize(in)
		if c.Val == nil {
			return val{e: &ir.Dummy{P: c.P, T: c.T}}
		}
		return val{e: &ir.Const{P: c.P, T: c.T, Val: c.Val}}
	case *Prune:
		return val{tuple: true, elems: b.keep(in, c.P, c.Idx...)}
	case *Proj:
		if !in.tuple {
			return val{e: ir.MkGet(c.P, c.I, in.e)}
		}
		return val{e: b.keep(in, c.P, c.I)[0]}
	case *Func:
		return val{e: &ir.Call{P: c.P, T: c.T, Fn: c.Fn, Prim: c.Prim, Args: in.args(c.P, c.Prim)}}
	case *Comp:
		return b.back(c.B, b.back(c.A, in))
	case *Tuple:
		if len(c.Elems) != 1 {
			in = b.atomize(in)
		}
		return val{tuple: true, elems: b.inOrder(c.Elems, in, c.P, nil)}
	case *If:
		in = b.atomize(in)
		cond := b.back(c.Cond, in).expr(c.P)
		then := b.sub(c.Then, in)
		els := b.sub(c.Else, in)
		return val{e: &ir.If{P: c.P, T: then.Type(), Cond: cond, Then: then, Else: els}}
	case *Let:
		return b.let(c, b.atomize(in))
	case *Assert:
		in = b.atomize(in)
		cond := b.back(c.Cond, in).expr(c.P)
		b.items = append(b.items, item{pos: c.P, cond: cond, msg: c.Msg})
		return b.back(c.Body, in)
	case *Comb:
		in = b.atomize(in)
		args := b.inOrder(c.Args, in, c.P, func(l *Lam) ir.Expr { return b.lam(l, in) })
		return val{e: &ir.Call{P: c.P, T: c.T, Prim: c.Prim, Args: args}}
	}
	panic("cl: back: unknown term") // unreachable for a checked term
}

// inOrder returns in ◇ c for each of cs as expressions, computed in order:
// a value that is not pure is bound to a variable where it is computed if
// a later one adds bindings or asserts, so they do not overtake it. Lams
// are converted by lam.
func (b *block) inOrder(cs []Term, in val, pos Pos, lam func(*Lam) ir.Expr) []ir.Expr {
	vals := make([]val, len(cs))
	ends := make([]int, len(cs))
	for k, c := range cs {
		if l, ok := c.(*Lam); ok {
			vals[k] = val{e: lam(l)}
		} else {
			vals[k] = b.back(c, in)
		}
		ends[k] = len(b.items)
	}
	final := len(b.items)
	for k := len(cs) - 1; k >= 0; k-- {
		if _, ok := cs[k].(*Lam); !ok && ends[k] < final {
			vals[k] = b.atomizeAt(ends[k], vals[k])
		}
	}
	out := make([]ir.Expr, len(cs))
	for k, v := range vals {
		out[k] = v.expr(pos)
	}
	return out
}

// sub returns in ◇ c as an expression of its own (a branch of an if).
func (b *block) sub(c Term, in val) ir.Expr {
	s := &block{ns: b.ns}
	return s.wrap(s.back(c, in).expr(c.Pos()))
}

// lam returns the lambda λx.(t > x) ◇ c of a combinator.
func (b *block) lam(l *Lam, in val) ir.Expr {
	x := b.ns.FreshVar(l.P, l.Param.Name, l.Param.T)
	fs := fields(in, l.P)
	ctx := append(fs[:len(fs):len(fs)], ir.Ref(l.P, x))
	body := b.sub(l.Body, val{tuple: true, elems: ctx})
	return &ir.Lam{P: l.P, Param: x, Body: body}
}

// let returns in ◇ L(x, cr, cb): the variables are bound at the end of
// the block (a pure value is used as it is), then the body runs on the
// extended context.
func (b *block) let(c *Let, in val) val {
	ctx := fields(in, c.P)
	ctx = ctx[:len(ctx):len(ctx)]
	rhs := b.back(c.Rhs, in)
	switch {
	case !c.Pattern:
		ctx = append(ctx, b.name(c.Vars[0], rhs.expr(c.P)))
	case rhs.tuple:
		for k, e := range rhs.elems {
			ctx = append(ctx, b.name(c.Vars[k], e))
		}
	default:
		r := rhs.expr(c.P)
		vars := make([]*ir.Var, len(c.Vars))
		for k, v := range c.Vars {
			vars[k] = b.ns.FreshVar(c.P, v.Name, v.T)
			ctx = append(ctx, ir.Ref(c.P, vars[k]))
		}
		b.items = append(b.items, item{pos: c.P, vars: vars, pattern: true, rhs: r})
	}
	return b.back(c.Body, val{tuple: true, elems: ctx})
}

// name returns e if it is pure, otherwise binds it to a fresh variable
// named after v at the end of the block.
func (b *block) name(v Var, e ir.Expr) ir.Expr {
	if pure(e) {
		return e
	}
	return b.bindAt(len(b.items), v.Name, e)
}
