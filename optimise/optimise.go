// Package optimise holds the passes that transform a typed program between
// type checking and code generation, listed in order in one table
// (Passes), and runs them with the IR checker between passes on request.
package optimise

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/syntax"
)

// A Pass transforms a program in place.
type Pass struct {
	Name string
	Doc  string
	Run  func(*Context) error
	// Required says code generation needs the pass: it runs even when
	// Options.NoRewrite turns the rewriting passes off.
	Required bool
	// Expands says the pass inserts code (an inlined body, or primal code
	// the split copies into a record's branch or recomputes in the
	// reverse pass) whose binders may rebind names in scope where it lands; Run renames them apart
	// afterwards (ir.RenameApart). Every other pass must keep the program
	// free of shadowing, which the IR checker enforces.
	Expands bool
}

// A Context is what a pass works on: the program and the options.
type Context struct {
	Prog *ir.Program
	Opts Options
}

// warnf reports a warning if the options ask for them.
func (c *Context) warnf(pos ir.Pos, format string, args ...any) {
	if c.Opts.Warn != nil {
		c.Opts.Warn(pos, fmt.Sprintf(format, args...))
	}
}

// Passes are the passes run before code generation, in order. The
// required ones make a program the backends can compile: no linear maps
// (eliminate-lm), no calls of prelude functions defined in ks
// (inline-prelude), the bodies of split reverse mode (split-bog).
var Passes = []Pass{
	{Name: "lm-laws", Doc: "simplify the Jacobians [D f] with the laws of linear maps", Run: lmLaws},
	{Name: "eliminate-lm", Doc: "apply linear maps: forward and reverse mode without linear maps", Run: eliminateLM, Required: true},
	{Name: "inline-prelude", Doc: "replace calls of prelude functions defined in ks by their definitions", Run: inlinePrelude, Required: true, Expands: true},
	{Name: "inline", Doc: "inline the calls wrapped in $inline", Run: inlineRequested, Expands: true},
	{Name: "inline-leaves", Doc: "inline the calls of small functions that call none, run no loop and have no hand-written derivative", Run: inlineLeaves, Expands: true},
	{Name: "simplify", Doc: "laws, user rules, constant folding, dead lets, copy propagation, tuple selection", Run: simplifyPass},
	{Name: "hoist", Doc: "move what the sweeps of a Jacobian compute alike out of their loop: the primal runs once", Run: hoistLoops, Expands: true},
	{Name: "small-vectors", Doc: "vectors of a few elements, of a constant size, kept as their elements: small functions of them inlined, their loops unrolled", Run: smallVectors, Expands: true},
	{Name: "split-bog", Doc: "split reverse mode: the forward and reverse passes and their BOG, from the optimised [revfull f]", Run: splitBog, Required: true, Expands: true},
	{Name: "cse", Doc: "common subexpressions of let-bound values", Run: csePass},
	{Name: "tape-loops", Doc: "a build records what a later loop over the same range computes again (the reverse loop of derived code)", Run: tapeLoops},
	{Name: "unzip", Doc: "a vector of tuples of scalars read only by element is kept as a tuple of vectors (lower.Unzip)", Run: unzipPass},
	{Name: "gather", Doc: "a vector one loop reads at fewer indices than it has is computed where it is read", Run: gatherElements, Expands: true},
	{Name: "rows", Doc: "a loop over (mul c n) elements whose body shares work between each c of them runs by rows of c", Run: splitRows, Expands: true},
	{Name: "simplify-again", Doc: "simplify what CSE and unzip exposed", Run: simplifyPass},
	{Name: "drop-copies", Doc: "an accumulator started as a zero and given an owned value is that value (no copy)", Run: dropCopies},
	{Name: "untape", Doc: "a fold's tape read only at its last entry (its reverse pass dropped) is the fold", Run: untapeFolds},
	{Name: "unswitch", Doc: "a loop testing a Bool bound outside it is two loops, one for each outcome, without the test", Run: unswitchLoops, Expands: true},
	{Name: "loop-tail", Doc: "the split passes of a tail recursion as loops: each record holds its parent's (bog.LoopTail)", Run: loopTail, Expands: true},
	{Name: "drop-unused", Doc: "drop the internal derived functions ([revacc f], [revfull f], ...) that nothing calls", Run: dropUnused},
}

// limit bounds the rewrites of one function by the laws; hitting it is
// reported (a law that loops, or a program that rewrites a lot).
const limit = 100000

// Options control Run.
type Options struct {
	// Check runs the IR checker before the first pass and after every pass.
	Check bool
	// Warn, if set, receives warnings (a rewriting bound that was hit).
	Warn func(pos ir.Pos, msg string)
	// NoRewrite runs only the passes code generation requires
	// (Pass.Required), so that a program can be compiled without the
	// rewriting passes.
	NoRewrite bool
}

// Run runs the passes over prog.
func Run(prog *ir.Program, opts Options) error {
	ctx := &Context{Prog: prog, Opts: opts}
	if opts.Check {
		if err := ir.Check(prog); err != nil {
			return checkFailed("before the passes", err)
		}
	}
	for _, p := range Passes {
		if opts.NoRewrite && !p.Required {
			continue
		}
		if err := p.Run(ctx); err != nil {
			return err
		}
		if p.Expands && prog.NoShadow {
			ir.RenameApart(prog)
		}
		if opts.Check {
			if err := ir.Check(prog); err != nil {
				return checkFailed("after pass "+p.Name, err)
			}
		}
	}
	return nil
}

// checkFailed names the point of the pipeline in each of the IR
// checker's errors, so that the pass that broke an invariant is named.
func checkFailed(where string, err error) error {
	el, ok := err.(syntax.ErrorList)
	if !ok {
		return fmt.Errorf("%s: %w", where, err)
	}
	out := make(syntax.ErrorList, len(el))
	for i, e := range el {
		out[i] = &syntax.Error{Pos: e.Pos, Msg: where + ": " + e.Msg}
	}
	return out
}

// inlinePrelude inlines the prelude functions defined in ks (see
// lower.InlinePrelude).
func inlinePrelude(ctx *Context) error {
	prog := ctx.Prog
	var err error
	forEachBody(prog, func(f *ir.Func) {
		body, ierr := lower.InlinePrelude(f.Body)
		if ierr != nil && err == nil {
			err = ierr
		}
		f.Body = body
	})
	return err
}

// forEachBody calls do for every function with a body, annotating a panic
// with the function.
func forEachBody(prog *ir.Program, do func(*ir.Func)) {
	for _, f := range prog.Funcs {
		if f.Body != nil {
			func() {
				defer func() {
					if r := recover(); r != nil {
						panic(ir.AtPos(r, f.P, f.FullName()))
					}
				}()
				do(f)
			}()
		}
	}
}
