// Package goemit is ksc's second backend: it owns the translation of an
// optimised ks program into one Go source file, package main, generated
// with github.com/dave/jennifer. The tests run every program through it
// and through the C backend (emit/c) and require the same output, so it
// follows the C backend's semantics step by step: arguments evaluated left
// to right, only the chosen branch of an if, sums in flat order from the
// first element (Float sums from -0.0), and runtime errors with the C
// runtime's messages.
//
// Representation (shared with the runtime, runtime/go, package ksrt):
//
//	Integer        int64 (arithmetic wraps around, as in C's ks_iadd)
//	Float          float64
//	Bool           bool
//	String         string
//	(Tuple T...)   a struct type per tuple type, T_<mangled type>, with
//	               fields F0, F1, ...; (Tuple) is a struct without fields
//	(Vec T)        []T
//	(Tensor N T)   Tensor[T] for N >= 2: Shape []int64 (N sizes) and Data
//	               []T, the elements in row-major order
//	(Variant A B)  a struct type V_<mangled> {Isl bool; L A; R B}
//	named type     a pointer to a struct type N_<mangled> {V Def}
//
// Each ks def becomes a Go function ksu_NAME(ctx *Ctx, p0 T0, p1 T1, ...)
// taking the fields of a tuple argument separately (none for unit), like
// the C backend. The context carries the buffered standard output; there
// is no global state. Expressions become statements: anything that can
// fail or has an effect is evaluated into a fresh variable in evaluation
// order; what remains is atoms (variables, literals) and pure operations
// on them. build, sumbuild, fold and the other loops become for loops over
// the data slices; the polymorphic operations (eq, print, sums of tuples
// and tensors, the ts_* operations) call the runtime, which works on any
// value by reflection. A runtime error panics with a *ksrt.Error; main
// recovers it (ksrt.Run), flushes the output, prints the message on
// stderr and exits with status 1.
package goemit

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Options control the generated code.
type Options struct {
	// Runtime is the import path of the runtime package (runtime/go) that
	// the generated code calls. Empty means that the runtime's files are
	// put next to the generated file, in package main (see
	// driver.BuildGo); "github.com/ksc-lang/ksc/runtime/go" makes code
	// that can be type-checked inside this module.
	Runtime string
	// AD selects how [rev f], [sufrev f] and [fwd f] are made: "" uses
	// the bodies that package derive made; "cps" (for a program that
	// derive handled with Options.Skip = Generates) generates them here from
	// the primal definitions, reverse mode by continuations (cps.go) and
	// forward mode by dual numbers (dual.go).
	AD string
}

// Emit generates a Go main package for prog, which must have been
// optimised (no prelude calls with ks definitions, no linear maps) and
// have a (def main Integer () ...). The main function runs the ks main
// and exits with status 1 after a runtime error.
//
// Errors in the program (a call of an edef that Go cannot implement, no
// main) are returned as *syntax.Error or syntax.ErrorList; a panic is a
// bug in ksc.
func Emit(prog *ir.Program, opts Options) (src []byte, err error) {
	var errs syntax.ErrorList
	for _, f := range prog.Funcs {
		if f.Body == nil && f.Prim == nil && f.Kind != ir.EdefFunc && !(opts.AD == "cps" && Generates(f)) {
			errs.Add(f.P, "%s has no definition", f.FullName())
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	switch opts.AD {
	case "", "cps":
	default:
		return nil, fmt.Errorf("goemit: unknown AD strategy %q", opts.AD)
	}
	defer func() {
		if r := recover(); r != nil {
			if se, ok := r.(*syntax.Error); ok && !se.Internal() {
				err = se
				return
			}
			panic(r) // a fault of this backend: the driver's guard reports it
		}
	}()
	e := &emitter{
		opts:      opts,
		file:      jen.NewFile("main"),
		typeNames: map[string]string{},
		namer:     types.NewNamer(),
		fnNames:   map[*ir.Func]string{},
		usedNames: map[string]bool{},
		templates: map[string][]tmplPart{},
		cps: cpsState{prog: prog, names: map[*ir.Func]string{}, duals: map[*ir.Func]string{},
			bodies: map[*ir.Func]ir.Expr{}},
	}
	return e.program(prog)
}

type emitter struct {
	opts Options
	file *jen.File

	typeDecls []jen.Code        // type declarations, in order of first use
	typeNames map[string]string // mangled type -> Go name

	fnNames   map[*ir.Func]string
	usedNames map[string]bool
	templates map[string][]tmplPart // parsed Go spellings of primitives
	tmp       int
	cps       cpsState          // --ad=cps
	recursive map[*ir.Func]bool // ir.Recursive: these count their depth
	fails     ir.Failing        // ir.MayFail: the calls of these are in the chain of calls of an error
	namer     *types.Namer      // the names of types in type names
}

// rt refers to a name of the runtime.
func (e *emitter) rt(name string) *jen.Statement { return jen.Qual(e.opts.Runtime, name) }

func (e *emitter) program(prog *ir.Program) ([]byte, error) {
	var funcs []jen.Code
	var mainFn *ir.Func
	e.recursive = ir.Recursive(prog.Funcs)
	e.fails = ir.MayFail(prog.Funcs, e.recursive)
	for _, f := range prog.Funcs {
		if f.Prim != nil || f.Kind == ir.EdefFunc {
			continue
		}
		if e.opts.AD == "cps" && cpsTarget(f) != "" {
			funcs = append(funcs, e.cpsTargetFunc(f))
		} else {
			funcs = append(funcs, e.function(f))
		}
		if len(f.Name.Derivs) == 0 && f.Name.Base == "main" && f.Arg.Equal(types.Unit) {
			mainFn = f
		}
	}
	for f := e.pending(); f != nil; f = e.pending() {
		funcs = append(funcs, f)
	}
	if mainFn == nil {
		panic(&syntax.Error{Msg: "the program has no (def main Integer () ...)"})
	}

	e.file.HeaderComment("Code generated by ksc. DO NOT EDIT.")
	for _, d := range e.typeDecls {
		e.file.Add(d)
		e.file.Line()
	}
	for _, f := range funcs {
		e.file.Add(f)
		e.file.Line()
	}
	e.file.Comment("main runs the ks main; a runtime error ends it with status 1.")
	e.file.Func().Id("main").Params().Block(
		jen.Qual("os", "Exit").Call(e.rt("Run").Call(
			jen.Qual("os", "Stdout"), jen.Qual("os", "Stderr"),
			jen.Func().Params(jen.Id("ctx").Op("*").Add(e.rt("Ctx"))).Block(
				jen.Id("_").Op("=").Id(e.funcName(mainFn)).Call(jen.Id("ctx")),
			),
		)),
	)
	var b bytes.Buffer
	if err := e.file.Render(&b); err != nil {
		return nil, fmt.Errorf("goemit: rendering Go: %w", err)
	}
	return b.Bytes(), nil
}

// funcName returns the unique Go name of a ks function.
func (e *emitter) funcName(f *ir.Func) string {
	if n, ok := e.fnNames[f]; ok {
		return n
	}
	base := "ksu_" + f.Name.Ident()
	n := base
	for i := 2; e.usedNames[n]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	e.usedNames[n] = true
	e.fnNames[f] = n
	return n
}

// gotype returns the Go type of a ks type, declaring it on first use.
func (e *emitter) gotype(t *types.Type) *jen.Statement {
	switch t.Kind {
	case types.Integer:
		return jen.Int64()
	case types.Float:
		return jen.Float64()
	case types.Bool:
		return jen.Bool()
	case types.String:
		return jen.String()
	case types.Tensor:
		if t.Rank == 1 {
			return jen.Index().Add(e.gotype(t.Elem))
		}
		return e.rt("Tensor").Types(e.gotype(t.Elem))
	case types.Tuple, types.Variant, types.Named:
		name := e.declare(t)
		if t.Kind == types.Named {
			return jen.Op("*").Id(name)
		}
		return jen.Id(name)
	}
	panic(fmt.Sprintf("goemit: no Go type for %s", t))
}

// declare declares the struct type standing for a tuple, variant or named
// type and returns its name.
func (e *emitter) declare(t *types.Type) string {
	m := e.namer.Name(t)
	if n, ok := e.typeNames[m]; ok {
		return n
	}
	var name string
	var fields []jen.Code
	switch t.Kind {
	case types.Tuple:
		name = "T_" + m
		e.typeNames[m] = name
		for i, f := range t.Elems {
			fields = append(fields, jen.Id("F"+strconv.Itoa(i)).Add(e.gotype(f)))
		}
	case types.Variant:
		name = "V_" + m
		e.typeNames[m] = name
		fields = []jen.Code{jen.Id("Isl").Bool(), jen.Id("L").Add(e.gotype(t.Elems[0])), jen.Id("R").Add(e.gotype(t.Elems[1]))}
	case types.Named:
		// Declared before its definition's types, since the definition may
		// refer to the named type itself.
		name = "N_" + m
		e.typeNames[m] = name
		fields = []jen.Code{jen.Id("V").Add(e.gotype(t.Def))}
	}
	e.typeDecls = append(e.typeDecls, jen.Commentf("%s is %s.", name, types.Brief(t)).Line().Type().Id(name).Struct(fields...))
	return name
}

// function returns the declaration of the Go function of a def.
func (e *emitter) function(f *ir.Func) jen.Code {
	defer ir.PanicIn(f)
	g := &fn{e: e, f: f}
	params := []jen.Code{jen.Id("ctx").Op("*").Add(e.rt("Ctx"))}
	ps := paramTypes(f.Arg)
	for i, t := range ps {
		params = append(params, jen.Id("p"+strconv.Itoa(i)).Add(e.gotype(t)))
	}
	if e.recursive[f] {
		g.stmt(jen.Id("ctx").Dot("Enter").Call(jen.Lit(f.P.String()), jen.Lit(f.Name.String())))
		g.stmt(jen.Defer().Id("ctx").Dot("Leave").Call())
	}
	if g.tail = ir.TailCalls(f); len(g.tail) > 0 {
		g.stmt(jen.Id("ksTail").Op(":"))
	}
	var sc *env
	if len(f.Params) == 1 && f.Arg.Kind == types.Tuple {
		// One parameter of tuple type, passed as its fields.
		fields := make([]val, len(ps))
		for i := range ps {
			fields[i] = atomOf(jen.Id("p" + strconv.Itoa(i)))
		}
		name := g.declare(f.Params[0].Name, f.Arg, pureOf(g.tupleLit(f.Arg, fields)), !ir.Occurs(f.Params[0].Name, f.Body))
		sc = sc.push(f.Params[0].Name, name)
	} else {
		for i, p := range f.Params {
			sc = sc.push(p.Name, "p"+strconv.Itoa(i))
		}
	}
	if r := g.expr(f.Body, sc); !r.jumped {
		g.stmt(jen.Return(r.c()))
	}
	return jen.Comment(commentSafe(f.FullName())).Line().
		Func().Id(e.funcName(f)).Params(params...).Add(e.gotype(f.Result)).Block(g.stmts...)
}

// commentSafe keeps a ks name on one comment line.
func commentSafe(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// paramTypes returns the types of the Go parameters for an argument type:
// one per field of a tuple (none for unit), else one.
func paramTypes(arg *types.Type) []*types.Type {
	if arg.Kind == types.Tuple {
		return arg.Elems
	}
	return []*types.Type{arg}
}
