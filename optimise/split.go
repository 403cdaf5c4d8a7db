package optimise

import (
	"github.com/ksc-lang/ksc/bog"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// splitBog fills in the passes of split reverse mode from the optimised
// [revfull f] of each function that has them (package bog).
func splitBog(ctx *Context) error {
	prog := ctx.Prog
	lookup := &derivedLookup{prog: prog}
	var errs syntax.ErrorList
	for _, f := range prog.Funcs {
		if f.Name.Outer() != "revfull" || f.Body == nil {
			continue
		}
		g := f.Base
		// Only the passes still without a body: one written by hand, or
		// made from hand-written ones (derive.handSplit), stays as it is.
		empty := func(deriv string) *ir.Func {
			if h := lookup.Lookup(deriv, g); h != nil && h.Body == nil && h.Kind == ir.DerivedFunc {
				return h
			}
			return nil
		}
		passes := bog.Passes{Fwd: empty("suffwdpass"), Rev: empty("sufrevpass"), RevAcc: empty("bogrev")}
		if passes.Fwd == nil && passes.Rev == nil && passes.RevAcc == nil {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					panic(ir.AtPos(r, f.P, f.FullName()))
				}
			}()
			if err := bog.Split(f, prog.BogType(g), passes, lookup, prog.Names()); err != nil {
				errs.Add(f.P, "splitting %s: %v", g.FullName(), err)
			}
		}()
	}
	errs.Sort()
	return errs.Err()
}

// derivedLookup finds derived functions of a program.
type derivedLookup struct {
	prog *ir.Program
}

func (d *derivedLookup) Lookup(deriv string, g *ir.Func) *ir.Func {
	return d.prog.Lookup(g.Name.Derive(deriv), g.BaseArg)
}
