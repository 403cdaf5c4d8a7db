package syntax

import (
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/types"
)

// Width is the line width the printer aims for.
const Width = 90

// MaxIndent is the deepest indentation the printer uses: nesting deeper
// than about 30 levels goes on at this column.
const MaxIndent = 60

// FormatFile returns the canonical text of f, comments included.
// Formatting is idempotent, and the result parses to the same tree (up to
// positions, and up to how a let's bindings are grouped in the one case
// where grouping would be ambiguous: see Let).
func FormatFile(f *File) []byte {
	pr := &printer{comments: f.Comments, atLineStart: true}
	for i, d := range f.Decls {
		if i > 0 {
			pr.newline(0)
			pr.newline(0)
		}
		pr.flushComments(d.Pos(), 0)
		dd := declDoc(d)
		pr.print(dd, 0)
		pr.trailing(dd.lastPos(), Pos{})
	}
	pr.flushComments(Pos{}, 0)
	if pr.b.Len() > 0 && !pr.atLineStart {
		pr.b.WriteByte('\n')
	}
	return []byte(pr.b.String())
}

// FormatExpr returns the canonical text of an expression.
func FormatExpr(e Expr) string {
	pr := &printer{}
	pr.print(exprDoc(e), 0)
	return pr.b.String()
}

// FormatDecl returns the canonical text of a declaration.
func FormatDecl(d Decl) string {
	pr := &printer{}
	pr.print(declDoc(d), 0)
	return pr.b.String()
}

// A doc is the layout tree: an atom or a bracketed list of docs.
type doc struct {
	pos   Pos
	end   Pos
	text  string // atom text; "" for a list
	open  byte   // '(' or '['; 0 for an atom
	elems []*doc
	head  int // elements kept on the first line when the list is broken
	step  int // indentation of the other elements relative to the bracket
}

func atomDoc(pos Pos, text string) *doc { return &doc{pos: pos, text: text} }

func listDoc(open, close Pos, head int, elems ...*doc) *doc {
	return &doc{pos: open, end: close, open: '(', elems: elems, head: head, step: 2}
}

func declDoc(d Decl) *doc {
	switch d := d.(type) {
	case *Def:
		return listDoc(d.Lparen, d.Rparen, 4, atomDoc(d.Lparen, "def"), nameDoc(d.Name),
			typeDoc(d.Result), paramsDoc(d.Params, d.OneParam), exprDoc(d.Body))
	case *Edef:
		return listDoc(d.Lparen, d.Rparen, 4, atomDoc(d.Lparen, "edef"), nameDoc(d.Name), typeDoc(d.Result), typeDoc(d.Arg))
	case *Gdef:
		elems := []*doc{atomDoc(d.Lparen, "gdef"), atomDoc(d.DerivPos, d.Deriv), nameDoc(d.Target)}
		for _, i := range d.Wrt {
			elems = append(elems, atomDoc(d.DerivPos, strconv.Itoa(i)))
		}
		return listDoc(d.Lparen, d.Rparen, 3, elems...)
	case *Rule:
		return listDoc(d.Lparen, d.Rparen, 3, atomDoc(d.Lparen, "rule"), atomDoc(d.Lparen, quote(d.Name)),
			paramsDoc(d.Params, d.OneParam), exprDoc(d.Lhs), exprDoc(d.Rhs))
	case *Deftype:
		return listDoc(d.Lparen, d.Rparen, 2, atomDoc(d.Lparen, "deftype"), atomDoc(d.NameP, d.Name), typeDoc(d.Type))
	}
	panic("syntax: unknown declaration")
}

func nameDoc(n *Name) *doc {
	if n.Deriv != "" {
		elems := []*doc{atomDoc(n.P, n.Deriv), nameDoc(n.Inner)}
		for _, i := range n.Wrt {
			elems = append(elems, atomDoc(n.P, strconv.Itoa(i)))
		}
		d := listDoc(n.P, Pos{}, 2, elems...)
		d.open = '['
		return d
	}
	if n.Arg == nil {
		return atomDoc(n.P, n.Base)
	}
	d := listDoc(n.P, Pos{}, 2, atomDoc(n.P, n.Base), typeDoc(n.Arg))
	d.open = '['
	return d
}

func typeDoc(t *TypeExpr) *doc { return atomDoc(t.P, t.T.String()) }

func paramsDoc(ps []*Param, one bool) *doc {
	if one && len(ps) == 1 {
		return paramDoc(ps[0])
	}
	elems := make([]*doc, len(ps))
	for i, p := range ps {
		elems[i] = paramDoc(p)
	}
	d := listDoc(Pos{}, Pos{}, 1, elems...)
	if len(ps) > 0 {
		d.pos = ps[0].P
	}
	d.step = 1
	return d
}

// paramDoc prints (x : T), leaving out the parentheses of a compound T.
func paramDoc(p *Param) *doc {
	ts := p.Type.T.String()
	if p.Type.T.Kind != types.Tuple || len(p.Type.T.Elems) > 0 {
		ts = strings.TrimSuffix(strings.TrimPrefix(ts, "("), ")")
	} else {
		ts = "Tuple"
	}
	return listDoc(p.P, Pos{}, 3, atomDoc(p.P, p.Name), atomDoc(p.P, ":"), atomDoc(p.Type.P, ts))
}

func exprDoc(e Expr) *doc {
	switch e := e.(type) {
	case *Lit:
		if e.Kind == StringLit {
			return atomDoc(e.P, quote(e.Text))
		}
		return atomDoc(e.P, e.Text)
	case *Var:
		return atomDoc(e.P, e.Name)
	case *Call:
		elems := []*doc{nameDoc(e.Fn)}
		for _, a := range e.Args {
			elems = append(elems, exprDoc(a))
		}
		return listDoc(e.Lparen, e.Rparen, 1, elems...)
	case *Tuple:
		elems := []*doc{atomDoc(e.Lparen, "tuple")}
		for _, a := range e.Elems {
			elems = append(elems, exprDoc(a))
		}
		return listDoc(e.Lparen, e.Rparen, 1, elems...)
	case *Let:
		return letDoc(e)
	case *If:
		return listDoc(e.Lparen, e.Rparen, 2, atomDoc(e.Lparen, "if"), exprDoc(e.Cond), exprDoc(e.Then), exprDoc(e.Else))
	case *Assert:
		return listDoc(e.Lparen, e.Rparen, 2, atomDoc(e.Lparen, "assert"), exprDoc(e.Cond), exprDoc(e.Body))
	case *Lam:
		return listDoc(e.Lparen, e.Rparen, 2, atomDoc(e.Lparen, "lam"), paramDoc(e.Param), exprDoc(e.Body))
	case *Dummy:
		return listDoc(e.Lparen, e.Rparen, 2, atomDoc(e.Lparen, "$dummy"), typeDoc(e.Type))
	}
	panic("syntax: unknown expression")
}

// letDoc prints a let. Two grouped bindings whose first is (x y), with y a
// variable, would read back as one tuple pattern; such a let is printed
// as a grouped let of its first binding around a let of the rest.
func letDoc(e *Let) *doc {
	if e.Grouped && len(e.Binds) == 2 && !e.Binds[0].Pattern {
		if _, ok := e.Binds[0].Rhs.(*Var); ok {
			inner := &Let{Lparen: e.Binds[1].P, Rparen: e.Rparen, Binds: e.Binds[1:], Grouped: true, Body: e.Body}
			outer := &Let{Lparen: e.Lparen, Rparen: e.Rparen, Binds: e.Binds[:1], Grouped: true, Body: inner}
			return letDoc(outer)
		}
	}
	var binds *doc
	if !e.Grouped && len(e.Binds) == 1 {
		binds = bindingDoc(e.Binds[0])
	} else {
		elems := make([]*doc, len(e.Binds))
		for i, b := range e.Binds {
			elems[i] = bindingDoc(b)
		}
		binds = listDoc(e.Binds[0].P, Pos{}, 1, elems...)
		binds.step = 1
	}
	return listDoc(e.Lparen, e.Rparen, 2, atomDoc(e.Lparen, "let"), binds, exprDoc(e.Body))
}

func bindingDoc(b *Binding) *doc {
	var lhs *doc
	if b.Pattern {
		vars := make([]*doc, len(b.Vars))
		for i, v := range b.Vars {
			vars[i] = atomDoc(v.P, v.Name)
		}
		at := b.P
		if len(b.Vars) > 0 {
			at = b.Vars[0].P
		}
		lhs = listDoc(at, Pos{}, len(vars), vars...)
	} else {
		lhs = atomDoc(b.Vars[0].P, b.Vars[0].Name)
	}
	return listDoc(b.P, Pos{}, 1, lhs, exprDoc(b.Rhs))
}

type printer struct {
	b           strings.Builder
	col         int
	atLineStart bool
	comments    []*Comment
	next        int // index of the next comment to print
}

func (p *printer) write(s string) {
	p.b.WriteString(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		p.col = len(s) - i - 1
	} else {
		p.col += len(s)
	}
	p.atLineStart = false
}

func (p *printer) newline(indent int) {
	p.b.WriteByte('\n')
	p.b.WriteString(strings.Repeat(" ", indent))
	p.col = indent
	p.atLineStart = true
}

// flushComments prints the comments that come before pos. A comment that
// followed code on its line stays at the end of the current line; others
// go on lines of their own at indent.
func (p *printer) flushComments(pos Pos, indent int) bool {
	printed := false
	for p.next < len(p.comments) {
		c := p.comments[p.next]
		if pos.IsValid() && !c.P.Before(pos) {
			break
		}
		p.next++
		if !c.Own && !p.atLineStart && p.b.Len() > 0 {
			p.write(" " + c.Text)
		} else {
			if !p.atLineStart {
				p.newline(indent)
			}
			p.write(c.Text)
		}
		p.newline(indent)
		printed = true
	}
	return printed
}

// trailing prints the comments that follow code on the line of last and
// come before next (if next is valid), at the end of the current line.
func (p *printer) trailing(last, next Pos) {
	for p.next < len(p.comments) {
		c := p.comments[p.next]
		if c.Own || c.P.Line != last.Line || c.P.File != last.File || next.IsValid() && !c.P.Before(next) {
			return
		}
		p.next++
		p.write(" " + c.Text)
	}
}

// hasComment reports whether a comment lies inside d.
func (p *printer) hasComment(d *doc) bool {
	if p.next >= len(p.comments) || !d.pos.IsValid() {
		return false
	}
	end := d.lastPos()
	c := p.comments[p.next]
	return end.IsValid() && c.P.Before(end)
}

// lastPos returns the last position known inside d.
func (d *doc) lastPos() Pos {
	if d.end.IsValid() {
		return d.end
	}
	for i := len(d.elems) - 1; i >= 0; i-- {
		if p := d.elems[i].lastPos(); p.IsValid() {
			return p
		}
	}
	return d.pos
}

// fitsFlat reports whether d printed on one line is at most limit wide.
// It stops as soon as it knows it is not, so asking at every level of a
// deep nest costs at most Width per level, not the size of the nest.
func (d *doc) fitsFlat(limit int) bool {
	return d.flatWidthUpTo(limit) <= limit
}

// flatWidthUpTo returns the width of d printed on one line, or some width
// over limit once it exceeds limit.
func (d *doc) flatWidthUpTo(limit int) int {
	if d.open == 0 {
		return len(d.text)
	}
	w := 2
	for i, e := range d.elems {
		if i > 0 {
			w++
		}
		if w > limit {
			return w
		}
		w += e.flatWidthUpTo(limit - w)
	}
	return w
}

func (p *printer) printFlat(d *doc) {
	if d.open == 0 {
		p.write(d.text)
		return
	}
	p.write(string(d.open))
	for i, e := range d.elems {
		if i > 0 {
			p.write(" ")
		}
		p.printFlat(e)
	}
	p.write(string(closeOf(d.open)))
}

func closeOf(open byte) byte {
	if open == '[' {
		return ']'
	}
	return ')'
}

func (p *printer) print(d *doc, indent int) {
	if d.pos.IsValid() {
		p.flushComments(d.pos, indent)
	}
	if d.open == 0 {
		p.write(d.text)
		return
	}
	if !p.hasComment(d) && d.fitsFlat(Width-p.col) {
		p.printFlat(d)
		return
	}
	// Indentation stops growing at MaxIndent, so that the text of a deep
	// nest (a chain of 10,000 lets) grows with its size, not its size
	// times its depth.
	start := min(p.col, MaxIndent)
	p.write(string(d.open))
	head := min(d.head, len(d.elems))
	for i := 0; i < head; i++ {
		if i > 0 {
			p.write(" ")
		}
		p.print(d.elems[i], start+d.step)
	}
	for i, e := range d.elems[head:] {
		if head > 0 || i > 0 {
			p.trailing(d.elems[head+i-1].lastPos(), e.pos)
			p.newline(start + d.step)
		}
		p.print(e, start+d.step)
	}
	if d.end.IsValid() {
		// Comments before the closing bracket end with a newline, so the
		// bracket then closes on a line of its own.
		p.flushComments(d.end, start+d.step)
	}
	p.write(string(closeOf(d.open)))
}
