package cemit

import (
	"strconv"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Index checks that cannot fail.
//
// (build n (lam i ... (index i v) ...)) with n = (size v) is the commonest
// loop of all, and its index check is both useless and in the way of the
// C compiler's vectoriser. The backend records, as it emits a function,
// two kinds of facts about C names, which are never assigned twice (the
// loop states that are do not get facts):
//
//	same[x] = y   x is a copy of y ("d_2" of "p2.size", "r_5.size" of "z_3.size")
//	below[i] = n  the loop index i is at least 0 and below n (canonical)
//
// and leaves out the check of (index i v) when below[i] is v's size.
// Facts are recorded about paths (p0.data[i_3].f1): C names, fields and
// elements. Elements are replaced only by $setAt, with a value of the
// same shape, so the size of a path stays what it was.

// canon returns the canonical name of a C expression.
func (f *fn) canon(x string) string {
	for i := 0; i < 8; i++ { // chains are short; the bound only guards against cycles
		y, ok := f.same[x]
		if !ok {
			break
		}
		x = y
	}
	return x
}

// bind records that the new C name x holds the value of expression v of
// type t.
func (f *fn) bind(x, v string, t *types.Type) {
	if !isPath(v) {
		if parts, ok := f.fields[v]; ok && t.Kind == types.Tuple {
			for i, et := range t.Elems {
				f.bind(x+".f"+strconv.Itoa(i), parts[i], et)
			}
		}
		return
	}
	switch t.Kind {
	case types.Integer:
		f.same[x] = f.canon(v)
		if b, ok := f.below[v]; ok {
			f.below[x] = b
		}
	case types.Tensor:
		for _, s := range sizesOf("", t.Rank) {
			f.same[x+s] = f.canon(v + s)
		}
	case types.Tuple:
		for i, et := range t.Elems {
			k := ".f" + strconv.Itoa(i)
			f.bind(x+k, v+k, et)
		}
	}
}

// loopIndex records that i runs from 0 to below n.
func (f *fn) loopIndex(i, n string) {
	f.below[i] = f.canon(n)
}

// tupleFields records the fields of a tuple literal, for bind.
func (f *fn) tupleFields(lit string, fields []string) {
	f.fields[lit] = fields
}

// inBounds reports whether index idx of type t is known to be within
// sizes.
func (f *fn) inBounds(idx string, t *types.Type, sizes []string) bool {
	if t.Kind == types.Integer {
		b, ok := f.below[idx]
		return ok && b == f.canon(sizes[0])
	}
	for d, s := range sizes {
		b, ok := f.below[idx+".f"+strconv.Itoa(d)]
		if !ok || b != f.canon(s) {
			return false
		}
	}
	return true
}

// integerEq compiles cond if it is (eq m n) of Integers, returning m and n
// as atoms.
func (f *fn) integerEq(cond ir.Expr, sc *env) (string, string, bool) {
	c, ok := cond.(*ir.Call)
	if !ok || c.Prim == nil || c.Prim.Name != "eq" || len(c.Args) != 2 || c.Args[0].Type().Kind != types.Integer {
		return "", "", false
	}
	a := f.atom(f.expr(c.Args[0], sc), types.IntegerType)
	b := f.atom(f.expr(c.Args[1], sc), types.IntegerType)
	return a, b, true
}

// equal records that the Integers a and b are equal, in the code that
// follows (an assert's).
func (f *fn) equal(a, b string) {
	if ca, cb := f.canon(a), f.canon(b); ca != cb {
		f.same[cb] = ca
	}
}

// isPath reports whether x is a C name followed by fields and elements
// indexed by names or numbers.
func isPath(x string) bool {
	if x == "" || !(x[0] == '_' || 'a' <= x[0] && x[0] <= 'z' || 'A' <= x[0] && x[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(x); i++ {
		c := x[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}
