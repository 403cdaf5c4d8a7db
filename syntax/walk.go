package syntax

import "fmt"

// TypeExprs calls f on every type written in the declarations.
func TypeExprs(decls []Decl, f func(*TypeExpr)) {
	params := func(ps []*Param) {
		for _, p := range ps {
			f(p.Type)
		}
	}
	var name func(n *Name)
	name = func(n *Name) {
		if n == nil {
			return
		}
		if n.Arg != nil {
			f(n.Arg)
		}
		name(n.Inner)
	}
	var expr func(e Expr)
	expr = func(e Expr) {
		switch e := e.(type) {
		case *Lit, *Var:
		case *Call:
			name(e.Fn)
			for _, a := range e.Args {
				expr(a)
			}
		case *Tuple:
			for _, a := range e.Elems {
				expr(a)
			}
		case *Let:
			for _, b := range e.Binds {
				expr(b.Rhs)
			}
			expr(e.Body)
		case *If:
			expr(e.Cond)
			expr(e.Then)
			expr(e.Else)
		case *Assert:
			expr(e.Cond)
			expr(e.Body)
		case *Lam:
			f(e.Param.Type)
			expr(e.Body)
		case *Dummy:
			f(e.Type)
		default:
			panic(fmt.Sprintf("syntax: unknown expression %T", e))
		}
	}
	for _, d := range decls {
		switch d := d.(type) {
		case *Def:
			name(d.Name)
			f(d.Result)
			params(d.Params)
			expr(d.Body)
		case *Edef:
			name(d.Name)
			f(d.Result)
			f(d.Arg)
		case *Gdef:
			name(d.Target)
		case *Rule:
			params(d.Params)
			expr(d.Lhs)
			expr(d.Rhs)
		case *Deftype:
			f(d.Type)
		default:
			panic(fmt.Sprintf("syntax: unknown declaration %T", d))
		}
	}
}
