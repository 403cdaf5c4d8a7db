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
)

// TestGoBindings builds testdata/python/model.ks with its Go bindings
// (ksc build --go) as the package model of a module of its own, and runs
// testdata/gobind/main.go against it: values, gradients, BOGs, every
// kind of type, errors and goroutines (under cgo's default pointer checks).
func TestGoBindings(t *testing.T) {
	needCC(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mod := t.TempDir()
	dir := filepath.Join(mod, "model")
	buildBindingsModel(ctx, t, dir)
	if err := driver.WriteGoBindings(dir, "model"); err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join("testdata", "gobind", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte("module gobindtest\n\ngo 1.22\n"), "main.go": main} {
		if err := os.WriteFile(filepath.Join(mod, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, gobin, "run", ".")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "CGO_ENABLED=1", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("go run: %v\n%s", err, out)
	}
}
