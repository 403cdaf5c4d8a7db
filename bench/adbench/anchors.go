package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/driver"
)

// Anchors: GradBench's hand-written C++ ("manual") and Tapenade's C,
// built from a GradBench checkout (github.com/gradbench/gradbench) with the
// flags ksc's library gets, and timed in the same run as ksc's code on the
// same input, so that the ratios compare like with like. Nothing of
// GradBench is copied here: the tools are compiled from the checkout, and
// speak GradBench's own interface (a JSON input file; the output and the
// time of each evaluation on stdout), for which adbench writes each
// ADBench input file as JSON.

// tools are the anchors: each builds one executable per kind, from
// sources relative to the checkout.
var tools = []struct {
	name string
	// sources returns the files to compile for a kind: C++ and C.
	sources func(kind string) []string
}{
	{"manual", func(kind string) []string { return []string{"tools/manual/" + kind + ".cpp"} }},
	{"tapenade", func(kind string) []string {
		ev := "tools/tapenade/evals/" + kind + "/" + kind
		return []string{"tools/tapenade/" + kind + ".cpp", ev + ".c", ev + "_b.c",
			"tools/tapenade/utils/adBuffer.c", "tools/tapenade/utils/adStack.c"}
	}},
}

// An anchor is an anchor tool built for a kind.
type anchor struct {
	tool, exe string
}

// buildAnchors compiles every tool for kind k from the GradBench checkout
// at src, into dir, with the optimisation flags of ksc's library.
func buildAnchors(ctx context.Context, k kind, src, dir string, opts buildOptions) ([]anchor, error) {
	// GradBench's C++ includes "json.hpp" (nlohmann's, which its Makefile
	// downloads); Debian's nlohmann-json3-dev has it.
	inc := filepath.Join(dir, "anchor-include")
	if err := os.MkdirAll(inc, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(inc, "json.hpp"), []byte("#include <nlohmann/json.hpp>\n"), 0o644); err != nil {
		return nil, err
	}
	flags := []string{"-O3"}
	if opts.native {
		flags = append(flags, "-march=native")
	}
	cc := driver.DefaultCC(flags...)
	var out []anchor
	for _, t := range tools {
		exe := filepath.Join(dir, t.name+"-"+k.name)
		var objs []string
		for i, s := range t.sources(k.name) {
			obj := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.o", t.name, k.name, i))
			var args []string
			if strings.HasSuffix(s, ".cpp") {
				args = append([]string{"-x", "c++", "-std=c++17"}, flags...)
			} else {
				args = append([]string{"-x", "c", "-std=c11"}, flags...)
			}
			args = append(args, "-I", filepath.Join(src, "cpp"), "-I", filepath.Dir(filepath.Join(src, s)),
				"-I", filepath.Join(src, "tools", t.name), "-I", inc, "-c", "-o", obj, filepath.Join(src, s))
			if b, err := cc.Command(ctx, args...).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("building GradBench's %s %s: %s: %v\n%s%s", t.name, k.name, s, err, b, buildHint(b))
			}
			objs = append(objs, obj)
		}
		link := exec.CommandContext(ctx, "c++", append(append([]string{"-o", exe}, objs...), "-lm")...)
		if b, err := link.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("linking GradBench's %s %s: %v\n%s", t.name, k.name, err, b)
		}
		out = append(out, anchor{t.name, exe})
	}
	return out, nil
}

// buildHint returns a hint for a C++ compiler's output that says what to
// install, or "".
func buildHint(out []byte) string {
	if bytes.Contains(out, []byte("nlohmann/json.hpp")) {
		return "hint: GradBench's C++ needs nlohmann's json.hpp: install Debian's nlohmann-json3-dev (apt-get install nlohmann-json3-dev)\n"
	}
	return ""
}

// gradbenchInput converts an ADBench input file of a kind into the JSON
// input of GradBench's eval of that kind, asking for runs of at least
// minTime seconds in all and at least 9 runs.
func gradbenchInput(kind, file string, minTime float64) ([]byte, error) {
	nums, err := readNumbers(file)
	if err != nil {
		return nil, err
	}
	take := func(n int) []float64 { // n is at most len(nums), checked below
		x := nums[:n]
		nums = nums[n:]
		return x
	}
	// header reads the sizes of the header and checks the file holds
	// exactly need(sizes) numbers after it.
	header := func(need func(s []int) int) ([]int, error) {
		if len(nums) < 3 {
			return nil, fmt.Errorf("%s: no header", file)
		}
		var s []int
		for _, x := range take(3) {
			if x != float64(int(x)) || x < 1 || x > 1<<20 {
				return nil, fmt.Errorf("%s: a size in the header is %g", file, x)
			}
			s = append(s, int(x))
		}
		if n := need(s); n != len(nums) {
			return nil, fmt.Errorf("%s: %d numbers after the header, want %d for a %s input", file, len(nums), n, kind)
		}
		return s, nil
	}
	rows := func(r, c int) [][]float64 {
		out := make([][]float64, r)
		for i := range out {
			out[i] = take(c)
		}
		return out
	}
	in := map[string]any{"min_runs": 9, "min_seconds": minTime}
	switch kind {
	case "gmm":
		h, err := header(func(s []int) int { d, k, n := s[0], s[1], s[2]; return k + k*d + k*(d+d*(d-1)/2) + n*d + 2 })
		if err != nil {
			return nil, err
		}
		d, k, n := h[0], h[1], h[2]
		in["d"], in["k"], in["n"] = d, k, n
		in["alpha"] = take(k)
		in["mu"] = rows(k, d)
		// ADBench's icf row is q (d) then l (d(d-1)/2), GradBench's q and l.
		var q, l [][]float64
		for _, row := range rows(k, d+d*(d-1)/2) {
			q, l = append(q, row[:d]), append(l, row[d:])
		}
		in["q"], in["l"] = q, l
		in["x"] = rows(n, d)
		w := take(2)
		in["gamma"], in["m"] = w[0], int(w[1])
	case "lstm":
		h, err := header(func(s []int) int { l, c, b := s[0], s[1], s[2]; return 8*l*b + 3*b + 2*l*b + c*b })
		if err != nil {
			return nil, err
		}
		l, c, b := h[0], h[1], h[2]
		in["main_params"] = rows(2*l, 4*b)
		in["extra_params"] = rows(3, b)
		in["state"] = rows(2*l, b)
		in["sequence"] = rows(c, b)
	default:
		return nil, fmt.Errorf("no GradBench input for %s", kind)
	}
	return json.Marshal(in)
}

// readNumbers reads the whitespace-separated numbers of a file.
func readNumbers(file string) ([]float64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	sc.Split(bufio.ScanWords)
	for sc.Scan() {
		x, err := strconv.ParseFloat(sc.Text(), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		out = append(out, x)
	}
	return out, sc.Err()
}

// anchorTime runs an anchor's function ("objective" or "jacobian") on a
// GradBench input file and returns its output (JSON) and the median time
// of its evaluations in seconds.
func anchorTime(a anchor, input, function string) (json.RawMessage, float64, error) {
	out, err := exec.Command(a.exe, input, function).Output()
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %v", a.tool, function, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var times []float64
	for _, l := range lines[1:] {
		var ev struct {
			Name        string `json:"name"`
			Nanoseconds int64  `json:"nanoseconds"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			return nil, 0, fmt.Errorf("%s %s: unexpected output %q", a.tool, function, l)
		}
		if ev.Name == "evaluate" {
			times = append(times, float64(ev.Nanoseconds)*1e-9)
		}
	}
	if len(times) == 0 {
		return nil, 0, fmt.Errorf("%s %s: no evaluation timed", a.tool, function)
	}
	sort.Float64s(times)
	return json.RawMessage(lines[0]), times[len(times)/2], nil
}
