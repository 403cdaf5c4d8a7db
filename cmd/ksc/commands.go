package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ksc-lang/ksc/derive"
	"github.com/ksc-lang/ksc/driver"
	cemit "github.com/ksc-lang/ksc/emit/c"
	pyemit "github.com/ksc-lang/ksc/emit/python"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// loadOptions returns the options of loading a program: the reverse-mode
// strategy of --rev, which each command validates before loading.
func loadOptions(c *cli.Context) driver.Options {
	return driver.Options{Rev: c.String("rev"), AD: goOptions(c).AD}
}

// goOptions returns the options of the Go backend: --ad=cps.
func goOptions(c *cli.Context) driver.Options {
	if c.String("ad") == "cps" {
		return driver.Options{AD: "cps"}
	}
	return driver.Options{}
}

// checkAD reports a usage error for an unknown --ad, or for --ad=cps when
// the program does not go to the Go backend (backend names what it goes
// to: c, go, or a stage of ksc emit).
func checkAD(c *cli.Context, backend string) error {
	switch ad := c.String("ad"); ad {
	case "", "derive":
		return nil
	case "cps":
		if backend != "go" {
			return usagef("--ad=cps needs the Go backend (ksc run/test --backend go, ksc emit --stage go), not %s", backend)
		}
		return nil
	default:
		return usagef("unknown AD strategy %q (want derive or cps)", ad)
	}
}

// checkRev reports a usage error for an unknown --rev.
func checkRev(c *cli.Context) error {
	if r := c.String("rev"); r != "" && !slices.Contains(derive.RevStrategies, r) {
		return usagef("unknown reverse-mode strategy %q (want %s)", r, derive.WantRev())
	}
	return nil
}

// compile loads, derives and optimises the files.
func compile(c *cli.Context, t *timer) (*ir.Program, error) {
	paths, err := files(c)
	if err != nil {
		return nil, err
	}
	if err := checkRev(c); err != nil {
		return nil, err
	}
	backend := "c" // ksc build
	if c.Command.Name != "build" {
		backend = c.String("backend")
	}
	if err := checkAD(c, backend); err != nil {
		return nil, err
	}
	opts := loadOptions(c)
	opts.CheckIR, opts.Warn, opts.NoOpt = c.Bool("check-ir"), warner(c.App.ErrWriter), c.Bool("no-opt")
	opts.Trace = t.step
	return driver.LoadWith(paths, driver.Optimised, opts)
}

func cmdRun(c *cli.Context, stdout, stderr io.Writer, test bool) error {
	t := newTimer(c.Bool("time"), stderr)
	if c.String("backend") == "eval" {
		return cmdEval(c, stdout, stderr, t, test)
	}
	p, err := compile(c, t)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ksc-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var exe string
	switch backend := c.String("backend"); backend {
	case "c":
		exe, err = driver.BuildC(c.Context, p, cCompiler(c, "-O2"), dir)
	case "go":
		if c.Bool("threads") {
			return usagef("--threads needs the C backend")
		}
		exe, err = driver.BuildGoWith(c.Context, p, dir, goOptions(c))
	default:
		return usagef("unknown backend %q (want c, go or eval)", backend)
	}
	if err != nil {
		return err
	}
	t.step("build")
	w, out := programOutput(stdout, test)
	code, err := driver.Run(c.Context, exe, w, stderr)
	if err != nil {
		return err
	}
	t.step("run")
	return programExit(code, out, test, stderr)
}

// programOutput returns where a program's output goes: stdout, and for
// ksc test also a buffer for the TESTS FOLLOW check.
func programOutput(stdout io.Writer, test bool) (io.Writer, *bytes.Buffer) {
	var out bytes.Buffer
	if test {
		return io.MultiWriter(stdout, &out), &out
	}
	return stdout, &out
}

// programExit turns how a program ended into ksc's result: a runtime
// error's status, or for ksc test the check of its output.
func programExit(code int, out *bytes.Buffer, test bool, stderr io.Writer) error {
	if code != 0 {
		return &exitError{code: exitProgram}
	}
	if test {
		return checkTests(out.String(), stderr)
	}
	return nil
}

// cmdEval runs main with the reference evaluator: the typed program, not
// derived or optimised, so the flags about derivatives and code do not
// apply.
func cmdEval(c *cli.Context, stdout, stderr io.Writer, t *timer, test bool) error {
	paths, err := files(c)
	if err != nil {
		return err
	}
	for _, f := range []string{"rev", "ad", "threads", "no-opt"} {
		if c.IsSet(f) {
			return usagef("--%s does not apply to the evaluator (--backend eval)", f)
		}
	}
	prog, err := driver.LoadWith(paths, driver.Typed, driver.Options{Trace: t.step})
	if err != nil {
		return err
	}
	w, out := programOutput(stdout, test)
	code, err := driver.Eval(prog, w, stderr)
	if err != nil {
		return err
	}
	t.step("run")
	return programExit(code, out, test, stderr)
}

// checkTests checks the TESTS FOLLOW protocol: after that line, groups of
// "----", a name, and 1 (pass) or 0 (fail).
func checkTests(out string, stderr io.Writer) error {
	lines := strings.Split(out, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "TESTS FOLLOW" {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return fmt.Errorf("the program printed no TESTS FOLLOW line")
	}
	var failed []string
	n := 0
	for i := start; i < len(lines); {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		if strings.TrimSpace(lines[i]) != "----" || i+2 >= len(lines) {
			return fmt.Errorf("malformed test output after TESTS FOLLOW at line %d: %q", i+1, lines[i])
		}
		name, result := strings.TrimSpace(lines[i+1]), strings.TrimSpace(lines[i+2])
		n++
		switch result {
		case "1", "true":
		case "0", "false":
			failed = append(failed, name)
		default:
			return fmt.Errorf("test %q printed %q, want 1 or 0", name, result)
		}
		i += 3
	}
	for _, f := range failed {
		fmt.Fprintf(stderr, "FAIL: %s\n", f)
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "%d of %d tests failed\n", len(failed), n)
		return &exitError{code: exitProgram}
	}
	fmt.Fprintf(stderr, "ok: %d tests passed\n", n)
	return nil
}

func cmdCheck(c *cli.Context) error {
	paths, err := files(c)
	if err != nil {
		return err
	}
	if err := checkRev(c); err != nil {
		return err
	}
	opts := loadOptions(c)
	prog, err := driver.LoadWith(paths, driver.Derived, opts)
	if err != nil {
		return err
	}
	if c.Bool("check-ir") {
		// The same options: a later round derives with them.
		opts.CheckIR = true
		return driver.Optimise(prog, opts)
	}
	return nil
}

func cmdFmt(c *cli.Context, stdout io.Writer) error {
	paths, err := files(c)
	if err != nil {
		return err
	}
	var errs syntax.ErrorList
	for _, p := range paths {
		src, err := driver.ReadSource(p)
		if err != nil {
			return err
		}
		f, err := syntax.ParseFile(p, src)
		if err != nil {
			if el, ok := err.(syntax.ErrorList); ok {
				errs = append(errs, el...)
				continue
			}
			return err
		}
		out := syntax.FormatFile(f)
		switch {
		case c.Bool("l"):
			if !bytes.Equal(out, src) {
				fmt.Fprintln(stdout, p)
			}
		case c.Bool("w"):
			if !bytes.Equal(out, src) {
				if err := replaceFile(p, out); err != nil {
					return err
				}
			}
		default:
			stdout.Write(out)
		}
	}
	return errs.Err()
}

// replaceFile replaces the contents of the file at path with data, keeping
// its permissions. It writes a temporary file in the same directory and
// renames it over the original only once all of data is written and
// synced, as gofmt does, so a failed write (a full disk) leaves the
// original whole.
func replaceFile(path string, data []byte) (err error) {
	path, err = filepath.EvalSymlinks(path) // replace a link's target, not the link
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".ksc-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("writing %s: %w (the file is unchanged)", path, err)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func cmdEmit(c *cli.Context, stdout io.Writer) error {
	paths, err := files(c)
	if err != nil {
		return err
	}
	stage := c.String("stage")
	if _, ok := driver.Lookup(stage); !ok {
		return usagef("unknown stage %q (want %s)", stage, strings.Join(driver.StageNames(), ", "))
	}
	if err := checkRev(c); err != nil {
		return err
	}
	target := "the " + stage + " stage"
	if stage == "go" {
		target = "go"
	}
	if err := checkAD(c, target); err != nil {
		return err
	}
	opts := loadOptions(c)
	opts.CheckIR, opts.NoOpt = c.Bool("check"), c.Bool("no-opt")
	err = driver.Emit(paths, stage, opts, stdout)
	if driver.IsNotApplicable(err) {
		fmt.Fprintf(c.App.ErrWriter, "ksc: %v\n", err)
		return nil
	}
	return err
}

// stageHelp describes the stages of ksc emit, from the pipeline table.
func stageHelp() string {
	var b strings.Builder
	b.WriteString("Stages, in the order the compiler reaches them:\n")
	for _, st := range driver.Pipeline() {
		fmt.Fprintf(&b, "  %-10s %s\n", st.Name, st.Doc)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func cmdBuild(c *cli.Context, stderr io.Writer) error {
	out := c.String("o")
	base := filepath.Base(out)
	if !strings.HasPrefix(base, "lib") || !strings.HasSuffix(base, ".so") || len(base) <= len("lib.so") {
		return usagef("build: -o must name a library DIR/libNAME.so, not %q", out)
	}
	name := strings.TrimSuffix(strings.TrimPrefix(base, "lib"), ".so")
	if err := cemit.CheckLibraryName(name); err != nil {
		return usagef("build: %v", err)
	}
	if c.Bool("python") && pyemit.IsKeyword(name) {
		return usagef("build: --python: the library name %q is a Python keyword, so the module %s.py could not be imported", name, name)
	}
	t := newTimer(c.Bool("time"), stderr)
	p, err := compile(c, t)
	if err != nil {
		return err
	}
	dir := filepath.Dir(out)
	var export []string
	for _, n := range strings.Split(c.String("export"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			export = append(export, n)
		}
	}
	warn := func(w string) {
		fmt.Fprintf(stderr, "ksc: the C compiler warned about the generated code (generated C should draw no warning: please report it):\n%s\n", w)
	}
	if err := driver.BuildLibraryExporting(c.Context, p, name, dir, cCompiler(c, "-O3"), c.String("emit-c"), export, warn); err != nil {
		return err
	}
	if c.Bool("python") {
		if err := os.WriteFile(filepath.Join(dir, name+".py"), []byte(pyemit.Module(name)), 0o644); err != nil {
			return fmt.Errorf("writing the Python module: %w", err)
		}
	}
	if c.Bool("go") {
		if err := driver.WriteGoBindings(dir, name); err != nil {
			return err
		}
	}
	t.step("build")
	return nil
}

// warner prints the optimiser's warnings as file:line:col: warning: ...
func warner(w io.Writer) func(ir.Pos, string) {
	return func(pos ir.Pos, msg string) { fmt.Fprintf(w, "%s: warning: %s\n", pos, msg) }
}

// cCompiler returns the C compiler with the given default optimisation
// flags and the command's --threads.
func cCompiler(c *cli.Context, opt string) driver.CC {
	cc := driver.DefaultCC(opt)
	cc.Threads = c.Bool("threads")
	return cc
}
