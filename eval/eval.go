// Package eval is the reference evaluator of ks: a direct tree-walking
// interpreter of the typed program that typecheck.Check produces, before
// differentiation, lowering or any optimiser pass has touched it. It is
// the oracle that the tests compare the backends and the AD strategies
// against, so it shares no code with them (it uses ir, types, typecheck
// for the prelude definitions, and runtime/go for the elementary
// functions, the runtime checks and the formatting of numbers, so that
// it prints the very text the compiled programs print).
//
// It owns the meaning of every construct of the source language: the
// order of evaluation (arguments left to right, only the chosen branch of
// an if), sums in flat order from the first element, runtime errors with
// the messages and positions of the backends, and printing. Prelude
// functions defined in ks (ir.Prim.Def) run their definition, placed at
// the call as the lowering pass places it.
//
// It does not run derived functions ([fwd f], [rev f], ...) that have no
// hand-written definition, nor edefs other than restated prelude
// functions: calling one is an *Unsupported error. Given a program after
// derivation and optimisation, whose derived functions have bodies, it
// runs those too, with the primitives of derived code by their
// functional meaning (derived.go), and CallCounting counts the
// operations of a call: the tests' measure of a derivative's cost.
package eval

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// A Value is a ks value: float64 (Float), int64 (Integer), bool (Bool),
// string (String), Tuple, or *Tensor. Values are never modified after
// they are made.
type Value any

// A Tuple is a tuple value; the unit tuple is empty.
type Tuple []Value

// A Tensor is a tensor of any rank: its sizes and its elements in
// row-major order. A vector has one size.
type Tensor struct {
	Shape []int64
	Data  []Value
}

// Vec returns the vector of the given elements.
func Vec(xs ...Value) *Tensor {
	return &Tensor{Shape: []int64{int64(len(xs))}, Data: xs}
}

// An Unsupported error says the evaluator does not run part of a program
// (a derived function, an edef, a primitive of derived code) or cannot
// (too large a tensor).
type Unsupported struct {
	Pos ir.Pos
	Msg string
}

func (e *Unsupported) Error() string { return e.Pos.String() + ": " + e.Msg }

// Limits of the evaluator.
const (
	// MaxDepth bounds nested calls of user functions.
	MaxDepth = 100000
	// maxElems bounds the elements of one tensor.
	maxElems = 1 << 26
)

// Run runs the program's main, (def main Integer () ...), writing what it
// prints to out. A runtime error of the program is returned as a
// *ksrt.Error, whose text is the one the compiled programs print
// ("file:line:col: runtime error: message"); out has what was printed
// before it.
func Run(prog *ir.Program, out io.Writer) error {
	var main *ir.Func
	for _, f := range prog.Funcs {
		if len(f.Name.Derivs) == 0 && f.Name.Base == "main" && f.Arg.Equal(types.TupleOf()) {
			main = f
		}
	}
	if main == nil {
		return fmt.Errorf("the program has no (def main Integer () ...)")
	}
	w := bufio.NewWriter(out)
	_, err := run(prog, w, func(m *machine) Value { return m.call(main, Tuple{}, main.P) })
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// Call calls f on its arguments (one per parameter, or the single
// argument) and returns the result, discarding what the program prints.
// Errors are as for Run.
func Call(prog *ir.Program, f *ir.Func, args ...Value) (Value, error) {
	var arg Value = Tuple(args)
	if len(args) == 1 {
		arg = args[0]
	}
	return run(prog, bufio.NewWriter(io.Discard), func(m *machine) Value { return m.call(f, arg, f.P) })
}

// CallCounting is Call, returning also the number of operations the call
// made: one per call of a function or a primitive, and for a primitive
// that fills, copies or adds whole values the scalars it writes (a
// build's elements, a zero's scalars, those added by $addAt or $addTo).
// It is a cost model of the compiled code, shared with no backend, for
// tests that pin how a derivative's cost grows with the function's. A
// call that would make more than limit operations (if limit > 0) stops
// with an *Unsupported error.
func CallCounting(prog *ir.Program, f *ir.Func, limit int64, args ...Value) (Value, int64, error) {
	var arg Value = Tuple(args)
	if len(args) == 1 {
		arg = args[0]
	}
	var ops int64
	v, err := run(prog, bufio.NewWriter(io.Discard), func(m *machine) Value {
		m.limit = limit
		v := m.call(f, arg, f.P)
		ops = m.ops
		return v
	})
	return v, ops, err
}

// run runs f on a new machine, turning the panics that stop evaluation
// (*ksrt.Error, *Unsupported) into errors.
func run(prog *ir.Program, w *bufio.Writer, f func(*machine) Value) (v Value, err error) {
	m := &machine{out: w, prelude: map[*ir.Call]*ir.Func{},
		fails: ir.MayFail(prog.Funcs, ir.Recursive(prog.Funcs))}
	defer func() {
		if r := recover(); r != nil {
			switch r := r.(type) {
			case *ksrt.Error:
				err = ksrt.WithCalls(r, m.calls, len(m.calls))
			case *Unsupported:
				err = r
			default:
				panic(r)
			}
		}
	}()
	return f(m), nil
}

// A machine is the state of one evaluation.
type machine struct {
	out     *bufio.Writer
	depth   int
	calls   []string // the calls running, for a runtime error's message (ir.Call.Site)
	fails   ir.Failing
	running *ir.Func              // the function whose body is being evaluated
	prelude map[*ir.Call]*ir.Func // a prelude definition placed at each call
	ops     int64                 // operations so far (CallCounting)
	limit   int64                 // and the most allowed, if > 0
}

// An env binds local variables; the innermost binding of a name wins.
type env struct {
	name string
	val  Value
	next *env
}

func (e *env) push(name string, v Value) *env { return &env{name, v, e} }

func (e *env) lookup(name string) Value {
	for ; e != nil; e = e.next {
		if e.name == name {
			return e.val
		}
	}
	panic(fmt.Sprintf("eval: variable %s not in scope", name)) // the type checker rules this out
}

func unsupported(pos ir.Pos, format string, args ...any) {
	panic(&Unsupported{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// bind binds params to a function's argument: one parameter takes the
// whole argument, several take the fields of the tuple.
func bind(sc *env, params []*ir.Var, arg Value) *env {
	if len(params) == 1 {
		return sc.push(params[0].Name, arg)
	}
	for i, p := range params {
		sc = sc.push(p.Name, arg.(Tuple)[i])
	}
	return sc
}

// call runs a user function.
func (m *machine) call(f *ir.Func, arg Value, pos ir.Pos) Value {
	if f.Body == nil {
		if len(f.Name.Derivs) == 1 && f.Name.Derivs[0] == "shape" && f.Base != nil && f.Base.Body != nil {
			// [shape f] is the shape of f's value (language.md section 5),
			// here by running f: the compiler derives it without the values.
			return shapeOf(m.call(f.Base, arg, pos), f.Base.Result)
		}
		if len(f.Name.Derivs) > 0 {
			unsupported(pos, "the evaluator does not run derived function %s", f.Name)
		}
		unsupported(pos, "the evaluator does not run %s: it is declared by edef and has no definition", f.FullName())
	}
	if m.depth >= MaxDepth {
		// As the compiled programs fail (ksrt.Ctx.Enter), at the definition.
		ksrt.Fail(f.P.String(), "%s", ksrt.TooDeep(f.Name.String(), MaxDepth))
	}
	m.depth++
	m.tick(pos)
	caller := m.running
	m.running = f
	v := m.eval(f.Body, bind(nil, f.Params, arg))
	m.running = caller
	m.depth--
	return v
}

// callAt runs the call e of a user function on arg, recorded in the chain
// of calls as the backends record it (ir.Failing.Records).
func (m *machine) callAt(e *ir.Call, arg Value) Value {
	if !m.fails.Records(m.running, e) {
		return m.call(e.Fn, arg, e.P)
	}
	m.calls = append(m.calls, e.Site())
	v := m.call(e.Fn, arg, e.P)
	m.calls = m.calls[:len(m.calls)-1]
	return v
}

// eval evaluates e in sc.
func (m *machine) eval(e ir.Expr, sc *env) Value {
	switch e := e.(type) {
	case *ir.Const:
		return e.Val
	case *ir.Var:
		return sc.lookup(e.Name)
	case *ir.Tuple:
		t := make(Tuple, len(e.Elems))
		for i, x := range e.Elems {
			t[i] = m.eval(x, sc)
		}
		return t
	case *ir.Get:
		return m.eval(e.X, sc).(Tuple)[e.I-1]
	case *ir.Let:
		v := m.eval(e.Rhs, sc)
		if !e.Pattern {
			return m.eval(e.Body, sc.push(e.Vars[0].Name, v))
		}
		for i, x := range e.Vars {
			sc = sc.push(x.Name, v.(Tuple)[i])
		}
		return m.eval(e.Body, sc)
	case *ir.If:
		if m.eval(e.Cond, sc).(bool) {
			return m.eval(e.Then, sc)
		}
		return m.eval(e.Else, sc)
	case *ir.Assert:
		if !m.eval(e.Cond, sc).(bool) {
			ksrt.Fail(e.P.String(), "%s", e.Message())
		}
		return m.eval(e.Body, sc)
	case *ir.Dummy:
		if !hasZero(e.T, nil) {
			unsupported(e.P, "the evaluator has no value of type %s for $dummy (a type that contains itself, or a variant)", e.T)
		}
		return zeroOf(e.T)
	case *ir.Call:
		if e.Prim == nil {
			return m.callAt(e, m.arg(e.Args, sc))
		}
		if e.Prim.Def != "" {
			def := m.preludeDef(e)
			return m.eval(def.Body, bind(nil, def.Params, m.arg(e.Args, sc)))
		}
		return m.prim(e, sc)
	}
	panic(fmt.Sprintf("eval: unexpected %T", e)) // a Lam is only an argument of a primitive
}

// arg evaluates the argument of a call: the one argument, or the tuple.
func (m *machine) arg(args []ir.Expr, sc *env) Value {
	if len(args) == 1 {
		return m.eval(args[0], sc)
	}
	t := make(Tuple, len(args))
	for i, a := range args {
		t[i] = m.eval(a, sc)
	}
	return t
}

// preludeDef returns the ks definition of the prelude function that c
// calls, every node at the position of the call and its asserts with the
// primitive's message, as the lowering pass inlines it.
func (m *machine) preludeDef(c *ir.Call) *ir.Func {
	if f := m.prelude[c]; f != nil {
		return f
	}
	def, err := typecheck.PreludeDef(c.Prim)
	if err != nil {
		panic(err) // the prelude is part of ksc and is tested
	}
	f := *def
	f.Body = ir.Copy(def.Body, c.P)
	if c.Prim.Fail != "" {
		ir.Inspect(f.Body, func(x ir.Expr) bool {
			if a, ok := x.(*ir.Assert); ok {
				a.Msg = c.Prim.Fail
			}
			return true
		})
	}
	m.prelude[c] = &f
	return &f
}

// apply applies a lambda to its argument.
func (m *machine) apply(lam *ir.Lam, arg Value, sc *env) Value {
	return m.eval(lam.Body, sc.push(lam.Param.Name, arg))
}

// zeroOf returns the value of ($dummy t): zeros, empty strings and
// tensors, false.
func zeroOf(t *types.Type) Value {
	switch t.Kind {
	case types.Float:
		return 0.0
	case types.Integer:
		return int64(0)
	case types.Bool:
		return false
	case types.String:
		return ""
	case types.Tuple:
		z := make(Tuple, len(t.Elems))
		for i, e := range t.Elems {
			z[i] = zeroOf(e)
		}
		return z
	case types.Tensor:
		return &Tensor{Shape: make([]int64, t.Rank)}
	case types.Named:
		return zeroOf(t.Def)
	}
	panic("eval: no value of type " + t.String())
}

// hasZero reports whether zeroOf(t) is defined: t holds no variant and
// no named type inside its own definition (seen holds those around t).
func hasZero(t *types.Type, seen map[*types.Type]bool) bool {
	switch t.Kind {
	case types.Float, types.Integer, types.Bool, types.String, types.Tensor:
		return true // a tensor's zero is empty, whatever its elements
	case types.Tuple:
		for _, e := range t.Elems {
			if !hasZero(e, seen) {
				return false
			}
		}
		return true
	case types.Named:
		if seen[t] || t.Def == nil {
			return false
		}
		if seen == nil {
			seen = map[*types.Type]bool{}
		}
		seen[t] = true
		defer delete(seen, t)
		return hasZero(t.Def, seen)
	}
	return false
}

// print writes a value in the format of the language: Float as C's %g,
// Integer in decimal, Bool as 1 or 0, String raw, tensors as [a, b]
// (nested by dimension), tuples as their parts joined by commas.
func (m *machine) print(v Value) {
	switch v := v.(type) {
	case float64:
		_, _ = m.out.Write(ksrt.AppendG(nil, v))
	case int64:
		_, _ = m.out.WriteString(strconv.FormatInt(v, 10))
	case bool:
		if v {
			_ = m.out.WriteByte('1')
		} else {
			_ = m.out.WriteByte('0')
		}
	case string:
		_, _ = m.out.WriteString(v)
	case Tuple:
		for i, x := range v {
			if i > 0 {
				_ = m.out.WriteByte(',')
			}
			m.print(x)
		}
	case *Tensor:
		k := 0
		m.printNested(v.Shape, v.Data, &k)
	}
}

func (m *machine) printNested(shape []int64, data []Value, k *int) {
	_ = m.out.WriteByte('[')
	for i := int64(0); i < shape[0]; i++ {
		if i > 0 {
			_, _ = m.out.WriteString(", ")
		}
		if len(shape) == 1 {
			m.print(data[*k])
			*k++
		} else {
			m.printNested(shape[1:], data, k)
		}
	}
	_ = m.out.WriteByte(']')
}

// scalar computes a primitive over scalars that the backends spell in
// line (ir.Prim.Go); ok is false for any other.
func scalar(name, pos string, a []Value) (v Value, ok bool) {
	if len(a) == 0 {
		return math.Pi, name == "pi"
	}
	switch x := a[0].(type) {
	case float64:
		if len(a) == 1 {
			f, ok := unaryF[name]
			if !ok {
				return nil, false
			}
			return f(x), true
		}
		if k, isInt := a[1].(int64); isInt {
			switch name {
			case "mul":
				return float64(x * float64(k)), true
			case "pow":
				return ksrt.PowI(x, k), true
			}
			return nil, false
		}
		y := a[1].(float64)
		switch name {
		case "add":
			return x + y, true
		case "sub":
			return x - y, true
		case "mul":
			return float64(x * y), true
		case "div":
			return x / y, true
		case "max":
			return ksrt.Max(x, y), true
		case "gt":
			return x > y, true
		case "lt":
			return x < y, true
		case "gte":
			return x >= y, true
		case "lte":
			return x <= y, true
		}
	case int64:
		if len(a) == 1 {
			switch name {
			case "neg":
				return -x, true
			case "to_float":
				return float64(x), true
			case "$ranhashdoub":
				return ksrt.Ranhashdoub(x), true
			}
			return nil, false
		}
		y := a[1].(int64)
		switch name {
		case "add":
			return x + y, true
		case "sub":
			return x - y, true
		case "mul":
			return x * y, true
		case "div":
			return ksrt.IDiv(pos, x, y), true
		case "gt":
			return x > y, true
		case "lt":
			return x < y, true
		case "gte":
			return x >= y, true
		case "lte":
			return x <= y, true
		}
	case bool:
		switch name {
		case "not":
			return !x, true
		case "bool_to_float":
			return ksrt.BoolToFloat(x), true
		case "and":
			return x && a[1].(bool), true
		case "or":
			return x || a[1].(bool), true
		}
	}
	return nil, false
}

// unaryF are the Float -> Float primitives.
var unaryF = map[string]func(float64) float64{
	"neg": func(x float64) float64 { return -x },
	"exp": ksrt.Exp, "log": ksrt.Log, "sin": ksrt.Sin, "cos": ksrt.Cos,
	"tanh": ksrt.Tanh, "sqrt": math.Sqrt, "erf": ksrt.Erf, "lgamma": ksrt.Lgamma,
	"digamma": ksrt.Digamma, "cosh": ksrt.Cosh, "abs": math.Abs,
}

// shapeOf returns the shape of v, a value of type t (language.md section
// 5): () for a type whose values all look alike, a tensor's sizes (an
// Integer for a vector) where its elements look alike, else the tensor of
// its elements' shapes, and a tuple's parts' shapes.
func shapeOf(v Value, t *types.Type) Value {
	switch {
	case t.IsUniform():
		return Tuple{}
	case t.Kind == types.Tuple:
		out := make(Tuple, len(t.Elems))
		for i, e := range t.Elems {
			out[i] = shapeOf(v.(Tuple)[i], e)
		}
		return out
	}
	x := v.(*Tensor)
	if t.Elem.IsUniform() {
		return index(x.Shape) // its size, as size gives it
	}
	out := &Tensor{Shape: append([]int64(nil), x.Shape...), Data: make([]Value, len(x.Data))}
	for k, e := range x.Data {
		out.Data[k] = shapeOf(e, t.Elem)
	}
	return out
}
