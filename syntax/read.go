package syntax

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// An AtomKind classifies an atom.
type AtomKind uint8

// The kinds of atom.
const (
	IdentAtom  AtomKind = iota // x, get$1$2, [ is never part of one
	IntAtom                    // 42, -7, 0x1f
	FloatAtom                  // 1.0, -1e38
	StringAtom                 // "text"
)

// An SExpr is an atom or a list, as read from the text.
type SExpr interface {
	Pos() Pos
	End() Pos // position just after the last character
}

// An Atom is a single token.
type Atom struct {
	P    Pos
	Kind AtomKind
	Text string // source text; for strings, the decoded value
	end  Pos
}

// A List is ( elems... ) or [ elems... ].
type List struct {
	Open, Close Pos // the positions of the brackets
	Square      bool
	Elems       []SExpr
}

// Pos returns the position of the atom's first character.
func (a *Atom) Pos() Pos { return a.P }

// End returns the position just after the atom.
func (a *Atom) End() Pos { return a.end }

// Pos returns the position of the opening bracket.
func (l *List) Pos() Pos { return l.Open }

// End returns the position just after the closing bracket.
func (l *List) End() Pos { return Pos{l.Close.File, l.Close.Line, l.Close.Col + 1} }

// A Comment is a comment in the source, kept for the printer.
type Comment struct {
	P     Pos
	Text  string // including the ; or #| |# delimiters
	Block bool
	Own   bool // the comment is the first thing on its line
}

// Read reads the S-expressions of a file. It returns every top-level
// S-expression it could read, the comments, and the errors found.
func Read(filename string, src []byte) ([]SExpr, []*Comment, ErrorList) {
	r := &reader{file: filename, src: src, line: 1, col: 1, lineStart: true}
	var top []SExpr
	for {
		r.skipSpace()
		if r.off >= len(r.src) {
			break
		}
		if c := r.src[r.off]; c == ')' || c == ']' {
			r.errs.Add(r.pos(), "unexpected %q", string(c))
			r.advance()
			continue
		}
		if e := r.sexpr(); e != nil {
			top = append(top, e)
		}
	}
	return top, r.comments, r.errs
}

// MaxDepth is how deeply lists may nest in a source file. Programs nest a
// few dozen levels (a chain of lets one level per let); the limit keeps
// the compiler's recursive passes, and the time to print what it reads,
// bounded on any input.
const MaxDepth = 10000

type reader struct {
	depth     int // the lists open
	file      string
	src       []byte
	off       int
	line, col int32
	lineStart bool // only whitespace so far on this line
	comments  []*Comment
	errs      ErrorList
	// runaway is set when a string or block comment ran to the end of the
	// file: the lists it left unclosed are not reported again.
	runaway bool
}

func (r *reader) pos() Pos { return Pos{r.file, r.line, r.col} }

func (r *reader) advance() {
	if r.src[r.off] == '\n' {
		r.line++
		r.col = 1
		r.lineStart = true
	} else {
		r.col++
		if r.src[r.off] != ' ' && r.src[r.off] != '\t' && r.src[r.off] != '\r' {
			r.lineStart = false
		}
	}
	r.off++
}

func (r *reader) peek(k int) byte {
	if r.off+k < len(r.src) {
		return r.src[r.off+k]
	}
	return 0
}

// skipSpace skips whitespace and comments, recording the comments.
func (r *reader) skipSpace() {
	for r.off < len(r.src) {
		c := r.src[r.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			r.advance()
		case c == ';':
			p, own, start := r.pos(), r.lineStart, r.off
			for r.off < len(r.src) && r.src[r.off] != '\n' {
				r.advance()
			}
			r.comments = append(r.comments, &Comment{P: p, Text: strings.TrimRight(string(r.src[start:r.off]), " \t\r"), Own: own})
		case c == '#' && r.peek(1) == '|':
			p, own, start := r.pos(), r.lineStart, r.off
			r.advance()
			r.advance()
			depth := 1
			for depth > 0 {
				if r.off >= len(r.src) {
					r.errs.Add(p, "unterminated block comment")
					r.runaway = true
					break
				}
				if r.src[r.off] == '#' && r.peek(1) == '|' {
					depth++
					r.advance()
				} else if r.src[r.off] == '|' && r.peek(1) == '#' {
					depth--
					r.advance()
				}
				r.advance()
			}
			r.comments = append(r.comments, &Comment{P: p, Text: string(r.src[start:r.off]), Block: true, Own: own})
		default:
			return
		}
	}
}

// sexpr reads one S-expression at the current (non-space) position.
func (r *reader) sexpr() SExpr {
	c := r.src[r.off]
	switch {
	case c == '(' || c == '[':
		return r.list()
	case c == '"':
		return r.str()
	case isDigit(c) || ((c == '-' || c == '+') && isDigit(r.peek(1))):
		return r.number()
	case isIdentStart(c):
		p, start := r.pos(), r.off
		for r.off < len(r.src) && isIdentChar(r.src[r.off]) {
			r.advance()
		}
		return &Atom{P: p, Kind: IdentAtom, Text: string(r.src[start:r.off]), end: r.pos()}
	default:
		p := r.pos()
		ch, size := utf8.DecodeRune(r.src[r.off:])
		if ch == utf8.RuneError && size <= 1 {
			r.errs.Add(p, "invalid byte 0x%02x", c)
		} else {
			r.errs.Add(p, "unexpected character %q", ch)
		}
		for i := 0; i < max(size, 1); i++ {
			r.advance()
		}
		return nil
	}
}

func (r *reader) list() SExpr {
	open := r.pos()
	square := r.src[r.off] == '['
	if r.depth == MaxDepth {
		r.errs.Add(open, "lists nest more than %d deep here; the rest of the file is not read (a limit of ksc: split the expression with lets or functions)", MaxDepth)
		r.off = len(r.src)
		r.runaway = true // the lists left open are not reported
		return nil
	}
	r.depth++
	defer func() { r.depth-- }()
	r.advance()
	l := &List{Open: open, Square: square}
	for {
		r.skipSpace()
		if r.off >= len(r.src) {
			if !r.runaway {
				r.errs.Add(open, "unclosed %q", string(openChar(square)))
			}
			l.Close = r.pos()
			return l
		}
		c := r.src[r.off]
		if c == ')' || c == ']' {
			if (c == ']') != square {
				r.errs.Add(r.pos(), "%q closes %q opened at %d:%d", string(c), string(openChar(square)), open.Line, open.Col)
			}
			l.Close = r.pos()
			r.advance()
			return l
		}
		if e := r.sexpr(); e != nil {
			l.Elems = append(l.Elems, e)
		}
	}
}

func openChar(square bool) byte {
	if square {
		return '['
	}
	return '('
}

func (r *reader) str() SExpr {
	p := r.pos()
	r.advance() // "
	var b strings.Builder
	for {
		if r.off >= len(r.src) {
			r.errs.Add(p, "unterminated string")
			r.runaway = true
			break
		}
		c := r.src[r.off]
		if c == '"' {
			r.advance()
			break
		}
		if c == '\\' {
			ep := r.pos()
			r.advance()
			if r.off >= len(r.src) {
				continue
			}
			switch e := r.src[r.off]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '"':
				b.WriteByte('"')
			case '\\':
				b.WriteByte('\\')
			default:
				r.errs.Add(ep, "unknown escape \\%c in string", e)
			}
			r.advance()
			continue
		}
		if c == 0 {
			// C strings end at a NUL: the C and Go backends would print
			// such a string differently.
			r.errs.Add(r.pos(), "a NUL byte in a string (a String cannot hold one: C strings end at it)")
		}
		b.WriteByte(c)
		r.advance()
	}
	return &Atom{P: p, Kind: StringAtom, Text: b.String(), end: r.pos()}
}

func (r *reader) number() SExpr {
	p, start := r.pos(), r.off
	if c := r.src[r.off]; c == '-' || c == '+' {
		r.advance()
	}
	kind := IntAtom
	if r.src[r.off] == '0' && (r.peek(1) == 'x' || r.peek(1) == 'X') && isHexDigit(r.peek(2)) {
		r.advance()
		r.advance()
		for r.off < len(r.src) && isHexDigit(r.src[r.off]) {
			r.advance()
		}
	} else {
		r.digits()
		if r.peek(0) == '.' && isDigit(r.peek(1)) {
			kind = FloatAtom
			r.advance()
			r.digits()
		}
		if c := r.peek(0); c == 'e' || c == 'E' {
			k := 1
			if s := r.peek(1); s == '+' || s == '-' {
				k = 2
			}
			if isDigit(r.peek(k)) {
				kind = FloatAtom
				for ; k > 0; k-- {
					r.advance()
				}
				r.digits()
			}
		}
	}
	a := &Atom{P: p, Kind: kind, Text: string(r.src[start:r.off])}
	if r.off < len(r.src) && isIdentChar(r.src[r.off]) {
		for r.off < len(r.src) && isIdentChar(r.src[r.off]) {
			r.advance()
		}
		r.errs.Add(p, "malformed number %q", string(r.src[start:r.off]))
		a.Text = "0"
	}
	a.end = r.pos()
	return a
}

func (r *reader) digits() {
	for r.off < len(r.src) && isDigit(r.src[r.off]) {
		r.advance()
	}
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
func isLetter(c byte) bool   { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// identSymbols are the non-alphanumeric characters allowed in identifiers.
const identSymbols = "_':!$%&*+.,/<=>?@\\^|-~"

func isIdentStart(c byte) bool {
	return isLetter(c) || strings.IndexByte(identSymbols, c) >= 0 && c != 0
}
func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

// IsIdent reports whether s is spelled as an identifier (it may still be a
// reserved word).
func IsIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	if (s[0] == '-' || s[0] == '+') && len(s) > 1 && isDigit(s[1]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// quote returns s as a ks string literal.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// parseInt parses an integer literal (decimal or 0x hex, optional sign).
func parseInt(text string) (int64, error) {
	s, neg := text, false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	var u uint64
	var err error
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		u, err = strconv.ParseUint(s[2:], 16, 64)
	} else {
		u, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, strconv.ErrRange
		}
		return -int64(u), nil
	}
	if u > 1<<63-1 {
		return 0, strconv.ErrRange
	}
	return int64(u), nil
}
