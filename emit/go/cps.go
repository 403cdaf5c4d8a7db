package goemit

// Reverse mode by continuations (ksc --ad=cps).
//
// With Options.AD == "cps" package derive leaves [rev f] and [sufrev f]
// without a body (derive.Options.Skip is Generates), and the Go backend
// generates them here, directly from the primal definition of f, by the
// meta-level CPS transformation of seed 001 (section 3, "reverse-mode AD
// in CPS"): shift and reset run in ksc, at
// translation time, and the generated Go has only closures and mutable
// adjoint cells. It is an independent oracle for the other strategies.
// [fwd f] is generated too, by dual numbers (dual.go).
//
// Values. During the translation every ks value is a dval: its primal
// value (a Go variable) and its adjoint cell, a Go pointer *D to a
// tangent of the value (D the Go type of the tangent type, the same types
// [rev f] returns: Float for Float, the unit tuple for Integer, Bool and
// String, element by element for tuples and tensors). A cell holds a
// tangent shaped like the value, so the cell of field i of a tuple is
// &c.Fi and the cell of element j of a vector is &(*c)[j]: selecting a
// part of a value aliases part of its cell, and adjoints meet there.
// Values that do not depend on the function's argument (constants, Integer
// arithmetic, any expression without a Float or without a free variable
// that has a cell) are computed by the ordinary backend and get no cell;
// a zero cell is made for them where one is needed.
//
// Rules. cps(e, k) emits the code of e and calls the meta-level
// continuation k with e's dval; k emits the rest of the computation. A
// rule that creates a value emits its primal code, calls k, and then emits
// the code adding its adjoint into the cells of its operands, so that code
// runs after everything that uses the value has added into its cell:
//
//	(mul a b)   r := a * b; rc := new(float64)
//	            <rest, with (r, rc)>
//	            *ac += *rc * b; *bc += *rc * a
//
// The adjoint of a primitive is read from the primitive table (ir.Prim.D):
// each argument's linear map, applied transposed (lmOne, lmScale, lmRow,
// lmCol, lmSum). Where control joins or repeats, the rest becomes a Go
// closure, a continuation of the generated code:
//
//   - (if c a b): k1 := func(r T, rc *D) { <rest> }; then each branch in
//     CPS, ending in k1(value, cell).
//   - a call of a user function g: g has a CPS version
//     cps_g(ctx, x, xc, k func(T, *D)) (each callee gets one, so recursion
//     works as it does in ks), called with the rest as k.
//   - build, sumbuild and fold: a recursive closure loop(i, ...) whose
//     iteration i runs the body in CPS with the continuation "store the
//     element (or add it, or make it the accumulator), loop(i+1), then add
//     the element's adjoint into the body's result cell"; the last
//     iteration calls the rest.
//   - a call of a function with a hand-written [rev g] (an edef, say):
//     y := g(x); <rest>; xc += [rev g](x, *yc).
//
// [rev f](x, dr) is then
//
//	xc := zero tangent shaped like x
//	cps_f(ctx, x, xc, func(y T, yc *D) { *yc += dr })
//	return *xc
//
// The primal definitions are those of the optimised program (so an
// optimisation bug shows as a disagreement), with the prelude inlined and
// map, map2, constVec, deltaVec, Vec_init and unzip written as builds
// (package lower). $check is not supported: a positioned error names it.
import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// cpsState is the emitter's state for --ad=cps.
type cpsState struct {
	prog   *ir.Program
	names  map[*ir.Func]string // CPS versions requested
	duals  map[*ir.Func]string // dual versions requested (dual.go)
	queue  []versionReq        // CPS and dual versions still to generate
	bodies map[*ir.Func]ir.Expr
}

// cpsTarget returns the derivation of f if its body is generated here
// ("rev" and "sufrev" by continuations, "fwd" by dual numbers), else "".
func cpsTarget(f *ir.Func) string {
	if f.Kind != ir.DerivedFunc || len(f.Name.Derivs) != 1 || f.Name.Wrt != nil {
		return "" // [rev f 0] is made by derive, from [rev f]'s code
	}
	switch d := f.Name.Derivs[0]; d {
	case "rev", "sufrev", "fwd":
		return d
	}
	return ""
}

// Generates reports whether the Go backend with Options.AD "cps" makes
// the body of f itself ([rev f], [sufrev f] and [fwd f] of a def), so
// that package derive need not (derive.Options.Skip).
func Generates(f *ir.Func) bool { return cpsTarget(f) != "" }

// cpsTargetFunc returns the Go function generated for cpsTarget(f).
func (e *emitter) cpsTargetFunc(f *ir.Func) jen.Code {
	if cpsTarget(f) == "fwd" {
		return e.dualFwd(f)
	}
	return e.cpsRev(f)
}

// A versionReq asks for the CPS version of a function or, with dual, its
// dual version.
type versionReq struct {
	f    *ir.Func
	dual bool
}

// pending returns the Go function of the next CPS or dual version
// requested, or nil if there is none.
func (e *emitter) pending() jen.Code {
	if len(e.cps.queue) == 0 {
		return nil
	}
	r := e.cps.queue[0]
	e.cps.queue = e.cps.queue[1:]
	if r.dual {
		return e.dualFunc(r.f)
	}
	return e.cpsFunc(r.f)
}

// cpsErr stops the translation with a positioned error.
func cpsErr(p syntax.Pos, format string, args ...any) {
	panic(&syntax.Error{Pos: p, Msg: "--ad=cps: " + fmt.Sprintf(format, args...)})
}

// A dval is a value during the translation: the primal (an atom) and the
// Go variable of its adjoint cell, or "" if it has none (a constant).
type dval struct {
	v    val
	cell string
	t    *types.Type
}

// A scope maps the ks variables in scope to their primal Go names (p, as
// the ordinary backend uses) and their cells.
type scope struct {
	p     *env
	cells *env // ks name -> cell variable, "" for none
}

func (s scope) push(ks, g, cell string) scope {
	return scope{p: s.p.push(ks, g), cells: s.cells.push(ks, cell)}
}

func (s scope) cell(ks string) string { return s.cells.lookup(ks) }

// active reports whether e needs a cell (or a tangent, in forward mode):
// a variable with a cell reaches it through subexpressions whose types
// have Floats. A value without a Float (an Integer, a Bool, an index)
// has no tangent, so it is a constant to differentiation even when it is
// computed from an active argument: (size v), or the condition of an if.
// What depends on the arguments only through such values is a constant
// too, computed by the ordinary backend: ($ranhashdoub (size v)).
func active(e ir.Expr, sc scope) bool {
	found := false
	var walk func(e ir.Expr, bound map[string]bool)
	walk = func(e ir.Expr, bound map[string]bool) {
		if found || !e.Type().Contains(types.Float) {
			return
		}
		with := func(vs ...*ir.Var) map[string]bool {
			m := make(map[string]bool, len(bound)+len(vs))
			for k := range bound {
				m[k] = true
			}
			for _, v := range vs {
				m[v.Name] = true
			}
			return m
		}
		switch e := e.(type) {
		case *ir.Var:
			if !bound[e.Name] && sc.cell(e.Name) != "" {
				found = true
			}
		case *ir.Let:
			walk(e.Rhs, bound)
			walk(e.Body, with(e.Vars...))
		case *ir.Lam:
			walk(e.Body, with(e.Param))
		case *ir.Call:
			for _, a := range e.Args {
				walk(a, bound)
			}
		case *ir.Tuple:
			for _, a := range e.Elems {
				walk(a, bound)
			}
		case *ir.Get:
			walk(e.X, bound)
		case *ir.If:
			walk(e.Cond, bound)
			walk(e.Then, bound)
			walk(e.Else, bound)
		case *ir.Assert:
			walk(e.Cond, bound)
			walk(e.Body, bound)
		}
	}
	walk(e, nil)
	return found
}

// tangent returns the tangent type of t.
func tangent(t *types.Type, p syntax.Pos) *types.Type {
	dt, ok := types.Tangent(t)
	if !ok {
		cpsErr(p, "no tangent type for %s", t)
	}
	return dt
}

// cellType returns the Go type of a cell of a value of type t: *D.
func (g *fn) cellType(t *types.Type, p syntax.Pos) *jen.Statement {
	return jen.Op("*").Add(g.e.gotype(tangent(t, p)))
}

// use declares a Go variable holding code and marks it used.
func (g *fn) use(base string, code jen.Code) string {
	name := g.fresh(base)
	g.stmt(jen.Id(name).Op(":=").Add(code))
	g.stmt(jen.Id("_").Op("=").Id(name))
	return name
}

// varOf declares a Go variable of Go type t, holding init or, if init
// is nil, t's zero value, and marks it used: what the translation
// declares before it knows whether the rest reads it (the tangent of an
// if whose value is used only through its size, say) must not be a Go
// error. Every variable of the CPS and dual versions is declared by it,
// by use, or by declare with unused set, except the continuations and
// loop closures, which are always called.
func (g *fn) varOf(base string, t jen.Code, init jen.Code) string {
	name := g.fresh(base)
	decl := jen.Var().Id(name).Add(t)
	if init != nil {
		decl = decl.Op("=").Add(init)
	}
	g.stmt(decl)
	g.stmt(jen.Id("_").Op("=").Id(name))
	return name
}

// newCell declares a zero cell for value v of type t.
func (g *fn) newCell(t *types.Type, v val, p syntax.Pos) string {
	dt := tangent(t, p)
	if dt.Contains(types.Tensor) {
		return g.use("c", g.e.rt("Cell").Types(g.e.gotype(dt)).Call(v.code))
	}
	return g.use("c", jen.New(g.e.gotype(dt)))
}

// cellOf returns d's cell, making a zero one if it has none.
func (g *fn) cellOf(d *dval, p syntax.Pos) string {
	if d.cell == "" {
		d.cell = g.newCell(d.t, d.v, p)
	}
	return d.cell
}

// accum emits *cell += x for a tangent x of a value of type t.
func (g *fn) accum(cell string, x jen.Code, t *types.Type, p syntax.Pos) {
	if !t.Contains(types.Float) {
		return // the tangent has no Float: nothing to add
	}
	if t.Kind == types.Float {
		g.stmt(jen.Op("*").Id(cell).Op("+=").Add(x))
		return
	}
	g.stmt(g.e.rt("Acc").Call(pos(p), jen.Id(cell), x))
}

// cpsName returns the name of the CPS version of user function f,
// generating it later if it is new.
func (e *emitter) cpsName(f *ir.Func) string {
	if n, ok := e.cps.names[f]; ok {
		return n
	}
	n := "cps_" + e.funcName(f)[len("ksu_"):]
	for i := 2; e.usedNames[n]; i++ {
		n = "cps_" + e.funcName(f)[len("ksu_"):] + "_" + strconv.Itoa(i)
	}
	e.usedNames[n] = true
	e.cps.names[f] = n
	e.cps.queue = append(e.cps.queue, versionReq{f: f})
	return n
}

// cpsBody returns the primal body of f prepared for the translation.
func (e *emitter) cpsBody(f *ir.Func) ir.Expr {
	if b, ok := e.cps.bodies[f]; ok {
		return b
	}
	body, err := lower.InlinePrelude(f.Body)
	if err != nil {
		cpsErr(f.P, "%v", err)
	}
	body = lower.Builds(body, e.cps.prog.Names())
	e.cps.bodies[f] = body
	return body
}

// contType returns the Go type of a continuation taking values of type t.
func (g *fn) contType(t *types.Type, p syntax.Pos) *jen.Statement {
	return jen.Func().Params(g.e.gotype(t), g.cellType(t, p))
}

// cpsRev returns the Go function of [rev f] or [sufrev f] for the derived
// function d: it calls the CPS version of f with a continuation that
// puts the cotangent into the result's cell.
func (e *emitter) cpsRev(d *ir.Func) jen.Code {
	base := baseOf(e.cps.prog, d)
	if base == nil {
		cpsErr(d.P, "%s: no function %s to differentiate", d.FullName(), d.Name.Base)
	}
	s, t := base.Arg, base.Result
	g := &fn{e: e, f: d}
	params := []jen.Code{jen.Id("ctx").Op("*").Add(e.rt("Ctx")),
		jen.Id("x").Add(e.gotype(s)), jen.Id("dr").Add(e.gotype(tangent(t, d.P)))}
	comment := jen.Comment(commentSafe(d.FullName()) + ", by continuations (--ad=cps)").Line()
	if hand := e.handRev(base); hand != nil {
		// [sufrev f] of a function with a hand-written [rev f] is that.
		return comment.Func().Id(e.funcName(d)).Params(params...).Add(e.gotype(d.Result)).Block(
			jen.Return(jen.Id(e.funcName(hand)).Call(jen.Id("ctx"), jen.Id("x"), jen.Id("dr"))))
	}
	xc := g.newCell(s, atomOf(jen.Id("x")), d.P)
	y, yc := g.fresh("y"), g.fresh("yc")
	g.stmt(jen.Id(g.cpsCallee(base, d.P)).Call(jen.Id("ctx"), jen.Id("x"), jen.Id(xc),
		jen.Func().Params(jen.Id(y).Add(e.gotype(t)), jen.Id(yc).Add(g.cellType(t, d.P))).Block(
			g.block(func() { g.accum(yc, jen.Id("dr"), t, d.P) })...)))
	g.stmt(jen.Return(jen.Op("*").Id(xc)))
	return comment.Func().Id(e.funcName(d)).Params(params...).Add(e.gotype(d.Result)).Block(g.stmts...)
}

// baseOf returns the function that derived function d derives from: the
// one the type checker resolved (a def after an edef of the same
// signature replaces it), or nil.
func baseOf(prog *ir.Program, d *ir.Func) *ir.Func {
	if d.Base != nil {
		return d.Base
	}
	return prog.Lookup(ir.Name{Base: d.Name.Base}, d.BaseArg)
}

// handRev returns the hand-written [rev f] of f, or nil.
func (e *emitter) handRev(f *ir.Func) *ir.Func {
	if len(f.Name.Derivs) > 0 {
		return nil
	}
	if h := e.cps.prog.Lookup(f.Name.Derive("rev"), f.BaseArg); h != nil && h.Kind != ir.DerivedFunc && h.Body != nil {
		return h
	}
	return nil
}

// cpsCallee returns the name of the CPS version of f, which must be a def.
func (g *fn) cpsCallee(f *ir.Func, p syntax.Pos) string {
	if f.Body == nil || len(f.Name.Derivs) > 0 && !ir.IsCL(f) {
		cpsErr(p, "cannot differentiate a call of %s: it has no ks definition and no hand-written [rev]", f.FullName())
	}
	return g.e.cpsName(f)
}

// cpsFunc returns the CPS version of user function f:
//
//	func cps_f(ctx *Ctx, x S, xc *dS, k func(T, *dT))
func (e *emitter) cpsFunc(f *ir.Func) jen.Code {
	defer ir.PanicIn(f)
	g := &fn{e: e, f: f}
	var sc scope
	if len(f.Params) == 1 && f.Params[0].T.Equal(f.Arg) {
		sc = g.bind(sc, f.Params[0], dval{v: atomOf(jen.Id("x")), cell: "xc", t: f.Arg})
	} else {
		for i, p := range f.Params {
			cell := ""
			if p.T.Contains(types.Float) {
				cell = g.use("xc", jen.Op("&").Id("xc").Dot("F"+strconv.Itoa(i)))
			}
			sc = g.bind(sc, p, dval{v: field(atomOf(jen.Id("x")), i), cell: cell, t: p.T})
		}
	}
	g.cps(e.cpsBody(f), sc, func(r dval) {
		g.stmt(jen.Id("k").Call(r.v.code, jen.Id(g.cellOf(&r, f.P))))
	})
	return jen.Comment(commentSafe(f.FullName())+" in continuation-passing style, with adjoint cells").Line().
		Func().Id(e.cpsName(f)).Params(
		jen.Id("ctx").Op("*").Add(e.rt("Ctx")),
		jen.Id("x").Add(e.gotype(f.Arg)), jen.Id("xc").Add(g.cellType(f.Arg, f.P)),
		jen.Id("k").Add(g.contType(f.Result, f.P)),
	).Block(g.stmts...)
}

// bind declares ks variable v holding d.
func (g *fn) bind(sc scope, v *ir.Var, d dval) scope {
	name := g.declare(v.Name, v.T, d.v, true)
	return sc.push(v.Name, name, d.cell)
}

// cps emits e and calls k with its value; see the file comment.
func (g *fn) cps(e ir.Expr, sc scope, k func(dval)) {
	if !active(e, sc) {
		k(dval{v: g.atom(g.expr(e, sc.p), e.Type()), t: e.Type()})
		return
	}
	p := e.Pos()
	switch e := e.(type) {
	case *ir.Var:
		k(dval{v: atomOf(jen.Id(sc.p.lookup(e.Name))), cell: sc.cell(e.Name), t: e.T})
	case *ir.Let:
		g.cps(e.Rhs, sc, func(r dval) {
			inner := sc
			if e.Pattern {
				for i, v := range e.Vars {
					cell := ""
					if r.cell != "" && v.T.Contains(types.Float) {
						cell = g.use("c", jen.Op("&").Id(r.cell).Dot("F"+strconv.Itoa(i)))
					}
					inner = g.bind(inner, v, dval{v: field(r.v, i), cell: cell, t: v.T})
				}
			} else {
				inner = g.bind(inner, e.Vars[0], r)
			}
			g.cps(e.Body, inner, k)
		})
	case *ir.Tuple:
		g.cpsList(e.Elems, sc, func(ds []dval) {
			vs := make([]val, len(ds))
			for i, d := range ds {
				vs[i] = d.v
			}
			r := g.temp(pureOf(g.tupleLit(e.T, vs)), e.T)
			rc := g.newCell(e.T, r, p)
			k(dval{v: r, cell: rc, t: e.T})
			for i, d := range ds {
				if d.cell != "" {
					g.accum(d.cell, jen.Id(rc).Dot("F"+strconv.Itoa(i)), d.t, p)
				}
			}
		})
	case *ir.Get:
		g.cps(e.X, sc, func(x dval) {
			cell := ""
			if x.cell != "" {
				cell = g.use("c", jen.Op("&").Id(x.cell).Dot("F"+strconv.Itoa(e.I-1)))
			}
			k(dval{v: field(x.v, e.I-1), cell: cell, t: e.T})
		})
	case *ir.If:
		c := g.atom(g.expr(e.Cond, sc.p), types.BoolType)
		r, rc, kn := g.fresh("r"), g.fresh("rc"), g.fresh("k")
		rest := g.block(func() { k(dval{v: atomOf(jen.Id(r)), cell: rc, t: e.T}) })
		g.stmt(jen.Id(kn).Op(":=").Func().Params(jen.Id(r).Add(g.e.gotype(e.T)), jen.Id(rc).Add(g.cellType(e.T, p))).Block(rest...))
		branch := func(b ir.Expr) []jen.Code {
			return g.block(func() {
				g.cps(b, sc, func(m dval) { g.stmt(jen.Id(kn).Call(m.v.code, jen.Id(g.cellOf(&m, p)))) })
			})
		}
		then, els := branch(e.Then), branch(e.Else)
		g.stmt(jen.If(c.code).Block(then...).Else().Block(els...))
	case *ir.Assert:
		c := g.atom(g.expr(e.Cond, sc.p), types.BoolType)
		g.stmt(jen.If(jen.Op("!").Add(c.code)).Block(g.fail(e.P, e.Message())))
		g.cps(e.Body, sc, k)
	case *ir.Call:
		if e.Prim != nil {
			g.cpsPrim(e, sc, k)
		} else {
			g.cpsCall(e, sc, k)
		}
	default:
		cpsErr(p, "cannot differentiate %T", e)
	}
}

// cpsList emits es left to right and calls k with their values.
func (g *fn) cpsList(es []ir.Expr, sc scope, k func([]dval)) {
	var out []dval
	var next func(i int)
	next = func(i int) {
		if i == len(es) {
			k(out)
			return
		}
		g.cps(es[i], sc, func(d dval) {
			out = append(out, d)
			next(i + 1)
		})
	}
	next(0)
}

// argExpr returns the argument of a call: its only argument or the tuple
// of its arguments.
func argExpr(e *ir.Call) ir.Expr {
	if len(e.Args) == 1 {
		return e.Args[0]
	}
	return ir.MkTuple(e.P, e.Args...)
}

// cpsCall emits a call of a user function.
func (g *fn) cpsCall(e *ir.Call, sc scope, k func(dval)) {
	f := e.Fn
	p := e.P
	hand := g.e.handRev(f)
	if hand == nil {
		name := g.cpsCallee(f, p)
		g.cps(argExpr(e), sc, func(a dval) {
			r, rc := g.fresh("r"), g.fresh("rc")
			rest := g.block(func() { k(dval{v: atomOf(jen.Id(r)), cell: rc, t: e.T}) })
			g.stmt(jen.Id(name).Call(jen.Id("ctx"), a.v.code, jen.Id(g.cellOf(&a, p)),
				jen.Func().Params(jen.Id(r).Add(g.e.gotype(e.T)), jen.Id(rc).Add(g.cellType(e.T, p))).Block(rest...)))
		})
		return
	}
	// A hand-written [rev f]: y = f(x); rest; xc += [rev f](x, *yc).
	g.cps(argExpr(e), sc, func(a dval) {
		xv := g.declare("", a.t, a.v, true)
		in := sc.p.push("$cps_x", xv)
		x := &ir.Var{P: p, T: a.t, Name: "$cps_x"}
		y := g.atom(g.expr(&ir.Call{P: p, T: e.T, Fn: f, Args: []ir.Expr{x}}, in), e.T)
		yc := g.newCell(e.T, y, p)
		k(dval{v: y, cell: yc, t: e.T})
		if a.cell == "" {
			return
		}
		dy := g.use("dy", jen.Op("*").Id(yc))
		in = in.push("$cps_dy", dy)
		dyv := &ir.Var{P: p, T: tangent(e.T, p), Name: "$cps_dy"}
		dx := g.expr(&ir.Call{P: p, T: hand.Result, Fn: hand, Args: []ir.Expr{x, dyv}}, in)
		g.accum(a.cell, dx.code, a.t, p)
	})
}

// cpsPrim emits a call of a primitive.
func (g *fn) cpsPrim(e *ir.Call, sc scope, k func(dval)) {
	pr := e.Prim
	p := e.P
	switch pr.Name {
	case "build", "sumbuild":
		g.cpsBuild(e, sc, k)
		return
	case "fold":
		g.cpsFold(e, sc, k)
		return
	case "buildFromSparse":
		g.cpsBuildFromSparse(e, sc, k)
		return
	case "index":
		g.cpsList(e.Args, sc, func(ds []dval) {
			t := ds[1].t
			idx := g.operand(ds[0].v, ds[0].t)
			flat := g.atom(g.flatIndex(idx, ds[1].v, t, p), types.IntegerType)
			y := g.temp(pureOf(data(ds[1].v, t).Index(flat.code)), e.T)
			cell := ""
			if ds[1].cell != "" {
				cell = g.use("c", jen.Op("&").Add(data(atomOf(jen.Parens(jen.Op("*").Id(ds[1].cell))), t).Index(flat.code)))
			}
			k(dval{v: y, cell: cell, t: e.T})
		})
		return
	}
	if len(pr.Lams) > 0 || pr.D == nil {
		cpsErr(p, "cannot differentiate %s", pr.Name)
	}
	withParts := func(k func([]dval)) {
		if splitArg(e) {
			g.cps(e.Args[0], sc, func(t dval) {
				ds := make([]dval, len(t.t.Elems))
				for i, et := range t.t.Elems {
					cell := ""
					if t.cell != "" && et.Contains(types.Float) {
						cell = g.use("c", jen.Op("&").Id(t.cell).Dot("F"+strconv.Itoa(i)))
					}
					ds[i] = dval{v: field(t.v, i), cell: cell, t: et}
				}
				k(ds)
			})
			return
		}
		g.cpsList(e.Args, sc, k)
	}
	withParts(func(ds []dval) {
		// The primal, by the ordinary backend, from variables x0, x1, ...
		in := sc.p
		vars := make([]*ir.Var, len(ds))
		args := make([]ir.Expr, len(ds))
		for i, d := range ds {
			name := "$cps_x" + strconv.Itoa(i)
			in = in.push(name, g.declare("", d.t, d.v, true))
			vars[i] = &ir.Var{P: p, T: d.t, Name: fmt.Sprintf("x%d", i)}
			args[i] = &ir.Var{P: p, T: d.t, Name: name}
		}
		rv := g.declare("", e.T, g.expr(&ir.Call{P: p, T: e.T, Prim: pr, Args: args}, in), true)
		r := atomOf(jen.Id(rv))
		rc := g.newCell(e.T, r, p)
		k(dval{v: r, cell: rc, t: e.T})
		// The adjoints, by the derivative rules of the table.
		rin := in
		for i := range ds {
			rin = rin.push(fmt.Sprintf("x%d", i), in.lookup("$cps_x"+strconv.Itoa(i)))
		}
		rin = rin.push("r", rv)
		for i, d := range ds {
			if d.cell == "" || i >= len(pr.D) || pr.D[i] == "" {
				continue
			}
			rule := g.e.rule(pr, i, vars, &ir.Var{P: p, T: e.T, Name: "r"}, p)
			g.transpose(rule, d, rc, e.T, rin, p)
		}
	})
}

// rule returns derivative rule i of pr (the linear map from argument part
// i's tangent to the result's, a ks expression over x0, x1, ... and r),
// type-checked at the given types.
func (e *emitter) rule(pr *ir.Prim, i int, vars []*ir.Var, r *ir.Var, p syntax.Pos) ir.Expr {
	x, err := typecheck.Rule(pr, i, append(append([]*ir.Var{}, vars...), r))
	if err != nil {
		cpsErr(p, "the derivative rule %q of %s does not check: %v", pr.D[i], pr, err)
	}
	return x
}

// transpose emits the adjoint of one argument part d of a primitive: the
// linear map rule applied transposed to the result's cotangent *rc, added
// into d's cell.
func (g *fn) transpose(rule ir.Expr, d dval, rc string, rt *types.Type, in *env, p syntax.Pos) {
	c, ok := rule.(*ir.Call)
	if !ok || c.Prim == nil || !c.Prim.LM {
		cpsErr(p, "cannot use the derivative rule %s", ir.FormatExpr(rule))
	}
	dr := jen.Op("*").Id(rc)
	switch c.Prim.Name {
	case "lmOne":
		g.accum(d.cell, dr, d.t, p)
	case "lmScale":
		s := g.operand(g.expr(c.Args[1], in), types.FloatType)
		if d.t.Kind == types.Float {
			g.accum(d.cell, s.c().Op("*").Add(dr), d.t, p)
		} else {
			g.stmt(g.e.rt("AccScaled").Call(pos(p), jen.Id(d.cell), s.code, dr))
		}
	case "lmRow": // r = <v, x>: xc += r̄ v
		v := g.atom(g.expr(c.Args[0], in), c.Args[0].Type())
		g.stmt(g.e.rt("AccScaled").Call(pos(p), jen.Id(d.cell), dr, v.code))
	case "lmCol": // r = x v: xc += <v, r̄>
		v := g.atom(g.expr(c.Args[0], in), c.Args[0].Type())
		g.accum(d.cell, g.e.rt("TsDot").Call(pos(p), v.code, dr), d.t, p)
	case "lmSum": // r = sum v: every element's cell += r̄
		g.stmt(g.e.rt("AccEach").Call(pos(p), data(atomOf(jen.Parens(jen.Op("*").Id(d.cell))), d.t), dr))
	default:
		cpsErr(p, "no transposition for the derivative rule %s", ir.FormatExpr(rule))
	}
}

// indexOf returns the index of the given type (Integer or a tuple of
// Integers) at flat position i of an index space of sizes sz.
func (g *fn) indexOf(i val, sz []val, it *types.Type) val {
	if len(sz) == 1 {
		return i
	}
	comps := make([]val, len(sz))
	rest := i.c()
	for d := len(sz) - 1; d >= 0; d-- {
		if d == 0 {
			comps[d] = g.temp(pureOf(rest), types.IntegerType)
			break
		}
		comps[d] = g.temp(pureOf(jen.Add(rest).Op("%").Add(sz[d].code)), types.IntegerType)
		rest = jen.Parens(jen.Add(rest).Op("/").Add(sz[d].code))
	}
	return g.temp(pureOf(g.tupleLit(it, comps)), it)
}

// cpsBuild emits build and sumbuild as a recursive closure over the flat
// index space (cpsIndexLoop).
func (g *fn) cpsBuild(e *ir.Call, sc scope, k func(dval)) {
	p := e.P
	lam, ok := e.Args[1].(*ir.Lam)
	if !ok || len(e.Args) != 2 {
		cpsErr(p, "cannot differentiate %s of a non-lambda", e.Prim.Name)
	}
	it := e.Args[0].Type()
	n := g.atom(g.expr(e.Args[0], sc.p), it)
	sz := sizes(n, it)
	isSum := e.Prim.Name == "sumbuild"
	elemT := lam.Body.Type()
	var r val
	lanes := "" // the partial sums of a sum of Floats
	if isSum {
		var empty *jen.Statement
		for _, s := range sz {
			c := s.c().Op("<=").Lit(0)
			if empty == nil {
				empty = c
			} else {
				empty = empty.Op("||").Add(c)
			}
		}
		g.stmt(jen.If(empty).Block(g.fail(p, "sumbuild over an empty range")))
		acc := g.varOf("acc", g.e.gotype(e.T), nil)
		if e.T.Kind == types.Float {
			// In lanes, as every implementation adds Floats
			// (ksrt.SumFloats); acc is their sum once all are added.
			lanes = g.fresh("lanes")
			g.stmt(jen.Id(lanes).Op(":=").Add(g.e.rt("NewLanes").Call()))
		}
		r = atomOf(jen.Id(acc))
	} else {
		r = g.newTensor(e.T, sz, p)
	}
	rc := g.varOf("rc", g.cellType(e.T, p), nil)
	g.cpsIndexLoop(sz, it, lam, sc, func() {
		if lanes != "" {
			g.stmt(r.c().Op("=").Add(g.e.rt("Combine").Call(jen.Op("&").Id(lanes))))
		}
		z := tangent(e.T, p)
		if z.Contains(types.Tensor) {
			g.stmt(jen.Id(rc).Op("=").Add(g.e.rt("Cell").Types(g.e.gotype(z)).Call(r.code)))
		} else {
			g.stmt(jen.Id(rc).Op("=").New(g.e.gotype(z)))
		}
		k(dval{v: r, cell: rc, t: e.T})
	}, func(y dval, i string, next func()) {
		var slot *jen.Statement
		if isSum {
			switch e.T.Kind {
			case types.Float:
				g.stmt(jen.Id(lanes).Index(jen.Id(i).Op("%").Add(g.e.rt("Lanes"))).Op("+=").Add(y.v.code))
			case types.Integer:
				g.stmt(r.c().Op("+=").Add(y.v.code))
			default:
				g.stmt(jen.If(jen.Id(i).Op("==").Lit(0)).Block(
					r.c().Op("=").Add(g.e.rt("Copy").Call(y.v.code)),
				).Else().Block(
					r.c().Op("=").Add(g.e.rt("AddTo").Call(pos(p), r.code, y.v.code)),
				))
			}
			slot = jen.Op("*").Id(rc)
		} else {
			setAt(g, r, e.T, atomOf(jen.Id(i)), y.v)
			slot = data(atomOf(jen.Parens(jen.Op("*").Id(rc))), e.T).Index(jen.Id(i))
		}
		next()
		if y.cell != "" {
			g.accum(y.cell, slot, elemT, p)
		}
	})
}

// cpsIndexLoop emits a recursive closure loop(i) over the flat index
// space of sizes sz (of index type it): iteration i binds lam's parameter
// to the index and calls each with the body's value, which calls next to
// run the rest of the loop (what each does after next runs on the way
// back, in reverse order); after the last iteration, last runs the loop's
// continuation.
func (g *fn) cpsIndexLoop(sz []val, it *types.Type, lam *ir.Lam, sc scope, last func(), each func(y dval, i string, next func())) {
	total := sz[0]
	for _, s := range sz[1:] {
		total = g.temp(pureOf(total.c().Op("*").Add(s.code)), types.IntegerType)
	}
	loop, i := g.fresh("loop"), g.fresh("i")
	g.stmt(jen.Var().Id(loop).Func().Params(jen.Int64()))
	body := g.block(func() {
		end := g.block(func() {
			last()
			g.stmt(jen.Return())
		})
		g.stmt(jen.If(jen.Id(i).Op("==").Add(total.code)).Block(end...))
		idx := g.indexOf(atomOf(jen.Id(i)), sz, it)
		inner := g.bind(sc, lam.Param, dval{v: idx, t: it})
		g.cps(lam.Body, inner, func(y dval) {
			each(y, i, func() { g.stmt(jen.Id(loop).Call(jen.Id(i).Op("+").Lit(1))) })
		})
	})
	g.stmt(jen.Id(loop).Op("=").Func().Params(jen.Id(i).Int64()).Block(body...))
	g.stmt(jen.Id(loop).Call(jen.Lit(0)))
}

// cpsFold emits fold as a recursive closure loop(i, acc, acc's cell).
func (g *fn) cpsFold(e *ir.Call, sc scope, k func(dval)) {
	p := e.P
	lam, ok := e.Args[0].(*ir.Lam)
	if !ok || len(e.Args) != 3 {
		cpsErr(p, "cannot differentiate fold of a non-lambda")
	}
	accT := e.T
	g.cpsList(e.Args[1:], sc, func(ds []dval) {
		a0, v := ds[0], ds[1]
		vt := v.t
		loop, i, a, ac := g.fresh("loop"), g.fresh("i"), g.fresh("a"), g.fresh("ac")
		g.stmt(jen.Var().Id(loop).Func().Params(jen.Int64(), g.e.gotype(accT), g.cellType(accT, p)))
		body := g.block(func() {
			last := g.block(func() {
				k(dval{v: atomOf(jen.Id(a)), cell: ac, t: accT})
				g.stmt(jen.Return())
			})
			g.stmt(jen.If(jen.Id(i).Op("==").Int64().Call(jen.Len(v.v.code))).Block(last...))
			x := g.temp(pureOf(v.v.c().Index(jen.Id(i))), vt.Elem)
			xc := ""
			if v.cell != "" {
				xc = g.use("c", jen.Op("&").Parens(jen.Op("*").Id(v.cell)).Index(jen.Id(i)))
			}
			pt := lam.Param.T
			t := g.temp(pureOf(g.tupleLit(pt, []val{atomOf(jen.Id(a)), x})), pt)
			tc := g.newCell(pt, t, p)
			inner := g.bind(sc, lam.Param, dval{v: t, cell: tc, t: pt})
			g.cps(lam.Body, inner, func(y dval) {
				g.stmt(jen.Id(loop).Call(jen.Id(i).Op("+").Lit(1), y.v.code, jen.Id(g.cellOf(&y, p))))
			})
			g.accum(ac, jen.Id(tc).Dot("F0"), accT, p)
			if xc != "" {
				g.accum(xc, jen.Id(tc).Dot("F1"), vt.Elem, p)
			}
		})
		g.stmt(jen.Id(loop).Op("=").Func().Params(jen.Id(i).Int64(), jen.Id(a).Add(g.e.gotype(accT)), jen.Id(ac).Add(g.cellType(accT, p))).Block(body...))
		g.stmt(jen.Id(loop).Call(jen.Lit(0), a0.v.code, jen.Id(g.cellOf(&a0, p))))
	})
}

// cpsBuildFromSparse emits buildFromSparse as a recursive closure over the
// flat index space of its count: each iteration adds its element at its
// index, calls the next, and on the way back adds the result's adjoint at
// that index into the element's cell.
func (g *fn) cpsBuildFromSparse(e *ir.Call, sc scope, k func(dval)) {
	p := e.P
	lam, it, n, r := g.sparseStart(e, sc)
	valT := lam.Body.Type().Elems[1]
	rc := g.newCell(e.T, r, p)
	g.cpsIndexLoop(sizes(n, it), it, lam, sc, func() {
		k(dval{v: r, cell: rc, t: e.T})
	}, func(y dval, _ string, next func()) {
		flat := g.flatIndex(field(y.v, 0), r, e.T, p)
		g.addInto(data(r, e.T).Index(flat.code), field(y.v, 1), valT, p)
		next()
		if y.cell != "" && valT.Contains(types.Float) {
			xc := g.use("c", jen.Op("&").Id(y.cell).Dot("F1"))
			g.accum(xc, data(atomOf(jen.Parens(jen.Op("*").Id(rc))), e.T).Index(flat.code), valT, p)
		}
	})
}
