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
	"github.com/ksc-lang/ksc/syntax"
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

// TestDeepTypeCodeIsLinear pins that the C of a type nested d deep grows
// with d, not d^2: each of the d nested types is declared under a name of
// bounded length (types.Namer) with a bounded comment.
func TestDeepTypeCodeIsLinear(t *testing.T) {
	size := map[int]int{}
	for _, d := range []int{500, 2000} {
		ty := strings.Repeat("(Tuple ", d) + "Float" + strings.Repeat(")", d)
		src := "(def f " + ty + " (x : " + ty + ") x)\n(def main Integer () 0)\n"
		prog, err := LoadSources([]Source{{Name: "deep.ks", Text: []byte(src)}}, Derived)
		if err != nil {
			t.Fatal(err)
		}
		if err := Optimise(prog, Options{}); err != nil {
			t.Fatal(err)
		}
		out, err := EmitC(prog, cemitOptions())
		if err != nil {
			t.Fatal(err)
		}
		size[d] = len(out.C)
	}
	// A fixed runtime header comes with both.
	if r := float64(size[2000]) / float64(size[500]); r > 4.5 {
		t.Errorf("4 times the depth gives %.1f times the C (%d, %d bytes), want about 4", r, size[500], size[2000])
	}
}

// TestUndefinedEdef: a program calling an edef nothing defines fails to
// link; that is an error at the edef, not a C compiler failure, and says
// when a def of the same name comes too late to serve the call.
func TestUndefinedEdef(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	for _, tc := range []struct{ src, want string }{
		{"(edef mystery Float (Float))\n(def main Integer () (print (mystery 1.0)))",
			"t.ks:1:7: mystery is declared by edef, and no C code the program is linked with defines it (define it in ks before its first use"},
		{"(edef odd Bool (Integer))\n(def even Bool (n : Integer) (if (eq n 0) true (odd (sub n 1))))\n" +
			"(def odd Bool (n : Integer) (if (eq n 0) false (even (sub n 1))))\n(def main Integer () (print (even 4)))",
			"(the def of odd at t.ks:3:6 serves only the calls after it"},
	} {
		prog, err := LoadSources([]Source{{Name: "t.ks", Text: []byte(tc.src)}}, Derived)
		if err == nil {
			err = Optimise(prog, Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("CFLAGS", "")
		_, err = BuildC(context.Background(), prog, DefaultCC("-O0"), t.TempDir())
		var el syntax.ErrorList
		if !errors.As(err, &el) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.src, err, tc.want)
		}
	}
}
