package eval

import (
	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
)

// This file runs the primitives that only derived and optimised code
// holds (the in-place accumulations, split reverse mode's records and
// variants), by their functional meaning: a value is never modified, so
// ($addAt acc i x) makes a new tensor. It lets tests run the optimised
// program and count its operations (CallCounting), a cost model shared
// with no backend.

// A variant is a value of a (Variant A B): which alternative, and its value.
type variant struct {
	right bool
	v     Value
}

// derivedPrim evaluates e if it is a primitive of derived code, reporting
// whether it was. Arguments that only give a type ($dummy) are not
// evaluated: a record's type may contain itself, and has no value to
// make.
func (m *machine) derivedPrim(e *ir.Call, sc *env) (Value, bool) {
	pos := e.P.String()
	arg := func(i int) Value { return m.eval(e.Args[i], sc) }
	switch e.Prim.Name {
	case "$inl", "$inr":
		right := e.Prim.Name == "$inr"
		k := 0
		if right {
			k = 1
		}
		return variant{right: right, v: arg(k)}, true
	case "$isl":
		return !arg(0).(variant).right, true
	case "$outl", "$outr":
		v := arg(0).(variant)
		if v.right != (e.Prim.Name == "$outr") {
			ksrt.Fail(pos, "internal: %s of the other alternative", e.Prim.Name)
		}
		return v.v, true
	case "$wrap":
		return arg(0), true
	case "$unwrap":
		return arg(0), true
	case "$shape":
		return shapeOf(arg(0), e.Args[0].Type()), true
	case "$zerosOfShape":
		return zeros(e.P, e.Args[1].Type(), arg(0)), true
	case "$addTo":
		acc, x := arg(0), arg(1)
		m.ops += Scalars(x)
		return tsAdd(pos, acc, x), true
	case "$addAt", "$setAt":
		t, i, x := arg(0).(*Tensor), arg(1), arg(2)
		k := flat(pos, sizes(i), t.Shape)
		r := &Tensor{Shape: t.Shape, Data: append([]Value(nil), t.Data...)}
		if e.Prim.Name == "$addAt" {
			m.ops += Scalars(x)
			r.Data[k] = tsAdd(pos, t.Data[k], x)
		} else {
			r.Data[k] = x
		}
		return r, true
	}
	return nil, false
}

// Scalars returns the number of numbers, Booleans and other scalars a
// value holds.
func Scalars(v Value) int64 {
	switch v := v.(type) {
	case *Tensor:
		var n int64
		for _, x := range v.Data {
			n += Scalars(x)
		}
		return n
	case Tuple:
		var n int64
		for _, x := range v {
			n += Scalars(x)
		}
		return n
	case variant:
		return Scalars(v.v)
	}
	return 1
}

// touchesAll are the primitives whose cost is the number of scalars in
// their value: they fill or combine whole values.
var touchesAll = map[string]bool{
	"ts_zero": true, "ts_add": true, "ts_scale": true, "ts_neg": true,
	"constVec": true, "deltaVec": true, "Vec_init": true, "unzip": true,
}

// count adds the operations of the primitive call e, whose value is v, to
// the machine's count: one, and for a primitive filling a whole value
// the scalars in it, for a build or a tape the elements it allocates.
// The work of a loop's body is counted by the body's own calls; sum,
// ts_dot and the sums of sumbuild add the scalars they read where they
// are evaluated.
func (m *machine) count(e *ir.Call, v Value) {
	m.tick(e.P)
	switch name := e.Prim.Name; {
	case touchesAll[name]:
		m.ops += Scalars(v)
	case name == "build" || name == "$foldtape" || name == "$foldrec":
		if t, ok := v.(*Tensor); ok {
			m.ops += int64(len(t.Data))
		}
	}
}

// tick counts one operation, stopping the evaluation past the limit.
func (m *machine) tick(pos ir.Pos) {
	m.ops++
	if m.limit > 0 && m.ops > m.limit {
		unsupported(pos, "the evaluation made more than %d operations", m.limit)
	}
}
