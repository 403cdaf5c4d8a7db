package cl

import (
	"errors"
	"fmt"
	"io"

	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// A Machine evaluates CL terms on Values, running t ◇ c of Figure 10
// directly rather than through the IR. A term is first compiled to a Go
// closure, then run. The functions a term calls run by evaluating their
// own CL, converted and compiled when first called; so do the prelude
// functions that are defined in ks (max of a vector, dot, ...).
//
// What print and $trace print goes to the Machine's writer.
type Machine struct {
	out     io.Writer
	funcs   map[*ir.Func]*compiled
	prelude map[*ir.Prim]*compiled
	depth   int // calls of user functions under way
}

// MaxDepth is how deeply calls of user functions may nest before the
// evaluation stops with a runtime error.
const MaxDepth = 100000

// NewMachine returns a Machine that prints to out (nil: nowhere).
func NewMachine(out io.Writer) *Machine {
	if out == nil {
		out = io.Discard
	}
	return &Machine{out: out, funcs: map[*ir.Func]*compiled{}, prelude: map[*ir.Prim]*compiled{}}
}

// code is a compiled term: it maps the term's input to its output.
type code func(in Value) (Value, error)

// compiled is a compiled definition.
type compiled struct {
	def  *Def
	body code
}

// run calls the definition with its argument: the context of its
// parameters is the argument itself, or the 1-tuple of it for a function
// of one parameter.
func (c *compiled) run(arg Value) (Value, error) {
	switch len(c.def.Params) {
	case 0:
		return c.body(TupleValue{})
	case 1:
		return c.body(TupleValue{arg})
	}
	return c.body(arg)
}

// Eval type-checks c and returns in ◇ c. The value in must have the input
// type of c.
func (m *Machine) Eval(c Term, in Value) (Value, error) {
	s, _, err := Check(c)
	if err != nil {
		return nil, err
	}
	if err := checkValue(in, s); err != nil {
		return nil, fmt.Errorf("CL: evaluating a term on %s: %v", s, err)
	}
	run, err := m.compile(c)
	if err != nil {
		return nil, err
	}
	return run(in)
}

// Call returns f(arg), evaluating the CL of f. The value arg must have
// f's argument type.
func (m *Machine) Call(f *ir.Func, arg Value) (Value, error) {
	if err := checkValue(arg, f.Arg); err != nil {
		return nil, fmt.Errorf("CL: calling %s: %v", f.FullName(), err)
	}
	c, err := m.function(f, f.P)
	if err != nil {
		return nil, err
	}
	return c.run(arg)
}

// function returns the compiled CL of f.
func (m *Machine) function(f *ir.Func, pos Pos) (*compiled, error) {
	if c, ok := m.funcs[f]; ok {
		return c, nil
	}
	if f.Body == nil && len(f.Name.Derivs) == 1 && f.Name.Derivs[0] == "shape" && f.Base != nil && f.Base.Body != nil {
		// [shape g] of a typed program (before derive): the shape of g's
		// value, as the reference evaluator runs it.
		g, err := m.function(f.Base, pos)
		if err != nil {
			return nil, err
		}
		t := f.Base.Result
		c := &compiled{def: g.def, body: func(in Value) (Value, error) {
			v, err := g.body(in)
			if err != nil {
				return nil, err
			}
			return shapeOf(t, v), nil
		}}
		m.funcs[f] = c
		return c, nil
	}
	if f.Body == nil {
		return nil, &syntax.Error{Pos: pos, Msg: fmt.Sprintf("CL: cannot evaluate %s: it has no definition", f.FullName())}
	}
	c, err := m.define(f)
	if err != nil {
		return nil, err
	}
	m.funcs[f] = c
	return c, nil
}

// define converts f to CL, checks and compiles it.
func (m *Machine) define(f *ir.Func) (*compiled, error) {
	d, err := Convert(f)
	if err != nil {
		return nil, err
	}
	if err := CheckDef(d); err != nil {
		return nil, err
	}
	body, err := m.compile(d.Body)
	if err != nil {
		return nil, err
	}
	return &compiled{def: d, body: body}, nil
}

// compile compiles a well-typed term.
func (m *Machine) compile(c Term) (code, error) {
	switch c := c.(type) {
	case *Id:
		return func(v Value) (Value, error) { return v, nil }, nil
	case *Const:
		k := Value(c.Val)
		if c.Val == nil {
			k = zeroValue(c.T)
		}
		return func(Value) (Value, error) { return k, nil }, nil
	case *Prune:
		idx := c.Idx
		return func(v Value) (Value, error) {
			t := v.(TupleValue)
			out := make(TupleValue, len(idx))
			for k, i := range idx {
				out[k] = t[i-1]
			}
			return out, nil
		}, nil
	case *Proj:
		i := c.I - 1
		return func(v Value) (Value, error) { return v.(TupleValue)[i], nil }, nil
	case *Func:
		if c.Fn != nil {
			return m.callFunc(c), nil
		}
		return m.prim(c)
	case *Comp:
		return m.comp(c)
	case *Tuple:
		elems, err := m.compileAll(c.Elems)
		if err != nil {
			return nil, err
		}
		return func(v Value) (Value, error) {
			out := make(TupleValue, len(elems))
			for k, e := range elems {
				x, err := e(v)
				if err != nil {
					return nil, err
				}
				out[k] = x
			}
			return out, nil
		}, nil
	case *If:
		return m.cond(c)
	case *Let:
		return m.let(c)
	case *Assert:
		return m.assert(c)
	case *Comb:
		return m.comb(c)
	}
	return nil, errorf(c, "cannot evaluate %s here", head(c))
}

func (m *Machine) compileAll(cs []Term) ([]code, error) {
	out := make([]code, len(cs))
	for k, c := range cs {
		x, err := m.compile(c)
		if err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}

// callFunc compiles F(f) for a user function, which is compiled when first
// called (so that it may be recursive).
func (m *Machine) callFunc(c *Func) code {
	var f *compiled
	return func(v Value) (Value, error) {
		if f == nil {
			var err error
			if f, err = m.function(c.Fn, c.P); err != nil {
				return nil, err
			}
		}
		if m.depth >= MaxDepth {
			// As the compiled programs fail (ksrt.Ctx.Enter), at the definition.
			return nil, fail(c.Fn.P, "%s", ksrt.TooDeep(c.Fn.Name.String(), MaxDepth))
		}
		m.depth++
		defer func() { m.depth-- }()
		return f.run(v)
	}
}

func (m *Machine) comp(c *Comp) (code, error) {
	a, err := m.compile(c.A)
	if err != nil {
		return nil, err
	}
	b, err := m.compile(c.B)
	if err != nil {
		return nil, err
	}
	return func(v Value) (Value, error) {
		x, err := a(v)
		if err != nil {
			return nil, err
		}
		return b(x)
	}, nil
}

func (m *Machine) cond(c *If) (code, error) {
	parts, err := m.compileAll([]Term{c.Cond, c.Then, c.Else})
	if err != nil {
		return nil, err
	}
	return func(v Value) (Value, error) {
		b, err := parts[0](v)
		if err != nil {
			return nil, err
		}
		if b.(bool) {
			return parts[1](v)
		}
		return parts[2](v)
	}, nil
}

func (m *Machine) let(c *Let) (code, error) {
	rhs, err := m.compile(c.Rhs)
	if err != nil {
		return nil, err
	}
	body, err := m.compile(c.Body)
	if err != nil {
		return nil, err
	}
	pattern := c.Pattern
	return func(v Value) (Value, error) {
		t := v.(TupleValue)
		r, err := rhs(v)
		if err != nil {
			return nil, err
		}
		ctx := make(TupleValue, len(t), len(t)+len(c.Vars))
		copy(ctx, t)
		if pattern {
			ctx = append(ctx, r.(TupleValue)...)
		} else {
			ctx = append(ctx, r)
		}
		return body(ctx)
	}, nil
}

func (m *Machine) assert(c *Assert) (code, error) {
	cond, err := m.compile(c.Cond)
	if err != nil {
		return nil, err
	}
	body, err := m.compile(c.Body)
	if err != nil {
		return nil, err
	}
	return func(v Value) (Value, error) {
		b, err := cond(v)
		if err != nil {
			return nil, err
		}
		if !b.(bool) {
			return nil, &RuntimeError{Pos: c.P, Msg: c.Message(), assert: true}
		}
		return body(v)
	}, nil
}

// prelude compiles F(p) for a prelude function defined in ks: its
// definition in CL. Runtime errors inside it are reported at the call,
// failed asserts with the primitive's message, as when it is inlined.
func (m *Machine) preludeFunc(c *Func) (code, error) {
	p := c.Prim
	f, ok := m.prelude[p]
	if !ok {
		def, err := typecheck.PreludeDef(p)
		if err != nil {
			return nil, err
		}
		if f, err = m.define(def); err != nil {
			return nil, err
		}
		m.prelude[p] = f
	}
	return func(v Value) (Value, error) {
		r, err := f.run(v)
		var re *RuntimeError
		if errors.As(err, &re) {
			msg := re.Msg
			if re.assert && p.Fail != "" {
				msg = p.Fail
			}
			return nil, &RuntimeError{Pos: c.P, Msg: msg, assert: re.assert}
		}
		return r, err
	}, nil
}
