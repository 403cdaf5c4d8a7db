// Command adbench runs the ADBench benchmarks (microsoft/ADBench's GMM and
// LSTM) on ksc's generated C. For each kind it builds a library
// from the benchmark written in ks (bench/gmm.ks, bench/lstm.ks) with the equivalent of
// ksc build, compiles a C harness against it, and runs the harness on each
// input file: the harness checks the objective against the reference value,
// the gradient against central differences and by the adjoint identity with
// [fwd f], and times the objective and the gradient; for GMM also the
// Hessian-vector product [fwd [rev f]] (bench/gmm_hvp.ks), checked against
// central differences of the gradient. adbench prints the results as a
// table and exits 1 if a check fails.
//
//	go run ./bench/adbench [-case gmm/1k/gmm_d10_K25] [-quick] [-min 0.5] [-data DIR] [-march-native] [-threads] [-rev lm|bog|suf] [-keep DIR] [-anchors DIR] [-rounds N]
//
// -case names an input file without its extension, relative to -data;
// without it every case of the standard set runs. -quick runs the small
// cases shipped in bench/adbench/testdata with short timings, for CI.
//
// -anchors names a checkout of GradBench (github.com/gradbench/gradbench):
// adbench then builds its hand-written C++ ("manual") and Tapenade's C
// for each kind, with the library's flags, and times them on the same
// inputs interleaved with ksc's code, printing ratios from this run only
// (anchors.go; it needs a C++ compiler and Debian's nlohmann-json3-dev).
// -rounds repeats the whole interleaved sequence and keeps each time's
// minimum, which is what a busy or noisy machine changes least.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ksc-lang/ksc/driver"
)

//go:embed harness
var harnesses embed.FS

// A kind is a benchmark: its ks sources, its harness and its library name.
type kind struct {
	name    string   // gmm
	sources []string // paths of the ks files, from the repository root
	harness string   // the C harness, in harness/
}

var kinds = map[string]kind{
	"gmm":  {name: "gmm", sources: []string{"bench/gmm.ks", "bench/gmm_hvp.ks"}, harness: "gmm.c"},
	"lstm": {name: "lstm", sources: []string{"bench/lstm.ks"}, harness: "lstm.c"},
}

// references are the objective values of benchmarks.md.
var references = map[string]float64{
	"gmm/1k/gmm_d2_K5":    -5396.0998384261393,
	"gmm/1k/gmm_d10_K25":  -32901.630503640547,
	"gmm/1k/gmm_d20_K50":  -118671.6156130548,
	"gmm/1k/gmm_d64_K100": -1542950.176397502,
	"gmm/1k/gmm_d64_K200": -2085749.9886015686,
	"gmm/10k/gmm_d2_K5":   -52667.815330399506,
	"gmm/10k/gmm_d10_K25": -297445.36585748271,
	"gmm/10k/gmm_d20_K50": -952376.58262255532,
	"lstm/lstm_l2_c1024":  0.66666517955885218,
	"lstm/lstm_l2_c4096":  0.69485633423650228,
	"lstm/lstm_l4_c1024":  0.71067663855842811,
	"lstm/lstm_l4_c4096":  0.68726840398181466,
}

var standard = []string{
	"gmm/1k/gmm_d2_K5", "gmm/1k/gmm_d10_K25", "gmm/1k/gmm_d20_K50", "gmm/1k/gmm_d64_K200",
	"gmm/10k/gmm_d10_K25",
	"lstm/lstm_l2_c1024", "lstm/lstm_l4_c4096",
}

var quickCases = []string{"gmm/1k/gmm_d2_K5", "lstm/lstm_l2_c1024"}

// result is what a harness run reports. The GMM harness also times the
// Hessian-vector product [fwd [rev f]] and checks it against central
// differences of the gradient (hvp is false for the others).
type result struct {
	objective, fdError, adjointError float64
	tf, tg                           float64
	hvp                              bool
	hvpError, th                     float64
}

func main() {
	caseFlag := flag.String("case", "", "one case, e.g. gmm/1k/gmm_d10_K25 (default: the standard set)")
	quick := flag.Bool("quick", false, "the small cases in bench/adbench/testdata, briefly: a correctness check for CI")
	minTime := flag.Float64("min", 0.5, "seconds each timing lasts at least")
	data := flag.String("data", "../shared/data/adbench", "the directory of the ADBench input files")
	native := flag.Bool("march-native", false, "compile the library with -march=native")
	rev := flag.String("rev", "lm", "how [rev f] is computed: lm, bog or suf (ksc --rev)")
	threads := flag.Bool("threads", false, "build the library with --threads (OpenMP outer loops, all cores)")
	keep := flag.String("keep", "", "build in `DIR` and keep it (the generated C, the library and the harness), for profiling")
	anchors := flag.String("anchors", "", "a GradBench checkout in `DIR`: build its manual C++ and Tapenade C and time them in the same run")
	rounds := flag.Int("rounds", 1, "run the interleaved timings `N` times and keep each minimum")
	flag.Parse()
	cases := standard
	switch {
	case *caseFlag != "":
		cases = []string{*caseFlag}
	case *quick:
		cases = quickCases
		*data = filepath.Join("bench", "adbench", "testdata")
		*minTime = 0.01
	}
	opts := buildOptions{native: *native, threads: *threads, rev: *rev}
	if err := run(cases, *data, *minTime, opts, *keep, *anchors, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "adbench:", err)
		os.Exit(1)
	}
}

// buildOptions are how the libraries are built.
type buildOptions struct {
	native  bool   // -march=native
	threads bool   // ksc --threads
	rev     string // ksc --rev
}

func run(cases []string, data string, minTime float64, opts buildOptions, keep, anchorDir string, rounds int) error {
	dir := keep
	if keep == "" {
		tmp, err := os.MkdirTemp("", "adbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(keep, 0o755); err != nil {
		return err
	} else if dir, err = filepath.Abs(keep); err != nil {
		return err
	}
	built := map[string]string{}     // kind -> harness executable
	anchors := map[string][]anchor{} // kind -> anchor executables
	for _, c := range cases {
		k, ok := kinds[strings.SplitN(c, "/", 2)[0]]
		if !ok {
			return fmt.Errorf("unknown case %q", c)
		}
		if _, ok := built[k.name]; ok {
			continue
		}
		start := time.Now()
		exe, err := build(k, dir, opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "adbench: built %s in %.1fs\n", k.name, time.Since(start).Seconds())
		built[k.name] = exe
		if anchorDir != "" {
			start := time.Now()
			if anchors[k.name], err = buildAnchors(context.Background(), k, anchorDir, dir, opts); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "adbench: built GradBench's %s anchors in %.1fs\n", k.name, time.Since(start).Seconds())
		}
	}
	failed := false
	head := "| case | objective | fd error | adjoint error | f | [rev f] | [rev f] / f | [fwd [rev f]] | / [rev f] | its fd error |"
	if anchorDir != "" {
		for _, t := range tools {
			head += fmt.Sprintf(" %s f | %s gradient | f / %s | [rev f] / %s |", t.name, t.name, t.name, t.name)
		}
	}
	fmt.Printf("%s\n|%s\n", head, strings.Repeat("---|", strings.Count(head, "|")-1))
	for _, c := range cases {
		kindName := strings.SplitN(c, "/", 2)[0]
		file := filepath.Join(data, c+".txt")
		var input string
		if anchorDir != "" {
			b, err := gradbenchInput(kindName, file, minTime)
			if err != nil {
				return err
			}
			input = filepath.Join(dir, strings.ReplaceAll(c, "/", "_")+".json")
			if err := os.WriteFile(input, b, 0o644); err != nil {
				return err
			}
		}
		var r result
		anchorTimes := make([][2]float64, len(anchors[kindName]))
		for round := 0; round < rounds; round++ {
			ri, err := runHarness(built[kindName], file, minTime)
			if err != nil {
				return fmt.Errorf("%s: %v", c, err)
			}
			if round == 0 {
				r = ri
			}
			r.tf, r.tg, r.th = math.Min(r.tf, ri.tf), math.Min(r.tg, ri.tg), math.Min(r.th, ri.th)
			for i, a := range anchors[kindName] {
				obj, tf, err := anchorTime(a, input, "objective")
				if err != nil {
					return fmt.Errorf("%s: %v", c, err)
				}
				_, tg, err := anchorTime(a, input, "jacobian")
				if err != nil {
					return fmt.Errorf("%s: %v", c, err)
				}
				if round == 0 {
					anchorTimes[i] = [2]float64{tf, tg}
					var v float64
					if err := json.Unmarshal(obj, &v); err != nil || !(math.Abs(v-r.objective) <= 1e-8*math.Abs(r.objective)) {
						fmt.Fprintf(os.Stderr, "adbench: %s: %s's objective is %s, ksc's %.17g: the inputs differ\n", c, a.tool, obj, r.objective)
						failed = true
					}
				}
				anchorTimes[i] = [2]float64{math.Min(anchorTimes[i][0], tf), math.Min(anchorTimes[i][1], tg)}
			}
		}
		for _, msg := range checkResult(c, r) {
			fmt.Fprintf(os.Stderr, "adbench: %s: %s\n", c, msg)
			failed = true
		}
		row := fmt.Sprintf("| %s | %.17g | %.2g | %.2g | %s | %s | %.2f |", c, r.objective, r.fdError, r.adjointError,
			dur(r.tf), dur(r.tg), r.tg/r.tf)
		if r.hvp {
			row += fmt.Sprintf(" %s | %.2f | %.2g |", dur(r.th), r.th/r.tg, r.hvpError)
		} else {
			row += " – | – | – |"
		}
		for _, t := range anchorTimes {
			row += fmt.Sprintf(" %s | %s | %.2f | %.2f |", dur(t[0]), dur(t[1]), r.tf/t[0], r.tg/t[1])
		}
		fmt.Println(row)
	}
	if failed {
		return errors.New("checks failed")
	}
	return nil
}

// checkResult returns what is wrong with a harness's results.
func checkResult(c string, r result) []string {
	var msgs []string
	if ref, ok := references[c]; ok {
		if rel := math.Abs(r.objective-ref) / math.Abs(ref); !(rel <= 1e-10) {
			msgs = append(msgs, fmt.Sprintf("objective %.17g, want %.17g (relative error %.3g)", r.objective, ref, rel))
		}
	}
	if !(r.fdError <= 1e-5) {
		msgs = append(msgs, fmt.Sprintf("the gradient differs from central differences by %.3g (relative)", r.fdError))
	}
	if !(r.adjointError <= 1e-10) {
		msgs = append(msgs, fmt.Sprintf("the adjoint identity with [fwd f] is off by %.3g (relative)", r.adjointError))
	}
	if r.hvp && !(r.hvpError <= 1e-5) {
		msgs = append(msgs, fmt.Sprintf("the Hessian-vector product differs from central differences of the gradient by %.3g (relative)", r.hvpError))
	}
	return msgs
}

// build makes the library of a kind and compiles its harness against it.
func build(k kind, dir string, opts buildOptions) (string, error) {
	ctx := context.Background()
	dopts := driver.Options{Rev: opts.rev}
	prog, err := driver.LoadWith(k.sources, driver.Derived, dopts)
	if err != nil {
		return "", err
	}
	if err := driver.Optimise(prog, dopts); err != nil {
		return "", err
	}
	flags := []string{"-O3"}
	if opts.native {
		flags = append(flags, "-march=native")
	}
	cc := driver.DefaultCC(flags...)
	cc.Threads = opts.threads
	if err := driver.BuildLibrary(ctx, prog, k.name, dir, cc, filepath.Join(dir, k.name+"-generated.c")); err != nil {
		return "", err
	}
	for _, name := range []string{k.harness, "timing.h"} {
		b, err := harnesses.ReadFile("harness/" + name)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	exe := filepath.Join(dir, k.name+"-harness")
	args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-I", dir, "-o", exe, filepath.Join(dir, k.harness),
		"-L", dir, "-l" + k.name, "-Wl,-rpath," + dir, "-lm"}
	if out, err := cc.Command(context.Background(), args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("compiling %s: %v\n%s", k.harness, err, out)
	} else if len(out) > 0 {
		return "", fmt.Errorf("compiling %s:\n%s", k.harness, out)
	}
	return exe, nil
}

func runHarness(exe, file string, minTime float64) (result, error) {
	var r result
	cmd := exec.Command(exe, file, strconv.FormatFloat(minTime, 'g', -1, 64))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("the harness failed: %v", err)
	}
	fields := map[string]*float64{
		"objective": &r.objective, "fd_error": &r.fdError, "adjoint_error": &r.adjointError,
		"time_objective": &r.tf, "time_gradient": &r.tg,
	}
	hvp := map[string]*float64{"hvp_error": &r.hvpError, "time_hvp": &r.th}
	seen, seenHVP := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || fields[f[0]] == nil && hvp[f[0]] == nil {
			return r, fmt.Errorf("unexpected harness output %q", line)
		}
		dst := fields[f[0]]
		if dst != nil {
			seen++
		} else {
			dst = hvp[f[0]]
			seenHVP++
		}
		if *dst, err = strconv.ParseFloat(f[1], 64); err != nil {
			return r, fmt.Errorf("unexpected harness output %q", line)
		}
	}
	if seen != len(fields) || seenHVP != 0 && seenHVP != len(hvp) {
		return r, fmt.Errorf("the harness printed %d of %d results:\n%s", seen+seenHVP, len(fields), out)
	}
	r.hvp = seenHVP > 0
	return r, nil
}

func dur(s float64) string {
	switch {
	case s < 1e-6:
		return fmt.Sprintf("%.0f ns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.1f µs", s*1e6)
	}
	return fmt.Sprintf("%.2f ms", s*1e3)
}
