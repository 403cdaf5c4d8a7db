package cl

import (
	"fmt"
	"strings"

	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Check type-checks a term by the rules of CL (seed 002, Figure 11, with
// the terms ks adds) and returns its type S => T:
//
//	I : T => T
//	K(k) : S => T                        for k : T, any S
//	P[i1 .. im / n] : (S1 .. Sn) => (Si1 .. Sim)
//	π(i, n) : (S1 .. Sn) => Si
//	F(f) : A => R                        for f : A -> R
//	c1; c2 : S => U                      if c1 : S => T, c2 : T => U
//	(c1, .., cn) : S => (T1 .. Tn)       if ci : S => Ti
//	IF(c1, c2, c3) : S => T              if c1 : S => Bool, c2, c3 : S => T
//	L(x, cr, cb) : S => T                if S = (S1 .. Sn), cr : S => U, cb : (S1 .. Sn U) => T
//	A(c1, c2) : S => T                   if c1 : S => Bool, c2 : S => T
//	p(c1, .., cn) : S => T               if ci : S => Ti, p : (T1 .. Tn) -> T
//	λx.c : (S1 .. Sn) => (Lam X B)       if c : (S1 .. Sn X) => B (only as an argument of p)
//
// An ill-typed term is an error at the position of the offending sub-term.
func Check(c Term) (s, t *types.Type, err error) {
	return check(c, false)
}

// CheckDef checks that the body of d is well typed with the type
// T(params) => R of f's definition.
func CheckDef(d *Def) error {
	s, t, err := Check(d.Body)
	if err != nil {
		return err
	}
	if want := Context(d.Params); !s.Equal(want) {
		return errorf(d.Body, "the body of %s takes %s, not the context %s of its parameters", d.Func.FullName(), s, want)
	}
	if !t.Equal(d.Func.Result) {
		return errorf(d.Body, "the body of %s returns %s, not %s", d.Func.FullName(), t, d.Func.Result)
	}
	return nil
}

func errorf(c Term, format string, args ...any) error {
	var pos Pos
	if c != nil {
		pos = c.Pos()
	}
	return &syntax.Error{Pos: pos, Msg: "CL: " + fmt.Sprintf(format, args...)}
}

func check(c Term, lamOK bool) (s, t *types.Type, err error) {
	switch c := c.(type) {
	case nil:
		return nil, nil, errorf(nil, "missing term")
	case *Id:
		if c.T == nil {
			return nil, nil, errorf(c, "identity without a type")
		}
		return c.T, c.T, nil
	case *Const:
		return checkConst(c)
	case *Prune:
		if err := needTuple(c, c.S, "pruning"); err != nil {
			return nil, nil, err
		}
		out := make([]*types.Type, len(c.Idx))
		for k, i := range c.Idx {
			if i < 1 || i > len(c.S.Elems) {
				return nil, nil, errorf(c, "pruning keeps field %d of a %d-tuple", i, len(c.S.Elems))
			}
			out[k] = c.S.Elems[i-1]
		}
		return c.S, types.TupleOf(out...), nil
	case *Proj:
		if err := needTuple(c, c.S, "projection"); err != nil {
			return nil, nil, err
		}
		if c.I < 1 || c.I > len(c.S.Elems) {
			return nil, nil, errorf(c, "projection of field %d of a %d-tuple", c.I, len(c.S.Elems))
		}
		return c.S, c.S.Elems[c.I-1], nil
	case *Func:
		return checkFunc(c)
	case *Comp:
		s1, t1, err := check(c.A, false)
		if err != nil {
			return nil, nil, err
		}
		s2, t2, err := check(c.B, false)
		if err != nil {
			return nil, nil, err
		}
		if !t1.Equal(s2) {
			return nil, nil, errorf(c, "composition of a term returning %s with one taking %s", t1, s2)
		}
		return s1, t2, nil
	case *Tuple:
		if c.S == nil {
			return nil, nil, errorf(c, "tuple without an input type")
		}
		ts := make([]*types.Type, len(c.Elems))
		for k, e := range c.Elems {
			se, te, err := check(e, false)
			if err != nil {
				return nil, nil, err
			}
			if !se.Equal(c.S) {
				return nil, nil, errorf(e, "field %d of a tuple on %s takes %s", k+1, c.S, se)
			}
			ts[k] = te
		}
		return c.S, types.TupleOf(ts...), nil
	case *If:
		return checkIf(c)
	case *Let:
		return checkLet(c)
	case *Assert:
		sc, tc, err := check(c.Cond, false)
		if err != nil {
			return nil, nil, err
		}
		sb, tb, err := check(c.Body, false)
		if err != nil {
			return nil, nil, err
		}
		if !tc.Equal(types.BoolType) {
			return nil, nil, errorf(c.Cond, "assert condition returns %s, not Bool", tc)
		}
		if !sc.Equal(sb) {
			return nil, nil, errorf(c, "assert condition takes %s, body takes %s", sc, sb)
		}
		return sb, tb, nil
	case *Comb:
		return checkComb(c)
	case *Lam:
		if !lamOK {
			return nil, nil, errorf(c, "a function (lam) outside an argument of a primitive that takes one")
		}
		if c.Param.T == nil {
			return nil, nil, errorf(c, "lam parameter %s without a type", c.Param.Name)
		}
		sb, tb, err := check(c.Body, false)
		if err != nil {
			return nil, nil, err
		}
		n := len(sb.Elems)
		if sb.Kind != types.Tuple || n == 0 || !sb.Elems[n-1].Equal(c.Param.T) {
			return nil, nil, errorf(c, "the body of (lam (%s : %s) ...) takes %s, not a context ending in %s", c.Param.Name, c.Param.T, sb, c.Param.T)
		}
		return types.TupleOf(sb.Elems[:n-1]...), types.LamOf(c.Param.T, tb), nil
	}
	return nil, nil, errorf(c, "unknown term %T", c)
}

func needTuple(c Term, s *types.Type, what string) error {
	if s == nil || s.Kind != types.Tuple {
		return errorf(c, "%s of %s, which is not a tuple", what, s)
	}
	return nil
}

func checkConst(c *Const) (s, t *types.Type, err error) {
	if c.S == nil || c.T == nil {
		return nil, nil, errorf(c, "constant without its types")
	}
	var want *types.Type
	switch c.Val.(type) {
	case nil:
		return c.S, c.T, nil // ($dummy T)
	case int64:
		want = types.IntegerType
	case float64:
		want = types.FloatType
	case bool:
		want = types.BoolType
	case string:
		want = types.StringType
	default:
		return nil, nil, errorf(c, "constant %v of Go type %T", c.Val, c.Val)
	}
	if !want.Equal(c.T) {
		return nil, nil, errorf(c, "constant %v has type %s, not %s", c.Val, want, c.T)
	}
	return c.S, c.T, nil
}

func checkFunc(c *Func) (s, t *types.Type, err error) {
	if c.S == nil || c.T == nil {
		return nil, nil, errorf(c, "function constant without its types")
	}
	switch {
	case (c.Fn == nil) == (c.Prim == nil):
		return nil, nil, errorf(c, "a function constant names exactly one function or primitive")
	case c.Fn != nil:
		if !c.Fn.Arg.Equal(c.S) || !c.Fn.Result.Equal(c.T) {
			return nil, nil, errorf(c, "F(%s) : %s => %s used as %s => %s", c.Fn.FullName(), c.Fn.Arg, c.Fn.Result, c.S, c.T)
		}
	default:
		if len(c.Prim.Lams) > 0 {
			return nil, nil, errorf(c, "%s takes a function: it is a combinator, not a function constant", c.Prim.Name)
		}
		res, msg := c.Prim.TypeOf(c.S)
		if msg != "" {
			return nil, nil, errorf(c, "F(%s) on %s: %s", c.Prim.Name, c.S, msg)
		}
		if !res.Equal(c.T) {
			return nil, nil, errorf(c, "F(%s) on %s returns %s, not %s", c.Prim.Name, c.S, res, c.T)
		}
	}
	return c.S, c.T, nil
}

func checkIf(c *If) (s, t *types.Type, err error) {
	var ss, ts [3]*types.Type
	for k, e := range []Term{c.Cond, c.Then, c.Else} {
		if ss[k], ts[k], err = check(e, false); err != nil {
			return nil, nil, err
		}
	}
	if !ts[0].Equal(types.BoolType) {
		return nil, nil, errorf(c.Cond, "if condition returns %s, not Bool", ts[0])
	}
	if !ss[0].Equal(ss[1]) || !ss[0].Equal(ss[2]) {
		return nil, nil, errorf(c, "the parts of an if take %s, %s and %s", ss[0], ss[1], ss[2])
	}
	if !ts[1].Equal(ts[2]) {
		return nil, nil, errorf(c, "the branches of an if return %s and %s", ts[1], ts[2])
	}
	return ss[0], ts[1], nil
}

func checkLet(c *Let) (s, t *types.Type, err error) {
	s, u, err := check(c.Rhs, false)
	if err != nil {
		return nil, nil, err
	}
	if err := needTuple(c, s, "let on a context"); err != nil {
		return nil, nil, err
	}
	vts := make([]*types.Type, len(c.Vars))
	for k, v := range c.Vars {
		if v.T == nil {
			return nil, nil, errorf(c, "let variable %s without a type", v.Name)
		}
		vts[k] = v.T
	}
	switch {
	case c.Pattern:
		if !u.Equal(types.TupleOf(vts...)) {
			return nil, nil, errorf(c, "let pattern of %s bound to %s", types.TupleOf(vts...), u)
		}
	case len(c.Vars) != 1:
		return nil, nil, errorf(c, "let of %d variables without a pattern", len(c.Vars))
	case !u.Equal(vts[0]):
		return nil, nil, errorf(c, "let binds %s : %s to %s", c.Vars[0].Name, vts[0], u)
	}
	sb, t, err := check(c.Body, false)
	if err != nil {
		return nil, nil, err
	}
	if want := Extend(s, vts...); !sb.Equal(want) {
		return nil, nil, errorf(c.Body, "let body takes %s, not the extended context %s", sb, want)
	}
	return s, t, nil
}

func checkComb(c *Comb) (s, t *types.Type, err error) {
	if c.Prim == nil || c.S == nil || c.T == nil {
		return nil, nil, errorf(c, "combinator without its primitive or types")
	}
	lams := map[int]bool{}
	for _, k := range c.Prim.Lams {
		lams[k] = true
	}
	if len(lams) == 0 {
		return nil, nil, errorf(c, "%s takes no function: it is a function constant, not a combinator", c.Prim.Name)
	}
	parts := make([]*types.Type, len(c.Args))
	for k, a := range c.Args {
		_, isLam := a.(*Lam)
		if isLam != lams[k] {
			return nil, nil, errorf(a, "argument %d of %s must %sbe a function", k+1, c.Prim.Name, map[bool]string{true: "", false: "not "}[lams[k]])
		}
		sa, ta, err := check(a, isLam)
		if err != nil {
			return nil, nil, err
		}
		if !sa.Equal(c.S) {
			return nil, nil, errorf(a, "argument %d of %s takes %s, not %s", k+1, c.Prim.Name, sa, c.S)
		}
		parts[k] = ta
	}
	arg := types.TupleOf(parts...)
	if len(parts) == 1 {
		arg = parts[0]
	}
	res, msg := c.Prim.TypeOf(arg)
	if msg != "" {
		return nil, nil, errorf(c, "%s", msg)
	}
	if !res.Equal(c.T) {
		return nil, nil, errorf(c, "%s returns %s, not %s", c.Prim.Name, res, c.T)
	}
	return c.S, c.T, nil
}

// CheckPruned checks the invariant the Pruning rule establishes in a
// definition: every sub-term that receives a context (the body, the parts
// of tuples, ifs, asserts and combinators, the right-hand side and body of
// a let, the body of a lam, and the first part of a composition) either
// uses every variable of it, or is P[...]; c' where the pruning keeps the
// variables in order and c' uses every one it keeps. The error names the
// first variable a sub-term receives without using it.
func CheckPruned(d *Def) error {
	if err := CheckDef(d); err != nil {
		return err
	}
	names := make([]string, len(d.Params))
	for i, v := range d.Params {
		names[i] = v.Name
	}
	return pruned(d.Body, names)
}

func pruned(c Term, ctx []string) error {
	if comp, ok := c.(*Comp); ok {
		if p, ok := comp.A.(*Prune); ok {
			kept := make([]string, len(p.Idx))
			for k, i := range p.Idx {
				if k > 0 && i <= p.Idx[k-1] {
					return errorf(p, "pruning %s does not keep the order of the context", Sprint(p))
				}
				kept[k] = ctx[i-1]
			}
			if len(kept) == len(ctx) {
				return errorf(p, "pruning %s keeps every variable", Sprint(p))
			}
			return pruned(comp.B, kept)
		}
	}
	u := used(c, len(ctx))
	for i, ok := range u {
		if !ok {
			return errorf(c, "%s receives %s (context %s) without using it", head(c), ctx[i], strings.Join(ctx, " "))
		}
	}
	switch c := c.(type) {
	case *Comp:
		return pruned(c.A, ctx)
	case *Tuple:
		return prunedAll(c.Elems, ctx)
	case *If:
		return prunedAll([]Term{c.Cond, c.Then, c.Else}, ctx)
	case *Assert:
		return prunedAll([]Term{c.Cond, c.Body}, ctx)
	case *Comb:
		for _, a := range c.Args {
			var err error
			if l, ok := a.(*Lam); ok {
				err = pruned(l.Body, append(ctx[:len(ctx):len(ctx)], l.Param.Name))
			} else {
				err = pruned(a, ctx)
			}
			if err != nil {
				return err
			}
		}
	case *Let:
		if err := pruned(c.Rhs, ctx); err != nil {
			return err
		}
		inner := ctx[:len(ctx):len(ctx)]
		for _, v := range c.Vars {
			inner = append(inner, v.Name)
		}
		return pruned(c.Body, inner)
	}
	return nil
}

func prunedAll(cs []Term, ctx []string) error {
	for _, c := range cs {
		if err := pruned(c, ctx); err != nil {
			return err
		}
	}
	return nil
}

// used returns which fields of its input, a context of n fields, a
// well-typed term reads.
func used(c Term, n int) []bool {
	u := make([]bool, n)
	switch c := c.(type) {
	case *Id, *Func:
		for i := range u {
			u[i] = true
		}
	case *Const:
	case *Prune:
		for _, i := range c.Idx {
			u[i-1] = true
		}
	case *Proj:
		u[c.I-1] = true
	case *Comp:
		return used(c.A, n)
	case *Tuple:
		orUsed(u, c.Elems...)
	case *If:
		orUsed(u, c.Cond, c.Then, c.Else)
	case *Assert:
		orUsed(u, c.Cond, c.Body)
	case *Comb:
		orUsed(u, c.Args...)
	case *Lam:
		copy(u, used(c.Body, n+1))
	case *Let:
		orUsed(u, c.Rhs)
		copy(u, orBools(u, used(c.Body, n+len(c.Vars))[:n]))
	}
	return u
}

func orUsed(u []bool, cs ...Term) {
	for _, c := range cs {
		copy(u, orBools(u, used(c, len(u))))
	}
}

func orBools(a, b []bool) []bool {
	out := make([]bool, len(a))
	for i := range a {
		out[i] = a[i] || b[i]
	}
	return out
}

// head returns a short description of a term for messages.
func head(c Term) string {
	s := Sprint(c)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
