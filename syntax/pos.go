// Package syntax owns the concrete syntax of ks (language.md sections 1, 3
// and 4): the scanner, the S-expression reader, the abstract syntax tree
// with a position on every node, the parser from S-expressions to that
// tree, and the canonical printer used by `ksc fmt`.
//
// Parsing is in two steps. Read turns text into S-expressions (atoms and
// parenthesised lists, each with its position); Parse then recognises the
// declarations and expressions of the language in them. Both steps collect
// errors into an ErrorList instead of stopping at the first one.
package syntax

import (
	"fmt"
	"sort"
	"strings"
)

// A Pos is a position in a source file. Line and Col are 1-based; Col
// counts bytes. The zero Pos is "no position".
type Pos struct {
	File string
	Line int32
	Col  int32
}

// IsValid reports whether p is a real position.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String returns file:line:col, or "-" for the zero Pos.
func (p Pos) String() string {
	if !p.IsValid() {
		if p.File != "" {
			return p.File
		}
		return "-"
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Before reports whether p comes before q in the same file.
func (p Pos) Before(q Pos) bool {
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// An Error is a message about a position in the source, with an optional
// hint at a likely fix ("did you mean let?"), which `ksc` prints on a
// help: line of its own.
type Error struct {
	Pos  Pos
	Msg  string
	Hint string
}

// Error returns file:line:col: message, the hint in parentheses after it.
func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Pos.String() + ": " + e.Msg + " (" + e.Hint + ")"
	}
	return e.Pos.String() + ": " + e.Msg
}

// Internal reports whether the error is a fault of ksc rather than of the
// program: its message starts with "internal:".
func (e *Error) Internal() bool { return strings.HasPrefix(e.Msg, "internal:") }

// An ErrorList is a list of errors, reported together.
type ErrorList []*Error

// Add appends an error at pos.
func (l *ErrorList) Add(pos Pos, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// AddHint appends an error at pos with a hint (none if hint is "").
func (l *ErrorList) AddHint(pos Pos, hint, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// Sort sorts the list by file, then position; it is stable for errors at
// the same position.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Before(b)
	})
}

// Err returns l as an error, or nil if l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}
