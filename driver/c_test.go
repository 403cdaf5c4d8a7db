package driver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	cemit "github.com/ksc-lang/ksc/emit/c"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// TestCCFromEnv: $CC is split into words like a shell splits a command
// (CC="cc -DX=1"), and a "compiler" that exits 0 without writing its
// output (CC=echo) is an error, even where an earlier output exists.
func TestCCFromEnv(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "x.c")
	if err := os.WriteFile(src, []byte("#ifndef X\n#error X unset\n#endif\nint main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x")
	t.Setenv("CFLAGS", "")
	t.Setenv("CC", "cc -DX=1")
	if _, err := DefaultCC().CompileC(context.Background(), src, out); err != nil {
		t.Errorf("CC=\"cc -DX=1\": %v", err)
	}
	t.Setenv("CC", "echo")
	_, err := DefaultCC().CompileC(context.Background(), src, out)
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Output, "wrote no") {
		t.Errorf("CC=echo with an earlier output: %v", err)
	}
}

// TestBackendFaultIsInternal: a primitive no backend has code for (a
// linear map left after the optimiser, which a correct pipeline never
// leaves) is an internal compiler error from either backend, not an error
// in the user's program.
func TestBackendFaultIsInternal(t *testing.T) {
	x := &ir.Var{Name: "x", T: types.FloatType}
	body := ir.MkPrim(ir.Pos{}, "lmOne", ir.Float(ir.Pos{}, 1))
	f := &ir.Func{Name: ir.Name{Base: "f"}, BaseArg: types.FloatType, Arg: types.FloatType,
		Result: body.T, Params: []*ir.Var{x}, Body: body}
	prog := &ir.Program{Funcs: []*ir.Func{f}}
	if _, err := EmitC(prog, cemit.Options{Library: true, Prefix: "m"}); !IsInternal(err) {
		t.Errorf("C backend: %v, want an internal compiler error", err)
	}
	if _, err := EmitGo(prog); !IsInternal(err) {
		t.Errorf("Go backend: %v, want an internal compiler error", err)
	}
}
