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
// out the checks that cannot fail; for the others of an innermost loop (a
// loop whose body runs no loop) whose index is the loop index plus a value
// fixed for the whole loop, or such a value alone, and whose tensor's
// sizes are fixed for the whole loop, one test before the loop decides
// them all:
//
//	if (n <= 0 || (k < s && n <= s - k) && ...) {
//	  for (i = 0; i < n; i++) ... v.data[i + k] ...   /* no checks */
//	} else {
//	  for (i = 0; i < n; i++) ... check i + k < s; v.data[i + k] ...
//	}
//
// The second copy is the loop as it was, so a program whose index is out
// of range fails exactly where and how it did: the test before the loop
// only chooses which copy runs, and never fails itself.
//
// A tensor's sizes are fixed for the loop when it is defined outside the
// loop, or it is a part of a fold's state that every iteration replaces by
// the result of $addAt or $setAt on it (the accumulators of reverse
// loops): the sizes of that part are the initial state's.

// A guard is the test before a loop and the index checks it proves.
type guard struct {
	cond   string
	proven map[*ir.Call]bool
}

// A sym is what the analysis knows of a value of the loop body.
type sym struct {
	kind  symKind
	base  string // affine: a C atom fixed for the loop, "" for 0; sized: a C path with the value's sizes
	index bool   // affine: plus the loop index
	elems []sym  // tuple
}

type symKind uint8

const (
	unknown symKind = iota
	affine          // an Integer: base, plus the loop index if index is set
	sized           // a tensor with the sizes of base
	tuple           // a tuple of elems
)

// A boundsCheck is an index check of the body: idx into a tensor of size.
type boundsCheck struct {
	call *ir.Call
	idx  sym
	size sym
	rank int
}

// versioner analyses the body of one loop.
type versioner struct {
	f      *fn
	sc     *env // the scope outside the loop
	local  map[string]sym
	checks []boundsCheck
}

// guardFor returns the guard of a loop that runs lam with the loop index
// (or, for a fold, with the state and the loop index), from 0 to below n.
// state is the C name of the fold's state before the loop, "" for build
// and sumbuild. It returns nil when no check can be proven, or lam's body
// runs a loop.
func (f *fn) guardFor(lam *ir.Lam, n, state string, sc *env) *guard {
	if hasLoop(lam.Body) || !isAtom(n) {
		return nil
	}
	checks, ok := f.loopChecks(lam, state, sc, true)
	if !ok {
		checks, _ = f.loopChecks(lam, state, sc, false)
	}
	g := &guard{proven: map[*ir.Call]bool{}}
	var conds []string
	seen := map[string]bool{}
	for _, c := range checks {
		cs, ok := c.conditions(n)
		if !ok {
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
	if len(g.proven) == 0 {
		return nil
	}
	if len(conds) > 0 {
		g.cond = fmt.Sprintf("%s <= 0 || (%s)", n, strings.Join(conds, " && "))
	}
	return g
}

// loopChecks walks the loop body and returns its index checks. With
// withState, the parts of a fold's state are taken to keep their sizes;
// ok reports whether the body's new state bears that out.
func (f *fn) loopChecks(lam *ir.Lam, state string, sc *env, withState bool) ([]boundsCheck, bool) {
	v := &versioner{f: f, sc: sc, local: map[string]sym{}}
	i := sym{kind: affine, index: true}
	var st sym
	if state != "" {
		if withState {
			st = stateSym(state, lam.Param.T.Elems[0])
		}
		v.local[lam.Param.Name] = sym{kind: tuple, elems: []sym{st, i}}
	} else {
		v.local[lam.Param.Name] = i
	}
	r := v.walk(lam.Body)
	return v.checks, state == "" || !withState || keepsSizes(r, st)
}

// stateSym is the sym of a fold's state of type t, held in C path p, whose
// tensors keep their sizes.
func stateSym(p string, t *types.Type) sym {
	switch t.Kind {
	case types.Tensor:
		return sym{kind: sized, base: p}
	case types.Tuple:
		s := sym{kind: tuple}
		for k, et := range t.Elems {
			s.elems = append(s.elems, stateSym(p+".f"+strconv.Itoa(k), et))
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
	if s.kind != t.kind || s.base != t.base || s.index != t.index || len(s.elems) != len(t.elems) {
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
		if n, ok := e.Val.(int64); ok && n >= 0 {
			return sym{kind: affine, base: strconv.FormatInt(n, 10)}
		}
	case *ir.Var:
		if s, ok := v.local[e.Name]; ok {
			return s
		}
		c := v.sc.lookup(e.Name)
		switch {
		case e.T.Kind == types.Integer && isAtom(c):
			return sym{kind: affine, base: c}
		case e.T.Kind == types.Tensor && isPath(c):
			return sym{kind: sized, base: c}
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
		args[k] = v.walk(a)
	}
	if e.Prim == nil || len(e.Args) < 2 {
		return sym{}
	}
	switch e.Prim.Name {
	case "index":
		v.checks = append(v.checks, boundsCheck{call: e, idx: args[0], size: args[1], rank: e.Args[1].Type().Rank})
	case "$addAt", "$setAt":
		v.checks = append(v.checks, boundsCheck{call: e, idx: args[1], size: args[0], rank: e.Args[0].Type().Rank})
		return args[0]
	case "add":
		// The loop index plus a value fixed for the loop.
		a, b := args[0], args[1]
		if a.kind == affine && b.kind == affine && a.index != b.index {
			if b.index {
				a, b = b, a
			}
			if a.base == "" {
				return sym{kind: affine, index: true, base: b.base}
			}
		}
	}
	return sym{}
}

// conditions returns the C conditions under which the check cannot fail,
// for a loop index below n (n > 0), and whether there are any.
func (c boundsCheck) conditions(n string) ([]string, bool) {
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
		if x.kind != affine {
			return nil, false
		}
		s := sizes[d]
		switch {
		case !x.index:
			out = append(out, fmt.Sprintf("(uint64_t)%s < (uint64_t)%s", x.base, s))
		case x.base == "":
			out = append(out, fmt.Sprintf("%s <= %s", n, s))
		default:
			// x.base < s, so s - x.base does not overflow.
			out = append(out, fmt.Sprintf("(uint64_t)%s < (uint64_t)%s && %s <= %s - %s", x.base, s, n, s, x.base))
		}
	}
	return out, true
}

// hasLoop reports whether e runs a loop: it has a lambda (the argument of
// build, sumbuild, a fold, ...).
func hasLoop(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if _, ok := x.(*ir.Lam); ok {
			found = true
		}
		return !found
	})
	return found
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
		f.proven = g.proven
		loop()
		return
	}
	f.line("if (%s) {", g.cond)
	f.indent++
	f.proven = g.proven
	loop()
	f.proven = saved
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
