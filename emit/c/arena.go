package cemit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Arena reuse in loops.
//
// Everything generated code allocates lives in the context's arena until
// the caller resets it. A loop whose iterations allocate temporaries (the
// vector x - mu inside a sum over data points, say) would keep all of them:
// n iterations, n temporaries. When nothing an iteration leaves behind can
// point into the arena, the loop takes a mark before its first iteration
// and returns the arena to it at the end of each one, so every iteration
// reuses the same memory, which stays in cache.
//
// What an iteration leaves behind is the value it stores (the element of a
// build or map, the addend of a sum, the new state of a fold) and whatever
// it writes into memory that outlives it. Derived code writes into outer
// accumulators only element by element ($addTo and $addAt add Floats into
// existing memory), except $setAt, which may store a pointer. So a loop
// releases when the stored value's type is uniform (scalars and tuples of
// scalars, which hold no pointers), the body stores no pointer with
// $setAt, and the body may allocate at all (else the mark is wasted work).

// releaseAfter starts arena reuse for a loop about to be emitted, whose
// iterations store values of type t computed by bodies. It returns the
// statement that ends each iteration, or "" when the loop cannot or need
// not release.
func (f *fn) releaseAfter(t *types.Type, bodies ...ir.Expr) string {
	if !t.IsUniform() {
		return ""
	}
	alloc := false
	for _, b := range bodies {
		if storesPointer(b) {
			return ""
		}
		if f.e.mayAllocate(b) {
			alloc = true
		}
	}
	if !alloc {
		return ""
	}
	m := f.fresh("mark")
	f.line("ks_mark %s = ks_arena_mark(ctx);", m)
	return "ks_arena_release(ctx, " + m + ");"
}

// storesPointer reports whether e may store a pointer into memory that
// outlives it: a $setAt of a non-uniform element. (Loops with pointers in
// their state check such stores as they run, below.)
func storesPointer(e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && c.Prim != nil && c.Prim.Name == "$setAt" && !c.T.Elem.IsUniform() {
			found = true
		}
		return !found
	})
	return found
}

// noAlloc lists the primitives that return non-uniform values without
// allocating: they select from or update memory that exists already
// (and so does an identity, ir.Prim.Identity).
var noAlloc = map[string]bool{
	"index": true, "$addTo": true, "$addAt": true, "$setAt": true,
	"$dup": true, "$elim": true, "$outl": true, "$outr": true, "$unwrap": true, "$inl": true, "$inr": true,
}

// mayAllocate reports whether evaluating e may allocate arena memory. It
// may answer true wrongly (the loop then releases nothing), never false.
func (e *emitter) mayAllocate(x ir.Expr) bool {
	found := false
	ir.Inspect(x, func(x ir.Expr) bool {
		c, ok := x.(*ir.Call)
		switch {
		case !ok:
		case c.Fn != nil:
			found = e.funcAllocates(c.Fn)
		case c.Prim != nil && !c.T.IsUniform() && !noAlloc[c.Prim.Name] && !c.Prim.Identity:
			found = true
		}
		return !found
	})
	return found
}

// funcAllocates reports whether calling f may allocate. A function being
// analysed (recursion) is assumed to.
func (e *emitter) funcAllocates(f *ir.Func) bool {
	if a, ok := e.allocates[f]; ok {
		return a
	}
	if f.Body == nil {
		return f.Kind != ir.EdefFunc // an edef'd C function does not see the arena
	}
	e.allocates[f] = true
	a := e.mayAllocate(f.Body)
	e.allocates[f] = a
	return a
}

// Loops whose state holds pointers.
//
// The state of a loop in derived code is mostly accumulators: vectors
// updated in place, so an iteration hands on the same memory it was given
// and everything else it allocated is garbage. Whether that holds is
// checked as the loop runs: the iteration releases its memory when the
// new state's pointers (those reachable through tuples, see pointerPaths)
// equal the old state's, and no $setAt in it stored a different pointer
// into existing memory (ctx->escaped). Otherwise the memory is kept, and
// the mark moves past it.
//
// A loop whose state is one new tensor each iteration (a fold computing
// the next y from y, as an ODE solver or a recurrent network does) would
// keep every iteration's memory that way. When the state holds exactly one
// pointer, to the elements of a tensor of uniform elements, the iteration
// instead releases the arena to the loop's base mark and copies the new
// state's elements there (memmove: released memory stays readable until
// it is allocated again, and the copy never lands above its source): the
// loop then holds one state, not one per iteration. The old state, which
// the copy overwrites, is dead: the new state's pointer differs from it,
// and nothing else the iteration left behind points into the arena (else
// ctx->escaped).
//
// A state of several tensors (a tuple of cotangents, a vector of vectors:
// the reverse pass of a recurrent network makes its state's cotangent
// anew each iteration) is kept the same way, by the helpers below: its
// pieces allocated since base are copied to the context's scratch buffer,
// the arena is released to base, and they are copied back. The state's
// pieces below base are not copied: the iteration did not allocate them,
// and if it had stored a pointer above base into them, ctx->escaped would
// say so. The copy is made only when its bytes are at most half those the
// iteration allocated: it then costs at most a constant factor of the
// iteration's own work (a state holding a large tensor made in an earlier
// iteration, and so above base, would otherwise be copied by every
// iteration), and it at least halves what the iteration keeps. Else the
// memory is kept, as before. (A bound of all the bytes allocated made the
// LSTM objective 5-10% slower: each layer's new state, its hidden and
// cell vectors and the previous layers' rows, was copied twice for the
// little the layer allocated besides.)

// A stateRelease is the arena reuse of one such loop.
type stateRelease struct {
	mark  string   // the ks_mark variable
	paths []string // pointerPaths of the state type
	saved string   // ctx->escaped of the enclosing code, during an iteration
	// copyDown, if not nil, is the one tensor of the state (its path, "" or
	// ".f1") whose elements are copied down to base, the mark below the
	// state's copy; mark is then the one above it.
	copyDown *tensorPath
	// keep: the state is of several tensors, copied through the scratch
	// buffer (a plain type: scalars, tuples and tensors, nested).
	keep bool
	base string
}

// A tensorPath is a tensor inside a loop's state: its C field path from
// the state and its type.
type tensorPath struct {
	path string
	t    *types.Type
}

// singleTensor returns the tensor of a state of type t when that holds
// exactly one pointer, to the elements of a tensor of uniform elements
// (reached through tuples), or nil.
func singleTensor(t *types.Type) *tensorPath {
	switch t.Kind {
	case types.Tensor:
		if t.Elem.IsUniform() {
			return &tensorPath{"", t}
		}
	case types.Tuple:
		var found *tensorPath
		for i, e := range t.Elems {
			if e.IsUniform() {
				continue
			}
			sub := singleTensor(e)
			if sub == nil || found != nil {
				return nil
			}
			found = &tensorPath{".f" + strconv.Itoa(i) + sub.path, sub.t}
		}
		return found
	}
	return nil
}

// beginStateRelease starts arena reuse for a loop with state of type t
// computed by body, or returns nil when it cannot or need not.
func (f *fn) beginStateRelease(t *types.Type, body ir.Expr) *stateRelease {
	if t.IsUniform() || !f.e.mayAllocate(body) {
		return nil
	}
	paths, ok := pointerPaths(t)
	if !ok {
		return nil
	}
	sr := &stateRelease{mark: f.fresh("mark"), paths: paths, copyDown: singleTensor(t)}
	sr.keep = sr.copyDown == nil && t.IsPlain()
	f.line("ks_mark %s = ks_arena_mark(ctx);", sr.mark)
	if sr.copyDown != nil || sr.keep {
		sr.base = f.fresh("base")
		f.line("ks_mark %s = %s;", sr.base, sr.mark)
	}
	return sr
}

// iterStart begins an iteration.
func (f *fn) iterStart(sr *stateRelease) {
	if sr != nil {
		sr.saved = f.saveEscaped()
	}
}

// saveEscaped begins an iteration that may release the arena: it saves
// ctx->escaped of the enclosing code in a variable, which it returns, and
// clears it for the iteration to set.
func (f *fn) saveEscaped() string {
	saved := f.fresh("escaped")
	f.line("bool %s = ctx->escaped;", saved)
	f.line("ctx->escaped = false;")
	return saved
}

// keepCopy returns the test and the statements that keep x, of type t,
// through the scratch buffer (keepsize, keepout, keepin): its pieces
// allocated since base, if they are at most half of what was allocated
// since the mark from, are copied out, the arena is released to base,
// and they are copied back. bytes is a size_t variable for their size.
func (f *fn) keepCopy(t *types.Type, base, from, x, bytes string) (string, []string) {
	cond := fmt.Sprintf("!ctx->escaped && 2 * (%s = %s(ctx, %s, &%s)) <= ctx->in_use - %s.in_use",
		bytes, f.e.helper("keepsize", t), base, x, from)
	return cond, []string{
		fmt.Sprintf("char *%s_at = ks_scratch(ctx, %s);", bytes, bytes),
		fmt.Sprintf("%s(ctx, %s, &%s, &%s_at);", f.e.helper("keepout", t), base, x, bytes),
		fmt.Sprintf("ks_arena_release(ctx, %s);", base),
		fmt.Sprintf("%s(ctx, &%s);", f.e.helper("keepin", t), x),
	}
}

// moveDown emits, each line after indent, the move of v, a tensor of
// type t, down to the arena mark: the arena is released to it and v's
// elements are moved to where it allocates next (memmove: the places may
// overlap). bytes names a new size_t variable for their size.
func (f *fn) moveDown(indent, v string, t *types.Type, mark, bytes string) {
	f.line("%ssize_t %s = (size_t)(%s) * sizeof *%s.data;", indent, bytes, count(v, t.Rank), v)
	f.line("%sks_arena_release(ctx, %s);", indent, mark)
	f.line("%svoid *%s_to = ks_alloc(ctx, %s);", indent, bytes, bytes)
	f.line("%sif (%s > 0) memmove(%s_to, %s.data, %s);", indent, bytes, bytes, v, bytes)
	f.line("%s%s.data = %s_to;", indent, v, bytes)
}

// iterEnd ends an iteration whose new state is x, assigning it to acc.
func (f *fn) iterEnd(sr *stateRelease, acc, x string, t *types.Type) {
	if sr == nil {
		f.line("%s = %s;", acc, x)
		return
	}
	x = f.atom(x, t)
	same := make([]string, len(sr.paths))
	for i, p := range sr.paths {
		same[i] = acc + p + " == " + x + p
	}
	bytes := ""
	if sr.keep {
		bytes = f.fresh("bytes")
		f.line("size_t %s;", bytes)
	}
	f.line("if (!ctx->escaped && %s) {", strings.Join(same, " && "))
	f.line("  ks_arena_release(ctx, %s);", sr.mark)
	if c := sr.copyDown; c != nil {
		v := x + c.path
		bytes = f.fresh("bytes")
		f.line("} else if (!ctx->escaped) {")
		f.moveDown("  ", v, c.t, sr.base, bytes)
		f.line("  %s = ks_arena_mark(ctx);", sr.mark)
	}
	if sr.keep {
		cond, stmts := f.keepCopy(t, sr.base, sr.mark, x, bytes)
		f.line("} else if (%s) {", cond)
		for _, st := range stmts {
			f.line("  %s", st)
		}
		f.line("  %s = ks_arena_mark(ctx);", sr.mark)
	}
	f.line("} else {")
	f.line("  %s = ks_arena_mark(ctx);", sr.mark)
	if sr.base != "" {
		f.line("  %s = %s;", sr.base, sr.mark)
	}
	f.line("}")
	f.line("ctx->escaped = ctx->escaped || %s;", sr.saved)
	f.line("%s = %s;", acc, x)
}

// Builds whose elements hold pointers.
//
// A build whose elements are tensors (a Jacobian block per observation, a
// row per point) cannot release its iterations' memory the way
// releaseAfter does: each element points into it. Without help the arena
// keeps every iteration's temporaries as well, and the elements lie far
// apart among them, which a later loop reading the elements in order
// pays for in cache misses. So each iteration's element is kept as a
// loop's state of several tensors is (above): its pieces allocated since
// the iteration began are copied to the scratch buffer, the arena is
// released to the iteration's start, and they are copied back, when that
// is at most half of what the iteration allocated and nothing it did
// stored a pointer elsewhere (ctx->escaped). The elements then lie next
// to each other, and the temporaries' memory is reused.

// An elemKeep is the arena reuse of one such build.
type elemKeep struct {
	mark  string // the ks_mark variable: where the iteration began
	saved string // ctx->escaped of the enclosing code, during an iteration
}

// beginElemKeep starts keeping the elements of type t of a build whose
// element is computed by body, or returns nil when it cannot or need not
// (elements without pointers are released by releaseAfter). It keeps
// only in a function's outermost loops, whose iterations are large, and
// when the body may allocate something besides its element: else the
// check would cost each element more than it saves (a matrix product's
// rows; the records of a tape made in a loop over data points).
func (f *fn) beginElemKeep(t *types.Type, body ir.Expr) *elemKeep {
	if f.depth > 0 || t.IsUniform() || !t.IsPlain() || storesPointer(body) || !f.e.allocatesBesides(body) {
		return nil
	}
	k := &elemKeep{mark: f.fresh("mark")}
	f.line("ks_mark %s = ks_arena_mark(ctx);", k.mark)
	return k
}

// allocatesBesides reports whether evaluating e may allocate arena memory
// that is not part of its value: a let's value, a function's temporaries,
// what a loop making e's tensors allocates for each element. Like
// mayAllocate, it may answer true wrongly, never false.
func (e *emitter) allocatesBesides(x ir.Expr) bool {
	switch x := x.(type) {
	case *ir.Let:
		return e.mayAllocate(x.Rhs) || e.allocatesBesides(x.Body)
	case *ir.If:
		return e.mayAllocate(x.Cond) || e.allocatesBesides(x.Then) || e.allocatesBesides(x.Else)
	case *ir.Assert:
		return e.mayAllocate(x.Cond) || e.allocatesBesides(x.Body)
	case *ir.Tuple:
		for _, y := range x.Elems {
			if e.allocatesBesides(y) {
				return true
			}
		}
		return false
	case *ir.Get:
		return e.mayAllocate(x.X)
	case *ir.Call:
		if x.Fn != nil {
			return e.funcAllocatesBesides(x.Fn) || e.argsAllocate(x)
		}
		for _, a := range x.Args {
			if lam, ok := a.(*ir.Lam); ok {
				a = lam.Body
			}
			if e.mayAllocate(a) {
				return true
			}
		}
		return false
	}
	return false
}

// argsAllocate reports whether evaluating c's arguments may allocate.
func (e *emitter) argsAllocate(c *ir.Call) bool {
	for _, a := range c.Args {
		if e.mayAllocate(a) {
			return true
		}
	}
	return false
}

// funcAllocatesBesides reports whether calling f may allocate something
// besides its result (allocatesBesides of its body). A function being
// analysed (recursion) is assumed to.
func (e *emitter) funcAllocatesBesides(f *ir.Func) bool {
	if a, ok := e.besides[f]; ok {
		return a
	}
	if f.Body == nil {
		return false // an edef'd C function does not see the arena
	}
	e.besides[f] = true
	a := e.allocatesBesides(f.Body)
	e.besides[f] = a
	return a
}

// elemStart begins an iteration.
func (f *fn) elemStart(k *elemKeep) {
	if k != nil {
		k.saved = f.saveEscaped()
	}
}

// elemEnd ends an iteration whose element is x, of type t, storing it in
// dst, the element's place in the new tensor, where it is kept (the keep
// helpers take its address): a copy kept in a variable of its own lives on
// the stack, stored 8 bytes at a time and copied into dst by a 16-byte
// load, which the processor cannot forward (3% of ba's Jacobian).
func (f *fn) elemEnd(k *elemKeep, x string, t *types.Type, dst string) {
	f.line("%s = %s;", dst, x)
	if k == nil {
		return
	}
	bytes := f.fresh("bytes")
	f.line("size_t %s;", bytes)
	cond, stmts := f.keepCopy(t, k.mark, k.mark, dst, bytes)
	if c := singleTensor(t); c != nil {
		// One tensor of uniform elements: moved down to the mark, where
		// the arena allocates once released (as a loop's state of one
		// tensor is, above), rather than copied out and back.
		f.line("if (%s) {", cond)
		f.line("  if (%s > 0) {", bytes)
		f.moveDown("    ", dst+c.path, c.t, k.mark, bytes+"_n")
		f.line("  } else {")
		f.line("    ks_arena_release(ctx, %s);", k.mark)
		f.line("  }")
		f.line("}")
		f.line("%s = ks_arena_mark(ctx);", k.mark)
		f.line("ctx->escaped = ctx->escaped || %s;", k.saved)
		return
	}
	f.line("if (%s) {", cond)
	for _, st := range stmts {
		f.line("  %s", st)
	}
	f.line("}")
	f.line("%s = ks_arena_mark(ctx);", k.mark)
	f.line("ctx->escaped = ctx->escaped || %s;", k.saved)
}

// pointerPaths returns the C field paths (".f0.data") of the pointers in a
// value of type t that are reachable through tuples, for types built of
// tuples, scalars and tensors only.
func pointerPaths(t *types.Type) ([]string, bool) {
	switch t.Kind {
	case types.Tensor:
		return []string{".data"}, true
	case types.Tuple:
		var out []string
		for i, e := range t.Elems {
			ps, ok := pointerPaths(e)
			if !ok {
				return nil, false
			}
			for _, p := range ps {
				out = append(out, ".f"+strconv.Itoa(i)+p)
			}
		}
		return out, true
	case types.Integer, types.Float, types.Bool, types.String:
		return nil, true
	}
	return nil, false
}

// escapeCheck returns the statement by which $setAt, storing x over the
// element slot, tells the enclosing loops that it stored a pointer they
// do not know about ("" for uniform elements).
func escapeCheck(slot, x string, t *types.Type) string {
	if t.IsUniform() {
		return ""
	}
	paths, ok := pointerPaths(t)
	if !ok {
		return "ctx->escaped = true;"
	}
	diff := make([]string, len(paths))
	for i, p := range paths {
		diff[i] = slot + p + " != " + x + p
	}
	return "if (" + strings.Join(diff, " || ") + ") ctx->escaped = true;"
}

// keepParts emits, for a helper of kind about *x of type t, a call of the
// helper of each non-uniform part: stmt formats the call from the helper's
// name and the part's address.
func keepParts(e *emitter, h *hb, kind string, t *types.Type, stmt func(name, part string) string) {
	switch t.Kind {
	case types.Tuple:
		for i, et := range t.Elems {
			if !et.IsUniform() {
				h.line("%s", stmt(e.helper(kind, et), fmt.Sprintf("&x->f%d", i)))
			}
		}
	case types.Tensor:
		if !t.Elem.IsUniform() {
			h.forEach(count("(*x)", t.Rank), func(i string) {
				h.line("%s", stmt(e.helper(kind, t.Elem), "&x->data["+i+"]"))
			})
		}
	}
}

// tensorBytes emits the declaration of bytes, the size of *x's elements.
func tensorBytes(h *hb, t *types.Type) {
	h.line("size_t bytes = (size_t)(%s) * sizeof *x->data;", count("(*x)", t.Rank))
}

func genKeepSize(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("size_t n = 0;")
	if t.Kind == types.Tensor {
		h.line("if (!ks_above(ctx, base, x->data)) return 0;")
		tensorBytes(h, t)
		h.line("n += ks_round(bytes);")
	}
	keepParts(e, h, "keepsize", t, func(name, part string) string {
		return fmt.Sprintf("n += %s(ctx, base, %s);", name, part)
	})
	h.line("return n;")
	return "size_t", "const ks_ctx *ctx, ks_mark base, const " + e.ctype(t) + " *x"
}

func genKeepOut(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx; (void)base; (void)at;")
	if t.Kind == types.Tensor {
		h.line("if (!ks_above(ctx, base, x->data)) return;")
		tensorBytes(h, t)
		h.line("memcpy(*at, x->data, bytes);")
		h.line("x->data = (void *)*at;")
		h.line("*at += ks_round(bytes);")
	}
	keepParts(e, h, "keepout", t, func(name, part string) string {
		return fmt.Sprintf("%s(ctx, base, %s, at);", name, part)
	})
	return "void", "ks_ctx *ctx, ks_mark base, " + e.ctype(t) + " *x, char **at"
}

func genKeepIn(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx;")
	if t.Kind == types.Tensor {
		h.line("if (!ks_in_scratch(ctx, x->data)) return;")
		tensorBytes(h, t)
		h.line("void *to = ks_alloc(ctx, bytes);")
		h.line("memcpy(to, x->data, bytes);")
		h.line("x->data = to;")
	}
	keepParts(e, h, "keepin", t, func(name, part string) string {
		return fmt.Sprintf("%s(ctx, %s);", name, part)
	})
	return "void", "ks_ctx *ctx, " + e.ctype(t) + " *x"
}
