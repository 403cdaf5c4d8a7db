package main

import "testing"

func TestCheckResult(t *testing.T) {
	good := result{objective: -5396.0998384261393, fdError: 1e-8, adjointError: 1e-14}
	if msgs := checkResult("gmm/1k/gmm_d2_K5", good); len(msgs) != 0 {
		t.Errorf("good results rejected: %v", msgs)
	}
	for _, bad := range []result{
		{objective: -5396.09984, fdError: 1e-8, adjointError: 1e-14},
		{objective: -5396.0998384261393, fdError: 1e-3, adjointError: 1e-14},
		{objective: -5396.0998384261393, fdError: 1e-8, adjointError: 1e-6},
		{objective: -5396.0998384261393, fdError: 1e-8, adjointError: nan()},
	} {
		if msgs := checkResult("gmm/1k/gmm_d2_K5", bad); len(msgs) != 1 {
			t.Errorf("%+v: got %v, want one complaint", bad, msgs)
		}
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}
