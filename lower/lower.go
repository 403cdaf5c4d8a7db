// Package lower rewrites typed IR into the smaller language that
// differentiation and the backends work on: prelude functions defined in
// ks are inlined (InlinePrelude), primitives that are builds in disguise
// become builds (Builds), and expressions are put in A-normal form with
// every binder renamed apart (ANF).
package lower

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// InlinePrelude replaces each call of a prelude function that has a ks
// definition by that definition, its parameters bound to the arguments,
// and so for the prelude functions that definition calls.
// Every node of the inlined body gets the position of the call, so that a
// runtime error inside it names the user's line, and its asserts get the
// primitive's message. The definitions are the primitive table's, compiled
// once (typecheck.PreludeDef).
func InlinePrelude(e ir.Expr) (ir.Expr, error) {
	var err error
	out := ir.Map(e, func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok || c.Prim == nil || c.Prim.Def == "" {
			return e
		}
		def, derr := typecheck.PreludeDef(c.Prim)
		if derr != nil {
			err = derr
			return e
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
		// A definition may call other prelude functions (max calls imax),
		// whose asserts keep their own messages.
		body, ierr := InlinePrelude(body)
		if ierr != nil {
			err = ierr
			return e
		}
		return BindParams(def, c.Args, body, c.P)
	})
	return out, err
}

// BindParams returns body with the parameters of f bound to args. All
// arguments are evaluated before any parameter is bound, so no argument
// can see a parameter.
func BindParams(f *ir.Func, args []ir.Expr, body ir.Expr, pos ir.Pos) ir.Expr {
	vars := make([]*ir.Var, len(f.Params))
	for i, v := range f.Params {
		vars[i] = &ir.Var{P: pos, T: v.T, Name: v.Name}
	}
	var rhs ir.Expr
	if len(args) == 1 {
		rhs = args[0]
	} else {
		rhs = ir.MkTuple(pos, args...)
	}
	if f.OneParam {
		return &ir.Let{P: pos, Vars: vars, Rhs: rhs, Body: body}
	}
	return &ir.Let{P: pos, Vars: vars, Pattern: true, Rhs: rhs, Body: body}
}

// Builds rewrites the primitives that are builds in disguise (constVec,
// deltaVec, map, map2, Vec_init, unzip) as builds, so that differentiation
// needs rules only for build, sumbuild and fold. The rewritten forms keep
// the runtime checks (map2's sizes) and positions.
func Builds(e ir.Expr, ns *ir.Names) ir.Expr {
	return ir.Map(e, func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok || c.Prim == nil || c.Prim.Arity >= 0 && len(c.Args) != c.Prim.Arity {
			return e
		}
		p := c.P
		switch c.Prim.Name {
		case "constVec":
			n, x := c.Args[0], c.Args[1]
			xv := ns.FreshVar(p, "x", x.Type())
			i := ns.FreshVar(p, "i", n.Type())
			return ir.MkLet(p, xv, x, ir.MkPrim(p, "build", n, ir.MkLam(p, i, ir.Ref(p, xv))))
		case "deltaVec":
			n, idx, x := c.Args[0], c.Args[1], c.Args[2]
			iv := ns.FreshVar(p, "i", idx.Type())
			xv := ns.FreshVar(p, "x", x.Type())
			j := ns.FreshVar(p, "j", n.Type())
			body := ir.MkPrim(p, "delta", ir.Ref(p, j), ir.Ref(p, iv), ir.Ref(p, xv))
			return ir.MkLet(p, iv, idx, ir.MkLet(p, xv, x, ir.MkPrim(p, "build", n, ir.MkLam(p, j, body))))
		case "map":
			lam, v := c.Args[0].(*ir.Lam), c.Args[1]
			vv := ns.FreshVar(p, "v", v.Type())
			i := ns.FreshVar(p, "i", types.IndexType(v.Type().Rank))
			elem := ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, vv))
			body := ir.MkLet(p, lam.Param, elem, lam.Body)
			return ir.MkLet(p, vv, v, ir.MkPrim(p, "build", ir.MkPrim(p, "size", ir.Ref(p, vv)), ir.MkLam(p, i, body)))
		case "map2":
			lam, a, b := c.Args[0].(*ir.Lam), c.Args[1], c.Args[2]
			av := ns.FreshVar(p, "a", a.Type())
			bv := ns.FreshVar(p, "b", b.Type())
			i := ns.FreshVar(p, "i", types.IndexType(a.Type().Rank))
			pair := ir.MkTuple(p, ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, av)), ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, bv)))
			body := ir.MkLet(p, lam.Param, pair, lam.Body)
			sizeA, sizeB := ir.MkPrim(p, "size", ir.Ref(p, av)), ir.MkPrim(p, "size", ir.Ref(p, bv))
			build := ir.MkPrim(p, "build", ir.MkPrim(p, "size", ir.Ref(p, av)), ir.MkLam(p, i, body))
			checked := &ir.Assert{P: p, Cond: ir.MkPrim(p, "eq", sizeA, sizeB), Body: build, Msg: "size mismatch"}
			return ir.MkLet(p, av, a, ir.MkLet(p, bv, b, checked))
		case "Vec_init":
			if len(c.Args) == 1 && c.Args[0].Type().Kind == types.Tuple {
				return e // (Vec_init t) of a tuple t: rare; left to the backends
			}
			vars := make([]*ir.Var, len(c.Args))
			for k, a := range c.Args {
				vars[k] = ns.FreshVar(p, "x", a.Type())
			}
			i := ns.FreshVar(p, "i", types.IntegerType)
			var body ir.Expr = ir.Ref(p, vars[len(vars)-1])
			for k := len(vars) - 2; k >= 0; k-- {
				body = ir.MkIf(p, ir.MkPrim(p, "eq", ir.Ref(p, i), ir.Int(p, int64(k))), ir.Ref(p, vars[k]), body)
			}
			var out ir.Expr = ir.MkPrim(p, "build", ir.Int(p, int64(len(vars))), ir.MkLam(p, i, body))
			for k := len(vars) - 1; k >= 0; k-- {
				out = ir.MkLet(p, vars[k], c.Args[k], out)
			}
			return out
		case "unzip":
			v := c.Args[0]
			vv := ns.FreshVar(p, "v", v.Type())
			t := v.Type()
			elems := make([]ir.Expr, len(t.Elem.Elems))
			for k := range elems {
				i := ns.FreshVar(p, "i", types.IndexType(t.Rank))
				get := ir.MkGet(p, k+1, ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, vv)))
				elems[k] = ir.MkPrim(p, "build", ir.MkPrim(p, "size", ir.Ref(p, vv)), ir.MkLam(p, i, get))
			}
			return ir.MkLet(p, vv, v, ir.MkTuple(p, elems...))
		}
		return e
	})
}

// ANF returns e in A-normal form with every binder renamed apart: the
// arguments of calls, tuples, get, and the conditions of if and assert
// are atoms (variables or constants); lambda bodies and the branches of
// if are in A-normal form themselves. Evaluation order is kept: arguments
// are bound left to right before the call.
func ANF(e ir.Expr, params []*ir.Var, ns *ir.Names) (ir.Expr, []*ir.Var) {
	a := &anf{ns: ns}
	env := map[string]*ir.Var{}
	renamed := make([]*ir.Var, len(params))
	for i, v := range params {
		renamed[i] = a.bind(env, v)
	}
	return a.expr(e, env), renamed
}

type anf struct {
	ns *ir.Names
}

// bind returns a fresh variable for binder v and records it in env.
func (a *anf) bind(env map[string]*ir.Var, v *ir.Var) *ir.Var {
	nv := a.ns.FreshVar(v.P, v.Name, v.T)
	env[v.Name] = nv
	return nv
}

func scope(env map[string]*ir.Var) map[string]*ir.Var {
	out := make(map[string]*ir.Var, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}

// expr normalises e.
func (a *anf) expr(e ir.Expr, env map[string]*ir.Var) ir.Expr {
	return a.rhs(e, env, func(r ir.Expr) ir.Expr { return r })
}

// rhs normalises e into a right-hand side (an atom, or one operation on
// atoms) and passes it to k, which builds the rest.
func (a *anf) rhs(e ir.Expr, env map[string]*ir.Var, k func(ir.Expr) ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Const, *ir.Dummy:
		return k(e)
	case *ir.Var:
		v, ok := env[e.Name]
		if !ok {
			panic(fmt.Sprintf("lower: variable %s not in scope", e.Name))
		}
		return k(ir.Ref(e.P, v))
	case *ir.Let:
		return a.rhs(e.Rhs, env, func(r ir.Expr) ir.Expr {
			inner := scope(env)
			vars := make([]*ir.Var, len(e.Vars))
			for i, v := range e.Vars {
				vars[i] = a.bind(inner, v)
			}
			return &ir.Let{P: e.P, Vars: vars, Pattern: e.Pattern, Rhs: r, Body: a.rhs(e.Body, inner, k)}
		})
	case *ir.Call:
		if e.Prim != nil && e.Prim.Name == "$inline" {
			// ($inline (f args)) keeps its call: the arguments become atoms.
			if inner, ok := e.Args[0].(*ir.Call); ok {
				return a.atoms(inner.Args, env, func(args []ir.Expr) ir.Expr {
					call := &ir.Call{P: inner.P, T: inner.T, Fn: inner.Fn, Prim: inner.Prim, Args: args}
					return k(&ir.Call{P: e.P, T: e.T, Prim: e.Prim, Args: []ir.Expr{call}})
				})
			}
		}
		return a.atoms(e.Args, env, func(args []ir.Expr) ir.Expr {
			return k(&ir.Call{P: e.P, T: e.T, Fn: e.Fn, Prim: e.Prim, Args: args})
		})
	case *ir.Tuple:
		return a.atoms(e.Elems, env, func(elems []ir.Expr) ir.Expr {
			return k(&ir.Tuple{P: e.P, T: e.T, Elems: elems})
		})
	case *ir.Get:
		return a.atom(e.X, env, func(x ir.Expr) ir.Expr {
			return k(&ir.Get{P: e.P, T: e.T, I: e.I, N: e.N, X: x})
		})
	case *ir.If:
		return a.atom(e.Cond, env, func(c ir.Expr) ir.Expr {
			return k(&ir.If{P: e.P, T: e.T, Cond: c, Then: a.expr(e.Then, env), Else: a.expr(e.Else, env)})
		})
	case *ir.Assert:
		return a.atom(e.Cond, env, func(c ir.Expr) ir.Expr {
			return &ir.Assert{P: e.P, Cond: c, Body: a.rhs(e.Body, env, k), Msg: e.Msg}
		})
	case *ir.Lam:
		inner := scope(env)
		p := a.bind(inner, e.Param)
		return k(&ir.Lam{P: e.P, Param: p, Body: a.expr(e.Body, inner)})
	}
	panic(fmt.Sprintf("lower: unknown expression %T", e))
}

// atom normalises e to an atom, binding it to a fresh variable if needed.
func (a *anf) atom(e ir.Expr, env map[string]*ir.Var, k func(ir.Expr) ir.Expr) ir.Expr {
	return a.rhs(e, env, func(r ir.Expr) ir.Expr {
		switch r.(type) {
		case *ir.Var, *ir.Const, *ir.Lam:
			return k(r)
		}
		v := a.ns.FreshVar(r.Pos(), "t", r.Type())
		return ir.MkLet(r.Pos(), v, r, k(ir.Ref(r.Pos(), v)))
	})
}

// atoms normalises a list left to right.
func (a *anf) atoms(es []ir.Expr, env map[string]*ir.Var, k func([]ir.Expr) ir.Expr) ir.Expr {
	out := make([]ir.Expr, len(es))
	var loop func(i int) ir.Expr
	loop = func(i int) ir.Expr {
		if i == len(es) {
			return k(out)
		}
		return a.atom(es[i], env, func(x ir.Expr) ir.Expr {
			out[i] = x
			return loop(i + 1)
		})
	}
	return loop(0)
}
