// Package driver runs the compiler pipeline: it reads and parses source
// files, type-checks them, derives the requested functions, runs the
// optimiser passes and hands the program to a backend; it also builds and
// runs the generated C and Go. The command line (cmd/ksc) and the tests
// use it, so both see the same pipeline.
package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"

	"github.com/ksc-lang/ksc/derive"
	goemit "github.com/ksc-lang/ksc/emit/go"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/optimise"
	"github.com/ksc-lang/ksc/syntax"
)

// A Stage names a step of the pipeline (Pipeline) that advances the
// program: Load stops at one.
type Stage string

// The steps Load may stop at, in order.
const (
	Typed     Stage = "typed"
	Derived   Stage = "derived"
	Optimised Stage = "optimised"
)

// Options control the pipeline.
type Options struct {
	// Rev is the strategy of [rev f]: "lm" (default), "bog" or "suf"; see derive.Options.
	Rev string
	// AD is "cps" to have the Go backend generate [rev f] and [sufrev f]
	// by continuations, and [fwd f] by dual numbers, from the primal
	// definitions (goemit.Options.AD)
	// instead of emitting the bodies derive made; "" otherwise. Only the
	// Go backend has it.
	AD string
	// CheckIR runs the IR checker after every pass.
	CheckIR bool
	// NoOpt runs only the optimiser passes code generation requires
	// (optimise.Options.NoRewrite): the whole pipeline with the rewriting
	// passes off.
	NoOpt bool
	// Warn, if set, receives warnings of the optimiser.
	Warn func(pos ir.Pos, msg string)
	// Trace, if set, is called after each step of the pipeline with its
	// name (ksc --time).
	Trace func(stage string)
}

// An InternalError is a bug in ksc: a panic caught at a stage boundary,
// with the stage and what was being compiled.
type InternalError struct {
	Stage string
	What  string
	Value any
	Stack []byte
}

func (e *InternalError) Error() string {
	s := "internal compiler error in " + e.Stage
	if p, ok := e.Value.(*ir.PanicAt); ok {
		return fmt.Sprintf("%s: %s: while compiling %s: %v", p.Pos, s, p.What, p.Value)
	}
	if e.What != "" {
		s += " while compiling " + e.What
	}
	return fmt.Sprintf("%s: %v", s, e.Value)
}

// guard runs f, turning a panic into an *InternalError.
func guard(stage, what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &InternalError{Stage: stage, What: what, Value: r, Stack: debug.Stack()}
		}
	}()
	return f()
}

// IsInternal reports whether err is an internal compiler error.
func IsInternal(err error) bool {
	var ie *InternalError
	return errors.As(err, &ie)
}

// MaxSourceBytes is the largest source file ksc reads (64 MiB): a bound on
// what it reads from a device or pipe that never ends (/dev/zero), and
// far above any program.
const MaxSourceBytes = 64 << 20

// ReadSource reads a source file, of at most MaxSourceBytes.
func ReadSource(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxSourceBytes+1))
	if err != nil {
		return nil, err
	}
	if len(src) > MaxSourceBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB, the most ksc reads from a source file", path, MaxSourceBytes>>20)
	}
	return src, nil
}

// ParseFiles reads and parses the files.
func ParseFiles(paths []string) ([]*syntax.File, error) {
	var files []*syntax.File
	var errs syntax.ErrorList
	for _, p := range paths {
		src, err := ReadSource(p)
		if err != nil {
			return nil, err
		}
		f, err := parse(p, src)
		if err != nil {
			var el syntax.ErrorList
			if !errors.As(err, &el) {
				return nil, err
			}
			errs = append(errs, el...)
		}
		files = append(files, f)
	}
	return files, errs.Err()
}

func parse(name string, src []byte) (f *syntax.File, err error) {
	err = guard("the parser", name, func() error {
		var perr error
		f, perr = syntax.ParseFile(name, src)
		return perr
	})
	return f, err
}

// Source is a named piece of ks text (for tests and tools that do not
// read files).
type Source struct {
	Name string
	Text []byte
}

// Load parses and type-checks the files, and derives what they ask for.
// It stops at stage (Typed, Derived or Optimised).
func Load(paths []string, stage Stage) (*ir.Program, error) {
	return LoadWith(paths, stage, Options{})
}

// LoadWith is Load with options.
func LoadWith(paths []string, stage Stage, opts Options) (*ir.Program, error) {
	s, err := Reach(paths, string(stage), opts)
	return s.Prog, err
}

// LoadSources is Load for sources in memory.
func LoadSources(srcs []Source, stage Stage) (*ir.Program, error) {
	return LoadSourcesWith(srcs, stage, Options{})
}

// LoadSourcesWith is LoadSources with options.
func LoadSourcesWith(srcs []Source, stage Stage, opts Options) (*ir.Program, error) {
	var files []*syntax.File
	var errs syntax.ErrorList
	for _, s := range srcs {
		f, err := parse(s.Name, s.Text)
		if err != nil {
			var el syntax.ErrorList
			if !errors.As(err, &el) {
				return nil, err
			}
			errs = append(errs, el...)
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	s := &State{Files: files, Opts: opts, Reached: "parsed"}
	err := s.Advance(string(stage))
	return s.Prog, err
}

// derived makes the typed program the derived one, in place: binders
// renamed apart, then the derived functions the program asks for.
func derived(prog *ir.Program, opts Options) error {
	// The typed program is as the user wrote it: the reference evaluator
	// (package eval) runs it so, sharing no rewriting with the compiler.
	// From here on no binder rebinds a name in scope, so no rewrite can
	// capture a name (ir.RenameApart); the IR checker holds every pass to
	// it.
	ir.RenameApart(prog)
	dopts := deriveOptions(opts)
	return guard("derive", "", func() error { return derive.Derive(prog, dopts) })
}

// deriveOptions returns the options of package derive that opts imply.
func deriveOptions(opts Options) derive.Options {
	dopts := derive.Options{Rev: opts.Rev}
	if opts.AD == "cps" {
		dopts.Skip = goemit.Generates
	}
	return dopts
}

// Optimise runs the optimiser passes over a derived program. A
// derivation of a derived function, [fwd [rev f]], is made from the
// optimised body of the inner one (derive.Options.Nested): so while some
// wait, it derives them and optimises again, a round per level of nesting.
// opts must hold the Rev and AD the program was loaded with: a later
// round derives with them (with another AD, derive makes what the Go
// backend would, and a split pass first asked for then may disagree with
// the record its other passes defined: random seed 1004465).
func Optimise(prog *ir.Program, opts Options) error {
	run := func() error {
		return guard("the optimiser", "", func() error {
			return optimise.Run(prog, optimise.Options{Check: opts.CheckIR, Warn: opts.Warn, NoRewrite: opts.NoOpt})
		})
	}
	if err := run(); err != nil {
		return err
	}
	dopts := deriveOptions(opts)
	dopts.Nested = true
	var before []*ir.Func
	for round := 0; ; round++ {
		waiting := derive.Waiting(prog, dopts)
		if len(waiting) == 0 {
			return nil
		}
		if round == maxNesting {
			return fmt.Errorf("derivations of derived functions nested more than %d deep", maxNesting)
		}
		if slices.Equal(waiting, before) {
			// A round made none of them: what is left can never be made,
			// which is ksc's fault (a derivation that can't is an error).
			f := waiting[0]
			return &InternalError{Stage: "derive", What: f.FullName(), Value: fmt.Sprintf("%s: no round makes %s", usePosOf(f), f.FullName())}
		}
		before = waiting
		if err := guard("derive", "", func() error { return derive.Derive(prog, dopts) }); err != nil {
			return err
		}
		ir.RenameApart(prog)
		if err := run(); err != nil {
			return err
		}
	}
}

// usePosOf returns where a derived function was first needed.
func usePosOf(f *ir.Func) ir.Pos {
	if len(f.Uses) > 0 {
		return f.Uses[0]
	}
	return f.P
}

// maxNesting bounds the rounds of Optimise: one per level of nesting.
const maxNesting = 8
