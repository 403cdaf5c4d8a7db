package typecheck

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// The primitive table's ks text (ir.Prim.Def, ir.Prim.D), compiled once
// for the process and shared by every package that reads it (lower,
// eval, cl, derive, the Go backend's cps): the prelude definitions all at
// once on first use, each derivative rule at the argument types of its
// first use. Both are memos of pure functions of the read-only table, so
// no caller sees a difference but the time: what they return must not be
// changed (ir.Copy it first, as every caller does).
var (
	preludeDefs = sync.OnceValue(func() map[*ir.Prim]compiledDef {
		m := map[*ir.Prim]compiledDef{}
		for _, p := range ir.Prims() {
			if p.Def != "" {
				f, err := checkPreludeDef(p)
				m[p] = compiledDef{f, err}
			}
		}
		return m
	})
	rules sync.Map // ruleKey -> compiledRule
)

type compiledDef struct {
	f   *ir.Func
	err error
}

type compiledRule struct {
	e   ir.Expr
	err error
}

// PreludeDef returns the ks definition of a prelude primitive that has one
// (ir.Prim.Def), type-checked, or nil if p has none. The definition is
// shared: copy its body before changing it.
func PreludeDef(p *ir.Prim) (*ir.Func, error) {
	if p.Def == "" {
		return nil, nil
	}
	d := preludeDefs()[p]
	return d.f, d.err
}

func checkPreludeDef(p *ir.Prim) (*ir.Func, error) {
	f, err := syntax.ParseFile("<prelude "+p.Name+">", []byte(p.Def))
	if err != nil {
		return nil, fmt.Errorf("prelude %s: %w", p, err)
	}
	prog, err := Check([]*syntax.File{f})
	if err != nil {
		return nil, fmt.Errorf("prelude %s: %w", p, err)
	}
	if len(prog.Funcs) != 1 || !prog.Funcs[0].Arg.Equal(p.Sig.ArgType()) || !prog.Funcs[0].Result.Equal(p.Sig.Result) {
		return nil, fmt.Errorf("prelude %s: the definition does not match the signature", p)
	}
	return prog.Funcs[0], nil
}

// Rule returns derivative rule k of the primitive pr (ir.Prim.D[k], a ks
// expression over the argument parts and the result), type-checked over
// params (the parts' and the result's variables, by the names the rule
// uses). The expression is shared: copy it before changing it.
func Rule(pr *ir.Prim, k int, params []*ir.Var) (ir.Expr, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%p/%d", pr, k)
	for _, v := range params {
		b.WriteString("/" + v.Name + ":" + v.T.String())
	}
	key := b.String()
	if r, ok := rules.Load(key); ok {
		return r.(compiledRule).e, r.(compiledRule).err
	}
	e, err := CheckExpr(fmt.Sprintf("<derivative of %s>", pr.Name), pr.D[k], params)
	// Two first uses at once both compile; both return the one kept.
	r, _ := rules.LoadOrStore(key, compiledRule{e, err})
	return r.(compiledRule).e, r.(compiledRule).err
}

// CheckExpr type-checks a ks expression over the given variables, with
// only the primitives in scope (including those internal to derived code). The derivative rules of the primitive
// table and the laws of the optimiser are written in ks and read this way.
func CheckExpr(name, src string, vars []*ir.Var) (ir.Expr, error) {
	e, err := syntax.ParseExpr(name, []byte(src))
	if err != nil {
		return nil, err
	}
	c := newChecker()
	c.internal = true
	var sc *scope
	for _, v := range vars {
		sc = sc.push(v)
	}
	x := c.expr(e, sc)
	c.errs.Sort()
	if err := c.errs.Err(); err != nil {
		return nil, err
	}
	return x, nil
}
