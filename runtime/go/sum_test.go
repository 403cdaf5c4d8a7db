package ksrt

import (
	"math"
	"testing"
)

// TestSumFloats pins the order of a sum of Floats: lanes k mod 4, combined
// as (s0 + s1) + (s2 + s3), each from -0.0.
func TestSumFloats(t *testing.T) {
	x := []float64{1e16, 1, -1e16, 1, 3, 0.5}
	got := SumFloats(int64(len(x)), func(k int64) float64 { return x[k] })
	s0, s1, s2, s3 := math.Copysign(0, -1)+x[0]+x[4], math.Copysign(0, -1)+x[1]+x[5], math.Copysign(0, -1)+x[2], math.Copysign(0, -1)+x[3]
	if want := (s0 + s1) + (s2 + s3); got != want {
		t.Errorf("sum %v = %v, want %v", x, got, want)
	}
	// In order it would be 4.5; in lanes the large terms meet the small
	// ones differently.
	if inOrder := ((((x[0] + x[1]) + x[2]) + x[3]) + x[4]) + x[5]; got == inOrder {
		t.Errorf("the sum %v is the in-order sum: the test does not tell the orders apart", got)
	}
	if z := SumFloats(1, func(int64) float64 { return math.Copysign(0, -1) }); !math.Signbit(z) {
		t.Error("the sum of one -0.0 is not -0.0")
	}
}
