package driver

import (
	"context"
	"errors"

	"github.com/ksc-lang/ksc/ir"
)

// EmitGo generates Go for an optimised program.
func EmitGo(prog *ir.Program) ([]byte, error) {
	return nil, errors.New("the Go backend is not written yet")
}

// BuildGo compiles prog (optimised) with the Go backend into an executable in dir.
func BuildGo(ctx context.Context, prog *ir.Program, dir string) (string, error) {
	return "", errors.New("the Go backend is not written yet")
}
