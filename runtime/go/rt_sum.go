package ksrt

import "math"

// Sums of Floats.
//
// A sum of Floats (sum, sumbuild) keeps Lanes partial sums: the element at
// flat position k (row-major) is added, in order, to partial sum k mod
// Lanes; each starts at -0.0 (the identity of addition: a sum of one -0.0
// stays -0.0), and the result is (s0 + s1) + (s2 + s3). The order is that
// of a vector loop, so the C backend's sums vectorise without
// -ffast-math, and every implementation of ks (the C and Go backends,
// the evaluators) adds in exactly this order and agrees to the bit. Sums
// of other types add element by element, in order.

// Lanes is the number of partial sums of a sum of Floats.
const Lanes = 4

// NewLanes returns the partial sums of an empty sum.
func NewLanes() [Lanes]float64 {
	z := math.Copysign(0, -1)
	return [Lanes]float64{z, z, z, z}
}

// Combine returns the sum of the partial sums.
func Combine(s *[Lanes]float64) float64 { return (s[0] + s[1]) + (s[2] + s[3]) }

// SumFloats returns the sum of elem(k) for k from 0 to n - 1, in lanes.
func SumFloats(n int64, elem func(k int64) float64) float64 {
	s := NewLanes()
	for k := int64(0); k < n; k++ {
		s[k%Lanes] += elem(k)
	}
	return Combine(&s)
}
