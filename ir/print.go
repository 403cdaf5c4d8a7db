package ir

import (
	"slices"
	"strconv"

	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Format returns the program as ks source: every function in order, a
// derived function without a body yet as its gdef (or not at all if it is
// an internal derivation, such as D, that no gdef can name). The text parses
// and type-checks again.
func (p *Program) Format() []byte {
	f := &syntax.File{}
	for _, t := range p.Types {
		if t.Def != nil {
			f.Decls = append(f.Decls, &syntax.Deftype{Name: t.Name, Type: te(t.Def)})
		}
	}
	for _, fn := range p.Funcs {
		if fn.Body == nil && len(fn.Name.Derivs) == 1 && !syntax.Derivations[fn.Name.Derivs[0]] {
			// An internal derivation such as D cannot be requested by a
			// gdef; ksc derives it again where it is called.
			continue
		}
		f.Decls = append(f.Decls, FuncDecl(fn))
	}
	for _, r := range p.Rules {
		f.Decls = append(f.Decls, &syntax.Rule{Name: r.Name, Params: params(r.Params), Lhs: ToSyntax(r.Lhs), Rhs: ToSyntax(r.Rhs)})
	}
	return syntax.FormatFile(f)
}

// FormatExpr returns an expression as ks source.
func FormatExpr(e Expr) string { return syntax.FormatExpr(ToSyntax(e)) }

// FormatFunc returns a function as ks source.
func FormatFunc(f *Func) string { return syntax.FormatDecl(FuncDecl(f)) }

func te(t *types.Type) *syntax.TypeExpr { return &syntax.TypeExpr{T: t} }

// FuncDecl returns the declaration of f as a syntax tree.
func FuncDecl(f *Func) syntax.Decl {
	switch {
	case f.Kind == EdefFunc:
		return &syntax.Edef{Name: funcName(f, false), Result: te(f.Result), Arg: te(f.Arg)}
	case f.Body == nil && len(f.Name.Derivs) > 0:
		// A derived function still to be made: the gdef asking for it
		// ((gdef suffwdpass [CL [f T]]): its type may name a record
		// type that only the split defines).
		target := &syntax.Name{Base: f.Name.Base, Arg: te(f.BaseArg)}
		for i := len(f.Name.Derivs) - 1; i >= 1; i-- {
			target = &syntax.Name{Deriv: f.Name.Derivs[i], Inner: target}
		}
		return &syntax.Gdef{Deriv: f.Name.Derivs[0], Target: target, Wrt: f.Name.Wrt}
	case f.Body == nil:
		return &syntax.Edef{Name: funcName(f, true), Result: te(f.Result), Arg: te(f.Arg)}
	}
	return &syntax.Def{Name: funcName(f, true), Result: te(f.Result), Params: params(f.Params),
		OneParam: f.OneParam, Body: ToSyntax(f.Body)}
}

func params(vs []*Var) []*syntax.Param {
	ps := make([]*syntax.Param, len(vs))
	for i, v := range vs {
		ps[i] = &syntax.Param{Name: v.Name, Type: te(v.T)}
	}
	return ps
}

// funcName spells f's name; explicit adds the base argument type where it
// cannot be recovered from the argument ([sufrevpass [f S]]).
func funcName(f *Func, explicit bool) *syntax.Name {
	n := &syntax.Name{Base: f.Name.Base}
	if explicit && (slices.Contains(f.Name.Derivs, "sufrevpass") || slices.Contains(f.Name.Derivs, "bogrev") ||
		slices.Contains(f.Name.Derivs, "bogup")) {
		n.Arg = te(f.BaseArg)
	}
	for i := len(f.Name.Derivs) - 1; i >= 0; i-- {
		n = &syntax.Name{Deriv: f.Name.Derivs[i], Inner: n}
	}
	if len(f.Name.Derivs) > 0 {
		n.Wrt = f.Name.Wrt
	}
	return n
}

// ToSyntax converts an expression to a syntax tree, for printing.
func ToSyntax(e Expr) syntax.Expr {
	switch e := e.(type) {
	case *Const:
		switch v := e.Val.(type) {
		case int64:
			return &syntax.Lit{Kind: syntax.IntLit, Text: strconv.FormatInt(v, 10), Int: v}
		case float64:
			return &syntax.Lit{Kind: syntax.FloatLit, Text: FormatFloatLit(v), Float: v}
		case bool:
			return &syntax.Lit{Kind: syntax.BoolLit, Text: strconv.FormatBool(v), Bool: v}
		case string:
			return &syntax.Lit{Kind: syntax.StringLit, Text: v}
		}
	case *Var:
		return &syntax.Var{Name: e.Name}
	case *Call:
		var n *syntax.Name
		if e.Fn != nil {
			n = funcName(e.Fn, true)
		} else {
			n = &syntax.Name{Base: e.Prim.Name}
		}
		return &syntax.Call{Fn: n, Args: toSyntaxList(e.Args)}
	case *Tuple:
		return &syntax.Tuple{Elems: toSyntaxList(e.Elems)}
	case *Get:
		return &syntax.Call{Fn: &syntax.Name{Base: "get$" + strconv.Itoa(e.I) + "$" + strconv.Itoa(e.N)}, Args: []syntax.Expr{ToSyntax(e.X)}}
	case *Let:
		b := &syntax.Binding{Pattern: e.Pattern, Rhs: ToSyntax(e.Rhs)}
		for _, v := range e.Vars {
			b.Vars = append(b.Vars, &syntax.Ident{Name: v.Name})
		}
		return &syntax.Let{Binds: []*syntax.Binding{b}, Body: ToSyntax(e.Body)}
	case *If:
		return &syntax.If{Cond: ToSyntax(e.Cond), Then: ToSyntax(e.Then), Else: ToSyntax(e.Else)}
	case *Assert:
		return &syntax.Assert{Cond: ToSyntax(e.Cond), Body: ToSyntax(e.Body)}
	case *Lam:
		return &syntax.Lam{Param: &syntax.Param{Name: e.Param.Name, Type: te(e.Param.T)}, Body: ToSyntax(e.Body)}
	case *Dummy:
		return &syntax.Dummy{Type: te(e.T)}
	}
	panic("ir: unknown expression")
}

func toSyntaxList(es []Expr) []syntax.Expr {
	out := make([]syntax.Expr, len(es))
	for i, e := range es {
		out[i] = ToSyntax(e)
	}
	return out
}

// FormatFloatLit spells a float so that it reads back as a Float literal
// with the same value.
func FormatFloatLit(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == 'e' || s[i] == 'n' || s[i] == 'N' {
			return s
		}
	}
	return s + ".0"
}
