package cemit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Loop versioning: index checks out of hot loops.
//
// An index check in a loop is a branch to an exit, and a loop with an exit
// is one gcc does not vectorise ("control flow in loop"). bounds.go leaves
// out the checks that cannot fail; for the others, one test before a loop
// decides every check in it, nested loops included, whose index is known
// to lie in a range fixed for the whole loop, into a tensor whose sizes
// are fixed for the whole loop:
//
//	if (n <= 0 || (k >= 0 && n < s + 1 && k < s + 1 - n) && ...) {
//	  for (i = 0; i < n; i++) ... v.data[i + k] ...   /* no checks */
//	} else {
//	  for (i = 0; i < n; i++) ... check i + k < s; v.data[i + k] ...
//	}
//
// The second copy is the loop as it was, so a program whose index is out
// of range fails exactly where and how it did: the test only chooses which
// copy runs, and never fails itself.
//
// A range is a pair of bounds, each a sum of at most two C atoms fixed for
// the loop and a constant: an Integer defined outside the loop is its own
// range, a loop index runs from 0 to its count's upper bound minus 1, and
// a constant added shifts a range (so the column c <= r of a triangular
// nest is below the outer loop's count). A tensor's sizes are fixed when
// it is defined outside the loop (or is a part of a tuple that is, as a
// reverse loop's tapes read by column), or it is a part of a fold's state that
// every iteration replaces by the result of $addAt or $setAt on it (the
// accumulators of reverse loops): that part has the sizes of the initial
// state's.

// maxVersionDepth bounds the nesting of versioned loops: a loop inside
// the first copy of a versioned loop is versioned again when its own test
// proves checks the outer one could not (an accumulator made in the outer
// loop's body, say), up to this depth, so the code of a loop nest grows at
// most by a factor of 2 to this power.
const maxVersionDepth = 2

// maxNestSize bounds, in IR nodes, the body of a loop nest that is
// versioned as a whole: the inner loops of a larger one, or of one that
// calls functions, are versioned on their own. Copying a large body buys
// little (its checks are a small part of its work) and costs much: gcc
// stops inlining the functions it calls.
const maxNestSize = 120

// smallNest reports whether a loop with this body may be versioned: it
// runs no loop, or it is at most maxNestSize nodes and calls no function.
func smallNest(body ir.Expr) bool {
	n, loops, calls := 0, false, false
	ir.Inspect(body, func(e ir.Expr) bool {
		n++
		switch e := e.(type) {
		case *ir.Lam:
			loops = true
		case *ir.Call:
			calls = calls || e.Fn != nil
		}
		return true
	})
	return !loops || n <= maxNestSize && !calls
}

// A guard is the test before a loop and the index checks it proves.
type guard struct {
	cond   string
	proven map[*ir.Call]bool
	// ivdep says the loop is a fold's that KS_IVDEP may precede when cond
	// and ivcond (if not "") hold; when only cond does, the loop without
	// checks runs without it.
	ivdep  bool
	ivcond string
}

// A bound is the sum of atoms (C atoms fixed for the loop; at most two)
// and off.
type bound struct {
	atoms []string
	off   int64
}

// plus returns b + c, or false if that would take more than two atoms.
func (b bound) plus(c bound) (bound, bool) {
	if len(b.atoms)+len(c.atoms) > 2 {
		return bound{}, false
	}
	sum := bound{off: b.off + c.off, atoms: append(append([]string(nil), b.atoms...), c.atoms...)}
	if (c.off > 0 && sum.off < b.off) || (c.off < 0 && sum.off > b.off) || sum.off > 1<<40 || sum.off < -1<<40 {
		return bound{}, false // keep constants small: sizes plus them cannot overflow
	}
	return sum, true
}

// minus returns b - c, or false unless each atom of c is one of b's.
func (b bound) minus(c bound) (bound, bool) {
	atoms := append([]string(nil), b.atoms...)
	for _, x := range c.atoms {
		k := 0
		for k < len(atoms) && atoms[k] != x {
			k++
		}
		if k == len(atoms) {
			return bound{}, false
		}
		atoms = append(atoms[:k], atoms[k+1:]...)
	}
	return bound{atoms: atoms}.plus(bound{off: b.off - c.off})
}

func (b bound) equal(c bound) bool {
	return b.off == c.off && strings.Join(b.atoms, ",") == strings.Join(c.atoms, ",")
}

// A sym is what the analysis knows of a value of the loop body.
type sym struct {
	kind   symKind
	lo, hi bound  // ranged: lo <= the value <= hi
	shift  *bound // ranged: the value is the fold's index plus shift
	base   string // sized: a C path with the value's sizes
	elems  []sym  // tuple
}

type symKind uint8

const (
	unknown symKind = iota
	ranged          // an Integer in [lo, hi]
	sized           // a tensor with the sizes of base
	tuple           // a tuple of elems
)

// point is the range of an Integer atom or constant.
func point(b bound) sym { return sym{kind: ranged, lo: b, hi: b} }

// loopIndex returns the range of the index of a loop whose count is n: 0
// to n's upper bound minus 1 (the checks in the loop run only if it runs).
func loopIndexSym(n sym) sym {
	if n.kind != ranged {
		return sym{}
	}
	hi, ok := n.hi.plus(bound{off: -1})
	if !ok {
		return sym{}
	}
	return sym{kind: ranged, hi: hi}
}

// indexSym is loopIndexSym for an index space of any rank.
func indexSym(n sym, rank int) sym {
	if rank == 1 {
		return loopIndexSym(n)
	}
	s := sym{kind: tuple}
	for d := 0; d < rank; d++ {
		e := sym{}
		if n.kind == tuple && d < len(n.elems) {
			e = loopIndexSym(n.elems[d])
		}
		s.elems = append(s.elems, e)
	}
	return s
}

// A boundsCheck is an index check of the body: idx into a tensor of size.
type boundsCheck struct {
	call *ir.Call
	idx  sym
	size sym
	rank int
}

// versioner analyses the body of one loop.
type versioner struct {
	sc     *env // the scope outside the loop
	local  map[string]sym
	checks []boundsCheck
	// scaled are the conditions under which the scaled atoms of the
	// analysis ("(3 * b_1)", a constant times an atom) cannot overflow:
	// they come first in the guard, which C evaluates left to right.
	scaled []string
	// For KS_IVDEP (ivdep): the fold's state (its C name), the body's
	// stores ($addAt), the state's tensors it reads otherwise, and
	// whether it does anything else to memory that rules it out.
	state  string
	stores []store
	reads  map[string]bool
	writes bool
}

// A store is an $addAt of the body: at idx into the tensor target.
type store struct {
	call        *ir.Call
	target, idx sym
}

// maxScale bounds the constant of a scaled atom, and maxScaled the atom
// it multiplies, so that their product stays below 2^60 and the sums of
// bounds below 2^63.
const (
	maxScale  = 1 << 20
	maxScaled = 1 << 40
)

// guardFor returns the guard of a loop that runs lam with the loop index
// (or, for a fold, with the state and the loop index), from 0 to below n.
// state is the C name of the fold's state before the loop, "" for build
// and sumbuild. It returns nil when the loop is inside a copy already
// guarded, or no check can be proven.
func (f *fn) guardFor(lam *ir.Lam, n, state string, sc *env) *guard {
	if f.versions >= maxVersionDepth || !isAtom(n) || !smallNest(lam.Body) {
		return nil
	}
	v := &versioner{sc: sc, local: map[string]sym{}, state: state}
	count := point(bound{atoms: []string{n}})
	if state != "" {
		v.fold(lam, count, stateSym(state, lam.Param.T.Elems[0]))
	} else {
		v.loop(lam, count, 1)
	}
	g := &guard{proven: map[*ir.Call]bool{}}
	var conds []string
	seen := map[string]bool{}
	for _, s := range v.scaled {
		if !seen[s] {
			seen[s] = true
			conds = append(conds, s)
		}
	}
	for _, c := range v.checks {
		cs, ok := c.conditions()
		if !ok || f.proven[c.call] {
			continue
		}
		g.proven[c.call] = true
		for _, s := range cs {
			if a, b, ok := strings.Cut(s, " <= "); ok && f.canon(a) == f.canon(b) {
				continue // the loop runs over the tensor's indices
			}
			if !seen[s] {
				seen[s] = true
				conds = append(conds, s)
			}
		}
	}
	if ivconds, ok := v.ivdep(lam, func(c *ir.Call) bool { return g.proven[c] || f.proven[c] }); ok {
		g.ivdep, g.ivcond = true, strings.Join(ivconds, " && ")
	}
	if len(g.proven) == 0 && !g.ivdep {
		// Nothing to prove: the checks are proven already (an inner loop
		// of a versioned copy) or cannot be. Such an inner loop may still
		// take KS_IVDEP (the reverse of a row of a triangular product).
		return nil
	}
	if len(conds) > 0 {
		g.cond = fmt.Sprintf("%s <= 0 || (%s)", n, strings.Join(conds, " && "))
	}
	return g
}

// loop walks the body of a build or sumbuild over an index space of the
// given rank whose sizes are n.
func (v *versioner) loop(lam *ir.Lam, n sym, rank int) {
	v.local[lam.Param.Name] = indexSym(n, rank)
	v.walk(lam.Body)
}

// fold walks the body of a fold ($ifold, $ifoldr) whose count is n and
// whose state starts as init, and returns what is known of its result:
// init's sizes, if every iteration keeps them.
func (v *versioner) fold(lam *ir.Lam, n, init sym) sym {
	i := loopIndexSym(n)
	if i.kind == ranged {
		i.shift = &bound{}
	}
	mark, marks := len(v.checks), len(v.stores)
	v.local[lam.Param.Name] = sym{kind: tuple, elems: []sym{init, i}}
	if r := v.walk(lam.Body); keepsSizes(r, init) {
		return init
	}
	// Walk again, knowing nothing of the state.
	v.checks = v.checks[:mark]
	v.stores = v.stores[:marks]
	v.local[lam.Param.Name] = sym{kind: tuple, elems: []sym{{}, i}}
	v.walk(lam.Body)
	return sym{}
}

// stateSym is the sym of a fold's state of type t, held in C path p, whose
// tensors keep their sizes (its Integers change).
func stateSym(p string, t *types.Type) sym { return pathSym(p, t, false) }

// outsideSym is what is known of a value of type t defined outside the
// loop, held in C path p: an Integer is its own range, a tensor has its
// sizes, and so have the parts of a tuple (a loop's tapes read by
// column, (index i (get$2$11 tapes))).
func outsideSym(p string, t *types.Type) sym { return pathSym(p, t, true) }

// pathSym is the sym of a value of type t held in C path p whose tensors
// have fixed sizes, and whose Integers are fixed if ints.
func pathSym(p string, t *types.Type, ints bool) sym {
	switch t.Kind {
	case types.Integer:
		if ints && isAtom(p) {
			return point(bound{atoms: []string{p}})
		}
	case types.Tensor:
		return sym{kind: sized, base: p}
	case types.Tuple:
		s := sym{kind: tuple}
		for k, et := range t.Elems {
			s.elems = append(s.elems, pathSym(p+".f"+strconv.Itoa(k), et, ints))
		}
		return s
	}
	return sym{}
}

// keepsSizes reports whether every tensor of want has its sizes in got.
func keepsSizes(got, want sym) bool {
	switch want.kind {
	case sized:
		return got.kind == sized && got.base == want.base
	case tuple:
		if got.kind != tuple || len(got.elems) != len(want.elems) {
			return false
		}
		for k := range want.elems {
			if !keepsSizes(got.elems[k], want.elems[k]) {
				return false
			}
		}
	}
	return true
}

// equal reports whether s and t say the same.
func (s sym) equal(t sym) bool {
	if s.kind != t.kind || s.base != t.base || !s.lo.equal(t.lo) || !s.hi.equal(t.hi) || len(s.elems) != len(t.elems) {
		return false
	}
	if (s.shift == nil) != (t.shift == nil) || s.shift != nil && !s.shift.equal(*t.shift) {
		return false
	}
	for k := range s.elems {
		if !s.elems[k].equal(t.elems[k]) {
			return false
		}
	}
	return true
}

// walk records the index checks of e and returns what is known of its
// value.
func (v *versioner) walk(e ir.Expr) sym {
	switch e := e.(type) {
	case *ir.Const:
		if n, ok := e.Val.(int64); ok && n > -1<<40 && n < 1<<40 {
			return point(bound{off: n})
		}
	case *ir.Var:
		if s, ok := v.local[e.Name]; ok {
			return s
		}
		c := v.sc.lookup(e.Name)
		switch {
		case e.T.Kind == types.Integer && isAtom(c): // a literal too
			return point(bound{atoms: []string{c}})
		case isPath(c):
			return outsideSym(c, e.T)
		}
	case *ir.Tuple:
		s := sym{kind: tuple}
		for _, x := range e.Elems {
			s.elems = append(s.elems, v.walk(x))
		}
		return s
	case *ir.Get:
		x := v.walk(e.X)
		if x.kind == tuple && e.I-1 < len(x.elems) {
			return x.elems[e.I-1]
		}
	case *ir.Let:
		r := v.walk(e.Rhs)
		if !e.Pattern {
			v.local[e.Vars[0].Name] = r
		} else {
			for k, x := range e.Vars {
				s := sym{}
				if r.kind == tuple && k < len(r.elems) {
					s = r.elems[k]
				}
				v.local[x.Name] = s
			}
		}
		return v.walk(e.Body)
	case *ir.If:
		v.walk(e.Cond)
		a, b := v.walk(e.Then), v.walk(e.Else)
		if a.equal(b) {
			return a
		}
	case *ir.Assert:
		v.walk(e.Cond)
		return v.walk(e.Body)
	case *ir.Call:
		return v.call(e)
	}
	return sym{}
}

// call walks a call.
func (v *versioner) call(e *ir.Call) sym {
	args := make([]sym, len(e.Args))
	for k, a := range e.Args {
		if lam, ok := a.(*ir.Lam); ok {
			if e.Prim == nil || !isLoop(e.Prim.Name) {
				v.local[lam.Param.Name] = sym{}
				v.walk(lam.Body)
			}
			continue
		}
		args[k] = v.walk(a)
	}
	if e.Prim != nil && e.Prim.Name == "size" && len(e.Args) == 1 && args[0].kind == sized {
		rank := e.Args[0].Type().Rank
		sizes := sizesOf(args[0].base, rank)
		if rank == 1 {
			return point(bound{atoms: sizes})
		}
		s := sym{kind: tuple}
		for _, x := range sizes {
			s.elems = append(s.elems, point(bound{atoms: []string{x}}))
		}
		return s
	}
	v.effects(e, args)
	if e.Prim == nil || len(e.Args) < 2 {
		return sym{}
	}
	switch e.Prim.Name {
	case "build", "sumbuild":
		if lam, ok := e.Args[1].(*ir.Lam); ok {
			v.loop(lam, args[0], types.IndexRank(e.Args[0].Type()))
		}
	case "$ifold", "$ifoldr":
		if lam, ok := e.Args[2].(*ir.Lam); ok && len(e.Args) == 3 {
			return v.fold(lam, args[0], args[1])
		}
	case "index":
		v.checks = append(v.checks, boundsCheck{call: e, idx: args[0], size: args[1], rank: e.Args[1].Type().Rank})
	case "$addAt", "$setAt":
		v.checks = append(v.checks, boundsCheck{call: e, idx: args[1], size: args[0], rank: e.Args[0].Type().Rank})
		if e.Prim.Name == "$addAt" {
			v.stores = append(v.stores, store{call: e, target: args[0], idx: args[1]})
		}
		return args[0]
	case "mul":
		// c * x, c a small positive constant, x an atom: the atom
		// "(c * x)", which the guard keeps from overflowing.
		a, b := args[0], args[1] // b the constant
		if a.kind == ranged && len(a.lo.atoms) == 0 && a.lo.equal(a.hi) {
			a, b = b, a
		}
		if a.kind != ranged || b.kind != ranged || len(b.lo.atoms) != 0 || !b.lo.equal(b.hi) ||
			b.lo.off < 1 || b.lo.off > maxScale || len(a.lo.atoms) != 1 || a.lo.off != 0 || !a.lo.equal(a.hi) {
			break
		}
		x := a.lo.atoms[0]
		v.scaled = append(v.scaled, fmt.Sprintf("%s >= 0 && %s <= %d", x, x, int64(maxScaled)))
		return point(bound{atoms: []string{fmt.Sprintf("(%d * %s)", b.lo.off, x)}})
	case "add", "sub":
		a, b := args[0], args[1]
		if a.kind != ranged || b.kind != ranged {
			break
		}
		if e.Prim.Name == "sub" {
			if !b.lo.equal(b.hi) {
				break
			}
			if len(b.lo.atoms) > 0 {
				// a - (x + c), a's bounds both sums with the atoms x:
				// the bounds without them, minus c (the second part
				// of a split loop, (sub k cut) with k = j + cut).
				lo, ok1 := a.lo.minus(b.lo)
				hi, ok2 := a.hi.minus(b.lo)
				if !ok1 || !ok2 {
					break
				}
				var sh *bound
				if a.shift != nil {
					if s, ok := a.shift.minus(b.lo); ok {
						sh = &s
					}
				}
				return sym{kind: ranged, lo: lo, hi: hi, shift: sh}
			}
			// a - c is in [a.lo - c, a.hi - c].
			b = point(bound{off: -b.lo.off})
		}
		lo, ok1 := a.lo.plus(b.lo)
		hi, ok2 := a.hi.plus(b.hi)
		if ok1 && ok2 {
			return sym{kind: ranged, lo: lo, hi: hi, shift: shifted(a, b)}
		}
	}
	return sym{}
}

// shifted returns the shift of a + b, when one is the fold's index plus a
// shift and the other fixed for the loop (a point), else nil.
func shifted(a, b sym) *bound {
	if b.shift != nil {
		a, b = b, a
	}
	if a.shift == nil || b.shift != nil || !b.lo.equal(b.hi) {
		return nil
	}
	sh, ok := a.shift.plus(b.lo)
	if !ok {
		return nil
	}
	return &sh
}

// effects notes what call e (whose arguments are args) does to memory,
// for ivdep: the state's tensors it reads (but for its size, and the
// tensor an $addAt updates), and whether it may write anything else. A
// primitive of the language writes nothing (it reads, or makes new
// tensors), nor do $unwrap and $dummy; a function may.
func (v *versioner) effects(e *ir.Call, args []sym) {
	switch {
	case e.Fn != nil:
		v.writes = true
	case e.Prim == nil:
	case e.Prim.Name == "size":
		return
	case strings.HasPrefix(e.Prim.Name, "$"):
		switch e.Prim.Name {
		case "$addAt", "$unwrap", "$dummy", "$ifold", "$ifoldr":
		default:
			v.writes = true
		}
	}
	for k, a := range args {
		if k == 0 && e.Prim != nil && e.Prim.Name == "$addAt" {
			continue
		}
		v.readsOf(a)
	}
}

// readsOf notes the state's tensors in s as read.
func (v *versioner) readsOf(s sym) {
	switch s.kind {
	case sized:
		if v.state != "" && (s.base == v.state || strings.HasPrefix(s.base, v.state+".")) {
			if v.reads == nil {
				v.reads = map[string]bool{}
			}
			v.reads[s.base] = true
		}
	case tuple:
		for _, x := range s.elems {
			v.readsOf(x)
		}
	}
}

// ivdep returns the conditions under which the loop of a fold may be
// preceded by KS_IVDEP (runtime/c/ksc_runtime.h; withIvdep emits it
// under them, in the copy of the loop without checks), and whether it
// may be at all: a fold with no loop inside, whose only writes are the $addAt of
// reverse loops, each at the fold's index plus a shift into a vector of
// Floats of the state (or into one row, fixed for the loop, of a matrix
// or higher tensor of the state: the row is contiguous), whose index check
// g proves (so that the shifts lie between 0 and a size when the
// conditions are evaluated), and which reads those tensors in no other
// way.
//
// Such a loop has no dependence between iterations through memory but
// these updates: the state's tensors are accumulators, each held by the
// state alone (an $addAt updates its tensor in place, which the
// translation to reverse mode allows only of a tensor no other value
// shares), and everything else the body reads is only read. Two updates
// of one vector at shifts a and b touch the same element in iterations
// |a - b| apart, which a vector loop runs in order, as the scalar loop
// does, if |a - b| is at least the widest vector of doubles (8, AVX-512):
// those are the conditions. So the vector loop adds the same values to
// each element in the same order, and computes the same bits.
func (v *versioner) ivdep(lam *ir.Lam, proven func(*ir.Call) bool) ([]string, bool) {
	if v.state == "" || v.writes || len(v.stores) == 0 || hasLoop(lam.Body) {
		return nil, false
	}
	shifts := map[string][]bound{}
	rows := map[string][]bound{} // of a tensor of rank > 1: the fixed indices before the last
	var bases []string
	for _, st := range v.stores {
		t := st.call.Args[0].Type()
		idx, lead, ok := lastIndex(st.idx, t.Rank)
		if !ok || st.target.kind != sized || v.reads[st.target.base] || idx.shift == nil ||
			!proven(st.call) || t.Elem.Kind != types.Float {
			return nil, false
		}
		b := st.target.base
		if b != v.state && !strings.HasPrefix(b, v.state+".") {
			return nil, false
		}
		if _, ok := shifts[b]; !ok {
			bases = append(bases, b)
			rows[b] = lead
		} else if !sameBounds(rows[b], lead) {
			return nil, false // updates of two rows: not analysed
		}
		dup := false
		for _, x := range shifts[b] {
			dup = dup || x.equal(*idx.shift)
		}
		if !dup {
			shifts[b] = append(shifts[b], *idx.shift)
		}
	}
	const width = 8
	var conds []string
	for _, b := range bases {
		sh := shifts[b]
		for i := range sh {
			for j := i + 1; j < len(sh); j++ {
				x, y := sh[i], sh[j]
				if len(x.atoms) == 0 && len(y.atoms) == 0 {
					if d := x.off - y.off; d < width && d > -width {
						return nil, false
					}
					continue
				}
				if len(x.atoms) == 0 && x.off == 0 {
					x, y = y, x
				}
				d := x.c()
				if len(y.atoms) > 0 || y.off != 0 {
					d += " - " + y.c()
				}
				conds = append(conds, fmt.Sprintf("(%s >= %d || %s <= -%d)", d, width, d, width))
			}
		}
	}
	return conds, true
}

// lastIndex splits the index of an $addAt into a tensor of the given rank
// into its last component and the ones before, which must be fixed for
// the loop: the updates of a matrix's row at the fold's index plus a
// shift are then as a vector's (the row is contiguous).
func lastIndex(idx sym, rank int) (sym, []bound, bool) {
	if rank == 1 {
		return idx, nil, true
	}
	if idx.kind != tuple || len(idx.elems) != rank {
		return sym{}, nil, false
	}
	var lead []bound
	for _, e := range idx.elems[:rank-1] {
		if e.kind != ranged || e.shift != nil || !e.lo.equal(e.hi) {
			return sym{}, nil, false
		}
		lead = append(lead, e.lo)
	}
	return idx.elems[rank-1], lead, true
}

// sameBounds reports whether a and b hold equal bounds.
func sameBounds(a, b []bound) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].equal(b[i]) {
			return false
		}
	}
	return true
}

// c returns b as a C expression, parenthesised.
func (b bound) c() string {
	parts := append([]string(nil), b.atoms...)
	if b.off != 0 || len(parts) == 0 {
		parts = append(parts, strconv.FormatInt(b.off, 10))
	}
	return "(" + strings.Join(parts, " + ") + ")"
}

// isLoop reports whether the primitive is a loop the analysis follows
// (build, sumbuild, $ifold, $ifoldr).
func isLoop(name string) bool {
	switch name {
	case "build", "sumbuild", "$ifold", "$ifoldr":
		return true
	}
	return false
}

// conditions returns the C conditions under which the check cannot fail
// whenever it runs, and whether there are any.
func (c boundsCheck) conditions() ([]string, bool) {
	if c.size.kind != sized {
		return nil, false
	}
	idx := []sym{c.idx}
	if c.rank != 1 {
		if c.idx.kind != tuple || len(c.idx.elems) != c.rank {
			return nil, false
		}
		idx = c.idx.elems
	}
	sizes := sizesOf(c.size.base, c.rank)
	var out []string
	for d, x := range idx {
		if x.kind != ranged {
			return nil, false
		}
		lo, ok := atLeastZero(x.lo)
		if !ok {
			return nil, false
		}
		hi, ok := below(x.hi, sizes[d])
		if !ok {
			return nil, false
		}
		out = append(out, lo...)
		out = append(out, hi...)
	}
	return out, true
}

// atLeastZero returns the conditions under which b >= 0.
func atLeastZero(b bound) ([]string, bool) {
	switch len(b.atoms) {
	case 0:
		return nil, b.off >= 0
	case 1:
		return []string{fmt.Sprintf("%s >= %d", b.atoms[0], -b.off)}, true
	}
	if b.off < 0 {
		return nil, false
	}
	return []string{b.atoms[0] + " >= 0", b.atoms[1] + " >= 0"}, true
}

// below returns the conditions under which b < s, for a size s (at most
// KS_MAX_COUNT, so s plus or minus a small constant does not overflow).
func below(b bound, s string) ([]string, bool) {
	limit := s // b.atoms < limit, for b.off = 0
	switch {
	case b.off == -1:
		limit = s + " + 1"
	case b.off != 0:
		limit = fmt.Sprintf("%s - (%d)", s, b.off)
	}
	switch len(b.atoms) {
	case 0:
		return []string{fmt.Sprintf("%d < %s", b.off, s)}, true
	case 1:
		if b.off == -1 {
			return []string{b.atoms[0] + " <= " + s}, true // a loop's count
		}
		return []string{fmt.Sprintf("%s < %s", b.atoms[0], limit)}, true
	}
	// a0 + a1 < limit, without overflow: 0 <= a0 < limit, then a1 < limit - a0.
	a0, a1 := b.atoms[0], b.atoms[1]
	return []string{fmt.Sprintf("%s >= 0 && %s < %s && %s < %s - %s", a0, a0, limit, a1, paren(limit), a0)}, true
}

// versioned emits a loop (by loop) under guard g: the loop without the
// checks g proves when g's test holds, the loop as it is otherwise.
func (f *fn) versioned(g *guard, loop func()) {
	if g == nil {
		loop()
		return
	}
	saved := f.proven
	defer func() { f.proven = saved }()
	if g.cond == "" {
		// Every check g proves holds of every loop index.
		f.proven = union(saved, g.proven)
		f.withIvdep(g, loop)
		return
	}
	f.line("if (%s) {", g.cond)
	f.indent++
	f.proven = union(saved, g.proven)
	f.versions++
	f.withIvdep(g, loop)
	f.versions--
	f.proven = saved
	f.indent--
	f.line("} else {")
	f.indent++
	// The loop as it was, with its checks; its inner loops are not
	// versioned again, so a nest's code is twice its size, no more.
	f.versions += maxVersionDepth
	loop()
	f.versions -= maxVersionDepth
	f.indent--
	f.line("}")
}

// withIvdep emits the loop without the checks g proves: preceded by
// KS_IVDEP where g allows it, under g.ivcond if that is not "" (and as it
// is otherwise).
func (f *fn) withIvdep(g *guard, loop func()) {
	if !g.ivdep {
		loop()
		return
	}
	if g.ivcond == "" {
		f.ivdep = true
		loop()
		return
	}
	f.line("if (%s) {", g.ivcond)
	f.indent++
	f.ivdep = true
	loop()
	f.indent--
	f.line("} else {")
	f.indent++
	loop()
	f.indent--
	f.line("}")
}

// rank1Guard is guardFor of a build or sumbuild, whose index space has the
// given sizes: loops over more than one dimension are not versioned.
func (f *fn) rank1Guard(lam *ir.Lam, sizes []string, sc *env) *guard {
	if len(sizes) != 1 {
		return nil
	}
	return f.guardFor(lam, sizes[0], "", sc)
}

// union returns the checks proven by a or b.
func union(a, b map[*ir.Call]bool) map[*ir.Call]bool {
	u := make(map[*ir.Call]bool, len(a)+len(b))
	for c := range a {
		u[c] = true
	}
	for c := range b {
		u[c] = true
	}
	return u
}

// hasLoop reports whether e runs a loop: it has a lambda (the argument of
// build, sumbuild, a fold, ...) other than that of a sum emitted as
// straight-line code (straightSum).
func hasLoop(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if isStraightSum(x) {
			return false
		}
		if _, ok := x.(*ir.Lam); ok {
			found = true
		}
		return !found
	})
	return found
}
