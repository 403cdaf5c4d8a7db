package syntax

// Normalize returns a copy of f's declarations in which every grouped let
// with several bindings is nested into lets of one binding each. Two trees
// that differ only in how let bindings are grouped normalize to the same
// tree; the printer regroups one ambiguous case (see letDoc), so tests of
// the printer compare normalized trees.
func Normalize(f *File) *File {
	out := &File{Name: f.Name, Comments: f.Comments}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *Def:
			c := *d
			c.Body = normExpr(d.Body)
			out.Decls = append(out.Decls, &c)
		case *Rule:
			c := *d
			c.Lhs, c.Rhs = normExpr(d.Lhs), normExpr(d.Rhs)
			out.Decls = append(out.Decls, &c)
		default:
			out.Decls = append(out.Decls, d)
		}
	}
	return out
}

func normExprs(es []Expr) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = normExpr(e)
	}
	return out
}

func normExpr(e Expr) Expr {
	switch e := e.(type) {
	case *Lit, *Var, *Dummy:
		return e
	case *Call:
		c := *e
		c.Args = normExprs(e.Args)
		return &c
	case *Tuple:
		c := *e
		c.Elems = normExprs(e.Elems)
		return &c
	case *Let:
		body := normExpr(e.Body)
		for i := len(e.Binds) - 1; i >= 0; i-- {
			b := *e.Binds[i]
			b.Rhs = normExpr(b.Rhs)
			body = &Let{Lparen: e.Lparen, Rparen: e.Rparen, Binds: []*Binding{&b}, Body: body}
		}
		return body
	case *If:
		c := *e
		c.Cond, c.Then, c.Else = normExpr(e.Cond), normExpr(e.Then), normExpr(e.Else)
		return &c
	case *Assert:
		c := *e
		c.Cond, c.Body = normExpr(e.Cond), normExpr(e.Body)
		return &c
	case *Lam:
		c := *e
		c.Body = normExpr(e.Body)
		return &c
	}
	panic("syntax: unknown expression")
}
