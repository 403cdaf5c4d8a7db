package tests

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
)

// TestLibrary builds testdata/library/model.ks with ksc build, compiles
// host.c against the library and its header, and runs it: host.c calls
// functions taking and returning vectors and tuples and checks results
// and the error path.
func TestLibrary(t *testing.T) {
	needCC(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	model := filepath.Join("testdata", "library", "model.ks")
	prog, err := driver.Load([]string{model}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	cc := driver.CC{Cmd: ccCmd(), Flags: []string{"-O2", "-Werror"}}
	if err := driver.BuildLibrary(ctx, prog, "model", dir, cc, ""); err != nil {
		t.Fatal(err)
	}
	// The library exports only model_ symbols.
	if out, err := exec.CommandContext(ctx, "nm", "-D", "--defined-only", filepath.Join(dir, "libmodel.so")).Output(); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			if len(f) == 3 && (f[1] == "T" || f[1] == "D" || f[1] == "B") && !strings.HasPrefix(f[2], "model_") {
				t.Errorf("the library exports %s", f[2])
			}
		}
	}
	host, err := filepath.Abs(filepath.Join("testdata", "library", "host.c"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "host")
	cmd := exec.CommandContext(ctx, ccCmd(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", dir, "-o", exe, host,
		"-L", dir, "-lmodel", "-Wl,-rpath,"+dir, "-lm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling host.c: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, exe).CombinedOutput()
	if err != nil {
		t.Fatalf("host failed: %v\n%s", err, out)
	}
	if !strings.HasSuffix(string(out), "ok\n") {
		t.Errorf("host printed:\n%s", out)
	}
}
