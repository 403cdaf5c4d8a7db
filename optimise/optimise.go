// Package optimise holds the passes that transform a typed program between
// type checking and code generation, listed in order in one table
// (Passes), and runs them with the IR checker between passes on request.
package optimise

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
)

// A Pass transforms a program in place.
type Pass struct {
	Name string
	Doc  string
	Run  func(*ir.Program) error
}

// Passes are the passes run before code generation, in order.
var Passes = []Pass{
	{Name: "eliminate-lm", Doc: "apply linear maps: forward and reverse mode without linear maps", Run: eliminateLM},
	{Name: "inline-prelude", Doc: "replace calls of prelude functions defined in ks by their definitions", Run: inlinePrelude},
}

// Options control Run.
type Options struct {
	// Check runs the IR checker before the first pass and after every pass.
	Check bool
}

// Run runs the passes over prog.
func Run(prog *ir.Program, opts Options) error {
	if opts.Check {
		if err := ir.Check(prog); err != nil {
			return fmt.Errorf("before the passes: %w", err)
		}
	}
	for _, p := range Passes {
		if err := p.Run(prog); err != nil {
			return err
		}
		if opts.Check {
			if err := ir.Check(prog); err != nil {
				return fmt.Errorf("after pass %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

// inlinePrelude inlines the prelude functions defined in ks (see
// lower.InlinePrelude).
func inlinePrelude(prog *ir.Program) error {
	var pl lower.Prelude
	var err error
	forEachBody(prog, func(f *ir.Func) {
		body, ierr := pl.InlinePrelude(f.Body)
		if ierr != nil && err == nil {
			err = ierr
		}
		f.Body = body
	})
	return err
}

// forEachBody calls do for every function with a body, annotating a panic
// with the function.
func forEachBody(prog *ir.Program, do func(*ir.Func)) {
	for _, f := range prog.Funcs {
		if f.Body != nil {
			func() {
				defer func() {
					if r := recover(); r != nil {
						panic(ir.AtPos(r, f.P, f.FullName()))
					}
				}()
				do(f)
			}()
		}
	}
}
