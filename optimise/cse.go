package optimise

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
)

// available is a value bound by an enclosing let.
type available struct {
	rhs ir.Expr
	v   *ir.Var
}

// cse replaces a let whose value equals the value of an enclosing let by
// the variable of the enclosing one. It leaves alone what must stay
// distinct: values with effects, and fresh zeros and in-place updates,
// which are accumulators of derived code that are updated in place.
func cse(e ir.Expr, eff lower.Effects) ir.Expr {
	var walk func(e ir.Expr, env []available) ir.Expr
	walk = func(e ir.Expr, env []available) ir.Expr {
		switch x := e.(type) {
		case *ir.Let:
			rhs := walk(x.Rhs, env)
			share := !x.Pattern && shareable(rhs, eff)
			if share {
				for i := len(env) - 1; i >= 0; i-- {
					if equal(env[i].rhs, rhs) && env[i].v.T.Equal(x.Vars[0].T) {
						body := ir.Subst(x.Body, map[string]ir.Expr{x.Vars[0].Name: ir.Ref(x.P, env[i].v)})
						return walk(body, env)
					}
				}
			}
			inner := env
			for _, v := range x.Vars {
				inner = dropMentioning(inner, v.Name)
			}
			if share {
				inner = append(inner[:len(inner):len(inner)], available{rhs: rhs, v: x.Vars[0]})
			}
			return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: rhs, Body: walk(x.Body, inner), Of: x.Of}
		case *ir.Lam:
			return &ir.Lam{P: x.P, Param: x.Param, Body: walk(x.Body, dropMentioning(env, x.Param.Name))}
		}
		return ir.MapChildren(e, func(k ir.Expr) ir.Expr { return walk(k, env) })
	}
	return walk(e, nil)
}

// dropMentioning removes the values that mention or are bound to name,
// which a new binder of name makes stale.
func dropMentioning(env []available, name string) []available {
	var out []available
	for _, a := range env {
		if a.v.Name != name && !ir.Occurs(name, a.rhs) {
			out = append(out, a)
		}
	}
	return out
}

// shareable reports whether two evaluations of e may be replaced by one.
func shareable(e ir.Expr, eff lower.Effects) bool {
	if ir.IsAtom(e) || lower.HasEffect(e, eff) {
		return false
	}
	ok := true
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, isCall := x.(*ir.Call); isCall && c.Prim != nil && (c.Prim.InPlace || c.Prim.Name == "ts_zero") {
			ok = false
		}
		return ok
	})
	return ok
}
