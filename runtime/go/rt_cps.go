package ksrt

import "reflect"

// Adjoint cells for the reverse mode by continuations (ksc --ad=cps, see
// emit/go/cps.go). A cell is a *D, D the Go type of a tangent type; its
// value always has the shape of the primal value it belongs to, so that
// &(*c).F0 and &(*c)[i] are the cells of a field and of an element.

// Cell returns a new cell holding the zero tangent of type D shaped like x.
func Cell[D any](x any) *D {
	z := ZeroTan[D](x)
	return &z
}

// Acc adds x into the cell c (tensors in place, so the cells of their
// elements see the sum).
func Acc[D any](pos string, c *D, x D) { *c = AddTo(pos, *c, x) }

// AccEach adds d into every element of xs: the adjoint of a sum.
func AccEach[D any](pos string, xs []D, d D) {
	for i := range xs {
		xs[i] = AddTo(pos, xs[i], d)
	}
}

// AccScaled adds k times the Floats of x into the cell c, whose value has
// the structure of x with the unit tuple for each Integer, Bool or String.
func AccScaled[D any](pos string, c *D, k float64, x any) {
	accScaled(pos, reflect.ValueOf(c).Elem(), k, reflect.ValueOf(x))
}

func accScaled(pos string, c reflect.Value, k float64, x reflect.Value) {
	switch {
	case c.Kind() == reflect.Float64:
		c.SetFloat(c.Float() + k*x.Float())
	case isTensor(c):
		sameShape(pos, c, x)
		ce, xe := elems(c), elems(x)
		for i := 0; i < ce.Len(); i++ {
			accScaled(pos, ce.Index(i), k, xe.Index(i))
		}
	case c.Kind() == reflect.Struct && x.Kind() == reflect.Struct:
		for i := 0; i < c.NumField(); i++ {
			accScaled(pos, c.Field(i), k, x.Field(i))
		}
	}
}

// Forward mode by dual numbers (ksc --ad=cps, see emit/go/dual.go).

// ScaleTan returns k times the Floats of x as a tangent of type D (the
// tangent type of x's type): ts_scale into the tangent space.
func ScaleTan[D any](pos string, k float64, x any) D {
	z := ZeroTan[D](x)
	accScaled(pos, reflect.ValueOf(&z).Elem(), k, reflect.ValueOf(x))
	return z
}

// SumTan returns the sum of the tangents xs, which is not empty: the
// tangent of a sum.
func SumTan[D any](pos string, xs []D) D {
	r := Copy(xs[0])
	for _, x := range xs[1:] {
		r = AddTo(pos, r, x)
	}
	return r
}
