package ir

// Binders and capture.
//
// A rewrite that moves an expression into a deeper scope (copy
// propagation, CSE, fusion, inlining) is capture-free when no binder
// rebinds a name that is already in scope: an expression's free
// variables are in scope wherever it moves within their scope, so no
// binder there can rebind them. RenameApart establishes that invariant
// (every binder that shadows is given a fresh name, its uses with it) and
// sets Program.NoShadow; from then on Check rejects a binder that
// shadows, so the pass that breaks the invariant is named by the IR
// checker. Expansions (inlining a body whose binders may repeat names of
// the call site) rename apart what they insert.

// RenameApart renames, in every function of p, each binder (let, tuple
// pattern, lambda parameter) whose name is already in scope where it
// binds, and sets p.NoShadow.
func RenameApart(p *Program) {
	ns := p.Names()
	for _, f := range p.Funcs {
		if f.Body != nil {
			f.Body = renameApart(f.Body, paramScope(f), ns)
		}
	}
	p.NoShadow = true
}

// renameApart returns e with every binder that rebinds a name in scope
// renamed, scope holding the names bound around e.
func renameApart(e Expr, scope map[string]bool, ns *Names) Expr {
	r := &renamer{ns: ns, to: map[string]string{}, scope: map[string]bool{}}
	for n := range scope {
		r.scope[n] = true
		r.to[n] = n
	}
	return r.expr(e)
}

// FreshBinders returns a copy of e in which every binder has a fresh
// name: e can then be placed anywhere its free variables are in scope
// without shadowing (an expansion, such as fusing a loop body into the
// place that reads its element).
func FreshBinders(e Expr, ns *Names) Expr {
	r := &renamer{ns: ns, to: map[string]string{}, scope: map[string]bool{}, fresh: true}
	return r.expr(e)
}

// paramScope returns the names of f's parameters.
func paramScope(f *Func) map[string]bool {
	s := map[string]bool{}
	for _, v := range f.Params {
		s[v.Name] = true
	}
	return s
}

// A renamer walks an expression with the names in scope (after renaming)
// and the renaming of each source name in scope.
type renamer struct {
	ns    *Names
	to    map[string]string // source name -> name in the output
	scope map[string]bool   // output names in scope
	fresh bool              // rename every binder, not only those that shadow
}

// bind gives the binders vs their output names, returning the new
// binders and a function that restores the scope.
func (r *renamer) bind(vs []*Var) ([]*Var, func()) {
	type saved struct {
		name string
		to   string
		had  bool
	}
	var undo []saved
	out := make([]*Var, len(vs))
	var added []string
	for i, v := range vs {
		name := v.Name
		if r.fresh || r.scope[name] {
			name = r.ns.Fresh(v.Name)
		}
		r.ns.Take(name)
		old, had := r.to[v.Name]
		undo = append(undo, saved{v.Name, old, had})
		r.to[v.Name] = name
		if !r.scope[name] {
			r.scope[name] = true
			added = append(added, name)
		}
		if name == v.Name {
			out[i] = v
		} else {
			out[i] = &Var{P: v.P, T: v.T, Name: name}
		}
	}
	return out, func() {
		for i := len(undo) - 1; i >= 0; i-- {
			u := undo[i]
			if u.had {
				r.to[u.name] = u.to
			} else {
				delete(r.to, u.name)
			}
		}
		for _, n := range added {
			delete(r.scope, n)
		}
	}
}

func (r *renamer) list(es []Expr) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = r.expr(e)
	}
	return out
}

func (r *renamer) ref(v *Var) *Var {
	if n, ok := r.to[v.Name]; ok && n != v.Name {
		return &Var{P: v.P, T: v.T, Name: n}
	}
	return v
}

func (r *renamer) expr(e Expr) Expr {
	switch e := e.(type) {
	case *Var:
		return r.ref(e)
	case *Const, *Dummy:
		return e
	case *Call:
		return &Call{P: e.P, T: e.T, Fn: e.Fn, Prim: e.Prim, Args: r.list(e.Args)}
	case *Tuple:
		return &Tuple{P: e.P, T: e.T, Elems: r.list(e.Elems)}
	case *Get:
		return &Get{P: e.P, T: e.T, I: e.I, N: e.N, X: r.expr(e.X)}
	case *Let:
		rhs := r.expr(e.Rhs)
		var of *Var
		if e.Of != nil {
			of = r.ref(e.Of)
		}
		vars, undo := r.bind(e.Vars)
		body := r.expr(e.Body)
		undo()
		return &Let{P: e.P, Vars: vars, Pattern: e.Pattern, Rhs: rhs, Body: body, Of: of}
	case *If:
		return &If{P: e.P, T: e.T, Cond: r.expr(e.Cond), Then: r.expr(e.Then), Else: r.expr(e.Else)}
	case *Assert:
		return &Assert{P: e.P, Cond: r.expr(e.Cond), Body: r.expr(e.Body), Msg: e.Msg}
	case *Lam:
		vars, undo := r.bind([]*Var{e.Param})
		body := r.expr(e.Body)
		undo()
		return &Lam{P: e.P, Param: vars[0], Body: body}
	}
	panic("ir: unknown expression in RenameApart")
}
