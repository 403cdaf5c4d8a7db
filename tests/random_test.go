package tests

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/internal/ksgen"
)

var (
	randomN     = flag.Int("random.n", 2000, "TestRandomPrograms: how many programs (200 with -short)")
	randomSeed  = flag.Int64("random.seed", 1, "TestRandomPrograms: the first program's seed")
	randomBatch = flag.Int("random.batch", 100, "TestRandomPrograms: programs compiled together")
)

// strategies are the ways of differentiating a program, each with the
// backends it runs on: [fwd f] is checked against central differences and
// [rev f] and [sufrev f] against [fwd f] by the adjoint identity, so they
// all agree with each other.
var strategies = []struct {
	rev      string
	backends []string
}{
	{"lm", []string{"c", "go"}},
	{"bog", []string{"c"}},
	{"cps", []string{"go"}}, // --ad=cps: the Go backend's continuations
}

// TestRandomPrograms generates programs (internal/ksgen) from seeds
// -random.seed on, -random.n of them, and requires that the C and Go
// backends print the same values for each (Floats within 1e-12 relative)
// and that every strategy's derivatives agree. A failing program is
// shrunk and written to testdata/ad/random_SEED.ks, where the derivative
// tests run it from then on. For a long campaign:
//
//	go test ./tests -run TestRandomPrograms -timeout 0 -args -random.n 100000 -random.seed 7
func TestRandomPrograms(t *testing.T) {
	needCC(t)
	n := *randomN
	if testing.Short() {
		n = 200
	}
	start := time.Now()
	for first := *randomSeed; first < *randomSeed+int64(n); first += int64(*randomBatch) {
		last := min(first+int64(*randomBatch), *randomSeed+int64(n))
		t.Run(fmt.Sprintf("seeds_%d_%d", first, last-1), func(t *testing.T) {
			t.Parallel()
			var progs []*ksgen.Program
			var seeds []int64
			for seed := first; seed < last; seed++ {
				progs = append(progs, ksgen.Generate(seed, fmt.Sprintf("p%d_", seed)))
				seeds = append(seeds, seed)
			}
			failing := randomFailures(t, progs)
			for _, i := range failing {
				shrinkAndSave(t, seeds[i], progs[i])
			}
		})
	}
	t.Cleanup(func() { t.Logf("%d programs from seed %d in %v", n, *randomSeed, time.Since(start).Round(time.Second)) })
}

// randomFailures runs a batch of programs through the backends and the
// strategies and returns the indices of those that fail.
func randomFailures(t *testing.T, progs []*ksgen.Program) []int {
	t.Helper()
	bad := map[int]bool{}
	byName := map[string]int{}
	var prelude strings.Builder
	var checks []*check
	for i, p := range progs {
		prelude.WriteString(p.Defs())
		args, dr := p.Specs()
		c := &check{name: p.Entry().Name, args: specs(args), dr: spec(dr), fd: true}
		checks = append(checks, c)
		byName[c.name] = i
	}
	// The values, through both backends.
	for _, i := range differingValues(t, prelude.String(), checks) {
		bad[i] = true
	}
	// The derivatives, by every strategy.
	for _, s := range strategies {
		probs, err := evalChecks(t.TempDir(), "random", prelude.String(), checks, 1, false, s.rev, s.backends, randomCC())
		if err != nil {
			// The batch does not build or run: find the programs that
			// do not, one by one.
			for i, c := range checks {
				if _, err := evalChecks(t.TempDir(), "random", "", []*check{withSrc(c, progs[i])}, 1, false, s.rev, s.backends, randomCC()); err != nil {
					t.Errorf("%s (--rev/--ad %s): %v", c.name, s.rev, err)
					bad[i] = true
				}
			}
			continue
		}
		for _, p := range probs {
			t.Errorf("--rev/--ad %s: %s", s.rev, p.msg)
			bad[byName[p.check]] = true
		}
	}
	var out []int
	for i := range progs {
		if bad[i] {
			out = append(out, i)
		}
	}
	return out
}

func specs(ss []string) []spec {
	out := make([]spec, len(ss))
	for i, s := range ss {
		out[i] = spec(s)
	}
	return out
}

// withSrc returns the check with the program's definitions as its source.
func withSrc(c *check, p *ksgen.Program) *check {
	d := *c
	d.src = p.Defs()
	return &d
}

// differingValues prints every check's function at two points through the
// C and Go backends and returns the indices whose values differ by more
// than 1e-12 relative (Floats) or at all (the rest of the text).
func differingValues(t *testing.T, prelude string, checks []*check) []int {
	t.Helper()
	rng := rand.New(rand.NewSource(2))
	var b strings.Builder
	b.WriteString(prelude)
	b.WriteString("(def main Integer ()\n  (print")
	for _, c := range checks {
		for k := 0; k < 2; k++ {
			x, _, _ := c.point(rng)
			fmt.Fprintf(&b, "\n    %q (%s %s) \"\\n\"", c.name+" ", c.name, x)
		}
	}
	b.WriteString("))\n")
	file := filepath.Join(t.TempDir(), "values.ks")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, be := range []string{"c", "go"} {
		r, err := tryProgram(be, driver.Options{}, randomCC(), t.TempDir(), file)
		if err != nil {
			t.Fatal(err)
		}
		if r.code != 0 {
			t.Fatalf("%s backend: status %d\n%s", be, r.code, r.stderr)
		}
		out[be] = r.stdout
	}
	lc, lg := strings.Split(out["c"], "\n"), strings.Split(out["go"], "\n")
	if len(lc) != len(lg) {
		t.Fatalf("the backends print %d and %d lines", len(lc), len(lg))
	}
	idx := map[string]int{}
	for i, c := range checks {
		idx[c.name] = i
	}
	var bad []int
	for k := range lc {
		if !sameValues(lc[k], lg[k]) {
			name := strings.Fields(lc[k])[0]
			t.Errorf("%s: C prints %q, Go %q", name, lc[k], lg[k])
			bad = append(bad, idx[name])
		}
	}
	return bad
}

// sameValues compares two printed lines: numbers within 1e-12 relative,
// everything else exactly.
func sameValues(a, b string) bool {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == ',' || r == '[' || r == ']' })
	}
	fa, fb := split(a), split(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] == fb[i] {
			continue
		}
		x, err1 := strconv.ParseFloat(fa[i], 64)
		y, err2 := strconv.ParseFloat(fb[i], 64)
		if err1 != nil || err2 != nil || !(math.Abs(x-y) <= 1e-12*math.Max(math.Abs(x), math.Abs(y))) {
			return false
		}
	}
	return true
}

// randomCC is the C compiler of the random tests: without the sanitizers,
// which the other tests run, for speed.
func randomCC() driver.CC { return driver.CC{Cmd: ccCmd(), Flags: []string{"-O1"}} }

// fails reports whether a program fails any check on its own.
func fails(t *testing.T, p *ksgen.Program) bool {
	args, dr := p.Specs()
	c := &check{name: p.Entry().Name, src: p.Defs(), args: specs(args), dr: spec(dr), fd: true}
	for _, s := range strategies {
		probs, err := evalChecks(t.TempDir(), "shrink", "", []*check{c}, 1, false, s.rev, s.backends, randomCC())
		if err != nil || len(probs) > 0 {
			return true
		}
	}
	return false
}

// shrinkAndSave shrinks a failing program and writes it to
// testdata/ad/random_SEED.ks with its CHECK line.
func shrinkAndSave(t *testing.T, seed int64, p *ksgen.Program) {
	t.Helper()
	if !fails(t, p) {
		t.Logf("seed %d fails only with the rest of its batch; not shrunk", seed)
		return
	}
	p = ksgen.Shrink(p, func(q *ksgen.Program) bool { return fails(t, q) })
	args, dr := p.Specs()
	src := fmt.Sprintf("; Found by TestRandomPrograms (seed %d), shrunk.\n; CHECK %s %s -> %s\n%s",
		seed, p.Entry().Name, strings.Join(args, " "), dr, p.Defs())
	file := filepath.Join("testdata", "ad", fmt.Sprintf("random_%d.ks", seed))
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Errorf("seed %d fails; shrunk to %s:\n%s", seed, file, src)
}
