package goemit

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// A val is the Go code of a ks value. An atom (a variable or a literal)
// may be used any number of times; any other val is a pure operation on
// atoms, which cannot fail, and is used once.
type val struct {
	code jen.Code
	atom bool
	// lit marks a literal constant, which Go would fold at compile time
	// (and reject on overflow or division by zero) if it met an operator.
	lit bool
	// jumped marks the value of a tail call (ir.TailCalls), which jumps
	// back to the function's start: there is no value to use.
	jumped bool
}

func atomOf(c jen.Code) val { return val{code: c, atom: true} }
func pureOf(c jen.Code) val { return val{code: c} }

// c returns the code of v in a new statement, which may be extended.
func (v val) c() *jen.Statement { return jen.Add(v.code) }

// An env maps the ks variables in scope to Go names.
type env struct {
	ks, g string
	next  *env
}

func (v *env) push(ks, g string) *env { return &env{ks: ks, g: g, next: v} }

func (v *env) lookup(ks string) string {
	for ; v != nil; v = v.next {
		if v.ks == ks {
			return v.g
		}
	}
	panic(fmt.Sprintf("goemit: variable %s not in scope", ks))
}

// A fn generates the statements of one Go function body (or of a block
// inside it).
type fn struct {
	e     *emitter
	f     *ir.Func
	stmts []jen.Code
	// The function's calls of itself in tail position (ir.TailCalls),
	// which jump back to its start with new parameters.
	tail map[*ir.Call]bool
}

func (g *fn) stmt(c jen.Code) { g.stmts = append(g.stmts, c) }

// block runs gen with the statements it emits collected apart, and
// returns them.
func (g *fn) block(gen func()) []jen.Code {
	saved := g.stmts
	g.stmts = nil
	gen()
	out := g.stmts
	g.stmts = saved
	return out
}

// fresh returns a new Go name for a ks variable or, for "", a temporary.
func (g *fn) fresh(ks string) string {
	g.e.tmp++
	if ks == "" {
		return "t" + strconv.Itoa(g.e.tmp)
	}
	s := ir.Identifier(ks)
	if s[0] == '_' || '0' <= s[0] && s[0] <= '9' {
		s = "v" + s
	}
	return s + "_" + strconv.Itoa(g.e.tmp)
}

// declare declares a variable of type t holding v and returns its name;
// unused marks a variable that nothing reads (Go rejects those).
func (g *fn) declare(ks string, t *types.Type, v val, unused bool) string {
	name := g.fresh(ks)
	g.stmt(jen.Var().Id(name).Add(g.e.gotype(t)).Op("=").Add(v.code))
	if unused {
		g.stmt(jen.Id("_").Op("=").Id(name))
	}
	return name
}

// temp evaluates v of type t into a new variable now.
func (g *fn) temp(v val, t *types.Type) val {
	return atomOf(jen.Id(g.declare("", t, v, false)))
}

// atom returns v if it is an atom, else a variable holding it.
func (g *fn) atom(v val, t *types.Type) val {
	if v.atom {
		return v
	}
	return g.temp(v, t)
}

// operand returns v as an operand of a Go operator: an atom that is not a
// literal (so that Go does no constant arithmetic on it).
func (g *fn) operand(v val, t *types.Type) val {
	if v.atom && !v.lit {
		return v
	}
	return g.temp(v, t)
}

// field selects field i of a tuple atom: an atom itself, since the
// variables holding tuples are not assigned again while it is in use.
func field(x val, i int) val { return atomOf(x.c().Dot("F" + strconv.Itoa(i))) }

// pos returns the string literal of a source position.
func pos(p syntax.Pos) jen.Code { return jen.Lit(p.String()) }

// constant returns the Go code of a literal.
func constant(v any) val {
	switch v := v.(type) {
	case int64:
		return val{code: jen.Lit(v), atom: true, lit: true} // int64(v)
	case float64:
		switch {
		case math.IsInf(v, 1):
			return pureOf(jen.Qual("math", "Inf").Call(jen.Lit(1)))
		case math.IsInf(v, -1):
			return pureOf(jen.Qual("math", "Inf").Call(jen.Lit(-1)))
		case math.IsNaN(v):
			return pureOf(jen.Qual("math", "NaN").Call())
		case v == 0 && math.Signbit(v):
			return pureOf(jen.Qual("math", "Copysign").Call(jen.Lit(0.0), jen.Lit(-1.0)))
		}
		// %#v spells the shortest decimal that reads back as v; a
		// float64() conversion keeps an integral value a Float.
		return val{code: jen.Float64().Call(jen.Lit(v)), atom: true, lit: true}
	case bool:
		return val{code: jen.Lit(v), atom: true, lit: true}
	case string:
		return val{code: jen.Lit(v), atom: true, lit: true}
	}
	panic(fmt.Sprintf("goemit: constant %T", v))
}

// expr compiles e and returns its value.
func (g *fn) expr(e ir.Expr, sc *env) val {
	switch e := e.(type) {
	case *ir.Const:
		return constant(e.Val)
	case *ir.Var:
		return atomOf(jen.Id(sc.lookup(e.Name)))
	case *ir.Dummy:
		return pureOf(g.zero(e.T))
	case *ir.Tuple:
		elems := make([]val, len(e.Elems))
		for i, x := range e.Elems {
			elems[i] = g.atom(g.expr(x, sc), x.Type())
		}
		return pureOf(g.tupleLit(e.T, elems))
	case *ir.Get:
		x := g.atom(g.expr(e.X, sc), e.X.Type())
		return field(x, e.I-1)
	case *ir.Let:
		rhs := g.expr(e.Rhs, sc)
		if e.Pattern {
			tup := g.atom(rhs, e.Rhs.Type())
			for i, v := range e.Vars {
				name := g.declare(v.Name, v.T, field(tup, i), !ir.Occurs(v.Name, e.Body))
				sc = sc.push(v.Name, name)
			}
		} else {
			v := e.Vars[0]
			name := g.declare(v.Name, v.T, rhs, !ir.Occurs(v.Name, e.Body))
			sc = sc.push(v.Name, name)
		}
		return g.expr(e.Body, sc)
	case *ir.If:
		// Only the chosen branch runs.
		c := g.atom(g.expr(e.Cond, sc), types.BoolType)
		r := g.fresh("")
		g.stmt(jen.Var().Id(r).Add(g.e.gotype(e.T)))
		assign := func(v val) {
			if !v.jumped {
				g.stmt(jen.Id(r).Op("=").Add(v.code))
			}
		}
		then := g.block(func() { assign(g.expr(e.Then, sc)) })
		els := g.block(func() { assign(g.expr(e.Else, sc)) })
		g.stmt(jen.If(c.code).Block(then...).Else().Block(els...))
		return atomOf(jen.Id(r))
	case *ir.Assert:
		c := g.atom(g.expr(e.Cond, sc), types.BoolType)
		g.stmt(jen.If(jen.Op("!").Add(c.code)).Block(g.fail(e.P, e.Message())))
		return g.expr(e.Body, sc)
	case *ir.Call:
		if e.Prim != nil {
			return g.prim(e, sc)
		}
		return g.call(e, sc)
	case *ir.Lam:
		panic(&syntax.Error{Pos: e.P, Msg: "internal: lambda outside a primitive"})
	}
	panic(fmt.Sprintf("goemit: unknown expression %T", e))
}

// fail returns a statement stopping the program with a runtime error.
func (g *fn) fail(p syntax.Pos, msg string) jen.Code {
	return g.e.rt("Fail").Call(pos(p), jen.Lit("%s"), jen.Lit(msg))
}

// tupleLit returns a struct literal of tuple type t.
func (g *fn) tupleLit(t *types.Type, fields []val) *jen.Statement {
	kv := make([]jen.Code, len(fields))
	for i, f := range fields {
		kv[i] = jen.Id("F" + strconv.Itoa(i)).Op(":").Add(f.code)
	}
	return g.e.gotype(t).Values(kv...)
}

// args compiles the arguments of a call, left to right, as atoms: the
// fields of a single tuple argument separately when split is set.
func (g *fn) args(args []ir.Expr, sc *env, split bool) []val {
	if len(args) == 1 && split && args[0].Type().Kind == types.Tuple {
		t := args[0].Type()
		x := g.atom(g.expr(args[0], sc), t)
		if len(t.Elems) == 0 {
			g.stmt(jen.Id("_").Op("=").Add(x.code)) // evaluated for its effects
			return nil
		}
		out := make([]val, len(t.Elems))
		for i := range t.Elems {
			out[i] = field(x, i)
		}
		return out
	}
	out := make([]val, len(args))
	for i, a := range args {
		out[i] = g.atom(g.expr(a, sc), a.Type())
	}
	return out
}

// call compiles a call of a ks function.
func (g *fn) call(e *ir.Call, sc *env) val {
	if e.Fn.Kind == ir.EdefFunc {
		return g.edef(e, sc)
	}
	if g.tail[e] {
		return g.tailCall(e, sc)
	}
	args := []jen.Code{jen.Id("ctx")}
	for _, a := range g.args(e.Args, sc, true) {
		args = append(args, a.code)
	}
	call := pureOf(jen.Id(g.e.funcName(e.Fn)).Call(args...))
	if !g.e.fails.Records(g.f, e) {
		return g.temp(call, e.T)
	}
	// The call is in the chain a runtime error's message shows.
	g.stmt(jen.Id("ctx").Dot("Call").Call(jen.Lit(e.Site())))
	r := g.temp(call, e.T)
	g.stmt(jen.Id("ctx").Dot("Return").Call())
	return r
}

// tailCall compiles a call of the function itself in tail position: its
// arguments become the parameters, and control goes back to the start.
// Its value is marked jumped: nothing may follow.
func (g *fn) tailCall(e *ir.Call, sc *env) val {
	args := g.args(e.Args, sc, true)
	if len(args) > 0 {
		ps := make([]jen.Code, len(args))
		vs := make([]jen.Code, len(args))
		for i, a := range args {
			ps[i] = jen.Id("p" + strconv.Itoa(i))
			vs[i] = a.code
		}
		g.stmt(jen.List(ps...).Op("=").List(vs...))
	}
	g.stmt(jen.Goto().Id("ksTail"))
	return val{code: g.zero(e.T), jumped: true}
}

// zero returns a value of type t with no meaningful content ($dummy): the
// zeros of scalars, empty tensors of the right rank.
func (g *fn) zero(t *types.Type) *jen.Statement {
	switch t.Kind {
	case types.Integer:
		return jen.Int64().Call(jen.Lit(0))
	case types.Float:
		return jen.Float64().Call(jen.Lit(0))
	case types.Bool:
		return jen.False()
	case types.String:
		return jen.Lit("")
	case types.Tensor:
		if t.Rank == 1 {
			return g.e.gotype(t).Call(jen.Nil())
		}
		return g.e.gotype(t).Values(jen.Id("Shape").Op(":").Make(jen.Index().Int64(), jen.Lit(t.Rank)))
	case types.Tuple:
		fields := make([]val, len(t.Elems))
		for i, et := range t.Elems {
			fields[i] = pureOf(g.zero(et))
		}
		return g.tupleLit(t, fields)
	case types.Variant:
		return g.e.gotype(t).Values(jen.Id("Isl").Op(":").True(), jen.Id("L").Op(":").Add(g.zero(t.Elems[0])))
	case types.Named:
		return jen.Parens(g.e.gotype(t)).Call(jen.Nil())
	}
	panic(fmt.Sprintf("goemit: no value of type %s", t))
}
