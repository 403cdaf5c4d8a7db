package ir

import (
	"fmt"

	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Check verifies the invariants of a program's IR: every variable is in
// scope with its binder's type, every node's type follows from its
// children, calls match their callee's signature, lambdas appear only as
// arguments of primitives that take them, each body has its function's
// result type, and, once Program.NoShadow is set, no binder rebinds a
// name in scope. Passes run it after they transform a program
// (ksc emit --check); an error here is a bug in ksc.
func Check(p *Program) error {
	var errs syntax.ErrorList
	for _, f := range p.Funcs {
		if f.Body == nil {
			continue
		}
		c := &checker{fn: f, errs: &errs, noShadow: p.NoShadow}
		env := map[string]*types.Type{}
		for _, v := range f.Params {
			env[v.Name] = v.T
		}
		if len(f.Params) != 1 && !ArgType(varsAsExprs(f.Params)).Equal(f.Arg) {
			c.errorf(f.P, "parameters do not match the argument type %s", f.Arg)
		}
		c.expr(f.Body, env, false)
		if !f.Body.Type().Equal(f.Result) {
			c.errorf(f.P, "body has type %s, result type is %s", f.Body.Type(), f.Result)
		}
	}
	return errs.Err()
}

func varsAsExprs(vs []*Var) []Expr {
	es := make([]Expr, len(vs))
	for i, v := range vs {
		es[i] = v
	}
	return es
}

type checker struct {
	fn       *Func
	errs     *syntax.ErrorList
	noShadow bool // a binder may not rebind a name in scope (Program.NoShadow)
}

func (c *checker) errorf(pos Pos, format string, args ...any) {
	c.errs.Add(pos, "IR check in %s: %s", c.fn.FullName(), fmt.Sprintf(format, args...))
}

func (c *checker) expr(e Expr, env map[string]*types.Type, lamOK bool) {
	if e.Type() == nil {
		c.errorf(e.Pos(), "%T without a type", e)
		return
	}
	with := func(vs []*Var, body Expr) {
		saved := map[string]*types.Type{}
		for _, v := range vs {
			if t, ok := env[v.Name]; ok {
				if c.noShadow {
					c.errorf(v.P, "%s is bound where a variable of that name is in scope (capture is possible)", v.Name)
				}
				saved[v.Name] = t
			}
			env[v.Name] = v.T
		}
		c.expr(body, env, false)
		for _, v := range vs {
			delete(env, v.Name)
		}
		for n, t := range saved {
			env[n] = t
		}
	}
	switch e := e.(type) {
	case *Const:
		var want *types.Type
		switch e.Val.(type) {
		case int64:
			want = types.IntegerType
		case float64:
			want = types.FloatType
		case bool:
			want = types.BoolType
		case string:
			want = types.StringType
		}
		if !e.T.Equal(want) {
			c.errorf(e.P, "constant %v has type %s", e.Val, e.T)
		}
	case *Var:
		t, ok := env[e.Name]
		if !ok {
			c.errorf(e.P, "variable %s is not in scope", e.Name)
		} else if !t.Equal(e.T) {
			c.errorf(e.P, "variable %s has type %s, bound with %s", e.Name, e.T, t)
		}
	case *Dummy:
	case *Call:
		lams := map[int]bool{}
		if e.Prim != nil {
			for _, i := range e.Prim.Lams {
				lams[i] = true
			}
		}
		for i, a := range e.Args {
			c.expr(a, env, lams[i])
		}
		arg := ArgType(e.Args)
		switch {
		case e.Fn != nil && e.Prim != nil, e.Fn == nil && e.Prim == nil:
			c.errorf(e.P, "call must have exactly one callee")
		case e.Fn != nil:
			if !e.Fn.Arg.Equal(arg) || !e.Fn.Result.Equal(e.T) {
				c.errorf(e.P, "call of %s : %s -> %s with %s -> %s", e.Fn.FullName(), e.Fn.Arg, e.Fn.Result, arg, e.T)
			}
		default:
			res, msg := e.Prim.TypeOf(arg)
			if msg != "" {
				c.errorf(e.P, "%s", msg)
			} else if !res.Equal(e.T) {
				c.errorf(e.P, "call of %s returns %s, node says %s", e.Prim.Name, res, e.T)
			}
		}
	case *Tuple:
		for _, a := range e.Elems {
			c.expr(a, env, false)
		}
		ts := make([]*types.Type, len(e.Elems))
		for i, a := range e.Elems {
			ts[i] = a.Type()
		}
		if !types.TupleOf(ts...).Equal(e.T) {
			c.errorf(e.P, "tuple has type %s", e.T)
		}
	case *Get:
		c.expr(e.X, env, false)
		t := e.X.Type()
		if t.Kind != types.Tuple || len(t.Elems) != e.N || e.I < 1 || e.I > e.N || !t.Elems[e.I-1].Equal(e.T) {
			c.errorf(e.P, "get$%d$%d of %s cannot have type %s", e.I, e.N, t, e.T)
		}
	case *Let:
		c.expr(e.Rhs, env, false)
		t := e.Rhs.Type()
		if e.Pattern {
			if t.Kind != types.Tuple || len(t.Elems) != len(e.Vars) {
				c.errorf(e.P, "pattern of %d variables bound to %s", len(e.Vars), t)
			} else {
				for i, v := range e.Vars {
					if !v.T.Equal(t.Elems[i]) {
						c.errorf(v.P, "pattern variable %s has type %s, field has %s", v.Name, v.T, t.Elems[i])
					}
				}
			}
		} else if len(e.Vars) != 1 || !e.Vars[0].T.Equal(t) {
			c.errorf(e.P, "let binds %s to a value of type %s", e.Vars[0].Name, t)
		}
		with(e.Vars, e.Body)
	case *If:
		c.expr(e.Cond, env, false)
		c.expr(e.Then, env, false)
		c.expr(e.Else, env, false)
		if !e.Cond.Type().Equal(types.BoolType) || !e.Then.Type().Equal(e.T) || !e.Else.Type().Equal(e.T) {
			c.errorf(e.P, "if with types %s, %s, %s has type %s", e.Cond.Type(), e.Then.Type(), e.Else.Type(), e.T)
		}
	case *Assert:
		c.expr(e.Cond, env, false)
		c.expr(e.Body, env, false)
		if !e.Cond.Type().Equal(types.BoolType) {
			c.errorf(e.P, "assert condition has type %s", e.Cond.Type())
		}
	case *Lam:
		if !lamOK {
			c.errorf(e.P, "lambda outside an argument of a primitive that takes one")
		}
		with([]*Var{e.Param}, e.Body)
	default:
		panic(fmt.Sprintf("ir: unknown expression %T", e))
	}
}
