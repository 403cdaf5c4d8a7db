package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	pyemit "github.com/ksc-lang/ksc/emit/python"
)

// TestPythonBindings builds testdata/python/model.ks with its Python
// module (ksc build --python) and runs check.py against it: once with
// arrays as lists (python3 -S, which cannot import numpy) and once with
// numpy, if a python3 on this machine has it (Debian's python3-numpy).
// Without python3 it skips, unless KSC_REQUIRE_PYTHON is set (as CI does),
// and then both runs are required.
func TestPythonBindings(t *testing.T) {
	needCC(t)
	require := os.Getenv("KSC_REQUIRE_PYTHON") != ""
	var pythons []string
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil {
			pythons = append(pythons, path)
		}
	}
	if len(pythons) == 0 {
		if require {
			t.Fatal("no python3 (KSC_REQUIRE_PYTHON is set)")
		}
		t.Skip("no python3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	buildBindingsModel(ctx, t, dir)
	if err := os.WriteFile(filepath.Join(dir, "model.py"), []byte(pyemit.Module("model")), 0o644); err != nil {
		t.Fatal(err)
	}
	check, err := filepath.Abs(filepath.Join("testdata", "python", "check.py"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(python string, args ...string) string {
		out, err := exec.CommandContext(ctx, python, append(args, check, dir)...).CombinedOutput()
		if err != nil {
			t.Errorf("%s %s: %v\n%s", python, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(pythons[0], "-S"); got != "ok lists" && !t.Failed() {
		t.Errorf("python3 -S: %q, want ok lists", got)
	}
	for _, p := range pythons {
		if exec.CommandContext(ctx, p, "-c", "import numpy").Run() == nil {
			if got := run(p); got != "ok numpy" && !t.Failed() {
				t.Errorf("%s: %q, want ok numpy", p, got)
			}
			return
		}
	}
	if require {
		t.Fatal("no python3 with numpy (KSC_REQUIRE_PYTHON is set: apt-get install python3-numpy)")
	}
	t.Log("no python3 with numpy: checked with lists only")
}

// buildBindingsModel builds testdata/python/model.ks, the library the
// Python and Go bindings are tested on, into dir as libmodel.so, without
// sanitizers (their runtime cannot be loaded into python or a Go
// program).
func buildBindingsModel(ctx context.Context, t *testing.T, dir string) {
	t.Helper()
	prog, err := driver.Load([]string{filepath.Join("testdata", "python", "model.ks")}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	if err := driver.BuildLibrary(ctx, prog, "model", dir, baseCC(append(o1Flags, "-Werror")...), ""); err != nil {
		t.Fatal(err)
	}
}
