package optimise

import "github.com/ksc-lang/ksc/ir"

// dropUnused drops the internal derived functions (ir.Name.Internal:
// [revacc f], [revfull f], [bogrev f], [fwdfull f], [D f] and the like),
// and those derive made for other derivations (ir.Func.Implied), that
// nothing calls any more: no function the program defines, calls or
// requests with a gdef reaches them. After eliminate-lm and split-bog many are dead: a
// call split into [suffwdpass g] and [bogrev g] no longer calls
// [revacc g], and [revfull g] is only what the split was made from.
func dropUnused(ctx *Context) error {
	prog := ctx.Prog
	reached := map[*ir.Func]bool{}
	var todo []*ir.Func
	reach := func(f *ir.Func) {
		if !reached[f] {
			reached[f] = true
			todo = append(todo, f)
		}
	}
	for _, f := range prog.Funcs {
		if !f.Name.Internal() && !f.Implied {
			reach(f)
		}
	}
	for len(todo) > 0 {
		f := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if f.Body == nil {
			if f.Kind == ir.DerivedFunc && f.Base != nil {
				reach(f.Base) // a derivation still to be made reads it
			}
			continue
		}
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Fn != nil {
				reach(c.Fn)
			}
			return true
		})
	}
	kept := prog.Funcs[:0]
	for _, f := range prog.Funcs {
		if reached[f] {
			kept = append(kept, f)
		}
	}
	clear(prog.Funcs[len(kept):])
	prog.Funcs = kept
	return nil
}
