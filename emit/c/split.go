package cemit

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Index-set splitting: a build whose element is chosen by comparing the
// index with a value fixed for the loop, which is how ks writes the
// concatenation of two vectors,
//
//	(build (add (size a) (size b)) (lam (k : Integer)
//	  (if (lt k (size a)) (index k a) (index (sub k (size a)) b))))
//
// runs as two loops, one over the indices below the cut, with the first
// branch, and one over the others, with the second:
//
//	if (0 <= cut && cut <= n) {
//	  for (i = 0; i < cut; i++) r[i] = <then, k = i>;
//	  for (j = 0; j < n - cut; j++) r[cut + j] = <else, k = j + cut>;
//	} else {
//	  <the loop as it was>
//	}
//
// Neither loop has the branch, and each is versioned on its own (version.go),
// so their index checks leave them and gcc can vectorise them: in the
// second loop (sub k (size a)) is j, which version.go sees as it cancels
// the cut. The elements are computed in the same order as before, by the
// same code, so values and errors are unchanged; the cut is computed once,
// before the loops, which is why it must be an expression that cannot fail
// (sizes, variables, constants, and integer arithmetic that wraps).
//
// A test (eq k c), the functional update of one element, splits in three:
// below c, c alone, above c. A fold ($ifold, $ifoldr: the reverse passes
// of such builds) whose body takes (state, k) apart splits the same way,
// its parts run in the fold's order, so that the state goes through the
// iterations in the order it did.

// maxSplitBody bounds, in IR nodes, the body of a build that is split:
// the split emits it three times (each part, and the loop as it was), and
// each may be versioned.
const maxSplitBody = 150

// maxSplitDepth bounds the nesting of split loops, each of which emits its
// body three times: a nest's code grows at most by 3 to this power.
const maxSplitDepth = 2

// A cut is a build's body split at an index: the body for the indices
// below it, and the one for the rest.
type cut struct {
	at          ir.Expr // the first index of the second part, or the point
	below, from ir.Expr // the bodies: the lambda's parameter is the index
	// on, if not nil, is the body at the index at, below the one below
	// it and from the one above it: the test was (eq k at).
	on ir.Expr
}

// splitCut returns how a build's body splits, or nil: the body is a chain
// of lets and asserts ending in an if whose test compares the index with
// an expression fixed for the loop (see invariantCut).
func splitCut(lam *ir.Lam) *cut {
	if ir.Size(lam.Body) > maxSplitBody {
		return nil
	}
	return cutOf(lam.Body, lam.Param.Name, map[string]bool{lam.Param.Name: true})
}

// foldCut returns how the body of a fold ($ifold, $ifoldr) splits, or nil:
// the body takes its parameter apart, (let ((s k) p) e), and e splits as
// a build's body does at the index k. The cut's bodies are e's parts.
func foldCut(lam *ir.Lam) (*cut, *ir.Let) {
	l, ok := lam.Body.(*ir.Let)
	if !ok || !l.Pattern || len(l.Vars) != 2 || ir.Size(lam.Body) > maxSplitBody {
		return nil, nil
	}
	if v, ok := l.Rhs.(*ir.Var); !ok || v.Name != lam.Param.Name {
		return nil, nil
	}
	bound := map[string]bool{lam.Param.Name: true, l.Vars[0].Name: true, l.Vars[1].Name: true}
	return cutOf(l.Body, l.Vars[1].Name, bound), l
}

// cutOf returns how body splits at the Integer index, or nil. bound are
// the variables bound in the loop, the index among them.
func cutOf(body ir.Expr, index string, bound map[string]bool) *cut {
	items, tail := ir.ChainItems(body)
	iff, ok := tail.(*ir.If)
	if !ok {
		return nil
	}
	bound = maps.Clone(bound)
	// defs are the chain's lets of one variable, bound once, by name: a
	// cut may be such a variable, (let (n (size v)) ...), if its
	// definition is fixed for the loop.
	defs := map[string]ir.Expr{}
	for _, it := range items {
		l, ok := it.(*ir.Let)
		if !ok {
			continue
		}
		for _, v := range l.Vars {
			if bound[v.Name] {
				delete(defs, v.Name)
			} else if !l.Pattern && len(l.Vars) == 1 {
				defs[v.Name] = l.Rhs
			}
			bound[v.Name] = true
		}
	}
	test := iff.Cond
	if v, ok := test.(*ir.Var); ok && defs[v.Name] != nil {
		test = defs[v.Name]
	}
	c, ok := test.(*ir.Call)
	if !ok || c.Prim == nil || len(c.Args) != 2 {
		return nil
	}
	isIndex := func(e ir.Expr) bool {
		v, ok := e.(*ir.Var)
		return ok && v.Name == index
	}
	// The comparison with the index on the left: k < c has the then
	// branch below c, k >= c the else branch; k <= c has then below
	// c + 1, k > c else. k == c has the then branch at c, the else branch
	// below and above it; k != c the other way round.
	op, other := c.Prim.Name, c.Args[1]
	switch {
	case isIndex(c.Args[0]) && !isIndex(c.Args[1]):
	case isIndex(c.Args[1]) && !isIndex(c.Args[0]):
		other = c.Args[0]
		op = map[string]string{"lt": "gt", "gt": "lt", "lte": "gte", "gte": "lte", "eq": "eq", "ne": "ne"}[op]
	default:
		return nil
	}
	var thenBelow, plusOne, point bool
	switch op {
	case "lt":
		thenBelow = true
	case "gte":
	case "lte":
		thenBelow, plusOne = true, true
	case "gt":
		plusOne = true
	case "eq":
		point = true
	case "ne":
		point, thenBelow = true, true
	default:
		return nil
	}
	at, ok := invariantCut(other, bound, defs)
	if !ok {
		return nil
	}
	if plusOne {
		at = ir.MkPrim(c.P, "add", at, &ir.Const{P: c.P, Val: int64(1), T: types.IntegerType})
	}
	below, from := iff.Then, iff.Else
	if !thenBelow {
		below, from = from, below
	}
	if point {
		// below is the branch off the point, from the one at it.
		return &cut{at: at, below: ir.WrapChain(items, below), on: ir.WrapChain(items, from), from: ir.WrapChain(items, below)}
	}
	return &cut{at: at, below: ir.WrapChain(items, below), from: ir.WrapChain(items, from)}
}

// invariantCut reports whether e is fixed for the loop and cannot fail, so
// that it may be computed once before it: an Integer made of variables
// bound outside the loop (none of bound), constants, sizes of rank-1
// tensors, and add, sub and mul (which wrap), and of variables of defs
// (lets of the loop's body) whose definitions are such. It returns e with
// those variables replaced by their definitions.
func invariantCut(e ir.Expr, bound map[string]bool, defs map[string]ir.Expr) (ir.Expr, bool) {
	switch e := e.(type) {
	case *ir.Var:
		if d := defs[e.Name]; d != nil {
			return invariantCut(d, bound, defs)
		}
		return e, !bound[e.Name] && e.T.Kind == types.Integer
	case *ir.Const:
		_, ok := e.Val.(int64)
		return e, ok
	case *ir.Call:
		if e.Prim == nil {
			return nil, false
		}
		switch e.Prim.Name {
		case "size":
			v, ok := e.Args[0].(*ir.Var)
			return e, ok && !bound[v.Name] && v.T.Kind == types.Tensor && v.T.Rank == 1
		case "add", "sub", "mul":
			a, ok1 := invariantCut(e.Args[0], bound, defs)
			b, ok2 := invariantCut(e.Args[1], bound, defs)
			if !ok1 || !ok2 {
				return nil, false
			}
			if a == e.Args[0] && b == e.Args[1] {
				return e, true
			}
			return ir.MkPrim(e.P, e.Prim.Name, a, b), true
		}
	}
	return nil, false
}

// A part is a range of a split loop's indices: count of them from off
// ("" for 0) on, where the loop's body is body.
type part struct {
	off, count string
	body       ir.Expr
}

// splitParts emits the test that a cut of a loop over 0 .. n-1 lies in
// range and the C values of the parts' bounds, and returns the parts in
// order: below the cut and from it, or below, at and above a point. It
// returns nil, having emitted nothing, if the cut is n itself (the test
// would compare n with itself) or the loop is nested maxSplitDepth deep in
// split loops.
func (f *fn) splitParts(ct *cut, n string, sc *env) []part {
	if f.splits >= maxSplitDepth {
		return nil
	}
	at := f.expr(ct.at, sc)
	if at == n {
		return nil
	}
	at = f.atom(at, types.IntegerType)
	if ct.on == nil {
		f.line("if (0 <= %s && %s <= %s) {", at, at, n)
		f.indent++
		rest := f.temp(fmt.Sprintf("%s - %s", n, at), types.IntegerType)
		return []part{{"", at, ct.below}, {at, rest, ct.from}}
	}
	f.line("if (0 <= %s && %s < %s) {", at, at, n)
	f.indent++
	next := f.temp(at+" + 1", types.IntegerType)
	rest := f.temp(fmt.Sprintf("%s - %s", n, next), types.IntegerType)
	return []part{{"", at, ct.below}, {at, "1", ct.on}, {next, rest, ct.from}}
}

// shiftedBody returns the index and the body of a part of a split loop
// whose index is index: for a part that does not start at 0, its own index
// j and the body binding index to j plus a variable holding the part's
// offset, and the scope binding that variable to the offset's C value
// itself, so that version.go, which knows only C names, cancels it in
// (sub index off).
func shiftedBody(lam *ir.Lam, index *ir.Var, pt part, sc *env) (*ir.Var, ir.Expr, *env) {
	if pt.off == "" {
		return index, pt.body, sc
	}
	p := lam.P
	j := &ir.Var{P: p, T: types.IntegerType, Name: unusedName(lam, index.Name+"$j")}
	off := &ir.Var{P: p, T: types.IntegerType, Name: unusedName(lam, index.Name+"$cut")}
	body := &ir.Let{P: p, Vars: []*ir.Var{index}, Rhs: ir.MkPrim(p, "add", ir.Ref(p, j), ir.Ref(p, off)), Body: pt.body}
	return j, body, sc.push(off.Name, pt.off)
}

// elseWhole ends the split loop's test: the loop as it was otherwise.
func (f *fn) elseWhole(whole func()) {
	f.indent--
	f.line("} else {")
	f.indent++
	whole()
	f.indent--
	f.line("}")
}

// splitBuild emits the loop of a rank-1 build into r (whose count is n)
// split at ct, with the loop as it was (emitted by whole) for a cut
// outside 0 .. n; release (from releaseAfter) ends each iteration. It
// returns false, having emitted nothing, if the cut is n itself.
func (f *fn) splitBuild(r, n string, lam *ir.Lam, ct *cut, sc *env, release string, whole func()) bool {
	parts := f.splitParts(ct, n, sc)
	if parts == nil {
		return false
	}
	f.splits++
	defer func() { f.splits-- }()
	for _, pt := range parts {
		j, body, psc := shiftedBody(lam, lam.Param, pt, sc)
		f.fill(r, pt.off, pt.count, &ir.Lam{P: lam.P, Param: j, Body: body}, psc, release)
	}
	f.elseWhole(whole)
	return true
}

// fill emits a versioned loop over 0 .. count-1 storing lam's value at
// each index i into r's element off + i (off "" for 0), each iteration
// ending in release (from releaseAfter).
func (f *fn) fill(r, off, count string, lam *ir.Lam, sc *env, release string) {
	f.versioned(f.rank1Guard(lam, []string{count}, sc), func() {
		if pureScalarBody(lam) {
			f.line("KS_IVDEP")
		}
		f.loop(1, []string{count}, func(idx, flat string) {
			x := f.apply(lam, idx, sc)
			if off != "" {
				flat = off + " + " + flat
			}
			f.line("%s.data[%s] = %s;", r, flat, x)
			f.release(release)
		})
	})
}

// unusedName returns name, or name with a number, such that it occurs
// nowhere in lam.
func unusedName(lam *ir.Lam, name string) string {
	used := map[string]bool{lam.Param.Name: true}
	ir.Inspect(lam.Body, func(e ir.Expr) bool {
		switch e := e.(type) {
		case *ir.Var:
			used[e.Name] = true
		case *ir.Let:
			for _, v := range e.Vars {
				used[v.Name] = true
			}
		case *ir.Lam:
			used[e.Param.Name] = true
		}
		return true
	})
	s := name
	for k := 1; used[s]; k++ {
		s = fmt.Sprintf("%s%d", name, k)
	}
	return s
}

// splitFold emits the loop of a fold ($ifold, $ifoldr) call c with body
// lam (count n, state in acc) split at ct, lam's body taking its
// parameter apart by take, with the loop as it was for a cut outside
// 0 .. n: the parts in order for $ifold, in reverse for $ifoldr, so the
// state goes through the same iterations in the same order. It returns
// false, having emitted nothing, if the cut is n itself.
func (f *fn) splitFold(c *primCall, lam *ir.Lam, take *ir.Let, n, acc string, ct *cut) bool {
	parts := f.splitParts(ct, n, c.sc)
	if parts == nil {
		return false
	}
	f.splits++
	defer func() { f.splits-- }()
	if c.e.Prim.Name == "$ifoldr" {
		slices.Reverse(parts)
	}
	state, index := take.Vars[0], take.Vars[1]
	for _, pt := range parts {
		j, body, psc := shiftedBody(lam, index, pt, c.sc)
		l := &ir.Lam{P: lam.P, Param: lam.Param, Body: &ir.Let{P: take.P, Vars: []*ir.Var{state, j}, Pattern: true, Rhs: take.Rhs, Body: body}}
		pc := *c
		pc.sc = psc
		f.ifoldLoop(&pc, l, pt.count, acc, "0", pt.count)
	}
	f.elseWhole(func() { f.ifoldLoop(c, lam, n, acc, "0", n) })
	return true
}
