package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	goemit "github.com/ksc-lang/ksc/emit/go"
	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
)

// EmitGo generates Go for an optimised program: one file of package main
// that expects the runtime's files (runtime/go) beside it.
func EmitGo(prog *ir.Program) (src []byte, err error) {
	return EmitGoWith(prog, Options{})
}

// EmitGoWith is EmitGo with options (opts.AD).
func EmitGoWith(prog *ir.Program, opts Options) (src []byte, err error) {
	err = guard("the Go backend", "", func() error {
		var eerr error
		src, eerr = goemit.Emit(prog, goemit.Options{AD: opts.AD})
		return eerr
	})
	return src, err
}

// goTool finds the go command: on PATH, else in $GOROOT/bin, else in
// /usr/local/go/bin.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	var candidates []string
	if root := os.Getenv("GOROOT"); root != "" {
		candidates = append(candidates, filepath.Join(root, "bin", "go"))
	}
	candidates = append(candidates, "/usr/local/go/bin/go")
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("the Go backend needs the go command, which was not found on PATH, in $GOROOT/bin or in /usr/local/go/bin")
}

// BuildGo compiles prog (optimised) with the Go backend into an
// executable in dir and returns its path. dir receives main.go, the
// runtime's files and a go.mod of module ksprog; go build runs there with
// the default build cache, so that the runtime is compiled once.
func BuildGo(ctx context.Context, prog *ir.Program, dir string) (exe string, err error) {
	return BuildGoWith(ctx, prog, dir, Options{})
}

// BuildGoWith is BuildGo with options (opts.AD).
func BuildGoWith(ctx context.Context, prog *ir.Program, dir string, opts Options) (exe string, err error) {
	src, err := EmitGoWith(prog, opts)
	if err != nil {
		return "", err
	}
	write := func(name string, text []byte) error {
		if err := os.WriteFile(filepath.Join(dir, name), text, 0o644); err != nil {
			return fmt.Errorf("writing the Go program: %w", err)
		}
		return nil
	}
	if err := write("main.go", src); err != nil {
		return "", err
	}
	for _, f := range ksrt.Files("main") {
		if err := write(f.Name, f.Text); err != nil {
			return "", err
		}
	}
	if err := write("go.mod", []byte("module ksprog\n\ngo 1.26\n")); err != nil {
		return "", err
	}
	gocmd, err := goTool()
	if err != nil {
		return "", err
	}
	exe = filepath.Join(dir, "prog")
	cmd := exec.CommandContext(ctx, gocmd, "build", "-o", exe, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ctx.Err() == nil {
			return "", &CompileError{Tool: "go build", Output: out.String()}
		}
		return "", fmt.Errorf("running go build: %w", err)
	}
	return exe, nil
}
