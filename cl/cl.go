// Package cl is the categorical language CL of seed 002, section 6
// (Figures 9-11): point-free terms that a definition is converted to,
// with pruning to the variables each part uses, and converted back.
//
// (Not written yet: Derive and Format report that.)
package cl

import (
	"errors"

	"github.com/ksc-lang/ksc/ir"
)

// Derive returns the body of [CL f]: f's body sent through CL and back.
// The body uses the parameters of f (f.Params).
func Derive(f *ir.Func, ns *ir.Names) (ir.Expr, error) {
	return nil, errors.New("CL is not implemented yet")
}

// Format prints every definition of prog with a body in CL.
func Format(prog *ir.Program) ([]byte, error) {
	return nil, errors.New("CL is not implemented yet")
}
