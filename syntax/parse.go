package syntax

import (
	"sort"
	"strconv"

	"github.com/ksc-lang/ksc/types"
)

// ParseFile reads and parses one source file. It returns the tree for
// everything that parsed, and the errors, sorted by position.
func ParseFile(filename string, src []byte) (*File, error) {
	sexprs, comments, errs := Read(filename, src)
	p := &parser{errs: errs, named: map[string]bool{}}
	// Named types may be used before their deftype.
	for _, s := range sexprs {
		if l, ok := s.(*List); ok && headWord(l) == "deftype" && len(l.Elems) > 1 {
			if a, ok := l.Elems[1].(*Atom); ok {
				p.named[a.Text] = true
			}
		}
	}
	f := &File{Name: filename, Comments: comments}
	for _, s := range sexprs {
		if d := p.decl(s); d != nil {
			f.Decls = append(f.Decls, d)
		}
	}
	p.errs.Sort()
	return f, p.errs.Err()
}

// ParseExpr parses a single expression (used by tests and tools).
func ParseExpr(filename string, src []byte) (Expr, error) {
	sexprs, _, errs := Read(filename, src)
	p := &parser{errs: errs}
	var e Expr
	switch len(sexprs) {
	case 0:
		p.errs.Add(Pos{File: filename, Line: 1, Col: 1}, "expected an expression")
	case 1:
		e = p.topExpr(sexprs[0])
	default:
		p.errs.Add(sexprs[1].Pos(), "expected a single expression")
	}
	p.errs.Sort()
	return e, p.errs.Err()
}

// topExpr parses s, or returns nil after an error that stops it.
func (p *parser) topExpr(s SExpr) Expr {
	defer catchBail()
	return p.expr(s)
}

type parser struct {
	errs  ErrorList
	named map[string]bool // the names of the file's deftypes
}

// bail stops parsing the current declaration; decl recovers from it.
type bail struct{}

// catchBail, deferred by a function that parses a whole form, stops a
// bail there: the function returns its zero value (its result is never
// assigned before the form is parsed), and the error is in p.errs.
func catchBail() {
	if r := recover(); r != nil {
		if _, ok := r.(bail); !ok {
			panic(r)
		}
	}
}

func (p *parser) fail(pos Pos, format string, args ...any) {
	p.failHint(pos, "", format, args...)
}

// failHint is fail with a hint at a fix (none if hint is "").
func (p *parser) failHint(pos Pos, hint, format string, args ...any) {
	p.errs.AddHint(pos, hint, format, args...)
	panic(bail{})
}

func headWord(s SExpr) string {
	l, ok := s.(*List)
	if !ok || l.Square || len(l.Elems) == 0 {
		return ""
	}
	if a, ok := l.Elems[0].(*Atom); ok && a.Kind == IdentAtom {
		return a.Text
	}
	return ""
}

// decl parses a top-level form. A form with errors is reported and
// skipped; the parser carries on with the next one.
func (p *parser) decl(s SExpr) Decl {
	defer catchBail()
	l, ok := s.(*List)
	if !ok || l.Square {
		p.fail(s.Pos(), "expected a declaration (def, edef, gdef or rule)")
	}
	switch w := headWord(s); w {
	case "def":
		return p.def(l)
	case "edef":
		return p.edef(l)
	case "gdef":
		return p.gdef(l)
	case "rule":
		return p.rule(l)
	case "deftype":
		p.arity(l, 3, "deftype")
		a, ok := l.Elems[1].(*Atom)
		if !ok || a.Kind != IdentAtom || IsReserved(a.Text) || isTypeConstructor(a.Text) {
			p.fail(l.Elems[1].Pos(), "deftype: expected the name of the type")
		}
		return &Deftype{Lparen: l.Open, Rparen: l.Close, NameP: a.P, Name: a.Text, Type: p.typ(l.Elems[2])}
	default:
		if w == "" {
			p.fail(s.Pos(), "expected a declaration (def, edef, gdef or rule)")
		}
		p.fail(l.Elems[0].Pos(), "unknown declaration %q (expected def, edef, gdef or rule)", w)
	}
	return nil
}

func (p *parser) arity(l *List, n int, form string) {
	if len(l.Elems) != n {
		p.fail(l.Open, "malformed %s: expected %s, with %d parts after %s, found %d", form, forms[form], n-1, form, len(l.Elems)-1)
	}
}

var forms = map[string]string{
	"def":     "(def NAME RESULT PARAMS BODY)",
	"edef":    "(edef NAME RESULT ARGTYPE)",
	"gdef":    "(gdef DERIVATION [NAME ARGTYPE] POSITION...)",
	"rule":    `(rule "NAME" PARAMS LHS RHS)`,
	"deftype": "(deftype NAME TYPE)",
	"let":     "(let (x e) body) or (let ((x e1) (y e2)) body)",
	"if":      "(if cond then else)",
	"assert":  "(assert cond body)",
	"lam":     "(lam (x : T) body)",
	"$dummy":  "($dummy T)",
}

func (p *parser) def(l *List) *Def {
	p.arity(l, 5, "def")
	d := &Def{Lparen: l.Open, Rparen: l.Close}
	d.Name = p.name(l.Elems[1])
	d.Result = p.typ(l.Elems[2])
	d.Params, d.OneParam = p.params(l.Elems[3])
	d.Body = p.expr(l.Elems[4])
	return d
}

func (p *parser) edef(l *List) *Edef {
	p.arity(l, 4, "edef")
	d := &Edef{Lparen: l.Open, Rparen: l.Close}
	d.Name = p.name(l.Elems[1])
	d.Result = p.typ(l.Elems[2])
	d.Arg = p.argType(l.Elems[3])
	return d
}

// argType parses an edef's argument type. Besides a single type it accepts
// the older Knossos spelling (T1 T2 ...), meaning (Tuple T1 T2 ...), and
// (T), meaning T.
func (p *parser) argType(s SExpr) *TypeExpr {
	if l, ok := s.(*List); ok && !l.Square {
		if len(l.Elems) == 0 {
			return &TypeExpr{P: l.Open, T: types.Unit}
		}
		if !isTypeConstructor(headWord(l)) {
			ts := make([]*types.Type, len(l.Elems))
			for i, e := range l.Elems {
				ts[i] = p.typ(e).T
			}
			if len(ts) == 1 {
				return &TypeExpr{P: l.Open, T: ts[0]}
			}
			return &TypeExpr{P: l.Open, T: types.TupleOf(ts...)}
		}
	}
	return p.typ(s)
}

func isTypeConstructor(w string) bool {
	switch w {
	case "Tuple", "Vec", "Tensor", "Lam", "LM", "Variant":
		return true
	}
	return false
}

func (p *parser) gdef(l *List) *Gdef {
	if len(l.Elems) < 3 {
		p.arity(l, 3, "gdef")
	}
	d := &Gdef{Lparen: l.Open, Rparen: l.Close}
	a, ok := l.Elems[1].(*Atom)
	if !ok || a.Kind != IdentAtom {
		p.fail(l.Elems[1].Pos(), "gdef: expected a derivation (fwd, rev, vrev, CL, shape, suffwdpass, sufrevpass, sufrev)")
	}
	if allowed, known := Derivations[a.Text]; !known || !allowed {
		p.fail(a.P, "gdef: unknown derivation %q (expected fwd, rev, vrev, CL, shape, suffwdpass, sufrevpass or sufrev)", a.Text)
	}
	d.Deriv, d.DerivPos = a.Text, a.P
	d.Target = p.name(l.Elems[2])
	if d.Target.Root().Arg == nil {
		p.fail(d.Target.P, "gdef: expected [NAME ARGTYPE], the function and its argument type, or a derived name of it, [DERIVATION [NAME ARGTYPE]]")
	}
	d.Wrt = p.positions(l.Elems[3:])
	return d
}

// positions parses the positions of the arguments a derivation
// differentiates with respect to, [rev f 0 2] and (gdef rev [f T] 0 2):
// nil if there are none.
func (p *parser) positions(elems []SExpr) []int {
	var wrt []int
	for _, e := range elems {
		x, ok := e.(*Atom)
		if !ok || x.Kind != IntAtom {
			p.fail(e.Pos(), "expected the position of an argument to differentiate with respect to (0, 1, ...), found %s", describe(e))
		}
		i, err := strconv.Atoi(x.Text)
		if err != nil || i < 0 || len(wrt) > 0 && i <= wrt[len(wrt)-1] {
			p.fail(x.P, "the positions of the arguments must be distinct and ascending, from 0: found %s", x.Text)
		}
		wrt = append(wrt, i)
	}
	return wrt
}

func (p *parser) rule(l *List) *Rule {
	p.arity(l, 5, "rule")
	r := &Rule{Lparen: l.Open, Rparen: l.Close}
	a, ok := l.Elems[1].(*Atom)
	if !ok || a.Kind != StringAtom {
		p.fail(l.Elems[1].Pos(), "rule: expected the rule's name as a string")
	}
	r.Name = a.Text
	r.Params, r.OneParam = p.params(l.Elems[2])
	r.Lhs = p.expr(l.Elems[3])
	r.Rhs = p.expr(l.Elems[4])
	return r
}

// name parses a function name: f, [f T], [D f], [rev [f T]], ...
func (p *parser) name(s SExpr) *Name {
	switch s := s.(type) {
	case *Atom:
		if s.Kind != IdentAtom {
			p.fail(s.P, "expected a function name, found %s", describe(s))
		}
		if IsReserved(s.Text) {
			p.fail(s.P, "%q is a reserved word, not a function name", s.Text)
		}
		return &Name{P: s.P, Base: s.Text}
	case *List:
		if !s.Square {
			p.fail(s.Open, "expected a function name, found a parenthesised list")
		}
		if len(s.Elems) == 0 {
			p.fail(s.Open, "expected a function name, found []: write [NAME ARGTYPE] or [DERIVATION NAME]")
		}
		if a, ok := s.Elems[0].(*Atom); ok && a.Kind == IdentAtom && len(s.Elems) >= 2 {
			if _, isDeriv := Derivations[a.Text]; isDeriv {
				inner := p.name(s.Elems[1])
				return &Name{P: s.Open, Deriv: a.Text, Inner: inner, Wrt: p.positions(s.Elems[2:])}
			}
		}
		if len(s.Elems) != 2 {
			p.fail(s.Open, "expected [DERIVATION NAME], [DERIVATION NAME POSITION...] or [NAME ARGTYPE]")
		}
		n := p.name(s.Elems[0])
		if n.Deriv != "" || n.Arg != nil {
			p.fail(s.Open, "expected [NAME ARGTYPE]")
		}
		n.P = s.Open
		n.Arg = p.typ(s.Elems[1])
		return n
	}
	panic("unreachable")
}

// params parses PARAMS: (x : T), () or ((x : T) (y : U) ...).
func (p *parser) params(s SExpr) ([]*Param, bool) {
	l, ok := s.(*List)
	if !ok || l.Square {
		p.fail(s.Pos(), "expected parameters: (x : T), () or ((x : T) ...)")
	}
	if len(l.Elems) > 0 {
		if _, ok := l.Elems[0].(*Atom); ok {
			return []*Param{p.param(l)}, true
		}
	}
	var ps []*Param
	seen := map[string]bool{}
	for _, e := range l.Elems {
		el, ok := e.(*List)
		if !ok || el.Square {
			p.fail(e.Pos(), "expected a parameter (x : T)")
		}
		q := p.param(el)
		if seen[q.Name] {
			p.fail(q.P, "duplicate parameter %q", q.Name)
		}
		seen[q.Name] = true
		ps = append(ps, q)
	}
	return ps, false
}

// param parses (x : T), where T may omit its parentheses: (v : Vec Float).
func (p *parser) param(l *List) *Param {
	if len(l.Elems) < 3 {
		p.fail(l.Open, "expected a parameter (x : T)")
	}
	id, ok := l.Elems[0].(*Atom)
	if !ok || id.Kind != IdentAtom {
		p.fail(l.Elems[0].Pos(), "expected a parameter name")
	}
	if IsReserved(id.Text) {
		p.fail(id.P, "%q is a reserved word, not a parameter name", id.Text)
	}
	if c, ok := l.Elems[1].(*Atom); !ok || c.Text != ":" {
		p.fail(l.Elems[1].Pos(), "expected ':' after parameter %s", id.Text)
	}
	rest := l.Elems[2:]
	var t *TypeExpr
	if len(rest) == 1 && !isTypeConstructor(atomText(rest[0])) {
		t = p.typ(rest[0])
	} else {
		t = p.typ(&List{Open: rest[0].Pos(), Close: l.Close, Elems: rest})
	}
	return &Param{P: id.P, Name: id.Text, Type: t}
}

func atomText(s SExpr) string {
	if a, ok := s.(*Atom); ok && a.Kind == IdentAtom {
		return a.Text
	}
	return ""
}

// typ parses a type.
func (p *parser) typ(s SExpr) *TypeExpr {
	return &TypeExpr{P: s.Pos(), T: p.typeOf(s)}
}

func (p *parser) typeOf(s SExpr) *types.Type {
	switch s := s.(type) {
	case *Atom:
		switch s.Text {
		case "Integer":
			return types.IntegerType
		case "Float":
			return types.FloatType
		case "Bool":
			return types.BoolType
		case "String":
			return types.StringType
		case "Tuple":
			return types.Unit
		}
		if s.Kind == IdentAtom && p.named[s.Text] {
			// A named type, declared by deftype; the type checker resolves it.
			return types.NamedType(s.Text)
		}
		hint := ""
		if s.Kind == IdentAtom {
			names := append([]string{}, TypeNames...)
			for n := range p.named {
				names = append(names, n)
			}
			sort.Strings(names[len(TypeNames):])
			hint = DidYouMean(s.Text, names)
		}
		p.failHint(s.P, hint, "expected a type, found %s", describe(s))
	case *List:
		if s.Square {
			p.fail(s.Open, "expected a type, found [")
		}
		w := headWord(s)
		args := []SExpr(nil)
		if len(s.Elems) > 0 {
			args = s.Elems[1:]
		}
		want := func(n int, form string) {
			if len(args) != n {
				p.fail(s.Open, "expected %s", form)
			}
		}
		switch w {
		case "Integer", "Float", "Bool", "String":
			// Knossos writes scalar types in parentheses too: (Float).
			want(0, "("+w+")")
			return p.typeOf(s.Elems[0])
		case "Tuple":
			ts := make([]*types.Type, len(args))
			for i, a := range args {
				ts[i] = p.typeOf(a)
			}
			return types.TupleOf(ts...)
		case "Vec":
			want(1, "(Vec T)")
			return types.VecOf(p.typeOf(args[0]))
		case "Tensor":
			want(2, "(Tensor N T)")
			a, ok := args[0].(*Atom)
			if !ok || a.Kind != IntAtom {
				p.fail(args[0].Pos(), "expected the rank of the tensor, an integer literal")
			}
			n, err := strconv.Atoi(a.Text)
			if err != nil || n < 1 || n > 8 {
				p.fail(a.P, "tensor rank must be between 1 and 8, found %s", a.Text)
			}
			return types.TensorOf(n, p.typeOf(args[1]))
		case "Variant":
			want(2, "(Variant A B)")
			return types.VariantOf(p.typeOf(args[0]), p.typeOf(args[1]))
		case "Lam", "LM":
			want(2, "("+w+" S T)")
			from, to := p.typeOf(args[0]), p.typeOf(args[1])
			if w == "Lam" {
				return types.LamOf(from, to)
			}
			return types.LMOf(from, to)
		}
		if len(s.Elems) == 0 {
			p.fail(s.Open, "expected a type, found ()")
		}
		hint := ""
		if a, ok := s.Elems[0].(*Atom); ok && a.Kind == IdentAtom {
			hint = DidYouMean(a.Text, []string{"LM", "Lam", "Tensor", "Tuple", "Variant", "Vec"})
		}
		p.failHint(s.Elems[0].Pos(), hint, "expected a type constructor (Tuple, Vec, Tensor, Lam, LM), found %s", describe(s.Elems[0]))
	}
	panic("unreachable")
}

func describe(s SExpr) string {
	switch s := s.(type) {
	case *Atom:
		switch s.Kind {
		case IntAtom, FloatAtom:
			return "number " + s.Text
		case StringAtom:
			return "string " + quote(s.Text)
		}
		return strconv.Quote(s.Text)
	case *List:
		if s.Square {
			return "a [...] name"
		}
		return "a list"
	}
	return "?"
}

// expr parses an expression.
func (p *parser) expr(s SExpr) Expr {
	switch s := s.(type) {
	case *Atom:
		return p.atom(s)
	case *List:
		if s.Square {
			p.fail(s.Open, "a [...] name must be called: ([f ...] args)")
		}
		if len(s.Elems) == 0 {
			p.fail(s.Open, "empty expression ()")
		}
		if a, ok := s.Elems[0].(*Atom); ok && a.Kind == IdentAtom {
			switch a.Text {
			case "let":
				return p.let(s)
			case "if":
				p.arity(s, 4, "if")
				return &If{Lparen: s.Open, Rparen: s.Close, Cond: p.expr(s.Elems[1]), Then: p.expr(s.Elems[2]), Else: p.expr(s.Elems[3])}
			case "assert":
				p.arity(s, 3, "assert")
				return &Assert{Lparen: s.Open, Rparen: s.Close, Cond: p.expr(s.Elems[1]), Body: p.expr(s.Elems[2])}
			case "tuple":
				return &Tuple{Lparen: s.Open, Rparen: s.Close, Elems: p.exprs(s.Elems[1:])}
			case "lam":
				p.arity(s, 3, "lam")
				pl, ok := s.Elems[1].(*List)
				if !ok || pl.Square {
					p.fail(s.Elems[1].Pos(), "lam: expected a parameter (x : T)")
				}
				return &Lam{Lparen: s.Open, Rparen: s.Close, Param: p.param(pl), Body: p.expr(s.Elems[2])}
			case "$dummy":
				p.arity(s, 2, "$dummy")
				return &Dummy{Lparen: s.Open, Rparen: s.Close, Type: p.typ(s.Elems[1])}
			}
		}
		if a, ok := s.Elems[0].(*Atom); ok && a.Kind != IdentAtom {
			p.fail(a.P, "expected a function name, found %s", describe(a))
		}
		if l, ok := s.Elems[0].(*List); ok && !l.Square {
			p.fail(l.Open, "expected a function name, found a parenthesised expression (functions are not values)")
		}
		fn := p.name(s.Elems[0])
		if hint := DidYouMean(fn.Base, exprKeywords); hint != "" && fn.Deriv == "" && len(fn.Base) >= 3 {
			// (lett ((x e)) body): the error will be in the arguments,
			// which were never meant as arguments.
			defer p.hintOnBail("in ("+fn.Base+" ...): "+hint, len(p.errs))
		}
		return &Call{Lparen: s.Open, Rparen: s.Close, Fn: fn, Args: p.exprs(s.Elems[1:])}
	}
	panic("unreachable")
}

// exprKeywords are the keywords that begin expressions.
var exprKeywords = []string{"$dummy", "assert", "if", "lam", "let", "tuple"}

// hintOnBail, deferred, gives the error a bail reports a hint, if the
// error is new (the errors then number more than n) and has none.
func (p *parser) hintOnBail(hint string, n int) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(bail); ok && len(p.errs) > n && p.errs[len(p.errs)-1].Hint == "" {
		p.errs[len(p.errs)-1].Hint = hint
	}
	panic(r)
}

func (p *parser) exprs(ss []SExpr) []Expr {
	es := make([]Expr, len(ss))
	for i, s := range ss {
		es[i] = p.expr(s)
	}
	return es
}

func (p *parser) atom(a *Atom) Expr {
	switch a.Kind {
	case IntAtom:
		n, err := parseInt(a.Text)
		if err != nil {
			p.fail(a.P, "integer literal %s out of range", a.Text)
		}
		return &Lit{P: a.P, Kind: IntLit, Text: a.Text, Int: n}
	case FloatAtom:
		f, err := strconv.ParseFloat(a.Text, 64)
		if err != nil {
			p.fail(a.P, "float literal %s out of range", a.Text)
		}
		return &Lit{P: a.P, Kind: FloatLit, Text: a.Text, Float: f}
	case StringAtom:
		return &Lit{P: a.P, Kind: StringLit, Text: a.Text}
	}
	switch a.Text {
	case "true", "false":
		return &Lit{P: a.P, Kind: BoolLit, Text: a.Text, Bool: a.Text == "true"}
	}
	if IsReserved(a.Text) {
		p.fail(a.P, "unexpected reserved word %q", a.Text)
	}
	return &Var{P: a.P, Name: a.Text}
}

// let parses the three let forms. (let ((a b) (c d)) body) is ambiguous;
// the single tuple-pattern reading wins (language.md section 4).
func (p *parser) let(l *List) *Let {
	p.arity(l, 3, "let")
	bl, ok := l.Elems[1].(*List)
	if !ok || bl.Square || len(bl.Elems) == 0 {
		p.fail(l.Elems[1].Pos(), "let: expected bindings (x e) or ((x e1) (y e2) ...)")
	}
	let := &Let{Lparen: l.Open, Rparen: l.Close}
	if isSingleBinding(bl) {
		let.Binds = []*Binding{p.binding(bl)}
	} else {
		let.Grouped = true
		for _, b := range bl.Elems {
			bb, ok := b.(*List)
			if !ok || bb.Square {
				p.fail(b.Pos(), "let: expected a binding (x e) or ((a b) e)")
			}
			let.Binds = append(let.Binds, p.binding(bb))
		}
	}
	let.Body = p.expr(l.Elems[2])
	return let
}

// isSingleBinding reports whether the let's bindings list is itself one
// binding: (x e) or ((a b ...) e).
func isSingleBinding(bl *List) bool {
	if len(bl.Elems) != 2 {
		return false
	}
	switch first := bl.Elems[0].(type) {
	case *Atom:
		return first.Kind == IdentAtom
	case *List:
		return isPattern(first)
	}
	return false
}

// isPattern reports whether l is a list of identifiers (a b ...).
func isPattern(l *List) bool {
	if l.Square || len(l.Elems) == 0 {
		return false
	}
	for _, e := range l.Elems {
		if a, ok := e.(*Atom); !ok || a.Kind != IdentAtom || IsReserved(a.Text) {
			return false
		}
	}
	return true
}

func (p *parser) binding(l *List) *Binding {
	if len(l.Elems) != 2 {
		p.fail(l.Open, "let: expected a binding (x e) or ((a b) e)")
	}
	b := &Binding{P: l.Open}
	switch v := l.Elems[0].(type) {
	case *Atom:
		if v.Kind != IdentAtom || IsReserved(v.Text) {
			p.fail(v.P, "let: expected a variable name, found %s", describe(v))
		}
		b.Vars = []*Ident{{P: v.P, Name: v.Text}}
	case *List:
		if !isPattern(v) {
			p.fail(v.Open, "let: expected a tuple pattern of variable names (a b ...)")
		}
		b.Pattern = true
		seen := map[string]bool{}
		for _, e := range v.Elems {
			a := e.(*Atom)
			if seen[a.Text] {
				p.fail(a.P, "let: variable %q appears twice in the pattern", a.Text)
			}
			seen[a.Text] = true
			b.Vars = append(b.Vars, &Ident{P: a.P, Name: a.Text})
		}
	}
	b.Rhs = p.expr(l.Elems[1])
	return b
}
