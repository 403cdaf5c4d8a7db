// Package typecheck resolves names and overloads in parsed ks files and
// produces the typed IR (language.md sections 2-5 and 7).
//
// Declarations are checked in order, so a function must be declared before
// it is used, except that a def may call itself. A call is resolved by its
// name and the type of its argument: user functions first, then the
// primitives and prelude functions of the primitive table. Derived names
// ([rev f], [shape [rev f]], ...) are resolved through the function they
// derive from; a derived function that is called or requested by a gdef
// but not written by hand is added to the program without a body, for the
// derive stage to fill in.
//
// A call of buildFromSparseTupled, a Knossos primitive without a row in
// the primitive table, is rewritten into build and buildFromSparse
// (tupled.go), so no later stage meets it.
//
// Every error is collected and reported as file:line:col: message.
package typecheck

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Check type-checks the files, read as one program in order.
func Check(files []*syntax.File) (*ir.Program, error) {
	c := newChecker()
	c.namedTypes(files)
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *syntax.Def:
				c.declareLater(d.Name)
			case *syntax.Edef:
				c.declareLater(d.Name)
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			c.decl(d)
		}
	}
	c.errs.Sort()
	return c.prog, c.errs.Err()
}

type checker struct {
	prog  *ir.Program
	funcs map[string]*ir.Func   // by Func.Key: the current overloads
	names map[string][]*ir.Func // by Name.String(): every overload declared
	later map[string]syntax.Pos // where each function name is first declared, for messages
	errs  syntax.ErrorList
	// internal allows the primitives of derived code (CheckExpr).
	internal bool
	// fresh names the variables of the code the checker writes itself
	// (sparseTupled). It is its own supply, not the program's
	// (ir.Program.Names), which must not be made before the program is
	// complete.
	fresh ir.Names
	// primDefs holds the defs of primitives that derived functions of
	// them derive from (primDef), by FuncKey.
	primDefs map[string]*ir.Func
}

// declareLater records where a function name is declared, so that a use
// before the declaration can say so.
func (c *checker) declareLater(n *syntax.Name) {
	if n.Deriv == "" {
		if _, ok := c.later[n.Base]; !ok {
			c.later[n.Base] = n.P
		}
	}
}

func newChecker() *checker {
	return &checker{
		prog:  &ir.Program{},
		funcs: map[string]*ir.Func{},
		names: map[string][]*ir.Func{},
		later: map[string]syntax.Pos{},
	}
}

func (c *checker) errorf(pos syntax.Pos, format string, args ...any) {
	c.errs.Add(pos, format, args...)
}

// declare adds f to the program, replacing an earlier function with the
// same signature for later uses.
func (c *checker) declare(f *ir.Func) {
	key := f.Key()
	if _, ok := c.funcs[key]; !ok {
		c.names[f.Name.String()] = append(c.names[f.Name.String()], f)
	} else {
		list := c.names[f.Name.String()]
		for i, g := range list {
			if g.Key() == key {
				list[i] = f
			}
		}
	}
	c.funcs[key] = f
	c.prog.Funcs = append(c.prog.Funcs, f)
}

func (c *checker) decl(d syntax.Decl) {
	defer func() {
		if r := recover(); r != nil {
			panic(ir.AtPos(r, d.Pos(), "a declaration"))
		}
	}()
	switch d := d.(type) {
	case *syntax.Def:
		c.def(d)
	case *syntax.Edef:
		c.edef(d)
	case *syntax.Gdef:
		c.gdef(d)
	case *syntax.Rule:
		c.rule(d)
	case *syntax.Deftype:
		// Resolved before the declarations are checked (namedTypes).
	default:
		panic(fmt.Sprintf("typecheck: unexpected declaration %T", d))
	}
}

// paramVars returns the parameters of a def as variables, and its argument type.
func paramVars(ps []*syntax.Param, one bool) ([]*ir.Var, *types.Type) {
	vs := make([]*ir.Var, len(ps))
	ts := make([]*types.Type, len(ps))
	for i, p := range ps {
		vs[i] = &ir.Var{P: p.P, T: p.Type.T, Name: p.Name}
		ts[i] = p.Type.T
	}
	if len(ps) == 1 {
		return vs, ts[0]
	}
	return vs, types.TupleOf(ts...)
}

// funcName converts a declared name to an IR name and base argument type,
// given the function's own argument type.
func (c *checker) funcName(n *syntax.Name, arg *types.Type) (ir.Name, *types.Type, bool) {
	name := ir.Name{Derivs: n.Derivs(), Base: n.Root().Base, Wrt: n.Wrt}
	if root := n.Root(); root.Arg != nil {
		return name, root.Arg.T, true
	}
	s := arg
	for _, d := range name.Derivs {
		var ok bool
		s, ok = ir.InnerArg(d, s)
		if !ok {
			c.errorf(n.P, "cannot tell which %s this derives from: write [%s [%s ARGTYPE]]", name.Inner(), d, name.Base)
			return name, nil, false
		}
	}
	return name, s, true
}

func (c *checker) def(d *syntax.Def) {
	vars, arg := paramVars(d.Params, d.OneParam)
	name, baseArg, ok := c.funcName(d.Name, arg)
	if !ok {
		return
	}
	if !arg.IsValue() || !bindable(d.Result.T) {
		c.errorf(d.Name.P, "a function must take and return values, not %s -> %s", arg, d.Result.T)
		return
	}
	if len(name.Derivs) == 0 && (ir.IsPrim(name.Base) && isStructural(name.Base) || isRewritten(name.Base)) {
		c.errorf(d.Name.P, "%s is a primitive and cannot be redefined", name.Base)
		return
	}
	f := &ir.Func{P: d.Name.P, Name: name, BaseArg: baseArg, Arg: arg, Result: d.Result.T,
		Kind: ir.DefFunc, Params: vars, OneParam: d.OneParam || len(vars) == 1}
	// The bodies of derived functions may use the primitives of derived
	// code (as ksc prints them in the derived and optimised stages).
	c.internal = len(name.Derivs) > 0
	defer func() { c.internal = false }()
	if len(name.Derivs) > 0 {
		c.checkDerivedDecl(d.Name.P, f)
	}
	c.declare(f)
	sc := &scope{}
	for _, v := range vars {
		sc = sc.push(v)
	}
	body := c.expr(d.Body, sc)
	if body == nil {
		return
	}
	if !body.Type().Equal(f.Result) {
		c.errorf(d.Body.Pos(), "the body of %s has type %s, but the declared result type is %s", name, body.Type(), f.Result)
	}
	f.Body = body
}

// bindable reports whether a let may bind, an if choose and a function
// return values of type t: values, and linear maps (which derived code and
// code consuming [D f] pass around), but not lambdas.
func bindable(t *types.Type) bool { return !t.Contains(types.Lam) }

// isStructural reports whether a primitive is part of the language itself
// (build, index, ...) rather than an overloadable prelude function.
func isStructural(name string) bool {
	for _, p := range ir.LookupPrim(name) {
		if p.Sig != nil {
			return false
		}
	}
	return true
}

// checkDerivedDecl checks the type of a hand-written or declared derived
// function against the function it derives from, when that is known.
func (c *checker) checkDerivedDecl(pos syntax.Pos, f *ir.Func) {
	inner, innerArg, innerRes := c.lookupInner(f.Name.Inner(), f.BaseArg)
	if inner == nil {
		return
	}
	if g, ok := inner.(*ir.Func); ok && len(f.Name.Derivs) == 1 && splitDeriv(f.Name.Derivs[0]) &&
		(len(g.Name.Derivs) == 0 || g.Name.IsCL()) {
		// A hand-written split pass chooses the record's type, as in
		// Knossos; the other passes of g must agree with it.
		if b := declaredBog(f); b != nil && !(b.Kind == types.Named && strings.HasPrefix(b.Name, "bog$")) {
			if !c.prog.SetBogType(g, b) {
				c.errorf(pos, "%s records a %s, but the BOG type of %s is %s already", f.Name, b, g.Name, c.prog.BogType(g))
				return
			}
		}
	}
	arg, res, msg := ir.DerivedSig(f.Name.Derivs[0], innerArg, innerRes, c.bogOf(f.Name.Derivs[0], inner))
	if msg != "" {
		return // the derivation is not available: the hand-written one stands alone
	}
	if f.Name.Wrt != nil {
		if arg, res, msg = ir.WrtSig(f.Name.Derivs[0], f.Name.Wrt, innerArg, arg, res); msg != "" {
			c.errorf(pos, "%s: %s", f.Name, msg)
			return
		}
	}
	if !arg.Equal(f.Arg) || !res.Equal(f.Result) {
		c.errorf(pos, "%s must have type %s -> %s, not %s -> %s", f.Name, arg, res, f.Arg, f.Result)
	}
	if g, ok := inner.(*ir.Func); ok && len(f.Name.Derivs) == 1 {
		f.Base = g
	}
}

// declaredBog returns the BOG type a split pass's signature names (the
// second field of [suffwdpass f]'s result, of the other passes' argument),
// or nil if it names none.
func declaredBog(f *ir.Func) *types.Type {
	t, n := f.Arg, 3 // [bogrev f] : (Tuple dT B dS) -> dS
	switch f.Name.Derivs[0] {
	case "suffwdpass":
		t, n = f.Result, 2
	case "sufrevpass":
		n = 2
	}
	if t.Kind != types.Tuple || len(t.Elems) != n {
		return nil
	}
	return t.Elems[1]
}

// bogOf returns the BOG type of a base function found by lookupInner, for
// the derivations that mention it, or nil (a primitive has none).
func (c *checker) bogOf(deriv string, inner any) *types.Type {
	if f, ok := inner.(*ir.Func); ok && (len(f.Name.Derivs) == 0 || f.Name.IsCL()) && splitDeriv(deriv) {
		return c.prog.BogType(f)
	}
	return nil
}

// splitDeriv reports whether a derivation's type mentions the BOG.
func splitDeriv(d string) bool {
	return d == "suffwdpass" || d == "sufrevpass" || d == "bogrev" || d == "suffwdloop" || d == "bogup"
}

// lookupInner finds the function a derived name derives from, by its base
// argument type, without creating anything.
func (c *checker) lookupInner(name ir.Name, baseArg *types.Type) (any, *types.Type, *types.Type) {
	if f := c.funcs[ir.FuncKey(name, baseArg)]; f != nil {
		return f, f.Arg, f.Result
	}
	if len(name.Derivs) == 0 {
		for _, p := range ir.LookupPrim(name.Base) {
			if p.Sig != nil && p.Sig.ArgType().Equal(baseArg) {
				return p, baseArg, p.Sig.Result
			}
		}
		return nil, nil, nil
	}
	inner, s, t := c.lookupInner(name.Inner(), baseArg)
	if inner == nil {
		return nil, nil, nil
	}
	arg, res, msg := ir.DerivedSig(name.Derivs[0], s, t, c.bogOf(name.Derivs[0], inner))
	if msg != "" {
		return nil, nil, nil
	}
	return inner, arg, res
}

func (c *checker) edef(d *syntax.Edef) {
	arg := d.Arg.T
	name, baseArg, ok := c.funcName(d.Name, arg)
	if !ok {
		return
	}
	f := &ir.Func{P: d.Name.P, Name: name, BaseArg: baseArg, Arg: arg, Result: d.Result.T, Kind: ir.EdefFunc}
	if len(name.Derivs) == 0 {
		for _, p := range ir.LookupPrim(name.Base) {
			if p.Sig != nil && p.Sig.ArgType().Equal(arg) {
				if !p.Sig.Result.Equal(d.Result.T) {
					c.errorf(d.Result.P, "%s is a prelude function returning %s, not %s", name.Base, p.Sig.Result, d.Result.T)
					return
				}
				f.Prim = p // a restatement of a prelude function
			}
		}
		if f.Prim == nil && (ir.IsPrim(name.Base) && isStructural(name.Base) || isRewritten(name.Base)) {
			c.errorf(d.Name.P, "%s is a primitive and cannot be declared with edef", name.Base)
			return
		}
	} else {
		// An edef of a derived name such as [D f] declares that the
		// derivative exists; Knossos programs do this.
		c.checkDerivedDecl(d.Name.P, f)
	}
	c.declare(f)
}

func (c *checker) gdef(d *syntax.Gdef) {
	// The target is [f T] or a derived name of it, [rev [f T]]: the
	// derivation applies to it, outermost first.
	derivs := []string{d.Deriv}
	base := d.Target
	for ; base.Deriv != ""; base = base.Inner {
		if base.Wrt != nil {
			c.errs.Add(base.P, "gdef: a derived target cannot name the arguments it differentiates ([%s ... %d]); put them after the target", base.Deriv, base.Wrt[0])
			return
		}
		derivs = append(derivs, base.Deriv)
	}
	name := ir.Name{Derivs: derivs, Base: base.Base, Wrt: d.Wrt}
	baseArg := base.Arg.T
	if f := c.funcs[ir.FuncKey(name, baseArg)]; f != nil {
		f.Uses = append(f.Uses, d.Lparen)
		c.prog.Gdefs = append(c.prog.Gdefs, &ir.Gdef{P: d.Lparen, Func: f})
		return // written by hand, or asked for before
	}
	if _, _, found := c.lookupBase(name, baseArg); !found {
		if ir.IsPrim(base.Base) && isStructural(base.Base) {
			c.errorf(base.P, "%s", structuralDerived(base.Base))
			return
		}
		cands, hint := c.noFunction(ir.Name{Base: base.Base})
		c.errs.AddHint(base.P, hint, "no function [%s %s]%s", base.Base, baseArg, cands)
		return
	}
	f := c.derived(d.DerivPos, name, baseArg)
	if f != nil {
		c.prog.Gdefs = append(c.prog.Gdefs, &ir.Gdef{P: d.Lparen, Func: f})
	}
}

// derived returns the derived function name whose base takes baseArg,
// creating it (without a body) if it has not been declared.
func (c *checker) derived(pos syntax.Pos, name ir.Name, baseArg *types.Type) *ir.Func {
	key := ir.FuncKey(name, baseArg)
	if f := c.funcs[key]; f != nil {
		f.Uses = append(f.Uses, pos)
		return f
	}
	var innerArg, innerRes *types.Type
	var innerFunc *ir.Func
	inner := name.Inner()
	if len(inner.Derivs) == 0 {
		if f := c.funcs[ir.FuncKey(inner, baseArg)]; f != nil {
			innerFunc, innerArg, innerRes = f, f.Arg, f.Result
		} else {
			for _, p := range ir.LookupPrim(inner.Base) {
				if p.Sig != nil && p.Sig.ArgType().Equal(baseArg) {
					innerFunc = c.primDef(pos, p)
					innerArg, innerRes = baseArg, p.Sig.Result
				}
			}
		}
		if innerArg == nil && ir.IsPrim(inner.Base) && isStructural(inner.Base) {
			c.errorf(pos, "%s", structuralDerived(inner.Base))
			return nil
		}
		if innerArg == nil {
			cands, hint := c.noFunction(inner)
			c.errs.AddHint(pos, hint, "no function [%s %s]%s", inner.Base, baseArg, cands)
			return nil
		}
	} else {
		innerFunc = c.derived(pos, inner, baseArg)
		if innerFunc == nil {
			return nil
		}
		innerArg, innerRes = innerFunc.Arg, innerFunc.Result
	}
	var bog *types.Type
	if innerFunc != nil && (len(inner.Derivs) == 0 || inner.IsCL()) && splitDeriv(name.Derivs[0]) {
		bog = c.prog.BogType(innerFunc)
	}
	arg, res, msg := ir.DerivedSig(name.Derivs[0], innerArg, innerRes, bog)
	if msg == "" && name.Wrt != nil {
		arg, res, msg = ir.WrtSig(name.Derivs[0], name.Wrt, innerArg, arg, res)
	}
	if msg != "" {
		c.errorf(pos, "%s: %s", name, msg)
		return nil
	}
	f := &ir.Func{P: pos, Name: name, BaseArg: baseArg, Arg: arg, Result: res,
		Kind: ir.DerivedFunc, Base: innerFunc, Uses: []syntax.Pos{pos}}
	c.declare(f)
	return f
}

// structuralDerived is the error for a derived function of one of the
// language's own primitives (build, index, ...), which have no signature
// to derive from.
func structuralDerived(name string) string {
	return name + " is a primitive of the language, whose derived functions ksc does not make: differentiate a def that calls it"
}

// primDef returns the def through which a derived function of the
// primitive p ([rev exp], [suffwdpass mul]) is derived like any other:
// (def p$prim T ((x0 : S0) ...) (p x0 ...)), made once per overload, under
// a name of its own (a def named p would call itself once printed and read
// back), not callable by that name, and not exported.
func (c *checker) primDef(pos syntax.Pos, p *ir.Prim) *ir.Func {
	arg := p.Sig.ArgType()
	name := ir.Name{Base: ir.PrimDefName(p.Name)}
	key := ir.FuncKey(name, arg)
	if f := c.primDefs[key]; f != nil {
		return f
	}
	ts := []*types.Type{arg}
	if len(p.Sig.Args) > 1 {
		ts = p.Sig.Args
	}
	f := &ir.Func{P: pos, Name: name, BaseArg: arg, Arg: arg, Result: p.Sig.Result, Kind: ir.DefFunc,
		OneParam: len(ts) == 1, Implied: true}
	args := make([]ir.Expr, len(ts))
	for i, t := range ts {
		v := &ir.Var{P: pos, T: t, Name: "x" + strconv.Itoa(i)}
		f.Params = append(f.Params, v)
		args[i] = ir.Ref(pos, v)
	}
	f.Body = &ir.Call{P: pos, T: p.Sig.Result, Prim: p, Args: args}
	if c.primDefs == nil {
		c.primDefs = map[string]*ir.Func{}
	}
	c.primDefs[key] = f
	c.prog.Funcs = append(c.prog.Funcs, f)
	return f
}

func (c *checker) rule(d *syntax.Rule) {
	vars, _ := paramVars(d.Params, d.OneParam)
	sc := &scope{}
	for _, v := range vars {
		sc = sc.push(v)
	}
	lhs := c.expr(d.Lhs, sc)
	rhs := c.expr(d.Rhs, sc)
	if lhs == nil || rhs == nil {
		return
	}
	if !lhs.Type().Equal(rhs.Type()) {
		c.errorf(d.Rhs.Pos(), "rule %q: the right-hand side has type %s, the left-hand side %s", d.Name, rhs.Type(), lhs.Type())
		return
	}
	c.prog.Rules = append(c.prog.Rules, &ir.Rule{P: d.Lparen, Name: d.Name, Params: vars, Lhs: lhs, Rhs: rhs})
}

// A scope is a linked list of local variables, innermost first.
type scope struct {
	v    *ir.Var
	next *scope
}

func (s *scope) push(v *ir.Var) *scope { return &scope{v: v, next: s} }

func (s *scope) lookup(name string) *ir.Var {
	for ; s != nil && s.v != nil; s = s.next {
		if s.v.Name == name {
			return s.v
		}
	}
	return nil
}

func (s *scope) names() []string {
	var ns []string
	for ; s != nil && s.v != nil; s = s.next {
		ns = append(ns, s.v.Name)
	}
	return ns
}

// expr type-checks an expression. It returns nil after reporting an error.
func (c *checker) expr(e syntax.Expr, sc *scope) ir.Expr {
	switch e := e.(type) {
	case *syntax.Lit:
		switch e.Kind {
		case syntax.IntLit:
			return &ir.Const{P: e.P, T: types.IntegerType, Val: e.Int}
		case syntax.FloatLit:
			return &ir.Const{P: e.P, T: types.FloatType, Val: e.Float}
		case syntax.StringLit:
			return &ir.Const{P: e.P, T: types.StringType, Val: e.Text}
		case syntax.BoolLit:
			return &ir.Const{P: e.P, T: types.BoolType, Val: e.Bool}
		}
	case *syntax.Var:
		if v := sc.lookup(e.Name); v != nil {
			if v.T == nil {
				return nil // bound by a let whose value had an error, reported there
			}
			return &ir.Var{P: e.P, T: v.T, Name: v.Name}
		}
		if c.isFunction(e.Name) {
			c.errorf(e.P, "%s is a function, not a variable: call it as (%s ...)", e.Name, e.Name)
			return nil
		}
		c.errs.AddHint(e.P, syntax.DidYouMean(e.Name, sc.names()), "unknown variable %s", e.Name)
		return nil
	case *syntax.Tuple:
		elems, ok := c.exprs(e.Elems, sc)
		if !ok {
			return nil
		}
		ts := make([]*types.Type, len(elems))
		for i, x := range elems {
			ts[i] = x.Type()
		}
		return &ir.Tuple{P: e.Lparen, T: types.TupleOf(ts...), Elems: elems}
	case *syntax.Let:
		return c.let(e, 0, sc)
	case *syntax.If:
		cond := c.expr(e.Cond, sc)
		then := c.expr(e.Then, sc)
		els := c.expr(e.Else, sc)
		if cond == nil || then == nil || els == nil {
			return nil
		}
		if !cond.Type().Equal(types.BoolType) {
			c.errorf(e.Cond.Pos(), "the condition of if must be Bool, not %s", cond.Type())
			return nil
		}
		if !then.Type().Equal(els.Type()) {
			c.errorf(e.Else.Pos(), "the branches of if have different types: %s and %s", then.Type(), els.Type())
			return nil
		}
		if !bindable(then.Type()) {
			c.errorf(e.Lparen, "if cannot choose between values of type %s", then.Type())
			return nil
		}
		return &ir.If{P: e.Lparen, T: then.Type(), Cond: cond, Then: then, Else: els}
	case *syntax.Assert:
		cond := c.expr(e.Cond, sc)
		body := c.expr(e.Body, sc)
		if cond == nil || body == nil {
			return nil
		}
		if !cond.Type().Equal(types.BoolType) {
			c.errorf(e.Cond.Pos(), "the condition of assert must be Bool, not %s", cond.Type())
			return nil
		}
		return &ir.Assert{P: e.Lparen, Cond: cond, Body: body}
	case *syntax.Lam:
		c.errorf(e.Lparen, "a lambda may only be an argument of %s", lamPrims())
		return nil
	case *syntax.Dummy:
		if !e.Type.T.IsValue() {
			c.errorf(e.Type.P, "$dummy needs a value type, not %s", e.Type.T)
			return nil
		}
		return &ir.Dummy{P: e.Lparen, T: e.Type.T}
	case *syntax.Call:
		return c.call(e, sc)
	}
	panic(fmt.Sprintf("typecheck: unexpected expression %T", e))
}

func (c *checker) exprs(es []syntax.Expr, sc *scope) ([]ir.Expr, bool) {
	out := make([]ir.Expr, len(es))
	ok := true
	for i, e := range es {
		out[i] = c.expr(e, sc)
		if out[i] == nil {
			ok = false
		}
	}
	return out, ok
}

func lamPrims() string {
	var names []string
	seen := map[string]bool{}
	for _, p := range ir.Prims() {
		if len(p.Lams) > 0 && !seen[p.Name] {
			seen[p.Name] = true
			names = append(names, p.Name)
			if p.Name == "buildFromSparse" {
				names = append(names, rewritten...)
			}
		}
	}
	return strings.Join(names, ", ")
}

// let checks the bindings of a let from the i'th on, nesting one IR let per binding.
func (c *checker) let(e *syntax.Let, i int, sc *scope) ir.Expr {
	if i == len(e.Binds) {
		return c.expr(e.Body, sc)
	}
	b := e.Binds[i]
	rhs := c.expr(b.Rhs, sc)
	var t *types.Type
	if rhs != nil {
		t = rhs.Type()
		if !bindable(t) {
			c.errorf(b.Rhs.Pos(), "cannot bind a value of type %s", t)
			t = nil
		} else if b.Pattern && (t.Kind != types.Tuple || len(t.Elems) != len(b.Vars)) {
			c.errorf(b.P, "the pattern binds %d variables, but the value has type %s", len(b.Vars), t)
			t = nil
		}
	}
	// After an error the variables are bound without a type, so that the
	// rest of the let is still checked but their uses report nothing more.
	var vars []*ir.Var
	for j, id := range b.Vars {
		v := &ir.Var{P: id.P, Name: id.Name}
		switch {
		case t == nil:
		case b.Pattern:
			v.T = t.Elems[j]
		default:
			v.T = t
		}
		vars = append(vars, v)
	}
	inner := sc
	for _, v := range vars {
		inner = inner.push(v)
	}
	body := c.let(e, i+1, inner)
	if body == nil || t == nil {
		return nil
	}
	return &ir.Let{P: b.P, Vars: vars, Pattern: b.Pattern, Rhs: rhs, Body: body}
}

var getRE = regexp.MustCompile(`^get\$([0-9]+)\$([0-9]+)$`)

func (c *checker) call(e *syntax.Call, sc *scope) ir.Expr {
	n := e.Fn
	if n.Deriv == "" && n.Arg == nil {
		if sc.lookup(n.Base) != nil && !c.isFunction(n.Base) {
			c.errorf(n.P, "%s is a local variable, not a function: (%s) would call a global function %s", n.Base, n.Base, n.Base)
			return nil
		}
		if m := getRE.FindStringSubmatch(n.Base); m != nil {
			return c.get(e, m, sc)
		}
		if form := c.rewrite(n.Base); form != nil {
			return form(e, sc)
		}
		if _, later := c.later[n.Base]; !later && !c.isFunction(n.Base) && n.Base != "$inline" {
			// The arguments of an unknown function are not checked: a
			// misspelt keyword, (lett (x e) body), makes them look like
			// calls, and their errors would only mislead.
			c.errs.AddHint(n.P, c.functionHint(n.Base), "unknown function %s", n.Base)
			return nil
		}
	}
	// Arguments of primitives that take lambdas are checked in place.
	if n.Deriv == "" && n.Arg == nil {
		if ps := ir.LookupPrim(n.Base); len(ps) == 1 && len(ps[0].Lams) > 0 && !c.hasUserOverload(n.Base) {
			return c.lamCall(e, ps[0], sc)
		}
	}
	if n.Deriv == "" && n.Arg == nil && n.Base == "$inline" {
		if len(e.Args) != 1 {
			c.errorf(n.P, "$inline takes one call, got %d arguments", len(e.Args))
			return nil
		}
		if _, isCall := e.Args[0].(*syntax.Call); !isCall {
			c.errorf(e.Args[0].Pos(), "$inline takes a call, (f args...)")
			return nil
		}
	}
	if n.Deriv == "" && n.Arg == nil {
		if ps := ir.LookupPrim(n.Base); len(ps) > 0 && ps[0].InPlace && !c.hasUserOverload(n.Base) && !c.internal {
			c.errorf(n.P, "%s is internal to derived code (it updates its argument in place); only derived functions such as [rev f] may use it", n.Base)
			return nil
		}
	}
	args, ok := c.exprs(e.Args, sc)
	if !ok {
		return nil
	}
	arg := ir.ArgType(args)
	if !bindable(arg) {
		c.errorf(e.Lparen, "cannot pass a value of type %s", arg)
		return nil
	}
	return c.resolve(e, args, arg)
}

func (c *checker) hasUserOverload(base string) bool {
	return len(c.names[base]) > 0
}

func (c *checker) isFunction(name string) bool {
	return len(c.names[name]) > 0 || ir.IsPrim(name) || isRewritten(name)
}

// get checks (get$i$n e).
func (c *checker) get(e *syntax.Call, m []string, sc *scope) ir.Expr {
	i, _ := strconv.Atoi(m[1])
	nn, _ := strconv.Atoi(m[2])
	if len(e.Args) != 1 {
		c.errorf(e.Lparen, "%s takes one tuple argument", e.Fn.Base)
		return nil
	}
	x := c.expr(e.Args[0], sc)
	if x == nil {
		return nil
	}
	t := x.Type()
	if i < 1 || i > nn {
		c.errorf(e.Fn.P, "%s: field %d of a %d-tuple does not exist", e.Fn.Base, i, nn)
		return nil
	}
	if t.Kind != types.Tuple || len(t.Elems) != nn {
		c.errorf(e.Args[0].Pos(), "%s needs a %d-tuple, not %s", e.Fn.Base, nn, t)
		return nil
	}
	return &ir.Get{P: e.Lparen, T: t.Elems[i-1], I: i, N: nn, X: x}
}

// lamCall checks a call of a primitive that takes lambdas.
func (c *checker) lamCall(e *syntax.Call, p *ir.Prim, sc *scope) ir.Expr {
	if len(e.Args) != p.Arity {
		c.errorf(e.Fn.P, "%s takes %d arguments, got %d", p.Name, p.Arity, len(e.Args))
		return nil
	}
	args, ok := c.lamArgs(e, p.Name, p.Lams, sc)
	if !ok {
		return nil
	}
	if p.Name == "buildFromSparse" {
		args[0] = knossosShape(args[0], args[2])
	}
	parts := make([]*types.Type, len(args))
	for i, a := range args {
		parts[i] = a.Type()
	}
	res, msg := p.Check(parts)
	if msg != "" {
		c.errorf(e.Fn.P, "%s", msg)
		return nil
	}
	return &ir.Call{P: e.Lparen, T: res, Prim: p, Args: args}
}

// lamArgs checks the arguments of a call of name, a primitive that takes
// lambdas at the argument positions lams: each of those must be written
// as a lambda, (lam (x : T) body), whose body is checked with x in scope.
// It returns false after reporting an error.
func (c *checker) lamArgs(e *syntax.Call, name string, lams []int, sc *scope) ([]ir.Expr, bool) {
	args := make([]ir.Expr, len(e.Args))
	ok := true
	for i, a := range e.Args {
		isLam := false
		for _, j := range lams {
			isLam = isLam || i == j
		}
		lam, written := a.(*syntax.Lam)
		switch {
		case isLam && !written:
			if v, isVar := a.(*syntax.Var); !isVar || sc.lookup(v.Name) == nil || sc.lookup(v.Name).T != nil {
				c.errorf(a.Pos(), "argument %d of %s must be a lambda (lam (x : T) body)", i+1, name)
			}
			ok = false
		case isLam:
			v := &ir.Var{P: lam.Param.P, T: lam.Param.Type.T, Name: lam.Param.Name}
			if !v.T.IsValue() {
				c.errorf(lam.Param.Type.P, "a lambda must take a value, not %s", v.T)
				ok = false
				continue
			}
			body := c.expr(lam.Body, sc.push(v))
			if body == nil {
				ok = false
				continue
			}
			args[i] = &ir.Lam{P: lam.Lparen, Param: v, Body: body}
		default:
			args[i] = c.expr(a, sc)
			ok = ok && args[i] != nil
		}
	}
	return args, ok
}

// resolve finds the function or primitive a call names, by the type of its argument.
func (c *checker) resolve(e *syntax.Call, args []ir.Expr, arg *types.Type) ir.Expr {
	n := e.Fn
	callee, res, msg := c.lookup(n, arg, e.Fn.P)
	if callee == nil {
		if msg != "" {
			c.errorf(n.P, "%s", msg)
		}
		return nil
	}
	call := &ir.Call{P: e.Lparen, T: res, Args: args}
	switch callee := callee.(type) {
	case *ir.Func:
		if callee.Prim != nil {
			call.Prim = callee.Prim
		} else {
			call.Fn = callee
			callee.Uses = append(callee.Uses, e.Lparen)
		}
	case *ir.Prim:
		call.Prim = callee
	}
	return call
}

// lookup finds the callee of name n applied to an argument of type arg:
// a *ir.Func or a *ir.Prim, and its result type. On failure it returns a
// message, or no message if the error has been reported already.
func (c *checker) lookup(n *syntax.Name, arg *types.Type, pos syntax.Pos) (any, *types.Type, string) {
	if n.Deriv != "" {
		var baseArg *types.Type
		name := ir.Name{Derivs: n.Derivs(), Base: n.Root().Base, Wrt: n.Wrt}
		if r := n.Root(); r.Arg != nil {
			baseArg = r.Arg.T
		} else {
			s := arg
			for _, d := range name.Derivs {
				var ok bool
				s, ok = ir.InnerArg(d, s)
				if !ok {
					return nil, nil, fmt.Sprintf("%s cannot take an argument of type %s: it takes %s", name, arg, derivedArgForm(d))
				}
			}
			baseArg = s
		}
		if c.funcs[ir.FuncKey(name, baseArg)] == nil {
			if _, _, found := c.lookupBase(name, baseArg); !found {
				if ir.IsPrim(name.Base) && isStructural(name.Base) {
					c.errorf(n.P, "%s", structuralDerived(name.Base))
					return nil, nil, ""
				}
				cands, hint := c.noFunction(ir.Name{Base: name.Base})
				c.errs.AddHint(n.P, hint, "no function [%s %s] to derive %s from%s", name.Base, baseArg, name, cands)
				return nil, nil, ""
			}
		}
		f := c.derived(pos, name, baseArg)
		if f == nil {
			return nil, nil, "" // reported by derived
		}
		f.Uses = f.Uses[:len(f.Uses)-1] // resolve records the use
		if !f.Arg.Equal(arg) {
			return nil, nil, fmt.Sprintf("%s takes %s, not %s", f.FullName(), f.Arg, arg)
		}
		return f, f.Result, ""
	}
	name := ir.Name{Base: n.Base}
	if n.Arg != nil {
		f := c.funcs[ir.FuncKey(name, n.Arg.T)]
		var callee any
		var res *types.Type
		if f != nil {
			callee, res = f, f.Result
		} else {
			for _, p := range ir.LookupPrim(n.Base) {
				if p.Sig != nil && p.Sig.ArgType().Equal(n.Arg.T) {
					callee, res = p, p.Sig.Result
				}
			}
		}
		if callee == nil {
			cands, hint := c.noFunction(name)
			c.errs.AddHint(n.P, hint, "no function [%s %s]%s", n.Base, n.Arg.T, cands)
			return nil, nil, ""
		}
		if !n.Arg.T.Equal(arg) {
			return nil, nil, fmt.Sprintf("[%s %s] called with an argument of type %s", n.Base, n.Arg.T, arg)
		}
		return callee, res, ""
	}
	if f := c.funcs[ir.FuncKey(name, arg)]; f != nil {
		return f, f.Result, ""
	}
	prims := ir.LookupPrim(n.Base)
	var polyMsg string
	for _, p := range prims {
		if p.Sig != nil {
			if p.Sig.ArgType().Equal(arg) {
				return p, p.Sig.Result, ""
			}
			continue
		}
		res, msg := p.TypeOf(arg)
		if msg == "" {
			return p, res, ""
		}
		polyMsg = msg
	}
	if polyMsg != "" {
		return nil, nil, polyMsg
	}
	if len(prims) > 0 || len(c.names[n.Base]) > 0 {
		return nil, nil, fmt.Sprintf("no overload of %s takes %s%s", n.Base, arg, c.candidates(name))
	}
	if later, ok := c.later[n.Base]; ok {
		return nil, nil, fmt.Sprintf("%s is used before it is declared (at %s); a function must be declared before its uses", n.Base, later)
	}
	return nil, nil, fmt.Sprintf("unknown function %s", n.Base) // call reports it first
}

// derivedArgForm describes the argument of a derivation, for messages.
func derivedArgForm(d string) string {
	switch d {
	case "fwd":
		return "a pair (x, dx) of a point and a tangent"
	case "rev", "sufrev", "vrev":
		return "a pair (x, dr) of a point and a cotangent"
	case "sufrevpass":
		return "(dr, bog), and must be written [sufrevpass [f S]]"
	}
	return "the argument of the function it derives from"
}

// lookupBase reports whether the underived function of a derived name exists.
func (c *checker) lookupBase(name ir.Name, baseArg *types.Type) (any, *types.Type, bool) {
	base := ir.Name{Base: name.Base}
	if f := c.funcs[ir.FuncKey(base, baseArg)]; f != nil {
		return f, f.Result, true
	}
	for _, p := range ir.LookupPrim(name.Base) {
		if p.Sig != nil && p.Sig.ArgType().Equal(baseArg) {
			return p, p.Sig.Result, true
		}
	}
	return nil, nil, false
}

// candidates lists the overloads of a name, for error messages.
func (c *checker) candidates(name ir.Name) string {
	var cs []string
	for _, f := range c.names[name.String()] {
		cs = append(cs, fmt.Sprintf("%s : %s -> %s", f.FullName(), f.Arg, f.Result))
	}
	if len(name.Derivs) == 0 {
		for _, p := range ir.LookupPrim(name.Base) {
			if p.Sig != nil {
				cs = append(cs, fmt.Sprintf("%s : %s -> %s", p, p.Sig.ArgType(), p.Sig.Result))
			}
		}
	}
	if len(cs) == 0 {
		return ""
	}
	return "; candidates are " + strings.Join(cs, ", ")
}

// noFunction returns, for a message saying there is no function name of
// some type, the candidates of that name (see candidates) or, if there
// are none, a hint at another name.
func (c *checker) noFunction(name ir.Name) (cands, hint string) {
	if cands = c.candidates(name); cands == "" {
		hint = syntax.DidYouMean(name.Base, c.allNames())
	}
	return cands, hint
}

// functionHint suggests a function or a keyword for the unknown name at
// the head of a call (a function if both are as close).
func (c *checker) functionHint(name string) string {
	return syntax.DidYouMean(name, append(c.allNames(), syntax.Keywords()...))
}

func (c *checker) allNames() []string {
	var ns []string
	for n := range c.names {
		ns = append(ns, n)
	}
	for _, p := range ir.Prims() {
		ns = append(ns, p.Name)
	}
	ns = append(ns, rewritten...)
	sort.Strings(ns)
	return ns
}

// namedTypes declares the types of the deftypes and resolves every use of
// a named type in the files to its definition. A named type may be used
// before its deftype, and may refer to itself.
func (c *checker) namedTypes(files []*syntax.File) {
	defs := map[string]*types.Type{}
	for _, f := range files {
		for _, d := range f.Decls {
			if dt, ok := d.(*syntax.Deftype); ok {
				if _, dup := defs[dt.Name]; dup {
					c.errorf(dt.NameP, "the type %s is declared twice", dt.Name)
					continue
				}
				nt := types.NamedType(dt.Name)
				nt.SetDef(dt.Type.T)
				defs[dt.Name] = nt
				c.prog.Types = append(c.prog.Types, nt)
			}
		}
	}
	var resolve func(t *types.Type, pos syntax.Pos, seen map[*types.Type]bool)
	resolve = func(t *types.Type, pos syntax.Pos, seen map[*types.Type]bool) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t.Kind {
		case types.Named:
			nt, ok := defs[t.Name]
			if !ok {
				names := make([]string, 0, len(defs))
				for n := range defs {
					names = append(names, n)
				}
				sort.Strings(names)
				c.errs.AddHint(pos, syntax.DidYouMean(t.Name, names), "unknown type %s", t.Name)
				t.SetDef(types.Unit) // keep checking without more errors
				return
			}
			t.SetDef(nt.Def)
			resolve(nt.Def, pos, seen)
		case types.Tuple, types.Variant:
			for _, e := range t.Elems {
				resolve(e, pos, seen)
			}
		case types.Tensor:
			resolve(t.Elem, pos, seen)
		case types.Lam, types.LM:
			resolve(t.From, pos, seen)
			resolve(t.To, pos, seen)
		}
	}
	for _, f := range files {
		syntax.TypeExprs(f.Decls, func(te *syntax.TypeExpr) { resolve(te.T, te.P, map[*types.Type]bool{}) })
	}
}

// knossosShape returns the shape argument of buildFromSparse in the form
// ksc takes (language.md section 5): Knossos also writes it uncompressed,
// as a value of the result's type with each scalar replaced by (tuple),
// (constVec 5 (tuple)) for a vector of 5 Floats, which is converted here
// (compress). Any other argument is returned as it is, for the
// primitive's check to judge.
func knossosShape(sh, lam ir.Expr) ir.Expr {
	l, ok := lam.(*ir.Lam)
	if !ok || l.Body.Type().Kind != types.Tuple || len(l.Body.Type().Elems) != 2 {
		return sh
	}
	rank := types.IndexRank(l.Body.Type().Elems[0])
	res := types.TensorOf(rank, l.Body.Type().Elems[1])
	if rank == 0 || !sh.Type().Equal(uncompressed(res)) || sh.Type().Equal(mustShape(res)) {
		return sh
	}
	return compress(sh, res)
}

// uncompressed is the type of Knossos' uncompressed shape of a value of
// type t: t with every scalar replaced by (Tuple).
func uncompressed(t *types.Type) *types.Type {
	switch t.Kind {
	case types.Tuple:
		elems := make([]*types.Type, len(t.Elems))
		for i, e := range t.Elems {
			elems[i] = uncompressed(e)
		}
		return types.TupleOf(elems...)
	case types.Tensor:
		return types.TensorOf(t.Rank, uncompressed(t.Elem))
	}
	return types.Unit
}

func mustShape(t *types.Type) *types.Type {
	sh, _ := types.Shape(t)
	return sh
}

// compress returns the shape of a value of type t from e, its
// uncompressed shape: the sizes of a tensor, and its elements' shapes
// where they differ.
func compress(e ir.Expr, t *types.Type) ir.Expr {
	p := e.Pos()
	switch {
	case t.IsUniform():
		return ir.MkTuple(p)
	case t.Kind == types.Tuple:
		v := &ir.Var{P: p, T: e.Type(), Name: "sh$u"}
		parts := make([]ir.Expr, len(t.Elems))
		for i, el := range t.Elems {
			parts[i] = compress(ir.MkGet(p, i+1, ir.Ref(p, v)), el)
		}
		return &ir.Let{P: p, Vars: []*ir.Var{v}, Rhs: e, Body: ir.MkTuple(p, parts...)}
	case t.Elem.IsUniform():
		return ir.MkPrim(p, "size", e)
	}
	v := &ir.Var{P: p, T: e.Type(), Name: "sh$u"}
	i := &ir.Var{P: p, T: types.IndexType(t.Rank), Name: "i$u"}
	elem := compress(ir.MkPrim(p, "index", ir.Ref(p, i), ir.Ref(p, v)), t.Elem)
	return &ir.Let{P: p, Vars: []*ir.Var{v}, Rhs: e,
		Body: ir.MkPrim(p, "build", ir.MkPrim(p, "size", ir.Ref(p, v)), ir.MkLam(p, i, elem))}
}
