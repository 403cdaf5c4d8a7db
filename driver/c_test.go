package driver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
