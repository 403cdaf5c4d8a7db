package goemit

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// splitArg reports whether a primitive call's single tuple argument is
// passed as its fields (the parts).
func splitArg(e *ir.Call) bool {
	return len(e.Args) == 1 && e.Prim.Arity != 1 && e.Args[0].Type().Kind == types.Tuple
}

// parts compiles the argument parts of a primitive call, left to right,
// as atoms that are not literals (Go would check a constant index or
// conversion at compile time, even in code that never runs); lambdas are
// left (as zero vals) for the caller. A $dummy argument, often only a
// type witness, stays a zero value (marked literal, see template).
func (g *fn) parts(e *ir.Call, sc *env) []val {
	if splitArg(e) {
		out := g.args(e.Args, sc, true)
		for i := range out {
			out[i] = g.operand(out[i], partType(e, i))
		}
		return out
	}
	lams := map[int]bool{}
	for _, i := range e.Prim.Lams {
		lams[i] = true
	}
	out := make([]val, len(e.Args))
	for i, a := range e.Args {
		switch {
		case lams[i]:
		case isDummy(a):
			out[i] = val{code: g.expr(a, sc).code, atom: true, lit: true}
		default:
			out[i] = g.operand(g.expr(a, sc), a.Type())
		}
	}
	return out
}

func isDummy(e ir.Expr) bool {
	_, ok := e.(*ir.Dummy)
	return ok
}

// discard emits the use of a part that the primitive does not need, so
// that Go sees its variable used.
func (g *fn) discard(v val) {
	if v.atom && !v.lit {
		g.stmt(jen.Id("_").Op("=").Add(v.code))
	}
}

// partType returns the type of argument part i of a primitive call.
func partType(e *ir.Call, i int) *types.Type {
	if splitArg(e) {
		return e.Args[0].Type().Elems[i]
	}
	return e.Args[i].Type()
}

// template compiles a call of a primitive spelled in the table.
func (g *fn) template(e *ir.Call, sc *env) val {
	args := g.parts(e, sc)
	for i := range args {
		args[i] = g.operand(args[i], partType(e, i)) // a $dummy literal
	}
	v := pureOf(g.e.expand(g.e.template(e.Prim), args, e.P.String()))
	if !e.Prim.Pure {
		return g.temp(v, e.T)
	}
	return v
}

// apply emits a lambda's body with its parameter bound to arg and returns
// the body's value.
func (g *fn) apply(lam *ir.Lam, arg val, sc *env) val {
	name := g.declare(lam.Param.Name, lam.Param.T, arg, !ir.Occurs(lam.Param.Name, lam.Body))
	return g.expr(lam.Body, sc.push(lam.Param.Name, name))
}

// sizes returns the sizes of an index space from a size value (an
// Integer, or a tuple of Integers), as atoms.
func sizes(n val, t *types.Type) []val {
	if t.Kind == types.Integer {
		return []val{n}
	}
	out := make([]val, len(t.Elems))
	for i := range out {
		out[i] = field(n, i)
	}
	return out
}

// sizesOf returns the sizes of tensor v of type t.
func sizesOf(v val, t *types.Type) []val {
	if t.Rank == 1 {
		return []val{atomOf(jen.Int64().Call(jen.Len(v.code)))}
	}
	out := make([]val, t.Rank)
	for i := range out {
		out[i] = atomOf(v.c().Dot("Shape").Index(jen.Lit(i)))
	}
	return out
}

// count returns the number of elements of tensor v of type t.
func count(v val, t *types.Type) val {
	return atomOf(jen.Int64().Call(jen.Len(data(v, t))))
}

// data returns the element slice of tensor v of type t.
func data(v val, t *types.Type) *jen.Statement {
	if t.Rank == 1 {
		return v.c()
	}
	return v.c().Dot("Data")
}

// newTensor allocates a tensor of type t with the given sizes.
func (g *fn) newTensor(t *types.Type, sz []val, p syntax.Pos) val {
	if t.Rank == 1 {
		return g.temp(pureOf(g.e.rt("MakeVec").Types(g.e.gotype(t.Elem)).Call(pos(p), sz[0].code)), t)
	}
	args := []jen.Code{pos(p)}
	for _, s := range sz {
		args = append(args, s.code)
	}
	return g.temp(pureOf(g.e.rt("MakeTensor").Types(g.e.gotype(t.Elem)).Call(args...)), t)
}

// loop emits a loop over the index space of the given sizes, calling body
// inside it with the index (of the index type) and the flat position.
func (g *fn) loop(sz []val, body func(idx, flat val)) {
	if len(sz) == 1 {
		i := g.fresh("i")
		g.stmt(jen.For(jen.Id(i).Op(":=").Int64().Call(jen.Lit(0)), jen.Id(i).Op("<").Add(sz[0].code), jen.Id(i).Op("++")).Block(
			g.block(func() { body(atomOf(jen.Id(i)), atomOf(jen.Id(i))) })...))
		return
	}
	k := g.fresh("k")
	g.stmt(jen.Id(k).Op(":=").Int64().Call(jen.Lit(0)))
	g.stmt(jen.Id("_").Op("=").Id(k)) // the body may not need the flat position
	idx := make([]val, len(sz))
	names := make([]string, len(sz))
	for d := range idx {
		names[d] = g.fresh("i")
		idx[d] = atomOf(jen.Id(names[d]))
	}
	it := types.IndexType(len(sz))
	var nest func(d int) []jen.Code
	nest = func(d int) []jen.Code {
		return g.block(func() {
			if d == len(sz) {
				tup := g.temp(pureOf(g.tupleLit(it, idx)), it)
				body(tup, atomOf(jen.Id(k)))
				g.stmt(jen.Id(k).Op("++"))
				return
			}
			i := names[d]
			g.stmt(jen.For(jen.Id(i).Op(":=").Int64().Call(jen.Lit(0)), jen.Id(i).Op("<").Add(sz[d].code), jen.Id(i).Op("++")).Block(nest(d + 1)...))
		})
	}
	g.stmts = append(g.stmts, nest(0)...)
}

// flatIndex checks index idx (of the tensor's index type) against tensor
// v of type t and returns the flat position.
func (g *fn) flatIndex(idx, v val, t *types.Type, p syntax.Pos) val {
	sz := sizesOf(v, t)
	if t.Rank == 1 {
		g.stmt(g.e.rt("CheckIndex").Call(pos(p), idx.code, sz[0].code))
		return idx
	}
	comps := sizes(idx, types.IndexType(t.Rank))
	cs := make([]jen.Code, len(comps))
	for d, c := range comps {
		cs[d] = c.code
	}
	g.stmt(g.e.rt("CheckIndexN").Call(pos(p), jen.Index().Int64().Values(cs...), v.c().Dot("Shape")))
	return flatOf(idx, sz, t.Rank)
}

// flatOf returns the row-major flat position of index idx in a tensor of
// the given sizes.
func flatOf(idx val, sz []val, rank int) val {
	if rank == 1 {
		return idx
	}
	s := field(idx, 0).c()
	for d := 1; d < rank; d++ {
		s = jen.Parens(s.Op("*").Add(sz[d].code).Op("+").Add(field(idx, d).code))
	}
	return pureOf(s)
}

// reduce sums the values elem(idx, flat) over a non-empty index space, in
// order (Floats in lanes, see ksrt.SumFloats), and returns the sum.
func (g *fn) reduce(t *types.Type, sz []val, p syntax.Pos, elem func(idx, flat val) val) val {
	acc := g.fresh("acc")
	switch t.Kind {
	case types.Float:
		// In lanes, as every implementation adds Floats (ksrt.SumFloats).
		lanes := g.fresh("lanes")
		g.stmt(jen.Id(lanes).Op(":=").Add(g.e.rt("NewLanes").Call()))
		g.loop(sz, func(idx, flat val) {
			g.stmt(jen.Id(lanes).Index(flat.c().Op("%").Add(g.e.rt("Lanes"))).Op("+=").Add(elem(idx, flat).code))
		})
		return g.temp(pureOf(g.e.rt("Combine").Call(jen.Op("&").Id(lanes))), t)
	case types.Integer:
		g.stmt(jen.Id(acc).Op(":=").Int64().Call(jen.Lit(0)))
		g.loop(sz, func(idx, flat val) { g.stmt(jen.Id(acc).Op("+=").Add(elem(idx, flat).code)) })
	default:
		// The first value copied, the others added into it in place.
		first := g.fresh("first")
		g.stmt(jen.Var().Id(acc).Add(g.e.gotype(t)))
		g.stmt(jen.Id(first).Op(":=").True())
		g.loop(sz, func(idx, flat val) {
			x := g.atom(elem(idx, flat), t)
			g.stmt(jen.If(jen.Id(first)).Block(
				jen.Id(acc).Op("=").Add(g.e.rt("Copy").Call(x.code)),
				jen.Id(first).Op("=").False(),
			).Else().Block(
				jen.Id(acc).Op("=").Add(g.e.rt("AddTo").Call(pos(p), jen.Id(acc), x.code)),
			))
		})
	}
	return atomOf(jen.Id(acc))
}

// addInto emits slot += x for a value of type t, in place.
func (g *fn) addInto(slot *jen.Statement, x val, t *types.Type, p syntax.Pos) {
	switch t.Kind {
	case types.Float, types.Integer:
		g.stmt(slot.Clone().Op("+=").Add(x.code))
	default:
		g.stmt(slot.Clone().Op("=").Add(g.e.rt("AddTo").Call(pos(p), slot.Clone(), x.code)))
	}
}

// setAt emits tensor r's element at flat = x.
func setAt(g *fn, r val, t *types.Type, flat val, x val) {
	g.stmt(data(r, t).Index(flat.code).Op("=").Add(x.code))
}

// prim compiles a call of a primitive.
func (g *fn) prim(e *ir.Call, sc *env) val {
	p := e.Prim
	if p.Go != "" {
		return g.template(e, sc)
	}
	if p.Def != "" {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("internal: prelude function %s was not inlined", p)})
	}
	if p.LM {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("internal: the linear-map operation %s reached the Go backend in %s", p.Name, g.f.FullName())})
	}
	c := &primCall{e: e, parts: g.parts(e, sc), sc: sc}
	if p.Identity {
		return c.parts[0]
	}
	if code := structural[p.Name]; code != nil {
		return code(g, c)
	}
	panic(&syntax.Error{Pos: e.P, Msg: "internal: the Go backend has no code for primitive " + p.Name})
}

// A primCall is a call of a primitive the table gives no Go spelling, as
// this backend compiles it: the call, its argument parts compiled in
// order (lambdas stay IR) and its scope.
type primCall struct {
	e     *ir.Call
	parts []val
	sc    *env
}

// at returns the type of argument part i.
func (c *primCall) at(i int) *types.Type { return partType(c.e, i) }

// structural is this backend's code for each primitive the table gives
// no Go spelling (and no ks definition): a row of the primitive table
// dispatches here by its name. TestPrimTable checks that every such row
// has its entry.
var structural map[string]func(*fn, *primCall) val

func init() {
	structural = map[string]func(*fn, *primCall) val{
		"size":            (*fn).primSize,
		"index":           (*fn).primIndex,
		"build":           (*fn).primBuild,
		"sumbuild":        (*fn).primSumbuild,
		"sum":             (*fn).primSum,
		"fold":            (*fn).primFold,
		"map":             (*fn).primMap,
		"map2":            (*fn).primMap2,
		"constVec":        (*fn).primConstVec,
		"deltaVec":        (*fn).primDeltaVec,
		"delta":           (*fn).primDelta,
		"Vec_init":        (*fn).primVecInit,
		"unzip":           (*fn).primUnzip,
		"buildFromSparse": (*fn).primBuildFromSparse,
		"ts_add":          (*fn).primTsAdd,
		"ts_scale":        (*fn).primTsScale,
		"ts_dot":          (*fn).primTsDot,
		"ts_neg":          (*fn).primTsNeg,
		"ts_zero":         (*fn).primTsZero,
		"eq":              (*fn).primEq,
		"ne":              (*fn).primNe,
		"print":           (*fn).primPrint,
		"$trace":          (*fn).primTrace,
		"$check":          (*fn).primCheck,
		"$addTo":          (*fn).primAddTo,
		"$addAt":          (*fn).primAddAt,
		"$setAt":          (*fn).primSetAt,
		"$ifold":          (*fn).primIfold,
		"$ifoldr":         (*fn).primIfold,
		"$foldtape":       (*fn).primFoldtape,
		"$foldrec":        (*fn).primFoldtape,
		"$inl":            (*fn).primInl,
		"$inr":            (*fn).primInr,
		"$isl":            (*fn).primIsl,
		"$outl":           (*fn).primOutl,
		"$outr":           (*fn).primOutr,
		"$wrap":           (*fn).primWrap,
		"$unwrap":         (*fn).primUnwrap,
		"$dup":            (*fn).primDup,
		"$elim":           (*fn).primElim,
		"$shape":          (*fn).primShape,
		"shape":           (*fn).primShape,
		"$flatten":        (*fn).primFlatten,
		"$unflatten":      (*fn).primUnflatten,
		"$zerosOfShape":   (*fn).primZerosOfShape,
		"$patternSeed":    (*fn).primPatternSeed,
		"$patternCSR":     (*fn).primPatternCSR,
		"$union":          (*fn).primUnion,
		"$colour":         (*fn).primColour,
		"$pairs":          (*fn).primPairs,
		"$unionAll":       (*fn).primUnionAll,
		"$pairsCSR":       (*fn).primPairsCSR,
		"$colourColumns":  (*fn).primColourColumns,
	}
}

// primSize compiles size.
func (g *fn) primSize(c *primCall) val {
	t := c.at(0)
	sz := sizesOf(c.parts[0], t)
	if t.Rank == 1 {
		return sz[0]
	}
	return pureOf(g.tupleLit(c.e.T, sz))
}

// primIndex compiles index.
func (g *fn) primIndex(c *primCall) val {
	t := c.at(1)
	flat := g.flatIndex(c.parts[0], c.parts[1], t, c.e.P)
	return g.temp(pureOf(data(c.parts[1], t).Index(flat.code)), c.e.T)
}

// primBuild compiles build.
func (g *fn) primBuild(c *primCall) val {
	lam := c.e.Args[1].(*ir.Lam)
	sz := sizes(c.parts[0], c.at(0))
	r := g.newTensor(c.e.T, sz, c.e.P)
	g.loop(sz, func(idx, flat val) { setAt(g, r, c.e.T, flat, g.apply(lam, idx, c.sc)) })
	return r
}

// primSumbuild compiles sumbuild.
func (g *fn) primSumbuild(c *primCall) val {
	lam := c.e.Args[1].(*ir.Lam)
	sz := sizes(c.parts[0], c.at(0))
	var empty *jen.Statement
	for _, s := range sz {
		c := s.c().Op("<=").Lit(0)
		if empty == nil {
			empty = c
		} else {
			empty = empty.Op("||").Add(c)
		}
	}
	g.stmt(jen.If(empty).Block(g.fail(c.e.P, "sumbuild over an empty range")))
	return g.reduce(c.e.T, sz, c.e.P, func(idx, _ val) val { return g.apply(lam, idx, c.sc) })
}

// primSum compiles sum.
func (g *fn) primSum(c *primCall) val {
	t := c.at(0)
	n := count(c.parts[0], t)
	g.stmt(jen.If(n.c().Op("<=").Lit(0)).Block(g.fail(c.e.P, "sum of an empty tensor")))
	return g.reduce(c.e.T, []val{n}, c.e.P, func(_, flat val) val {
		return pureOf(data(c.parts[0], t).Index(flat.code))
	})
}

// primFold compiles fold.
func (g *fn) primFold(c *primCall) val {
	lam := c.e.Args[0].(*ir.Lam)
	acc := g.fresh("acc")
	g.stmt(jen.Var().Id(acc).Add(g.e.gotype(c.e.T)).Op("=").Add(c.parts[1].code))
	v := c.parts[2]
	g.loop(sizesOf(v, c.at(2)), func(_, i val) {
		arg := g.tupleLit(lam.Param.T, []val{atomOf(jen.Id(acc)), atomOf(v.c().Index(i.code))})
		x := g.apply(lam, pureOf(arg), c.sc)
		g.stmt(jen.Id(acc).Op("=").Add(x.code))
	})
	return atomOf(jen.Id(acc))
}

// primMap compiles map.
func (g *fn) primMap(c *primCall) val {
	lam := c.e.Args[0].(*ir.Lam)
	t := c.at(1)
	v := c.parts[1]
	r := g.newTensor(c.e.T, sizesOf(v, t), c.e.P)
	g.loop([]val{count(v, t)}, func(_, i val) {
		setAt(g, r, c.e.T, i, g.apply(lam, pureOf(data(v, t).Index(i.code)), c.sc))
	})
	return r
}

// primMap2 compiles map2.
func (g *fn) primMap2(c *primCall) val {
	lam := c.e.Args[0].(*ir.Lam)
	t1, t2 := c.at(1), c.at(2)
	a, b := c.parts[1], c.parts[2]
	s1, s2 := sizesOf(a, t1), sizesOf(b, t2)
	for d := range s1 {
		g.stmt(g.e.rt("CheckSameSize").Call(pos(c.e.P), s1[d].code, s2[d].code))
	}
	r := g.newTensor(c.e.T, s1, c.e.P)
	g.loop([]val{count(a, t1)}, func(_, i val) {
		arg := g.tupleLit(lam.Param.T, []val{pureOf(data(a, t1).Index(i.code)), pureOf(data(b, t2).Index(i.code))})
		setAt(g, r, c.e.T, i, g.apply(lam, pureOf(arg), c.sc))
	})
	return r
}

// primConstVec compiles constVec.
func (g *fn) primConstVec(c *primCall) val {
	sz := sizes(c.parts[0], c.at(0))
	r := g.newTensor(c.e.T, sz, c.e.P)
	g.loop([]val{count(r, c.e.T)}, func(_, i val) { setAt(g, r, c.e.T, i, c.parts[1]) })
	return r
}

// primDeltaVec compiles deltaVec.
func (g *fn) primDeltaVec(c *primCall) val {
	sz := sizes(c.parts[0], c.at(0))
	z := g.temp(pureOf(g.e.rt("ZeroLike").Call(c.parts[2].code)), c.at(2))
	r := g.newTensor(c.e.T, sz, c.e.P)
	g.loop([]val{count(r, c.e.T)}, func(_, i val) { setAt(g, r, c.e.T, i, z) })
	idx := sizes(c.parts[1], c.at(1))
	var in *jen.Statement
	for d, s := range sz {
		c := jen.Uint64().Call(idx[d].code).Op("<").Uint64().Call(s.code)
		if in == nil {
			in = c
		} else {
			in = in.Op("&&").Add(c)
		}
	}
	g.stmt(jen.If(in).Block(data(r, c.e.T).Index(flatOf(c.parts[1], sz, c.e.T.Rank).code).Op("=").Add(c.parts[2].code)))
	return r
}

// primDelta compiles delta.
func (g *fn) primDelta(c *primCall) val {
	r := g.fresh("")
	g.stmt(jen.Var().Id(r).Add(g.e.gotype(c.e.T)).Op("=").Add(c.parts[2].code))
	g.stmt(jen.If(jen.Op("!").Add(g.e.rt("Eq").Call(c.parts[0].code, c.parts[1].code))).Block(
		jen.Id(r).Op("=").Add(g.e.rt("ZeroLike").Call(c.parts[2].code))))
	return atomOf(jen.Id(r))
}

// primVecInit compiles Vec_init.
func (g *fn) primVecInit(c *primCall) val {
	r := g.newTensor(c.e.T, []val{atomOf(jen.Int64().Call(jen.Lit(len(c.parts))))}, c.e.P)
	for i, x := range c.parts {
		setAt(g, r, c.e.T, atomOf(jen.Lit(i)), x)
	}
	return r
}

// primUnzip compiles unzip.
func (g *fn) primUnzip(c *primCall) val {
	t := c.at(0)
	v := c.parts[0]
	fields := make([]val, len(c.e.T.Elems))
	for k, et := range c.e.T.Elems {
		r := g.newTensor(et, sizesOf(v, t), c.e.P)
		g.loop([]val{count(v, t)}, func(_, i val) {
			setAt(g, r, et, i, pureOf(data(v, t).Index(i.code).Dot("F"+strconv.Itoa(k))))
		})
		fields[k] = r
	}
	return pureOf(g.tupleLit(c.e.T, fields))
}

// primBuildFromSparse compiles buildFromSparse. The count is an index
// value, as build's size: the loop runs over its index space in
// row-major order.
func (g *fn) primBuildFromSparse(c *primCall) val {
	lam := c.e.Args[2].(*ir.Lam)
	r := g.temp(pureOf(g.e.rt("Zeros").Types(g.e.gotype(c.e.T)).Call(pos(c.e.P), c.parts[0].code)), c.e.T)
	pair := lam.Body.Type()
	g.loop(sizes(c.parts[1], c.at(1)), func(i, _ val) {
		x := g.atom(g.apply(lam, i, c.sc), pair)
		flat := g.flatIndex(field(x, 0), r, c.e.T, c.e.P)
		g.addInto(data(r, c.e.T).Index(flat.code), field(x, 1), pair.Elems[1], c.e.P)
	})
	return r
}

// primTsAdd compiles ts_add.
func (g *fn) primTsAdd(c *primCall) val {
	return g.temp(pureOf(g.e.rt("TsAdd").Call(pos(c.e.P), c.parts[0].code, c.parts[1].code)), c.e.T)
}

// primTsScale compiles ts_scale.
func (g *fn) primTsScale(c *primCall) val {
	return g.temp(pureOf(g.e.rt("TsScale").Call(c.parts[0].code, c.parts[1].code)), c.e.T)
}

// primTsDot compiles ts_dot.
func (g *fn) primTsDot(c *primCall) val {
	return g.temp(pureOf(g.e.rt("TsDot").Call(pos(c.e.P), c.parts[0].code, c.parts[1].code)), c.e.T)
}

// primTsNeg compiles ts_neg.
func (g *fn) primTsNeg(c *primCall) val {
	return g.temp(pureOf(g.e.rt("TsNeg").Call(c.parts[0].code)), c.e.T)
}

// primTsZero compiles ts_zero.
func (g *fn) primTsZero(c *primCall) val {
	return g.temp(pureOf(g.e.rt("ZeroTan").Types(g.e.gotype(c.e.T)).Call(c.parts[0].code)), c.e.T)
}

// primEq compiles eq.
func (g *fn) primEq(c *primCall) val {
	return g.temp(pureOf(g.e.rt("Eq").Call(c.parts[0].code, c.parts[1].code)), c.e.T)
}

// primNe compiles ne.
func (g *fn) primNe(c *primCall) val {
	return g.temp(pureOf(jen.Op("!").Add(g.e.rt("Eq").Call(c.parts[0].code, c.parts[1].code))), c.e.T)
}

// primPrint compiles print.
func (g *fn) primPrint(c *primCall) val {
	for i, x := range c.parts {
		g.print(x, c.at(i))
	}
	return atomOf(jen.Int64().Call(jen.Lit(len(c.parts) - 1)))
}

// primTrace compiles $trace.
func (g *fn) primTrace(c *primCall) val {
	return g.temp(pureOf(g.e.rt("Trace").Call(jen.Id("ctx"), c.parts[0].code)), c.e.T)
}

// primCheck compiles $check.
func (g *fn) primCheck(c *primCall) val {
	return g.check(c.e, c.parts, c.sc)
}

// primAddTo compiles $addTo.
func (g *fn) primAddTo(c *primCall) val {
	r := g.temp(c.parts[0], c.e.T)
	g.addInto(r.c(), c.parts[1], c.e.T, c.e.P)
	return r
}

// primAddAt compiles $addAt.
func (g *fn) primAddAt(c *primCall) val {
	t := c.at(0)
	r := g.temp(c.parts[0], c.e.T)
	flat := g.flatIndex(c.parts[1], r, t, c.e.P)
	g.addInto(data(r, t).Index(flat.code), c.parts[2], t.Elem, c.e.P)
	return r
}

// primSetAt compiles $setAt.
func (g *fn) primSetAt(c *primCall) val {
	t := c.at(0)
	r := g.temp(c.parts[0], c.e.T)
	flat := g.flatIndex(c.parts[1], r, t, c.e.P)
	g.stmt(data(r, t).Index(flat.code).Op("=").Add(c.parts[2].code))
	return r
}

// primIfold compiles $ifold and $ifoldr.
func (g *fn) primIfold(c *primCall) val {
	lam := c.e.Args[2].(*ir.Lam)
	n := c.parts[0]
	acc := g.fresh("acc")
	g.stmt(jen.Var().Id(acc).Add(g.e.gotype(c.e.T)).Op("=").Add(c.parts[1].code))
	i := g.fresh("i")
	body := g.block(func() {
		arg := g.tupleLit(lam.Param.T, []val{atomOf(jen.Id(acc)), atomOf(jen.Id(i))})
		x := g.apply(lam, pureOf(arg), c.sc)
		g.stmt(jen.Id(acc).Op("=").Add(x.code))
	})
	if c.e.Prim.Name == "$ifold" {
		g.stmt(jen.For(jen.Id(i).Op(":=").Int64().Call(jen.Lit(0)), jen.Id(i).Op("<").Add(n.code), jen.Id(i).Op("++")).Block(body...))
	} else {
		g.stmt(jen.For(jen.Id(i).Op(":=").Add(n.code).Op("-").Lit(1), jen.Id(i).Op(">=").Lit(0), jen.Id(i).Op("--")).Block(body...))
	}
	return atomOf(jen.Id(acc))
}

// primFoldtape compiles $foldtape and $foldrec.
func (g *fn) primFoldtape(c *primCall) val {
	// n + 1 accumulators: before each step, and the fold's value;
	// for $foldrec, beside them what each step records.
	rec := c.e.Prim.Name == "$foldrec"
	lam := c.e.Args[0].(*ir.Lam)
	v := c.parts[2]
	acc := g.fresh("acc")
	g.stmt(jen.Var().Id(acc).Add(g.e.gotype(c.at(1))).Op("=").Add(c.parts[1].code))
	sz := sizesOf(v, c.at(2))
	tt := c.e.T
	var q val
	if rec {
		tt = c.e.T.Elems[0]
		q = g.newTensor(c.e.T.Elems[1], []val{sz[0]}, c.e.P)
	}
	r := g.newTensor(tt, []val{atomOf(sz[0].c().Op("+").Lit(1))}, c.e.P)
	g.loop(sz, func(_, i val) {
		setAt(g, r, tt, i, atomOf(jen.Id(acc)))
		arg := g.tupleLit(lam.Param.T, []val{atomOf(jen.Id(acc)), atomOf(v.c().Index(i.code))})
		if !rec {
			g.stmt(jen.Id(acc).Op("=").Add(g.apply(lam, pureOf(arg), c.sc).code))
			return
		}
		x := g.temp(g.apply(lam, pureOf(arg), c.sc), lam.Body.Type())
		g.stmt(jen.Id(acc).Op("=").Add(x.c().Dot("F0")))
		setAt(g, q, c.e.T.Elems[1], i, atomOf(x.c().Dot("F1")))
	})
	setAt(g, r, tt, sz[0], atomOf(jen.Id(acc)))
	if rec {
		return pureOf(g.tupleLit(c.e.T, []val{r, q}))
	}
	return r
}

// primInl compiles $inl.
func (g *fn) primInl(c *primCall) val {
	g.discard(c.parts[1])
	return pureOf(g.e.gotype(c.e.T).Values(jen.Id("Isl").Op(":").True(), jen.Id("L").Op(":").Add(c.parts[0].code)))
}

// primInr compiles $inr.
func (g *fn) primInr(c *primCall) val {
	g.discard(c.parts[0])
	return pureOf(g.e.gotype(c.e.T).Values(jen.Id("R").Op(":").Add(c.parts[1].code)))
}

// primIsl compiles $isl.
func (g *fn) primIsl(c *primCall) val {
	return atomOf(c.parts[0].c().Dot("Isl"))
}

// primOutl compiles $outl.
func (g *fn) primOutl(c *primCall) val {
	return atomOf(c.parts[0].c().Dot("L"))
}

// primOutr compiles $outr.
func (g *fn) primOutr(c *primCall) val {
	return atomOf(c.parts[0].c().Dot("R"))
}

// primWrap compiles $wrap.
func (g *fn) primWrap(c *primCall) val {
	g.discard(c.parts[1])
	return g.temp(pureOf(jen.Op("&").Id(g.e.declare(c.e.T)).Values(jen.Id("V").Op(":").Add(c.parts[0].code))), c.e.T)
}

// primUnwrap compiles $unwrap.
func (g *fn) primUnwrap(c *primCall) val {
	return atomOf(c.parts[0].c().Dot("V"))
}

// primDup compiles $dup.
func (g *fn) primDup(c *primCall) val {
	return pureOf(g.tupleLit(c.e.T, []val{c.parts[0], c.parts[0]}))
}

// primElim compiles $elim.
func (g *fn) primElim(c *primCall) val {
	g.discard(c.parts[0])
	return pureOf(g.tupleLit(c.e.T, nil))
}

// primShape compiles $shape.
func (g *fn) primShape(c *primCall) val {
	return g.temp(pureOf(g.e.rt("ShapeOf").Types(g.e.gotype(c.e.T)).Call(c.parts[0].code)), c.e.T)
}

// primFlatten compiles $flatten.
func (g *fn) primFlatten(c *primCall) val {
	return g.temp(pureOf(g.e.rt("Flatten").Call(c.parts[0].code)), c.e.T)
}

// primUnflatten compiles $unflatten.
func (g *fn) primUnflatten(c *primCall) val {
	return g.temp(pureOf(g.e.rt("Unflatten").Call(pos(c.e.P), c.parts[0].code, c.parts[1].code)), c.e.T)
}

// primPatternSeed compiles $patternSeed.
func (g *fn) primPatternSeed(c *primCall) val {
	return g.temp(pureOf(g.e.rt("PatternSeed").Types(g.e.gotype(c.e.T)).Call(c.parts[0].code)), c.e.T)
}

// primPatternCSR compiles $patternCSR.
func (g *fn) primPatternCSR(c *primCall) val {
	return g.temp(pureOf(g.e.rt("PatternCSR").Types(g.e.gotype(c.e.T)).Call(c.parts[0].code)), c.e.T)
}

// primUnion compiles $union.
func (g *fn) primUnion(c *primCall) val {
	return g.temp(pureOf(g.e.rt("SetUnion").Call(c.parts[0].code, c.parts[1].code)), c.e.T)
}

// primColour compiles $colour.
func (g *fn) primColour(c *primCall) val { return g.patternCall(c, "Colour", true) }

// primColourColumns compiles $colourColumns.
func (g *fn) primColourColumns(c *primCall) val { return g.patternCall(c, "ColourColumns", true) }

// primPairsCSR compiles $pairsCSR.
func (g *fn) primPairsCSR(c *primCall) val { return g.patternCall(c, "PairsCSR", true) }

// primUnionAll compiles $unionAll.
func (g *fn) primUnionAll(c *primCall) val {
	return g.temp(pureOf(g.e.rt("UnionAll").Call(c.parts[0].code)), c.e.T)
}

// primPairs compiles $pairs.
func (g *fn) primPairs(c *primCall) val { return g.patternCall(c, "Pairs", false) }

// patternCall compiles a primitive of sparsity patterns as the call of
// the runtime's function name with the position and the parts, typed by
// the result's type if generic.
func (g *fn) patternCall(c *primCall, name string, generic bool) val {
	args := []jen.Code{pos(c.e.P)}
	for _, p := range c.parts {
		args = append(args, p.code)
	}
	f := g.e.rt(name)
	if generic {
		f = f.Types(g.e.gotype(c.e.T))
	}
	return g.temp(pureOf(f.Call(args...)), c.e.T)
}

// primZerosOfShape compiles $zerosOfShape.
func (g *fn) primZerosOfShape(c *primCall) val {
	g.discard(c.parts[1])
	return g.temp(pureOf(g.e.rt("Zeros").Types(g.e.gotype(c.e.T)).Call(pos(c.e.P), c.parts[0].code)), c.e.T)
}

// print emits the printing of value x of type t: the scalar cases
// directly, the others through the runtime.
func (g *fn) print(x val, t *types.Type) {
	switch t.Kind {
	case types.String:
		g.stmt(jen.Id("ctx").Dot("WriteString").Call(x.code))
	default:
		g.stmt(jen.Id("ctx").Dot("Print").Call(x.code))
	}
}

// check compiles $check: with d1 = ts_dot(f(x+dx) - f(x), dt) and
// d2 = ts_dot(rev(x, dt), dx), the result is |d1 - d2| / (|d1| + |d2|),
// or 0 when both are 0 (as the C backend).
func (g *fn) check(e *ir.Call, parts []val, sc *env) val {
	fl, rev := e.Args[0].(*ir.Lam), e.Args[1].(*ir.Lam)
	s, t := fl.Param.T, fl.Body.Type()
	rt := g.e.rt
	x, dx, dt := parts[2], parts[3], parts[4]
	y0 := g.atom(g.apply(fl, x, sc), t)
	x1 := g.temp(pureOf(rt("TsAdd").Call(pos(e.P), x.code, dx.code)), s)
	y1 := g.atom(g.apply(fl, x1, sc), t)
	d1 := g.temp(pureOf(rt("DotDiff").Call(pos(e.P), y1.code, y0.code, dt.code)), types.FloatType)
	gr := g.atom(g.apply(rev, pureOf(g.tupleLit(rev.Param.T, []val{x, dt})), sc), rev.Body.Type())
	d2 := g.temp(pureOf(rt("TsDot").Call(pos(e.P), gr.code, dx.code)), types.FloatType)
	abs := func(v *jen.Statement) *jen.Statement { return jen.Qual("math", "Abs").Call(v) }
	r := g.fresh("")
	g.stmt(jen.Var().Id(r).Float64())
	den := jen.Parens(abs(d1.c()).Op("+").Add(abs(d2.c())))
	g.stmt(jen.If(den.Clone().Op("!=").Lit(0.0)).Block(
		jen.Id(r).Op("=").Add(abs(d1.c().Op("-").Add(d2.code))).Op("/").Add(den)))
	return atomOf(jen.Id(r))
}

// edef compiles a call of a function declared by edef. Go can call only
// the C library's functions it implements (libmFuncs); any other is an
// error at the call.
func (g *fn) edef(e *ir.Call, sc *env) val {
	impl, ok := libmFuncs[e.Fn.Name.Base]
	if !ok || len(e.Fn.Name.Derivs) > 0 || !e.Fn.Result.Equal(types.FloatType) || !e.Fn.Arg.Equal(impl.arg()) {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("%s is declared by edef, and the Go backend has no implementation of it", e.Fn.FullName())})
	}
	args := g.args(e.Args, sc, true)
	codes := make([]jen.Code, len(args))
	for i, a := range args {
		codes[i] = a.code
	}
	return g.temp(pureOf(jen.Qual("math", impl.goName).Call(codes...)), e.T)
}

// A libmFunc is a function of the C math library that an edef may name,
// and the function of Go's math package that implements it.
type libmFunc struct {
	goName string
	nargs  int // Float arguments
}

func (l libmFunc) arg() *types.Type {
	if l.nargs == 1 {
		return types.FloatType
	}
	ts := make([]*types.Type, l.nargs)
	for i := range ts {
		ts[i] = types.FloatType
	}
	return types.TupleOf(ts...)
}

// libmFuncs are the C library's Float functions that an edef may declare
// (as the C backend calls them); Go's math package computes them too,
// exactly for the rounding functions and to within an ulp or so for the
// others.
var libmFuncs = map[string]libmFunc{
	"acos": {"Acos", 1}, "asin": {"Asin", 1}, "atan": {"Atan", 1}, "atan2": {"Atan2", 2},
	"acosh": {"Acosh", 1}, "asinh": {"Asinh", 1}, "atanh": {"Atanh", 1},
	"sinh": {"Sinh", 1}, "tan": {"Tan", 1}, "cbrt": {"Cbrt", 1}, "hypot": {"Hypot", 2},
	"exp2": {"Exp2", 1}, "expm1": {"Expm1", 1}, "log1p": {"Log1p", 1}, "log2": {"Log2", 1}, "log10": {"Log10", 1},
	"erfc": {"Erfc", 1}, "tgamma": {"Gamma", 1},
	"floor": {"Floor", 1}, "ceil": {"Ceil", 1}, "trunc": {"Trunc", 1}, "round": {"Round", 1},
	"fabs": {"Abs", 1}, "fmod": {"Mod", 2},
	"copysign": {"Copysign", 2}, "fdim": {"Dim", 2},
}
