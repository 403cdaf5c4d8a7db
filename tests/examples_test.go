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

// TestExamples builds the library of each example and runs each of its
// hosts, C, Python (if python3 is here, required if KSC_REQUIRE_PYTHON
// is set) and Go, as their comments say, comparing what each prints with
// the example's expected.txt. The Go host of examples/fit calls the C
// interface through cgo; that of examples/gmm is a module of its own
// using the bindings of ksc build --go.
func TestExamples(t *testing.T) {
	needCC(t)
	for _, name := range []string{"fit", "gmm"} {
		t.Run(name, func(t *testing.T) { runExample(t, name) })
	}
}

func runExample(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src, err := filepath.Abs(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(src, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	prog, err := driver.Load([]string{filepath.Join(src, name+".ks")}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := driver.BuildLibrary(ctx, prog, name, out, driver.DefaultCC("-O2"), ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, name+".py"), []byte(pyemit.Module(name)), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(host string, cmd *exec.Cmd) {
		t.Helper()
		if cmd.Dir == "" {
			cmd.Dir = src
		}
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s host: %v\n%s", host, err, got)
			return
		}
		if string(got) != string(want) {
			t.Errorf("%s host printed\n%s\nwant\n%s", host, got, want)
		}
	}

	exe := filepath.Join(out, name+"-host")
	cc := driver.DefaultCC()
	args := append(append([]string{}, cc.CmdArgs...), "-std=c11", "-Wall", "-Wextra", "-Werror", "-I"+out, "host.c",
		"-L"+out, "-l"+name, "-Wl,-rpath,"+out, "-lm", "-o", exe)
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

	if _, err := os.Stat(filepath.Join(src, "gohost", "go.mod")); err != nil {
		// A host in this module, calling the C interface through cgo.
		goCmd := exec.CommandContext(ctx, "go", "run", "-tags", "ksc_example", "./gohost")
		goCmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+out,
			"CGO_LDFLAGS=-L"+out+" -l"+name+" -Wl,-rpath,"+out)
		check("Go", goCmd)
		return
	}
	// A module of its own, importing the bindings built into ./NAME.
	mod := t.TempDir()
	for _, f := range []string{"go.mod", "main.go"} {
		data, err := os.ReadFile(filepath.Join(src, "gohost", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkg := filepath.Join(mod, name)
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"lib" + name + ".so", name + ".h", name + ".json"} {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := driver.WriteGoBindings(pkg, name); err != nil {
		t.Fatal(err)
	}
	goCmd := exec.CommandContext(ctx, "go", "run", ".")
	goCmd.Dir = mod
	goCmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOTOOLCHAIN=local", "GOFLAGS=")
	check("Go", goCmd)
}
