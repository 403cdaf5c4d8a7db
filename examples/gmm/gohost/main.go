// Command gmmhost fits a mixture of two Gaussians to points in the plane
// by gradient descent, with the negative log-likelihood and its gradient
// from the library ksc built from ../gmm.ks, through the Go bindings ksc
// writes beside it (a package in ./gmm). It prints what ../host.py prints.
// From this directory:
//
//	ksc build --go ../gmm.ks -o gmm/libgmm.so
//	go run .
package main

import (
	"fmt"
	"math"
	"os"

	"gmmhost/gmm"
)

func main() {
	// 200 points around (-2, 0.5) and (1.5, 2), with deterministic scatter.
	centres := [2][2]float64{{-2, 0.5}, {1.5, 2}}
	x := make([][]float64, 200)
	for i := range x {
		c := centres[i%2]
		x[i] = []float64{c[0] + 0.6*math.Sin(1.7*float64(i)+0.3), c[1] + 0.6*math.Cos(2.3*float64(i))}
	}
	alpha, mu, s := []float64{0, 0}, [][]float64{{-1, -1}, {1, 1}}, []float64{0, 0}

	ctx, err := gmm.NewContext()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer ctx.Close()
	const step = 0.5
	for it := 0; it <= 300; it++ {
		// [vrev nll 0 1 2]: the value, and the gradient with respect to
		// alpha, mu and s.
		nll, dalpha, dmu, ds, err := ctx.VrevNllWrt012(alpha, mu, s, x, 1)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if it%100 == 0 {
			fmt.Printf("iteration %3d: nll %.6f\n", it, nll)
		}
		for j := range alpha {
			alpha[j] -= step * dalpha[j]
			s[j] -= step * ds[j]
			for e := range mu[j] {
				mu[j][e] -= step * dmu[j][e]
			}
		}
	}
	total := math.Exp(alpha[0]) + math.Exp(alpha[1])
	for j := range alpha {
		fmt.Printf("component %d: weight %.3f, mean (%.3f, %.3f), sd %.3f\n", j, math.Exp(alpha[j])/total, mu[j][0], mu[j][1], math.Exp(s[j]))
	}
}
