// Package ir defines the typed intermediate representation that every
// stage after type checking reads and transforms: expressions whose nodes
// each carry a type and a source position, global functions identified by
// (derivation, name, argument type), and the one table of primitives
// (prim.go) that gives every built-in its typing rule and its spelling in
// each backend.
//
// The IR is the ks language after name resolution: calls point at the
// function or primitive they call, multi-binding lets are nested, and
// get$i$n is a node of its own. Print turns IR back into ks source.
package ir

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Pos is a source position.
type Pos = syntax.Pos

// An Expr is a typed expression.
type Expr interface {
	Pos() Pos
	Type() *types.Type
	exprNode()
}

// A Const is a literal: an int64, float64, bool or string.
type Const struct {
	P   Pos
	T   *types.Type
	Val any
}

// A Var is a reference to a local variable (a parameter, a let-bound
// variable or a lambda's parameter).
type Var struct {
	P    Pos
	T    *types.Type
	Name string
}

// A Call calls a global function or a primitive: (f e1 ... en). The
// argument is Args[0] if there is exactly one, otherwise the tuple of Args.
type Call struct {
	P    Pos
	T    *types.Type
	Fn   *Func // the function called, or nil for a primitive
	Prim *Prim // the primitive called, or nil
	Args []Expr
}

// Site describes a call of a ks function in the chain of calls that a
// runtime error's message lists (every backend and the evaluator):
// "f, called from FILE:LINE:COL".
func (e *Call) Site() string {
	return e.Fn.Name.String() + ", called from " + e.P.String()
}

// A Tuple builds a tuple: (tuple e1 ... en).
type Tuple struct {
	P     Pos
	T     *types.Type
	Elems []Expr
}

// A Get selects field I (1-based) of an N-tuple: (get$I$N e).
type Get struct {
	P    Pos
	T    *types.Type
	I, N int
	X    Expr
}

// A Let binds one variable, or the fields of a tuple, then evaluates Body:
// (let (x e) body) or (let ((a b) e) body).
type Let struct {
	P       Pos
	Vars    []*Var
	Pattern bool // Vars is a tuple pattern (even of one variable)
	Rhs     Expr
	Body    Expr
	// Of is set on the lets of linear-map variables that differentiation
	// makes: the primal variable whose tangent map Vars[0] is. Its value
	// shapes the variable's cotangent in reverse mode.
	Of *Var
}

// An If is a conditional: (if c t e).
type If struct {
	P                Pos
	T                *types.Type
	Cond, Then, Else Expr
}

// An Assert checks Cond at run time, then is Body: (assert c body).
type Assert struct {
	P          Pos
	Cond, Body Expr
	// Msg is the runtime error when Cond is false; "" means "assertion
	// failed". Prelude definitions set it (see Prim.Fail).
	Msg string
}

// Message returns the runtime error message of a failed assert.
func (e *Assert) Message() string {
	if e.Msg == "" {
		return "assertion failed"
	}
	return e.Msg
}

// A Lam is a lambda, found only as an argument of a primitive that takes a
// function: (lam (x : T) body).
type Lam struct {
	P     Pos
	Param *Var
	Body  Expr
}

// A Dummy is a value of type T with no meaningful content: ($dummy T).
type Dummy struct {
	P Pos
	T *types.Type
}

func (e *Const) Pos() Pos  { return e.P }
func (e *Var) Pos() Pos    { return e.P }
func (e *Call) Pos() Pos   { return e.P }
func (e *Tuple) Pos() Pos  { return e.P }
func (e *Get) Pos() Pos    { return e.P }
func (e *Let) Pos() Pos    { return e.P }
func (e *If) Pos() Pos     { return e.P }
func (e *Assert) Pos() Pos { return e.P }
func (e *Lam) Pos() Pos    { return e.P }
func (e *Dummy) Pos() Pos  { return e.P }

func (e *Const) Type() *types.Type  { return e.T }
func (e *Var) Type() *types.Type    { return e.T }
func (e *Call) Type() *types.Type   { return e.T }
func (e *Tuple) Type() *types.Type  { return e.T }
func (e *Get) Type() *types.Type    { return e.T }
func (e *Let) Type() *types.Type    { return e.Body.Type() }
func (e *If) Type() *types.Type     { return e.T }
func (e *Assert) Type() *types.Type { return e.Body.Type() }
func (e *Lam) Type() *types.Type    { return types.LamOf(e.Param.T, e.Body.Type()) }
func (e *Dummy) Type() *types.Type  { return e.T }

func (*Const) exprNode()  {}
func (*Var) exprNode()    {}
func (*Call) exprNode()   {}
func (*Tuple) exprNode()  {}
func (*Get) exprNode()    {}
func (*Let) exprNode()    {}
func (*If) exprNode()     {}
func (*Assert) exprNode() {}
func (*Lam) exprNode()    {}
func (*Dummy) exprNode()  {}

// ArgType returns the type of the argument passed by a call with args:
// the argument's own type for one, the tuple of their types otherwise.
func ArgType(args []Expr) *types.Type {
	if len(args) == 1 {
		return args[0].Type()
	}
	ts := make([]*types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return types.TupleOf(ts...)
}

// A FuncKind says where a function's body comes from.
type FuncKind uint8

// The kinds of function.
const (
	DefFunc     FuncKind = iota // (def ...): Body is the user's
	EdefFunc                    // (edef ...): no body; implemented outside ks
	DerivedFunc                 // generated from its base function by a derivation
)

// A Name identifies a global function apart from its argument type: a base
// name and the derivations applied to it, outermost first. [shape [rev f]]
// is Name{Derivs: ["shape", "rev"], Base: "f"}.
type Name struct {
	Derivs []string
	Base   string
	// Wrt, if not nil, lists the positions of the arguments the outermost
	// derivation differentiates with respect to, ascending ([rev f 0 2]);
	// the others are constants, with no gradient.
	Wrt []int
}

// Equal reports whether n and m name the same derivation of the same
// function (the argument type aside): Lookup compares names this way rather
// than through FuncKey, which would build a string per function looked at.
func (n Name) Equal(m Name) bool {
	return n.Base == m.Base && slices.Equal(n.Derivs, m.Derivs) && slices.Equal(n.Wrt, m.Wrt)
}

// String returns the ks spelling of the name without argument type.
func (n Name) String() string { return n.spell(n.Base) }

// spell returns the name with base as the underived function's spelling.
func (n Name) spell(base string) string {
	s := base
	for i := len(n.Derivs) - 1; i >= 0; i-- {
		w := ""
		if i == 0 {
			w = n.WrtString()
		}
		s = "[" + n.Derivs[i] + " " + s + w + "]"
	}
	return s
}

// Words returns the words of the name for a generated identifier: the
// derivations, the base, and "wrt" and the positions of Wrt if any
// ([rev f 0 2] gives rev f wrt 0 2).
func (n Name) Words() []string {
	w := append(append([]string{}, n.Derivs...), n.Base)
	if n.Wrt != nil {
		w = append(w, "wrt")
		for _, i := range n.Wrt {
			w = append(w, strconv.Itoa(i))
		}
	}
	return w
}

// PrimDefName is the name of the def standing for the primitive prim in
// its derived functions ([rev exp] derives from the def exp$prim calling
// exp): a name of its own, since a def named exp would call itself once
// printed and read back.
func PrimDefName(prim string) string { return prim + "$prim" }

// Ident returns the name as a C or Go identifier, the one spelling every
// backend and library entry uses: its words joined by "_", any other
// character replaced by "_" ([rev f 0 2] gives rev_f_wrt_0_2).
func (n Name) Ident() string { return Identifier(strings.Join(n.Words(), "_")) }

// Identifier returns s with every character that may not appear in a C
// or Go identifier replaced by "_".
func Identifier(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// WrtString returns the positions of Wrt, each after a space: " 0 2".
func (n Name) WrtString() string {
	var b strings.Builder
	for _, i := range n.Wrt {
		b.WriteString(" " + strconv.Itoa(i))
	}
	return b.String()
}

// Internal reports whether the name has a derivation no gdef can name,
// such as [revfull f] or [D f]: ksc makes such a function only for other
// functions to call, and a library does not export it.
func (n Name) Internal() bool {
	for _, d := range n.Derivs {
		if !syntax.Derivations[d] {
			return true
		}
	}
	return false
}

// Outer returns the outermost derivation word ("rev" of [rev [CL f]]), or
// "" for an underived function.
func (n Name) Outer() string {
	if len(n.Derivs) == 0 {
		return ""
	}
	return n.Derivs[0]
}

// IsCL reports whether n is [CL g] of an underived g (see ir.IsCL).
func (n Name) IsCL() bool { return len(n.Derivs) == 1 && n.Derivs[0] == "CL" && n.Wrt == nil }

// Inner returns the name with its outermost derivation removed.
func (n Name) Inner() Name { return Name{Derivs: n.Derivs[1:], Base: n.Base} } // without Wrt

// Derive returns [d n].
func (n Name) Derive(d string) Name {
	return Name{Derivs: append([]string{d}, n.Derivs...), Base: n.Base}
}

// A Func is a global function: a def, an edef or a derived function.
type Func struct {
	P       Pos
	Name    Name
	BaseArg *types.Type // the argument type of the underived function Name.Base
	Arg     *types.Type
	Result  *types.Type
	Kind    FuncKind
	// Params are the parameters of a def: one parameter of type Arg, or
	// the fields of the tuple Arg (none for the unit tuple).
	Params []*Var
	// OneParam says Params is a single parameter, even of tuple type.
	OneParam bool
	Body     Expr
	// Prim is set for an edef that restates a prelude function: calls go
	// to the primitive.
	Prim *Prim
	// Base is the function this one derives from (DerivedFunc, and
	// hand-written derived defs), or nil.
	Base *Func
	// Uses are positions where the function is called or requested (by a
	// gdef); used to report why a derivation was needed.
	Uses []Pos
	// Implied says derive made the function for another derivation (the
	// [fwd g] of a callee g, say): the program neither requests nor calls
	// it, so a library does not export it and the optimiser drops it once
	// nothing calls it.
	Implied bool
}

// FullName returns the function's name with its argument type, as written
// in ks to name exactly this overload: [rev [f (Vec Float)]].
func (f *Func) FullName() string {
	return f.Name.spell("[" + f.Name.Base + " " + f.BaseArg.String() + "]")
}

// Key returns a string identifying the function's overload: its
// derivations, name and the argument type of its base function.
func (f *Func) Key() string { return FuncKey(f.Name, f.BaseArg) }

// FuncKey is the key of the overload of name whose base function takes baseArg.
func FuncKey(name Name, baseArg *types.Type) string {
	return strings.Join(name.Derivs, " ") + name.WrtString() + "|" + name.Base + "|" + baseArg.String()
}

// A Program is a typed program: its functions in declaration order (a
// function is declared before its uses, apart from self-recursion) and
// its rules.
type Program struct {
	Funcs []*Func
	Rules []*Rule
	Gdefs []*Gdef
	// Types are the named types (the records of split reverse mode).
	Types []*types.Type
	// NoShadow says that no binder rebinds a name in scope (RenameApart
	// established it): every pass must keep it, and Check enforces it.
	NoShadow bool
	// NoReverse holds the loops whose reverse pass ksc must not make, by
	// position, with the reason: a ccl whose steps ksc cannot show to
	// commute (typecheck/loops.go). Their forward mode is made.
	NoReverse map[Pos]string
	bogs      map[string]*types.Type

	names *Names
}

// BogType returns the type of the records (BOGs) of f's split reverse
// mode: a named type bog$NAME, declared in p.Types, whose definition the
// pass that splits f fills in.
func (p *Program) BogType(f *Func) *types.Type {
	if p.bogs == nil {
		p.bogs = map[string]*types.Type{}
	}
	key := f.Key()
	if t, ok := p.bogs[key]; ok {
		return t
	}
	// The name's words, not its spelling: [CL f]'s record is bog$CL$f$...,
	// an identifier the printed program parses back.
	name := "bog$" + strings.Join(f.Name.Words(), "$") + "$" + types.Mangle(f.BaseArg)
	for _, t := range p.Types {
		if t.Name == name {
			p.bogs[key] = t
			return t
		}
	}
	t := types.NamedType(name)
	p.bogs[key] = t
	p.Types = append(p.Types, t)
	return t
}

// SetBogType makes t the type of f's BOGs, as a hand-written split pass
// of f declares it (Knossos lets a program choose the record), and reports
// whether it could: not if f's BOG type is another type already.
func (p *Program) SetBogType(f *Func, t *types.Type) bool {
	if p.bogs == nil {
		p.bogs = map[string]*types.Type{}
	}
	key := f.Key()
	if old, ok := p.bogs[key]; ok && !old.Equal(t) {
		if old.Kind != types.Named || old.Def != nil {
			return false // defined by a pass already
		}
		// The named type BogType made, looked up before the pass that
		// names another was checked, and not defined: dropped.
		for i, d := range p.Types {
			if d == old {
				p.Types = append(p.Types[:i:i], p.Types[i+1:]...)
				break
			}
		}
	}
	p.bogs[key] = t
	return true
}

// Names returns the program's supply of fresh variable names, which
// avoids every variable name of the program as it was when first called.
func (p *Program) Names() *Names {
	if p.names == nil {
		p.names = &Names{}
		for _, f := range p.Funcs {
			for _, v := range f.Params {
				p.names.Take(v.Name)
			}
			if f.Body != nil {
				Inspect(f.Body, func(e Expr) bool {
					switch e := e.(type) {
					case *Var:
						p.names.Take(e.Name)
					case *Let:
						for _, v := range e.Vars {
							p.names.Take(v.Name)
						}
					case *Lam:
						p.names.Take(e.Param.Name)
					}
					return true
				})
			}
		}
	}
	return p.names
}

// A Gdef records a request for a derived function.
type Gdef struct {
	P    Pos
	Func *Func // the derived function requested
}

// A Rule is a rewrite rule: (rule "name" params lhs rhs).
type Rule struct {
	P      Pos
	Name   string
	Params []*Var
	Lhs    Expr
	Rhs    Expr
}

// Lookup returns the function with the given name and base argument type,
// or nil.
func (p *Program) Lookup(name Name, baseArg *types.Type) *Func {
	for _, f := range p.Funcs {
		if f.Name.Equal(name) && f.BaseArg.Equal(baseArg) {
			return f
		}
	}
	return nil
}
