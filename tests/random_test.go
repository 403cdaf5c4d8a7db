package tests

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/internal/ksgen"
)

var (
	randomN      = flag.Int("random.n", 100, "TestRandomPrograms: how many programs (50 with -short); .ci/run runs 10,000")
	randomSeed   = flag.Int64("random.seed", 1, "TestRandomPrograms: the first program's seed")
	randomBatch  = flag.Int("random.batch", 100, "TestRandomPrograms: programs compiled together")
	randomSave   = flag.Bool("random.save", true, "TestRandomPrograms: write shrunk failures to testdata/ad/random_SEED.ks")
	randomShrink = flag.Int("random.shrink", 10, "TestRandomPrograms: shrink at most this many failing programs (shrinking is slow)")
)

// strategies are the ways of differentiating a program, each with the
// backends it runs on: [rev f] and [sufrev f] are checked against [fwd f]
// by the adjoint identity, so they all agree with each other, and [fwd f]
// against central differences (derive's by the values runs, cps's dual
// numbers by its own run: strategyFailures).
//
// --rev=suf is not among them: its [rev f] is made of the split passes
// translated from the single-use form, those of the lm run's [sufrev f]
// (derive.splitRev), and its [vrev f] is the lm run's. --rev=bog's [rev f]
// and [vrev f] are made of passes cut from [revfull f], which no other run
// checks. (Until 2026-11-29 the cut passes were [sufrev f]'s by default
// and the bog run was the redundant one; the four runs cost a sixth more
// than these three.)
var strategies = []struct {
	rev      string
	backends []string
}{
	{"lm", []string{"c", "go"}}, // [sufrev f]: the passes translated from the single-use form (package proc)
	{"bog", []string{"c"}},      // the split passes cut from [revfull f]
	{"cps", []string{"go"}},     // --ad=cps: the Go backend's continuations
}

// TestRandomPrograms generates programs (internal/ksgen) from seeds
// -random.seed on, -random.n of them, and requires that the C and Go
// backends, and C with the rewriting passes off, print the values the
// reference evaluator prints, that forward mode agrees with the
// evaluator's central differences (differingValues), and that every
// strategy's derivatives agree. A failing program is
// shrunk and written to testdata/ad/random_SEED.ks, where the derivative
// tests run it from then on. For a long campaign:
//
//	go test ./tests -run TestRandomPrograms -timeout 0 -args -random.n 100000 -random.seed 7
func TestRandomPrograms(t *testing.T) {
	needCC(t)
	n := *randomN
	if testing.Short() {
		n = 50
	}
	start := time.Now()
	cov := newCoverage()
	var shrinks atomic.Int64
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
			for i, p := range progs {
				cov.add(p, failing[i])
			}
			for i := range progs {
				if failing[i] == nil {
					continue
				}
				if shrinks.Add(1) > int64(*randomShrink) {
					t.Errorf("seed %d fails (%s); not shrunk (-random.shrink=%d)", seeds[i], strings.Join(failing[i], ", "), *randomShrink)
					continue
				}
				shrinkAndSave(t, seeds[i], progs[i])
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d programs from seed %d in %v", n, *randomSeed, time.Since(start).Round(time.Second))
		t.Logf("coverage (programs exercising each construct; failing ones by check):\n%s", cov.table())
		if n >= 1000 {
			for _, f := range ksgen.AllFeatures() {
				if cov.count(f.Name) == 0 {
					t.Errorf("no program of %d exercises %s (%s)", n, f.Name, f.Doc)
				}
			}
		}
	})
}

// coverage counts, for each feature (ksgen.AllFeatures), the programs
// exercising it, and of those the ones failing each check: "values" (C
// against Go) and each strategy. The subtests add to it in parallel.
type coverage struct {
	mu       sync.Mutex
	programs map[string]int            // feature -> programs
	failed   map[string]map[string]int // feature -> check -> failing programs
}

func newCoverage() *coverage {
	return &coverage{programs: map[string]int{}, failed: map[string]map[string]int{}}
}

// add counts a program and the checks it failed.
func (c *coverage) add(p *ksgen.Program, failedChecks []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range append(p.Features(), "(all)") {
		c.programs[f]++
		if c.failed[f] == nil {
			c.failed[f] = map[string]int{}
		}
		for _, ch := range failedChecks {
			c.failed[f][ch]++
		}
	}
}

// count returns the number of programs exercising a feature.
func (c *coverage) count(feature string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.programs[feature]
}

// checkNames are the columns of the coverage table: the C-Go comparison
// of values, then the strategies.
func checkNames() []string {
	out := []string{"values"}
	for _, s := range strategies {
		out = append(out, s.rev+" ("+strings.Join(s.backends, ",")+")")
	}
	return out
}

// table returns the coverage as a Markdown table.
func (c *coverage) table() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	checks := checkNames()
	fmt.Fprintf(&b, "| construct | programs | failing: %s |\n|---|---|%s\n", strings.Join(checks, " | "), strings.Repeat("---|", len(checks)))
	names := []string{"(all)"}
	for _, f := range ksgen.AllFeatures() {
		names = append(names, f.Name)
	}
	for _, name := range names {
		fmt.Fprintf(&b, "| %s | %d |", name, c.programs[name])
		for _, ch := range checks {
			fmt.Fprintf(&b, " %d |", c.failed[name][ch])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// randomFailures runs a batch of programs through the backends and the
// strategies and returns, for each program that fails, the checks it
// fails (checkNames).
func randomFailures(t *testing.T, progs []*ksgen.Program) map[int][]string {
	t.Helper()
	bad := map[int][]string{}
	byName := map[string]int{}
	var checks []*check
	for i, p := range progs {
		args, dr := p.Specs()
		c := &check{name: p.Entry().Name, args: specs(args), dr: spec(dr), fd: true, lean: i%4 != 0}
		checks = append(checks, c)
		byName[c.name] = i
	}
	names := checkNames()
	// The values, through both backends.
	all := make([]int, len(progs))
	for i := range all {
		all[i] = i
	}
	for _, i := range differingValues(t, t.Errorf, progs, checks, all) {
		bad[i] = append(bad[i], names[0])
	}
	// The derivatives, by every strategy.
	for k, s := range strategies {
		for _, p := range strategyFailures(t, progs, checks, all, s.rev, s.backends) {
			if p.check == "" {
				continue
			}
			i := byName[p.check]
			if l := bad[i]; len(l) == 0 || l[len(l)-1] != names[k+1] {
				bad[i] = append(bad[i], names[k+1])
			}
		}
	}
	return bad
}

// allDefs returns the definitions of programs.
func allDefs(progs []*ksgen.Program) string {
	var b strings.Builder
	for _, p := range progs {
		b.WriteString(p.Defs())
	}
	return b.String()
}

// strategyFailures checks the derivatives of the programs at indices
// which, compiled together, by one strategy, and reports (t.Errorf) and
// returns the problems. When they do not build or run together, it takes
// out the program the error names (culprit) and tries the rest, or, when
// the error names none, halves the set.
func strategyFailures(t *testing.T, progs []*ksgen.Program, checks []*check, which []int, rev string, backends []string) []problem {
	t.Helper()
	var sub []*ksgen.Program
	var cs []*check
	for _, i := range which {
		sub = append(sub, progs[i])
		c := *checks[i]
		// [fwd f] is derive's under every --rev, and the values runs
		// check it against the evaluator's central differences
		// (differingValues): only --ad=cps, whose [fwd f] is the Go
		// backend's dual numbers, checks it here again.
		c.fd = c.fd && rev == "cps"
		cs = append(cs, &c)
	}
	probs, err := evalChecks(t.TempDir(), "random", allDefs(sub), cs, 1, false, rev, backends, randomCC())
	if err != nil {
		if k := culprit(err, sub); k >= 0 || len(which) == 1 {
			k = max(k, 0)
			t.Errorf("%s (--rev/--ad %s): %v", cs[k].name, rev, err)
			rest := append(append([]int(nil), which[:k]...), which[k+1:]...)
			if len(rest) == 0 {
				return []problem{{cs[k].name, err.Error()}}
			}
			return append([]problem{{cs[k].name, err.Error()}}, strategyFailures(t, progs, checks, rest, rev, backends)...)
		}
		h := len(which) / 2
		return append(strategyFailures(t, progs, checks, which[:h], rev, backends),
			strategyFailures(t, progs, checks, which[h:], rev, backends)...)
	}
	for _, p := range probs {
		t.Errorf("--rev/--ad %s: %s", rev, p.msg)
	}
	return probs
}

// culprit returns the index in progs of the program an error is about, or
// -1: the one whose names (pSEED_...) the error mentions, or the one
// whose definitions hold the line of a position it gives (the programs'
// definitions start the file, one after the other).
func culprit(err error, progs []*ksgen.Program) int {
	msg := err.Error()
	for i, p := range progs {
		if strings.Contains(msg, strings.TrimSuffix(p.Entry().Name, "f")) {
			return i
		}
	}
	m := regexp.MustCompile(`\.ks:(\d+):`).FindStringSubmatch(msg)
	if m == nil {
		return -1
	}
	line, _ := strconv.Atoi(m[1])
	for i, p := range progs {
		line -= strings.Count(p.Defs(), "\n")
		if line <= 0 {
			return i
		}
	}
	return -1
}

func specs(ss []string) []spec {
	out := make([]spec, len(ss))
	for i, s := range ss {
		out[i] = spec(s)
	}
	return out
}

// valueRuns are the ways the values program runs: the reference
// evaluator of the program as written (package eval), whose output the
// others must reproduce, the backends, and C with the rewriting passes
// off. Those marked fwd also print forward mode, checked against central
// differences computed by the evaluator.
var valueRuns = []struct {
	name, backend string
	opts          driver.Options
	fwd           bool
}{
	{"eval", "eval", driver.Options{}, false},
	{"C", "c", driver.Options{}, true},
	{"Go", "go", driver.Options{}, true},
	{"C --no-opt", "c", driver.Options{NoOpt: true}, true},
}

// differingValues checks the entry functions of the checks at indices
// which against the reference evaluator and returns the indices of those
// that fail. Each run of valueRuns prints, for every function, its value
// at two random points (lines "NAME v1 ..." and "NAME v2 ...") and the
// central difference <dr, (f(x + h dx) - f(x - h dx)) / 2h> at a third
// ("NAME fd ...", the difference taken per component before the dot, so a
// large component cannot absorb a small one's change); the compiled runs also print <dr, [fwd f](x, dx)>
// ("NAME fwd ..."). Values must equal the evaluator's as printed (%g,
// within a unit of the last digit); forward mode must be within 5e-5
// (relative, with a floor of 1e-3) of the evaluator's central difference,
// so the derivative is checked against a computation that shares nothing
// with derive, linmap or the optimiser. When the programs do not build or
// run together, it takes out the one the error names (culprit), or halves
// the set, until it finds those that do not on their own, which fail too.
func differingValues(t *testing.T, report func(format string, args ...any), progs []*ksgen.Program, checks []*check, which []int) []int {
	t.Helper()
	rng := rand.New(rand.NewSource(2))
	// Each program's lines are printed by a function of its own
	// (main$NAME, and fwd$NAME for forward mode), so that no function of
	// the generated code holds every program's points.
	var defs, plainDefs, fwdDefs strings.Builder
	var plainCalls, fwdCalls []string
	for _, i := range which {
		defs.WriteString(progs[i].Defs())
		c := checks[i]
		fmt.Fprintf(&plainDefs, "(def main$%s Integer ()\n  (print", c.name)
		for k := 1; k <= 2; k++ {
			x, _, _ := c.point(rng)
			fmt.Fprintf(&plainDefs, "\n    %q (%s %s) \"\\n\"", fmt.Sprintf("%s v%d ", c.name, k), c.name, x)
		}
		x, dx, dr := c.point(rng)
		fmt.Fprintf(&plainDefs, `
    %[1]q (let ((h 1e-6) (x %[3]s) (dx %[4]s) (dr %[5]s))
      (div (ts_dot (ts_add (%[2]s (ts_add x (ts_scale h dx)))
                           (ts_neg (%[2]s (ts_add x (ts_scale (neg h) dx)))))
                   dr)
           (mul 2.0 h))) "\n"))
`, c.name+" fd ", c.name, x, dx, dr)
		fmt.Fprintf(&fwdDefs, "(def fwd$%s Integer ()\n  (print %q (ts_dot ([fwd %s] %s %s) %s) \"\\n\"))\n", c.name, c.name+" fwd ", c.name, x, dx, dr)
		plainCalls = append(plainCalls, fmt.Sprintf("(main$%s)", c.name))
		fwdCalls = append(fwdCalls, fmt.Sprintf("(fwd$%s)", c.name))
	}
	dir := t.TempDir()
	write := func(name, mains string, calls []string) string {
		file := filepath.Join(dir, name)
		src := defs.String() + mains + "(def main Integer ()\n  " + sumOf(calls) + ")\n"
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	plain := write("values.ks", plainDefs.String(), plainCalls)
	withFwd := write("values_fwd.ks", plainDefs.String()+fwdDefs.String(), append(plainCalls, fwdCalls...))
	idx := map[string]int{}
	for i, c := range checks {
		idx[c.name] = i
	}
	outs := make([]map[string]string, len(valueRuns))
	for r, run := range valueRuns {
		file := plain
		if run.fwd {
			file = withFwd
		}
		cc := randomCC()
		if run.opts.NoOpt {
			// Code as the front end makes it, compiled as it is: gcc's
			// optimiser would only redo the passes this run leaves out,
			// and takes twice as long on it.
			cc = baseCC("-O0", "-DKS_NO_CLONES")
		}
		res, err := tryProgram(run.backend, run.opts, cc, t.TempDir(), file)
		if err == nil && res.code != 0 {
			err = fmt.Errorf("%s: status %d\n%s", run.name, res.code, res.stderr)
		}
		if err == nil && res.warnings != "" {
			err = fmt.Errorf("%s: the C compiler warned:\n%s", run.name, res.warnings)
		}
		if err != nil {
			var sub []*ksgen.Program
			for _, i := range which {
				sub = append(sub, progs[i])
			}
			if k := culprit(err, sub); k >= 0 || len(which) == 1 {
				k = max(k, 0)
				report("%s: %v", checks[which[k]].name, err)
				rest := append(append([]int(nil), which[:k]...), which[k+1:]...)
				if len(rest) == 0 {
					return which[k : k+1]
				}
				return append([]int{which[k]}, differingValues(t, report, progs, checks, rest)...)
			}
			h := len(which) / 2
			return append(differingValues(t, report, progs, checks, which[:h]), differingValues(t, report, progs, checks, which[h:])...)
		}
		outs[r] = map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
			f := strings.SplitN(line, " ", 3)
			if len(f) == 3 {
				outs[r][f[0]+" "+f[1]] = f[2]
			}
		}
	}
	failed := map[int]bool{}
	var bad []int
	fail := func(name, format string, args ...any) {
		report("%s: "+format, append([]any{name}, args...)...)
		if i := idx[name]; !failed[i] {
			failed[i] = true
			bad = append(bad, i)
		}
	}
	ref := outs[0]
	for _, i := range which {
		name := checks[i].name
		for r, run := range valueRuns[1:] {
			out := outs[r+1]
			for _, tag := range []string{"v1", "v2"} {
				want, got := ref[name+" "+tag], out[name+" "+tag]
				if want == "" || !sameValues(want, got, 1e-5) {
					fail(name, "%s prints %q, the evaluator %q (%s)", run.name, got, want, tag)
				}
			}
			fd, err1 := strconv.ParseFloat(ref[name+" fd"], 64)
			an, err2 := strconv.ParseFloat(out[name+" fwd"], 64)
			if err1 != nil || err2 != nil {
				fail(name, "%s: cannot read forward mode %q or the evaluator's central difference %q", run.name, out[name+" fwd"], ref[name+" fd"])
			} else if e := math.Abs(fd-an) / (1e-3 + math.Abs(an)); !(e <= 5e-5) {
				fail(name, "%s: forward mode %g differs from the evaluator's central difference %g by %g (relative)", run.name, an, fd, e)
			}
		}
	}
	return bad
}

// sameValues compares two printed lines: numbers within rel relative
// (a printed Float has six significant digits, so values that differ in
// the last bits may differ by a unit of the sixth), everything else
// exactly.
func sameValues(a, b string, rel float64) bool {
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
		if err1 != nil || err2 != nil || !(math.Abs(x-y) <= rel*math.Max(math.Abs(x), math.Abs(y))+1e-300) {
			return false
		}
	}
	return true
}

// randomCC is the C compiler of the random tests: without the sanitizers,
// which the other tests run, for speed.
func randomCC() driver.CC { return baseCC(o1Flags...) }

// checkOf returns the derivative check of a program's entry function.
func checkOf(p *ksgen.Program) *check {
	args, dr := p.Specs()
	return &check{name: p.Entry().Name, src: p.Defs(), args: specs(args), dr: spec(dr), fd: true}
}

// failsValues reports whether a program on its own prints values other
// than the evaluator's, or a forward mode other than its differences.
func failsValues(t *testing.T, p *ksgen.Program) bool {
	quiet := func(string, ...any) {}
	return len(differingValues(t, quiet, []*ksgen.Program{p}, []*check{checkOf(p)}, []int{0})) > 0
}

// fails reports whether a program fails any check on its own.
func fails(t *testing.T, p *ksgen.Program) bool {
	if failsValues(t, p) {
		return true
	}
	c := checkOf(p)
	for _, s := range strategies {
		probs, err := evalChecks(t.TempDir(), "shrink", "", []*check{c}, 1, false, s.rev, s.backends, randomCC())
		if err != nil || len(probs) > 0 {
			return true
		}
	}
	return false
}

// shrinkAndSave shrinks a failing program and writes it as a regression
// test: a program whose values differ from the evaluator's to
// testdata/programs/random_SEED.ks, with a main printing its entry
// function at three points and the evaluator's output as
// random_SEED.out; any other to testdata/ad/random_SEED.ks with its CHECK
// line.
func shrinkAndSave(t *testing.T, seed int64, p *ksgen.Program) {
	t.Helper()
	if !fails(t, p) {
		t.Logf("seed %d fails only with the rest of its batch; not shrunk", seed)
		return
	}
	p = ksgen.Shrink(p, func(q *ksgen.Program) bool { return fails(t, q) })
	files := map[string]string{}
	if failsValues(t, p) {
		src, out := valuesRegression(t, seed, p)
		files[filepath.Join("testdata", "programs", fmt.Sprintf("random_%d.ks", seed))] = src
		files[filepath.Join("testdata", "programs", fmt.Sprintf("random_%d.out", seed))] = out
	} else {
		args, dr := p.Specs()
		files[filepath.Join("testdata", "ad", fmt.Sprintf("random_%d.ks", seed))] = fmt.Sprintf(
			"; Found by TestRandomPrograms (seed %d), shrunk.\n; CHECK %s %s -> %s\n%s",
			seed, p.Entry().Name, strings.Join(args, " "), dr, p.Defs())
	}
	var all strings.Builder
	for file, src := range files {
		fmt.Fprintf(&all, "%s:\n%s\n", file, src)
		if *randomSave {
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !*randomSave {
		t.Errorf("seed %d fails; shrunk (not saved, -random.save=false):\n%s", seed, all.String())
		return
	}
	t.Errorf("seed %d fails; shrunk to\n%s", seed, all.String())
}

// valuesRegression returns a program printing p's entry function at three
// points (its definitions without gdefs, so that it runs everywhere
// testdata/programs runs), and what the evaluator prints for it.
func valuesRegression(t *testing.T, seed int64, p *ksgen.Program) (src, out string) {
	var b strings.Builder
	fmt.Fprintf(&b, "; Found by TestRandomPrograms (seed %d), shrunk: the compiled program printed\n; values other than the reference evaluator's, which wrote the .out file.\n", seed)
	for _, line := range strings.SplitAfter(p.Defs(), "\n") {
		if !strings.HasPrefix(line, "(gdef ") {
			b.WriteString(line)
		}
	}
	c := checkOf(p)
	rng := rand.New(rand.NewSource(seed))
	b.WriteString("(def main Integer ()\n  (print")
	for k := 0; k < 3; k++ {
		x, _, _ := c.point(rng)
		fmt.Fprintf(&b, "\n    (%s %s) \"\\n\"", c.name, x)
	}
	b.WriteString("))\n")
	file := filepath.Join(t.TempDir(), "regression.ks")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := tryProgram("eval", driver.Options{}, randomCC(), t.TempDir(), file)
	if err != nil || r.code != 0 {
		t.Fatalf("the evaluator does not run the regression program (%v, %s):\n%s", err, r.stderr, b.String())
	}
	return b.String(), r.stdout
}
