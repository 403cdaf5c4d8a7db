package tests

import (
	"context"
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
)

// hotLoops are the functions of the benchmarks' libraries whose loops
// carry their time, with how many of their loops gcc vectorises at -O3
// (every one of them is a loop over vector elements; the count is
// today's). TestHotLoopsVectorised fails if one vectorises fewer.
var hotLoops = []struct {
	file  string
	loops map[string]int
}{
	{"bench/gradbench/evals/lse.ks", map[string]int{
		"ksu_lse":        1, // the sum of exp(x - max), with libmvec's exp
		"ksu_revacc_lse": 3,
	}},
	{"bench/gmm.ks", map[string]int{
		"ksu_gmm_points":        3,
		"ksu_revacc_gmm_points": 6,
		"ksu_ltri_times":        1, // the triangular product Q (x - mu)
		"ksu_bogrev_ltri_times": 1,
		"ksu_logsumexp":         1,
		"ksu_revacc_logsumexp":  3,
		"ksu_sqnorm":            1,
	}},
	{"bench/lstm.ks", map[string]int{
		"ksu_lstm_layer":            1, // the gates, with libmvec's exp and tanh, storing h and c apart (unzip of a build)
		"ksu_suffwdpass_lstm_layer": 5, // the same, its tape and its record a vector per value (lower.Unzip)
		"ksu_lstm_objective":        3,
		"ksu_revacc_lstm_objective": 5,
		"ksu_bogrev_lstm_layer":     3,
	}},
}

// cFunction matches the first line of a function definition in generated
// C, capturing its name.
var cFunction = regexp.MustCompile(`^(?:KS_CLONES )?static .*\b(ks[a-z]*_\w+)\(.*\) \{$`)

// libraryCalls matches gcc's report of a loop distributed into calls of
// memset or memcpy.
var libraryCalls = regexp.MustCompile(`\b[1-9][0-9]* library calls`)

// TestHotLoopsVectorised compiles each benchmark's library C with
// -fopt-info-vec-optimized and counts, per function, the loops gcc
// reports vectorised (issue 14: hot loops must vectorise; index checks,
// allocation or a call per element in a loop stop gcc). The counts are
// logged. On x86-64 Linux each hot function must also have its AVX2 copy
// in the library (KS_CLONES in ksc_runtime.h), named name.avx2, or an
// inline twin whose loops vectorise (inlined into such copies). No loop
// of the library may become a call of memset or memcpy
// (-fopt-info-loop-optimized reports it; ksc_runtime.h turns that pass
// off, since a reverse pass zeroes many short accumulators).
func TestHotLoopsVectorised(t *testing.T) {
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the C backend is not selected")
	}
	cc := baseCC("-O3", "-fopt-info-vec-optimized", "-fopt-info-loop-optimized")
	if v, err := cc.Command(context.Background(), "--version").Output(); err != nil || !strings.Contains(string(v), "Free Software Foundation") {
		t.Skip("the counts are gcc's (-fopt-info-vec); $CC is not gcc")
	}
	for _, b := range hotLoops {
		t.Run(filepath.Base(b.file), func(t *testing.T) {
			t.Parallel()
			prog, err := driver.LoadWith([]string{filepath.Join("..", b.file)}, driver.Derived, driver.Options{CheckIR: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
				t.Fatal(err)
			}
			out, err := driver.EmitC(prog, cemit.Options{Prefix: "bench", Library: true})
			if err != nil {
				t.Fatal(err)
			}
			src := out.C
			dir := t.TempDir()
			file := filepath.Join(dir, "bench.c")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			report, err := cc.CompileC(ctx, file, filepath.Join(dir, "bench.so"), "-shared", "-fPIC")
			if err != nil {
				t.Fatal(err)
			}
			// The function of each line of the C.
			var fn []string
			cur := ""
			for _, l := range strings.Split(src, "\n") {
				if m := cFunction.FindStringSubmatch(l); m != nil {
					cur = m[1]
				}
				fn = append(fn, cur)
			}
			got := map[string]int{}
			for _, l := range strings.Split(report, "\n") {
				parts := strings.SplitN(l, ":", 4)
				if len(parts) < 4 {
					continue
				}
				n, err := strconv.Atoi(parts[1])
				if err != nil || n < 1 || n > len(fn) {
					continue
				}
				switch {
				case strings.Contains(parts[3], "loop vectorized"):
					got[fn[n-1]]++
				case libraryCalls.MatchString(parts[3]):
					t.Errorf("line %d, in %s: gcc made a loop a library call (memset or memcpy): %s", n, fn[n-1], strings.TrimSpace(parts[3]))
				}
			}
			var names []string
			for name := range got {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				t.Logf("%s: %d loops vectorised", name, got[name])
			}
			// A small function called by functions compiled twice has an
			// inline twin (emit/c's inlineTwins), its loops compiled where
			// it is inlined: its loops count, the more of the two.
			twin := func(name string) string { return "ksi_" + strings.TrimPrefix(name, "ksu_") }
			for name, want := range b.loops {
				if n := max(got[name], got[twin(name)]); n < want {
					t.Errorf("%s: %d loops vectorised, want at least %d", name, n, want)
				}
			}
			if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
				clones := map[string]bool{}
				lib, err := elf.Open(filepath.Join(dir, "bench.so"))
				if err != nil {
					t.Fatal(err)
				}
				defer lib.Close()
				syms, err := lib.Symbols()
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range syms {
					if name, ok := strings.CutSuffix(s.Name, ".avx2"); ok {
						clones[name] = true
					}
				}
				for name := range b.loops {
					if !clones[name] && got[twin(name)] == 0 {
						t.Errorf("%s has no AVX2 copy (%s.avx2) in the library, nor an inline twin", name, name)
					}
				}
			}
		})
	}
}

// TestAVX512HalfWidth compiles GMM's library for an AVX-512 machine
// (-march=x86-64-v4, assembly only, so any x86-64 gcc will do) and
// counts the 512-bit registers in the code: ksc_runtime.h prefers 256-bit
// vectors when AVX-512 is enabled (gcc 12's 512-bit loops were slower than
// the default build's on short rows, docs/performance.md), and
// -DKS_PREFER_512 gives gcc its choice back.
func TestAVX512HalfWidth(t *testing.T) {
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the C backend is not selected")
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("x86-64 only")
	}
	cc := baseCC()
	if v, err := cc.Command(context.Background(), "--version").Output(); err != nil || !strings.Contains(string(v), "Free Software Foundation") {
		t.Skip("the pragma is gcc's; $CC is not gcc")
	}
	prog, err := driver.LoadWith([]string{"../bench/gmm.ks"}, driver.Derived, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{}); err != nil {
		t.Fatal(err)
	}
	out, err := driver.EmitC(prog, cemit.Options{Prefix: "bench", Library: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "bench.c")
	if err := os.WriteFile(file, []byte(out.C), 0o644); err != nil {
		t.Fatal(err)
	}
	zmm := func(flags ...string) int {
		asm := filepath.Join(dir, "bench.s")
		args := append([]string{"-std=c11", "-O3", "-fno-math-errno", "-march=x86-64-v4", "-S", "-o", asm}, flags...)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if msg, err := cc.Command(ctx, append(args, file)...).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, msg)
		}
		b, err := os.ReadFile(asm)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "%zmm")
	}
	half, full := zmm(), zmm("-DKS_PREFER_512")
	t.Logf("%%zmm in the assembly: %d, with -DKS_PREFER_512 %d", half, full)
	if full < 100 || half*5 > full {
		t.Errorf("%d uses of 512-bit registers, %d with -DKS_PREFER_512: want many with it and a fifth of that at most without", half, full)
	}
}
