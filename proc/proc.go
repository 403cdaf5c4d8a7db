// Package proc is the procedure language of seed 002 (Figures 20-22): a
// function body as a block of statements in which every variable is
// consumed exactly once (the single-use form), and reverse mode on it by
// the translation rules of Figure 23 (reverse.go), which gives split
// reverse mode's passes: a forward pass returning the value and a record
// of what the reverse pass needs (a BOG), and a reverse pass consuming it.
//
// A statement consumes the variables it reads and produces the variables
// it binds. Sharing is explicit: a variable read twice is first
// duplicated (Dup), and a variable nothing reads is eliminated (Elim).
// Check is the type system of Figure 21: a block, given its inputs,
// consumes each exactly once and produces its result.
//
// An if is a Case on a Bool whose two branches are blocks consuming the
// same variables. The procedure language of the seed has no loops; a
// build or sumbuild over an Integer count or a tuple of them is a Loop
// here and a fold a
// Fold (seed 003), and FromExpr reports other lambdas as not in the
// language.
package proc

import (
	"fmt"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// A Block is a sequence of statements ending in a result: the variable
// holding the block's value.
type Block struct {
	Stmts  []Stmt
	Result *ir.Var
}

// A Stmt is a statement of the procedure language.
type Stmt interface {
	Pos() ir.Pos
	// Ins are the variables the statement consumes, Outs those it binds.
	Ins() []*ir.Var
	Outs() []*ir.Var
}

// A Call is b = Call f a: a call of a ks function (Fn) or a primitive
// (Prim) on the argument parts Args.
type Call struct {
	P    ir.Pos
	Out  *ir.Var
	Fn   *ir.Func
	Prim *ir.Prim
	Args []*ir.Var
}

// A Const is a = Const k: a literal (an *ir.Const) or a value of a type
// only ($dummy T, an *ir.Dummy).
type Const struct {
	P   ir.Pos
	Out *ir.Var
	Val ir.Expr
}

// A Dup is (t1, t2) = Dup s: two uses of one value.
type Dup struct {
	P          ir.Pos
	In         *ir.Var
	Out1, Out2 *ir.Var
}

// An Elim is Elim a: a value nothing reads.
type Elim struct {
	P  ir.Pos
	In *ir.Var
}

// A Tuple is b = (a1, ..., an).
type Tuple struct {
	P     ir.Pos
	Out   *ir.Var
	Elems []*ir.Var
}

// An Untuple is (a1, ..., an) = b.
type Untuple struct {
	P     ir.Pos
	Elems []*ir.Var
	In    *ir.Var
}

// A Case is r = Case c (Then | Else): the if of ks. Both branches consume
// exactly the variables Free (bound before the case), and r is the result
// of the branch that runs.
type Case struct {
	P          ir.Pos
	Out        *ir.Var
	Cond       *ir.Var
	Free       []*ir.Var
	Then, Else *Block
}

// A Loop is r = build n (λi. Body) or r = sumbuild n (λi. Body) (seed
// 003's loops): Body runs for i = 0 .. n-1 (each index of a tuple of
// sizes n, i then a tuple of Integers) with the variables Free,
// bound before the loop, which the loop consumes once and Body reads in
// every iteration (a Body is single-use in each), and i.
type Loop struct {
	P     ir.Pos
	Kind  string // "build", "sumbuild" or "buildFromSparse"
	Out   *ir.Var
	N     *ir.Var
	Shape *ir.Var // buildFromSparse's shape, nil for the others
	Index *ir.Var
	Free  []*ir.Var
	Body  *Block
}

// A Fold is r = fold (λp. Body) init v: Body runs for each element of
// v in order, p the pair of the accumulator and the element, with the
// variables Free bound before the fold (consumed once by the fold, read
// in every step).
type Fold struct {
	P     ir.Pos
	Out   *ir.Var
	Init  *ir.Var
	Vec   *ir.Var
	Param *ir.Var
	Free  []*ir.Var
	Body  *Block
}

// An Assert checks a Bool at run time and consumes it.
type Assert struct {
	P    ir.Pos
	Cond *ir.Var
	Msg  string
}

func (s *Call) Pos() ir.Pos    { return s.P }
func (s *Const) Pos() ir.Pos   { return s.P }
func (s *Dup) Pos() ir.Pos     { return s.P }
func (s *Elim) Pos() ir.Pos    { return s.P }
func (s *Tuple) Pos() ir.Pos   { return s.P }
func (s *Untuple) Pos() ir.Pos { return s.P }
func (s *Case) Pos() ir.Pos    { return s.P }
func (s *Assert) Pos() ir.Pos  { return s.P }
func (s *Loop) Pos() ir.Pos    { return s.P }
func (s *Fold) Pos() ir.Pos    { return s.P }

func (s *Call) Ins() []*ir.Var    { return s.Args }
func (s *Const) Ins() []*ir.Var   { return nil }
func (s *Dup) Ins() []*ir.Var     { return []*ir.Var{s.In} }
func (s *Elim) Ins() []*ir.Var    { return []*ir.Var{s.In} }
func (s *Tuple) Ins() []*ir.Var   { return s.Elems }
func (s *Untuple) Ins() []*ir.Var { return []*ir.Var{s.In} }
func (s *Case) Ins() []*ir.Var    { return append([]*ir.Var{s.Cond}, s.Free...) }
func (s *Assert) Ins() []*ir.Var  { return []*ir.Var{s.Cond} }
func (s *Loop) Ins() []*ir.Var {
	if s.Shape != nil {
		return append([]*ir.Var{s.N, s.Shape}, s.Free...)
	}
	return append([]*ir.Var{s.N}, s.Free...)
}

func (s *Fold) Ins() []*ir.Var { return append([]*ir.Var{s.Init, s.Vec}, s.Free...) }

func (s *Call) Outs() []*ir.Var    { return []*ir.Var{s.Out} }
func (s *Const) Outs() []*ir.Var   { return []*ir.Var{s.Out} }
func (s *Dup) Outs() []*ir.Var     { return []*ir.Var{s.Out1, s.Out2} }
func (s *Elim) Outs() []*ir.Var    { return nil }
func (s *Tuple) Outs() []*ir.Var   { return []*ir.Var{s.Out} }
func (s *Untuple) Outs() []*ir.Var { return s.Elems }
func (s *Case) Outs() []*ir.Var    { return []*ir.Var{s.Out} }
func (s *Assert) Outs() []*ir.Var  { return nil }
func (s *Loop) Outs() []*ir.Var    { return []*ir.Var{s.Out} }
func (s *Fold) Outs() []*ir.Var    { return []*ir.Var{s.Out} }

// Check is the type system of Figure 21: given the variables ins, the
// block consumes each variable, inputs and its own, exactly once, reads
// only variables it has, and produces its result; each use has the type
// of the variable. It returns the first violation, at its position.
func Check(b *Block, ins []*ir.Var) error {
	have := map[string]*ir.Var{}
	for _, v := range ins {
		if have[v.Name] != nil {
			return fmt.Errorf("%s: %s is an input twice", v.P, v.Name)
		}
		have[v.Name] = v
	}
	return check(b, have)
}

func check(b *Block, have map[string]*ir.Var) error {
	consume := func(p ir.Pos, v *ir.Var) error {
		w := have[v.Name]
		if w == nil {
			return fmt.Errorf("%s: %s is used but not available (used twice, or never bound)", p, v.Name)
		}
		if !w.T.Equal(v.T) {
			return fmt.Errorf("%s: %s has type %s, used as %s", p, v.Name, w.T, v.T)
		}
		delete(have, v.Name)
		return nil
	}
	for _, s := range b.Stmts {
		if c, ok := s.(*Case); ok {
			for _, br := range []*Block{c.Then, c.Else} {
				inner := map[string]*ir.Var{}
				for _, v := range c.Free {
					inner[v.Name] = v
				}
				if err := check(br, inner); err != nil {
					return err
				}
				if !br.Result.T.Equal(c.Out.T) {
					return fmt.Errorf("%s: a branch's result has type %s, the case's %s", c.P, br.Result.T, c.Out.T)
				}
			}
		}
		if l, ok := s.(*Loop); ok {
			inner := map[string]*ir.Var{l.Index.Name: l.Index}
			for _, v := range l.Free {
				inner[v.Name] = v
			}
			if err := check(l.Body, inner); err != nil {
				return err
			}
			want := l.Out.T
			switch l.Kind {
			case "build":
				want = l.Out.T.Elem
			case "buildFromSparse":
				if rt := l.Body.Result.T; rt.Kind == types.Tuple && len(rt.Elems) == 2 {
					want = types.TupleOf(rt.Elems[0], l.Out.T.Elem)
				}
			}
			if !l.Body.Result.T.Equal(want) {
				return fmt.Errorf("%s: the body's result has type %s, the %s's element %s", l.P, l.Body.Result.T, l.Kind, want)
			}
		}
		if f, ok := s.(*Fold); ok {
			inner := map[string]*ir.Var{f.Param.Name: f.Param}
			for _, v := range f.Free {
				inner[v.Name] = v
			}
			if err := check(f.Body, inner); err != nil {
				return err
			}
			if !f.Body.Result.T.Equal(f.Out.T) {
				return fmt.Errorf("%s: the step's result has type %s, the fold's %s", f.P, f.Body.Result.T, f.Out.T)
			}
		}
		for _, v := range s.Ins() {
			if err := consume(s.Pos(), v); err != nil {
				return err
			}
		}
		for _, v := range s.Outs() {
			if have[v.Name] != nil {
				return fmt.Errorf("%s: %s is bound again", s.Pos(), v.Name)
			}
			have[v.Name] = v
		}
	}
	if err := consume(b.Result.P, b.Result); err != nil {
		return err
	}
	for _, v := range have {
		return fmt.Errorf("%s: %s is never used (it needs an Elim)", v.P, v.Name)
	}
	return nil
}

// Format prints a block as statements, one a line, indented by indent.
func Format(b *Block, indent string) string {
	var w strings.Builder
	format(&w, b, indent)
	return w.String()
}

func format(w *strings.Builder, b *Block, in string) {
	names := func(vs []*ir.Var) string {
		s := make([]string, len(vs))
		for i, v := range vs {
			s[i] = v.Name
		}
		return strings.Join(s, ", ")
	}
	for _, s := range b.Stmts {
		w.WriteString(in)
		switch s := s.(type) {
		case *Call:
			f := ""
			if s.Fn != nil {
				f = s.Fn.Name.String()
			} else {
				f = s.Prim.Name
			}
			fmt.Fprintf(w, "%s = Call %s (%s)", s.Out.Name, f, names(s.Args))
		case *Const:
			fmt.Fprintf(w, "%s = Const %s", s.Out.Name, ir.FormatExpr(s.Val))
		case *Dup:
			fmt.Fprintf(w, "(%s, %s) = Dup %s", s.Out1.Name, s.Out2.Name, s.In.Name)
		case *Elim:
			fmt.Fprintf(w, "Elim %s", s.In.Name)
		case *Tuple:
			fmt.Fprintf(w, "%s = (%s)", s.Out.Name, names(s.Elems))
		case *Untuple:
			fmt.Fprintf(w, "(%s) = %s", names(s.Elems), s.In.Name)
		case *Assert:
			fmt.Fprintf(w, "Assert %s", s.Cond.Name)
		case *Fold:
			fmt.Fprintf(w, "%s = fold (λ%s consuming (%s)) %s %s\n", s.Out.Name, s.Param.Name, names(s.Free), s.Init.Name, s.Vec.Name)
			format(w, s.Body, in+"    ")
			continue
		case *Loop:
			shape := ""
			if s.Shape != nil {
				shape = s.Shape.Name + " "
			}
			fmt.Fprintf(w, "%s = %s %s%s (λ%s consuming (%s))\n", s.Out.Name, s.Kind, shape, s.N.Name, s.Index.Name, names(s.Free))
			format(w, s.Body, in+"    ")
			continue
		case *Case:
			fmt.Fprintf(w, "%s = Case %s consuming (%s)\n", s.Out.Name, s.Cond.Name, names(s.Free))
			fmt.Fprintf(w, "%s  true:\n", in)
			format(w, s.Then, in+"    ")
			fmt.Fprintf(w, "%s  false:\n", in)
			format(w, s.Else, in+"    ")
			continue
		}
		w.WriteString("\n")
	}
	fmt.Fprintf(w, "%s=> %s\n", in, b.Result.Name)
}
