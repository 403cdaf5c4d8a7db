package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	goemit "github.com/ksc-lang/ksc/emit/go"
	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
)

// EmitGo generates Go for an optimised program.
func EmitGo(prog *ir.Program) (src []byte, err error) {
	err = guard("the Go backend", "", func() error {
		var eerr error
		src, eerr = goemit.Emit(prog)
		return eerr
	})
	return src, err
}

// goTool finds the go command: on PATH, else in the toolchain that built
// ksc, else /usr/local/go.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	for _, p := range []string{filepath.Join(runtime.GOROOT(), "bin", "go"), "/usr/local/go/bin/go"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("the Go backend needs the go command, which is not installed")
}

// BuildGo compiles prog (optimised) with the Go backend into an
// executable in dir and returns its path.
func BuildGo(ctx context.Context, prog *ir.Program, dir string) (string, error) {
	src, err := EmitGo(prog)
	if err != nil {
		return "", err
	}
	files := map[string]string{
		"main.go": string(src),
		"ksrt.go": ksrt.Source("main"),
		"go.mod":  "module ksprog\n\ngo 1.26\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	gocmd, err := goTool()
	if err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "prog")
	cmd := exec.CommandContext(ctx, gocmd, "build", "-o", exe, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", &CompileError{Tool: "go build", Output: out.String()}
		}
		return "", fmt.Errorf("running go build: %w", err)
	}
	return exe, nil
}
