package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ksc-lang/ksc/syntax"
)

// sources caches the text of the files errors point into.
type sources map[string][]byte

// text returns the text of file, or nil if it cannot be read.
func (s sources) text(file string) []byte {
	if src, ok := s[file]; ok {
		return src
	}
	src, err := os.ReadFile(file)
	if err != nil {
		src = nil
	}
	s[file] = src
	return src
}

// printError prints an error in a program for a person to act on:
//
//	model.ks:2:4: unknown function lett
//	   2 |   (lett (y (mul x x)) y))
//	     |    ^^^^
//	help: did you mean let?
//
// The first line is the error's position and message, as compilers
// print them (editors jump to it); the source line and the caret follow
// if the file can be read, and the hint if there is one.
func printError(w io.Writer, e *syntax.Error, src sources) {
	if !e.Pos.IsValid() {
		fmt.Fprintf(w, "ksc: %s\n", e.Msg) // about the program as a whole
	} else {
		fmt.Fprintf(w, "%s: %s\n", e.Pos, e.Msg)
		if ex := syntax.Excerpt(src.text(e.Pos.File), e.Pos); ex != "" {
			fmt.Fprintln(w, ex)
		}
	}
	if e.Hint != "" {
		fmt.Fprintf(w, "help: %s\n", e.Hint)
	}
}
