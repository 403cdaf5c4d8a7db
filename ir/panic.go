package ir

import (
	"fmt"

	"github.com/ksc-lang/ksc/syntax"
)

// A PanicAt is a panic inside a stage of the compiler, annotated with the
// position and the function being compiled when it happened, so that an
// internal compiler error names them.
type PanicAt struct {
	Pos   Pos
	What  string
	Value any
}

func (p *PanicAt) Error() string {
	return fmt.Sprintf("%v (at %s, compiling %s)", p.Value, p.Pos, p.What)
}

// AtPos annotates a recovered panic value with the position being
// compiled. A value that is already annotated is returned unchanged: the
// innermost annotation is the most precise.
//
//	defer func() {
//		if r := recover(); r != nil {
//			panic(ir.AtPos(r, f.P, f.FullName()))
//		}
//	}()
func AtPos(r any, pos Pos, what string) any {
	if _, ok := r.(*PanicAt); ok {
		return r
	}
	return &PanicAt{Pos: pos, What: what, Value: r}
}

// PanicIn is deferred around generating the code of f (defer
// ir.PanicIn(f)): it panics again with f's position and name (AtPos), but
// lets a *syntax.Error, which is positioned already, through as it is.
func PanicIn(f *Func) {
	if r := recover(); r != nil {
		if _, ok := r.(*syntax.Error); ok {
			panic(r)
		}
		panic(AtPos(r, f.P, f.FullName()))
	}
}
