package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
)

// chainSource returns a def of k chained lets, each using the previous
// variable twice, with its forward, reverse and split reverse modes.
func chainSource(k int) string {
	var b strings.Builder
	b.WriteString("(def chain Float (x0 : Float)\n  (let (x x0)\n")
	for i := 0; i < k; i++ {
		b.WriteString("  (let (x (mul x (sin x)))\n")
	}
	b.WriteString("  x" + strings.Repeat(")", k+2) + "\n")
	b.WriteString("(gdef fwd [chain Float])\n(gdef rev [chain Float])\n(gdef sufrev [chain Float])\n")
	return b.String()
}

// TestChainedLetsCost pins the cost of differentiating a chain of k lets
// (issue 12): the generated C grows linearly with k, and what ksc
// allocates compiling it at most quadratically (the simplifier rewrites
// to a fixpoint; substituting let-bound linear maps into their uses made
// it exponential: 20 lets took 3 GB). Counted, not timed: the bytes of C
// and the bytes the Go runtime reports allocated, for both reverse
// strategies.
func TestChainedLetsCost(t *testing.T) {
	ks := []int{10, 20, 40, 80}
	for _, rev := range []string{"lm", "bog"} {
		size := map[int]float64{}
		alloc := map[int]float64{}
		for _, k := range ks {
			file := filepath.Join(t.TempDir(), "chain.ks")
			if err := os.WriteFile(file, []byte(chainSource(k)), 0o644); err != nil {
				t.Fatal(err)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			opts := driver.Options{Rev: rev}
			prog, err := driver.LoadWith([]string{file}, driver.Derived, opts)
			if err == nil {
				err = driver.Optimise(prog, opts)
			}
			var out *cemit.Output
			if err == nil {
				out, err = driver.EmitC(prog, cemit.Options{Prefix: "ks"})
			}
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatalf("--rev %s, %d lets: %v", rev, k, err)
			}
			size[k] = float64(len(out.C))
			alloc[k] = float64(m1.TotalAlloc - m0.TotalAlloc)
			// At most quadratic: doubling the chain at most quadruples
			// (with a margin) what is allocated. Checked before the next
			// size, which an exponential cost would not finish.
			if k > ks[0] {
				if r := alloc[k] / alloc[k/2]; r > 4.5 {
					t.Fatalf("--rev %s: from %d to %d lets, allocation grows %.1f times (%v)", rev, k/2, k, r, alloc)
				}
			}
		}
		report := fmt.Sprintf("--rev %s: C bytes %v, bytes allocated %v", rev, size, alloc)
		t.Log(report)
		// Linear: the C each let adds between 40 and 80 lets is what it
		// adds between 10 and 20, within 30%.
		perLet := func(m map[int]float64, a, b int) float64 { return (m[b] - m[a]) / float64(b-a) }
		if late, early := perLet(size, 40, 80), perLet(size, 10, 20); late > 1.3*early {
			t.Errorf("the C grows faster than the chain: %.0f bytes per let from 40 to 80, %.0f from 10 to 20\n%s", late, early, report)
		}
		if alloc[80] > 200<<20 {
			t.Errorf("80 lets allocate %.0f MB, want at most 200\n%s", alloc[80]/(1<<20), report)
		}
	}
}
