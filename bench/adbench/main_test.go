package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
				prog, err := driver.LoadWith([]string{filepath.Join("..", "..", k.sources[0])}, driver.Derived, driver.Options{})
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

// TestGradbenchInput checks the conversion of ADBench input files into
// GradBench's JSON inputs: every number used once, in the shapes
// GradBench's evals read.
func TestGradbenchInput(t *testing.T) {
	b, err := gradbenchInput("gmm", filepath.Join("testdata", "gmm", "1k", "gmm_d2_K5.txt"), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		D, K, N, M int
		Alpha      []float64
		Mu, Q, L   [][]float64
		X          [][]float64
		Gamma      float64
		MinRuns    int `json:"min_runs"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if g.D != 2 || g.K != 5 || len(g.Alpha) != g.K || len(g.Mu) != g.K || len(g.Mu[0]) != g.D ||
		len(g.Q) != g.K || len(g.Q[0]) != g.D || len(g.L) != g.K || len(g.L[0]) != g.D*(g.D-1)/2 ||
		len(g.X) != g.N || len(g.X[g.N-1]) != g.D || g.Gamma == 0 || g.MinRuns != 9 {
		t.Errorf("GMM input has the wrong shape: d %d k %d n %d, %d alpha, %dx%d mu, %dx%d q, %dx%d l, %d x, gamma %g",
			g.D, g.K, g.N, len(g.Alpha), len(g.Mu), len(g.Mu[0]), len(g.Q), len(g.Q[0]), len(g.L), len(g.L[0]), len(g.X), g.Gamma)
	}

	b, err = gradbenchInput("lstm", filepath.Join("testdata", "lstm", "lstm_l2_c1024.txt"), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Main     [][]float64 `json:"main_params"`
		Extra    [][]float64 `json:"extra_params"`
		State    [][]float64 `json:"state"`
		Sequence [][]float64 `json:"sequence"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	bs := len(l.Extra[0])
	if len(l.Main) != 4 || len(l.Main[0]) != 4*bs || len(l.Extra) != 3 || len(l.State) != 4 || len(l.State[0]) != bs || len(l.Sequence[0]) != bs {
		t.Errorf("LSTM input has the wrong shape: %d main rows of %d, %d extra, %d state, %d sequence", len(l.Main), len(l.Main[0]), len(l.Extra), len(l.State), len(l.Sequence))
	}

	// A file with a number too many, or too few, is refused.
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("2 1 1\n1.0\n1.0 2.0\n0.5 0.5 0.1\n3.0 4.0\n1.0 0\n7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gradbenchInput("gmm", bad, 0.5); err == nil {
		t.Error("a number too many was not refused")
	}
	if err := os.WriteFile(bad, []byte("2 1 1\n1.0\n1.0 2.0\n0.5 0.5 0.1\n3.0 4.0\n1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gradbenchInput("gmm", bad, 0.5); err == nil {
		t.Error("a number too few was not refused")
	}
}

// TestBuildHint checks that a missing json.hpp, the one header GradBench's
// C++ needs that a machine may lack, gets a hint saying what to install,
// and other errors none.
func TestBuildHint(t *testing.T) {
	missing := "anchor-include/json.hpp:1:10: fatal error: nlohmann/json.hpp: No such file or directory"
	if h := buildHint([]byte(missing)); !strings.Contains(h, "nlohmann-json3-dev") {
		t.Errorf("buildHint(%q) = %q, want the package to install", missing, h)
	}
	if h := buildHint([]byte("gmm.cpp:3: error: expected ';'")); h != "" {
		t.Errorf("buildHint of another error = %q, want none", h)
	}
}
