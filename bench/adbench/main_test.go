package main

import (
	"path/filepath"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
)

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

// BenchmarkCompile measures ksc's own time on each benchmark's source: the
// front end, differentiation of the gdefs, the passes and C generation
// (not the C compiler). Goal: under 100 ms for bench/gmm.ks.
//
//	go test ./bench/adbench -run '^$' -bench Compile
func BenchmarkCompile(b *testing.B) {
	for _, name := range []string{"gmm", "lstm"} {
		k := kinds[name]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				prog, err := driver.LoadWith([]string{filepath.Join("..", "..", k.source)}, driver.Derived, driver.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := driver.Optimise(prog, driver.Options{}); err != nil {
					b.Fatal(err)
				}
				if _, err := driver.EmitC(prog, cemit.Options{Prefix: k.name, Library: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
