// Package optimise holds the passes that transform a typed program between
// type checking and code generation, listed in order in one table
// (Passes), and runs them with the IR checker between passes on request.
package optimise

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// A Pass transforms a program in place.
type Pass struct {
	Name string
	Doc  string
	Run  func(*ir.Program) error
}

// Passes are the passes run before code generation, in order.
var Passes = []Pass{
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

// inlinePrelude replaces each call of a prelude function that has a ks
// definition by that definition, its parameters bound to the arguments.
// Every node of the inlined body gets the position of the call, so a
// runtime error inside it names the user's line.
func inlinePrelude(prog *ir.Program) error {
	defs := map[*ir.Prim]*ir.Func{}
	var err error
	rewrite := func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok || c.Prim == nil || c.Prim.Def == "" {
			return e
		}
		def := defs[c.Prim]
		if def == nil {
			d, derr := typecheck.PreludeDef(c.Prim)
			if derr != nil {
				err = derr
				return e
			}
			def, defs[c.Prim] = d, d
		}
		body := ir.Copy(def.Body, c.P)
		if c.Prim.Fail != "" {
			ir.Inspect(body, func(x ir.Expr) bool {
				if a, ok := x.(*ir.Assert); ok {
					a.Msg = c.Prim.Fail
				}
				return true
			})
		}
		return bindArgs(def, c.Args, body, c.P)
	}
	forEachBody(prog, func(f *ir.Func) { f.Body = ir.Map(f.Body, rewrite) })
	return err
}

// bindArgs returns body with the parameters of f bound to args. All
// arguments are evaluated before any parameter is bound, so no argument
// can see a parameter.
func bindArgs(f *ir.Func, args []ir.Expr, body ir.Expr, pos syntax.Pos) ir.Expr {
	vars := make([]*ir.Var, len(f.Params))
	for i, v := range f.Params {
		vars[i] = &ir.Var{P: pos, T: v.T, Name: v.Name}
	}
	if f.OneParam {
		var rhs ir.Expr
		if len(args) == 1 {
			rhs = args[0]
		} else {
			rhs = &ir.Tuple{P: pos, T: ir.ArgType(args), Elems: args}
		}
		return &ir.Let{P: pos, Vars: vars, Rhs: rhs, Body: body}
	}
	var rhs ir.Expr
	if len(args) == 1 {
		rhs = args[0] // a tuple-valued expression
	} else {
		ts := make([]*types.Type, len(args))
		for i, a := range args {
			ts[i] = a.Type()
		}
		rhs = &ir.Tuple{P: pos, T: types.TupleOf(ts...), Elems: args}
	}
	return &ir.Let{P: pos, Vars: vars, Pattern: true, Rhs: rhs, Body: body}
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
