package goemit

// Forward mode by dual numbers (ksc --ad=cps).
//
// With Options.AD == "cps" the Go backend also generates [fwd f] itself,
// from the primal definition of f, by the dual-number transformation of
// seed 001 section 2: every value is a pair of its primal value and its
// tangent, computed together in one pass, in direct style (no
// continuations are needed forwards).
//
//	(mul a b)   r := a * b; dr := b*da + a*db
//
// The tangent of a primitive is the sum over its arguments of their
// linear maps in the primitive table (ir.Prim.D) applied to the
// arguments' tangents. Each user function g gets a dual version
// dual_g(ctx, x, dx) (T, dT); a function with a hand-written [fwd g] is
// called as g and [fwd g]; build, sumbuild and fold compute the values and
// their tangents in the same loop. Values that do not depend on the
// argument have no tangent variable (their tangent is zero, made where
// needed). [fwd f](x, dx) returns the tangent of dual_f(ctx, x, dx).
import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// A tval is a value in forward mode: its primal and the Go variable of
// its tangent, "" for a zero tangent.
type tval struct {
	v  val
	dv string
	t  *types.Type
}

// tanOf returns d's tangent, making a zero one if it has none.
func (g *fn) tanOf(d *tval, p syntax.Pos) string {
	if d.dv == "" {
		dt := tangent(d.t, p)
		if dt.Contains(types.Tensor) {
			d.dv = g.use("dz", g.e.rt("ZeroTan").Types(g.e.gotype(dt)).Call(d.v.code))
		} else {
			d.dv = g.use("dz", g.zero(dt))
		}
	}
	return d.dv
}

// handFwd returns the hand-written [fwd f] of f, or nil.
func (e *emitter) handFwd(f *ir.Func) *ir.Func {
	if len(f.Name.Derivs) > 0 {
		return nil
	}
	if h := e.cps.prog.Lookup(f.Name.Derive("fwd"), f.BaseArg); h != nil && h.Kind != ir.DerivedFunc && h.Body != nil {
		return h
	}
	return nil
}

// dualName returns the name of the dual version of user function f,
// generating it later if it is new.
func (e *emitter) dualName(f *ir.Func, p syntax.Pos) string {
	if f.Body == nil || len(f.Name.Derivs) > 0 && !ir.IsCL(f) {
		cpsErr(p, "cannot differentiate a call of %s: it has no ks definition and no hand-written [fwd]", f.FullName())
	}
	if n, ok := e.cps.duals[f]; ok {
		return n
	}
	base := "dual_" + e.funcName(f)[len("ksu_"):]
	n := base
	for i := 2; e.usedNames[n]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	e.usedNames[n] = true
	e.cps.duals[f] = n
	e.cps.queue = append(e.cps.queue, versionReq{f: f, dual: true})
	return n
}

// dualFwd returns the Go function of [fwd f] for the derived function d.
func (e *emitter) dualFwd(d *ir.Func) jen.Code {
	base := baseOf(e.cps.prog, d)
	if base == nil {
		cpsErr(d.P, "%s: no function %s to differentiate", d.FullName(), d.Name.Base)
	}
	params := []jen.Code{jen.Id("ctx").Op("*").Add(e.rt("Ctx")),
		jen.Id("x").Add(e.gotype(base.Arg)), jen.Id("dx").Add(e.gotype(tangent(base.Arg, d.P)))}
	var body jen.Code
	if hand := e.handFwd(base); hand != nil {
		body = jen.Return(jen.Id(e.funcName(hand)).Call(jen.Id("ctx"), jen.Id("x"), jen.Id("dx")))
	} else {
		body = jen.List(jen.Id("_"), jen.Id("dr")).Op(":=").Id(e.dualName(base, d.P)).Call(jen.Id("ctx"), jen.Id("x"), jen.Id("dx")).
			Line().Return(jen.Id("dr"))
	}
	return jen.Comment(commentSafe(d.FullName()) + ", by dual numbers (--ad=cps)").Line().
		Func().Id(e.funcName(d)).Params(params...).Add(e.gotype(d.Result)).Block(body)
}

// dualFunc returns the dual version of user function f:
//
//	func dual_f(ctx *Ctx, x S, dx dS) (T, dT)
func (e *emitter) dualFunc(f *ir.Func) jen.Code {
	defer ir.PanicIn(f)
	g := &fn{e: e, f: f}
	var sc scope
	if len(f.Params) == 1 && f.Params[0].T.Equal(f.Arg) {
		sc = g.bindT(sc, f.Params[0], tval{v: atomOf(jen.Id("x")), dv: "dx", t: f.Arg})
	} else {
		for i, p := range f.Params {
			dv := ""
			if p.T.Contains(types.Float) {
				dv = g.use("dx", jen.Id("dx").Dot("F"+strconv.Itoa(i)))
			}
			sc = g.bindT(sc, p, tval{v: field(atomOf(jen.Id("x")), i), dv: dv, t: p.T})
		}
	}
	r := g.dual(e.cpsBody(f), sc)
	g.stmt(jen.Return(r.v.code, jen.Id(g.tanOf(&r, f.P))))
	return jen.Comment(commentSafe(f.FullName())+" on dual numbers: the value and its tangent").Line().
		Func().Id(e.cps.duals[f]).Params(
		jen.Id("ctx").Op("*").Add(e.rt("Ctx")),
		jen.Id("x").Add(e.gotype(f.Arg)), jen.Id("dx").Add(e.gotype(tangent(f.Arg, f.P))),
	).Parens(jen.List(e.gotype(f.Result), e.gotype(tangent(f.Result, f.P)))).Block(g.stmts...)
}

// bindT declares ks variable v holding d; the tangent variable is shared.
func (g *fn) bindT(sc scope, v *ir.Var, d tval) scope {
	name := g.declare(v.Name, v.T, d.v, true)
	return sc.push(v.Name, name, d.dv)
}

// setT declares a new tangent variable holding code.
func (g *fn) setT(code jen.Code) string { return g.use("d", code) }

// dual emits e and returns its value and tangent.
func (g *fn) dual(e ir.Expr, sc scope) tval {
	if !active(e, sc) {
		return tval{v: g.atom(g.expr(e, sc.p), e.Type()), t: e.Type()}
	}
	p := e.Pos()
	switch e := e.(type) {
	case *ir.Var:
		return tval{v: atomOf(jen.Id(sc.p.lookup(e.Name))), dv: sc.cell(e.Name), t: e.T}
	case *ir.Let:
		r := g.dual(e.Rhs, sc)
		inner := sc
		if e.Pattern {
			for i, v := range e.Vars {
				dv := ""
				if r.dv != "" && v.T.Contains(types.Float) {
					dv = g.setT(jen.Id(r.dv).Dot("F" + strconv.Itoa(i)))
				}
				inner = g.bindT(inner, v, tval{v: field(r.v, i), dv: dv, t: v.T})
			}
		} else {
			inner = g.bindT(inner, e.Vars[0], r)
		}
		return g.dual(e.Body, inner)
	case *ir.Tuple:
		ds := make([]tval, len(e.Elems))
		for i, x := range e.Elems {
			ds[i] = g.dual(x, sc)
		}
		vs, dvs := make([]val, len(ds)), make([]val, len(ds))
		for i := range ds {
			vs[i] = ds[i].v
			dvs[i] = atomOf(jen.Id(g.tanOf(&ds[i], p)))
		}
		r := g.temp(pureOf(g.tupleLit(e.T, vs)), e.T)
		return tval{v: r, dv: g.setT(g.tupleLit(tangent(e.T, p), dvs)), t: e.T}
	case *ir.Get:
		x := g.dual(e.X, sc)
		dv := ""
		if x.dv != "" {
			dv = g.setT(jen.Id(x.dv).Dot("F" + strconv.Itoa(e.I-1)))
		}
		return tval{v: field(x.v, e.I-1), dv: dv, t: e.T}
	case *ir.If:
		c := g.atom(g.expr(e.Cond, sc.p), types.BoolType)
		r := g.varOf("r", g.e.gotype(e.T), nil)
		dr := g.varOf("dr", g.e.gotype(tangent(e.T, p)), nil)
		branch := func(b ir.Expr) []jen.Code {
			return g.block(func() {
				m := g.dual(b, sc)
				g.stmt(jen.Id(r).Op("=").Add(m.v.code))
				g.stmt(jen.Id(dr).Op("=").Id(g.tanOf(&m, p)))
			})
		}
		then, els := branch(e.Then), branch(e.Else)
		g.stmt(jen.If(c.code).Block(then...).Else().Block(els...))
		return tval{v: atomOf(jen.Id(r)), dv: dr, t: e.T}
	case *ir.Assert:
		c := g.atom(g.expr(e.Cond, sc.p), types.BoolType)
		g.stmt(jen.If(jen.Op("!").Add(c.code)).Block(g.fail(e.P, e.Message())))
		return g.dual(e.Body, sc)
	case *ir.Call:
		if e.Prim != nil {
			return g.dualPrim(e, sc)
		}
		return g.dualCall(e, sc)
	}
	cpsErr(p, "cannot differentiate %T", e)
	return tval{}
}

// dualCall emits a call of a user function.
func (g *fn) dualCall(e *ir.Call, sc scope) tval {
	f, p := e.Fn, e.P
	a := g.dual(argExpr(e), sc)
	da := g.tanOf(&a, p)
	if hand := g.e.handFwd(f); hand != nil {
		// y = f(x); dy = [fwd f](x, dx)
		xv := g.declare("", a.t, a.v, true)
		in := sc.p.push("$cps_x", xv).push("$cps_dx", da)
		x := &ir.Var{P: p, T: a.t, Name: "$cps_x"}
		dx := &ir.Var{P: p, T: tangent(a.t, p), Name: "$cps_dx"}
		y := g.atom(g.expr(&ir.Call{P: p, T: e.T, Fn: f, Args: []ir.Expr{x}}, in), e.T)
		dy := g.expr(&ir.Call{P: p, T: hand.Result, Fn: hand, Args: []ir.Expr{x, dx}}, in)
		return tval{v: y, dv: g.setT(dy.code), t: e.T}
	}
	r, dr := g.fresh("r"), g.fresh("dr")
	g.stmt(jen.List(jen.Id(r), jen.Id(dr)).Op(":=").Id(g.e.dualName(f, p)).Call(jen.Id("ctx"), a.v.code, jen.Id(da)))
	g.stmt(jen.Id("_").Op("=").Id(r))
	g.stmt(jen.Id("_").Op("=").Id(dr))
	return tval{v: atomOf(jen.Id(r)), dv: dr, t: e.T}
}

// dualPrim emits a call of a primitive.
func (g *fn) dualPrim(e *ir.Call, sc scope) tval {
	pr, p := e.Prim, e.P
	switch pr.Name {
	case "build", "sumbuild":
		return g.dualBuild(e, sc)
	case "fold":
		return g.dualFold(e, sc)
	case "buildFromSparse":
		return g.dualBuildFromSparse(e, sc)
	case "index":
		i, v := g.dual(e.Args[0], sc), g.dual(e.Args[1], sc)
		t := v.t
		flat := g.atom(g.flatIndex(g.operand(i.v, i.t), v.v, t, p), types.IntegerType)
		y := g.temp(pureOf(data(v.v, t).Index(flat.code)), e.T)
		dv := ""
		if v.dv != "" {
			dv = g.setT(data(atomOf(jen.Id(v.dv)), t).Index(flat.code))
		}
		return tval{v: y, dv: dv, t: e.T}
	}
	if len(pr.Lams) > 0 || pr.D == nil {
		cpsErr(p, "cannot differentiate %s", pr.Name)
	}
	var ds []tval
	if splitArg(e) {
		tu := g.dual(e.Args[0], sc)
		for i, et := range tu.t.Elems {
			dv := ""
			if tu.dv != "" && et.Contains(types.Float) {
				dv = g.setT(jen.Id(tu.dv).Dot("F" + strconv.Itoa(i)))
			}
			ds = append(ds, tval{v: field(tu.v, i), dv: dv, t: et})
		}
	} else {
		for _, a := range e.Args {
			ds = append(ds, g.dual(a, sc))
		}
	}
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
	rin := in
	for i := range ds {
		rin = rin.push(fmt.Sprintf("x%d", i), in.lookup("$cps_x"+strconv.Itoa(i)))
	}
	rin = rin.push("r", rv)
	dt := tangent(e.T, p)
	sum := ""
	for i, d := range ds {
		if d.dv == "" || i >= len(pr.D) || pr.D[i] == "" {
			continue
		}
		rule := g.e.rule(pr, i, vars, &ir.Var{P: p, T: e.T, Name: "r"}, p)
		term := g.applyRule(rule, d, e.T, rin, p)
		switch {
		case sum == "":
			sum = term
		case dt.Kind == types.Float:
			sum = g.setT(jen.Id(sum).Op("+").Id(term))
		default:
			sum = g.setT(g.e.rt("TsAdd").Call(pos(p), jen.Id(sum), jen.Id(term)))
		}
	}
	return tval{v: r, dv: sum, t: e.T}
}

// applyRule applies the linear map of a derivative rule to the tangent of
// argument part d, giving a tangent of the result (of type rt).
func (g *fn) applyRule(rule ir.Expr, d tval, rt *types.Type, in *env, p syntax.Pos) string {
	c, ok := rule.(*ir.Call)
	if !ok || c.Prim == nil || !c.Prim.LM {
		cpsErr(p, "cannot use the derivative rule %s", ir.FormatExpr(rule))
	}
	dx := jen.Id(d.dv)
	drt := tangent(rt, p)
	switch c.Prim.Name {
	case "lmOne":
		return d.dv
	case "lmScale":
		s := g.operand(g.expr(c.Args[1], in), types.FloatType)
		if d.t.Kind == types.Float {
			return g.setT(s.c().Op("*").Add(dx))
		}
		return g.setT(g.e.rt("TsScale").Call(s.code, dx))
	case "lmRow": // r = <v, x>: dr = <v, dx>
		v := g.atom(g.expr(c.Args[0], in), c.Args[0].Type())
		return g.setT(g.e.rt("TsDot").Call(pos(p), v.code, dx))
	case "lmCol": // r = x v: dr = dx v
		v := g.atom(g.expr(c.Args[0], in), c.Args[0].Type())
		return g.setT(g.e.rt("ScaleTan").Types(g.e.gotype(drt)).Call(pos(p), dx, v.code))
	case "lmSum": // r = sum v: dr = sum dv
		return g.setT(g.e.rt("SumTan").Call(pos(p), data(atomOf(dx), d.t)))
	}
	cpsErr(p, "no forward application for the derivative rule %s", ir.FormatExpr(rule))
	return ""
}

// dualBuild emits build and sumbuild, with the tangents in the same loop.
func (g *fn) dualBuild(e *ir.Call, sc scope) tval {
	p := e.P
	lam, ok := e.Args[1].(*ir.Lam)
	if !ok || len(e.Args) != 2 {
		cpsErr(p, "cannot differentiate %s of a non-lambda", e.Prim.Name)
	}
	it := e.Args[0].Type()
	n := g.atom(g.expr(e.Args[0], sc.p), it)
	sz := sizes(n, it)
	dt := tangent(e.T, p)
	if e.Prim.Name == "build" {
		r := g.newTensor(e.T, sz, p)
		dr := g.newTensor(dt, sz, p)
		g.loop(sz, func(idx, flat val) {
			y := g.dual(lam.Body, g.bindT(sc, lam.Param, tval{v: idx, t: it}))
			setAt(g, r, e.T, flat, y.v)
			setAt(g, dr, dt, flat, atomOf(jen.Id(g.tanOf(&y, p))))
		})
		return tval{v: r, dv: g.use("d", dr.code), t: e.T}
	}
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
	if e.T.Kind == types.Float {
		// In lanes, as every implementation adds Floats (ksrt.SumFloats),
		// the tangents too.
		lanes, dlanes := g.fresh("lanes"), g.fresh("dlanes")
		g.stmt(jen.Id(lanes).Op(":=").Add(g.e.rt("NewLanes").Call()))
		g.stmt(jen.Id(dlanes).Op(":=").Add(g.e.rt("NewLanes").Call()))
		g.loop(sz, func(idx, flat val) {
			y := g.dual(lam.Body, g.bindT(sc, lam.Param, tval{v: idx, t: it}))
			dy := g.tanOf(&y, p)
			lane := flat.c().Op("%").Add(g.e.rt("Lanes"))
			g.stmt(jen.Id(lanes).Index(lane).Op("+=").Add(y.v.code))
			g.stmt(jen.Id(dlanes).Index(lane.Clone()).Op("+=").Id(dy))
		})
		acc := g.varOf("acc", g.e.gotype(e.T), g.e.rt("Combine").Call(jen.Op("&").Id(lanes)))
		dacc := g.varOf("dacc", g.e.gotype(dt), g.e.rt("Combine").Call(jen.Op("&").Id(dlanes)))
		return tval{v: atomOf(jen.Id(acc)), dv: dacc, t: e.T}
	}
	acc := g.varOf("acc", g.e.gotype(e.T), nil)
	dacc := g.varOf("dacc", g.e.gotype(dt), nil)
	first := g.varOf("first", jen.Bool(), jen.True())
	g.loop(sz, func(idx, _ val) {
		y := g.dual(lam.Body, g.bindT(sc, lam.Param, tval{v: idx, t: it}))
		dy := g.tanOf(&y, p)
		g.stmt(jen.If(jen.Id(first)).Block(
			jen.Id(acc).Op("=").Add(g.e.rt("Copy").Call(y.v.code)),
			jen.Id(dacc).Op("=").Add(g.e.rt("Copy").Call(jen.Id(dy))),
			jen.Id(first).Op("=").False(),
		).Else().Block(
			jen.Id(acc).Op("=").Add(g.e.rt("AddTo").Call(pos(p), jen.Id(acc), y.v.code)),
			jen.Id(dacc).Op("=").Add(g.e.rt("AddTo").Call(pos(p), jen.Id(dacc), jen.Id(dy))),
		))
	})
	return tval{v: atomOf(jen.Id(acc)), dv: dacc, t: e.T}
}

// dualFold emits fold, carrying the accumulator's tangent.
func (g *fn) dualFold(e *ir.Call, sc scope) tval {
	p := e.P
	lam, ok := e.Args[0].(*ir.Lam)
	if !ok || len(e.Args) != 3 {
		cpsErr(p, "cannot differentiate fold of a non-lambda")
	}
	a0, v := g.dual(e.Args[1], sc), g.dual(e.Args[2], sc)
	da0 := g.tanOf(&a0, p)
	accT, pt := e.T, lam.Param.T
	a := g.varOf("a", g.e.gotype(accT), a0.v.code)
	da := g.varOf("da", g.e.gotype(tangent(accT, p)), jen.Id(da0))
	g.loop(sizesOf(v.v, v.t), func(_, i val) {
		x := tval{v: g.temp(pureOf(v.v.c().Index(i.code)), v.t.Elem), t: v.t.Elem}
		if v.dv != "" {
			x.dv = g.setT(jen.Id(v.dv).Index(i.code))
		}
		t := g.temp(pureOf(g.tupleLit(pt, []val{atomOf(jen.Id(a)), x.v})), pt)
		dt := g.setT(g.tupleLit(tangent(pt, p), []val{atomOf(jen.Id(da)), atomOf(jen.Id(g.tanOf(&x, p)))}))
		y := g.dual(lam.Body, g.bindT(sc, lam.Param, tval{v: t, dv: dt, t: pt}))
		dy := g.tanOf(&y, p)
		g.stmt(jen.Id(a).Op("=").Add(y.v.code))
		g.stmt(jen.Id(da).Op("=").Id(dy))
	})
	return tval{v: atomOf(jen.Id(a)), dv: da, t: accT}
}

// dualBuildFromSparse emits buildFromSparse, adding each element's value
// and tangent at its index in the same loop.
func (g *fn) dualBuildFromSparse(e *ir.Call, sc scope) tval {
	p := e.P
	lam, it, n, r := g.sparseStart(e, sc)
	dt := tangent(e.T, p)
	dr := g.temp(pureOf(g.e.rt("ZeroTan").Types(g.e.gotype(dt)).Call(r.code)), dt)
	valT := lam.Body.Type().Elems[1]
	g.loop(sizes(n, it), func(idx, _ val) {
		y := g.dual(lam.Body, g.bindT(sc, lam.Param, tval{v: idx, t: it}))
		flat := g.flatIndex(field(y.v, 0), r, e.T, p)
		g.addInto(data(r, e.T).Index(flat.code), field(y.v, 1), valT, p)
		if y.dv != "" {
			g.addInto(data(dr, dt).Index(flat.code), field(atomOf(jen.Id(y.dv)), 1), tangent(valT, p), p)
		}
	})
	return tval{v: r, dv: g.use("d", dr.code), t: e.T}
}

// sparseStart emits the start of buildFromSparse in derived code: its
// lambda, the type and value of its count, and the zero tensor of its
// shape that the pairs add into.
func (g *fn) sparseStart(e *ir.Call, sc scope) (lam *ir.Lam, it *types.Type, n, r val) {
	lam, ok := e.Args[2].(*ir.Lam)
	if !ok {
		cpsErr(e.P, "cannot differentiate buildFromSparse of a non-lambda")
	}
	sh := g.atom(g.expr(e.Args[0], sc.p), e.Args[0].Type())
	it = e.Args[1].Type()
	n = g.atom(g.expr(e.Args[1], sc.p), it)
	r = g.temp(pureOf(g.e.rt("Zeros").Types(g.e.gotype(e.T)).Call(pos(e.P), sh.code)), e.T)
	return lam, it, n, r
}
