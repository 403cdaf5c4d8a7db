package optimise

import (
	"strings"

	"github.com/ksc-lang/ksc/bog"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
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
		bogT := prog.BogType(g)
		if bogT.Kind != types.Named || !strings.HasPrefix(bogT.Name, "bog$") {
			continue // the record of hand-written passes (derive.handSplit)
		}
		// The derived passes, if one is still without a body: all of them,
		// so that a split run again (driver.Optimise's later rounds, when
		// a pass is asked for after the first) defines one record for all.
		derived := func(deriv string) *ir.Func {
			if h := lookup.Lookup(deriv, g); h != nil && h.Kind == ir.DerivedFunc {
				return h
			}
			return nil
		}
		passes := bog.Passes{Fwd: derived("suffwdpass"), Rev: derived("sufrevpass"), RevAcc: derived("bogrev")}
		if (passes.Fwd == nil || passes.Fwd.Body != nil) && (passes.Rev == nil || passes.Rev.Body != nil) &&
			(passes.RevAcc == nil || passes.RevAcc.Body != nil) {
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
