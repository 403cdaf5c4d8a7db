package cl

import (
	"fmt"
	"sort"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// Convert converts the definition of f to CL by the rules of Figure 10,
// "Conversion to CL", with the Pruning rule: C[f(x1..xn) = e] is
// C[e](x1..xn), and
//
//	C[e]Γ = P[φ(Γ,v1) .. φ(Γ,vm) / |Γ|]; C[e](v1..vm)   where {v1..vm} = fv(e) ⊂ Γ
//	C[k]Γ = K(k)
//	C[x]Γ = π(φ(Γ,x), |Γ|)
//	C[f(e1..en)]Γ = C[(e1..en)]Γ; F(f)        (C[e1]Γ; F(f) for n = 1)
//	C[(e1..en)]Γ = (C[e1]Γ, .., C[en]Γ)
//	C[get$i$n e]Γ = C[e]Γ; π(i, n)
//	C[if e1 e2 e3]Γ = IF(C[e1]Γ, C[e2]Γ, C[e3]Γ)
//	C[let x = er in eb]Γ = L(x, C[er]Γ, C[eb](Γ, x))   (and for tuple patterns)
//	C[assert e1 e2]Γ = A(C[e1]Γ, C[e2]Γ)
//	C[p(.., λx.e, ..)]Γ = p(.., λx.C[e](Γ, x), ..)     (build: B(C[es]Γ, i, C[ee](Γ, i)))
//
// where the context Γ lists the variables in scope, outermost first (a
// shadowed variable stays in it, unreachable), and φ(Γ, x) is the position
// of the innermost x. The pruning is left out where it would keep every
// variable, so each sub-term receives exactly the variables it uses.
//
// A construct CL cannot express (a lambda that is not an argument of a
// primitive taking one, a variable out of scope) is an error at its
// position.
func Convert(f *ir.Func) (*Def, error) { return convert(f, true) }

// ConvertUnpruned converts the definition of f to CL without the Pruning
// rule: every sub-term receives the whole context.
func ConvertUnpruned(f *ir.Func) (*Def, error) { return convert(f, false) }

func convert(f *ir.Func, prune bool) (*Def, error) {
	if f.Body == nil {
		return nil, &syntax.Error{Pos: f.P, Msg: fmt.Sprintf("CL: %s has no definition to convert", f.FullName())}
	}
	c := &converter{prune: prune, fv: map[ir.Expr]map[string]bool{}}
	body, err := c.expr(f.Body, f.Params)
	if err != nil {
		return nil, err
	}
	return &Def{Func: f, Params: f.Params, Body: body}, nil
}

type converter struct {
	prune bool
	fv    map[ir.Expr]map[string]bool // free variables, memoised
}

func convError(e ir.Expr, format string, args ...any) error {
	return &syntax.Error{Pos: e.Pos(), Msg: "CL: " + fmt.Sprintf(format, args...)}
}

// expr returns C[e]Γ, applying the Pruning rule.
func (c *converter) expr(e ir.Expr, g []*ir.Var) (Term, error) {
	if !c.prune {
		return c.exact(e, g)
	}
	keep := c.positions(e, g)
	if len(keep) == len(g) {
		return c.exact(e, g)
	}
	sub := make([]*ir.Var, len(keep))
	for k, i := range keep {
		sub[k] = g[i-1]
	}
	body, err := c.exact(e, sub)
	if err != nil {
		return nil, err
	}
	return &Comp{P: e.Pos(), A: &Prune{P: e.Pos(), S: Context(g), Idx: keep}, B: body}, nil
}

// positions returns φ(Γ, v) for the free variables v of e that Γ has,
// in increasing order.
func (c *converter) positions(e ir.Expr, g []*ir.Var) []int {
	fv := c.free(e)
	var keep []int
	seen := map[string]bool{}
	for i := len(g) - 1; i >= 0; i-- {
		if name := g[i].Name; fv[name] && !seen[name] {
			seen[name] = true
			keep = append(keep, i+1)
		}
	}
	sort.Ints(keep)
	return keep
}

// lookup returns φ(Γ, x), 1-based, or 0 if x is not in Γ.
func lookup(g []*ir.Var, name string) int {
	for i := len(g) - 1; i >= 0; i-- {
		if g[i].Name == name {
			return i + 1
		}
	}
	return 0
}

func extend(g []*ir.Var, vs ...*ir.Var) []*ir.Var {
	return append(g[:len(g):len(g)], vs...)
}

// exact returns C[e]Γ by the rule for e's form.
func (c *converter) exact(e ir.Expr, g []*ir.Var) (Term, error) {
	s := Context(g)
	p := e.Pos()
	switch e := e.(type) {
	case *ir.Const:
		return &Const{P: p, S: s, T: e.T, Val: e.Val}, nil
	case *ir.Dummy:
		return &Const{P: p, S: s, T: e.T}, nil
	case *ir.Var:
		i := lookup(g, e.Name)
		if i == 0 {
			return nil, convError(e, "variable %s is not in scope", e.Name)
		}
		return &Proj{P: p, S: s, I: i}, nil
	case *ir.Call:
		return c.call(e, g)
	case *ir.Tuple:
		elems, err := c.list(e.Elems, g)
		if err != nil {
			return nil, err
		}
		return &Tuple{P: p, S: s, Elems: elems}, nil
	case *ir.Get:
		x, err := c.expr(e.X, g)
		if err != nil {
			return nil, err
		}
		return &Comp{P: p, A: x, B: &Proj{P: p, S: e.X.Type(), I: e.I}}, nil
	case *ir.Let:
		return c.let(e, g)
	case *ir.If:
		parts, err := c.list([]ir.Expr{e.Cond, e.Then, e.Else}, g)
		if err != nil {
			return nil, err
		}
		return &If{P: p, Cond: parts[0], Then: parts[1], Else: parts[2]}, nil
	case *ir.Assert:
		parts, err := c.list([]ir.Expr{e.Cond, e.Body}, g)
		if err != nil {
			return nil, err
		}
		return &Assert{P: p, Cond: parts[0], Body: parts[1], Msg: e.Msg}, nil
	case *ir.Lam:
		return nil, convError(e, "a lambda may only be an argument of a primitive that takes a function (build, sumbuild, fold, ...)")
	}
	return nil, convError(e, "CL cannot express the expression %T", e)
}

func (c *converter) list(es []ir.Expr, g []*ir.Var) ([]Term, error) {
	out := make([]Term, len(es))
	for k, e := range es {
		t, err := c.expr(e, g)
		if err != nil {
			return nil, err
		}
		out[k] = t
	}
	return out, nil
}

func (c *converter) let(e *ir.Let, g []*ir.Var) (Term, error) {
	if !e.Pattern && len(e.Vars) != 1 {
		return nil, convError(e, "a let of %d variables without a pattern", len(e.Vars))
	}
	rhs, err := c.expr(e.Rhs, g)
	if err != nil {
		return nil, err
	}
	body, err := c.expr(e.Body, extend(g, e.Vars...))
	if err != nil {
		return nil, err
	}
	vars := make([]Var, len(e.Vars))
	for k, v := range e.Vars {
		vars[k] = Var{Name: v.Name, T: v.T}
	}
	return &Let{P: e.P, Vars: vars, Pattern: e.Pattern, Rhs: rhs, Body: body}, nil
}

// call converts a call: of a function or primitive, C[arg]Γ; F(f); of a
// primitive that takes functions, a combinator.
func (c *converter) call(e *ir.Call, g []*ir.Var) (Term, error) {
	if (e.Fn == nil) == (e.Prim == nil) {
		return nil, convError(e, "a call must name exactly one function or primitive")
	}
	if e.Prim != nil && len(e.Prim.Lams) > 0 {
		return c.comb(e, g)
	}
	var arg Term
	if len(e.Args) == 1 {
		a, err := c.expr(e.Args[0], g)
		if err != nil {
			return nil, err
		}
		arg = a
	} else {
		elems, err := c.list(e.Args, g)
		if err != nil {
			return nil, err
		}
		arg = &Tuple{P: e.P, S: Context(g), Elems: elems}
	}
	f := &Func{P: e.P, Fn: e.Fn, Prim: e.Prim, S: ir.ArgType(e.Args), T: e.T}
	return &Comp{P: e.P, A: arg, B: f}, nil
}

func (c *converter) comb(e *ir.Call, g []*ir.Var) (Term, error) {
	lams := map[int]bool{}
	for _, k := range e.Prim.Lams {
		lams[k] = true
	}
	args := make([]Term, len(e.Args))
	for k, a := range e.Args {
		lam, isLam := a.(*ir.Lam)
		if isLam != lams[k] {
			return nil, convError(a, "argument %d of %s must %sbe a lambda", k+1, e.Prim.Name, map[bool]string{true: "", false: "not "}[lams[k]])
		}
		if !isLam {
			t, err := c.expr(a, g)
			if err != nil {
				return nil, err
			}
			args[k] = t
			continue
		}
		body, err := c.expr(lam.Body, extend(g, lam.Param))
		if err != nil {
			return nil, err
		}
		args[k] = &Lam{P: lam.P, Param: Var{Name: lam.Param.Name, T: lam.Param.T}, Body: body}
	}
	return &Comb{P: e.P, Prim: e.Prim, S: Context(g), T: e.T, Args: args}, nil
}

// free returns the free variables of e.
func (c *converter) free(e ir.Expr) map[string]bool {
	if s, ok := c.fv[e]; ok {
		return s
	}
	s := map[string]bool{}
	add := func(es ...ir.Expr) {
		for _, x := range es {
			for v := range c.free(x) {
				s[v] = true
			}
		}
	}
	switch e := e.(type) {
	case *ir.Var:
		s[e.Name] = true
	case *ir.Call:
		add(e.Args...)
	case *ir.Tuple:
		add(e.Elems...)
	case *ir.Get:
		add(e.X)
	case *ir.Let:
		add(e.Body)
		for _, v := range e.Vars {
			delete(s, v.Name)
		}
		add(e.Rhs)
	case *ir.If:
		add(e.Cond, e.Then, e.Else)
	case *ir.Assert:
		add(e.Cond, e.Body)
	case *ir.Lam:
		add(e.Body)
		delete(s, e.Param.Name)
	}
	c.fv[e] = s
	return s
}
