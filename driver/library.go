package driver

import (
	"context"
	"errors"

	"github.com/ksc-lang/ksc/ir"
)

// BuildLibrary builds DIR/libNAME.so and DIR/NAME.h from prog (optimised).
func BuildLibrary(ctx context.Context, prog *ir.Program, name, dir string, cc CC, emitC string) error {
	return errors.New("not yet")
}
