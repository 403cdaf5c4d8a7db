package ir

import (
	"fmt"

	"github.com/ksc-lang/ksc/types"
)

// InnerArg returns the argument type S of the function f that a derived
// function [deriv f] taking arg derives from, following the types of
// language.md section 5. ok is false if arg cannot be the argument of such
// a derived function, or if S cannot be recovered from it
// ([sufrevpass f] must be written [sufrevpass [f S]]).
func InnerArg(deriv string, arg *types.Type) (s *types.Type, ok bool) {
	switch deriv {
	case "D", "suffwdpass", "CL", "shape", "jac", "sparsejac":
		return arg, true
	case "suffwdloop":
		if arg.Kind == types.Tuple && len(arg.Elems) == 2 {
			return arg.Elems[0], true
		}
	case "fwd", "fwdfull", "rev", "sufrev", "vrev", "pattern", "hpattern":
		if arg.Kind == types.Tuple && len(arg.Elems) == 2 {
			return arg.Elems[0], true
		}
	case "revfull":
		if arg.Kind == types.Tuple && len(arg.Elems) == 3 {
			return arg.Elems[0], true
		}
	case "revacc":
		if arg.Kind == types.Tuple && len(arg.Elems) == 3 {
			return arg.Elems[0], true
		}
	}
	return nil, false
}

// DerivedSig returns the argument and result types of [deriv f] for
// f : s -> t, whose split reverse mode records a BOG of type bog (nil if
// f has none: a primitive). A non-empty message explains why there is none.
func DerivedSig(deriv string, s, t, bog *types.Type) (arg, result *types.Type, msg string) {
	ds, ok1 := types.Tangent(s)
	dt, ok2 := types.Tangent(t)
	if deriv != "shape" && deriv != "CL" && (!ok1 || !ok2) {
		return nil, nil, fmt.Sprintf("cannot differentiate a function of type %s -> %s", s, t)
	}
	switch deriv {
	case "D":
		return s, types.LMOf(s, t), ""
	case "fwd":
		return types.TupleOf(s, ds), dt, ""
	case "fwdfull":
		// Forward mode that also returns the value, so that a caller
		// differentiating a call of f runs f's primal code once.
		return types.TupleOf(s, ds), types.TupleOf(t, dt), ""
	case "rev", "sufrev":
		return types.TupleOf(s, dt), ds, ""
	case "vrev":
		// The value and the gradient, from one forward sweep.
		return types.TupleOf(s, dt), types.TupleOf(t, ds), ""
	case "revacc":
		// Reverse mode adding into an accumulator: [revacc f](x, dr, acc)
		// is acc + [rev f](x, dr), with acc updated in place.
		return types.TupleOf(s, dt, ds), ds, ""
	case "CL":
		return s, t, ""
	case "jac":
		return s, types.TensorOf(2, types.FloatType), ""
	case "sparsejac":
		// CSR: row offsets, column indices, values.
		vi := types.VecOf(types.IntegerType)
		return s, types.TupleOf(vi, vi, types.VecOf(types.FloatType)), ""
	case "pattern":
		// Forward mode over sets of the argument's flat positions: the
		// sparsity pattern of the Jacobian (types.Pattern).
		ps, _ := types.Pattern(s)
		pt, _ := types.Pattern(t)
		return types.TupleOf(s, ps), pt, ""
	case "hpattern":
		// The same over sets and sets of pairs of positions: the
		// sparsity pattern of the Hessian (types.HessianPattern).
		ps, _ := types.HessianPattern(s)
		pt, _ := types.HessianPattern(t)
		return types.TupleOf(s, ps), pt, ""
	case "shape":
		sh, ok := types.Shape(t)
		if !ok {
			return nil, nil, "a function returning " + t.String() + " has no shape"
		}
		return s, sh, ""
	case "revfull":
		// Reverse mode that also returns the value: the whole computation
		// that split reverse mode splits into its two passes.
		return types.TupleOf(s, dt, ds), types.TupleOf(t, ds), ""
	case "suffwdpass", "sufrevpass", "bogrev", "suffwdloop", "bogup":
		if bog == nil {
			return nil, nil, "split reverse mode needs a function defined in ks"
		}
		switch deriv {
		case "suffwdpass":
			return s, types.TupleOf(t, bog), ""
		case "sufrevpass":
			return types.TupleOf(dt, bog), ds, ""
		case "suffwdloop":
			// A tail recursion's forward pass from a level whose parent
			// (the level above, or none) is given.
			return types.TupleOf(s, types.VariantOf(types.Unit, types.TupleOf(bog))), types.TupleOf(t, bog), ""
		case "bogup":
			// A tail recursion's reverse pass from a record up, given what
			// the level below returned.
			return types.TupleOf(dt, bog, ds), ds, ""
		}
		// The reverse pass adding into an accumulator.
		return types.TupleOf(dt, bog, ds), ds, ""
	}
	return nil, nil, "unknown derivation " + deriv
}

// WrtSig returns the argument and result types of [deriv f I], f : s ->
// t, which differentiates with respect to the arguments at the positions
// I only, given arg and res, those of [deriv f]. The positions index the
// fields of s if it is a tuple; otherwise the only position is 0. The
// tangent or gradient of the arguments at I is that of I's one argument,
// or the tuple of theirs: [rev f I] and [vrev f I] return it in place of
// the whole gradient, [fwd f I] and [fwdfull f I] take it in place of
// the whole tangent (the others' tangents are zero), and [jac f I] and
// [sparsejac f I] have the Jacobian's type, with the columns of the
// arguments at I only.
func WrtSig(deriv string, wrt []int, s, arg, res *types.Type) (*types.Type, *types.Type, string) {
	switch deriv {
	case "rev", "vrev", "jac", "sparsejac", "fwd", "fwdfull":
	default:
		return nil, nil, "only [rev f ...], [vrev f ...], [fwd f ...], [jac f ...] and [sparsejac f ...] take the positions of the arguments to differentiate"
	}
	args := []*types.Type{s}
	if s.Kind == types.Tuple {
		args = s.Elems
	}
	for _, i := range wrt {
		if i >= len(args) {
			return nil, nil, fmt.Sprintf("argument position %d is out of range: the function takes %d argument(s), at positions 0 to %d", i, len(args), len(args)-1)
		}
	}
	if deriv == "jac" || deriv == "sparsejac" {
		return arg, res, "" // the columns of the arguments at wrt only
	}
	var ds []*types.Type
	for _, i := range wrt {
		d, _ := types.Tangent(args[i])
		ds = append(ds, d)
	}
	g := types.TupleOf(ds...)
	if len(ds) == 1 {
		g = ds[0]
	}
	switch deriv {
	case "vrev":
		return arg, types.TupleOf(res.Elems[0], g), ""
	case "fwd", "fwdfull":
		return types.TupleOf(s, g), res, ""
	}
	return arg, g, ""
}

// IsCL reports whether f is [CL g] of a function g: a derived function
// whose body (package cl's) is ordinary ks, which the derivations
// differentiate as they do a def's ([rev [CL g]], [fwd [CL g]], ...).
func IsCL(f *Func) bool {
	return f != nil && f.Name.IsCL() && f.Base != nil
}

// AddsIntoLastArg reports whether [deriv f] adds into its last argument,
// an accumulator, in place ([revacc f], [revfull f], [bogrev f]): like the
// first argument of $addTo, a value passed there is not the caller's after
// the call.
func AddsIntoLastArg(deriv string) bool {
	return deriv == "revacc" || deriv == "revfull" || deriv == "bogrev" || deriv == "bogup"
}
