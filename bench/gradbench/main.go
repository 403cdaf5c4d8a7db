// Command gradbench builds ksc-gradbench, ksc's tool for GradBench
// (github.com/gradbench/gradbench): for each eval written in ks
// (evals/NAME.ks) it builds the library and its Go bindings (as ksc build
// --go does) into a copy of the tool's module (tool/, a module of its
// own), then builds the tool, which speaks GradBench's protocol on stdin
// and stdout:
//
//	go run ./bench/gradbench -o DIR     # from the repository root
//	DIR/ksc-gradbench < messages
//
// DIR keeps the libraries the tool loads. The evals so far: hello, lse,
// llsq, det, gmm, ode, lstm, ba, ht, kmeans, saddle, particle
// (docs/performance.md, "GradBench").
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ksc-lang/ksc/driver"
)

func main() {
	out := flag.String("o", "", "the directory to build the tool in (required)")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/gradbench -o DIR")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	exe, err := build(ctx, *out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gradbench: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(exe)
}

// evals are the GradBench evals written in ks, by module name: each is
// built from evals/NAME.ks, after the files of the repository it uses
// (paths from the repository's root).
var evals = []struct {
	name string
	uses []string
}{
	{"hello", nil},
	{"lse", nil},
	{"llsq", nil},
	{"det", nil},
	{"gmm", []string{"bench/gmm.ks"}},
	{"ode", nil},
	{"lstm", []string{"bench/lstm.ks"}},
	{"ba", nil},
	{"ht", nil},
	{"kmeans", nil},
	{"saddle", nil},
	{"particle", nil},
}

// build builds the tool in dir and returns the path of its executable.
func build(ctx context.Context, dir string) (string, error) {
	here, err := sourceDir()
	if err != nil {
		return "", err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "src")
	if err := os.RemoveAll(src); err != nil {
		return "", err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join(here, "tool", "*"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "go.mod") {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(filepath.Join(src, filepath.Base(f)), data, 0o644); err != nil {
				return "", err
			}
		}
	}
	for _, e := range evals {
		name := e.name
		var files []string
		for _, u := range e.uses {
			files = append(files, filepath.Join(here, "..", "..", filepath.FromSlash(u)))
		}
		files = append(files, filepath.Join(here, "evals", name+".ks"))
		prog, err := driver.Load(files, driver.Derived)
		if err != nil {
			return "", err
		}
		if err := driver.Optimise(prog, driver.Options{}); err != nil {
			return "", err
		}
		pkg := filepath.Join(src, name)
		if err := driver.BuildLibrary(ctx, prog, name, pkg, driver.DefaultCC("-O3"), ""); err != nil {
			return "", err
		}
		if err := driver.WriteGoBindings(pkg, name); err != nil {
			return "", err
		}
	}
	exe := filepath.Join(dir, "ksc-gradbench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the tool: %v\n%s", err, b)
	}
	return exe, nil
}

// sourceDir returns the directory of this package's sources: from the
// repository root, or the package's own directory (its tests).
func sourceDir() (string, error) {
	for _, d := range []string{filepath.Join("bench", "gradbench"), "."} {
		if _, err := os.Stat(filepath.Join(d, "tool", "go.mod")); err == nil {
			return filepath.Abs(d)
		}
	}
	return "", fmt.Errorf("run it from the root of the ksc repository (no bench/gradbench/tool here)")
}
