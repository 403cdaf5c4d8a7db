package cemit

import (
	"fmt"
	"strings"

	"github.com/ksc-lang/ksc/types"
)

// A helper is a C function generated once per type for a polymorphic
// operation. gen returns the helper's parameters (after its name) and body.
type helperGen func(e *emitter, t *types.Type, h *hb) (ret, params string)

// helperGens are the kinds of helper. (A function, not a variable, since
// the generators call helper, which reads the table.)
func helperGens(kind string) helperGen {
	return map[string]helperGen{
		"print":     genPrint,         // void (T x): print in the format of section 6
		"eq":        genEq,            // bool (T a, T b): structural equality
		"copy":      genCopy,          // T (ctx, T x): a copy sharing no tensor memory with x
		"addto":     genAddTo,         // void (ctx, pos, T *acc, T x): *acc += x in place
		"zerolike":  genZeroLike,      // T (ctx, T x): zeros shaped like x
		"zerotan":   genZeroTan,       // dT (ctx, T x): the zero tangent shaped like x
		"shapeof":   genShapeOf,       // Sh(T) (ctx, T x): the shape of x
		"zeros":     genZeros,         // T (ctx, pos, Sh(T) shape): zeros of a shape
		"tsadd":     genTsAdd,         // T (ctx, pos, T x, dT dx)
		"tsscale":   genTsScale,       // T (ctx, double k, T x)
		"tsdot":     genTsDot,         // double (ctx, pos, T a, T b)
		"tsneg":     genTsNeg,         // T (ctx, T x)
		"dotdiff":   genDotDiff,       // double (ctx, pos, T a, T b, dT dt): ts_dot(a - b, dt)
		"checkarg":  genCheckArg,      // void (ctx, pos, arg, T x): x from a host is well formed
		"nfloats":   genNFloats,       // int64_t (T x): how many Floats x holds
		"flatinto":  genFlatInto,      // void (T x, double *out, int64_t *k): x's Floats to out[*k...]
		"flatten":   genFlatten,       // Vec Float (ctx, const T *x): x's Floats in flat order
		"unflatat":  genUnflatAt,      // T (ctx, T t, const double *in, int64_t *k): t, Floats from in[*k...]
		"unflat":    genUnflat,        // T (ctx, pos, Vec Float v, T t): t with v's elements as its Floats
		"patseedat": genPatSeedAt,     // P(T) (ctx, T x, int64_t *k): the sets of x's Floats' positions from *k on
		"patseed":   genPatSeed,       // P(T) (ctx, T x): $patternSeed
		"patcount":  genPatCount,      // void (P p, int64_t *m, int64_t *nnz): count the sets and their elements
		"patfill":   genPatFill,       // void (P p, int64_t *off, int64_t *cols, int64_t *i): write CSR rows from *i on
		"patcsr":    genPatCSR,        // Tuple (Vec Integer) (Vec Integer) (ctx, P p): $patternCSR
		"setunion":  genSetUnion,      // Vec Integer (ctx, Vec Integer a, Vec Integer b): $union
		"colour":    genColour,        // Tuple Bool Integer (Vec Integer) (ctx, pos, off, cols, n): $colour
		"colourcol": genColourColumns, // Tuple Integer (Vec Integer) (ctx, pos, off, cols, n): $colourColumns
		"unionall":  genUnionAll,      // Vec Integer (ctx, Vec (Vec Integer) sets): $unionAll
		"pairs":     genPairs,         // Vec Integer (ctx, pos, Vec Integer a, Vec Integer b): $pairs
		"inl":       genInl,           // T (L x): $inl, the whole variant initialised
		"inr":       genInr,           // T (R x): $inr, the whole variant initialised
		"pairscsr":  genPairsCSR,      // Tuple (Vec Integer) (Vec Integer) (ctx, pos, pairs, off, cols, n, withJ): $pairsCSR
		"keepsize":  genKeepSize,      // size_t (ctx, ks_mark base, const T *x): the bytes of x's pieces above base
		"keepout":   genKeepOut,       // void (ctx, base, T *x, char **at): those pieces to the scratch buffer
		"keepin":    genKeepIn,        // void (ctx, T *x): x's pieces in the scratch buffer back to the arena
	}[kind]
}

// hb builds a helper's body.
type hb struct {
	b      strings.Builder
	indent int
	n      int
}

func (h *hb) line(format string, args ...any) {
	h.b.WriteString(strings.Repeat("  ", h.indent+1))
	fmt.Fprintf(&h.b, format, args...)
	h.b.WriteByte('\n')
}

func (h *hb) fresh(base string) string {
	h.n++
	return fmt.Sprintf("%s%d", base, h.n)
}

// forEach emits a loop over the n elements of tensors, with body inside.
func (h *hb) forEach(n string, body func(i string)) {
	i := h.fresh("i")
	h.line("for (int64_t %s = 0; %s < %s; %s++) {", i, i, n, i)
	h.indent++
	body(i)
	h.indent--
	h.line("}")
}

// helper returns the name of the helper of the given kind for type t,
// generating it on first use.
func (e *emitter) helper(kind string, t *types.Type) string {
	key := kind + "_" + e.namer.Name(t)
	if n, ok := e.helpers[key]; ok {
		return n
	}
	name := "ksh_" + key
	e.helpers[key] = name
	h := &hb{}
	ret, params := helperGens(kind)(e, t, h)
	sig := fmt.Sprintf("%s %s(%s)", ret, name, params)
	fmt.Fprintf(&e.helperDecls, "static KS_UNUSED %s;\n", sig)
	fmt.Fprintf(&e.helperDefs, "\n/* %s of %s */\nstatic %s {\n%s}\n", kind, commentSafe(types.Brief(t)), sig, h.b.String())
	return name
}

// sameSizes emits checks that tensors a and b of type t have equal sizes.
func sameSizes(h *hb, t *types.Type, a, b string) {
	for d, s := range sizesOf(a, t.Rank) {
		h.line("ks_check_same_size(ctx, pos, %s, %s);", s, sizesOf(b, t.Rank)[d])
	}
}

// newLike emits the allocation of tensor r of type rt with the sizes of x.
func newLike(e *emitter, h *hb, rt *types.Type, r, x string) {
	h.line("%s %s;", e.ctype(rt), r)
	if rt.Rank == 1 {
		h.line("%s.size = %s.size;", r, x)
	} else {
		h.line("memcpy(%s.size, %s.size, sizeof %s.size);", r, x, r)
	}
	h.line("%s.data = ks_alloc_array(ctx, \"\", %s, sizeof *%s.data);", r, count(x, rt.Rank), r)
}

func genPrint(e *emitter, t *types.Type, h *hb) (string, string) {
	switch t.Kind {
	case types.Float, types.Integer, types.Bool, types.String:
		h.line("ks_print_%s(x);", types.Mangle(t))
	case types.Tuple:
		for i, et := range t.Elems {
			if i > 0 {
				h.line("putchar(',');")
			}
			h.line("%s(x.f%d);", e.helper("print", et), i)
		}
		if len(t.Elems) == 0 {
			h.line("(void)x;")
		}
	case types.Tensor:
		elem := e.helper("print", t.Elem)
		if t.Rank == 1 {
			h.line("putchar('[');")
			h.forEach("x.size", func(i string) {
				h.line("if (%s > 0) fputs(\", \", stdout);", i)
				h.line("%s(x.data[%s]);", elem, i)
			})
			h.line("putchar(']');")
			break
		}
		// Nested brackets, one level per dimension.
		h.line("int64_t k = 0;")
		var rec func(d int)
		rec = func(d int) {
			h.line("putchar('[');")
			h.forEach(fmt.Sprintf("x.size[%d]", d), func(i string) {
				h.line("if (%s > 0) fputs(\", \", stdout);", i)
				if d == t.Rank-1 {
					h.line("%s(x.data[k++]);", elem)
				} else {
					rec(d + 1)
				}
			})
			h.line("putchar(']');")
		}
		rec(0)
	}
	return "void", e.ctype(t) + " x"
}

func genEq(e *emitter, t *types.Type, h *hb) (string, string) {
	switch t.Kind {
	case types.Float, types.Integer, types.Bool:
		h.line("return a == b;")
	case types.String:
		h.line("return strcmp(a, b) == 0;")
	case types.Tuple:
		var cs []string
		for i, et := range t.Elems {
			cs = append(cs, fmt.Sprintf("%s(a.f%d, b.f%d)", e.helper("eq", et), i, i))
		}
		if len(cs) == 0 {
			h.line("(void)a; (void)b;")
			cs = []string{"true"}
		}
		h.line("return %s;", strings.Join(cs, " && "))
	case types.Tensor:
		for d, s := range sizesOf("a", t.Rank) {
			h.line("if (%s != %s) return false;", s, sizesOf("b", t.Rank)[d])
		}
		h.forEach(count("a", t.Rank), func(i string) {
			h.line("if (!%s(a.data[%s], b.data[%s])) return false;", e.helper("eq", t.Elem), i, i)
		})
		h.line("return true;")
	}
	return "bool", e.ctype(t) + " a, " + e.ctype(t) + " b"
}

func genCopy(e *emitter, t *types.Type, h *hb) (string, string) {
	switch t.Kind {
	case types.Float, types.Integer, types.Bool, types.String:
		h.line("(void)ctx;")
		h.line("return x;")
	case types.Tuple:
		h.line("%s r = x;", e.ctype(t))
		for i, et := range t.Elems {
			if !et.IsScalar() {
				h.line("r.f%d = %s(ctx, x.f%d);", i, e.helper("copy", et), i)
			}
		}
		h.line("(void)ctx;")
		h.line("return r;")
	case types.Tensor:
		newLike(e, h, t, "r", "x")
		if t.Elem.IsUniform() {
			h.line("if (%s > 0) memcpy(r.data, x.data, (size_t)(%s) * sizeof *r.data);", count("x", t.Rank), count("x", t.Rank))
		} else {
			h.forEach(count("x", t.Rank), func(i string) {
				h.line("r.data[%s] = %s(ctx, x.data[%s]);", i, e.helper("copy", t.Elem), i)
			})
		}
		h.line("return r;")
	}
	return e.ctype(t), "ks_ctx *ctx, " + e.ctype(t) + " x"
}

func genAddTo(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx; (void)pos;")
	switch t.Kind {
	case types.Float:
		h.line("*acc += x;")
	case types.Integer:
		h.line("*acc = ks_iadd(*acc, x);")
	case types.Tuple:
		for i, et := range t.Elems {
			h.line("%s(ctx, pos, &acc->f%d, x.f%d);", e.helper("addto", et), i, i)
		}
		if len(t.Elems) == 0 {
			h.line("(void)acc; (void)x;")
		}
	case types.Tensor:
		sameSizes(h, t, "(*acc)", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			switch t.Elem.Kind {
			case types.Float:
				h.line("acc->data[%s] += x.data[%s];", i, i)
			default:
				h.line("%s(ctx, pos, &acc->data[%s], x.data[%s]);", e.helper("addto", t.Elem), i, i)
			}
		})
	}
	return "void", "ks_ctx *ctx, const char *pos, " + e.ctype(t) + " *acc, " + e.ctype(t) + " x"
}

// zeroScalar returns the zero of a uniform type as a C expression.
func (e *emitter) zeroScalar(t *types.Type) string {
	switch t.Kind {
	case types.Float:
		return "0.0"
	case types.Integer:
		return "0"
	case types.Bool:
		return "false"
	case types.String:
		return `""`
	}
	return "(" + e.ctype(t) + "){0}"
}

func genZeroLike(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx; (void)x;")
	switch t.Kind {
	case types.Tuple:
		h.line("%s r;", e.ctype(t))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, x.f%d);", i, e.helper("zerolike", et), i)
		}
		if len(t.Elems) == 0 {
			h.line("r.unused = 0;")
		}
		h.line("return r;")
	case types.Tensor:
		newLike(e, h, t, "r", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			if t.Elem.IsUniform() {
				h.line("r.data[%s] = %s;", i, e.zeroScalar(t.Elem))
			} else {
				h.line("r.data[%s] = %s(ctx, x.data[%s]);", i, e.helper("zerolike", t.Elem), i)
			}
		})
		h.line("return r;")
	default:
		h.line("return %s;", e.zeroScalar(t))
	}
	return e.ctype(t), "ks_ctx *ctx, " + e.ctype(t) + " x"
}

func genZeros(e *emitter, t *types.Type, h *hb) (string, string) {
	sh, _ := types.Shape(t)
	h.line("(void)ctx; (void)pos; (void)shape;")
	switch {
	case t.IsUniform():
		h.line("return %s;", e.zeroScalar(t))
	case t.Kind == types.Tuple:
		h.line("%s r;", e.ctype(t))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, pos, shape.f%d);", i, e.helper("zeros", et), i)
		}
		h.line("return r;")
	case t.Kind == types.Tensor:
		h.line("%s r;", e.ctype(t))
		var sizes []string
		switch {
		case t.Elem.IsUniform() && t.Rank == 1:
			sizes = []string{"shape"}
		case t.Elem.IsUniform():
			for d := 0; d < t.Rank; d++ {
				sizes = append(sizes, fmt.Sprintf("shape.f%d", d))
			}
		default:
			sizes = sizesOf("shape", t.Rank)
		}
		if t.Rank == 1 {
			h.line("r.size = %s;", sizes[0])
			h.line("int64_t n = r.size;")
		} else {
			for d, s := range sizes {
				h.line("r.size[%d] = %s;", d, s)
			}
			h.line("int64_t n = ks_count(ctx, pos, %d, r.size);", t.Rank)
		}
		h.line("r.data = ks_alloc_array(ctx, pos, n, sizeof *r.data);")
		h.forEach("n", func(i string) {
			if t.Elem.IsUniform() {
				h.line("r.data[%s] = %s;", i, e.zeroScalar(t.Elem))
			} else {
				h.line("r.data[%s] = %s(ctx, pos, shape.data[%s]);", i, e.helper("zeros", t.Elem), i)
			}
		})
		h.line("return r;")
	}
	return e.ctype(t), "ks_ctx *ctx, const char *pos, " + e.ctype(sh) + " shape"
}

func genTsAdd(e *emitter, t *types.Type, h *hb) (string, string) {
	dt, _ := types.Tangent(t)
	h.line("(void)ctx; (void)pos; (void)dx;")
	switch t.Kind {
	case types.Float:
		h.line("return x + dx;")
	case types.Integer, types.Bool, types.String:
		h.line("return x;")
	case types.Tuple:
		h.line("%s r;", e.ctype(t))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, pos, x.f%d, dx.f%d);", i, e.helper("tsadd", et), i, i)
		}
		if len(t.Elems) == 0 {
			h.line("r = x;")
		}
		h.line("return r;")
	case types.Tensor:
		sameSizes(h, t, "x", "dx")
		newLike(e, h, t, "r", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			h.line("r.data[%s] = %s(ctx, pos, x.data[%s], dx.data[%s]);", i, e.helper("tsadd", t.Elem), i, i)
		})
		h.line("return r;")
	}
	return e.ctype(t), "ks_ctx *ctx, const char *pos, " + e.ctype(t) + " x, " + e.ctype(dt) + " dx"
}

func genTsScale(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx; (void)k;")
	switch t.Kind {
	case types.Float:
		h.line("return k * x;")
	case types.Integer, types.Bool, types.String:
		h.line("return x;")
	case types.Tuple:
		h.line("%s r = x;", e.ctype(t))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, k, x.f%d);", i, e.helper("tsscale", et), i)
		}
		h.line("return r;")
	case types.Tensor:
		newLike(e, h, t, "r", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			h.line("r.data[%s] = %s(ctx, k, x.data[%s]);", i, e.helper("tsscale", t.Elem), i)
		})
		h.line("return r;")
	}
	return e.ctype(t), "ks_ctx *ctx, double k, " + e.ctype(t) + " x"
}

func genTsNeg(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx;")
	switch t.Kind {
	case types.Float:
		h.line("return -x;")
	case types.Integer, types.Bool, types.String:
		h.line("return x;")
	case types.Tuple:
		h.line("%s r = x;", e.ctype(t))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, x.f%d);", i, e.helper("tsneg", et), i)
		}
		h.line("return r;")
	case types.Tensor:
		newLike(e, h, t, "r", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			h.line("r.data[%s] = %s(ctx, x.data[%s]);", i, e.helper("tsneg", t.Elem), i)
		})
		h.line("return r;")
	}
	return e.ctype(t), "ks_ctx *ctx, " + e.ctype(t) + " x"
}

func genTsDot(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx; (void)pos; (void)a; (void)b;")
	switch t.Kind {
	case types.Float:
		h.line("return a * b;")
	case types.Integer, types.Bool, types.String:
		h.line("return 0.0;")
	case types.Tuple:
		h.line("double r = 0.0;")
		for i, et := range t.Elems {
			h.line("r += %s(ctx, pos, a.f%d, b.f%d);", e.helper("tsdot", et), i, i)
		}
		h.line("return r;")
	case types.Tensor:
		sameSizes(h, t, "a", "b")
		h.line("double r = 0.0;")
		h.forEach(count("a", t.Rank), func(i string) {
			h.line("r += %s(ctx, pos, a.data[%s], b.data[%s]);", e.helper("tsdot", t.Elem), i, i)
		})
		h.line("return r;")
	}
	return "double", "ks_ctx *ctx, const char *pos, " + e.ctype(t) + " a, " + e.ctype(t) + " b"
}

func genDotDiff(e *emitter, t *types.Type, h *hb) (string, string) {
	dt, _ := types.Tangent(t)
	h.line("(void)ctx; (void)pos; (void)a; (void)b; (void)dt;")
	switch t.Kind {
	case types.Float:
		h.line("return (a - b) * dt;")
	case types.Integer, types.Bool, types.String:
		h.line("return 0.0;")
	case types.Tuple:
		h.line("double r = 0.0;")
		for i, et := range t.Elems {
			h.line("r += %s(ctx, pos, a.f%d, b.f%d, dt.f%d);", e.helper("dotdiff", et), i, i, i)
		}
		h.line("return r;")
	case types.Tensor:
		sameSizes(h, t, "a", "b")
		sameSizes(h, t, "a", "dt")
		h.line("double r = 0.0;")
		h.forEach(count("a", t.Rank), func(i string) {
			h.line("r += %s(ctx, pos, a.data[%s], b.data[%s], dt.data[%s]);", e.helper("dotdiff", t.Elem), i, i, i)
		})
		h.line("return r;")
	}
	return "double", "ks_ctx *ctx, const char *pos, " + e.ctype(t) + " a, " + e.ctype(t) + " b, " + e.ctype(dt) + " dt"
}

func genZeroTan(e *emitter, t *types.Type, h *hb) (string, string) {
	dt, _ := types.Tangent(t)
	h.line("(void)ctx; (void)x;")
	switch t.Kind {
	case types.Float:
		h.line("return 0.0;")
	case types.Integer, types.Bool, types.String:
		h.line("return (%s){0};", e.ctype(dt))
	case types.Tuple:
		h.line("%s r;", e.ctype(dt))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, x.f%d);", i, e.helper("zerotan", et), i)
		}
		if len(t.Elems) == 0 {
			h.line("r.unused = 0;")
		}
		h.line("return r;")
	case types.Tensor:
		newLike(e, h, dt, "r", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			if t.Elem.Kind == types.Float {
				h.line("r.data[%s] = 0.0;", i)
			} else {
				h.line("r.data[%s] = %s(ctx, x.data[%s]);", i, e.helper("zerotan", t.Elem), i)
			}
		})
		h.line("return r;")
	}
	return e.ctype(dt), "ks_ctx *ctx, " + e.ctype(t) + " x"
}

// genInl and genInr build a variant with every byte of its union set: a
// compound literal naming one member leaves the rest of the union
// indeterminate, and gcc's -Wmaybe-uninitialized, following a smaller
// alternative through copies of enclosing structs, then warns at -O1 and
// above about the copies (a false alarm, but the generated C must compile
// without warnings). When the other alternative is the larger, it is
// zeroed first (sizeof is a constant: gcc keeps only the branch that
// applies). Zeroing the whole variant with memset instead made the
// records of a recursion three times slower to build (revscale's
// prodrec), as gcc then keeps the variant in memory.
func genInl(e *emitter, t *types.Type, h *hb) (string, string) {
	return genInject(e, t, h, 0)
}

func genInr(e *emitter, t *types.Type, h *hb) (string, string) {
	return genInject(e, t, h, 1)
}

func genInject(e *emitter, t *types.Type, h *hb, side int) (string, string) {
	this, other := [...]string{"l", "r"}[side], [...]string{"r", "l"}[side]
	h.line("%s v;", e.ctype(t))
	h.line("if (sizeof v.u.%s < sizeof v.u.%s) v.u.%s = (%s){0};", this, other, other, e.ctype(t.Elems[1-side]))
	h.line("v.isl = %t;", side == 0)
	h.line("v.u.%s = x;", this)
	h.line("return v;")
	return e.ctype(t), e.ctype(t.Elems[side]) + " x"
}

func genShapeOf(e *emitter, t *types.Type, h *hb) (string, string) {
	sh, _ := types.Shape(t)
	h.line("(void)ctx; (void)x;")
	switch {
	case t.IsUniform():
		h.line("return (%s){0};", e.ctype(sh))
	case t.Kind == types.Tuple:
		h.line("%s r;", e.ctype(sh))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, x.f%d);", i, e.helper("shapeof", et), i)
		}
		h.line("return r;")
	case t.Kind == types.Tensor && t.Elem.IsUniform():
		if t.Rank == 1 {
			h.line("return x.size;")
		} else {
			var fs []string
			for d := 0; d < t.Rank; d++ {
				fs = append(fs, fmt.Sprintf("x.size[%d]", d))
			}
			h.line("return (%s){%s};", e.ctype(sh), strings.Join(fs, ", "))
		}
	case t.Kind == types.Tensor:
		newLike(e, h, sh, "r", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			h.line("r.data[%s] = %s(ctx, x.data[%s]);", i, e.helper("shapeof", t.Elem), i)
		})
		h.line("return r;")
	}
	return e.ctype(sh), "ks_ctx *ctx, " + e.ctype(t) + " x"
}

// needsCheck reports whether a value of type t from a host can be malformed
// in a way the generated code cannot survive: a tensor (its sizes, its
// data), a string or a BOG (NULL pointers).
func needsCheck(t *types.Type) bool {
	return t.Contains(types.Tensor) || t.Contains(types.String) || t.Contains(types.Named)
}

// genCheckArg checks a value a host passed to an entry point, so that the
// generated code's assumptions hold (ks_assume_size: a size is in 0 ..
// KS_MAX_COUNT): every size non-negative, every tensor's element count
// within the most that can be addressed, its data non-NULL when it has
// elements, strings and BOGs non-NULL. A nested tensor's elements are
// checked in turn. The error names the argument (arg).
func genCheckArg(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx; (void)pos; (void)arg; (void)x;")
	switch t.Kind {
	case types.String:
		h.line("if (x == NULL) ks_fail(ctx, pos, \"argument %%s: a NULL string\", arg);")
	case types.Named:
		h.line("if (x == NULL) ks_fail(ctx, pos, \"argument %%s: a NULL BOG\", arg);")
	case types.Tuple:
		for i, et := range t.Elems {
			if needsCheck(et) {
				h.line("%s(ctx, pos, arg, x.f%d);", e.helper("checkarg", et), i)
			}
		}
	case types.Tensor:
		n := "x.size"
		if t.Rank > 1 {
			h.line("int64_t n = ks_count(ctx, pos, %d, x.size);", t.Rank)
			n = "n"
		} else {
			h.line("if (x.size < 0) ks_fail(ctx, pos, \"argument %%s: negative size %%\" PRId64, arg, x.size);")
		}
		h.line("if ((uint64_t)%s > KS_MAX_COUNT(sizeof *x.data)) ks_fail(ctx, pos, \"argument %%s: %%\" PRId64 \" elements, more than can be addressed\", arg, %s);", n, n)
		h.line("if (%s > 0 && x.data == NULL) ks_fail(ctx, pos, \"argument %%s: %%\" PRId64 \" elements and NULL data\", arg, %s);", n, n)
		if needsCheck(t.Elem) {
			h.forEach(n, func(i string) {
				h.line("%s(ctx, pos, arg, x.data[%s]);", e.helper("checkarg", t.Elem), i)
			})
		}
	}
	return "void", "ks_ctx *ctx, const char *pos, const char *arg, " + e.ctype(t) + " x"
}

// genNFloats counts the Floats of x: the length of ($flatten x).
func genNFloats(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)x;")
	switch t.Kind {
	case types.Float:
		h.line("return 1;")
	case types.Integer, types.Bool, types.String:
		h.line("return 0;")
	case types.Tuple:
		h.line("int64_t r = 0;")
		for i, et := range t.Elems {
			h.line("r += %s(x.f%d);", e.helper("nfloats", et), i)
		}
		h.line("return r;")
	case types.Tensor:
		if t.Elem.Kind == types.Float {
			h.line("return %s;", count("x", t.Rank))
			break
		}
		h.line("int64_t r = 0;")
		h.forEach(count("x", t.Rank), func(i string) {
			h.line("r += %s(x.data[%s]);", e.helper("nfloats", t.Elem), i)
		})
		h.line("return r;")
	}
	return "int64_t", e.ctype(t) + " x"
}

// genFlatInto writes x's Floats to out from index *k on, in flat order
// (tuple fields in order, tensor elements row-major), advancing *k.
func genFlatInto(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)x; (void)out; (void)k;")
	switch t.Kind {
	case types.Float:
		h.line("out[(*k)++] = x;")
	case types.Tuple:
		for i, et := range t.Elems {
			h.line("%s(x.f%d, out, k);", e.helper("flatinto", et), i)
		}
	case types.Tensor:
		h.forEach(count("x", t.Rank), func(i string) {
			if t.Elem.Kind == types.Float {
				h.line("out[(*k)++] = x.data[%s];", i)
			} else {
				h.line("%s(x.data[%s], out, k);", e.helper("flatinto", t.Elem), i)
			}
		})
	}
	return "void", e.ctype(t) + " x, double *out, int64_t *k"
}

// genFlatten compiles $flatten for a value of type t, which it takes by
// address and, if a tuple, flattens field by field: a tuple of several
// vectors (the gradient [jac f] flattens into each row) passed by value
// is copied through the stack in wide loads of fields just stored one by
// one, which the processor cannot forward (a stall of a dozen cycles
// each, 8% of ba's Jacobian).
func genFlatten(e *emitter, t *types.Type, h *hb) (string, string) {
	vf := types.VecOf(types.FloatType)
	h.line("%s r;", e.ctype(vf))
	fields, parts := []*types.Type{t}, []string{"(*x)"}
	if t.Kind == types.Tuple {
		fields, parts = t.Elems, nil
		for i := range t.Elems {
			parts = append(parts, fmt.Sprintf("x->f%d", i))
		}
	}
	sizes := []string{"0"}
	for i, ft := range fields {
		sizes = append(sizes, fmt.Sprintf("%s(%s)", e.helper("nfloats", ft), parts[i]))
	}
	h.line("r.size = %s;", strings.Join(sizes, " + "))
	h.line("r.data = ks_alloc_array(ctx, \"\", r.size, sizeof *r.data);")
	h.line("int64_t k = 0;")
	h.line("(void)x; (void)k;")
	for i, ft := range fields {
		h.line("%s(%s, r.data, &k);", e.helper("flatinto", ft), parts[i])
	}
	h.line("return r;")
	return e.ctype(vf), "ks_ctx *ctx, const " + e.ctype(t) + " *x"
}

// genUnflatAt returns t with its Floats read from in from index *k on,
// advancing *k; t's other scalars and its sizes are kept.
func genUnflatAt(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)ctx; (void)t; (void)in; (void)k;")
	switch t.Kind {
	case types.Float:
		h.line("return in[(*k)++];")
	case types.Integer, types.Bool, types.String:
		h.line("return t;")
	case types.Tuple:
		h.line("%s r = t;", e.ctype(t))
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, t.f%d, in, k);", i, e.helper("unflatat", et), i)
		}
		h.line("return r;")
	case types.Tensor:
		newLike(e, h, t, "r", "t")
		h.forEach(count("t", t.Rank), func(i string) {
			if t.Elem.Kind == types.Float {
				h.line("r.data[%s] = in[(*k)++];", i)
			} else {
				h.line("r.data[%s] = %s(ctx, t.data[%s], in, k);", i, e.helper("unflatat", t.Elem), i)
			}
		})
		h.line("return r;")
	}
	return e.ctype(t), "ks_ctx *ctx, " + e.ctype(t) + " t, const double *in, int64_t *k"
}

// genUnflat compiles $unflatten for a value of type t: it fails unless v
// holds exactly as many Floats as t.
func genUnflat(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("ks_check_same_size(ctx, pos, v.size, %s(t));", e.helper("nfloats", t))
	h.line("int64_t k = 0;")
	h.line("return %s(ctx, t, v.data, &k);", e.helper("unflatat", t))
	return e.ctype(t), "ks_ctx *ctx, const char *pos, " + e.ctype(types.VecOf(types.FloatType)) + " v, " + e.ctype(t) + " t"
}

// patternOf returns the pattern type of t (types.Pattern).
func patternOf(t *types.Type) *types.Type {
	pt, ok := types.Pattern(t)
	if !ok {
		panic(fmt.Sprintf("cemit: %s has no pattern type", t))
	}
	return pt
}

// isSet reports whether a pattern type is a set, a Float's.
func isSet(t *types.Type) bool {
	return t.Kind == types.Tensor && t.Rank == 1 && t.Elem.Kind == types.Integer
}

// genPatSeedAt returns x's pattern as an argument: each Float replaced by
// the set of its flat position, from *k on, advancing *k.
func genPatSeedAt(e *emitter, t *types.Type, h *hb) (string, string) {
	pt := patternOf(t)
	h.line("(void)ctx; (void)x; (void)k;")
	switch t.Kind {
	case types.Float:
		h.line("%s r;", e.ctype(pt))
		h.line("r.size = 1;")
		h.line("r.data = ks_alloc_array(ctx, \"\", 1, sizeof *r.data);")
		h.line("r.data[0] = (*k)++;")
		h.line("return r;")
	case types.Integer, types.Bool, types.String:
		h.line("return (%s){0};", e.ctype(pt))
	case types.Tuple:
		h.line("%s r;", e.ctype(pt))
		if len(t.Elems) == 0 {
			h.line("r.unused = 0;")
		}
		for i, et := range t.Elems {
			h.line("r.f%d = %s(ctx, x.f%d, k);", i, e.helper("patseedat", et), i)
		}
		h.line("return r;")
	case types.Tensor:
		newLike(e, h, pt, "r", "x")
		h.forEach(count("x", t.Rank), func(i string) {
			h.line("r.data[%s] = %s(ctx, x.data[%s], k);", i, e.helper("patseedat", t.Elem), i)
		})
		h.line("return r;")
	}
	return e.ctype(pt), "ks_ctx *ctx, " + e.ctype(t) + " x, int64_t *k"
}

// genPatSeed compiles $patternSeed for a value of type t.
func genPatSeed(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("int64_t k = 0;")
	h.line("return %s(ctx, x, &k);", e.helper("patseedat", t))
	return e.ctype(patternOf(t)), "ks_ctx *ctx, " + e.ctype(t) + " x"
}

// genPatCount adds to *m the number of sets of the pattern p (of type t)
// and to *nnz the number of their elements.
func genPatCount(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)p; (void)m; (void)nnz;")
	switch {
	case isSet(t):
		h.line("(*m)++;")
		h.line("*nnz += p.size;")
	case t.Kind == types.Tuple:
		for i, et := range t.Elems {
			h.line("%s(p.f%d, m, nnz);", e.helper("patcount", et), i)
		}
	case t.Kind == types.Tensor:
		h.forEach(count("p", t.Rank), func(i string) {
			h.line("%s(p.data[%s], m, nnz);", e.helper("patcount", t.Elem), i)
		})
	}
	return "void", e.ctype(t) + " p, int64_t *m, int64_t *nnz"
}

// genPatFill writes the sets of the pattern p (of type t) as CSR rows
// from row *i on: row r's columns at cols[off[r]...], off[r+1] set.
func genPatFill(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("(void)p; (void)off; (void)cols; (void)i;")
	switch {
	case isSet(t):
		h.line("int64_t at = off[*i];")
		h.line("if (p.size > 0) memcpy(cols + at, p.data, (size_t)p.size * sizeof *cols);")
		h.line("off[++*i] = at + p.size;")
	case t.Kind == types.Tuple:
		for k, et := range t.Elems {
			h.line("%s(p.f%d, off, cols, i);", e.helper("patfill", et), k)
		}
	case t.Kind == types.Tensor:
		h.forEach(count("p", t.Rank), func(k string) {
			h.line("%s(p.data[%s], off, cols, i);", e.helper("patfill", t.Elem), k)
		})
	}
	return "void", e.ctype(t) + " p, int64_t *off, int64_t *cols, int64_t *i"
}

// genPatCSR compiles $patternCSR for a pattern of type t.
func genPatCSR(e *emitter, t *types.Type, h *hb) (string, string) {
	vi := types.VecOf(types.IntegerType)
	rt := types.TupleOf(vi, vi)
	h.line("int64_t m = 0, nnz = 0, i = 0;")
	h.line("%s(p, &m, &nnz);", e.helper("patcount", t))
	h.line("%s r;", e.ctype(rt))
	h.line("r.f0.size = m + 1;")
	h.line("r.f0.data = ks_alloc_array(ctx, \"\", m + 1, sizeof *r.f0.data);")
	h.line("r.f1.size = nnz;")
	h.line("r.f1.data = ks_alloc_array(ctx, \"\", nnz, sizeof *r.f1.data);")
	h.line("r.f0.data[0] = 0;")
	h.line("%s(p, r.f0.data, r.f1.data, &i);", e.helper("patfill", t))
	h.line("return r;")
	return e.ctype(rt), "ks_ctx *ctx, " + e.ctype(t) + " p"
}

// genSetUnion compiles $union (t is Vec Integer).
func genSetUnion(e *emitter, t *types.Type, h *hb) (string, string) {
	h.line("%s r;", e.ctype(t))
	h.line("r.data = ks_alloc_array(ctx, \"\", a.size + b.size, sizeof *r.data);")
	h.line("r.size = ks_set_union(a.data, a.size, b.data, b.size, r.data);")
	h.line("return r;")
	return e.ctype(t), "ks_ctx *ctx, " + e.ctype(t) + " a, " + e.ctype(t) + " b"
}

// genColour compiles $colour (t is its result, Tuple Bool Integer (Vec
// Integer)).
func genColour(e *emitter, t *types.Type, h *hb) (string, string) {
	vi := e.ctype(t.Elems[2])
	h.line("if (off.size < 1) ks_fail(ctx, pos, \"malformed sparsity pattern: no offsets\");")
	h.line("int64_t m = off.size - 1;")
	h.line("%s r;", e.ctype(t))
	h.line("int64_t *colour = ks_alloc_array(ctx, pos, m > n ? m : n, sizeof *colour);")
	h.line("r.f1 = ks_colour(ctx, pos, off.data, m, cols.data, cols.size, n, &r.f0, colour);")
	h.line("r.f2.size = r.f0 ? m : n;")
	h.line("r.f2.data = colour;")
	h.line("return r;")
	return e.ctype(t), "ks_ctx *ctx, const char *pos, " + vi + " off, " + vi + " cols, int64_t n"
}

// genColourColumns compiles $colourColumns (t is its result, Tuple
// Integer (Vec Integer)).
func genColourColumns(e *emitter, t *types.Type, h *hb) (string, string) {
	vi := e.ctype(t.Elems[1])
	h.line("if (off.size < 1) ks_fail(ctx, pos, \"malformed sparsity pattern: no offsets\");")
	h.line("%s r;", e.ctype(t))
	h.line("r.f1.data = ks_alloc_array(ctx, pos, n, sizeof *r.f1.data);")
	h.line("r.f1.size = n;")
	h.line("r.f0 = ks_colour_columns(ctx, pos, off.data, off.size - 1, cols.data, cols.size, n, r.f1.data);")
	h.line("return r;")
	return e.ctype(t), "ks_ctx *ctx, const char *pos, " + vi + " off, " + vi + " cols, int64_t n"
}

// genPairs compiles $pairs (t is Vec Integer).
func genPairs(e *emitter, t *types.Type, h *hb) (string, string) {
	vi := e.ctype(t)
	h.line("if (a.size > 0 && b.size > INT64_MAX / 2 / a.size) ks_fail(ctx, pos, \"too many pairs of positions\");")
	h.line("int64_t room = 2 * a.size * b.size;")
	h.line("%s r;", vi)
	h.line("r.data = ks_alloc_array(ctx, pos, room, sizeof *r.data);")
	h.line("int64_t *tmp = ks_alloc_array(ctx, pos, room, sizeof *tmp);")
	h.line("r.size = ks_pairs(ctx, pos, a.data, a.size, b.data, b.size, r.data, tmp);")
	h.line("return r;")
	return vi, "ks_ctx *ctx, const char *pos, " + vi + " a, " + vi + " b"
}

// genPairsCSR compiles $pairsCSR (t is its result, Tuple (Vec Integer)
// (Vec Integer)).
func genPairsCSR(e *emitter, t *types.Type, h *hb) (string, string) {
	vi := e.ctype(t.Elems[0])
	h.line("if (off.size < 1 || n < 0) ks_fail(ctx, pos, \"malformed sparsity pattern\");")
	h.line("%s r;", e.ctype(t))
	h.line("r.f0.size = n + 1;")
	h.line("r.f0.data = ks_alloc_array(ctx, pos, n + 1, sizeof *r.f0.data);")
	h.line("r.f1.data = ks_alloc_array(ctx, pos, pairs.size + (withj ? cols.size : 0), sizeof *r.f1.data);")
	h.line("r.f1.size = ks_pairs_csr(ctx, pos, pairs.data, pairs.size, off.data, off.size - 1, cols.data, cols.size, n, withj, r.f0.data, r.f1.data);")
	h.line("return r;")
	return e.ctype(t), "ks_ctx *ctx, const char *pos, " + vi + " pairs, " + vi + " off, " + vi + " cols, int64_t n, bool withj"
}

// genUnionAll compiles $unionAll (t is its argument, Vec (Vec Integer)).
func genUnionAll(e *emitter, t *types.Type, h *hb) (string, string) {
	vi := e.ctype(t.Elem)
	h.line("int64_t total = 0;")
	h.line("for (int64_t k = 0; k < sets.size; k++) {")
	h.line("  if (sets.data[k].size > INT64_MAX - total) ks_fail(ctx, \"\", \"too many positions in a union\");")
	h.line("  total += sets.data[k].size;")
	h.line("}")
	h.line("%s r;", vi)
	h.line("r.data = ks_alloc_array(ctx, \"\", total, sizeof *r.data);")
	h.line("int64_t q = 0;")
	h.line("for (int64_t k = 0; k < sets.size; k++) {")
	h.line("  for (int64_t j = 0; j < sets.data[k].size; j++) r.data[q++] = sets.data[k].data[j];")
	h.line("}")
	h.line("r.size = ks_sort_unique(r.data, total);")
	h.line("return r;")
	return vi, "ks_ctx *ctx, " + e.ctype(t) + " sets"
}
