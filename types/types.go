// Package types defines the types of the ks language (language.md section 2):
// Integer, Float, Bool, String, tuples, tensors, lambdas and linear maps,
// together with the derived tangent and shape types of sections 2 and 5.
//
// Types are immutable values compared structurally with Equal; the
// canonical spelling produced by String is valid ks type syntax.
package types

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Kind says which form a Type has.
type Kind uint8

// The kinds of type.
const (
	Integer Kind = iota // Integer
	Float               // Float
	Bool                // Bool
	String              // String
	Tuple               // (Tuple T1 ... Tn)
	Tensor              // (Tensor N T); (Vec T) is (Tensor 1 T)
	Lam                 // (Lam S T)
	LM                  // (LM S T)
	Variant             // (Variant A B): a value of A or of B, and which (for BOGs)
	Named               // a named type, possibly recursive (for BOGs)
)

// A Type is a ks type. The zero value is not a valid type; use the
// constructors and the predeclared scalar types.
type Type struct {
	Kind  Kind
	Elems []*Type // Tuple: the fields
	Rank  int     // Tensor: the number of dimensions, >= 1
	Elem  *Type   // Tensor: the element type
	From  *Type   // Lam, LM: the argument type
	To    *Type   // Lam, LM: the result type
	Name  string  // Named: the name
	Def   *Type   // Named: the definition, set once when the type is declared
}

// The scalar types and the unit tuple.
var (
	IntegerType = &Type{Kind: Integer}
	FloatType   = &Type{Kind: Float}
	BoolType    = &Type{Kind: Bool}
	StringType  = &Type{Kind: String}
	Unit        = &Type{Kind: Tuple}
)

// TupleOf returns (Tuple elems...).
func TupleOf(elems ...*Type) *Type {
	if len(elems) == 0 {
		return Unit
	}
	return &Type{Kind: Tuple, Elems: elems}
}

// TensorOf returns (Tensor rank elem).
func TensorOf(rank int, elem *Type) *Type { return &Type{Kind: Tensor, Rank: rank, Elem: elem} }

// VecOf returns (Vec elem), which is (Tensor 1 elem).
func VecOf(elem *Type) *Type { return TensorOf(1, elem) }

// LamOf returns (Lam from to).
func LamOf(from, to *Type) *Type { return &Type{Kind: Lam, From: from, To: to} }

// LMOf returns (LM from to).
func LMOf(from, to *Type) *Type { return &Type{Kind: LM, From: from, To: to} }

// VariantOf returns (Variant a b).
func VariantOf(a, b *Type) *Type { return &Type{Kind: Variant, Elems: []*Type{a, b}} }

// NamedType returns the named type name, whose definition is given later
// (SetDef), so that it may refer to itself.
func NamedType(name string) *Type { return &Type{Kind: Named, Name: name} }

// SetDef gives a named type its definition.
func (t *Type) SetDef(def *Type) { t.Def = def }

// Equal reports whether t and u are the same type (type equality is syntactic).
func (t *Type) Equal(u *Type) bool {
	if t == u {
		return true
	}
	if t == nil || u == nil || t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case Integer, Float, Bool, String:
		return true
	case Tuple:
		if len(t.Elems) != len(u.Elems) {
			return false
		}
		for i := range t.Elems {
			if !t.Elems[i].Equal(u.Elems[i]) {
				return false
			}
		}
		return true
	case Tensor:
		return t.Rank == u.Rank && t.Elem.Equal(u.Elem)
	case Lam, LM:
		return t.From.Equal(u.From) && t.To.Equal(u.To)
	case Variant:
		return t.Elems[0].Equal(u.Elems[0]) && t.Elems[1].Equal(u.Elems[1])
	case Named:
		return t.Name == u.Name
	}
	panic("types: unknown kind " + strconv.Itoa(int(t.Kind)))
}

// String returns the canonical ks spelling of t, e.g. (Vec (Tuple Float Integer)).
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b, -1)
	return b.String()
}

// write writes t as ks text to b, stopping once b holds more than limit
// bytes (limit < 0: no limit).
func (t *Type) write(b *strings.Builder, limit int) {
	if limit >= 0 && b.Len() > limit {
		return
	}
	switch t.Kind {
	case Integer:
		b.WriteString("Integer")
	case Float:
		b.WriteString("Float")
	case Bool:
		b.WriteString("Bool")
	case String:
		b.WriteString("String")
	case Tuple:
		b.WriteString("(Tuple")
		for _, e := range t.Elems {
			b.WriteByte(' ')
			e.write(b, limit)
		}
		b.WriteByte(')')
	case Tensor:
		if t.Rank == 1 {
			b.WriteString("(Vec ")
		} else {
			b.WriteString("(Tensor ")
			b.WriteString(strconv.Itoa(t.Rank))
			b.WriteByte(' ')
		}
		t.Elem.write(b, limit)
		b.WriteByte(')')
	case Lam, LM:
		if t.Kind == Lam {
			b.WriteString("(Lam ")
		} else {
			b.WriteString("(LM ")
		}
		t.From.write(b, limit)
		b.WriteByte(' ')
		t.To.write(b, limit)
		b.WriteByte(')')
	case Variant:
		b.WriteString("(Variant ")
		t.Elems[0].write(b, limit)
		b.WriteByte(' ')
		t.Elems[1].write(b, limit)
		b.WriteByte(')')
	case Named:
		b.WriteString(t.Name)
	default:
		panic("types: unknown kind " + strconv.Itoa(int(t.Kind)))
	}
}

// IsScalar reports whether t is Integer, Float, Bool or String.
func (t *Type) IsScalar() bool { return t.Kind <= String }

// IsTuple reports whether t is a tuple type.
func (t *Type) IsTuple() bool { return t.Kind == Tuple }

// IsTensor reports whether t is a tensor (or vector) type.
func (t *Type) IsTensor() bool { return t.Kind == Tensor }

// IsValue reports whether values of t can be stored and passed at run
// time: everything except Lam and LM, at any depth.
func (t *Type) IsValue() bool {
	switch t.Kind {
	case Lam, LM:
		return false
	case Named:
		return true
	case Variant, Tuple:
		for _, e := range t.Elems {
			if !e.IsValue() {
				return false
			}
		}
	case Tensor:
		return t.Elem.IsValue()
	}
	return true
}

// Contains reports whether t mentions a type of kind k at any depth (not
// looking into the definitions of named types).
func (t *Type) Contains(k Kind) bool {
	if t.Kind == k {
		return true
	}
	switch t.Kind {
	case Tuple, Variant:
		for _, e := range t.Elems {
			if e.Contains(k) {
				return true
			}
		}
	case Tensor:
		return t.Elem.Contains(k)
	case Lam, LM:
		return t.From.Contains(k) || t.To.Contains(k)
	}
	return false
}

// IndexType returns the index (and size) type of a tensor of the given
// rank: Integer for rank 1, a tuple of rank Integers otherwise.
func IndexType(rank int) *Type {
	if rank == 1 {
		return IntegerType
	}
	elems := make([]*Type, rank)
	for i := range elems {
		elems[i] = IntegerType
	}
	return TupleOf(elems...)
}

// IndexRank returns the tensor rank whose index type is t, or 0 if t is
// not an index type (Integer, or a tuple of two or more Integers).
func IndexRank(t *Type) int {
	if t.Kind == Integer {
		return 1
	}
	if t.Kind != Tuple || len(t.Elems) < 2 {
		return 0
	}
	for _, e := range t.Elems {
		if e.Kind != Integer {
			return 0
		}
	}
	return len(t.Elems)
}

// Tangent returns the tangent type dT of t: Float for Float; the unit
// tuple for Integer, Bool and String; element-wise for tuples and
// tensors. ok is false for Lam and LM, which have no tangent type.
func Tangent(t *Type) (dt *Type, ok bool) { return tangentWith(t, FloatType) }

// IsPlain reports whether t is a value type of the ks language proper:
// no lambda, linear map, variant or named type. Only such values can be
// printed, compared and used in tangent operations.
func (t *Type) IsPlain() bool {
	return t.IsValue() && !t.Contains(Variant) && !t.Contains(Named)
}

// IsUniform reports whether every value of t looks alike: scalars and
// tuples of uniform types. Such types have shape (Tuple).
func (t *Type) IsUniform() bool {
	switch t.Kind {
	case Integer, Float, Bool, String:
		return true
	case Tuple:
		for _, e := range t.Elems {
			if !e.IsUniform() {
				return false
			}
		}
		return true
	}
	return false
}

// Shape returns the shape type Sh(t) of language.md section 5. ok is
// false for Lam and LM.
func Shape(t *Type) (sh *Type, ok bool) {
	if t.Kind == Lam || t.Kind == LM {
		return nil, false
	}
	if t.IsUniform() {
		return Unit, true
	}
	switch t.Kind {
	case Tuple:
		elems := make([]*Type, len(t.Elems))
		for i, e := range t.Elems {
			s, ok := Shape(e)
			if !ok {
				return nil, false
			}
			elems[i] = s
		}
		return TupleOf(elems...), true
	case Tensor:
		if t.Elem.IsUniform() {
			return IndexType(t.Rank), true
		}
		s, ok := Shape(t.Elem)
		if !ok {
			return nil, false
		}
		return TensorOf(t.Rank, s), true
	}
	return nil, false
}

// Mangle returns a short identifier fragment naming t, used by the
// backends for type and helper names: f64, i64, bool, str, vec_T,
// ten2_T, tup2_T_U, tup0. The encoding is prefix-free, so distinct types
// have distinct manglings.
func Mangle(t *Type) string {
	var b strings.Builder
	t.mangle(&b, -1)
	return b.String()
}

// MaxName is the longest name a Namer gives: long enough that the types
// of real programs keep their readable manglings (a library's header
// names them, and hosts spell them), short enough to bound the code of
// deeply nested types.
const MaxName = 512

// A Namer names types in generated code: Name(t) is Mangle(t) if that is
// at most MaxName long, else its first 40 characters, _h and a 64-bit
// hash of t's structure. With Mangle alone, the names of the types nested
// in a type d deep would be d^2 long together; a Namer remembers the
// hashes it computed, so naming each of them costs a bounded time.
type Namer struct {
	sums  map[*Type]uint64
	names map[*Type]string
}

// NewNamer returns an empty Namer.
func NewNamer() *Namer {
	return &Namer{sums: map[*Type]uint64{}, names: map[*Type]string{}}
}

// Name returns t's name (see Namer): equal types get equal names.
func (n *Namer) Name(t *Type) string {
	if s, ok := n.names[t]; ok {
		return s
	}
	var b strings.Builder
	t.mangle(&b, MaxName+1)
	s := b.String()
	if len(s) > MaxName {
		s = fmt.Sprintf("%s_h%016x", s[:40], n.sum(t))
	}
	n.names[t] = s
	return s
}

// sum returns a hash of t's structure: of what Mangle writes, level by
// level.
func (n *Namer) sum(t *Type) uint64 {
	if s, ok := n.sums[t]; ok {
		return s
	}
	h := fnv.New64a()
	var buf [8]byte
	put := func(x uint64) {
		binary.LittleEndian.PutUint64(buf[:], x)
		h.Write(buf[:])
	}
	put(uint64(t.Kind))
	put(uint64(t.Rank))
	switch t.Kind {
	case Named:
		var b strings.Builder
		t.mangle(&b, -1)
		h.Write([]byte(b.String()))
	case Tensor:
		put(n.sum(t.Elem))
	case Lam, LM:
		put(n.sum(t.From))
		put(n.sum(t.To))
	case Tuple, Variant:
		put(uint64(len(t.Elems)))
		for _, e := range t.Elems {
			put(n.sum(e))
		}
	}
	s := h.Sum64()
	n.sums[t] = s
	return s
}

// Brief returns t as ks text, cut at 100 characters (for comments in
// generated code, which a deep type would otherwise fill).
func Brief(t *Type) string {
	var b strings.Builder
	t.write(&b, 100)
	s := b.String()
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// mangle writes Mangle(t) to b, stopping once b holds more than limit
// bytes (limit < 0: no limit).
func (t *Type) mangle(b *strings.Builder, limit int) {
	if limit >= 0 && b.Len() > limit {
		return
	}
	switch t.Kind {
	case Integer:
		b.WriteString("i64")
	case Float:
		b.WriteString("f64")
	case Bool:
		b.WriteString("bool")
	case String:
		b.WriteString("str")
	case Tuple:
		b.WriteString("tup")
		b.WriteString(strconv.Itoa(len(t.Elems)))
		for _, e := range t.Elems {
			b.WriteByte('_')
			e.mangle(b, limit)
		}
	case Tensor:
		if t.Rank == 1 {
			b.WriteString("vec_")
		} else {
			b.WriteString("ten")
			b.WriteString(strconv.Itoa(t.Rank))
			b.WriteByte('_')
		}
		t.Elem.mangle(b, limit)
	case Lam:
		b.WriteString("lam_")
		t.From.mangle(b, limit)
		b.WriteByte('_')
		t.To.mangle(b, limit)
	case LM:
		b.WriteString("lm_")
		t.From.mangle(b, limit)
		b.WriteByte('_')
		t.To.mangle(b, limit)
	case Variant:
		b.WriteString("var2_")
		t.Elems[0].mangle(b, limit)
		b.WriteByte('_')
		t.Elems[1].mangle(b, limit)
	case Named:
		b.WriteString("nt")
		b.WriteString(strconv.Itoa(len(t.Name)))
		b.WriteByte('_')
		for i := 0; i < len(t.Name); i++ {
			c := t.Name[i]
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				b.WriteByte(c)
			} else {
				b.WriteByte('_')
			}
		}
	}
}

// Pattern returns the sparsity type of t: its tangent type with each
// Float replaced by a (Vec Integer), the set of the argument's Floats (by
// their flat positions) that Float depends on, in increasing order. It is
// the tangent type of [pattern f], from which [sparsejac f] takes its
// sparsity pattern. ok is false where Tangent's is.
func Pattern(t *Type) (pt *Type, ok bool) { return tangentWith(t, VecOf(IntegerType)) }

// HessianPattern returns the second-order sparsity type of t, that of
// [hpattern f], from which [sparsejac [rev f]] takes the Hessian's
// pattern: its tangent type with each Float replaced by (Tuple (Vec
// Integer) (Vec Integer)), the set of the argument's Floats that Float
// depends on (as Pattern's) and the set of pairs (i, j) of them whose
// second derivative it may have, each pair coded as i * 2^32 + j (both
// sets increasing). ok is false where Tangent's is.
func HessianPattern(t *Type) (pt *Type, ok bool) {
	vi := VecOf(IntegerType)
	return tangentWith(t, TupleOf(vi, vi))
}

// tangentWith returns the tangent type of t with each Float's tangent
// float.
func tangentWith(t, float *Type) (dt *Type, ok bool) {
	switch t.Kind {
	case Float:
		return float, true
	case Integer, Bool, String:
		return Unit, true
	case Tuple:
		elems := make([]*Type, len(t.Elems))
		for i, e := range t.Elems {
			de, ok := tangentWith(e, float)
			if !ok {
				return nil, false
			}
			elems[i] = de
		}
		return TupleOf(elems...), true
	case Tensor:
		de, ok := tangentWith(t.Elem, float)
		if !ok {
			return nil, false
		}
		return TensorOf(t.Rank, de), true
	}
	return nil, false // Lam, LM, Variant, Named
}
