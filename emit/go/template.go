package goemit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ksc-lang/ksc/ir"
)

// The Go spelling of a primitive in the table (ir.Prim.Go) is a template:
// Go expression text where $0, $1, ... stand for the argument parts,
// $pos for the source position and $ctx for the runtime context. A
// qualified name pkg.Name refers to the standard package pkg (math); a
// name starting with a capital letter refers to the runtime (IDiv, Max).

// A tmplPart is one piece of a parsed template.
type tmplPart struct {
	kind tmplKind
	text string // tmplText: Go text; tmplQual: the package; tmplRuntime: the name
	name string // tmplQual: the name in the package
	arg  int    // tmplArg: the argument part
}

type tmplKind uint8

const (
	tmplText    tmplKind = iota // Go text: operators, literals, predeclared names
	tmplArg                     // $N
	tmplPos                     // $pos
	tmplCtx                     // $ctx
	tmplQual                    // pkg.Name
	tmplRuntime                 // a name of the runtime
)

// parseTemplate splits a Go spelling into parts.
func parseTemplate(s string) ([]tmplPart, error) {
	var out []tmplPart
	text := func(t string) {
		if n := len(out); n > 0 && out[n-1].kind == tmplText {
			out[n-1].text += t
			return
		}
		out = append(out, tmplPart{kind: tmplText, text: t})
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '$':
			j := i + 1
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			word := s[i+1 : j]
			switch {
			case word == "pos":
				out = append(out, tmplPart{kind: tmplPos})
			case word == "ctx":
				out = append(out, tmplPart{kind: tmplCtx})
			default:
				n, err := strconv.Atoi(word)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("bad parameter $%s", word)
				}
				out = append(out, tmplPart{kind: tmplArg, arg: n})
			}
			i = j
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			word := s[i:j]
			if j+1 < len(s) && s[j] == '.' && isIdentStart(s[j+1]) {
				k := j + 1
				for k < len(s) && isIdentByte(s[k]) {
					k++
				}
				out = append(out, tmplPart{kind: tmplQual, text: word, name: s[j+1 : k]})
				i = k
				continue
			}
			if 'A' <= word[0] && word[0] <= 'Z' {
				out = append(out, tmplPart{kind: tmplRuntime, text: word})
			} else {
				text(word + " ")
			}
			i = j
		case '0' <= c && c <= '9' || c == '.':
			j := i
			for j < len(s) && (isIdentByte(s[j]) || s[j] == '.' ||
				(s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E')) {
				j++
			}
			text(s[i:j] + " ")
			i = j
		case c == ' ' || c == '\t':
			i++
		default:
			text(string(c))
			i++
		}
	}
	return out, nil
}

func isIdentStart(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }

func isIdentByte(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// template returns the parsed Go spelling of p.
func (e *emitter) template(p *ir.Prim) []tmplPart {
	if t, ok := e.templates[p.Go]; ok {
		return t
	}
	t, err := parseTemplate(p.Go)
	if err != nil {
		panic(fmt.Sprintf("goemit: the Go spelling %q of %s: %v", p.Go, p, err))
	}
	e.templates[p.Go] = t
	return t
}

// expand returns the code of a template with its parameters replaced.
func (e *emitter) expand(t []tmplPart, args []val, p string) *jen.Statement {
	s := jen.Null()
	for _, part := range t {
		switch part.kind {
		case tmplText:
			s.Op(strings.TrimSpace(part.text))
		case tmplArg:
			if part.arg >= len(args) {
				panic(fmt.Sprintf("goemit: template parameter $%d for %d arguments", part.arg, len(args)))
			}
			s.Add(args[part.arg].code)
		case tmplPos:
			s.Lit(p)
		case tmplCtx:
			s.Id("ctx")
		case tmplQual:
			s.Qual(part.text, part.name)
		case tmplRuntime:
			s.Add(e.rt(part.text))
		}
	}
	return s
}
