// Package linmap gives the linear maps of seed 002 (Figure 3) their
// meaning. A linear map (LM S T) is built from the lm* primitives of the
// primitive table; this package says what a map does to a tangent when
// applied (Figure 4, Apply) and to a cotangent when reverse-applied
// (Figure 5, AccumulateR); the algebraic laws of both figures are data in
// the optimiser's table of laws (optimise/laws.go).
//
// The Jacobian transform (package derive) produces linear maps as
// let-programs: a chain of lets binding primal values and linear-map
// variables, every map a function of the same source S (the argument of
// the function differentiated). Forward converts such a program, applied
// to a tangent of S, into tangent computations: every linear-map variable
// becomes the tangent it maps the input tangent to. Reverse transposes it:
// the primal lets run forwards, then the linear lets backwards, each
// adding its contributions into accumulators (one per linear-map
// variable, and one for S) that are updated in place ($addTo, $addAt), so
// the adjoint of (index i v) inside a loop costs O(1), not a fresh vector.
package linmap

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// A Resolver finds the derived functions that applying a call of [D g]
// needs: [fwd g], and either the accumulating reverse [revacc g]
// (accumulating true) or a hand-written [rev g]. FwdFull returns
// [fwdfull g], forward mode returning g's value too, or nil where g's
// forward mode is written by hand (or there is none): then a call of g and
// the application of its map stay apart.
type Resolver interface {
	Fwd(g *ir.Func) (*ir.Func, error)
	// Pattern returns [pattern g], which Pattern calls for [D g].
	Pattern(g *ir.Func) (*ir.Func, error)
	// HessianPattern returns [hpattern g], which HessianPattern calls
	// for [D g].
	HessianPattern(g *ir.Func) (*ir.Func, error)
	FwdFull(g *ir.Func) *ir.Func
	// FwdWrt returns [fwdfull g I] (full) or [fwd g I], forward mode of
	// the arguments at the positions wrt only, if the program has it
	// (derive declares it where a caller passes g some arguments that do
	// not depend on what it differentiates), else nil.
	FwdWrt(g *ir.Func, wrt []int, full bool) *ir.Func
	RevAcc(g *ir.Func) (f *ir.Func, accumulating bool, err error)
	// Split returns the split passes [suffwdpass g] and [bogrev g] that
	// reverse mode calls instead of g and [revacc g] for a recursive g,
	// or nils: then g's primal code runs in [revacc g] again. valueRead
	// says whether the caller's reverse pass reads the call's value; if
	// not, and g prints nothing, the call is dead and [revacc g] alone
	// runs g's levels once each (a tail call), with no record.
	Split(g *ir.Func, valueRead bool) (fwd, rev *ir.Func)
}

// Zero returns the zero cotangent of m's source.
func Zero(m ir.Expr, ns *ir.Names) (out ir.Expr, err error) {
	defer catch(&err)
	s := &sem{ns: ns}
	return ir.MkPrim(m.Pos(), "ts_zero", s.example(m)), nil
}

// An Error is a linear map that cannot be applied: it names the operation
// and where it came from.
type Error struct {
	Pos ir.Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

func fail(pos ir.Pos, format string, args ...any) {
	panic(&Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// catch turns a panic of *Error into an error.
func catch(err *error) {
	if r := recover(); r != nil {
		if e, ok := r.(*Error); ok {
			*err = e
			return
		}
		panic(r)
	}
}

// isLMCall reports whether e calls the linear-map operation name.
func isLMCall(e ir.Expr, name string) (*ir.Call, bool) {
	c, ok := e.(*ir.Call)
	if ok && c.Prim != nil && c.Prim.Name == name {
		return c, true
	}
	return nil, false
}

// isDCall reports whether e calls a Jacobian [D g], returning g.
func isDCall(e ir.Expr) (*ir.Call, *ir.Func, bool) {
	c, ok := e.(*ir.Call)
	if !ok || c.Fn == nil || len(c.Fn.Name.Derivs) == 0 || c.Fn.Name.Derivs[0] != "D" {
		return nil, nil, false
	}
	base := c.Fn.Base
	if base == nil {
		return nil, nil, false
	}
	return c, base, true
}

// HasLMVar reports whether e mentions a variable whose type holds a
// linear map (a variable of a let-program).
func HasLMVar(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if v, ok := x.(*ir.Var); ok && v.T.Contains(types.LM) {
			found = true
		}
		return !found
	})
	return found
}

// tangent returns the tangent type of t.
func tangent(t *types.Type) *types.Type {
	dt, ok := types.Tangent(t)
	if !ok {
		panic(fmt.Sprintf("linmap: %s has no tangent type", t))
	}
	return dt
}

// source and target return the types a linear map goes from and to.
func source(m ir.Expr) *types.Type { return m.Type().From }
func target(m ir.Expr) *types.Type { return m.Type().To }

// binder collects lets so that an expression used more than once is
// evaluated once.
type binder struct {
	ns    *ir.Names
	binds []*ir.Let
}

// atom returns e if it is an atom, else a variable bound to it.
func (b *binder) atom(e ir.Expr) ir.Expr {
	if ir.IsAtom(e) {
		return e
	}
	v := b.ns.FreshVar(e.Pos(), "t", e.Type())
	b.binds = append(b.binds, &ir.Let{P: e.Pos(), Vars: []*ir.Var{v}, Rhs: e})
	return ir.Ref(e.Pos(), v)
}

// wrap puts the collected lets around body.
func (b *binder) wrap(body ir.Expr) ir.Expr {
	for i := len(b.binds) - 1; i >= 0; i-- {
		l := b.binds[i]
		body = &ir.Let{P: l.P, Vars: l.Vars, Pattern: l.Pattern, Rhs: l.Rhs, Body: body}
	}
	b.binds = nil
	return body
}

// InlineLMLets substitutes lets that bind linear maps into their uses, so
// that every application sees the map it applies.
func InlineLMLets(e ir.Expr) ir.Expr {
	return ir.Map(e, func(e ir.Expr) ir.Expr {
		l, ok := e.(*ir.Let)
		if !ok || !l.Rhs.Type().Contains(types.LM) {
			return e
		}
		if l.Pattern {
			t, ok := l.Rhs.(*ir.Tuple)
			if !ok {
				return e
			}
			m := map[string]ir.Expr{}
			for i, v := range l.Vars {
				m[v.Name] = t.Elems[i]
			}
			return ir.Subst(l.Body, m)
		}
		return ir.Subst(l.Body, map[string]ir.Expr{l.Vars[0].Name: l.Rhs})
	})
}
