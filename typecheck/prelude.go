package typecheck

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// PreludeDef returns the ks definition of a prelude primitive that has one
// (ir.Prim.Def), type-checked, or nil if p has none. The definition is
// checked afresh on every call; the caller may keep the result.
func PreludeDef(p *ir.Prim) (*ir.Func, error) {
	if p.Def == "" {
		return nil, nil
	}
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
