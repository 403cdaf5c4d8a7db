package cemit

import (
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/types"
)

// Reductions (Options.Threads).
//
// A reverse pass sums each iteration's contribution into accumulators: the
// loop over GMM's points is an $ifold whose state is the gradients of the
// parameters, and whose body only adds into them. Such a fold is a
// reduction, init + g(0) + ... + g(n-1), and runs on threads in chunks: the
// iterations are cut into KS_PAR_CHUNKS ranges (a number fixed in the
// runtime, whatever the threads), each range runs from a zero state of its
// own, and after the loop the chunks' states are added into init in chunk
// order. So the result does not depend on how many threads run it; it may
// differ from the serial loop's in the last bits, as any other order of the
// additions. A field that each iteration updates only at its own index (the
// gradient with respect to each point) needs no zero state: the chunks
// update their disjoint parts of it in place.
//
// reduction decides it from the body, by following what each value is to
// the state: an accumulator (a state field, or an element of one reached by
// index), or plain (a value that does not depend on the state's values,
// local when the body made it). An accumulator may only be added into
// ($addTo, $addAt, add of a Float), read for its size or zero
// (size, ts_zero), indexed to an element accumulator, have an element it
// was indexed to stored back ($setAt), be passed as the accumulator of a
// reverse pass ([revacc f], [bogrev f], which add into their last
// argument), or be the state of an inner fold that is a reduction of it in
// turn; and the body must return each field in its place. Anything else
// reads an accumulator's values, and the loop stays serial. An in-place
// update of a plain value must be of a local one: a value bound outside the
// loop is shared by the chunks.

// A role is what a value in a reduction's body is to its state.
type role struct {
	kind  roleKind
	at    string  // accKind: the state field and indices it is (".1[j]")
	elems []*role // tupleKind
	index bool    // localKind: the loop's index
}

type roleKind int

const (
	sharedKind roleKind = iota // plain, bound outside the body
	localKind                  // plain, made by the body
	accKind
	tupleKind
	hiddenKind // an accumulator of an outer fold, inside an inner lambda
)

var (
	sharedRole = &role{kind: sharedKind}
	localRole  = &role{kind: localKind}
	hiddenRole = &role{kind: hiddenKind}
)

// plain reports whether r holds no accumulator.
func (r *role) plain() bool {
	switch r.kind {
	case sharedKind, localKind:
		return true
	case tupleKind:
		for _, e := range r.elems {
			if !e.plain() {
				return false
			}
		}
		return true
	}
	return false
}

// same reports whether r and s are the same accumulators in the same
// places, plain where the other is plain.
func (r *role) same(s *role) bool {
	if r.plain() && s.plain() {
		return true
	}
	if r.kind != s.kind {
		return false
	}
	switch r.kind {
	case accKind:
		return r.at == s.at
	case tupleKind:
		if len(r.elems) != len(s.elems) {
			return false
		}
		for i := range r.elems {
			if !r.elems[i].same(s.elems[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// stateRole returns the role of a fold's state of type t: field at of the
// state, a tuple of roles for a tuple.
func stateRole(t *types.Type, at string) (*role, bool) {
	switch {
	case t.Kind == types.Tuple:
		r := &role{kind: tupleKind}
		for i, e := range t.Elems {
			er, ok := stateRole(e, at+"."+strconv.Itoa(i))
			if !ok {
				return nil, false
			}
			r.elems = append(r.elems, er)
		}
		return r, true
	case t.Kind == types.Float || t.Kind == types.Tensor && floatsOnly(t.Elem):
		return &role{kind: accKind, at: at}, true
	}
	return nil, false
}

// floatsOnly reports whether t is made of Floats, tensors and tuples.
func floatsOnly(t *types.Type) bool {
	switch t.Kind {
	case types.Float:
		return true
	case types.Tensor:
		return floatsOnly(t.Elem)
	case types.Tuple:
		for _, e := range t.Elems {
			if !floatsOnly(e) {
				return false
			}
		}
		return len(t.Elems) > 0
	}
	return false
}

// isReduction reports whether ($ifold n init lam) is a reduction (see
// above).
func isReduction(init ir.Expr, lam *ir.Lam) bool {
	ok, _ := reduction(init, lam)
	return ok
}

// reduction reports whether ($ifold n init lam) is a reduction, and which
// fields of its state (the state itself if it is not a tuple) each
// iteration updates only at its own index: the loop's iterations write
// disjoint elements of such a field (GMM's gradient with respect to each
// point), which the chunks then update in place, with the serial loop's
// bits, rather than in a zero state of their own.
func reduction(init ir.Expr, lam *ir.Lam) (ok bool, disjoint []bool) {
	st := lam.Param.T
	if st.Kind != types.Tuple || len(st.Elems) != 2 {
		return false, nil
	}
	sr, ok := stateRole(st.Elems[0], "")
	if !ok {
		return false, nil
	}
	// The body must not see init's storage under another name.
	free := ir.FreeVars(lam.Body)
	for v := range ir.FreeVars(init) {
		if free[v] {
			return false, nil
		}
	}
	a := &reduceAnalysis{env: map[string]*role{}, whole: map[string]bool{}}
	a.env[lam.Param.Name] = &role{kind: tupleKind, elems: []*role{sr, {kind: localKind, index: true}}}
	r := a.expr(lam.Body)
	if a.failed || !r.same(sr) || r.plain() {
		return false, nil
	}
	fields := []string{""}
	if sr.kind == tupleKind {
		fields = fields[:0]
		for k := range sr.elems {
			fields = append(fields, "."+strconv.Itoa(k))
		}
	}
	for k, at := range fields {
		disjoint = append(disjoint, !a.whole[at] && st.Elems[0].Kind != types.Float &&
			(at == "" || st.Elems[0].Elems[k].Kind == types.Tensor))
	}
	return true, disjoint
}

type reduceAnalysis struct {
	env    map[string]*role
	failed bool
	// whole holds the state's fields (".0", or "" for a state that is not
	// a tuple) that the body updates other than at the loop's index.
	whole map[string]bool
}

// topField reports whether at names a field of the state (or the whole
// state), not a part of one.
func topField(at string) bool {
	if at == "" {
		return true
	}
	if at[0] != '.' {
		return false
	}
	_, err := strconv.Atoi(at[1:])
	return err == nil
}

// touch records that the body updates the accumulators of r as wholes.
func (a *reduceAnalysis) touch(r *role) {
	switch r.kind {
	case accKind:
		if topField(r.at) {
			a.whole[r.at] = true
		} else if i := strings.IndexAny(r.at[1:], ".["); i >= 0 && r.at[1+i] == '.' {
			a.whole[r.at[:1+i]] = true // a field of a tuple field
		}
	case tupleKind:
		for _, e := range r.elems {
			a.touch(e)
		}
	}
}

// touchAt records an update of accumulator t at index j: of the whole
// field unless j is the loop's index.
func (a *reduceAnalysis) touchAt(t *role, j ir.Expr) {
	if t.kind != accKind {
		return
	}
	if v, ok := j.(*ir.Var); ok {
		if r := a.env[v.Name]; r != nil && r.index {
			return
		}
	}
	a.touch(t)
}

func (a *reduceAnalysis) fail() *role {
	a.failed = true
	return localRole
}

// need evaluates e, which must be plain.
func (a *reduceAnalysis) need(e ir.Expr) *role {
	r := a.expr(e)
	if !r.plain() {
		return a.fail()
	}
	return r
}

// target evaluates the accumulator or local value an in-place update
// writes into.
func (a *reduceAnalysis) target(e ir.Expr) *role {
	r := a.expr(e)
	if !writable(r) {
		return a.fail()
	}
	return r
}

// writable reports whether a value of role r may be updated in place: an
// accumulator, a value the body made, or a tuple of such.
func writable(r *role) bool {
	switch r.kind {
	case accKind, localKind:
		return true
	case tupleKind:
		for _, el := range r.elems {
			if !writable(el) {
				return false
			}
		}
		return true
	}
	return false
}

// key spells an index expression for a role's path: a variable or a
// constant; anything else fails.
func (a *reduceAnalysis) key(e ir.Expr) string {
	switch e := e.(type) {
	case *ir.Var:
		r := a.env[e.Name]
		if r != nil && !r.plain() {
			a.fail()
		}
		if r != nil && r.index {
			return "#i"
		}
		return e.Name
	case *ir.Const:
		if i, ok := e.Val.(int64); ok {
			return strconv.FormatInt(i, 10)
		}
	}
	a.fail()
	return ""
}

func (a *reduceAnalysis) expr(e ir.Expr) *role {
	if a.failed {
		return localRole
	}
	switch e := e.(type) {
	case *ir.Const, *ir.Dummy:
		return localRole
	case *ir.Var:
		if r := a.env[e.Name]; r != nil {
			if r.kind == hiddenKind {
				return a.fail()
			}
			return r
		}
		if !e.T.Contains(types.Tensor) {
			return localRole // a scalar: no storage to share
		}
		return sharedRole
	case *ir.Tuple:
		t := &role{kind: tupleKind}
		local := true
		for _, x := range e.Elems {
			r := a.expr(x)
			t.elems = append(t.elems, r)
			local = local && r.kind == localKind
		}
		if local {
			return localRole
		}
		return t
	case *ir.Get:
		r := a.expr(e.X)
		if r.kind == tupleKind && e.I-1 < len(r.elems) {
			return r.elems[e.I-1]
		}
		if r.plain() {
			return r
		}
		return a.fail()
	case *ir.Let:
		r := a.expr(e.Rhs)
		if !e.Pattern {
			a.env[e.Vars[0].Name] = r
		} else {
			for i, v := range e.Vars {
				switch {
				case r.kind == tupleKind && i < len(r.elems):
					a.env[v.Name] = r.elems[i]
				case r.plain():
					a.env[v.Name] = r
				default:
					return a.fail()
				}
			}
		}
		return a.expr(e.Body)
	case *ir.If:
		a.need(e.Cond)
		t, f := a.expr(e.Then), a.expr(e.Else)
		switch {
		case !t.same(f):
			return a.fail()
		case t.kind == localKind && f.kind == localKind:
			return localRole
		case t.plain():
			return sharedRole
		}
		return t
	case *ir.Assert:
		a.need(e.Cond)
		return a.expr(e.Body)
	case *ir.Call:
		if e.Prim != nil {
			return a.prim(e)
		}
		return a.call(e)
	}
	return a.fail()
}

func (a *reduceAnalysis) prim(e *ir.Call) *role {
	args := e.Args
	switch e.Prim.Name {
	case "$addTo":
		t := a.target(args[0])
		a.need(args[1])
		a.touch(t)
		return t
	case "$addAt":
		t := a.target(args[0])
		a.need(args[1])
		a.need(args[2])
		a.touchAt(t, args[1])
		return t
	case "$setAt":
		t := a.target(args[0])
		a.need(args[1])
		a.touchAt(t, args[1])
		if t.kind == accKind {
			x := a.expr(args[2])
			if x.kind != accKind || x.at != t.at+"["+a.key(args[1])+"]" {
				return a.fail()
			}
			return t
		}
		a.need(args[2])
		return t
	case "index":
		a.need(args[0])
		v := a.expr(args[1])
		if v.kind == accKind {
			a.touchAt(v, args[0])
			return &role{kind: accKind, at: v.at + "[" + a.key(args[0]) + "]"}
		}
		if v.plain() {
			return v
		}
		return a.fail()
	case "size", "ts_zero":
		if r := a.expr(args[0]); r.kind == hiddenKind {
			return a.fail()
		}
		return localRole
	case "add":
		if e.T.Kind == types.Float {
			x, y := a.expr(args[0]), a.expr(args[1])
			switch {
			case x.kind == accKind && y.plain():
				a.touch(x)
				return x
			case y.kind == accKind && x.plain():
				a.touch(y)
				return y
			case x.plain() && y.plain():
				return localRole
			}
			return a.fail()
		}
	case "$ifold", "$ifoldr":
		if lam, ok := args[2].(*ir.Lam); ok {
			a.need(args[0])
			init := a.expr(args[1])
			a.touch(init)
			r := a.inner(lam, &role{kind: tupleKind, elems: []*role{init, localRole}})
			switch {
			case !r.same(init):
				return a.fail()
			case init.kind == localKind:
				return localRole
			case init.plain():
				return sharedRole
			}
			return init
		}
	}
	// Any other primitive reads its arguments' values; its lambdas see no
	// accumulator.
	return a.reads(args)
}

// reads evaluates arguments that a primitive or function only reads. Its
// result is the caller's own unless an argument is shared: it may be that
// argument, or hold it.
func (a *reduceAnalysis) reads(args []ir.Expr) *role {
	out := localRole
	for _, x := range args {
		var r *role
		if lam, ok := x.(*ir.Lam); ok {
			r = a.inner(lam, localRole)
		} else {
			r = a.expr(x)
		}
		if !r.plain() {
			return a.fail()
		}
		if r.kind != localKind {
			out = sharedRole
		}
	}
	return out
}

// inner evaluates lam's body with its parameter of role param; the
// accumulators of enclosing lambdas are hidden from it, since what it does
// to them would be done at each of its iterations.
func (a *reduceAnalysis) inner(lam *ir.Lam, param *role) *role {
	saved := a.env
	a.env = map[string]*role{}
	for k, r := range saved {
		if r.plain() {
			a.env[k] = r
		} else {
			a.env[k] = hiddenRole
		}
	}
	a.env[lam.Param.Name] = param
	r := a.expr(lam.Body)
	a.env = saved
	return r
}

// call evaluates a call of a function: a reverse pass into an accumulator
// ([revacc f], [bogrev f]) adds into its last argument and returns it;
// other functions only read their arguments.
func (a *reduceAnalysis) call(e *ir.Call) *role {
	switch e.Fn.Name.Outer() {
	case "revacc", "bogrev":
		if len(e.Args) > 0 {
			for _, x := range e.Args[:len(e.Args)-1] {
				a.need(x)
			}
			acc := a.target(e.Args[len(e.Args)-1])
			a.touch(acc)
			if acc.plain() {
				return localRole
			}
			return acc
		}
	}
	return a.reads(e.Args)
}

// parallelFold reports whether the $ifold or $ifoldr call e, with body lam,
// runs on threads as a reduction, and which fields of its state are
// updated at disjoint places (see reduction).
func (f *fn) parallelFold(e *ir.Call, lam *ir.Lam) (bool, []bool) {
	if !f.e.opts.Threads || f.e.repeated[f.f] || f.depth != 0 ||
		!heavyBody(lam.Body) || lower.HasEffect(lam.Body, f.e.effects) {
		return false, nil
	}
	return reduction(e.Args[1], lam)
}

// heavyBody reports whether an iteration of a loop with body e may be
// worth a thread: it runs a loop or calls a function. (A reduction of
// scalar code, a reverse pass over a vector, is better vectorised on one
// core.)
func heavyBody(e ir.Expr) bool {
	if hasLoop(e) {
		return true
	}
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && c.Fn != nil {
			found = true
		}
		return !found
	})
	return found
}

// parIfold emits a reduction (see above) over 0 .. n-1 into acc, which
// holds the fold's initial state: each chunk of iterations runs on a
// thread's context from a zero state of its own but for the disjoint
// fields, which it updates in acc, and the chunks' states are then added
// into acc in order. The threads' arenas are emptied after; if an
// iteration stored memory of its thread's into acc (ctx->escaped), acc is
// first copied to the caller's context. A loop
// of fewer than KS_PAR_MIN iterations runs its chunks on the calling
// thread, with the same result.
func (f *fn) parIfold(c *primCall, lam *ir.Lam, n, acc string, disjoint []bool) {
	t := c.e.T
	ct := f.e.ctype(t)
	// The state's fields: C paths and types.
	paths, fts := []string{""}, []*types.Type{t}
	if t.Kind == types.Tuple {
		paths, fts = nil, t.Elems
		for k := range t.Elems {
			paths = append(paths, ".f"+strconv.Itoa(k))
		}
	}
	par, part, ch, esc := f.fresh("par"), f.fresh("part"), f.fresh("ch"), f.fresh("esc")
	f.line("bool %s = false;", esc)
	f.line("ks_par %s;", par)
	f.line("ks_par_begin(ctx, &%s, %d, %s >= KS_PAR_MIN);", par, f.e.parSites, n)
	f.e.parSites++
	f.line("%s %s[KS_PAR_CHUNKS];", ct, part)
	f.line("KS_OMP(parallel for schedule(dynamic, 1) if (%s.team))", par)
	f.line("for (int ch_%s = 0; ch_%s < KS_PAR_CHUNKS; ch_%s++) {", ch, ch, ch)
	f.indent++
	f.depth++
	f.line("int64_t %s = ch_%s;", ch, ch)
	start := f.fresh("start")
	f.line("double %s = ks_par_start(&%s);", start, par)
	f.line("ks_ctx *ctx = ks_par_ctx(&%s);", par)
	f.line("if (setjmp(ctx->jmp)) {")
	f.line("  ks_par_fail(&%s, %s, ctx);", par, ch)
	f.line("  continue;")
	f.line("}")
	st := f.fresh("st")
	f.line("%s %s;", ct, st)
	for k, p := range paths {
		if disjoint[k] {
			f.line("%s%s = %s%s;", st, p, acc, p)
		} else {
			f.line("%s%s = %s(ctx, %s%s);", st, p, f.e.helper("zerolike", fts[k]), acc, p)
		}
	}
	lo, hi := f.fresh("lo"), f.fresh("hi")
	f.line("int64_t %s = ks_par_chunk(%s, %s), %s = ks_par_chunk(%s, %s + 1);", lo, n, ch, hi, n, ch)
	f.ifoldLoop(c, lam, n, st, lo, hi)
	f.line("%s[%s] = %s;", part, ch, st)
	f.line("ks_par_stop(&%s, %s);", par, start)
	f.line("if (ctx->escaped) {")
	f.line("KS_OMP(atomic write)")
	f.line("  %s = true;", esc)
	f.line("}")
	f.depth--
	f.indent--
	f.line("}")
	f.line("ks_par_end(ctx, &%s);", par)
	k := f.fresh("k")
	for i, p := range paths {
		if !disjoint[i] {
			f.line("for (int %s = 0; %s < KS_PAR_CHUNKS; %s++) %s(ctx, %s, &%s%s, %s[%s]%s);",
				k, k, k, f.e.helper("addto", fts[i]), c.ps, acc, p, part, k, p)
		}
	}
	f.line("if (%s) %s = %s(ctx, %s);", esc, acc, f.e.helper("copy", t), acc)
	f.line("ks_par_release(ctx);")
}
