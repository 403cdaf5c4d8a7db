package proc

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// A NotProcedure error says why an expression is not in the procedure
// language (a loop, say), at the position of what is not.
type NotProcedure struct {
	Pos ir.Pos
	Why string
}

func (e *NotProcedure) Error() string { return e.Pos.String() + ": " + e.Why }

// FromExpr converts e, in A-normal form with every binder distinct
// (lower.ANF), over the variables params, to a block in single-use form:
// each let a statement, each if a Case, and Dup and Elim where a variable
// is read other than once. It returns a *NotProcedure for what the
// language has no statement for: a lambda of another primitive than
// build, sumbuild and fold (buildFromSparse), a linear-map primitive.
func FromExpr(e ir.Expr, params []*ir.Var, ns *ir.Names) (b *Block, err error) {
	defer catch(&err)
	c := &conv{ns: ns, alias: map[string]*ir.Var{}}
	b = c.block(e)
	l := &linear{ns: ns}
	return l.block(b, params), nil
}

type conv struct {
	ns    *ir.Names
	alias map[string]*ir.Var // let x = y: x is y
	stmts []Stmt
}

// catch turns a *NotProcedure panic, which the conversion and the
// translation raise where they meet what they cannot handle, into *err.
func catch(err *error) {
	if r := recover(); r != nil {
		np, ok := r.(*NotProcedure)
		if !ok {
			panic(r)
		}
		*err = np
	}
}

func notProc(p ir.Pos, format string, args ...any) {
	panic(&NotProcedure{Pos: p, Why: fmt.Sprintf(format, args...)})
}

// block converts e as a block of its own.
func (c *conv) block(e ir.Expr) *Block {
	saved := c.stmts
	c.stmts = nil
	items, tail := ir.ChainItems(e)
	for _, it := range items {
		switch it := it.(type) {
		case *ir.Let:
			c.let(it)
		case *ir.Assert:
			c.emit(&Assert{P: it.P, Cond: c.atom(it.Cond), Msg: it.Msg})
		}
	}
	r := c.atom(tail)
	b := &Block{Stmts: c.stmts, Result: r}
	c.stmts = saved
	return b
}

func (c *conv) emit(s Stmt) { c.stmts = append(c.stmts, s) }

// atom returns the variable holding an atom, a Const statement's for a
// constant; a compound expression becomes the statements computing it.
func (c *conv) atom(e ir.Expr) *ir.Var {
	switch x := e.(type) {
	case *ir.Var:
		if v, ok := c.alias[x.Name]; ok {
			return v
		}
		return &ir.Var{P: x.P, T: x.T, Name: x.Name}
	case *ir.Const, *ir.Dummy:
		v := c.ns.FreshVar(e.Pos(), "k", e.Type())
		c.emit(&Const{P: e.Pos(), Out: v, Val: e})
		return v
	}
	v := c.ns.FreshVar(e.Pos(), "t", e.Type())
	c.bind(v, e)
	return v
}

// let converts a let of the chain.
func (c *conv) let(l *ir.Let) {
	if !l.Pattern {
		v := l.Vars[0]
		if x, ok := l.Rhs.(*ir.Var); ok {
			c.alias[v.Name] = c.atom(x)
			return
		}
		c.bind(v, l.Rhs)
		return
	}
	t := c.atom(l.Rhs)
	c.emit(&Untuple{P: l.P, Elems: l.Vars, In: t})
}

// bind makes statements binding v to e.
func (c *conv) bind(v *ir.Var, e ir.Expr) {
	p := e.Pos()
	switch x := e.(type) {
	case *ir.Var, *ir.Const, *ir.Dummy:
		c.alias[v.Name] = c.atom(x)
	case *ir.Call:
		c.call(v, x)
	case *ir.Tuple:
		elems := make([]*ir.Var, len(x.Elems))
		for i, el := range x.Elems {
			elems[i] = c.atom(el)
		}
		c.emit(&Tuple{P: p, Out: v, Elems: elems})
	case *ir.Get:
		t := c.atom(x.X)
		elems := make([]*ir.Var, x.N)
		for i := range elems {
			if i == x.I-1 {
				elems[i] = v
			} else {
				elems[i] = c.ns.FreshVar(p, "_", t.T.Elems[i])
			}
		}
		c.emit(&Untuple{P: p, Elems: elems, In: t})
	case *ir.If:
		cond := c.atom(x.Cond)
		c.emit(&Case{P: p, Out: v, Cond: cond, Then: c.block(x.Then), Else: c.block(x.Else)})
	case *ir.Let, *ir.Assert:
		// A let in a right-hand side: its chain first, then its value.
		items, tail := ir.ChainItems(x)
		for _, it := range items {
			switch it := it.(type) {
			case *ir.Let:
				c.let(it)
			case *ir.Assert:
				c.emit(&Assert{P: it.P, Cond: c.atom(it.Cond), Msg: it.Msg})
			}
		}
		c.bind(v, tail)
	case *ir.Lam:
		notProc(p, "a loop (a lambda) is not in the procedure language")
	default:
		notProc(p, "%T is not in the procedure language", e)
	}
}

// call converts a call: the argument parts as variables.
func (c *conv) call(v *ir.Var, x *ir.Call) {
	p := x.P
	if x.Prim != nil && x.Prim.Identity && len(x.Args) == 1 {
		if inner, ok := x.Args[0].(*ir.Call); ok {
			c.call(v, inner) // ($inline (g a)): the call itself
			return
		}
		c.alias[v.Name] = c.atom(x.Args[0])
		return
	}
	if x.Prim != nil && (x.Prim.Name == "build" || x.Prim.Name == "sumbuild") && len(x.Args) == 2 &&
		types.IndexRank(x.Args[0].Type()) > 0 {
		if lam, ok := x.Args[1].(*ir.Lam); ok {
			n := c.atom(x.Args[0])
			c.emit(&Loop{P: p, Kind: x.Prim.Name, Out: v, N: n, Index: lam.Param, Body: c.block(lam.Body)})
			return
		}
	}
	if x.Prim != nil && x.Prim.Name == "buildFromSparse" && len(x.Args) == 3 && types.IndexRank(x.Args[1].Type()) > 0 {
		if lam, ok := x.Args[2].(*ir.Lam); ok {
			sh, n := c.atom(x.Args[0]), c.atom(x.Args[1])
			c.emit(&Loop{P: p, Kind: x.Prim.Name, Out: v, N: n, Shape: sh, Index: lam.Param, Body: c.block(lam.Body)})
			return
		}
	}
	if x.Prim != nil && x.Prim.Name == "fold" && len(x.Args) == 3 {
		if lam, ok := x.Args[0].(*ir.Lam); ok {
			init, vec := c.atom(x.Args[1]), c.atom(x.Args[2])
			c.emit(&Fold{P: p, Out: v, Init: init, Vec: vec, Param: lam.Param, Body: c.block(lam.Body)})
			return
		}
	}
	if x.Prim != nil && (len(x.Prim.Lams) > 0 || x.Prim.LM || x.Prim.InPlace) {
		notProc(p, "%s is not in the procedure language", x.Prim.Name)
	}
	for _, a := range x.Args {
		if _, ok := a.(*ir.Lam); ok {
			notProc(p, "a loop (a lambda) is not in the procedure language")
		}
	}
	args := make([]*ir.Var, len(x.Args))
	for i, a := range x.Args {
		args[i] = c.atom(a)
	}
	if x.Prim != nil && len(args) == 1 && x.Prim.Arity != 1 && args[0].T.Kind == types.Tuple {
		// A primitive of several parts given one tuple: its fields.
		t := args[0]
		args = make([]*ir.Var, len(t.T.Elems))
		for i, et := range t.T.Elems {
			args[i] = c.ns.FreshVar(p, "a", et)
		}
		c.emit(&Untuple{P: p, Elems: args, In: t})
	}
	c.emit(&Call{P: p, Out: v, Fn: x.Fn, Prim: x.Prim, Args: args})
}

// linear makes a block single-use: a variable read n > 1 times is
// duplicated into n copies right where it is bound, each read renamed to
// its own copy, and a variable never read is eliminated there.
type linear struct {
	ns *ir.Names
}

func (l *linear) block(b *Block, ins []*ir.Var) *Block {
	// Free variables of each case: what its branches read from outside.
	for _, s := range b.Stmts {
		switch s := s.(type) {
		case *Case:
			s.Free = freeOfCase(s)
		case *Loop:
			s.Free = freeOfLoop(s)
		case *Fold:
			s.Free = freeOfFold(s)
		}
	}
	count := map[string]int{}
	for _, s := range b.Stmts {
		for _, v := range s.Ins() {
			count[v.Name]++
		}
	}
	count[b.Result.Name]++
	copies := map[string][]*ir.Var{}
	var out []Stmt
	share := func(v *ir.Var) {
		n := count[v.Name]
		switch {
		case n == 0:
			out = append(out, &Elim{P: v.P, In: v})
		case n > 1:
			cur := v
			for i := 0; i < n-1; i++ {
				a := l.ns.FreshVar(v.P, v.Name, v.T)
				rest := l.ns.FreshVar(v.P, v.Name, v.T)
				out = append(out, &Dup{P: v.P, In: cur, Out1: a, Out2: rest})
				copies[v.Name] = append(copies[v.Name], a)
				cur = rest
			}
			copies[v.Name] = append(copies[v.Name], cur)
		}
	}
	use := func(v *ir.Var) *ir.Var {
		cs := copies[v.Name]
		if len(cs) == 0 {
			return v
		}
		copies[v.Name] = cs[1:]
		return &ir.Var{P: v.P, T: v.T, Name: cs[0].Name}
	}
	// consume gives a statement with nested blocks a copy of each of the
	// variables free, which the blocks read under the copy's name.
	consume := func(free []*ir.Var) map[string]string {
		rename := map[string]string{}
		for i, v := range free {
			w := use(v)
			rename[v.Name] = w.Name
			free[i] = w
		}
		return rename
	}
	for _, v := range ins {
		share(v)
	}
	for _, s := range b.Stmts {
		switch s := s.(type) {
		case *Call:
			for i, a := range s.Args {
				s.Args[i] = use(a)
			}
		case *Dup:
			s.In = use(s.In)
		case *Elim:
			s.In = use(s.In)
		case *Tuple:
			for i, a := range s.Elems {
				s.Elems[i] = use(a)
			}
		case *Untuple:
			s.In = use(s.In)
		case *Assert:
			s.Cond = use(s.Cond)
		case *Case:
			s.Cond = use(s.Cond)
			rename := consume(s.Free)
			s.Then = l.block(renameBlock(s.Then, rename), s.Free)
			s.Else = l.block(renameBlock(s.Else, rename), s.Free)
		case *Loop:
			s.N = use(s.N)
			if s.Shape != nil {
				s.Shape = use(s.Shape)
			}
			rename := consume(s.Free)
			s.Body = l.block(renameBlock(s.Body, rename), append(append([]*ir.Var(nil), s.Free...), s.Index))
		case *Fold:
			s.Init = use(s.Init)
			s.Vec = use(s.Vec)
			rename := consume(s.Free)
			s.Body = l.block(renameBlock(s.Body, rename), append(append([]*ir.Var(nil), s.Free...), s.Param))
		}
		out = append(out, s)
		for _, v := range s.Outs() {
			share(v)
		}
	}
	return &Block{Stmts: out, Result: use(b.Result)}
}

// freeOfCase returns the variables a case's branches read that they do
// not bind, in order of first reading.
func freeOfCase(c *Case) []*ir.Var {
	var out []*ir.Var
	seen := map[string]bool{}
	for _, br := range []*Block{c.Then, c.Else} {
		for _, v := range free(br) {
			if !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// freeOfLoop returns the variables a loop's body reads that it does not
// bind, its index aside.
func freeOfLoop(l *Loop) []*ir.Var { return freeBut(l.Body, l.Index) }

// freeOfFold returns the variables a fold's step reads that it does not
// bind, its parameter aside.
func freeOfFold(f *Fold) []*ir.Var { return freeBut(f.Body, f.Param) }

// freeBut returns the variables a lambda's body reads that it does not
// bind, its parameter aside.
func freeBut(b *Block, param *ir.Var) []*ir.Var {
	var out []*ir.Var
	for _, v := range free(b) {
		if v.Name != param.Name {
			out = append(out, v)
		}
	}
	return out
}

// free returns the variables a block reads and does not bind.
func free(b *Block) []*ir.Var {
	bound := map[string]bool{}
	seen := map[string]bool{}
	var out []*ir.Var
	read := func(v *ir.Var) {
		if !bound[v.Name] && !seen[v.Name] {
			seen[v.Name] = true
			out = append(out, &ir.Var{P: v.P, T: v.T, Name: v.Name})
		}
	}
	for _, s := range b.Stmts {
		if c, ok := s.(*Case); ok {
			read(c.Cond)
			for _, v := range freeOfCase(c) {
				read(v)
			}
		} else if l, ok := s.(*Loop); ok {
			read(l.N)
			if l.Shape != nil {
				read(l.Shape)
			}
			for _, v := range freeOfLoop(l) {
				read(v)
			}
		} else if f, ok := s.(*Fold); ok {
			read(f.Init)
			read(f.Vec)
			for _, v := range freeOfFold(f) {
				read(v)
			}
		} else {
			for _, v := range s.Ins() {
				read(v)
			}
		}
		for _, v := range s.Outs() {
			bound[v.Name] = true
		}
	}
	read(b.Result)
	return out
}

// renameBlock renames the variables of b (names are distinct, so every
// occurrence is the same variable).
func renameBlock(b *Block, m map[string]string) *Block {
	r := func(v *ir.Var) *ir.Var {
		if n, ok := m[v.Name]; ok {
			return &ir.Var{P: v.P, T: v.T, Name: n}
		}
		return v
	}
	rs := func(vs []*ir.Var) []*ir.Var {
		out := make([]*ir.Var, len(vs))
		for i, v := range vs {
			out[i] = r(v)
		}
		return out
	}
	out := &Block{Result: r(b.Result)}
	for _, s := range b.Stmts {
		var n Stmt
		switch s := s.(type) {
		case *Call:
			n = &Call{P: s.P, Out: s.Out, Fn: s.Fn, Prim: s.Prim, Args: rs(s.Args)}
		case *Const:
			n = s
		case *Dup:
			n = &Dup{P: s.P, In: r(s.In), Out1: s.Out1, Out2: s.Out2}
		case *Elim:
			n = &Elim{P: s.P, In: r(s.In)}
		case *Tuple:
			n = &Tuple{P: s.P, Out: s.Out, Elems: rs(s.Elems)}
		case *Untuple:
			n = &Untuple{P: s.P, Elems: s.Elems, In: r(s.In)}
		case *Assert:
			n = &Assert{P: s.P, Cond: r(s.Cond), Msg: s.Msg}
		case *Case:
			n = &Case{P: s.P, Out: s.Out, Cond: r(s.Cond), Free: rs(s.Free), Then: renameBlock(s.Then, m), Else: renameBlock(s.Else, m)}
		case *Loop:
			n = &Loop{P: s.P, Kind: s.Kind, Out: s.Out, N: r(s.N), Index: s.Index, Free: rs(s.Free), Body: renameBlock(s.Body, m)}
			if s.Shape != nil {
				n.(*Loop).Shape = r(s.Shape)
			}
		case *Fold:
			n = &Fold{P: s.P, Out: s.Out, Init: r(s.Init), Vec: r(s.Vec), Param: s.Param, Free: rs(s.Free), Body: renameBlock(s.Body, m)}
		}
		out.Stmts = append(out.Stmts, n)
	}
	return out
}
