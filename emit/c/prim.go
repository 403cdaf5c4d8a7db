package cemit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// prim compiles a call of a primitive.
func (f *fn) prim(e *ir.Call, sc *env) string {
	p := e.Prim
	if p.C != "" {
		return f.template(e, sc)
	}
	if p.Def != "" {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("internal: prelude function %s was not inlined", p)})
	}
	if p.LM {
		panic(&syntax.Error{Pos: e.P, Msg: fmt.Sprintf("internal: the linear-map operation %s reached the C backend in %s", p.Name, f.f.FullName())})
	}
	if r, ok := f.unzipBuild(e, sc); ok {
		return r
	}
	c := &primCall{e: e, parts: f.parts(e, sc), sc: sc, ps: pos(e.P)}
	if p.Identity {
		return c.parts[0]
	}
	if code := structural[p.Name]; code != nil {
		return code(f, c)
	}
	panic(&syntax.Error{Pos: e.P, Msg: "internal: the C backend has no code for primitive " + p.Name})
}

// A primCall is a call of a primitive the table gives no C spelling, as
// this backend compiles it: the call, its argument parts compiled in
// order (lambdas stay IR, as ""), its scope and its position as a C
// string literal.
type primCall struct {
	e     *ir.Call
	parts []string
	sc    *env
	ps    string
}

// at returns the type of argument part i.
func (c *primCall) at(i int) *types.Type { return partType(c.e, i) }

// structural is this backend's code for each primitive the table gives
// no C spelling (and no ks definition): a row of the primitive table
// dispatches here by its name. TestPrimTable checks that every
// such row has its entry.
var structural map[string]func(*fn, *primCall) string

func init() {
	structural = map[string]func(*fn, *primCall) string{
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
		"eq":              (*fn).primEq,
		"ne":              (*fn).primNe,
		"print":           (*fn).primPrint,
		"$trace":          (*fn).primTrace,
		"$check":          (*fn).primCheck,
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
		"$zerosOfShape":   (*fn).primZerosOfShape,
		"$flatten":        (*fn).primFlatten,
		"$unflatten":      (*fn).primUnflatten,
		"$patternSeed":    (*fn).primPatternSeed,
		"$patternCSR":     (*fn).primPatternCSR,
		"$union":          (*fn).primUnion,
		"$colour":         (*fn).primColour,
		"$colourColumns":  (*fn).primColourColumns,
		"$pairs":          (*fn).primPairs,
		"$unionAll":       (*fn).primUnionAll,
		"$pairsCSR":       (*fn).primPairsCSR,
		"ts_zero":         (*fn).primTsZero,
		"$addTo":          (*fn).primAddTo,
		"$addAt":          (*fn).primAddAt,
		"$setAt":          (*fn).primSetAt,
		"$ifold":          (*fn).primIfold,
		"$ifoldr":         (*fn).primIfold,
		"$foldtape":       (*fn).primFoldtape,
		"$foldrec":        (*fn).primFoldtape,
	}
}

// primSize compiles size.
func (f *fn) primSize(c *primCall) string {
	t := c.at(0)
	v := f.atom(c.parts[0], t)
	if t.Rank == 1 {
		// The C compiler learns that the size is at most
		// KS_MAX_COUNT (see "Sizes" in ksc_runtime.h).
		f.line("ks_assume_size(%s.size, sizeof *%s.data);", v, v)
		return v + ".size"
	}
	fields := make([]string, t.Rank)
	for d := range fields {
		fields[d] = fmt.Sprintf("%s.size[%d]", v, d)
	}
	return f.tupleLit(c.e.T, fields)
}

// primIndex compiles index.
func (f *fn) primIndex(c *primCall) string {
	t := c.at(1)
	idx := f.atom(c.parts[0], c.at(0))
	v := f.atom(c.parts[1], t)
	return v + ".data[" + f.flatIndex(c.e, t.Rank, idx, v, c.ps) + "]"
}

// primBuild compiles build.
func (f *fn) primBuild(c *primCall) string {
	lam := c.e.Args[1].(*ir.Lam)
	sizes := f.sizes(f.atom(c.parts[0], c.at(0)), c.at(0))
	r, _ := f.newTensor(c.e.T, sizes, c.ps)
	if f.parallel(c.e.T.Elem, lam, len(sizes)) {
		f.parLoop(sizes[0], func(i string) {
			x := f.apply(lam, i, c.sc)
			f.line("%s.data[%s] = %s;", r, i, x)
		})
		return r
	}
	release := f.releaseAfter(c.e.T.Elem, lam.Body)
	var keep *elemKeep
	if release == "" {
		keep = f.beginElemKeep(c.e.T.Elem, lam.Body)
	}
	whole := func() {
		f.versioned(f.rank1Guard(lam, sizes, c.sc), func() {
			if len(sizes) == 1 && pureScalarBody(lam) {
				f.line("KS_IVDEP")
			}
			f.loop(len(sizes), sizes, func(idx, flat string) {
				f.elemStart(keep)
				f.elemEnd(keep, f.apply(lam, idx, c.sc), c.e.T.Elem, fmt.Sprintf("%s.data[%s]", r, flat))
				f.release(release)
			})
		})
	}
	if len(sizes) == 1 && keep == nil {
		if ct := splitCut(lam); ct != nil && f.splitBuild(r, sizes[0], lam, ct, c.sc, release, whole) {
			return r
		}
	}
	whole()
	return r
}

// pureScalarBody reports whether a build's body only reads tensors and
// computes scalars: every value it makes, and its result, is a scalar or
// a tuple of them (types.IsUniform); it has no loop and calls no ks
// function (which may allocate). Its loop is marked
// KS_IVDEP (runtime/c/ksc_runtime.h): it stores nothing but the new
// tensor's elements, so its iterations are independent.
func pureScalarBody(lam *ir.Lam) bool {
	if !lam.Body.Type().IsUniform() {
		return false
	}
	pure := true
	ir.Inspect(lam.Body, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Var, *ir.Get:
			// Reading a variable or a field allocates nothing.
		case *ir.Call:
			pure = x.Prim != nil && x.T.IsUniform()
		default:
			// A lambda is a loop; any other value not made of
			// scalars is memory.
			pure = x.Type().IsUniform()
		}
		return pure
	})
	return pure
}

// primSumbuild compiles sumbuild.
func (f *fn) primSumbuild(c *primCall) string {
	lam := c.e.Args[1].(*ir.Lam)
	sizes := f.sizes(f.atom(c.parts[0], c.at(0)), c.at(0))
	f.line("if (%s) ks_fail(ctx, %s, \"sumbuild over an empty range\");", emptyTest(sizes), c.ps)
	if (c.e.T.Kind == types.Float || c.e.T.Kind == types.Integer) && !isStraightSum(c.e) && f.parallel(c.e.T, lam, len(sizes)) {
		// The addends are computed in parallel, then added in order.
		terms, _ := f.newTensor(types.TensorOf(1, c.e.T), sizes, c.ps)
		f.parLoop(sizes[0], func(i string) {
			x := f.apply(lam, i, c.sc)
			f.line("%s.data[%s] = %s;", terms, i, x)
		})
		return f.reduce(nil, c.e.T, sizes, c.ps, "", true, func(_, flat string) string { return terms + ".data[" + flat + "]" })
	}
	release := f.releaseAfter(c.e.T, lam.Body)
	return f.reduce(f.rank1Guard(lam, sizes, c.sc), c.e.T, sizes, c.ps, release, !hasLoop(lam.Body), func(idx, flat string) string { return f.apply(lam, idx, c.sc) })
}

// primSum compiles sum.
func (f *fn) primSum(c *primCall) string {
	t := c.at(0)
	v := f.atom(c.parts[0], t)
	n := f.temp(count(v, t.Rank), types.IntegerType)
	f.line("if (%s <= 0) ks_fail(ctx, %s, \"sum of an empty tensor\");", n, c.ps)
	return f.reduce(nil, c.e.T, []string{n}, c.ps, "", true, func(idx, flat string) string { return v + ".data[" + flat + "]" })
}

// primFold compiles fold.
func (f *fn) primFold(c *primCall) string {
	lam := c.e.Args[0].(*ir.Lam)
	acc := f.fresh("acc")
	f.line("%s %s = %s;", f.e.ctype(c.e.T), acc, c.parts[1])
	v := f.atom(c.parts[2], c.at(2))
	release := f.releaseAfter(c.e.T, lam.Body)
	sr := f.beginStateRelease(c.e.T, lam.Body)
	f.loop(1, []string{v + ".size"}, func(idx, flat string) {
		f.iterStart(sr)
		x := f.applyTuple(lam, []string{acc, v + ".data[" + flat + "]"}, c.sc)
		f.iterEnd(sr, acc, x, c.e.T)
		f.release(release)
	})
	return acc
}

// primMap compiles map.
func (f *fn) primMap(c *primCall) string {
	lam := c.e.Args[0].(*ir.Lam)
	t := c.at(1)
	v := f.atom(c.parts[1], t)
	r, _ := f.newTensor(c.e.T, sizesOf(v, t.Rank), c.ps)
	release := f.releaseAfter(c.e.T.Elem, lam.Body)
	f.loop(1, []string{count(v, t.Rank)}, func(idx, flat string) {
		x := f.apply(lam, v+".data["+flat+"]", c.sc)
		f.line("%s.data[%s] = %s;", r, flat, x)
		f.release(release)
	})
	return r
}

// primMap2 compiles map2.
func (f *fn) primMap2(c *primCall) string {
	lam := c.e.Args[0].(*ir.Lam)
	t1, t2 := c.at(1), c.at(2)
	a, b := f.atom(c.parts[1], t1), f.atom(c.parts[2], t2)
	for d, s := range sizesOf(a, t1.Rank) {
		f.line("ks_check_same_size(ctx, %s, %s, %s);", c.ps, s, sizesOf(b, t2.Rank)[d])
	}
	r, _ := f.newTensor(c.e.T, sizesOf(a, t1.Rank), c.ps)
	release := f.releaseAfter(c.e.T.Elem, lam.Body)
	f.loop(1, []string{count(a, t1.Rank)}, func(idx, flat string) {
		x := f.applyTuple(lam, []string{a + ".data[" + flat + "]", b + ".data[" + flat + "]"}, c.sc)
		f.line("%s.data[%s] = %s;", r, flat, x)
		f.release(release)
	})
	return r
}

// primConstVec compiles constVec.
func (f *fn) primConstVec(c *primCall) string {
	sizes := f.sizes(f.atom(c.parts[0], c.at(0)), c.at(0))
	x := f.atom(c.parts[1], c.at(1))
	r, n := f.newTensor(c.e.T, sizes, c.ps)
	f.loop(1, []string{n}, func(idx, flat string) { f.line("%s.data[%s] = %s;", r, flat, x) })
	return r
}

// primDeltaVec compiles deltaVec.
func (f *fn) primDeltaVec(c *primCall) string {
	sizes := f.sizes(f.atom(c.parts[0], c.at(0)), c.at(0))
	idx := f.atom(c.parts[1], c.at(1))
	x := f.atom(c.parts[2], c.at(2))
	z := f.temp(f.e.helper("zerolike", c.at(2))+"(ctx, "+x+")", c.at(2))
	r, n := f.newTensor(c.e.T, sizes, c.ps)
	f.loop(1, []string{n}, func(_, flat string) { f.line("%s.data[%s] = %s;", r, flat, z) })
	f.line("if (%s) %s.data[%s] = %s;", inRange(idx, sizes, c.at(1)), r, flatOf(idx, sizes, c.at(1)), x)
	return r
}

// primDelta compiles delta.
func (f *fn) primDelta(c *primCall) string {
	i, j := f.atom(c.parts[0], c.at(0)), f.atom(c.parts[1], c.at(1))
	x := f.atom(c.parts[2], c.at(2))
	r := f.fresh("")
	f.line("%s %s = %s;", f.e.ctype(c.e.T), r, x)
	f.line("if (!%s(%s, %s)) %s = %s(ctx, %s);", f.e.helper("eq", c.at(0)), i, j, r, f.e.helper("zerolike", c.at(2)), x)
	return r
}

// primVecInit compiles Vec_init.
func (f *fn) primVecInit(c *primCall) string {
	r, _ := f.newTensor(c.e.T, []string{strconv.Itoa(len(c.parts))}, c.ps)
	for i, x := range c.parts {
		f.line("%s.data[%d] = %s;", r, i, x)
	}
	return r
}

// primUnzip compiles unzip.
func (f *fn) primUnzip(c *primCall) string {
	t := c.at(0)
	v := f.atom(c.parts[0], t)
	var fields []string
	for k, et := range c.e.T.Elems {
		r, _ := f.newTensor(et, sizesOf(v, t.Rank), c.ps)
		f.loop(1, []string{count(v, t.Rank)}, func(_, flat string) {
			f.line("%s.data[%s] = %s.data[%s].f%d;", r, flat, v, flat, k)
		})
		fields = append(fields, r)
	}
	return f.tupleLit(c.e.T, fields)
}

// unzipBuild compiles (unzip (build n (lam i e))), a record kept as a
// tuple of vectors (see lower.Unzip), as one loop storing each field of
// e into its own new tensor, if e is pure scalar code (pureScalarBody):
// gcc vectorises such a loop, where a tensor of tuples is a strided
// store it does not, and no tensor of tuples is made to be taken apart.
func (f *fn) unzipBuild(e *ir.Call, sc *env) (string, bool) {
	if e.Prim.Name != "unzip" || len(e.Args) != 1 {
		return "", false
	}
	b, ok := e.Args[0].(*ir.Call)
	if !ok || b.Prim == nil || b.Prim.Name != "build" || len(b.Args) != 2 {
		return "", false
	}
	lam, ok := b.Args[1].(*ir.Lam)
	if !ok || lam.Param.T.Kind != types.Integer || !pureScalarBody(lam) || f.parallel(b.T.Elem, lam, 1) {
		return "", false
	}
	ps := pos(b.P)
	sizes := f.sizes(f.atom(f.expr(b.Args[0], sc), b.Args[0].Type()), b.Args[0].Type())
	rs := make([]string, len(e.T.Elems))
	for k, et := range e.T.Elems {
		rs[k], _ = f.newTensor(et, sizes, ps)
	}
	f.versioned(f.rank1Guard(lam, sizes, sc), func() {
		f.line("KS_IVDEP")
		f.loop(1, sizes, func(idx, flat string) {
			x := f.atom(f.apply(lam, idx, sc), lam.Body.Type())
			for k, r := range rs {
				f.line("%s.data[%s] = %s.f%d;", r, flat, x, k)
			}
		})
	})
	return f.tupleLit(e.T, rs), true
}

// primBuildFromSparse compiles buildFromSparse. The count is an index
// value, as build's size: the loop runs over its index space in
// row-major order.
func (f *fn) primBuildFromSparse(c *primCall) string {
	lam := c.e.Args[2].(*ir.Lam)
	r := f.temp(f.e.helper("zeros", c.e.T)+"(ctx, "+c.ps+", "+c.parts[0]+")", c.e.T)
	counts := f.sizes(f.atom(c.parts[1], c.at(1)), c.at(1))
	pair := lam.Body.Type()
	idxT, valT := pair.Elems[0], pair.Elems[1]
	f.loop(len(counts), counts, func(i, _ string) {
		x := f.atom(f.apply(lam, i, c.sc), pair)
		idx := f.atom(x+".f0", idxT)
		sizes := sizesOf(r, c.e.T.Rank)
		f.line("%s;", f.checkIndex(idx, idxT, r, sizes, c.ps))
		slot := r + ".data[" + flatOf(idx, sizes, idxT) + "]"
		f.addTo(slot, x+".f1", valT, c.ps)
	})
	return r
}

// primTsAdd compiles ts_add.
func (f *fn) primTsAdd(c *primCall) string {
	return f.temp(f.e.helper("tsadd", c.at(0))+"(ctx, "+c.ps+", "+c.parts[0]+", "+c.parts[1]+")", c.e.T)
}

// primTsScale compiles ts_scale.
func (f *fn) primTsScale(c *primCall) string {
	return f.temp(f.e.helper("tsscale", c.at(1))+"(ctx, "+c.parts[0]+", "+c.parts[1]+")", c.e.T)
}

// primTsDot compiles ts_dot.
func (f *fn) primTsDot(c *primCall) string {
	return f.temp(f.e.helper("tsdot", c.at(0))+"(ctx, "+c.ps+", "+c.parts[0]+", "+c.parts[1]+")", c.e.T)
}

// primTsNeg compiles ts_neg.
func (f *fn) primTsNeg(c *primCall) string {
	return f.temp(f.e.helper("tsneg", c.at(0))+"(ctx, "+c.parts[0]+")", c.e.T)
}

// primEq compiles eq.
func (f *fn) primEq(c *primCall) string {
	return f.temp(f.e.helper("eq", c.at(0))+"("+c.parts[0]+", "+c.parts[1]+")", c.e.T)
}

// primNe compiles ne.
func (f *fn) primNe(c *primCall) string {
	return f.temp("!"+f.e.helper("eq", c.at(0))+"("+c.parts[0]+", "+c.parts[1]+")", c.e.T)
}

// primPrint compiles print.
func (f *fn) primPrint(c *primCall) string {
	for i, x := range c.parts {
		f.line("%s(%s);", f.e.helper("print", c.at(i)), x)
	}
	return strconv.Itoa(len(c.parts) - 1)
}

// primTrace compiles $trace.
func (f *fn) primTrace(c *primCall) string {
	x := f.atom(c.parts[0], c.at(0))
	f.line("fputs(\"Trace[\", stdout);")
	f.line("%s(%s);", f.e.helper("print", c.at(0)), x)
	f.line("fputs(\"]\\n\", stdout);")
	return x
}

// primCheck compiles $check.
func (f *fn) primCheck(c *primCall) string {
	return f.check(c.e, c.parts, c.sc)
}

// primInl compiles $inl.
func (f *fn) primInl(c *primCall) string {
	return f.e.helper("inl", c.e.T) + "(" + c.parts[0] + ")"
}

// primInr compiles $inr.
func (f *fn) primInr(c *primCall) string {
	return f.e.helper("inr", c.e.T) + "(" + c.parts[1] + ")"
}

// primIsl compiles $isl.
func (f *fn) primIsl(c *primCall) string {
	return paren(c.parts[0]) + ".isl"
}

// primOutl compiles $outl.
func (f *fn) primOutl(c *primCall) string {
	return paren(c.parts[0]) + ".u.l"
}

// primOutr compiles $outr.
func (f *fn) primOutr(c *primCall) string {
	return paren(c.parts[0]) + ".u.r"
}

// primWrap compiles $wrap.
func (f *fn) primWrap(c *primCall) string {
	r := f.fresh("")
	f.line("%s %s = ks_alloc(ctx, sizeof *%s);", f.e.ctype(c.e.T), r, r)
	f.line("%s->v = %s;", r, c.parts[0])
	return r
}

// primUnwrap compiles $unwrap.
func (f *fn) primUnwrap(c *primCall) string {
	return f.atom(c.parts[0], c.at(0)) + "->v"
}

// primDup compiles $dup.
func (f *fn) primDup(c *primCall) string {
	x := f.atom(c.parts[0], c.at(0))
	return f.tupleLit(c.e.T, []string{x, x})
}

// primElim compiles $elim.
func (f *fn) primElim(c *primCall) string {
	return f.tupleLit(c.e.T, nil)
}

// primShape compiles $shape.
func (f *fn) primShape(c *primCall) string {
	return f.temp(f.e.helper("shapeof", c.at(0))+"(ctx, "+c.parts[0]+")", c.e.T)
}

// primZerosOfShape compiles $zerosOfShape.
func (f *fn) primZerosOfShape(c *primCall) string {
	return f.temp(f.e.helper("zeros", c.e.T)+"(ctx, "+c.ps+", "+c.parts[0]+")", c.e.T)
}

// primFlatten compiles $flatten.
func (f *fn) primFlatten(c *primCall) string {
	x := f.fresh("")
	f.line("const %s %s = %s;", f.e.ctype(c.at(0)), x, c.parts[0])
	return f.temp(f.e.helper("flatten", c.at(0))+"(ctx, &"+x+")", c.e.T)
}

// primUnflatten compiles $unflatten.
func (f *fn) primUnflatten(c *primCall) string {
	return f.temp(f.e.helper("unflat", c.e.T)+"(ctx, "+c.ps+", "+c.parts[0]+", "+c.parts[1]+")", c.e.T)
}

// primPatternSeed compiles $patternSeed.
func (f *fn) primPatternSeed(c *primCall) string {
	return f.temp(f.e.helper("patseed", c.at(0))+"(ctx, "+c.parts[0]+")", c.e.T)
}

// primPatternCSR compiles $patternCSR.
func (f *fn) primPatternCSR(c *primCall) string {
	return f.temp(f.e.helper("patcsr", c.at(0))+"(ctx, "+c.parts[0]+")", c.e.T)
}

// primUnion compiles $union.
func (f *fn) primUnion(c *primCall) string {
	return f.temp(f.e.helper("setunion", c.e.T)+"(ctx, "+c.parts[0]+", "+c.parts[1]+")", c.e.T)
}

// primColour compiles $colour.
func (f *fn) primColour(c *primCall) string { return f.patternCall(c, "colour") }

// primColourColumns compiles $colourColumns.
func (f *fn) primColourColumns(c *primCall) string { return f.patternCall(c, "colourcol") }

// primUnionAll compiles $unionAll.
func (f *fn) primUnionAll(c *primCall) string {
	return f.temp(f.e.helper("unionall", c.at(0))+"(ctx, "+c.parts[0]+")", c.e.T)
}

// primPairs compiles $pairs.
func (f *fn) primPairs(c *primCall) string { return f.patternCall(c, "pairs") }

// primPairsCSR compiles $pairsCSR.
func (f *fn) primPairsCSR(c *primCall) string { return f.patternCall(c, "pairscsr") }

// patternCall compiles a primitive of sparsity patterns as the call of
// its helper of the given kind with the position and the parts.
func (f *fn) patternCall(c *primCall, kind string) string {
	return f.temp(f.e.helper(kind, c.e.T)+"(ctx, "+c.ps+", "+strings.Join(c.parts, ", ")+")", c.e.T)
}

// primTsZero compiles ts_zero.
func (f *fn) primTsZero(c *primCall) string {
	return f.temp(f.e.helper("zerotan", c.at(0))+"(ctx, "+c.parts[0]+")", c.e.T)
}

// primAddTo compiles $addTo.
func (f *fn) primAddTo(c *primCall) string {
	// In place: the accumulator is not used again, so its memory is reused.
	r := f.temp(c.parts[0], c.e.T)
	f.addTo(r, c.parts[1], c.e.T, c.ps)
	return r
}

// primAddAt compiles $addAt.
func (f *fn) primAddAt(c *primCall) string {
	t, r, slot, x := f.slotAt(c)
	f.addTo(slot, x, t.Elem, c.ps)
	return r
}

// slotAt compiles the parts of ($addAt r i x) and ($setAt r i x): the
// tensor's type, the accumulator (updated in place), the C lvalue of its
// element at i (checked) and the value.
func (f *fn) slotAt(c *primCall) (t *types.Type, r, slot, x string) {
	t = c.at(0)
	r = f.temp(c.parts[0], c.e.T)
	idx := f.atom(c.parts[1], c.at(1))
	x = f.atom(c.parts[2], c.at(2))
	slot = r + ".data[" + f.flatIndex(c.e, t.Rank, idx, r, c.ps) + "]"
	return t, r, slot, x
}

// primSetAt compiles $setAt.
func (f *fn) primSetAt(c *primCall) string {
	t, r, slot, x := f.slotAt(c)
	if chk := escapeCheck(slot, x, t.Elem); chk != "" {
		f.line("%s", chk)
	}
	f.line("%s = %s;", slot, x)
	return r
}

// primIfold compiles $ifold and $ifoldr.
func (f *fn) primIfold(c *primCall) string {
	lam := c.e.Args[2].(*ir.Lam)
	n := f.atom(c.parts[0], c.at(0))
	acc := f.fresh("acc")
	f.line("%s %s = %s;", f.e.ctype(c.e.T), acc, c.parts[1])
	if ok, disjoint := f.parallelFold(c.e, lam); ok {
		f.parIfold(c, lam, n, acc, disjoint)
		return acc
	}
	if ct, take := foldCut(lam); ct != nil && f.splitFold(c, lam, take, n, acc, ct) {
		return acc
	}
	f.ifoldLoop(c, lam, n, acc, "0", n)
	return acc
}

// ifoldLoop emits the loop of an $ifold or $ifoldr call c with body lam,
// over the indices lo .. hi-1 of 0 .. n-1 (upwards for $ifold, downwards
// for $ifoldr), updating the state in the variable acc.
func (f *fn) ifoldLoop(c *primCall, lam *ir.Lam, n, acc, lo, hi string) {
	release := f.releaseAfter(c.e.T, lam.Body)
	sr := f.beginStateRelease(c.e.T, lam.Body)
	f.versioned(f.guardFor(lam, n, acc, c.sc), func() {
		i := f.fresh("i")
		f.loopIndex(i, n)
		if f.ivdep {
			f.ivdep = false
			f.line("KS_IVDEP")
		}
		if c.e.Prim.Name == "$ifold" {
			f.line("for (int64_t %s = %s; %s < %s; %s++) {", i, lo, i, hi, i)
		} else {
			f.line("for (int64_t %s = %s - 1; %s >= %s; %s--) {", i, hi, i, lo, i)
		}
		f.indent++
		f.depth++
		f.iterStart(sr)
		x := f.applyTuple(lam, []string{acc, i}, c.sc)
		f.iterEnd(sr, acc, x, c.e.T)
		f.release(release)
		f.depth--
		f.indent--
		f.line("}")
	})
}

// primFoldtape compiles $foldtape and $foldrec.
func (f *fn) primFoldtape(c *primCall) string {
	// n + 1 accumulators: before each step, and the fold's value;
	// for $foldrec, beside them what each step records.
	rec := c.e.Prim.Name == "$foldrec"
	lam := c.e.Args[0].(*ir.Lam)
	v := f.atom(c.parts[2], c.at(2))
	acc := f.fresh("acc")
	f.line("%s %s = %s;", f.e.ctype(c.at(1)), acc, c.parts[1])
	tt, q := c.e.T, ""
	if rec {
		tt = c.e.T.Elems[0]
		q, _ = f.newTensor(c.e.T.Elems[1], []string{v + ".size"}, c.ps)
	}
	r, _ := f.newTensor(tt, []string{v + ".size + 1"}, c.ps)
	f.loop(1, []string{v + ".size"}, func(_, i string) {
		f.line("%s.data[%s] = %s;", r, i, acc)
		x := f.applyTuple(lam, []string{acc, v + ".data[" + i + "]"}, c.sc)
		if !rec {
			f.line("%s = %s;", acc, x)
			return
		}
		x = f.atom(x, lam.Body.Type())
		f.line("%s = %s.f0;", acc, x)
		f.line("%s.data[%s] = %s.f1;", q, i, x)
	})
	f.line("%s.data[%s.size] = %s;", r, v, acc)
	if rec {
		return f.tupleLit(c.e.T, []string{r, q})
	}
	return r
}

// parts compiles the argument parts of a primitive call, leaving lambdas
// (returned as ""). A part is an atom or a pure expression; the caller
// makes an atom of a part it uses more than once.
func (f *fn) parts(e *ir.Call, sc *env) []string {
	lams := map[int]bool{}
	for _, i := range e.Prim.Lams {
		lams[i] = true
	}
	if len(e.Args) == 1 && e.Prim.Arity != 1 && e.Args[0].Type().Kind == types.Tuple {
		return f.args(e.Args, sc, true)
	}
	out := make([]string, len(e.Args))
	for i, a := range e.Args {
		if lams[i] {
			continue
		}
		out[i] = f.expr(a, sc)
	}
	return out
}

// partType returns the type of argument part i of a primitive call.
func partType(e *ir.Call, i int) *types.Type {
	if len(e.Args) == 1 && e.Prim.Arity != 1 && e.Args[0].Type().Kind == types.Tuple {
		return e.Args[0].Type().Elems[i]
	}
	return e.Args[i].Type()
}

// template expands the C spelling of a primitive from the table.
func (f *fn) template(e *ir.Call, sc *env) string {
	p := e.Prim
	args := f.parts(e, sc)
	s := p.C
	if len(args) == 2 && args[0] == args[1] && strings.HasPrefix(s, "($0 ") && strings.HasSuffix(s, " $1)") {
		// (gt k k) is what the user wrote (the optimiser folds it, but
		// not with --no-opt); gcc warns of a self-comparison
		// (-Wtautological-compare) unless one side is spelled apart. A
		// unary plus changes no value.
		args[1] = "+" + args[1]
	}
	for i := len(args) - 1; i >= 0; i-- {
		key := "$" + strconv.Itoa(i)
		if strings.Count(s, key) > 1 {
			args[i] = f.atom(args[i], partType(e, i))
		}
		s = strings.ReplaceAll(s, key, args[i])
	}
	s = strings.ReplaceAll(s, "$ctx", "ctx")
	s = strings.ReplaceAll(s, "$pos", pos(e.P))
	if !p.Pure {
		return f.temp(s, e.T)
	}
	return s
}

// apply emits a lambda's body with its parameter bound to arg and returns
// the body's value.
func (f *fn) apply(lam *ir.Lam, arg string, sc *env) string {
	name := f.fresh(lam.Param.Name)
	f.line("%s %s = %s;", f.e.ctype(lam.Param.T), name, arg)
	f.bind(name, arg, lam.Param.T)
	if !ir.Occurs(lam.Param.Name, lam.Body) {
		f.line("(void)%s;", name)
	}
	return f.expr(lam.Body, sc.push(lam.Param.Name, name))
}

// applyTuple is apply with a tuple argument given by its fields. A lambda
// that only takes its parameter apart, (lam (p : Tuple A B) (let ((a b) p)
// e)), gets the fields bound directly, without the tuple: loops pass their
// state this way, and a C compiler keeps such scalars in registers more
// readily than the fields of a struct.
func (f *fn) applyTuple(lam *ir.Lam, fields []string, sc *env) string {
	let, ok := lam.Body.(*ir.Let)
	if ok && let.Pattern && len(let.Vars) == len(fields) && !ir.Occurs(lam.Param.Name, let.Body) {
		if v, isVar := let.Rhs.(*ir.Var); isVar && v.Name == lam.Param.Name {
			for i, x := range let.Vars {
				name := f.fresh(x.Name)
				f.line("%s %s = %s;", f.e.ctype(x.T), name, fields[i])
				f.bind(name, fields[i], x.T)
				if !ir.Occurs(x.Name, let.Body) {
					f.line("(void)%s;", name)
				}
				sc = sc.push(x.Name, name)
			}
			return f.expr(let.Body, sc)
		}
	}
	return f.apply(lam, f.tupleLit(lam.Param.T, fields), sc)
}

// sizes returns the sizes of an index space as C expressions, from a size
// value (an Integer, or a tuple of Integers).
func (f *fn) sizes(n string, t *types.Type) []string {
	if t.Kind == types.Integer {
		return []string{n}
	}
	out := make([]string, len(t.Elems))
	for i := range out {
		out[i] = n + ".f" + strconv.Itoa(i)
	}
	return out
}

// sizesOf returns the sizes of tensor v of the given rank.
func sizesOf(v string, rank int) []string {
	if rank == 1 {
		return []string{v + ".size"}
	}
	out := make([]string, rank)
	for i := range out {
		out[i] = fmt.Sprintf("%s.size[%d]", v, i)
	}
	return out
}

// count returns the number of elements of tensor v.
func count(v string, rank int) string {
	return strings.Join(sizesOf(v, rank), " * ")
}

func emptyTest(sizes []string) string {
	var cs []string
	for _, s := range sizes {
		cs = append(cs, s+" <= 0")
	}
	return strings.Join(cs, " || ")
}

// newTensor declares a tensor of type t with the given sizes and allocates
// its elements. It returns the tensor's name and its element count.
func (f *fn) newTensor(t *types.Type, sizes []string, ps string) (string, string) {
	r := f.fresh("")
	f.line("%s %s;", f.e.ctype(t), r)
	var n string
	if t.Rank == 1 {
		f.line("%s.size = %s;", r, sizes[0])
		n = r + ".size"
	} else {
		for d, s := range sizes {
			f.line("%s.size[%d] = %s;", r, d, s)
		}
		n = f.fresh("")
		f.line("int64_t %s = ks_count(ctx, %s, %d, %s.size);", n, ps, t.Rank, r)
	}
	f.line("%s.data = ks_alloc_array(ctx, %s, %s, sizeof *%s.data);", r, ps, n, r)
	return r, n
}

// loop emits loops over an index space, calling body inside them with the
// index (of the index type) and the flat position.
func (f *fn) loop(rank int, sizes []string, body func(idx, flat string)) {
	f.depth++
	defer func() { f.depth-- }()
	if rank == 1 {
		i := f.fresh("i")
		f.loopIndex(i, sizes[0])
		f.line("for (int64_t %s = 0; %s < %s; %s++) {", i, i, sizes[0], i)
		f.indent++
		body(i, i)
		f.indent--
		f.line("}")
		return
	}
	f.line("{")
	f.indent++
	flat := f.fresh("k")
	f.line("int64_t %s = 0;", flat)
	idx := make([]string, rank)
	for d := range idx {
		idx[d] = f.fresh("i")
		f.loopIndex(idx[d], sizes[d])
		f.line("for (int64_t %s = 0; %s < %s; %s++) {", idx[d], idx[d], sizes[d], idx[d])
		f.indent++
	}
	lit := f.tupleLit(types.IndexType(rank), idx)
	f.tupleFields(lit, idx)
	body(lit, flat)
	f.line("%s++;", flat)
	for range idx {
		f.indent--
		f.line("}")
	}
	f.indent--
	f.line("}")
}

// reduce sums the values elem(idx, flat) over an index space known to be
// non-empty, in order (Floats in lanes: sumFloats, which emits elem twice
// if unroll is set), and returns the sum. release (from releaseAfter)
// ends each iteration of a sum of scalars.
func (f *fn) reduce(g *guard, t *types.Type, sizes []string, ps, release string, unroll bool, elem func(idx, flat string) string) string {
	acc := f.fresh("acc")
	loop := func(body func(idx, flat string)) {
		f.versioned(g, func() { f.loop(len(sizes), sizes, body) })
	}
	switch t.Kind {
	case types.Float:
		return f.sumFloats(g, sizes, release, unroll, elem)
	case types.Integer:
		f.line("int64_t %s = 0;", acc)
		loop(func(idx, flat string) {
			f.line("%s = ks_iadd(%s, %s);", acc, acc, elem(idx, flat))
			f.release(release)
		})
	default:
		first := f.fresh("first")
		f.line("%s %s;", f.e.ctype(t), acc)
		f.line("bool %s = true;", first)
		loop(func(idx, flat string) {
			x := f.atom(elem(idx, flat), t)
			f.line("if (%s) {", first)
			f.line("  %s = %s(ctx, %s);", acc, f.e.helper("copy", t), x)
			f.line("  %s = false;", first)
			f.line("} else {")
			f.line("  %s(ctx, %s, &%s, %s);", f.e.helper("addto", t), ps, acc, x)
			f.line("}")
			f.release(release)
		})
	}
	return acc
}

// addTo emits slot += x for a value of type t, in place.
func (f *fn) addTo(slot, x string, t *types.Type, ps string) {
	switch t.Kind {
	case types.Float:
		f.line("%s += %s;", slot, x)
	case types.Integer:
		f.line("%s = ks_iadd(%s, %s);", slot, slot, x)
	default:
		f.line("%s(ctx, %s, &%s, %s);", f.e.helper("addto", t), ps, slot, x)
	}
}

// flatIndex checks index idx (of the tensor's index type) against tensor v
// for call e, unless the check is known to pass, and returns the flat
// position.
func (f *fn) flatIndex(e *ir.Call, rank int, idx, v, ps string) string {
	sizes := sizesOf(v, rank)
	t := types.IndexType(rank)
	if !f.proven[e] && !f.inBounds(idx, t, sizes) {
		f.line("%s;", f.checkIndex(idx, t, v, sizes, ps))
	}
	return flatOf(idx, sizes, t)
}

// checkIndex returns a statement that fails unless idx is within sizes,
// the sizes of tensor v.
func (f *fn) checkIndex(idx string, t *types.Type, v string, sizes []string, ps string) string {
	if t.Kind == types.Integer {
		return fmt.Sprintf("ks_check_index(ctx, %s, %s, %s, sizeof *%s.data)", ps, idx, sizes[0], v)
	}
	comps := make([]string, len(sizes))
	for d := range sizes {
		comps[d] = fmt.Sprintf("%s.f%d", idx, d)
	}
	// The test is inline; the function that reports the error is called
	// only when it fails.
	return fmt.Sprintf("if (!(%s)) ks_check_index_n(ctx, %s, %d, (int64_t[]){%s}, (int64_t[]){%s})",
		inRange(idx, sizes, t), ps, len(sizes), strings.Join(comps, ", "), strings.Join(sizes, ", "))
}

// flatOf returns the row-major flat position of idx in a tensor of the given sizes.
func flatOf(idx string, sizes []string, t *types.Type) string {
	if t.Kind == types.Integer {
		return idx
	}
	s := idx + ".f0"
	for d := 1; d < len(sizes); d++ {
		s = fmt.Sprintf("(%s * %s + %s.f%d)", s, sizes[d], idx, d)
	}
	return s
}

// inRange returns a condition that holds when idx is within sizes.
func inRange(idx string, sizes []string, t *types.Type) string {
	if slices.Contains(sizes, "0") {
		return "0" // an empty tensor; the comparison would draw -Wtype-limits
	}
	if t.Kind == types.Integer {
		return fmt.Sprintf("(uint64_t)%s < (uint64_t)%s", idx, sizes[0])
	}
	var cs []string
	for d, s := range sizes {
		cs = append(cs, fmt.Sprintf("(uint64_t)%s.f%d < (uint64_t)%s", idx, d, s))
	}
	return strings.Join(cs, " && ")
}

// check compiles $check: with d1 = ts_dot(f(x+dx) - f(x), dt) and
// d2 = ts_dot(rev(x, dt), dx), the result is |d1 - d2| / (|d1| + |d2|),
// or 0 when both are 0.
func (f *fn) check(e *ir.Call, parts []string, sc *env) string {
	fl, rev := e.Args[0].(*ir.Lam), e.Args[1].(*ir.Lam)
	s, t := fl.Param.T, fl.Body.Type()
	ps := pos(e.P)
	x, dx, dt := f.atom(parts[2], s), f.atom(parts[3], partType(e, 3)), f.atom(parts[4], partType(e, 4))
	y0 := f.atom(f.apply(fl, x, sc), t)
	x1 := f.temp(f.e.helper("tsadd", s)+"(ctx, "+ps+", "+x+", "+dx+")", s)
	y1 := f.atom(f.apply(fl, x1, sc), t)
	d1 := f.temp(f.e.helper("dotdiff", t)+"(ctx, "+ps+", "+y1+", "+y0+", "+dt+")", types.FloatType)
	g := f.atom(f.apply(rev, f.tupleLit(rev.Param.T, []string{x, dt}), sc), rev.Body.Type())
	d2 := f.temp(f.e.helper("tsdot", rev.Body.Type())+"(ctx, "+ps+", "+g+", "+dx+")", types.FloatType)
	return f.temp(fmt.Sprintf("(fabs(%s) + fabs(%s) == 0.0 ? 0.0 : fabs(%s - %s) / (fabs(%s) + fabs(%s)))", d1, d2, d1, d2, d1, d2), types.FloatType)
}

// release emits the statement that ends a loop iteration which reuses the
// arena (see releaseAfter), if any.
func (f *fn) release(stmt string) {
	if stmt != "" {
		f.line("%s", stmt)
	}
}

// sumFloats sums the Floats elem(idx, flat) over an index space in lanes,
// in the order every implementation of ks adds them (runtime/go's
// rt_sum.go): element k is added to partial sum k mod 4, and the result is
// (s0 + s1) + (s2 + s3). Over one dimension the loop steps by 4, with a
// loop over the lanes inside (gcc unrolls it and vectorises the outer
// loop: the order is a vector loop's), and the elements left over after
// the last full step are added after it. That emits elem twice, so it is
// done only with unroll, for sums whose elements run no loop (the sums
// gcc can vectorise): nested sums would double their code at each level.
func (f *fn) sumFloats(g *guard, sizes []string, release string, unroll bool, elem func(idx, flat string) string) string {
	if n, err := strconv.Atoi(sizes[0]); err == nil && len(sizes) == 1 && unroll && n >= 1 && n <= maxStraightSum {
		return f.straightSum(g, n, release, elem)
	}
	acc := f.fresh("acc")
	f.line("double %s[4] = {-0.0, -0.0, -0.0, -0.0};", acc)
	if len(sizes) != 1 || !unroll {
		f.versioned(g, func() {
			f.loop(len(sizes), sizes, func(idx, flat string) {
				f.line("%s[%s & 3] += %s;", acc, flat, elem(idx, flat))
				f.release(release)
			})
		})
		return fmt.Sprintf("((%s[0] + %s[1]) + (%s[2] + %s[3]))", acc, acc, acc, acc)
	}
	n := sizes[0]
	f.versioned(g, func() {
		f.depth++
		i, l, xs := f.fresh("i"), f.fresh("l"), f.fresh("xs")
		f.line("int64_t %s = 0;", i)
		f.line("for (; %s <= %s - 4; %s += 4) {", i, n, i)
		// The 4 elements go to an array, then into the lanes at
		// constant indices: a body too large for gcc to unroll the loop
		// over the lanes would otherwise keep the lanes in memory, each
		// addition waiting for the store of the one before.
		f.line("  double %s[4];", xs)
		f.line("  for (int %s = 0; %s < 4; %s++) {", l, l, l)
		f.indent += 2
		j := f.fresh("i")
		f.line("int64_t %s = %s + %s;", j, i, l)
		f.loopIndex(j, n)
		f.line("%s[%s] = %s;", xs, l, elem(j, j))
		f.release(release)
		f.indent -= 2
		f.line("  }")
		f.line("  %s[0] += %s[0]; %s[1] += %s[1]; %s[2] += %s[2]; %s[3] += %s[3];", acc, xs, acc, xs, acc, xs, acc, xs)
		f.line("}")
		// Fewer than 4 left, from a multiple of 4: element i + l goes to
		// lane l. Constant lane indices let gcc keep the lanes in registers.
		l = f.fresh("l")
		f.line("for (int64_t %s = 0; %s + %s < %s; %s++) {", l, i, l, n, l)
		f.indent++
		j = f.fresh("i")
		f.line("int64_t %s = %s + %s;", j, i, l)
		f.loopIndex(j, n)
		x := f.atom(elem(j, j), types.FloatType)
		f.line("if (%s == 0) %s[0] += %s; else if (%s == 1) %s[1] += %s; else %s[2] += %s;", l, acc, x, l, acc, x, acc, x)
		f.release(release)
		f.indent--
		f.line("}")
		f.depth--
	})
	return fmt.Sprintf("((%s[0] + %s[1]) + (%s[2] + %s[3]))", acc, acc, acc, acc)
}

// maxStraightSum is the length up to which a sum of Floats of constant
// length whose elements run no loop is emitted as straight-line code
// (straightSum).
const maxStraightSum = 8

// straightSum emits a sum of Floats over 0 .. n-1 (n a constant, 1 <= n
// <= maxStraightSum) as straight-line code, in the order of sumFloats:
// element k goes to lane k mod 4, a lane holds -0.0 + its first element
// (which is that element) plus the others in order, and the lanes are
// combined as (s0 + s1) + (s2 + s3), lanes that hold nothing (-0.0, which
// adds nothing) left out. The lanes are scalars, which gcc keeps in
// registers; a loop over 4 lanes kept them in an array on the stack.
func (f *fn) straightSum(g *guard, n int, release string, elem func(idx, flat string) string) string {
	lanes := make([]string, min(n, 4))
	for l := range lanes {
		lanes[l] = f.fresh("acc")
		f.line("double %s;", lanes[l])
	}
	size := strconv.Itoa(n)
	f.versioned(g, func() {
		f.depth++
		for k := range n {
			f.line("{")
			f.indent++
			i := f.fresh("i")
			f.line("const int64_t %s = %d;", i, k)
			f.loopIndex(i, size)
			op := "="
			if k >= 4 {
				op = "+="
			}
			f.line("%s %s %s;", lanes[k%4], op, elem(i, i))
			f.release(release)
			f.indent--
			f.line("}")
		}
		f.depth--
	})
	switch len(lanes) {
	case 1:
		return lanes[0]
	case 2:
		return fmt.Sprintf("(%s + %s)", lanes[0], lanes[1])
	case 3:
		return fmt.Sprintf("((%s + %s) + %s)", lanes[0], lanes[1], lanes[2])
	}
	return fmt.Sprintf("((%s + %s) + (%s + %s))", lanes[0], lanes[1], lanes[2], lanes[3])
}

// isStraightSum reports whether e is a sum that fn.straightSum emits as
// straight-line code: a sumbuild of Floats over a constant range of 1 to
// maxStraightSum, whose elements run no loop. It runs no loop either.
func isStraightSum(e ir.Expr) bool {
	c, ok := e.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Name != "sumbuild" || c.T.Kind != types.Float {
		return false
	}
	n, ok := c.Args[0].(*ir.Const)
	if !ok || n.T.Kind != types.Integer {
		return false
	}
	lam, ok := c.Args[1].(*ir.Lam)
	v, _ := n.Val.(int64)
	return ok && v >= 1 && v <= maxStraightSum && !hasLoop(lam.Body)
}
