package driver

import (
	"errors"
	"fmt"
	"io"

	"github.com/ksc-lang/ksc/cl"
	cemit "github.com/ksc-lang/ksc/emit/c"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// A Step is one row of the pipeline table: a stage of compilation that
// `ksc emit --stage NAME` prints, the golden tests record, and the other
// commands pass through on their way to a backend.
//
// A step either advances the program (Run is set: it reads the program
// its After step left and leaves the next one) or is a view (Run is nil:
// it prints After's program in another form, and nothing reads it).
type Step struct {
	Name  string // as ksc emit --stage names it
	Doc   string // what the stage's text is, one line
	After string // the step whose program it reads; "" for the source files
	// Run advances s from After's program to this step's.
	Run func(s *State) error
	// Print writes the step's text for s, which has reached After (a
	// view) or this step. A stage that has nothing to print for the
	// program returns a *NotApplicable.
	Print func(s *State, w io.Writer) error
}

// A State is the pipeline's work on one program: the options, the parsed
// files, and the program as the last step run left it (steps change it
// in place).
type State struct {
	Paths   []string
	Opts    Options
	Files   []*syntax.File
	Prog    *ir.Program
	Reached string // the last step run
}

// A NotApplicable error is a stage that has nothing to print for the
// program (a BOG for a program without split reverse mode).
type NotApplicable struct {
	Stage, Why string
}

func (e *NotApplicable) Error() string {
	return fmt.Sprintf("the %s stage does not apply: %s", e.Stage, e.Why)
}

// Pipeline returns the table of steps, in order: every step comes after
// the step it reads (TestPipelineOrder), and the steps that advance the
// program form one chain.
func Pipeline() []Step {
	return []Step{
		{Name: "parsed", Doc: "the source as parsed, formatted (ksc fmt)",
			Run: func(s *State) error {
				files, err := ParseFiles(s.Paths)
				s.Files = files
				return err
			},
			Print: func(s *State, w io.Writer) error {
				for _, f := range s.Files {
					if _, err := w.Write(syntax.FormatFile(f)); err != nil {
						return err
					}
				}
				return nil
			}},
		{Name: "typed", Doc: "the type-checked program, as written (what the reference evaluator runs)", After: "parsed",
			Run: func(s *State) error {
				return guard("the type checker", "", func() error {
					var err error
					s.Prog, err = typecheck.Check(s.Files)
					return err
				})
			},
			Print: printProgram},
		{Name: "derived", Doc: "with the derived functions the program asks for, binders renamed apart", After: "typed",
			Run:   func(s *State) error { return derived(s.Prog, s.Opts) },
			Print: printProgram},
		{Name: "suf", Doc: "the derived program in single-use form: A-normal, every variable used once ($dup, $elim)", After: "derived",
			Print: func(s *State, w io.Writer) error { return write(w)(SUF(s.Prog)) }},
		{Name: "cl", Doc: "the derived program in the categorical language CL", After: "derived",
			Print: func(s *State, w io.Writer) error { return write(w)(cl.Format(s.Prog)) }},
		{Name: "optimised", Doc: "after the optimiser's passes (the IR the backends read)", After: "derived",
			Run:   func(s *State) error { return Optimise(s.Prog, s.Opts) },
			Print: printProgram},
		{Name: "bog", Doc: "split reverse mode's records and the passes that make and read them", After: "optimised",
			Print: func(s *State, w io.Writer) error {
				text := BOG(s.Prog)
				if text == nil {
					return &NotApplicable{"bog", "the program uses no split reverse mode ([suffwdpass f], [sufrevpass f], [sufrev f], or [rev f] with --rev bog): no BOG to print"}
				}
				_, err := w.Write(text)
				return err
			}},
		{Name: "c", Doc: "the generated C", After: "optimised",
			Print: func(s *State, w io.Writer) error {
				out, err := EmitC(s.Prog, cemit.Options{Prefix: "ks", Main: HasMain(s.Prog)})
				if err != nil {
					return err
				}
				_, err = io.WriteString(w, out.C)
				return err
			}},
		{Name: "go", Doc: "the generated Go (its runtime package aside)", After: "optimised",
			Print: func(s *State, w io.Writer) error {
				if !HasMain(s.Prog) {
					return &NotApplicable{"go", "the Go backend makes a program, which needs (def main Integer () ...); this one has none (ksc build makes a C library without)"}
				}
				return write(w)(EmitGoWith(s.Prog, s.Opts))
			}},
	}
}

func printProgram(s *State, w io.Writer) error {
	_, err := w.Write(s.Prog.Format())
	return err
}

// write returns a function writing text, or returning err, to w.
func write(w io.Writer) func(text []byte, err error) error {
	return func(text []byte, err error) error {
		if err != nil {
			return err
		}
		_, err = w.Write(text)
		return err
	}
}

// StageNames returns the names of the pipeline's steps, in order.
func StageNames() []string {
	var names []string
	for _, st := range Pipeline() {
		names = append(names, st.Name)
	}
	return names
}

// Lookup returns the step named name.
func Lookup(name string) (Step, bool) {
	for _, st := range Pipeline() {
		if st.Name == name {
			return st, true
		}
	}
	return Step{}, false
}

// Reach runs the steps that advance the program, in order, until the
// program is the one stage reads (stage itself, or the step a view
// reads), and returns the state.
func Reach(paths []string, stage string, opts Options) (*State, error) {
	s := &State{Paths: paths, Opts: opts}
	return s, s.Advance(stage)
}

// Advance runs the steps after the last one run up to stage (or, for a
// view, up to the step it reads), with the IR checker after each if
// Opts.CheckIR.
func (s *State) Advance(stage string) error {
	steps := Pipeline()
	at := func(name string) int {
		for i, st := range steps {
			if st.Name == name {
				return i
			}
		}
		return -1
	}
	to := at(stage)
	if to < 0 {
		return fmt.Errorf("no stage %q", stage)
	}
	if steps[to].Run == nil {
		to = at(steps[to].After)
	}
	from := at(s.Reached) // -1 before the first step
	if from > to {
		return fmt.Errorf("internal: the program is past the %s stage (at %s)", stage, s.Reached)
	}
	for _, st := range steps[from+1 : to+1] {
		if st.Run == nil {
			continue
		}
		if err := st.Run(s); err != nil {
			return err
		}
		if s.Opts.CheckIR && s.Prog != nil {
			if err := ir.Check(s.Prog); err != nil {
				return fmt.Errorf("internal: the IR checker, after the %s stage: %w", st.Name, err)
			}
		}
		s.Reached = st.Name
		if s.Opts.Trace != nil {
			s.Opts.Trace(st.Name)
		}
	}
	return nil
}

// Emit writes the text of stage for the source files, running the
// pipeline up to it.
func Emit(paths []string, stage string, opts Options, w io.Writer) error {
	st, ok := Lookup(stage)
	if !ok {
		return fmt.Errorf("no stage %q", stage)
	}
	s, err := Reach(paths, stage, opts)
	if err != nil {
		return err
	}
	return st.Print(s, w)
}

// IsNotApplicable reports whether err says a stage does not apply.
func IsNotApplicable(err error) bool {
	var na *NotApplicable
	return errors.As(err, &na)
}

// HasMain reports whether the program defines main, which the C backend
// then calls from C's main.
func HasMain(prog *ir.Program) bool {
	for _, f := range prog.Funcs {
		if f.Name.Base == "main" && len(f.Name.Derivs) == 0 && f.Body != nil {
			return true
		}
	}
	return false
}
