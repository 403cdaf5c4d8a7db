package eval

import (
	"math"

	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
	"github.com/ksc-lang/ksc/types"
)

// parts evaluates the argument parts of a primitive call, left to right:
// a single tuple argument is split into its fields unless the primitive
// takes one argument. Lambdas stay nil, for the primitive to apply.
func (m *machine) parts(e *ir.Call, sc *env) []Value {
	if len(e.Args) == 1 && e.Prim.Arity != 1 && e.Args[0].Type().Kind == types.Tuple {
		return m.eval(e.Args[0], sc).(Tuple)
	}
	out := make([]Value, len(e.Args))
	for i, a := range e.Args {
		if _, isLam := a.(*ir.Lam); !isLam {
			out[i] = m.eval(a, sc)
		}
	}
	return out
}

// prim evaluates a call of a primitive that has no ks definition,
// counting its operations.
func (m *machine) prim(e *ir.Call, sc *env) Value {
	v, ok := m.derivedPrim(e, sc)
	if !ok {
		v = m.sourcePrim(e, sc)
	}
	m.count(e, v)
	return v
}

// sourcePrim evaluates a call of a primitive of the source language.
func (m *machine) sourcePrim(e *ir.Call, sc *env) Value {
	a := m.parts(e, sc)
	pos := e.P.String()
	lam := func(i int) *ir.Lam { return e.Args[i].(*ir.Lam) }
	if e.Prim.Identity {
		return a[0]
	}
	switch e.Prim.Name {
	case "print":
		for _, x := range a {
			m.print(x)
		}
		return int64(len(a) - 1)
	case "$trace":
		_, _ = m.out.WriteString("Trace[")
		m.print(a[0])
		_, _ = m.out.WriteString("]\n")
		return a[0]
	case "size":
		t := a[0].(*Tensor)
		return index(t.Shape)
	case "shape":
		return shapeOf(a[0], e.Args[0].Type())
	case "index":
		t := a[1].(*Tensor)
		return t.Data[flat(pos, sizes(a[0]), t.Shape)]
	case "build":
		r := m.newTensor(e.P, sizes(a[0]))
		forEach(r.Shape, func(idx Value, k int) { r.Data[k] = m.apply(lam(1), idx, sc) })
		return r
	case "sumbuild":
		sz := sizes(a[0])
		for _, n := range sz {
			if n <= 0 {
				ksrt.Fail(pos, "sumbuild over an empty range")
			}
		}
		if e.T.Kind == types.Float {
			lanes := ksrt.NewLanes()
			forEach(sz, func(idx Value, k int) { lanes[k%ksrt.Lanes] += m.apply(lam(1), idx, sc).(float64) })
			return ksrt.Combine(&lanes)
		}
		var acc Value
		forEach(sz, func(idx Value, k int) {
			x := m.apply(lam(1), idx, sc)
			if k == 0 {
				acc = x
			} else {
				m.ops += Scalars(x)
				acc = add(pos, acc, x)
			}
		})
		return acc
	case "sum":
		t := a[0].(*Tensor)
		if len(t.Data) == 0 {
			ksrt.Fail(pos, "sum of an empty tensor")
		}
		m.ops += Scalars(t)
		if e.T.Kind == types.Float {
			return ksrt.SumFloats(int64(len(t.Data)), func(k int64) float64 { return t.Data[k].(float64) })
		}
		acc := t.Data[0]
		for _, x := range t.Data[1:] {
			acc = add(pos, acc, x)
		}
		return acc
	case "fold":
		acc := a[1]
		for _, x := range a[2].(*Tensor).Data {
			acc = m.apply(lam(0), Tuple{acc, x}, sc)
		}
		return acc
	case "$foldtape", "$foldrec":
		v := a[2].(*Tensor)
		n := int64(len(v.Data))
		tape, recs := m.newTensor(e.P, []int64{n + 1}), m.newTensor(e.P, []int64{n})
		acc := a[1]
		for k, x := range v.Data {
			tape.Data[k] = acc
			acc = m.apply(lam(0), Tuple{acc, x}, sc)
			if e.Prim.Name == "$foldrec" {
				r := acc.(Tuple)
				acc, recs.Data[k] = r[0], r[1]
			}
		}
		tape.Data[n] = acc
		if e.Prim.Name == "$foldrec" {
			return Tuple{tape, recs}
		}
		return tape
	case "$ifold", "$ifoldr":
		n, acc := a[0].(int64), a[1]
		for j := int64(0); j < n; j++ {
			i := j
			if e.Prim.Name == "$ifoldr" {
				i = n - 1 - j
			}
			acc = m.apply(lam(2), Tuple{acc, i}, sc)
		}
		return acc
	case "map":
		t := a[1].(*Tensor)
		r := m.newTensor(e.P, t.Shape)
		for k, x := range t.Data {
			r.Data[k] = m.apply(lam(0), x, sc)
		}
		return r
	case "map2":
		t, u := a[1].(*Tensor), a[2].(*Tensor)
		for d := range t.Shape {
			ksrt.CheckSameSize(pos, t.Shape[d], u.Shape[d])
		}
		r := m.newTensor(e.P, t.Shape)
		for k := range t.Data {
			r.Data[k] = m.apply(lam(0), Tuple{t.Data[k], u.Data[k]}, sc)
		}
		return r
	case "constVec":
		r := m.newTensor(e.P, sizes(a[0]))
		for k := range r.Data {
			r.Data[k] = a[1]
		}
		return r
	case "deltaVec":
		z := zeroLike(a[2])
		r := m.newTensor(e.P, sizes(a[0]))
		for k := range r.Data {
			r.Data[k] = z
		}
		idx, in := sizes(a[1]), true
		for d, n := range r.Shape {
			in = in && uint64(idx[d]) < uint64(n)
		}
		if in {
			r.Data[flat(pos, idx, r.Shape)] = a[2]
		}
		return r
	case "delta":
		if equal(a[0], a[1]) {
			return a[2]
		}
		return zeroLike(a[2])
	case "Vec_init":
		return Vec(a...)
	case "unzip":
		t := a[0].(*Tensor)
		out := make(Tuple, len(e.T.Elems))
		for f := range out {
			r := m.newTensor(e.P, t.Shape)
			for k, x := range t.Data {
				r.Data[k] = x.(Tuple)[f]
			}
			out[f] = r
		}
		return out
	case "buildFromSparse":
		// The count is an index value, as build's size: the loop runs
		// over its index space in row-major order.
		r := zeros(e.P, e.T, a[0]).(*Tensor)
		forEach(sizes(a[1]), func(i Value, _ int) {
			x := m.apply(lam(2), i, sc).(Tuple)
			k := flat(pos, sizes(x[0]), r.Shape)
			r.Data[k] = add(pos, r.Data[k], x[1])
		})
		return r
	case "eq":
		return equal(a[0], a[1])
	case "ne":
		return !equal(a[0], a[1])
	case "ts_add":
		return tsAdd(pos, a[0], a[1])
	case "ts_scale":
		k := a[0].(float64)
		return mapFloats(a[1], func(x float64) float64 { return float64(k * x) })
	case "ts_neg":
		return mapFloats(a[0], func(x float64) float64 { return -x })
	case "ts_dot":
		m.ops += Scalars(a[0])
		return tsDot(pos, a[0], a[1])
	case "ts_zero":
		return zeroTan(a[0])
	case "$check":
		return m.check(e, a, sc)
	case "$checkIndex":
		ksrt.CheckIndex(pos, a[0].(int64), a[1].(int64))
		return a[0]
	}
	if v, ok := scalar(e.Prim.Name, pos, a); ok {
		return v
	}
	unsupported(e.P, "the evaluator has no rule for the primitive %s", e.Prim)
	return nil
}

// check is $check: with d1 = ts_dot(f(x+dx) - f(x), dt) and
// d2 = ts_dot(rev(x, dt), dx), |d1 - d2| / (|d1| + |d2|), or 0 when both
// are 0.
func (m *machine) check(e *ir.Call, a []Value, sc *env) Value {
	pos := e.P.String()
	f, rev := e.Args[0].(*ir.Lam), e.Args[1].(*ir.Lam)
	x, dx, dt := a[2], a[3], a[4]
	y0 := m.apply(f, x, sc)
	y1 := m.apply(f, tsAdd(pos, x, dx), sc)
	d1 := tsDot(pos, tsAdd(pos, y1, mapFloats(y0, func(v float64) float64 { return -v })), dt)
	d2 := tsDot(pos, m.apply(rev, Tuple{x, dt}, sc), dx)
	if den := math.Abs(d1) + math.Abs(d2); den != 0 {
		return math.Abs(d1-d2) / den
	}
	return 0.0
}

// sizes returns the sizes (or index) held by an Integer or a tuple of
// Integers.
func sizes(v Value) []int64 {
	if n, ok := v.(int64); ok {
		return []int64{n}
	}
	t := v.(Tuple)
	out := make([]int64, len(t))
	for i, x := range t {
		out[i] = x.(int64)
	}
	return out
}

// index returns the value of the index type for the sizes: an Integer for
// one, else a tuple.
func index(sz []int64) Value {
	if len(sz) == 1 {
		return sz[0]
	}
	t := make(Tuple, len(sz))
	for i, n := range sz {
		t[i] = n
	}
	return t
}

// flat checks idx against the sizes and returns the row-major position.
func flat(pos string, idx, shape []int64) int {
	if len(shape) == 1 {
		ksrt.CheckIndex(pos, idx[0], shape[0])
		return int(idx[0])
	}
	ksrt.CheckIndexN(pos, idx, shape)
	k := int64(0)
	for d := range shape {
		k = k*shape[d] + idx[d]
	}
	return int(k)
}

// forEach calls f for every index of the sizes in row-major order, with
// the index (of the index type) and the flat position.
func forEach(sz []int64, f func(idx Value, k int)) {
	idx := make([]int64, len(sz))
	k := 0
	var loop func(d int)
	loop = func(d int) {
		if d == len(sz) {
			f(index(idx), k)
			k++
			return
		}
		for idx[d] = 0; idx[d] < sz[d]; idx[d]++ {
			loop(d + 1)
		}
	}
	loop(0)
}

// newTensor allocates a tensor of the given sizes.
func (m *machine) newTensor(p ir.Pos, sz []int64) *Tensor {
	return &Tensor{Shape: append([]int64(nil), sz...), Data: make([]Value, count(p, sz))}
}

// count returns the number of elements of a tensor of the given sizes,
// failing as the backends do on a negative size.
func count(p ir.Pos, sz []int64) int64 {
	var n int64
	if len(sz) == 1 {
		n = sz[0]
		if n < 0 {
			ksrt.Fail(p.String(), "negative size %d", n)
		}
	} else {
		n = ksrt.Count(p.String(), sz)
	}
	if n > maxElems {
		unsupported(p, "the evaluator does not allocate tensors of more than %d elements (%d)", maxElems, n)
	}
	return n
}

// sameShape fails unless tensors a and b have the same sizes.
func sameShape(pos string, a, b *Tensor) {
	for d := range a.Shape {
		ksrt.CheckSameSize(pos, a.Shape[d], b.Shape[d])
	}
}

// add is the addition of sums: numbers added, tensors (of equal sizes)
// element by element, tuples field by field.
func add(pos string, a, b Value) Value {
	switch a := a.(type) {
	case float64:
		return a + b.(float64)
	case int64:
		return a + b.(int64)
	case *Tensor:
		b := b.(*Tensor)
		sameShape(pos, a, b)
		r := &Tensor{Shape: a.Shape, Data: make([]Value, len(a.Data))}
		for k := range a.Data {
			r.Data[k] = add(pos, a.Data[k], b.Data[k])
		}
		return r
	case Tuple:
		r := make(Tuple, len(a))
		for i := range a {
			r[i] = add(pos, a[i], b.(Tuple)[i])
		}
		return r
	}
	return a
}

// tsAdd is ts_add: Floats added, Integers, Bools and Strings kept.
func tsAdd(pos string, x, dx Value) Value {
	switch x := x.(type) {
	case float64:
		return x + dx.(float64)
	case *Tensor:
		d := dx.(*Tensor)
		sameShape(pos, x, d)
		r := &Tensor{Shape: x.Shape, Data: make([]Value, len(x.Data))}
		for k := range x.Data {
			r.Data[k] = tsAdd(pos, x.Data[k], d.Data[k])
		}
		return r
	case Tuple:
		r := make(Tuple, len(x))
		for i := range x {
			r[i] = tsAdd(pos, x[i], dx.(Tuple)[i])
		}
		return r
	}
	return x
}

// tsDot is ts_dot: the sum of the products of the Floats, from 0.
func tsDot(pos string, a, b Value) float64 {
	switch a := a.(type) {
	case float64:
		return float64(a * b.(float64))
	case *Tensor:
		b := b.(*Tensor)
		sameShape(pos, a, b)
		r := 0.0
		for k := range a.Data {
			r += tsDot(pos, a.Data[k], b.Data[k])
		}
		return r
	case Tuple:
		r := 0.0
		for i := range a {
			r += tsDot(pos, a[i], b.(Tuple)[i])
		}
		return r
	}
	return 0
}

// mapFloats returns x with f applied to every Float.
func mapFloats(x Value, f func(float64) float64) Value {
	switch x := x.(type) {
	case float64:
		return f(x)
	case *Tensor:
		r := &Tensor{Shape: x.Shape, Data: make([]Value, len(x.Data))}
		for k, y := range x.Data {
			r.Data[k] = mapFloats(y, f)
		}
		return r
	case Tuple:
		r := make(Tuple, len(x))
		for i, y := range x {
			r[i] = mapFloats(y, f)
		}
		return r
	}
	return x
}

// equal is structural equality; Floats compare as numbers.
func equal(a, b Value) bool {
	switch a := a.(type) {
	case *Tensor:
		b := b.(*Tensor)
		for d := range a.Shape {
			if a.Shape[d] != b.Shape[d] {
				return false
			}
		}
		for k := range a.Data {
			if !equal(a.Data[k], b.Data[k]) {
				return false
			}
		}
		return true
	case Tuple:
		for i := range a {
			if !equal(a[i], b.(Tuple)[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// zeroLike returns zeros shaped like x (false and "" for Bool and String).
func zeroLike(x Value) Value {
	switch x := x.(type) {
	case float64:
		return 0.0
	case int64:
		return int64(0)
	case bool:
		return false
	case string:
		return ""
	case *Tensor:
		r := &Tensor{Shape: x.Shape, Data: make([]Value, len(x.Data))}
		for k, y := range x.Data {
			r.Data[k] = zeroLike(y)
		}
		return r
	}
	t := x.(Tuple)
	r := make(Tuple, len(t))
	for i, y := range t {
		r[i] = zeroLike(y)
	}
	return r
}

// zeroTan returns the zero tangent of x: Floats 0, tensors of the same
// sizes, units for Integers, Bools and Strings.
func zeroTan(x Value) Value {
	switch x := x.(type) {
	case float64:
		return 0.0
	case *Tensor:
		r := &Tensor{Shape: x.Shape, Data: make([]Value, len(x.Data))}
		for k, y := range x.Data {
			r.Data[k] = zeroTan(y)
		}
		return r
	case Tuple:
		r := make(Tuple, len(x))
		for i, y := range x {
			r[i] = zeroTan(y)
		}
		return r
	}
	return Tuple{}
}

// zeros returns the zero of type t with the given shape (types.Shape): the
// size, or the tuple of sizes, of a tensor of scalars; a tensor of the
// shapes of its elements; a tuple of its fields' shapes.
func zeros(p ir.Pos, t *types.Type, shape Value) Value {
	switch t.Kind {
	case types.Tensor:
		if sh, ok := shape.(*Tensor); ok {
			r := &Tensor{Shape: sh.Shape, Data: make([]Value, len(sh.Data))}
			for k, s := range sh.Data {
				r.Data[k] = zeros(p, t.Elem, s)
			}
			return r
		}
		sz := sizes(shape)
		n := count(p, sz)
		r := &Tensor{Shape: sz, Data: make([]Value, n)}
		z := zeroOf(t.Elem)
		for k := range r.Data {
			r.Data[k] = z
		}
		return r
	case types.Tuple:
		if sh, ok := shape.(Tuple); ok && len(sh) == len(t.Elems) {
			r := make(Tuple, len(sh))
			for i, s := range sh {
				r[i] = zeros(p, t.Elems[i], s)
			}
			return r
		}
	}
	return zeroOf(t)
}
