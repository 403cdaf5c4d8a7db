package optimise

import (
	"slices"
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
	for _, f := range slices.Clone(prog.Funcs) {
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
		// The loops an earlier round made of the passes read the records
		// it defined; loop-tail makes them again from the new passes.
		prog.Funcs = slices.DeleteFunc(prog.Funcs, func(h *ir.Func) bool {
			return h.Base == g && (h.Name.Outer() == "suffwdloop" || h.Name.Outer() == "bogup")
		})
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

// loopTail turns the split passes of each tail recursion into loops
// (bog.LoopTail), defining [suffwdloop f] and [bogup f], and simplifies
// the passes it rewrote.
func loopTail(ctx *Context) error {
	prog := ctx.Prog
	lookup := &derivedLookup{prog: prog}
	changed := false
	for _, f := range append([]*ir.Func{}, prog.Funcs...) {
		if f.Name.Outer() != "bogrev" || f.Kind != ir.DerivedFunc || f.Body == nil || f.Base == nil {
			continue
		}
		g := f.Base
		bogT := prog.BogType(g)
		if bogT.Kind != types.Named || !strings.HasPrefix(bogT.Name, "bog$") || bogT.Def == nil {
			continue
		}
		passes := bog.Passes{Fwd: lookup.Lookup("suffwdpass", g), Rev: lookup.Lookup("sufrevpass", g), RevAcc: f}
		if passes.Fwd == nil || passes.Fwd.Body == nil {
			continue
		}
		loops := bog.Loops{Fwd: loopFunc(prog, g, "suffwdloop", bogT), Up: loopFunc(prog, g, "bogup", bogT)}
		if !bog.LoopTail(passes, loops, bogT, prog.Names()) {
			// A recursion using the value below: its reverse pass, from
			// the top level down, can still be a loop.
			changed = bog.TailReverse(f, prog.Names()) || changed
			continue
		}
		for _, h := range []*ir.Func{loops.Fwd, loops.Up} {
			if prog.Lookup(h.Name, h.BaseArg) == nil {
				prog.Funcs = append(prog.Funcs, h)
			}
		}
		// Reverse mode that runs the levels again, as deep a recursion as
		// f's, becomes the two loops: [revacc f](x, dr, acc) is [bogrev
		// f](dr, b, acc) of the BOG b of [suffwdpass f](x).
		if ra := lookup.Lookup("revacc", g); ra != nil && ra.Body != nil && ra.Kind == ir.DerivedFunc && len(ra.Params) == 3 {
			p := ra.P
			x, dr, acc := ra.Params[0], ra.Params[1], ra.Params[2]
			b := ir.MkGet(p, 2, ir.CallFunc(p, passes.Fwd, ir.Ref(p, x)))
			ra.Body = ir.CallFunc(p, f, ir.Ref(p, dr), b, ir.Ref(p, acc))
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return simplifyPass(ctx)
}

// loopFunc returns [deriv g] (suffwdloop or bogup), the program's own if
// it has one, else a new function without a body.
func loopFunc(prog *ir.Program, g *ir.Func, deriv string, bogT *types.Type) *ir.Func {
	name := g.Name.Derive(deriv)
	if h := prog.Lookup(name, g.BaseArg); h != nil {
		return h
	}
	arg, res, _ := ir.DerivedSig(deriv, g.Arg, g.Result, bogT)
	return &ir.Func{P: g.P, Name: name, BaseArg: g.BaseArg, Arg: arg, Result: res, Kind: ir.DerivedFunc, Base: g}
}
