package cl

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	ksrt "github.com/ksc-lang/ksc/runtime/go"
	"github.com/ksc-lang/ksc/types"
)

// A Value is a ks value during evaluation: an int64 (Integer), float64
// (Float), bool, string, TupleValue, *Tensor or Variant. Values are never
// changed once made, so they may be shared.
type Value = any

// A TupleValue is a tuple value; the unit value is the empty TupleValue.
type TupleValue []Value

// A Tensor is a tensor value of any rank: its sizes, and its elements in
// row-major order.
type Tensor struct {
	Shape []int64
	Elems []Value
}

// A Variant is a value of a (Variant A B) type, a record of split reverse
// mode: which alternative it holds, and its value. A value of a named type
// is the value of its definition.
type Variant struct {
	Left bool
	V    Value
}

// Vec returns the vector of the given elements.
func Vec(elems ...Value) *Tensor {
	return &Tensor{Shape: []int64{int64(len(elems))}, Elems: elems}
}

// checkValue reports whether v is a value of type t.
func checkValue(v Value, t *types.Type) error {
	ok := true
	switch t.Kind {
	case types.Integer:
		_, ok = v.(int64)
	case types.Float:
		_, ok = v.(float64)
	case types.Bool:
		_, ok = v.(bool)
	case types.String:
		_, ok = v.(string)
	case types.Tuple:
		tv, isTuple := v.(TupleValue)
		if !isTuple || len(tv) != len(t.Elems) {
			ok = false
			break
		}
		for i, x := range tv {
			if err := checkValue(x, t.Elems[i]); err != nil {
				return err
			}
		}
		return nil
	case types.Tensor:
		tv, isTensor := v.(*Tensor)
		if !isTensor || len(tv.Shape) != t.Rank {
			ok = false
			break
		}
		n := int64(1)
		for _, s := range tv.Shape {
			n *= s
		}
		if n != int64(len(tv.Elems)) {
			return fmt.Errorf("a tensor of sizes %v has %d elements", tv.Shape, len(tv.Elems))
		}
		for _, x := range tv.Elems {
			if err := checkValue(x, t.Elem); err != nil {
				return err
			}
		}
	case types.Variant:
		tv, isVariant := v.(Variant)
		if !isVariant {
			ok = false
			break
		}
		if tv.Left {
			return checkValue(tv.V, t.Elems[0])
		}
		return checkValue(tv.V, t.Elems[1])
	case types.Named:
		if t.Def != nil {
			return checkValue(v, t.Def)
		}
	default:
		return fmt.Errorf("no value has type %s", t)
	}
	if !ok {
		return fmt.Errorf("%s is not a value of type %s", describe(v), t)
	}
	return nil
}

// describe returns v for a message: printed if it is a tuple of scalars
// or a scalar, otherwise by its Go type.
func describe(v Value) string {
	switch v := v.(type) {
	case int64, float64, bool, string:
		return FormatValue(v)
	case TupleValue:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = describe(x)
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	return fmt.Sprintf("a %T", v)
}

// A RuntimeError is an error of the ks program being evaluated, as the
// compiled program reports it: an assert that fails, an index out of
// range, an empty sum, sizes that do not match.
type RuntimeError struct {
	Pos    Pos
	Msg    string
	assert bool // a failed assert
}

func (e *RuntimeError) Error() string { return e.Pos.String() + ": runtime error: " + e.Msg }

func fail(pos Pos, format string, args ...any) error {
	return &RuntimeError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// FormatValue returns v as print prints it (language.md section 6):
// Floats as C's %g, Bools as 1 and 0, tensors as [a, b] (nested for
// higher ranks), tuples as their parts joined by commas.
func FormatValue(v Value) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

func writeValue(b *strings.Builder, v Value) {
	switch v := v.(type) {
	case float64:
		b.WriteString(ksrt.FormatG(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case bool:
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	case string:
		b.WriteString(v)
	case TupleValue:
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, x)
		}
	case *Tensor:
		k := 0
		writeNested(b, v.Shape, v.Elems, &k)
	default:
		fmt.Fprintf(b, "<%T>", v)
	}
}

func writeNested(b *strings.Builder, shape []int64, elems []Value, k *int) {
	b.WriteByte('[')
	for i := int64(0); i < shape[0]; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if len(shape) == 1 {
			writeValue(b, elems[*k])
			*k++
		} else {
			writeNested(b, shape[1:], elems, k)
		}
	}
	b.WriteByte(']')
}

// Equal reports whether two values of one type are structurally equal
// (eq): tensors of different sizes are not.
func Equal(a, b Value) bool {
	switch a := a.(type) {
	case TupleValue:
		bt := b.(TupleValue)
		for i := range a {
			if !Equal(a[i], bt[i]) {
				return false
			}
		}
		return true
	case *Tensor:
		bt := b.(*Tensor)
		if len(a.Shape) != len(bt.Shape) || len(a.Elems) != len(bt.Elems) {
			return false
		}
		for i := range a.Shape {
			if a.Shape[i] != bt.Shape[i] {
				return false
			}
		}
		for i := range a.Elems {
			if !Equal(a.Elems[i], bt.Elems[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// sameShape fails unless tensors a and b have the same sizes.
func sameShape(pos Pos, a, b *Tensor) error {
	for d := range a.Shape {
		if a.Shape[d] != b.Shape[d] {
			return fail(pos, "size mismatch: %d and %d", a.Shape[d], b.Shape[d])
		}
	}
	return nil
}

// add returns a + b for values of a summable type (and leaves values
// without Floats or Integers, such as unit tangents, as they are).
func add(pos Pos, a, b Value) (Value, error) {
	switch a := a.(type) {
	case float64:
		return a + b.(float64), nil
	case int64:
		return a + b.(int64), nil
	case TupleValue:
		bt := b.(TupleValue)
		out := make(TupleValue, len(a))
		for i := range a {
			x, err := add(pos, a[i], bt[i])
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case *Tensor:
		return zipTensor(pos, a, b.(*Tensor), func(x, y Value) (Value, error) { return add(pos, x, y) })
	}
	return a, nil
}

// zipTensor combines the elements of two tensors of the same sizes.
func zipTensor(pos Pos, a, b *Tensor, f func(x, y Value) (Value, error)) (*Tensor, error) {
	if err := sameShape(pos, a, b); err != nil {
		return nil, err
	}
	out := &Tensor{Shape: a.Shape, Elems: make([]Value, len(a.Elems))}
	for i := range a.Elems {
		x, err := f(a.Elems[i], b.Elems[i])
		if err != nil {
			return nil, err
		}
		out.Elems[i] = x
	}
	return out, nil
}

// mapTensor applies f to every element.
func mapTensor(a *Tensor, f func(x Value) Value) *Tensor {
	out := &Tensor{Shape: a.Shape, Elems: make([]Value, len(a.Elems))}
	for i, x := range a.Elems {
		out.Elems[i] = f(x)
	}
	return out
}

// sum adds values of type t in order, as the backends do: Floats from
// -0.0, Integers from 0, other values from a copy of the first.
func sum(pos Pos, t *types.Type, n int64, elem func(k int64) (Value, error)) (Value, error) {
	if t.Kind == types.Float {
		// In lanes, as every implementation adds Floats (ksrt.SumFloats).
		lanes := ksrt.NewLanes()
		for k := int64(0); k < n; k++ {
			x, err := elem(k)
			if err != nil {
				return nil, err
			}
			lanes[k%ksrt.Lanes] += x.(float64)
		}
		return ksrt.Combine(&lanes), nil
	}
	var acc Value
	switch t.Kind {
	case types.Float:
		acc = math.Copysign(0, -1)
	case types.Integer:
		acc = int64(0)
	}
	for k := int64(0); k < n; k++ {
		x, err := elem(k)
		if err != nil {
			return nil, err
		}
		if acc == nil {
			acc = x
			continue
		}
		if acc, err = add(pos, acc, x); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// zeroLike returns zeros shaped like v.
func zeroLike(v Value) Value {
	switch v := v.(type) {
	case float64:
		return 0.0
	case int64:
		return int64(0)
	case bool:
		return false
	case string:
		return ""
	case TupleValue:
		out := make(TupleValue, len(v))
		for i, x := range v {
			out[i] = zeroLike(x)
		}
		return out
	case *Tensor:
		return mapTensor(v, zeroLike)
	}
	return v
}

// zeroValue returns the zero value of type t, which is also ($dummy t).
func zeroValue(t *types.Type) Value {
	switch t.Kind {
	case types.Float:
		return 0.0
	case types.Integer:
		return int64(0)
	case types.Bool:
		return false
	case types.String:
		return ""
	case types.Tuple:
		out := make(TupleValue, len(t.Elems))
		for i, e := range t.Elems {
			out[i] = zeroValue(e)
		}
		return out
	case types.Tensor:
		return &Tensor{Shape: make([]int64, t.Rank)}
	}
	return nil
}

// zeroTangent returns the zero tangent, of type dt, shaped like v.
func zeroTangent(dt *types.Type, v Value) Value {
	switch v := v.(type) {
	case TupleValue:
		out := make(TupleValue, len(v))
		for i, x := range v {
			out[i] = zeroTangent(dt.Elems[i], x)
		}
		return out
	case *Tensor:
		return mapTensor(v, func(x Value) Value { return zeroTangent(dt.Elem, x) })
	}
	return zeroValue(dt)
}

// zeros returns zeros of type t with the given shape (types.Shape).
func zeros(pos Pos, t *types.Type, shape Value) (Value, error) {
	switch t.Kind {
	case types.Tensor:
		var sizes []int64
		var elemShapes []Value
		switch sh := shape.(type) {
		case int64:
			sizes = []int64{sh}
		case TupleValue:
			for _, s := range sh {
				sizes = append(sizes, s.(int64))
			}
		case *Tensor:
			sizes, elemShapes = sh.Shape, sh.Elems
		}
		n, err := count(pos, sizes)
		if err != nil {
			return nil, err
		}
		out := &Tensor{Shape: sizes, Elems: make([]Value, n)}
		for i := range out.Elems {
			if elemShapes == nil {
				out.Elems[i] = zeroValue(t.Elem)
				continue
			}
			if out.Elems[i], err = zeros(pos, t.Elem, elemShapes[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	case types.Tuple:
		sh, ok := shape.(TupleValue)
		if !ok || len(sh) != len(t.Elems) || len(sh) == 0 {
			return zeroValue(t), nil
		}
		out := make(TupleValue, len(t.Elems))
		for i, e := range t.Elems {
			x, err := zeros(pos, e, sh[i])
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return zeroValue(t), nil
}

// shapeOf returns the shape (types.Shape) of v, of type t: the unit tuple
// for a type whose values all look alike, a tensor's sizes if its elements
// do, else the shapes of the parts.
func shapeOf(t *types.Type, v Value) Value {
	if t.IsUniform() {
		return TupleValue{}
	}
	switch t.Kind {
	case types.Tuple:
		tv := v.(TupleValue)
		out := make(TupleValue, len(tv))
		for i, x := range tv {
			out[i] = shapeOf(t.Elems[i], x)
		}
		return out
	case types.Tensor:
		tv := v.(*Tensor)
		if t.Elem.IsUniform() {
			return sizeValue(tv)
		}
		return mapTensor(tv, func(x Value) Value { return shapeOf(t.Elem, x) })
	}
	return TupleValue{}
}

// count returns the number of elements of a tensor of the given sizes.
func count(pos Pos, sizes []int64) (int64, error) {
	n := int64(1)
	for _, s := range sizes {
		if s < 0 {
			return 0, fail(pos, "negative size %d", s)
		}
		if s != 0 && n > math.MaxInt64/s {
			return 0, fail(pos, "tensor too large")
		}
		n *= s
	}
	return n, nil
}

// sizesOf returns the sizes given by a size value of a tensor of rank r:
// an Integer, or a tuple of them.
func sizesOf(size Value) []int64 {
	if n, ok := size.(int64); ok {
		return []int64{n}
	}
	t := size.(TupleValue)
	out := make([]int64, len(t))
	for i, x := range t {
		out[i] = x.(int64)
	}
	return out
}

// indexValue returns the index value of flat position k in a tensor of the
// given sizes: an Integer for rank 1, a tuple otherwise.
func indexValue(k int64, sizes []int64) Value {
	if len(sizes) == 1 {
		return k
	}
	idx := make(TupleValue, len(sizes))
	for d := len(sizes) - 1; d >= 0; d-- {
		idx[d] = k % sizes[d]
		k /= sizes[d]
	}
	return idx
}

// flatIndex checks index idx against tensor t and returns its flat position.
func flatIndex(pos Pos, idx Value, t *Tensor) (int64, error) {
	is := sizesOf(idx)
	if len(is) == 1 {
		if uint64(is[0]) >= uint64(t.Shape[0]) {
			return 0, fail(pos, "index %d out of range for size %d", is[0], t.Shape[0])
		}
		return is[0], nil
	}
	k := int64(0)
	for d, i := range is {
		if uint64(i) >= uint64(t.Shape[d]) {
			return 0, fail(pos, "index (%s) out of range for size (%s)", joinInts(is), joinInts(t.Shape))
		}
		k = k*t.Shape[d] + i
	}
	return k, nil
}

func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}

// sizeValue returns the size of t as a value: an Integer for rank 1, a
// tuple otherwise.
func sizeValue(t *Tensor) Value {
	if len(t.Shape) == 1 {
		return t.Shape[0]
	}
	out := make(TupleValue, len(t.Shape))
	for i, s := range t.Shape {
		out[i] = s
	}
	return out
}

// tsAdd is ts_add: x plus a tangent.
func tsAdd(pos Pos, x, dx Value) (Value, error) {
	switch x := x.(type) {
	case float64:
		return x + dx.(float64), nil
	case TupleValue:
		dt := dx.(TupleValue)
		out := make(TupleValue, len(x))
		for i := range x {
			v, err := tsAdd(pos, x[i], dt[i])
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *Tensor:
		return zipTensor(pos, x, dx.(*Tensor), func(a, b Value) (Value, error) { return tsAdd(pos, a, b) })
	}
	return x, nil
}

// tsScale is ts_scale.
func tsScale(k float64, x Value) Value {
	switch x := x.(type) {
	case float64:
		return k * x
	case TupleValue:
		out := make(TupleValue, len(x))
		for i := range x {
			out[i] = tsScale(k, x[i])
		}
		return out
	case *Tensor:
		return mapTensor(x, func(v Value) Value { return tsScale(k, v) })
	}
	return x
}

// dotDiff is ts_dot(a - b, dt) over the Floats of a and b; with b nil it
// is ts_dot(a, dt).
func dotDiff(pos Pos, a, b, dt Value) (float64, error) {
	switch a := a.(type) {
	case float64:
		if b == nil {
			return a * dt.(float64), nil
		}
		return (a - b.(float64)) * dt.(float64), nil
	case TupleValue:
		r := 0.0
		for i := range a {
			x, err := dotDiff(pos, a[i], field(b, i), dt.(TupleValue)[i])
			if err != nil {
				return 0, err
			}
			r += x
		}
		return r, nil
	case *Tensor:
		bt, _ := b.(*Tensor)
		dtt := dt.(*Tensor)
		if bt != nil {
			if err := sameShape(pos, a, bt); err != nil {
				return 0, err
			}
		}
		if err := sameShape(pos, a, dtt); err != nil {
			return 0, err
		}
		r := 0.0
		for i := range a.Elems {
			var y Value
			if bt != nil {
				y = bt.Elems[i]
			}
			x, err := dotDiff(pos, a.Elems[i], y, dtt.Elems[i])
			if err != nil {
				return 0, err
			}
			r += x
		}
		return r, nil
	}
	return 0, nil
}

func field(v Value, i int) Value {
	if v == nil {
		return nil
	}
	return v.(TupleValue)[i]
}

// flatten appends the Floats of v to out in flat order ($flatten): tuple
// fields in order, tensor elements row-major.
func flatten(v Value, out *[]Value) {
	switch v := v.(type) {
	case float64:
		*out = append(*out, v)
	case TupleValue:
		for _, e := range v {
			flatten(e, out)
		}
	case *Tensor:
		for _, e := range v.Elems {
			flatten(e, out)
		}
	}
}

// unflatten returns t with its Floats replaced by fs[*k:] in flat order
// ($unflatten), advancing *k past those it reads; it stops replacing when
// fs runs out, and the caller checks that *k is len(fs).
func unflatten(t Value, fs []Value, k *int) Value {
	switch t := t.(type) {
	case float64:
		if *k >= len(fs) {
			*k++
			return t
		}
		*k++
		return fs[*k-1]
	case TupleValue:
		r := make(TupleValue, len(t))
		for i, e := range t {
			r[i] = unflatten(e, fs, k)
		}
		return r
	case *Tensor:
		r := &Tensor{Shape: t.Shape, Elems: make([]Value, len(t.Elems))}
		for i, e := range t.Elems {
			r.Elems[i] = unflatten(e, fs, k)
		}
		return r
	}
	return t
}

// ints returns the elements of a Vec Integer.
func ints(v Value) []int64 {
	t := v.(*Tensor)
	r := make([]int64, len(t.Elems))
	for i, e := range t.Elems {
		r[i] = e.(int64)
	}
	return r
}

// intVec returns the Vec Integer of xs.
func intVec(xs []int64) *Tensor {
	elems := make([]Value, len(xs))
	for i, x := range xs {
		elems[i] = x
	}
	return &Tensor{Shape: []int64{int64(len(xs))}, Elems: elems}
}

// patternSeed returns v's pattern as an argument ($patternSeed): each
// Float replaced by the set of its flat position, from *k on.
func patternSeed(v Value, k *int64) Value {
	switch v := v.(type) {
	case float64:
		*k++
		return intVec([]int64{*k - 1})
	case TupleValue:
		r := make(TupleValue, len(v))
		for i, e := range v {
			r[i] = patternSeed(e, k)
		}
		return r
	case *Tensor:
		r := &Tensor{Shape: v.Shape, Elems: make([]Value, len(v.Elems))}
		for i, e := range v.Elems {
			r.Elems[i] = patternSeed(e, k)
		}
		return r
	}
	return TupleValue{} // Integer, Bool, String: the unit pattern
}

// patternRows appends the sets of the pattern v of type t as CSR rows
// ($patternCSR).
func patternRows(v Value, t *types.Type, off, cols *[]int64) {
	switch {
	case t.Kind == types.Tensor && t.Rank == 1 && t.Elem.Kind == types.Integer:
		*cols = append(*cols, ints(v)...)
		*off = append(*off, int64(len(*cols)))
	case t.Kind == types.Tuple:
		for i, e := range v.(TupleValue) {
			patternRows(e, t.Elems[i], off, cols)
		}
	case t.Kind == types.Tensor:
		for _, e := range v.(*Tensor).Elems {
			patternRows(e, t.Elem, off, cols)
		}
	}
}
