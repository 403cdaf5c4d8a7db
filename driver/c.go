package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	cemit "github.com/ksc-lang/ksc/emit/c"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// EmitC generates C for an optimised program.
func EmitC(prog *ir.Program, opts cemit.Options) (out *cemit.Output, err error) {
	err = guard("the C backend", "", func() error {
		var eerr error
		out, eerr = cemit.Emit(prog, opts)
		return eerr
	})
	return out, err
}

// CC describes the C compiler: the command (from $CC, default cc) and
// flags (from $CFLAGS when set, else the defaults given by the caller).
type CC struct {
	Cmd string
	// CmdArgs are the words of $CC after the command (CC="gcc -m64").
	CmdArgs []string
	Flags   []string
	// Threads makes code whose outer loops run on OpenMP threads
	// (cemit.Options.Threads), compiled with -fopenmp.
	Threads bool
}

// DefaultCC returns the C compiler from the environment, with the given
// optimisation flags unless $CFLAGS overrides them.
func DefaultCC(optFlags ...string) CC {
	cc := CC{Cmd: "cc"}
	if words := strings.Fields(os.Getenv("CC")); len(words) > 0 {
		cc.Cmd, cc.CmdArgs = words[0], words[1:]
	}
	if f := os.Getenv("CFLAGS"); f != "" {
		cc.Flags = strings.Fields(f)
	} else {
		cc.Flags = optFlags
	}
	return cc
}

// Command returns the command running the compiler ($CC's words) with
// args.
func (cc CC) Command(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, cc.Cmd, append(append([]string{}, cc.CmdArgs...), args...)...)
}

// A CompileError is a failure of the C or Go compiler on generated code:
// a bug in ksc unless the program calls something ksc cannot see.
type CompileError struct {
	Tool   string
	Output string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s failed on the generated code:\n%s", e.Tool, strings.TrimSpace(e.Output))
}

// CompileC compiles C source to an executable or shared library at out.
// extra are flags such as -shared. Compiler warnings are returned.
func (cc CC) CompileC(ctx context.Context, src, out string, extra ...string) (warnings string, err error) {
	// -fno-math-errno: the generated code never reads errno after a math
	// function, and with it gcc may vectorise loops that call them (see
	// vector math in runtime/c/ksc_runtime.h). It changes no value.
	args := append([]string{"-std=c11", "-Wall", "-Wextra", "-fno-math-errno"}, cc.Flags...)
	args = append(args, extra...)
	if cc.Threads {
		args = append(args, "-fopenmp")
	}
	args = append(args, "-o", out, src, "-lm")
	// A compiler that succeeds without writing out (CC=echo) must not
	// leave an earlier out looking like its work.
	if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	cmd := cc.Command(ctx, args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", &CompileError{Tool: cc.Cmd, Output: buf.String()}
		}
		return "", fmt.Errorf("running %s: %w", cc.Cmd, err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		return "", &CompileError{Tool: cc.Cmd, Output: buf.String() + "\n(it exited 0 but wrote no " + out + ": is $CC a C compiler?)"}
	}
	return buf.String(), nil
}

// BuildC compiles prog (optimised) into an executable in dir and returns its path.
func BuildC(ctx context.Context, prog *ir.Program, cc CC, dir string) (string, error) {
	opts := cemitOptions()
	opts.Threads = cc.Threads
	out, err := EmitC(prog, opts)
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(out.C), 0o644); err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "prog")
	if _, err := cc.CompileC(ctx, src, exe); err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			if el := undefinedEdefs(prog, ce.Output); len(el) > 0 {
				return "", el
			}
		}
		return "", err
	}
	return exe, nil
}

// undefinedEdefs returns an error at each edef of prog whose symbol the
// linker's output says is undefined: the program calls a function
// nothing defines, an error in the program rather than in ksc.
func undefinedEdefs(prog *ir.Program, output string) syntax.ErrorList {
	var el syntax.ErrorList
	for _, f := range prog.Funcs {
		if f.Kind != ir.EdefFunc || len(f.Name.Derivs) > 0 || f.Prim != nil {
			continue
		}
		// GNU ld, then lld.
		if strings.Contains(output, "undefined reference to `"+f.Name.Base+"'") ||
			strings.Contains(output, "undefined symbol: "+f.Name.Base+"\n") {
			hint := "define it in ks before its first use, or give the C compiler a file that defines it (CFLAGS=\"-O3 " + f.Name.Base + ".c\")"
			for _, g := range prog.Funcs {
				if g.Kind == ir.DefFunc && g.Key() == f.Key() {
					hint = fmt.Sprintf("the def of %s at %s serves only the calls after it: an edef is not a forward declaration, and functions cannot call each other in a cycle", f.Name.Base, g.P)
				}
			}
			el.AddHint(f.P, hint, "%s is declared by edef, and no C code the program is linked with defines it", f.Name.Base)
		}
	}
	return el
}

// RunResult is the outcome of running a program.
type RunResult struct {
	ExitCode int
}

// Run runs an executable with the given output streams and returns its
// exit status (an error only when it could not be run).
func Run(ctx context.Context, exe string, stdout, stderr io.Writer) (int, error) {
	cmd := exec.CommandContext(ctx, exe)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() < 0 {
			return 3, fmt.Errorf("the program was killed: %v", ee)
		}
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, err
	}
	return 0, nil
}

// cemitOptions are the options of a program built to run.
func cemitOptions() cemit.Options { return cemit.Options{Prefix: "ks", Main: true} }
