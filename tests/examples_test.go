package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/driver"
	pyemit "github.com/ksc-lang/ksc/emit/python"
)

// TestExamples builds the library of examples/fit and runs each of its
// hosts, C, Python (if python3 is here, required if KSC_REQUIRE_PYTHON
// is set) and Go (cgo), as their comments say, comparing what each
// prints with examples/fit/expected.txt.
func TestExamples(t *testing.T) {
	needCC(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src, err := filepath.Abs(filepath.Join("..", "examples", "fit"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(src, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	prog, err := driver.Load([]string{filepath.Join(src, "fit.ks")}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := driver.BuildLibrary(ctx, prog, "fit", out, driver.DefaultCC("-O2"), ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "fit.py"), []byte(pyemit.Module("fit")), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(host string, cmd *exec.Cmd) {
		t.Helper()
		cmd.Dir = src
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s host: %v\n%s", host, err, got)
			return
		}
		if string(got) != string(want) {
			t.Errorf("%s host printed\n%s\nwant\n%s", host, got, want)
		}
	}

	exe := filepath.Join(out, "fit-host")
	cc := driver.DefaultCC()
	args := append(append([]string{}, cc.CmdArgs...), "-std=c11", "-Wall", "-Wextra", "-Werror", "-I"+out, "host.c",
		"-L"+out, "-lfit", "-Wl,-rpath,"+out, "-lm", "-o", exe)
	build := exec.CommandContext(ctx, cc.Cmd, args...)
	build.Dir = src
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building host.c: %v\n%s", err, b)
	}
	check("C", exec.CommandContext(ctx, exe))

	if python, err := exec.LookPath("python3"); err == nil {
		check("Python", exec.CommandContext(ctx, python, "host.py", out))
	} else if os.Getenv("KSC_REQUIRE_PYTHON") != "" {
		t.Error("no python3 (KSC_REQUIRE_PYTHON is set)")
	}

	goCmd := exec.CommandContext(ctx, "go", "run", "-tags", "ksc_example", "./gohost")
	goCmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+out,
		"CGO_LDFLAGS=-L"+out+" -lfit -Wl,-rpath,"+out)
	check("Go", goCmd)
}
