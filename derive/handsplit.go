package derive

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// splitDeriv reports whether a derivation is a pass of split reverse mode.
func splitDeriv(deriv string) bool {
	return deriv == "suffwdpass" || deriv == "sufrevpass" || deriv == "bogrev"
}

// handRev returns g's hand-written [rev g], or nil.
func (d *deriver) handRev(g *ir.Func) *ir.Func {
	if r := d.lookup("rev", g); r != nil && r.Kind != ir.DerivedFunc {
		return r
	}
	return nil
}

// handSplit makes f, a split pass of base, from what the program writes by
// hand, and reports whether it did (or reported why it cannot):
//
//   - beside a hand-written [suffwdpass g] and [sufrevpass g] (whose record
//     type the program chooses, as Knossos lets it), [bogrev g] adds what
//     [sufrevpass g] returns into its accumulator; the other pass of a
//     hand-written one cannot be derived, since ksc cannot know the record
//     the hand-written one makes or reads;
//   - for g with a hand-written [rev g] (an edef, or a def whose reverse
//     mode the program chooses: the derivative of g wherever g is
//     called), the record is g's argument: [suffwdpass g] x = (g x, x),
//     and the reverse passes call [rev g] on it. So a caller's passes,
//     translated (procsplit.go), call these.
func (d *deriver) handSplit(f, base *ir.Func, p ir.Pos) bool {
	deriv := f.Name.Outer()
	fw, rv := d.lookup("suffwdpass", base), d.lookup("sufrevpass", base)
	handFw := fw != nil && fw.Kind != ir.DerivedFunc
	handRv := rv != nil && rv.Kind != ir.DerivedFunc
	switch {
	case handFw || handRv:
		if deriv == "bogrev" && handRv {
			v := paramsOf(f, "dr", "bog", "acc")
			f.Body = ir.MkPrim(p, "$addTo", v[2], ir.CallFunc(p, rv, v[0], v[1]))
			return true
		}
		hand, other := "suffwdpass", "sufrevpass"
		if handRv {
			hand, other = other, hand
		}
		d.errorf(p, "ksc cannot generate %s: %s is written by hand, so ksc cannot know its record; write %s by hand too",
			f.FullName(), base.Name.Derive(hand), base.Name.Derive(other))
		return true
	case d.handRev(base) != nil:
		bog := d.prog.BogType(base)
		if bog.Kind == types.Named && bog.Def == nil {
			bog.SetDef(types.TupleOf(base.Arg))
		}
		rev := d.handRev(base)
		// unwrap reads the argument back from a record b.
		unwrap := func(b ir.Expr) ir.Expr { return ir.MkGet(p, 1, ir.MkPrim(p, "$unwrap", b)) }
		switch deriv {
		case "suffwdpass":
			x := paramsOf(f, "x")[0]
			rec := ir.MkPrim(p, "$wrap", ir.MkTuple(p, x), &ir.Dummy{P: p, T: bog})
			f.Body = ir.MkTuple(p, ir.CallFunc(p, base, x), rec)
		case "sufrevpass":
			v := paramsOf(f, "dr", "bog")
			f.Body = ir.CallFunc(p, rev, unwrap(v[1]), v[0])
		case "bogrev":
			v := paramsOf(f, "dr", "bog", "acc")
			f.Body = ir.MkPrim(p, "$addTo", v[2], ir.CallFunc(p, rev, unwrap(v[1]), v[0]))
		}
		return true
	}
	return false
}

// paramsOf gives f parameters of the given names, one per field of its
// argument (or the argument itself, for one name), and returns references
// to them.
func paramsOf(f *ir.Func, names ...string) []ir.Expr {
	ts := []*types.Type{f.Arg}
	if len(names) > 1 {
		ts = f.Arg.Elems
	}
	f.Params = nil
	refs := make([]ir.Expr, len(names))
	for i, n := range names {
		v := &ir.Var{P: f.P, T: ts[i], Name: n}
		f.Params = append(f.Params, v)
		refs[i] = ir.Ref(f.P, v)
	}
	f.OneParam = len(names) == 1
	return refs
}
