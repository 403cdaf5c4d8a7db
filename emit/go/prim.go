package goemit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Structural lists the primitives without a Go spelling in the primitive
// table that this backend generates code for itself.
var Structural = map[string]bool{
	"build": true, "sumbuild": true, "sum": true, "index": true, "size": true,
	"fold": true, "map": true, "map2": true, "constVec": true, "deltaVec": true,
	"delta": true, "Vec_init": true, "unzip": true, "buildFromSparse": true,
	"ts_add": true, "ts_scale": true, "ts_dot": true, "ts_neg": true,
	"eq": true, "ne": true, "print": true, "$trace": true, "$check": true,
	"$inline": true, "$copydown": true,
	"ts_zero": true, "$addTo": true, "$addAt": true, "$ifold": true, "$ifoldr": true, "$foldtape": true,
	"$inl": true, "$inr": true, "$isl": true, "$outl": true, "$outr": true, "$wrap": true, "$unwrap": true,
	"$shape": true, "$zerosOfShape": true, "$dup": true, "$elim": true,
}

// parts compiles the argument parts of a primitive call (lambdas left as nil).
func (g *fn) parts(e *ir.Call, sc *env) []jen.Code {
	if len(e.Args) == 1 && e.Prim.Arity != 1 && e.Args[0].Type().Kind == types.Tuple {
		return g.args(e.Args, sc, true)
	}
	lams := map[int]bool{}
	for _, i := range e.Prim.Lams {
		lams[i] = true
	}
	out := make([]jen.Code, len(e.Args))
	for i, a := range e.Args {
		switch {
		case lams[i]:
		case isDummy(a):
			out[i] = g.expr(a, sc) // a type witness: often unused, so not bound
		default:
			out[i] = g.atom(g.expr(a, sc))
		}
	}
	return out
}

func isDummy(e ir.Expr) bool {
	_, ok := e.(*ir.Dummy)
	return ok
}

func partType(e *ir.Call, i int) *types.Type {
	if len(e.Args) == 1 && e.Prim.Arity != 1 && e.Args[0].Type().Kind == types.Tuple {
		return e.Args[0].Type().Elems[i]
	}
	return e.Args[i].Type()
}

// template expands the Go spelling of a primitive from the table.
func (g *fn) template(e *ir.Call, sc *env) jen.Code {
	args := g.parts(e, sc)
	s := e.Prim.Go
	for i := len(args) - 1; i >= 0; i-- {
		a := fmt.Sprintf("%#v", args[i])
		if strings.HasPrefix(a, "-") {
			a = "(" + a + ")"
		}
		s = strings.ReplaceAll(s, "$"+strconv.Itoa(i), a)
	}
	s = strings.ReplaceAll(s, "$pos", strconv.Quote(e.P.String()))
	c := jen.Op(s)
	if !e.Prim.Pure {
		return jen.Id(g.bind("", c))
	}
	return c
}

// apply binds a lambda's parameter to arg and compiles its body.
func (g *fn) apply(lam *ir.Lam, arg jen.Code, sc *env) jen.Code {
	name := g.fresh(lam.Param.Name)
	g.stmt(jen.Var().Id(name).Add(g.e.gotype(lam.Param.T)).Op("=").Add(arg))
	g.stmt(jen.Id("_").Op("=").Id(name))
	return g.expr(lam.Body, sc.push(lam.Param.Name, name))
}

// sizes returns the sizes of an index space from a size value.
func sizes(n jen.Code, t *types.Type) []jen.Code {
	if t.Kind == types.Integer {
		return []jen.Code{n}
	}
	out := make([]jen.Code, len(t.Elems))
	for i := range out {
		out[i] = jen.Add(n).Dot("F" + strconv.Itoa(i))
	}
	return out
}

// sizesOf returns the sizes of tensor v of type t.
func sizesOf(v jen.Code, t *types.Type) []jen.Code {
	if t.Rank == 1 {
		return []jen.Code{jen.Int64().Call(jen.Len(v))}
	}
	out := make([]jen.Code, t.Rank)
	for i := range out {
		out[i] = jen.Add(v).Dot("Shape").Index(jen.Lit(i))
	}
	return out
}

// data returns the element slice of tensor v.
func data(v jen.Code, t *types.Type) *jen.Statement {
	if t.Rank == 1 {
		return jen.Add(v)
	}
	return jen.Add(v).Dot("Data")
}

// newTensor declares a tensor of type t with the given sizes.
func (g *fn) newTensor(t *types.Type, sz []jen.Code, p syntax.Pos) string {
	if t.Rank == 1 {
		return g.bind("", jen.Id("MakeVec").Types(g.e.gotype(t.Elem)).Call(pos(p), sz[0]))
	}
	return g.bind("", jen.Id("MakeTensor").Types(g.e.gotype(t.Elem)).Call(append([]jen.Code{pos(p)}, sz...)...))
}

// block runs gen with g's output redirected, and returns what it emitted.
func (g *fn) block(gen func()) []jen.Code {
	saved := g.stmts
	g.stmts = nil
	gen()
	out := g.stmts
	g.stmts = saved
	return out
}

// forLoop emits for i := init; cond; step { body }.
func (g *fn) forLoop(i string, init, cond, step jen.Code, body func()) {
	g.stmt(jen.For(jen.Id(i).Op(":=").Add(init), cond, step).Block(g.block(body)...))
}

// loopN emits a loop over an index space of sizes sz.
func (g *fn) loopN(sz []jen.Code, body func(idx, flat jen.Code)) {
	if len(sz) == 1 {
		i := g.fresh("i")
		g.forLoop(i, jen.Int64().Call(jen.Lit(0)), jen.Id(i).Op("<").Add(sz[0]), jen.Id(i).Op("++"), func() {
			body(jen.Id(i), jen.Id(i))
		})
		return
	}
	k := g.fresh("k")
	g.stmt(jen.Id(k).Op(":=").Int64().Call(jen.Lit(0)))
	idx := make([]string, len(sz))
	for d := range idx {
		idx[d] = g.fresh("i")
	}
	fields := make([]jen.Code, len(idx))
	for d, n := range idx {
		fields[d] = jen.Id("F" + strconv.Itoa(d)).Op(":").Id(n)
	}
	var nest func(d int)
	nest = func(d int) {
		if d == len(idx) {
			body(g.e.gotype(types.IndexType(len(sz))).Values(fields...), jen.Id(k))
			g.stmt(jen.Id(k).Op("++"))
			return
		}
		g.forLoop(idx[d], jen.Int64().Call(jen.Lit(0)), jen.Id(idx[d]).Op("<").Add(sz[d]), jen.Id(idx[d]).Op("++"), func() { nest(d + 1) })
	}
	nest(0)
}

// flatIndex checks an index against tensor v and returns the flat position.
func (g *fn) flatIndex(idx jen.Code, v jen.Code, t *types.Type, p syntax.Pos) jen.Code {
	sz := sizesOf(v, t)
	if t.Rank == 1 {
		g.stmt(jen.Id("CheckIndex").Call(pos(p), idx, sz[0]))
		return idx
	}
	comps := make([]jen.Code, t.Rank)
	for d := range comps {
		comps[d] = jen.Add(idx).Dot("F" + strconv.Itoa(d))
	}
	g.stmt(jen.Id("CheckIndexN").Call(pos(p), jen.Index().Int64().Values(comps...), jen.Add(v).Dot("Shape")))
	return flatOf(idx, sz)
}

func flatOf(idx jen.Code, sz []jen.Code) jen.Code {
	if len(sz) == 1 {
		return idx
	}
	var s jen.Code = jen.Add(idx).Dot("F0")
	for d := 1; d < len(sz); d++ {
		s = jen.Parens(jen.Add(s).Op("*").Add(sz[d]).Op("+").Add(idx).Dot("F" + strconv.Itoa(d)))
	}
	return s
}

// reduce sums elem over a non-empty index space, in order.
func (g *fn) reduce(t *types.Type, sz []jen.Code, p syntax.Pos, elem func(idx, flat jen.Code) jen.Code) jen.Code {
	acc := g.fresh("acc")
	switch t.Kind {
	case types.Float:
		g.stmt(jen.Id(acc).Op(":=").Qual("math", "Copysign").Call(jen.Lit(0.0), jen.Lit(-1.0)))
		g.loopN(sz, func(idx, flat jen.Code) { g.stmt(jen.Id(acc).Op("+=").Add(elem(idx, flat))) })
		return jen.Id(acc)
	case types.Integer:
		g.stmt(jen.Id(acc).Op(":=").Int64().Call(jen.Lit(0)))
		g.loopN(sz, func(idx, flat jen.Code) { g.stmt(jen.Id(acc).Op("+=").Add(elem(idx, flat))) })
		return jen.Id(acc)
	}
	g.stmt(jen.Id(acc).Op(":=").Id("NewSum").Types(g.e.gotype(t)).Call(pos(p)))
	g.loopN(sz, func(idx, flat jen.Code) { g.stmt(jen.Id(acc).Dot("Add").Call(elem(idx, flat))) })
	return jen.Id(acc).Dot("Value").Call()
}

// prim compiles a call of a primitive.
func (g *fn) prim(e *ir.Call, sc *env) jen.Code {
	p := e.Prim
	if p.Go != "" {
		return g.template(e, sc)
	}
	if p.Def != "" {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("internal: prelude function %s was not inlined", p)})
	}
	if p.LM {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("the linear-map operation %s reached the Go backend in %s", p.Name, g.f.FullName())})
	}
	parts := g.parts(e, sc)
	at := func(i int) *types.Type { return partType(e, i) }
	ps := pos(e.P)
	switch p.Name {
	case "$inline", "$copydown":
		return parts[0]
	case "size":
		t := at(0)
		if t.Rank == 1 {
			return jen.Int64().Call(jen.Len(parts[0]))
		}
		fields := make([]jen.Code, t.Rank)
		for d := range fields {
			fields[d] = jen.Id("F" + strconv.Itoa(d)).Op(":").Add(parts[0]).Dot("Shape").Index(jen.Lit(d))
		}
		return g.e.gotype(e.T).Values(fields...)
	case "index":
		t := at(1)
		flat := g.flatIndex(parts[0], parts[1], t, e.P)
		return jen.Id(g.bind("", data(parts[1], t).Index(flat)))
	case "build":
		lam := e.Args[1].(*ir.Lam)
		sz := sizes(parts[0], at(0))
		r := g.newTensor(e.T, sz, e.P)
		g.loopN(sz, func(idx, flat jen.Code) {
			x := g.apply(lam, idx, sc)
			g.stmt(data(jen.Id(r), e.T).Index(flat).Op("=").Add(x))
		})
		return jen.Id(r)
	case "sumbuild":
		lam := e.Args[1].(*ir.Lam)
		sz := sizes(parts[0], at(0))
		var conds []jen.Code
		for _, s := range sz {
			conds = append(conds, jen.Add(s).Op("<=").Lit(0))
		}
		g.stmt(jen.If(join(conds, "||")).Block(jen.Id("Fail").Call(ps, jen.Lit("sumbuild over an empty range"))))
		return g.reduce(e.T, sz, e.P, func(idx, flat jen.Code) jen.Code { return g.atom(g.apply(lam, idx, sc)) })
	case "sum":
		t := at(0)
		n := g.bind("", count(parts[0], t))
		g.stmt(jen.If(jen.Id(n).Op("<=").Lit(0)).Block(jen.Id("Fail").Call(ps, jen.Lit("sum of an empty tensor"))))
		return g.reduce(e.T, []jen.Code{jen.Id(n)}, e.P, func(idx, flat jen.Code) jen.Code { return data(parts[0], t).Index(flat) })
	case "fold":
		lam := e.Args[0].(*ir.Lam)
		acc := g.fresh("acc")
		g.stmt(jen.Var().Id(acc).Add(g.e.gotype(e.T)).Op("=").Add(parts[1]))
		i := g.fresh("i")
		g.forLoop(i, jen.Lit(0), jen.Id(i).Op("<").Len(parts[2]), jen.Id(i).Op("++"), func() {
			arg := g.e.gotype(lam.Param.T).Values(jen.Id("F0").Op(":").Id(acc), jen.Id("F1").Op(":").Add(parts[2]).Index(jen.Id(i)))
			x := g.apply(lam, arg, sc)
			g.stmt(jen.Id(acc).Op("=").Add(x))
		})
		return jen.Id(acc)
	case "map":
		lam := e.Args[0].(*ir.Lam)
		t := at(1)
		r := g.newTensor(e.T, sizesOf(parts[1], t), e.P)
		g.loopN([]jen.Code{count(parts[1], t)}, func(_, flat jen.Code) {
			x := g.apply(lam, data(parts[1], t).Index(flat), sc)
			g.stmt(data(jen.Id(r), e.T).Index(flat).Op("=").Add(x))
		})
		return jen.Id(r)
	case "map2":
		lam := e.Args[0].(*ir.Lam)
		t1, t2 := at(1), at(2)
		s1, s2 := sizesOf(parts[1], t1), sizesOf(parts[2], t2)
		for d := range s1 {
			g.stmt(jen.Id("CheckSameSize").Call(ps, s1[d], s2[d]))
		}
		r := g.newTensor(e.T, s1, e.P)
		g.loopN([]jen.Code{count(parts[1], t1)}, func(_, flat jen.Code) {
			arg := g.e.gotype(lam.Param.T).Values(jen.Id("F0").Op(":").Add(data(parts[1], t1).Index(flat)),
				jen.Id("F1").Op(":").Add(data(parts[2], t2).Index(flat)))
			x := g.apply(lam, arg, sc)
			g.stmt(data(jen.Id(r), e.T).Index(flat).Op("=").Add(x))
		})
		return jen.Id(r)
	case "constVec":
		sz := sizes(parts[0], at(0))
		r := g.newTensor(e.T, sz, e.P)
		g.loopN([]jen.Code{count(jen.Id(r), e.T)}, func(_, flat jen.Code) {
			g.stmt(data(jen.Id(r), e.T).Index(flat).Op("=").Add(parts[1]))
		})
		return jen.Id(r)
	case "deltaVec":
		sz := sizes(parts[0], at(0))
		z := g.bind("", jen.Id("ZeroLike").Call(parts[2]))
		r := g.newTensor(e.T, sz, e.P)
		g.loopN([]jen.Code{count(jen.Id(r), e.T)}, func(_, flat jen.Code) {
			g.stmt(data(jen.Id(r), e.T).Index(flat).Op("=").Id(z))
		})
		var conds []jen.Code
		idx := sizes(parts[1], at(1))
		for d, s := range sz {
			conds = append(conds, jen.Uint64().Call(idx[d]).Op("<").Uint64().Call(s))
		}
		g.stmt(jen.If(join(conds, "&&")).Block(data(jen.Id(r), e.T).Index(flatOf(parts[1], sz)).Op("=").Add(parts[2])))
		return jen.Id(r)
	case "delta":
		r := g.fresh("")
		g.stmt(jen.Var().Id(r).Add(g.e.gotype(e.T)).Op("=").Add(parts[2]))
		g.stmt(jen.If(jen.Op("!").Id("Eq").Call(parts[0], parts[1])).Block(jen.Id(r).Op("=").Id("ZeroLike").Call(parts[2])))
		return jen.Id(r)
	case "Vec_init":
		r := g.newTensor(e.T, []jen.Code{jen.Int64().Call(jen.Lit(len(parts)))}, e.P)
		for i, x := range parts {
			g.stmt(jen.Id(r).Index(jen.Lit(i)).Op("=").Add(x))
		}
		return jen.Id(r)
	case "unzip":
		t := at(0)
		var fields []jen.Code
		for k, et := range e.T.Elems {
			r := g.newTensor(et, sizesOf(parts[0], t), e.P)
			g.loopN([]jen.Code{count(parts[0], t)}, func(_, flat jen.Code) {
				g.stmt(data(jen.Id(r), et).Index(flat).Op("=").Add(data(parts[0], t)).Index(flat).Dot("F" + strconv.Itoa(k)))
			})
			fields = append(fields, jen.Id("F"+strconv.Itoa(k)).Op(":").Id(r))
		}
		return g.e.gotype(e.T).Values(fields...)
	case "buildFromSparse":
		lam := e.Args[2].(*ir.Lam)
		r := g.bind("", jen.Id("Zeros").Types(g.e.gotype(e.T)).Call(ps, parts[0]))
		pair := lam.Body.Type()
		valT := pair.Elems[1]
		g.loopN([]jen.Code{parts[1]}, func(i, _ jen.Code) {
			x := g.atom(g.apply(lam, i, sc))
			idx := g.atom(jen.Add(x).Dot("F0"))
			flat := g.flatIndex(idx, jen.Id(r), e.T, e.P)
			g.addInto(data(jen.Id(r), e.T).Index(flat), jen.Add(x).Dot("F1"), valT, e.P)
		})
		return jen.Id(r)
	case "ts_add":
		return jen.Id(g.bind("", jen.Id("TsAdd").Call(ps, parts[0], parts[1])))
	case "ts_scale":
		return jen.Id(g.bind("", jen.Id("TsScale").Call(parts[0], parts[1])))
	case "ts_dot":
		return jen.Id(g.bind("", jen.Id("TsDot").Call(ps, parts[0], parts[1])))
	case "ts_neg":
		return jen.Id(g.bind("", jen.Id("TsNeg").Call(parts[0])))
	case "ts_zero":
		dt, _ := types.Tangent(at(0))
		return jen.Id(g.bind("", jen.Id("ZeroTan").Types(g.e.gotype(dt)).Call(parts[0])))
	case "eq":
		return jen.Id(g.bind("", jen.Id("Eq").Call(parts[0], parts[1])))
	case "ne":
		return jen.Id(g.bind("", jen.Op("!").Id("Eq").Call(parts[0], parts[1])))
	case "print":
		for _, x := range parts {
			g.stmt(jen.Id("Print").Call(x))
		}
		return jen.Int64().Call(jen.Lit(len(parts) - 1))
	case "$trace":
		return jen.Id(g.bind("", jen.Id("Trace").Call(parts[0])))
	case "$check":
		return g.check(e, parts, sc)
	case "$inl":
		return g.e.gotype(e.T).Values(jen.Id("Isl").Op(":").True(), jen.Id("L").Op(":").Add(parts[0]))
	case "$inr":
		return g.e.gotype(e.T).Values(jen.Id("R").Op(":").Add(parts[1]))
	case "$isl":
		return jen.Add(parts[0]).Dot("Isl")
	case "$outl":
		return jen.Add(parts[0]).Dot("L")
	case "$outr":
		return jen.Add(parts[0]).Dot("R")
	case "$wrap":
		return jen.Id(g.bind("", jen.Op("&").Id("nt_"+types.Mangle(e.T)).Values(jen.Id("V").Op(":").Add(parts[0]))))
	case "$unwrap":
		return jen.Add(parts[0]).Dot("V")
	case "$dup":
		return g.e.gotype(e.T).Values(jen.Id("F0").Op(":").Add(parts[0]), jen.Id("F1").Op(":").Add(parts[0]))
	case "$elim":
		g.stmt(jen.Id("_").Op("=").Add(parts[0]))
		return g.e.gotype(e.T).Values()
	case "$shape":
		return jen.Id(g.bind("", jen.Id("ShapeOf").Types(g.e.gotype(e.T)).Call(parts[0])))
	case "$zerosOfShape":
		return jen.Id(g.bind("", jen.Id("Zeros").Types(g.e.gotype(e.T)).Call(ps, parts[0])))
	case "$addTo":
		r := g.fresh("")
		g.stmt(jen.Var().Id(r).Add(g.e.gotype(e.T)).Op("=").Add(parts[0]))
		g.addInto(jen.Id(r), parts[1], e.T, e.P)
		return jen.Id(r)
	case "$addAt":
		t := at(0)
		r := g.bind("", parts[0])
		flat := g.flatIndex(parts[1], jen.Id(r), t, e.P)
		g.addInto(data(jen.Id(r), t).Index(flat), parts[2], t.Elem, e.P)
		return jen.Id(r)
	case "$ifold", "$ifoldr":
		lam := e.Args[2].(*ir.Lam)
		acc := g.fresh("acc")
		g.stmt(jen.Var().Id(acc).Add(g.e.gotype(e.T)).Op("=").Add(parts[1]))
		i := g.fresh("i")
		body := func() {
			arg := g.e.gotype(lam.Param.T).Values(jen.Id("F0").Op(":").Id(acc), jen.Id("F1").Op(":").Id(i))
			x := g.apply(lam, arg, sc)
			g.stmt(jen.Id(acc).Op("=").Add(x))
		}
		if p.Name == "$ifold" {
			g.forLoop(i, jen.Int64().Call(jen.Lit(0)), jen.Id(i).Op("<").Add(parts[0]), jen.Id(i).Op("++"), body)
		} else {
			g.forLoop(i, jen.Add(parts[0]).Op("-").Lit(1), jen.Id(i).Op(">=").Lit(0), jen.Id(i).Op("--"), body)
		}
		return jen.Id(acc)
	case "$foldtape":
		lam := e.Args[0].(*ir.Lam)
		acc := g.fresh("acc")
		g.stmt(jen.Var().Id(acc).Add(g.e.gotype(at(1))).Op("=").Add(parts[1]))
		r := g.newTensor(e.T, []jen.Code{jen.Int64().Call(jen.Len(parts[2]))}, e.P)
		i := g.fresh("i")
		g.forLoop(i, jen.Lit(0), jen.Id(i).Op("<").Len(parts[2]), jen.Id(i).Op("++"), func() {
			g.stmt(jen.Id(r).Index(jen.Id(i)).Op("=").Id(acc))
			arg := g.e.gotype(lam.Param.T).Values(jen.Id("F0").Op(":").Id(acc), jen.Id("F1").Op(":").Add(parts[2]).Index(jen.Id(i)))
			x := g.apply(lam, arg, sc)
			g.stmt(jen.Id(acc).Op("=").Add(x))
		})
		return jen.Id(r)
	}
	panic(&syntax.Error{Pos: e.P, Msg: "internal: the Go backend has no code for primitive " + p.Name})
}

// addInto emits slot += x for a value of type t (in place for tensors).
func (g *fn) addInto(slot, x jen.Code, t *types.Type, p syntax.Pos) {
	switch t.Kind {
	case types.Float, types.Integer:
		g.stmt(jen.Add(slot).Op("+=").Add(x))
	default:
		g.stmt(jen.Add(slot).Op("=").Id("AddTo").Call(pos(p), slot, x))
	}
}

// count returns the number of elements of tensor v.
func count(v jen.Code, t *types.Type) jen.Code {
	if t.Rank == 1 {
		return jen.Int64().Call(jen.Len(v))
	}
	return jen.Int64().Call(jen.Len(jen.Add(v).Dot("Data")))
}

func join(cs []jen.Code, op string) jen.Code {
	s := jen.Add(cs[0])
	for _, c := range cs[1:] {
		s = s.Op(op).Add(c)
	}
	return s
}

// check compiles $check (see the C backend).
func (g *fn) check(e *ir.Call, parts []jen.Code, sc *env) jen.Code {
	fl, rev := e.Args[0].(*ir.Lam), e.Args[1].(*ir.Lam)
	ps := pos(e.P)
	x, dx, dt := parts[2], parts[3], parts[4]
	y0 := g.atom(g.apply(fl, x, sc))
	x1 := g.bind("", jen.Id("TsAdd").Call(ps, x, dx))
	y1 := g.atom(g.apply(fl, jen.Id(x1), sc))
	d1 := g.bind("", jen.Id("DotDiff").Call(ps, y1, y0, dt))
	arg := g.e.gotype(rev.Param.T).Values(jen.Id("F0").Op(":").Add(x), jen.Id("F1").Op(":").Add(dt))
	gr := g.atom(g.apply(rev, arg, sc))
	d2 := g.bind("", jen.Id("TsDot").Call(ps, gr, dx))
	r := g.fresh("")
	g.stmt(jen.Var().Id(r).Float64())
	den := jen.Qual("math", "Abs").Call(jen.Id(d1)).Op("+").Qual("math", "Abs").Call(jen.Id(d2))
	g.stmt(jen.If(den.Clone().Op("!=").Lit(0.0)).Block(
		jen.Id(r).Op("=").Qual("math", "Abs").Call(jen.Id(d1).Op("-").Id(d2)).Op("/").Parens(den)))
	return jen.Id(r)
}
