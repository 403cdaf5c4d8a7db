package syntax

import "github.com/ksc-lang/ksc/types"

// A File is the parsed form of one source file.
type File struct {
	Name     string
	Decls    []Decl
	Comments []*Comment
}

// A Decl is a top-level declaration: *Def, *Edef, *Gdef or *Rule.
type Decl interface {
	Node
	declNode()
}

// A Node is any node of the tree.
type Node interface {
	Pos() Pos
}

// A Def is a function definition.
//
//	(def NAME RESULT PARAMS BODY)
type Def struct {
	Lparen, Rparen Pos
	Name           *Name
	Result         *TypeExpr
	Params         []*Param
	OneParam       bool // PARAMS written as (x : T) rather than ((x : T) ...)
	Body           Expr
}

// An Edef declares an external function.
//
//	(edef NAME RESULT ARGTYPE)
type Edef struct {
	Lparen, Rparen Pos
	Name           *Name
	Result         *TypeExpr
	Arg            *TypeExpr
}

// A Gdef asks for a derived function.
//
//	(gdef DERIVATION [NAME ARGTYPE])
type Gdef struct {
	Lparen, Rparen Pos
	DerivPos       Pos
	Deriv          string
	Target         *Name // always has an explicit argument type
	Wrt            []int // as Name.Wrt: (gdef rev [f T] 0 2)
}

// A Rule is a rewrite rule for the optimiser.
//
//	(rule "NAME" PARAMS LHS RHS)
type Rule struct {
	Lparen, Rparen Pos
	Name           string
	Params         []*Param
	OneParam       bool
	Lhs, Rhs       Expr
}

// A Deftype names a type, which may refer to itself (ksc prints the
// records of split reverse mode this way; not part of Knossos' language).
//
//	(deftype NAME TYPE)
type Deftype struct {
	Lparen, Rparen Pos
	NameP          Pos
	Name           string
	Type           *TypeExpr
}

// A Name names a global function: f, [f T], [rev f], [rev [f T]],
// [shape [rev f]], [rev f 0 2].
type Name struct {
	P     Pos
	Deriv string // derivation word ("rev", "fwd", ...) or "" for a base name
	Inner *Name  // Deriv != "": the function derived
	// Wrt, if not nil, lists the positions of the arguments a derivation
	// differentiates with respect to ([rev f 0 2]: f's first and third);
	// the others are constants.
	Wrt  []int
	Base string // Deriv == "": the function's name
	Arg  *TypeExpr
	// Arg is the explicit argument type of [f T]; for derived names it is
	// on the innermost name.
}

// Root returns the innermost (underived) name.
func (n *Name) Root() *Name {
	for n.Deriv != "" {
		n = n.Inner
	}
	return n
}

// Derivs returns the derivation words from the outside in:
// [shape [rev f]] gives ["shape", "rev"].
func (n *Name) Derivs() []string {
	var ds []string
	for ; n.Deriv != ""; n = n.Inner {
		ds = append(ds, n.Deriv)
	}
	return ds
}

// A TypeExpr is a type written in the source.
type TypeExpr struct {
	P Pos
	T *types.Type
}

// A Param is a parameter or lambda variable with its type.
//
//	(x : T)
type Param struct {
	P    Pos // of the name
	Name string
	Type *TypeExpr
}

// An Expr is an expression.
type Expr interface {
	Node
	exprNode()
}

// A LitKind is the kind of a literal.
type LitKind uint8

// The kinds of literal.
const (
	IntLit LitKind = iota
	FloatLit
	StringLit
	BoolLit
)

// A Lit is a literal: 42, 1.5, "text", true.
type Lit struct {
	P     Pos
	Kind  LitKind
	Text  string // the literal as written (for strings, the decoded value)
	Int   int64
	Float float64
	Bool  bool
}

// A Var is a reference to a local variable: x.
type Var struct {
	P    Pos
	Name string
}

// A Call is a function call: (f e1 ... en).
type Call struct {
	Lparen, Rparen Pos
	Fn             *Name
	Args           []Expr
}

// A Tuple builds a tuple: (tuple e1 ... en).
type Tuple struct {
	Lparen, Rparen Pos
	Elems          []Expr
}

// A Let binds variables: (let (x e) body), (let ((a b) e) body) or
// (let ((x e1) ((a b) e2)) body).
type Let struct {
	Lparen, Rparen Pos
	Binds          []*Binding
	Grouped        bool // written with a list of bindings
	Body           Expr
}

// A Binding is one (x e) or ((a b ...) e) of a let.
type Binding struct {
	P       Pos
	Vars    []*Ident
	Pattern bool // a tuple pattern (a b ...), even of one variable
	Rhs     Expr
}

// An Ident is a binding occurrence of a variable name.
type Ident struct {
	P    Pos
	Name string
}

// An If is a conditional: (if c t e).
type If struct {
	Lparen, Rparen   Pos
	Cond, Then, Else Expr
}

// An Assert checks a condition at run time: (assert c body).
type Assert struct {
	Lparen, Rparen Pos
	Cond, Body     Expr
}

// A Lam is a lambda: (lam (x : T) body).
type Lam struct {
	Lparen, Rparen Pos
	Param          *Param
	Body           Expr
}

// A Dummy is a value with no meaningful content: ($dummy T).
type Dummy struct {
	Lparen, Rparen Pos
	Type           *TypeExpr
}

func (d *Def) Pos() Pos     { return d.Lparen }
func (d *Edef) Pos() Pos    { return d.Lparen }
func (d *Gdef) Pos() Pos    { return d.Lparen }
func (d *Rule) Pos() Pos    { return d.Lparen }
func (d *Deftype) Pos() Pos { return d.Lparen }
func (n *Name) Pos() Pos    { return n.P }
func (e *Lit) Pos() Pos     { return e.P }
func (e *Var) Pos() Pos     { return e.P }
func (e *Call) Pos() Pos    { return e.Lparen }
func (e *Tuple) Pos() Pos   { return e.Lparen }
func (e *Let) Pos() Pos     { return e.Lparen }
func (e *If) Pos() Pos      { return e.Lparen }
func (e *Assert) Pos() Pos  { return e.Lparen }
func (e *Lam) Pos() Pos     { return e.Lparen }
func (e *Dummy) Pos() Pos   { return e.Lparen }

func (*Def) declNode()     {}
func (*Edef) declNode()    {}
func (*Gdef) declNode()    {}
func (*Rule) declNode()    {}
func (*Deftype) declNode() {}

func (*Lit) exprNode()    {}
func (*Var) exprNode()    {}
func (*Call) exprNode()   {}
func (*Tuple) exprNode()  {}
func (*Let) exprNode()    {}
func (*If) exprNode()     {}
func (*Assert) exprNode() {}
func (*Lam) exprNode()    {}
func (*Dummy) exprNode()  {}

// Derivations lists the derivation words usable in derived names and gdefs
// (language.md section 5), with whether gdef may name them.
var Derivations = map[string]bool{
	"D":          false,
	"fwd":        true,
	"rev":        true,
	"suffwdpass": true,
	"sufrevpass": true,
	"sufrev":     true,
	"vrev":       true, // reverse mode returning the value too
	"CL":         true,
	"shape":      true,
	"jac":        true,  // the dense Jacobian
	"sparsejac":  true,  // the Jacobian in CSR form
	"revacc":     false, // internal: reverse mode into an accumulator
	"revfull":    false, // internal: reverse mode returning the value too
	"fwdfull":    false, // internal: forward mode returning the value too
	"bogrev":     false, // internal: the reverse pass into an accumulator
	"suffwdloop": false, // internal: a tail recursion's forward pass, as a loop (bog.LoopTail)
	"bogup":      false, // internal: a tail recursion's reverse pass, as a loop (bog.LoopTail)
	"pattern":    false, // internal: forward mode over sets, for sparsejac
	"hpattern":   false, // internal: the same over sets of pairs, for sparsejac of [rev f]
}

// reserved are the words that are never identifiers (language.md section 1).
var reserved = map[string]bool{
	"def": true, "edef": true, "rule": true, "let": true, "if": true,
	"assert": true, "tuple": true, ":": true, "$dummy": true,
	"Integer": true, "Float": true, "Vec": true, "Lam": true,
	"String": true, "true": true, "false": true,
}

// IsReserved reports whether s is a reserved word.
func IsReserved(s string) bool { return reserved[s] }
