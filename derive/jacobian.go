package derive

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// jac is the Jacobian transform of seed 002 (Figure 6, in the let form of
// Figure 8): it turns a function body in A-normal form into a
// let-program computing the body's linear map from the function's
// argument. Each primal let x = rhs is kept, followed by the linear let
// dx = (the map from the argument's tangent to x's tangent). Variables of
// types with unit tangents (Integer, Bool, String) get no map.
type jac struct {
	d    *deriver
	ns   *ir.Names
	root ir.Expr            // the argument (an atom): shapes zero maps
	env  map[string]*ir.Var // primal variable -> its linear-map variable
}

// failure is an error found while differentiating, with its position.
type failure struct {
	pos ir.Pos
	msg string
}

func (j *jac) fail(pos ir.Pos, format string, args ...any) {
	panic(&failure{pos: pos, msg: fmt.Sprintf(format, args...)})
}

// lmType returns the type of a map from the argument to values of type t.
func (j *jac) lmType(t *types.Type) *types.Type { return types.LMOf(j.root.Type(), t) }

// differentiable reports whether values of type t have a non-unit tangent.
func differentiable(t *types.Type) bool {
	dt, ok := types.Tangent(t)
	return ok && dt.Contains(types.Float)
}

// zero returns the zero map from the argument to values like example.
func (j *jac) zero(p ir.Pos, example ir.Expr) ir.Expr {
	return ir.MkPrim(p, "lmZero", j.root, example)
}

// lmOf returns the linear map of an atom, or nil if it is zero.
func (j *jac) lmOf(a ir.Expr) ir.Expr {
	if v, ok := a.(*ir.Var); ok {
		if dv := j.env[v.Name]; dv != nil {
			return ir.Ref(v.P, dv)
		}
	}
	return nil
}

// orZero returns m, or the zero map to values like example if m is nil.
func (j *jac) orZero(m ir.Expr, p ir.Pos, example ir.Expr) ir.Expr {
	if m != nil {
		return m
	}
	return j.zero(p, example)
}

// block differentiates an expression in A-normal form into a let-program
// of type (LM S T), or returns nil if its map is zero.
func (j *jac) block(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Let:
		m := j.rhs(e.Rhs, e.Vars)
		saved := map[string]*ir.Var{}
		for _, v := range e.Vars {
			saved[v.Name] = j.env[v.Name]
			delete(j.env, v.Name)
		}
		var lets []*ir.Let
		if m != nil {
			if e.Pattern {
				// let (a b ...) = rhs: the map of the tuple, then each
				// field's map through the projection to it.
				dt := j.ns.FreshVar(e.P, "dt", m.Type())
				lets = append(lets, &ir.Let{P: e.P, Vars: []*ir.Var{dt}, Rhs: m})
				for k, v := range e.Vars {
					if !differentiable(v.T) {
						continue
					}
					dv := j.ns.FreshVar(v.P, "d"+v.Name, j.lmType(v.T))
					proj := j.projection(e.P, e.Vars, k)
					lets = append(lets, &ir.Let{P: e.P, Vars: []*ir.Var{dv},
						Rhs: ir.MkPrim(e.P, "lmCompose", proj, ir.Ref(e.P, dt)), Of: v})
					j.env[v.Name] = dv
				}
			} else if differentiable(e.Vars[0].T) {
				v := e.Vars[0]
				dv := j.ns.FreshVar(v.P, "d"+v.Name, j.lmType(v.T))
				lets = append(lets, &ir.Let{P: e.P, Vars: []*ir.Var{dv}, Rhs: m, Of: v})
				j.env[v.Name] = dv
			}
		}
		body := j.block(e.Body)
		for k, v := range saved {
			j.env[k] = v
		}
		if body == nil {
			return nil
		}
		for i := len(lets) - 1; i >= 0; i-- {
			l := lets[i]
			body = &ir.Let{P: l.P, Vars: l.Vars, Rhs: l.Rhs, Body: body, Of: l.Of}
		}
		return &ir.Let{P: e.P, Vars: e.Vars, Pattern: e.Pattern, Rhs: e.Rhs, Body: body}
	case *ir.Assert:
		body := j.block(e.Body)
		if body == nil {
			return nil
		}
		return &ir.Assert{P: e.P, Cond: e.Cond, Body: body, Msg: e.Msg}
	case *ir.Var, *ir.Const:
		return j.lmOf(e)
	}
	// A right-hand side in tail position: bind it, so that its map can
	// refer to its value.
	v := j.ns.FreshVar(e.Pos(), "r", e.Type())
	return j.block(ir.MkLet(e.Pos(), v, e, ir.Ref(e.Pos(), v)))
}

// active reports whether e reads a variable whose map is not zero.
func (j *jac) active(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if v, ok := x.(*ir.Var); ok && j.env[v.Name] != nil {
			found = true
		}
		return !found
	})
	return found
}

// projection returns the map from a tuple to its field k, as lmHCat of
// zeros and one identity; the pattern's variables shape it.
func (j *jac) projection(p ir.Pos, vars []*ir.Var, k int) ir.Expr {
	parts := make([]ir.Expr, len(vars))
	for i, v := range vars {
		if i == k {
			parts[i] = ir.MkPrim(p, "lmOne", ir.Ref(p, v))
		} else {
			parts[i] = ir.MkPrim(p, "lmZero", ir.Ref(p, v), ir.Ref(p, vars[k]))
		}
	}
	return ir.MkPrim(p, "lmHCat", parts...)
}

// rhs returns the linear map of a right-hand side bound to vars, or nil if
// it is zero.
func (j *jac) rhs(e ir.Expr, vars []*ir.Var) ir.Expr {
	if !differentiable(e.Type()) {
		if t := e.Type(); (t.Contains(types.Named) || t.Contains(types.Variant)) && j.active(e) {
			// A record of split reverse mode (a BOG), made from the
			// argument: its map is not zero, and it has no tangent. The
			// split passes of g, inlined into a def that is then
			// differentiated, get here ([sufrev g] is differentiated
			// as [rev g]).
			j.fail(e.Pos(), "ksc cannot differentiate through a record of split reverse mode, of type %s, which has no tangent: call [sufrev g] or [rev g] rather than g's split passes", t)
		}
		return nil
	}
	p := e.Pos()
	switch e := e.(type) {
	case *ir.Var:
		return j.lmOf(e)
	case *ir.Const, *ir.Dummy:
		return nil
	case *ir.Tuple:
		parts := make([]ir.Expr, len(e.Elems))
		any := false
		for i, a := range e.Elems {
			parts[i] = j.lmOf(a)
			any = any || parts[i] != nil
		}
		if !any {
			return nil
		}
		for i, a := range e.Elems {
			parts[i] = j.orZero(parts[i], p, a)
		}
		return ir.MkPrim(p, "lmVCat", parts...)
	case *ir.Get:
		m := j.lmOf(e.X)
		if m == nil {
			return nil
		}
		parts := make([]ir.Expr, e.N)
		for i := range parts {
			if i == e.I-1 {
				parts[i] = ir.MkPrim(p, "lmOne", ir.MkGet(p, i+1, e.X))
			} else {
				parts[i] = ir.MkPrim(p, "lmZero", ir.MkGet(p, i+1, e.X), ir.MkGet(p, e.I, e.X))
			}
		}
		return ir.MkPrim(p, "lmCompose", ir.MkPrim(p, "lmHCat", parts...), m)
	case *ir.If:
		then, els := j.block(e.Then), j.block(e.Else)
		if then == nil && els == nil {
			return nil
		}
		// The if's value, to shape the zero map of a branch that has
		// none: the variable it is bound to, or the tuple of a pattern's.
		var ex ir.Expr
		if len(vars) == 1 {
			ex = ir.Ref(p, vars[0])
		} else {
			refs := make([]ir.Expr, len(vars))
			for i, v := range vars {
				refs[i] = ir.Ref(p, v)
			}
			ex = ir.MkTuple(p, refs...)
		}
		return ir.MkIf(p, e.Cond, j.orZero(then, p, ex), j.orZero(els, p, ex))
	case *ir.Call:
		if e.Fn != nil {
			return j.call(e)
		}
		return j.prim(e, vars)
	}
	j.fail(p, "ksc cannot differentiate %s", ir.FormatExpr(e))
	return nil
}

// call differentiates a call of a user function: [D g] of the argument,
// composed with the argument's map.
func (j *jac) call(e *ir.Call) ir.Expr {
	p := e.P
	var arg ir.Expr
	if len(e.Args) == 1 {
		arg = j.lmOf(e.Args[0])
	} else {
		parts := make([]ir.Expr, len(e.Args))
		any := false
		for i, a := range e.Args {
			if unusedParam(e.Fn, i) {
				// g ignores it: no derivative flows to it, and the code
				// computing it, dead in f once g is inlined, is not run
				// backwards for a zero cotangent.
				continue
			}
			parts[i] = j.lmOf(a)
			any = any || parts[i] != nil
		}
		if any {
			for i, a := range e.Args {
				parts[i] = j.orZero(parts[i], p, a)
			}
			arg = ir.MkPrim(p, "lmVCat", parts...)
		}
	}
	if arg == nil {
		return nil
	}
	dg, err := j.d.jacobianOf(e.Fn, p)
	if err != nil {
		j.fail(p, "%v", err)
	}
	return ir.MkPrim(p, "lmCompose", ir.CallFunc(p, dg, e.Args...), arg)
}

// unusedParam reports whether the defined function g has several
// parameters and its body does not mention parameter i.
func unusedParam(g *ir.Func, i int) bool {
	return g.Kind == ir.DefFunc && g.Body != nil && len(g.Params) > 1 && !ir.Occurs(g.Params[i].Name, g.Body)
}

// prim differentiates a call of a primitive: the derivative rules of the
// primitive table for the others, rules of their own for loops.
func (j *jac) prim(e *ir.Call, vars []*ir.Var) ir.Expr {
	p := e.P
	pr := e.Prim
	switch pr.Name {
	case "build", "sumbuild":
		lam := e.Args[1].(*ir.Lam)
		body := j.block(lam.Body)
		if body == nil {
			return nil
		}
		op := "lmBuild"
		if pr.Name == "sumbuild" {
			op = "lmSumBuild"
		}
		return ir.MkPrim(p, op, e.Args[0], ir.MkLam(lam.P, lam.Param, body))
	case "fold":
		return j.fold(e)
	case "buildFromSparse":
		return j.buildFromSparse(e)
	case "$inline":
		// ($inline (g args)) is (g args); ANF keeps the call in place.
		if inner, ok := e.Args[0].(*ir.Call); ok {
			if inner.Fn != nil {
				return j.call(inner)
			}
			return j.prim(inner, vars)
		}
	}
	if len(pr.Lams) > 0 {
		j.fail(p, "ksc cannot differentiate %s", pr.Name)
	}
	parts, partLM := j.parts(e)
	var sum ir.Expr
	for k := range parts {
		m := partLM(k)
		if m == nil {
			continue
		}
		if pr.D == nil && pr.InPlace {
			j.fail(p, "ksc cannot differentiate reverse-mode code as code (its in-place %s has no derivative); derivatives of [rev g] are made by identities, to second order", pr)
		}
		if pr.D == nil {
			j.fail(p, "ksc has no derivative for %s", pr)
		}
		if k >= len(pr.D) || pr.D[k] == "" {
			continue
		}
		d := j.rule(pr, k, parts, vars, p)
		term := ir.MkPrim(p, "lmCompose", d, m)
		if sum == nil {
			sum = term
		} else {
			sum = ir.MkPrim(p, "lmAdd", sum, term)
		}
	}
	return sum
}

// parts returns the argument parts of a primitive call (the fields of a
// single tuple argument when the primitive takes several), and a function
// giving the linear map of part k.
func (j *jac) parts(e *ir.Call) ([]ir.Expr, func(int) ir.Expr) {
	p := e.P
	if len(e.Args) == 1 && e.Prim.Arity != 1 && e.Args[0].Type().Kind == types.Tuple {
		t := e.Args[0]
		n := len(t.Type().Elems)
		parts := make([]ir.Expr, n)
		for k := range parts {
			parts[k] = ir.MkGet(p, k+1, t)
		}
		return parts, func(k int) ir.Expr {
			m := j.lmOf(t)
			if m == nil || !differentiable(parts[k].Type()) {
				return nil
			}
			proj := make([]ir.Expr, n)
			for i := range proj {
				if i == k {
					proj[i] = ir.MkPrim(p, "lmOne", parts[i])
				} else {
					proj[i] = ir.MkPrim(p, "lmZero", parts[i], parts[k])
				}
			}
			return ir.MkPrim(p, "lmCompose", ir.MkPrim(p, "lmHCat", proj...), m)
		}
	}
	return e.Args, func(k int) ir.Expr {
		if !differentiable(e.Args[k].Type()) {
			return nil
		}
		return j.lmOf(e.Args[k])
	}
}

// rule instantiates the derivative rule of part k of a primitive: the ks
// expression in the table, over x0, x1, ... (the parts) and r (the result).
func (j *jac) rule(pr *ir.Prim, k int, parts []ir.Expr, vars []*ir.Var, p ir.Pos) ir.Expr {
	params := make([]*ir.Var, 0, len(parts)+1)
	subst := map[string]ir.Expr{}
	for i, a := range parts {
		name := fmt.Sprintf("x%d", i)
		params = append(params, &ir.Var{T: a.Type(), Name: name})
		subst[name] = a
	}
	if len(vars) == 1 {
		params = append(params, &ir.Var{T: vars[0].T, Name: "r"})
		subst["r"] = ir.Ref(p, vars[0])
	}
	src := pr.D[k]
	tmpl, err := j.d.template(pr, k, params)
	if err != nil {
		j.fail(p, "internal: the derivative rule %q of %s does not check: %v", src, pr, err)
	}
	return ir.Subst(ir.Copy(tmpl, p), subst)
}

// template type-checks a derivative rule at the given parameter types
// (typecheck.Rule, shared: the caller copies it).
func (d *deriver) template(pr *ir.Prim, k int, params []*ir.Var) (ir.Expr, error) {
	return typecheck.Rule(pr, k, params)
}

// fold differentiates (fold (lam (t : Tuple A E) body) acc v) into lmFold:
// the step's map is the Jacobian transform of body, given the maps da of
// the accumulator and de of the element as part of the lambda's argument.
func (j *jac) fold(e *ir.Call) ir.Expr {
	p := e.P
	lam, init, v := e.Args[0].(*ir.Lam), e.Args[1], e.Args[2]
	acc, elem := init.Type(), v.Type().Elem
	s := j.root.Type()
	lmA, lmE := types.LMOf(s, acc), types.LMOf(s, elem)
	tt := j.ns.FreshVar(p, "tt", types.TupleOf(types.TupleOf(acc, elem), types.TupleOf(lmA, lmE)))
	t := lam.Param
	dade := j.ns.FreshVar(p, "dade", types.TupleOf(lmA, lmE))
	da := j.ns.FreshVar(p, "da", lmA)
	de := j.ns.FreshVar(p, "de", lmE)
	dt := j.ns.FreshVar(p, "d"+t.Name, types.LMOf(s, t.T))
	saved := j.env[t.Name]
	j.env[t.Name] = dt
	body := j.block(lam.Body)
	j.env[t.Name] = saved
	mInit, mV := j.lmOf(init), j.lmOf(v)
	if body == nil && mInit == nil {
		return nil // the step and the start do not depend on the argument
	}
	if body == nil {
		body = ir.MkPrim(p, "lmZero", j.root, ir.MkGet(p, 1, ir.Ref(p, t)))
	}
	// (lam (tt) (let t = tt.1; dade = tt.2; da = dade.1; de = dade.2;
	//            dt = (lmVCat da de) in body))
	step := ir.MkLet(p, t, ir.MkGet(p, 1, ir.Ref(p, tt)),
		ir.MkLet(p, dade, ir.MkGet(p, 2, ir.Ref(p, tt)),
			ir.MkLet(p, da, ir.MkGet(p, 1, ir.Ref(p, dade)),
				ir.MkLet(p, de, ir.MkGet(p, 2, ir.Ref(p, dade)),
					&ir.Let{P: p, Vars: []*ir.Var{dt}, Rhs: ir.MkPrim(p, "lmVCat", ir.Ref(p, da), ir.Ref(p, de)), Of: t,
						Body: body}))))
	return ir.MkPrim(p, "lmFold", lam, ir.MkLam(p, tt, step), init, v,
		j.orZero(mInit, p, init), j.orZero(mV, p, v))
}

// buildFromSparse differentiates (buildFromSparse sh n (lam k body)),
// the sum over k of element j(k) set to x(k) in a zero tensor of shape sh:
// its map is the sum over k of x's map scattered to index j,
//
//	(lmSumBuild n (lam k (let ... pair = body, j = pair.1, x = pair.2,
//	                         (lmCompose (lmScatter sh j x) dx))))
//
// Applying it forwards is again a buildFromSparse of the tangents
// (linmap.Forward), and in reverse each k reads the cotangent at j.
func (j *jac) buildFromSparse(e *ir.Call) ir.Expr {
	p := e.P
	sh, n, lam := e.Args[0], e.Args[1], e.Args[2].(*ir.Lam)
	items, tail := ir.ChainItems(lam.Body)
	pt := tail.Type()
	pair := j.ns.FreshVar(p, "pair", pt)
	jv := j.ns.FreshVar(p, "j", pt.Elems[0])
	xv := j.ns.FreshVar(p, "x", pt.Elems[1])
	body := ir.WrapChain(items, ir.MkLet(p, pair, tail,
		ir.MkLet(p, jv, ir.MkGet(p, 1, ir.Ref(p, pair)),
			ir.MkLet(p, xv, ir.MkGet(p, 2, ir.Ref(p, pair)), ir.Ref(p, xv)))))
	m := j.block(body)
	if m == nil {
		return nil
	}
	scatter := ir.MkPrim(p, "lmScatter", sh, ir.Ref(p, jv), ir.Ref(p, xv))
	m = mapTail(m, func(t ir.Expr) ir.Expr { return ir.MkPrim(p, "lmCompose", scatter, t) })
	return ir.MkPrim(p, "lmSumBuild", n, ir.MkLam(lam.P, lam.Param, m))
}

// mapTail returns the let-program m with its final map replaced by f of it.
func mapTail(m ir.Expr, f func(ir.Expr) ir.Expr) ir.Expr {
	items, tail := ir.ChainItems(m)
	return ir.WrapChain(items, f(tail))
}
