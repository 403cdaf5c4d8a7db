// Command ksc compiles programs in the ks language: it checks them, runs
// them through the C or Go backend, formats them, prints them at any stage
// of the pipeline, and builds shared libraries with a C header.
//
// Exit status: 0 success, 1 an error in the program (including a runtime
// error of a program run by ksc), 2 a usage error, 3 an internal compiler
// error (a bug in ksc).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/syntax"
)

// Exit statuses.
const (
	exitOK       = 0
	exitProgram  = 1
	exitUsage    = 2
	exitInternal = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks errors in how ksc was invoked.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError carries the exit status of a program run by ksc.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// run runs the command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "ksc: internal compiler error: %v\n", r)
			code = exitInternal
		}
	}()
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, interspersed(app, args))
	return report(err, stderr)
}

// checkedOutput runs a command that writes its result to stdout and makes
// a failed write its error: output that did not arrive (a full disk, a
// closed pipe) is not a success.
func checkedOutput(stdout io.Writer, cmd func(io.Writer) error) error {
	w := &errWriter{w: stdout}
	err := cmd(w)
	if err == nil && w.err != nil {
		err = fmt.Errorf("writing the output: %w", w.err)
	}
	return err
}

// errWriter is a writer that remembers its first error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// report prints err and returns the exit status for it.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	var ee *exitError
	var el syntax.ErrorList
	var se *syntax.Error
	var ie *driver.InternalError
	var ce *driver.CompileError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ksc: %s\n", ue.msg)
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "%v\n", ie)
		fmt.Fprintln(stderr, "ksc: this is a bug in ksc: please report it, with the input (KSC_DEBUG=1 prints the Go stack)")
		if os.Getenv("KSC_DEBUG") != "" {
			stderr.Write(ie.Stack)
		}
		return exitInternal
	case errors.As(err, &el):
		src := sources{}
		for _, e := range el {
			printError(stderr, e, src)
		}
		return exitProgram
	case errors.As(err, &se):
		printError(stderr, se, sources{})
		return exitProgram
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "ksc: %v\n", ce)
		return exitProgram
	}
	if msg := err.Error(); strings.Contains(msg, "flag provided but not defined") ||
		strings.Contains(msg, "Required flag") || strings.HasPrefix(msg, "No help topic") {
		fmt.Fprintf(stderr, "ksc: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "ksc: %v\n", err)
	return exitProgram
}

func newApp(stdout, stderr io.Writer) *cli.App {
	checkFlag := &cli.BoolFlag{Name: "check-ir", Usage: "run the IR checker after every pass (finds bugs in ksc)"}
	backendFlag := &cli.StringFlag{Name: "backend", Value: "c", Usage: "backend that compiles the program: c or go; or eval, the reference evaluator, which interprets the typed program (not derived or optimised; it does not run derived functions such as [rev f])"}
	noOptFlag := &cli.BoolFlag{Name: "no-opt", Usage: "run only the optimiser passes code generation needs (eliminate-lm, inline-prelude, split-bog), none of the rewriting ones"}
	timeFlag := &cli.BoolFlag{Name: "time", Usage: "print the time each step takes on stderr"}
	threadsFlag := &cli.BoolFlag{Name: "threads", Usage: "run outer loops, and reverse passes' sums into gradients, on all cores with OpenMP (C only); results do not depend on the number of threads"}
	revFlag := &cli.StringFlag{Name: "rev", Value: "lm", Usage: "how [rev f] is computed: lm (through the Jacobian, accumulating in place), suf (split reverse mode, its passes translated from the single-use form by seed 002's Figure 23, as [sufrev f]'s are under lm too) or bog (split reverse mode, every split pass cut from the optimised reverse code)"}
	adFlag := &cli.StringFlag{Name: "ad", Value: "derive", Usage: "how [rev f], [sufrev f] and [fwd f] are made: derive (in the compiler's IR, see --rev) or cps (generated by the Go backend from the primal definitions, reverse mode by continuations, forward mode by dual numbers; needs the Go backend)"}
	app := &cli.App{
		Name:      "ksc",
		Usage:     "compile differentiable programs written in ks",
		Version:   version(),
		Writer:    stdout,
		ErrWriter: stderr,
		ExitErrHandler: func(*cli.Context, error) {
			// Errors are reported by run.
		},
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usagef("%v", err)
		},
		HideHelpCommand: true,
		Commands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "compile a program and run its main",
				ArgsUsage: "FILE.ks...",
				Description: "Compiles the files (read as one program) and runs (def main Integer () ...),\n" +
					"with the program's output on stdout. A runtime error prints its .ks position\n" +
					"on stderr and exits with status 1.",
				Flags:  []cli.Flag{backendFlag, checkFlag, timeFlag, revFlag, adFlag, threadsFlag, noOptFlag},
				Action: func(c *cli.Context) error { return cmdRun(c, stdout, stderr, false) },
			},
			{
				Name:      "test",
				Usage:     "run a self-checking program (TESTS FOLLOW protocol)",
				ArgsUsage: "FILE.ks...",
				Description: "Runs main like `ksc run`; after a line TESTS FOLLOW the program prints, for\n" +
					"each check, ----, a name and 1 or 0. Fails (status 1) if any check prints 0.",
				Flags:  []cli.Flag{backendFlag, checkFlag, timeFlag, revFlag, adFlag, threadsFlag, noOptFlag},
				Action: func(c *cli.Context) error { return cmdRun(c, stdout, stderr, true) },
			},
			{
				Name:      "check",
				Usage:     "parse, type-check and derive; report errors only",
				ArgsUsage: "FILE.ks...",
				Flags:     []cli.Flag{checkFlag, revFlag},
				Action:    func(c *cli.Context) error { return cmdCheck(c) },
			},
			{
				Name:      "fmt",
				Usage:     "print files in canonical format",
				ArgsUsage: "FILE.ks...",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "w", Usage: "write the result to the file instead of stdout (through a temporary file renamed over it: a failed write leaves the file as it was)"},
					&cli.BoolFlag{Name: "l", Usage: "list files whose formatting differs"},
				},
				Action: func(c *cli.Context) error {
					return checkedOutput(stdout, func(w io.Writer) error { return cmdFmt(c, w) })
				},
			},
			{
				Name:        "emit",
				Usage:       "print the program after a stage of the pipeline",
				ArgsUsage:   "FILE.ks...",
				Description: stageHelp(),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "stage", Value: "typed", Usage: strings.Join(driver.StageNames(), ", ")},
					&cli.BoolFlag{Name: "check", Usage: "run the IR checker after every pass"},
					revFlag, adFlag, noOptFlag,
				},
				Action: func(c *cli.Context) error {
					return checkedOutput(stdout, func(w io.Writer) error { return cmdEmit(c, w) })
				},
			},
			{
				Name:      "build",
				Usage:     "build a shared library, its C header and its manifest",
				ArgsUsage: "FILE.ks... -o DIR/libNAME.so",
				Description: "Writes DIR/libNAME.so, DIR/NAME.h and DIR/NAME.json, a manifest of the entry\n" +
					"points and their types. Every def becomes NAME_<def>, taking\n" +
					"a context, its arguments and a pointer to its result, and returning 0 or an\n" +
					"error code (the message is in NAME_ctx_error); a derivative such as [rev f]\n" +
					"(NAME_rev_f) takes f's arguments, then the cotangent (or tangent), then a\n" +
					"pointer per result (per gradient). --python also writes DIR/NAME.py,\n" +
					"a Python module binding the library with ctypes (numpy arrays in and out if\n" +
					"numpy is installed, else lists; errors raise NAME.KscError). --go also writes\n" +
					"DIR/NAME.go, making DIR a Go package (cgo) whose *Context methods call the\n" +
					"library with Go values. Honours $CC and $CFLAGS\n" +
					"(default -O3, each looping function also compiled for AVX2 and chosen at load\n" +
					"time on x86-64; CFLAGS=\"-O3 -march=native\" for all this machine's vector units,\n" +
					"256-bit ones where it has AVX-512 unless -DKS_PREFER_512).\n" +
					"--threads shares the iterations of outer builds and sums, and of reverse\n" +
					"passes' sums into gradients, among OpenMP threads (OMP_NUM_THREADS sets how\n" +
					"many); results do not depend on the number of threads, and differ from the\n" +
					"serial build's only in the last bits of a gradient's sums (added in 4 chunks);\n" +
					"a loop measured to run no faster on the threads (a short one, or on a busy\n" +
					"machine) runs on one.\n" +
					"NAME is a C identifier, not ks, KS, ksu, ksh nor one of those followed by _\n" +
					"(the generated C's own names). Recursion may use 4 MiB of stack (or half\n" +
					"of ulimit -s) before failing with NAME_ERR_MEMORY; a host calling from a\n" +
					"thread with a larger stack raises it with NAME_ctx_set_max_stack.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "o", Required: true, Usage: "output library `DIR/libNAME.so`"},
					&cli.StringFlag{Name: "emit-c", Usage: "also write the generated C to `FILE`"},
					&cli.BoolFlag{Name: "python", Usage: "also write DIR/NAME.py, Python bindings (ctypes; numpy if installed)"},
					&cli.BoolFlag{Name: "go", Usage: "also write DIR/NAME.go, Go bindings (a cgo package in DIR)"},
					&cli.StringFlag{Name: "export", Usage: "export only these entry points, named as in the header without NAME_ (`loss,vrev_loss_wrt_0`); default all"},
					checkFlag, timeFlag, revFlag, adFlag, threadsFlag, noOptFlag,
				},
				Action: func(c *cli.Context) error { return cmdBuild(c, stderr) },
			},
		},
	}
	return app
}

// files returns the command's file arguments.
func files(c *cli.Context) ([]string, error) {
	if c.NArg() == 0 {
		return nil, usagef("%s: no input files", c.Command.Name)
	}
	return c.Args().Slice(), nil
}

// timer prints how long steps take when enabled.
type timer struct {
	on    bool
	w     io.Writer
	start time.Time
}

func newTimer(on bool, w io.Writer) *timer { return &timer{on: on, w: w, start: time.Now()} }

func (t *timer) step(name string) {
	if t.on {
		now := time.Now()
		fmt.Fprintf(t.w, "ksc: %-10s %v\n", name, now.Sub(t.start).Round(time.Microsecond))
		t.start = now
	}
}

// interspersed moves a command's flags in front of its file arguments, so
// that `ksc build model.ks -o libmodel.so` works: urfave/cli stops reading
// flags at the first argument that is not one.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, rest []string
	for i := 2; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		rest = append(rest, a)
	}
	out := append([]string{args[0], args[1]}, flags...)
	return append(out, rest...)
}
