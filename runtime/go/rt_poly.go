package ksrt

import (
	"reflect"
)

// The polymorphic operations of the ks language work on any ks value
// through reflection, with fast paths for Floats and vectors of Floats.
// Each follows the helper of the same kind that the C backend generates
// per type (emit/c/helpers.go), in the same order of checks and additions.

type tensor interface{ isTensor() }

var tensorIface = reflect.TypeFor[tensor]()

func isTensorType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.Implements(tensorIface)
}

func isTensor(v reflect.Value) bool {
	return v.Kind() == reflect.Slice || isTensorType(v.Type())
}

// elems returns the elements of a tensor: the slice itself, or a
// Tensor's Data.
func elems(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Slice {
		return v
	}
	return v.Field(1)
}

func tensorShape(v reflect.Value) []int64 { return v.Field(0).Interface().([]int64) }

// sameShape fails unless tensors a and b have the same sizes.
func sameShape(pos string, a, b reflect.Value) {
	if a.Kind() == reflect.Slice {
		CheckSameSize(pos, int64(a.Len()), int64(b.Len()))
		return
	}
	sa, sb := tensorShape(a), tensorShape(b)
	for d := range sa {
		CheckSameSize(pos, sa[d], sb[d])
	}
}

// newLike returns a new tensor of type t with the sizes of tensor x.
func newLike(t reflect.Type, x reflect.Value) reflect.Value {
	if t.Kind() == reflect.Slice {
		return reflect.MakeSlice(t, x.Len(), x.Len())
	}
	r := reflect.New(t).Elem()
	r.Field(0).Set(reflect.ValueOf(append([]int64(nil), tensorShape(x)...)))
	n := x.Field(1).Len()
	r.Field(1).Set(reflect.MakeSlice(r.Field(1).Type(), n, n))
	return r
}

// Eq is structural equality (eq; ne is its negation). Floats compare as
// numbers: 0 equals -0 and NaN equals nothing.
func Eq(a, b any) bool {
	switch a := a.(type) {
	case float64:
		return a == b.(float64)
	case int64:
		return a == b.(int64)
	case []float64:
		b := b.([]float64)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	return eqValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func eqValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !eqValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		// A tuple field by field; a Tensor its sizes, then its elements.
		for i := 0; i < a.NumField(); i++ {
			if !eqValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	panic("ksrt: cannot compare a " + a.Type().String())
}

// Copy returns a copy of x that shares no tensor memory with it.
func Copy[T any](x T) T {
	if v, ok := any(x).([]float64); ok {
		return any(append([]float64(nil), v...)).(T)
	}
	return copyValue(reflect.ValueOf(x)).Interface().(T)
}

func copyValue(x reflect.Value) reflect.Value {
	switch {
	case isTensor(x):
		r := newLike(x.Type(), x)
		re, xe := elems(r), elems(x)
		if re.Type().Elem().Kind() == reflect.Float64 {
			reflect.Copy(re, xe)
			return r
		}
		for i := 0; i < xe.Len(); i++ {
			re.Index(i).Set(copyValue(xe.Index(i)))
		}
		return r
	case x.Kind() == reflect.Struct:
		r := reflect.New(x.Type()).Elem()
		for i := 0; i < x.NumField(); i++ {
			r.Field(i).Set(copyValue(x.Field(i)))
		}
		return r
	}
	return x
}

// AddTo returns acc + x, adding into acc's tensors in place: acc must not
// be used again. Tensors must have equal sizes.
func AddTo[T any](pos string, acc, x T) T {
	switch a := any(acc).(type) {
	case float64:
		return any(a + any(x).(float64)).(T)
	case []float64:
		b := any(x).([]float64)
		CheckSameSize(pos, int64(len(a)), int64(len(b)))
		for i := range a {
			a[i] += b[i]
		}
		return acc
	}
	return addTo(pos, reflect.ValueOf(acc), reflect.ValueOf(x)).Interface().(T)
}

func addTo(pos string, acc, x reflect.Value) reflect.Value {
	switch acc.Kind() {
	case reflect.Float64:
		return reflect.ValueOf(acc.Float() + x.Float())
	case reflect.Int64:
		return reflect.ValueOf(acc.Int() + x.Int())
	}
	if isTensor(acc) {
		sameShape(pos, acc, x)
		ae, xe := elems(acc), elems(x)
		if a, ok := ae.Interface().([]float64); ok {
			b := xe.Interface().([]float64)
			for i := range a {
				a[i] += b[i]
			}
			return acc
		}
		for i := 0; i < ae.Len(); i++ {
			ae.Index(i).Set(addTo(pos, ae.Index(i), xe.Index(i)))
		}
		return acc
	}
	if acc.Kind() == reflect.Struct {
		r := reflect.New(acc.Type()).Elem()
		for i := 0; i < acc.NumField(); i++ {
			r.Field(i).Set(addTo(pos, acc.Field(i), x.Field(i)))
		}
		return r
	}
	return acc
}

// ZeroLike returns zeros shaped like x: tensors of the same sizes, zero
// scalars (false, "" for Bool and String).
func ZeroLike[T any](x T) T {
	switch x := any(x).(type) {
	case float64:
		return any(0.0).(T)
	case []float64:
		return any(make([]float64, len(x))).(T)
	}
	return zeroLike(reflect.ValueOf(x)).Interface().(T)
}

func zeroLike(x reflect.Value) reflect.Value {
	switch {
	case isTensor(x):
		r := newLike(x.Type(), x)
		re, xe := elems(r), elems(x)
		for i := 0; i < xe.Len(); i++ {
			re.Index(i).Set(zeroLike(xe.Index(i)))
		}
		return r
	case x.Kind() == reflect.Struct:
		r := reflect.New(x.Type()).Elem()
		for i := 0; i < x.NumField(); i++ {
			r.Field(i).Set(zeroLike(x.Field(i)))
		}
		return r
	}
	return reflect.Zero(x.Type())
}

// ZeroTan returns the zero tangent of type R shaped like x (ts_zero).
func ZeroTan[R any](x any) R {
	if x, ok := x.([]float64); ok {
		return any(make([]float64, len(x))).(R)
	}
	return zeroTan(reflect.TypeFor[R](), reflect.ValueOf(x)).Interface().(R)
}

func zeroTan(t reflect.Type, x reflect.Value) reflect.Value {
	switch {
	case isTensor(x):
		r := newLike(t, x)
		re, xe := elems(r), elems(x)
		et := re.Type().Elem()
		for i := 0; i < xe.Len(); i++ {
			re.Index(i).Set(zeroTan(et, xe.Index(i)))
		}
		return r
	case x.Kind() == reflect.Struct:
		r := reflect.New(t).Elem()
		for i := 0; i < t.NumField(); i++ {
			r.Field(i).Set(zeroTan(t.Field(i).Type, x.Field(i)))
		}
		return r
	}
	return reflect.Zero(t)
}

// Zeros returns the zero of type T with the given shape, a value of the
// shape type of T (types.Shape): (Tuple) for scalars and tuples of
// scalars, the size for tensors of such elements, a tensor of shapes for
// tensors of other elements, a tuple of shapes for other tuples.
func Zeros[T any](pos string, shape any) T {
	return zeros(pos, reflect.TypeFor[T](), reflect.ValueOf(shape)).Interface().(T)
}

func zeros(pos string, t reflect.Type, shape reflect.Value) reflect.Value {
	switch {
	case t.Kind() == reflect.Slice:
		if shape.Kind() == reflect.Int64 {
			n := shape.Int()
			if n < 0 {
				Fail(pos, "negative size %d", n)
			}
			return reflect.MakeSlice(t, int(n), int(n))
		}
		r := reflect.MakeSlice(t, shape.Len(), shape.Len())
		for i := 0; i < shape.Len(); i++ {
			r.Index(i).Set(zeros(pos, t.Elem(), shape.Index(i)))
		}
		return r
	case isTensorType(t):
		r := reflect.New(t).Elem()
		var sizes []int64
		var elemShapes reflect.Value
		if isTensorType(shape.Type()) {
			sizes = append([]int64(nil), tensorShape(shape)...)
			elemShapes = shape.Field(1)
		} else {
			for i := 0; i < shape.NumField(); i++ {
				sizes = append(sizes, shape.Field(i).Int())
			}
		}
		n := int(Count(pos, sizes))
		r.Field(0).Set(reflect.ValueOf(sizes))
		data := reflect.MakeSlice(r.Field(1).Type(), n, n)
		if elemShapes.IsValid() {
			et := t.Field(1).Type.Elem()
			for i := 0; i < n; i++ {
				data.Index(i).Set(zeros(pos, et, elemShapes.Index(i)))
			}
		}
		r.Field(1).Set(data)
		return r
	case t.Kind() == reflect.Struct:
		r := reflect.New(t).Elem()
		if shape.Kind() == reflect.Struct && shape.NumField() == t.NumField() {
			// A tuple with a tensor in it; a tuple of scalars has shape
			// (Tuple) and is all zeros.
			for i := 0; i < t.NumField(); i++ {
				r.Field(i).Set(zeros(pos, t.Field(i).Type, shape.Field(i)))
			}
		}
		return r
	}
	return reflect.Zero(t)
}

// TsAdd is ts_add: x plus a tangent dx of it (Floats added, Integers,
// Bools and Strings unchanged). Tensors must have equal sizes.
func TsAdd[T any](pos string, x T, dx any) T {
	switch v := any(x).(type) {
	case float64:
		return any(v + dx.(float64)).(T)
	case []float64:
		d := dx.([]float64)
		CheckSameSize(pos, int64(len(v)), int64(len(d)))
		r := make([]float64, len(v))
		for i := range v {
			r[i] = v[i] + d[i]
		}
		return any(r).(T)
	}
	return tsAdd(pos, reflect.ValueOf(x), reflect.ValueOf(dx)).Interface().(T)
}

func tsAdd(pos string, x, dx reflect.Value) reflect.Value {
	switch {
	case x.Kind() == reflect.Float64:
		return reflect.ValueOf(x.Float() + dx.Float())
	case isTensor(x):
		sameShape(pos, x, dx)
		r := newLike(x.Type(), x)
		re, xe, de := elems(r), elems(x), elems(dx)
		for i := 0; i < xe.Len(); i++ {
			re.Index(i).Set(tsAdd(pos, xe.Index(i), de.Index(i)))
		}
		return r
	case x.Kind() == reflect.Struct:
		r := reflect.New(x.Type()).Elem()
		for i := 0; i < x.NumField(); i++ {
			r.Field(i).Set(tsAdd(pos, x.Field(i), dx.Field(i)))
		}
		return r
	}
	return x
}

// TsScale is ts_scale: every Float of x multiplied by k.
func TsScale[T any](k float64, x T) T {
	switch v := any(x).(type) {
	case float64:
		return any(float64(k * v)).(T)
	case []float64:
		r := make([]float64, len(v))
		for i := range v {
			r[i] = float64(k * v[i])
		}
		return any(r).(T)
	}
	return mapFloats(reflect.ValueOf(x), func(f float64) float64 { return float64(k * f) }).Interface().(T)
}

// TsNeg is ts_neg: every Float of x negated (its sign flipped, as C's -x).
func TsNeg[T any](x T) T {
	switch v := any(x).(type) {
	case float64:
		return any(-v).(T)
	case []float64:
		r := make([]float64, len(v))
		for i := range v {
			r[i] = -v[i]
		}
		return any(r).(T)
	}
	return mapFloats(reflect.ValueOf(x), func(f float64) float64 { return -f }).Interface().(T)
}

// mapFloats returns x with f applied to every Float, in new tensors.
func mapFloats(x reflect.Value, f func(float64) float64) reflect.Value {
	switch {
	case x.Kind() == reflect.Float64:
		return reflect.ValueOf(f(x.Float()))
	case isTensor(x):
		r := newLike(x.Type(), x)
		re, xe := elems(r), elems(x)
		for i := 0; i < xe.Len(); i++ {
			re.Index(i).Set(mapFloats(xe.Index(i), f))
		}
		return r
	case x.Kind() == reflect.Struct:
		r := reflect.New(x.Type()).Elem()
		for i := 0; i < x.NumField(); i++ {
			r.Field(i).Set(mapFloats(x.Field(i), f))
		}
		return r
	}
	return x
}

// TsDot is ts_dot: the sum of the products of the Floats of a and b, in
// order from 0. Tensors must have equal sizes.
func TsDot(pos string, a, b any) float64 {
	switch a := a.(type) {
	case float64:
		return float64(a * b.(float64))
	case []float64:
		b := b.([]float64)
		CheckSameSize(pos, int64(len(a)), int64(len(b)))
		r := 0.0
		for i := range a {
			r += float64(a[i] * b[i])
		}
		return r
	}
	return tsDot(pos, reflect.ValueOf(a), reflect.ValueOf(b))
}

func tsDot(pos string, a, b reflect.Value) float64 {
	switch {
	case a.Kind() == reflect.Float64:
		return float64(a.Float() * b.Float())
	case isTensor(a):
		sameShape(pos, a, b)
		ae, be := elems(a), elems(b)
		r := 0.0
		for i := 0; i < ae.Len(); i++ {
			r += tsDot(pos, ae.Index(i), be.Index(i))
		}
		return r
	case a.Kind() == reflect.Struct:
		r := 0.0
		for i := 0; i < a.NumField(); i++ {
			r += tsDot(pos, a.Field(i), b.Field(i))
		}
		return r
	}
	return 0
}

// DotDiff is ts_dot(a - b, dt) over the Floats of a and b, for $check.
func DotDiff(pos string, a, b, dt any) float64 {
	return dotDiff(pos, reflect.ValueOf(a), reflect.ValueOf(b), reflect.ValueOf(dt))
}

func dotDiff(pos string, a, b, dt reflect.Value) float64 {
	switch {
	case a.Kind() == reflect.Float64:
		return float64((a.Float() - b.Float()) * dt.Float())
	case isTensor(a):
		sameShape(pos, a, b)
		sameShape(pos, a, dt)
		ae, be, de := elems(a), elems(b), elems(dt)
		r := 0.0
		for i := 0; i < ae.Len(); i++ {
			r += dotDiff(pos, ae.Index(i), be.Index(i), de.Index(i))
		}
		return r
	case a.Kind() == reflect.Struct:
		r := 0.0
		for i := 0; i < a.NumField(); i++ {
			r += dotDiff(pos, a.Field(i), b.Field(i), dt.Field(i))
		}
		return r
	}
	return 0
}

// ShapeOf returns the shape of x, of type R (see Zeros): the sizes of
// its tensors.
func ShapeOf[R any](x any) R {
	return shapeOf(reflect.TypeFor[R](), reflect.ValueOf(x)).Interface().(R)
}

func shapeOf(t reflect.Type, x reflect.Value) reflect.Value {
	switch {
	case x.Kind() == reflect.Slice && t.Kind() == reflect.Int64:
		return reflect.ValueOf(int64(x.Len()))
	case x.Kind() == reflect.Slice:
		r := reflect.MakeSlice(t, x.Len(), x.Len())
		for i := 0; i < x.Len(); i++ {
			r.Index(i).Set(shapeOf(t.Elem(), x.Index(i)))
		}
		return r
	case isTensor(x) && !isTensorType(t):
		// A tensor of uniform elements: the tuple of its sizes.
		r := reflect.New(t).Elem()
		for d, n := range tensorShape(x) {
			r.Field(d).SetInt(n)
		}
		return r
	case isTensor(x):
		r := reflect.New(t).Elem()
		r.Field(0).Set(reflect.ValueOf(append([]int64(nil), tensorShape(x)...)))
		xe := x.Field(1)
		data := reflect.MakeSlice(r.Field(1).Type(), xe.Len(), xe.Len())
		et := t.Field(1).Type.Elem()
		for i := 0; i < xe.Len(); i++ {
			data.Index(i).Set(shapeOf(et, xe.Index(i)))
		}
		r.Field(1).Set(data)
		return r
	case x.Kind() == reflect.Struct && t.Kind() == reflect.Struct && t.NumField() == x.NumField() && t.NumField() > 0:
		r := reflect.New(t).Elem()
		for i := 0; i < x.NumField(); i++ {
			r.Field(i).Set(shapeOf(t.Field(i).Type, x.Field(i)))
		}
		return r
	}
	return reflect.Zero(t)
}

// Flatten is $flatten: the Floats of x in flat order (tuple fields in
// order, tensor elements row-major); other scalars are left out.
func Flatten(x any) []float64 {
	if x, ok := x.([]float64); ok {
		return append([]float64(nil), x...)
	}
	var r []float64
	flattenInto(reflect.ValueOf(x), &r)
	if r == nil {
		r = []float64{}
	}
	return r
}

func flattenInto(x reflect.Value, out *[]float64) {
	switch {
	case x.Kind() == reflect.Float64:
		*out = append(*out, x.Float())
	case isTensor(x):
		xe := elems(x)
		for i := 0; i < xe.Len(); i++ {
			flattenInto(xe.Index(i), out)
		}
	case x.Kind() == reflect.Struct:
		for i := 0; i < x.NumField(); i++ {
			flattenInto(x.Field(i), out)
		}
	}
}

// Unflatten is $unflatten: t with its Floats replaced, in flat order, by
// v's elements. It fails unless v has exactly as many elements.
func Unflatten[T any](pos string, v []float64, t T) T {
	tv := reflect.ValueOf(t)
	CheckSameSize(pos, int64(len(v)), countFloats(tv))
	k := 0
	return unflattenFrom(tv, v, &k).Interface().(T)
}

func countFloats(x reflect.Value) int64 {
	switch {
	case x.Kind() == reflect.Float64:
		return 1
	case isTensor(x):
		xe := elems(x)
		if xe.Type().Elem().Kind() == reflect.Float64 {
			return int64(xe.Len())
		}
		n := int64(0)
		for i := 0; i < xe.Len(); i++ {
			n += countFloats(xe.Index(i))
		}
		return n
	case x.Kind() == reflect.Struct:
		n := int64(0)
		for i := 0; i < x.NumField(); i++ {
			n += countFloats(x.Field(i))
		}
		return n
	}
	return 0
}

func unflattenFrom(t reflect.Value, v []float64, k *int) reflect.Value {
	switch {
	case t.Kind() == reflect.Float64:
		*k++
		return reflect.ValueOf(v[*k-1]).Convert(t.Type())
	case isTensor(t):
		r := newLike(t.Type(), t)
		re, te := elems(r), elems(t)
		for i := 0; i < te.Len(); i++ {
			re.Index(i).Set(unflattenFrom(te.Index(i), v, k))
		}
		return r
	case t.Kind() == reflect.Struct:
		r := reflect.New(t.Type()).Elem()
		for i := 0; i < t.NumField(); i++ {
			r.Field(i).Set(unflattenFrom(t.Field(i), v, k))
		}
		return r
	}
	return t
}
