package tests

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	pyemit "github.com/ksc-lang/ksc/emit/python"
)

// buildShardLibrary builds the library of examples/mpi and examples/dask
// (bench/gmm.ks and examples/mpi/shard.ks) into a temporary directory,
// with its Python module, and returns the directory.
func buildShardLibrary(ctx context.Context, t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	prog, err := driver.Load([]string{filepath.Join(root, "bench", "gmm.ks"), filepath.Join(root, "examples", "mpi", "shard.ks")}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := driver.BuildLibrary(ctx, prog, "gmmshard", out, driver.DefaultCC("-O2"), ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "gmmshard.py"), []byte(pyemit.Module("gmmshard")), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// A shardRun is what examples/mpi's host or examples/dask's script printed
// for one number of shards, but the time: its text and its numbers (the
// objective, then the gradient).
type shardRun struct {
	text string
	nums []float64
}

// parseShardRuns parses the blocks "shards N", "objective V", "g V"...,
// "seconds T" of the examples' output, in order.
func parseShardRuns(t *testing.T, out string) []shardRun {
	t.Helper()
	var runs []shardRun
	var text []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		switch f[0] {
		case "shards":
			runs = append(runs, shardRun{})
			text = []string{l}
		case "objective", "g":
			if len(runs) == 0 {
				t.Fatalf("%q before shards:\n%s", l, out)
			}
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("%q:\n%s", l, out)
			}
			r := &runs[len(runs)-1]
			r.nums = append(r.nums, v)
			text = append(text, l)
			r.text = strings.Join(text, "\n")
		}
	}
	// The objective and 4 + 12 + 12 + 12 gradient elements (K=4, D=3).
	for _, r := range runs {
		if len(r.nums) != 41 {
			t.Fatalf("%d numbers, want 41:\n%s", len(r.nums), out)
		}
	}
	return runs
}

// agree checks that runs with other numbers of shards agree with ref to
// 1e-12 (of the objective, of the gradient's largest element).
func agree(t *testing.T, name string, got, ref shardRun) {
	t.Helper()
	scale := 0.0
	for _, v := range ref.nums[1:] {
		scale = math.Max(scale, math.Abs(v))
	}
	if d := math.Abs(got.nums[0] - ref.nums[0]); d > 1e-12*math.Abs(ref.nums[0]) {
		t.Errorf("%s: objective %v, 1 shard %v", name, got.nums[0], ref.nums[0])
	}
	for i := 1; i < len(ref.nums); i++ {
		if d := math.Abs(got.nums[i] - ref.nums[i]); d > 1e-12*scale {
			t.Errorf("%s: gradient element %d is %v, 1 shard %v", name, i-1, got.nums[i], ref.nums[i])
		}
	}
}

// haveMPI reports whether mpicc and mpirun are here; without them it
// fails the test if KSC_REQUIRE_MPI is set (CI).
func haveMPI(t *testing.T) bool {
	for _, tool := range []string{"mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("KSC_REQUIRE_MPI") != "" {
				t.Fatalf("no %s (KSC_REQUIRE_MPI is set)", tool)
			}
			return false
		}
	}
	return true
}

// buildMPIHost compiles examples/mpi/host.c against the library in out
// and returns a function running it on ranks ranks with sub shards each
// (D=3, K=4, 50 points).
func buildMPIHost(ctx context.Context, t *testing.T, out string) func(ranks, sub int) shardRun {
	t.Helper()
	exe := filepath.Join(out, "gmm-mpi")
	cc := exec.CommandContext(ctx, "mpicc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I"+out,
		filepath.Join("..", "examples", "mpi", "host.c"), "-L"+out, "-lgmmshard", "-Wl,-rpath,"+out, "-lm", "-o", exe)
	if b, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, b)
	}
	return func(ranks, sub int) shardRun {
		t.Helper()
		cmd := exec.CommandContext(ctx, "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(ranks),
			exe, "3", "4", "50", strconv.Itoa(sub))
		// In containers that forbid ptrace, Open MPI's shared-memory
		// transport fails to copy between processes unless told not to try.
		cmd.Env = append(os.Environ(), "OMPI_MCA_btl_vader_single_copy_mechanism=none")
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("mpirun -np %d gmm-mpi 3 4 50 %d: %v\n%s", ranks, sub, err, b)
		}
		runs := parseShardRuns(t, string(b))
		if len(runs) != 1 {
			t.Fatalf("mpirun -np %d: %d runs printed, want 1:\n%s", ranks, len(runs), b)
		}
		return runs[0]
	}
}

// TestMPIExample builds examples/mpi (the GMM gradient over points split
// across MPI ranks) and runs it with 1, 2 and 4 shards on 1 and 2 ranks
// (mpirun, oversubscribed if the machine has fewer cores): the same number
// of shards gives the same bits however the shards are spread over ranks,
// and the same run twice gives the same bits (docs/scaling.md); different
// numbers of shards agree to 1e-12. Skipped without mpicc and mpirun,
// unless KSC_REQUIRE_MPI is set (CI).
func TestMPIExample(t *testing.T) {
	needCC(t)
	if !haveMPI(t) {
		t.Skip("no mpicc and mpirun (Debian: libopenmpi-dev, openmpi-bin)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := buildMPIHost(ctx, t, buildShardLibrary(ctx, t))
	one := run(1, 1)
	two := run(2, 1)
	if again := run(2, 1); again.text != two.text {
		t.Errorf("2 ranks twice: different results\n%s\n---\n%s", two.text, again.text)
	}
	fourOnOne, fourOnTwo := run(1, 4), run(2, 2)
	if fourOnOne.text != fourOnTwo.text {
		t.Errorf("4 shards on 1 rank and on 2 ranks: different bits\n%s\n---\n%s", fourOnOne.text, fourOnTwo.text)
	}
	agree(t, "2 shards", two, one)
	agree(t, "4 shards", fourOnTwo, one)
}

// TestDaskExample runs examples/dask/gmm_dask.py (the same gradient, its
// shards mapped over a LocalCluster of 2 worker processes) with 1, 2, 4
// and again 2 shards: the same number of shards gives the same bits, and
// those of examples/mpi with as many shards (when MPI is here); different
// numbers of shards agree to 1e-12. Skipped without a python3 that has
// numpy and dask.distributed (Debian: python3-distributed), unless
// KSC_REQUIRE_DASK is set (CI).
func TestDaskExample(t *testing.T) {
	needCC(t)
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import numpy, dask.distributed").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		if os.Getenv("KSC_REQUIRE_DASK") != "" {
			t.Fatal("no python3 with numpy and dask.distributed (KSC_REQUIRE_DASK is set)")
		}
		t.Skip("no python3 with numpy and dask.distributed (Debian: python3-distributed)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := buildShardLibrary(ctx, t)
	cmd := exec.CommandContext(ctx, python, filepath.Join("..", "examples", "dask", "gmm_dask.py"), out, "3", "4", "50", "1", "2", "4", "2")
	b, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if e, ok := err.(*exec.ExitError); ok {
			stderr = e.Stderr
		}
		t.Fatalf("gmm_dask.py: %v\n%s\n%s", err, b, stderr)
	}
	runs := parseShardRuns(t, string(b))
	if len(runs) != 4 {
		t.Fatalf("%d runs printed, want 4:\n%s", len(runs), b)
	}
	if runs[1].text != runs[3].text {
		t.Errorf("2 shards twice: different results\n%s\n---\n%s", runs[1].text, runs[3].text)
	}
	agree(t, "2 shards", runs[1], runs[0])
	agree(t, "4 shards", runs[2], runs[0])
	if haveMPI(t) {
		if mpi := buildMPIHost(ctx, t, out)(2, 2); mpi.text != runs[2].text {
			t.Errorf("4 shards: Dask and MPI differ\n%s\n---\n%s", runs[2].text, mpi.text)
		}
	}
}
