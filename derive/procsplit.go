package derive

import (
	"fmt"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/proc"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

// procSplit is a function's split reverse mode made from its body in the
// procedure language (package proc), or why it could not be.
type procSplit struct {
	split  *proc.Split
	params []*ir.Var
	err    error
}

// procResolver gives package proc the split passes of callees and the
// derivative rules of primitives.
type procResolver struct {
	d *deriver
}

func (r procResolver) Passes(g *ir.Func, p ir.Pos) (fwd, rev, revAcc *ir.Func, err error) {
	if g.Kind == ir.DerivedFunc {
		// Reverse mode of a derived callee ([rev h]) is nested.go's, not
		// split passes: the caller's passes are cut (split-bog) instead.
		return nil, nil, nil, fmt.Errorf("a call of %s, a derived function", g.FullName())
	}
	if fwd, err = r.d.need("suffwdpass", g, p); err != nil {
		return nil, nil, nil, err
	}
	if rev, err = r.d.need("sufrevpass", g, p); err != nil {
		return nil, nil, nil, err
	}
	revAcc, err = r.d.need("bogrev", g, p)
	return fwd, rev, revAcc, err
}

func (r procResolver) Rule(pr *ir.Prim, k int, params []*ir.Var) (ir.Expr, error) {
	return typecheck.Rule(pr, k, params)
}

// procPasses fills f, a split pass of base, from base's body translated
// by Figure 23's rules (unless --rev=bog), and reports whether it did; where
// base's body is not in the procedure language (a buildFromSparse,
// say), it returns false and f is split from [revfull base]
// instead.
func (d *deriver) procPasses(f, base *ir.Func, p ir.Pos) bool {
	if d.procSplits == nil {
		d.procSplits = map[*ir.Func]*procSplit{}
	}
	ps := d.procSplits[base]
	if ps == nil {
		ps = d.makeProcSplit(base)
		d.procSplits[base] = ps
	}
	if ps.err != nil {
		return false
	}
	s := ps.split
	bog := d.prog.BogType(base)
	switch f.Name.Outer() {
	case "suffwdpass":
		x := &ir.Var{P: p, T: f.Arg, Name: "x"}
		f.Params = []*ir.Var{x}
		f.OneParam = true
		// F ends in (tuple value tape): the tape wrapped there.
		items, tail := ir.ChainItems(ir.Copy(s.Fwd, ir.Pos{}))
		vt := tail.(*ir.Tuple).Elems
		body := ir.WrapChain(items, ir.MkTuple(p, vt[0], ir.MkPrim(p, "$wrap", vt[1], &ir.Dummy{P: p, T: bog})))
		if len(ps.params) == 1 {
			body = ir.MkLet(p, ps.params[0], ir.Ref(p, x), body)
		} else {
			body = &ir.Let{P: p, Vars: ps.params, Pattern: true, Rhs: ir.Ref(p, x), Body: body}
		}
		f.Body = body
	case "bogrev":
		v := paramsOf(f, "dr", "bog", "acc")
		f.Body = unwrapTape(s.Tape, v[1], s.RevAcc)
	case "sufrevpass":
		v := paramsOf(f, "dr", "bog")
		f.Body = unwrapTape(s.Tape, v[1], s.Rev)
	default:
		return false
	}
	return true
}

// unwrapTape is a reverse pass over tape, body, reading it from the
// record b: (let ((fields...) ($unwrap b)) ...) where body takes the
// tape apart first, the shape of the passes bog.Split gives (which
// loop-tail recognises).
func unwrapTape(tape *ir.Var, b ir.Expr, body ir.Expr) ir.Expr {
	p := body.Pos()
	unwrap := ir.MkPrim(p, "$unwrap", b)
	body = ir.Copy(body, ir.Pos{})
	if l, ok := body.(*ir.Let); ok && l.Pattern {
		if v, ok := l.Rhs.(*ir.Var); ok && v.Name == tape.Name && !ir.Occurs(tape.Name, l.Body) {
			l.Rhs = unwrap
			return l
		}
	}
	return ir.MkLet(p, tape, unwrap, body)
}

// makeProcSplit translates base's prepared body and defines its BOG type.
func (d *deriver) makeProcSplit(base *ir.Func) *procSplit {
	// A call of g with a hand-written [rev g] is translated as any call:
	// g's passes (handsplit.go) record its argument and apply [rev g].
	pr, err := d.prepare(base)
	if err != nil {
		return &procSplit{err: err}
	}
	b, err := proc.FromExpr(d.inlineLeaves(pr.body, base), pr.params, d.ns)
	if err != nil {
		return &procSplit{err: err}
	}
	if err := proc.Check(b, pr.params); err != nil {
		return &procSplit{err: err}
	}
	bog := d.prog.BogType(base)
	if bog.Kind != types.Named {
		return &procSplit{err: errBogDefined}
	}
	p := base.P
	dt, _ := types.Tangent(base.Arg)
	rt, _ := types.Tangent(base.Result)
	// The names the passes give their parameters (paramsOf).
	dr := &ir.Var{P: p, T: rt, Name: "dr"}
	acc := &ir.Var{P: p, T: dt, Name: "acc"}
	s, err := proc.Reverse(b, pr.params, dr, acc, procResolver{d}, d.ns)
	if err != nil {
		return &procSplit{err: err}
	}
	if bog.Def != nil && !bog.Def.Equal(s.Tape.T) {
		// Passes of an earlier round defined another record.
		return &procSplit{err: errBogDefined}
	}
	bog.SetDef(s.Tape.T)
	return &procSplit{split: s, params: pr.params}
}

// inlineLeaves inlines the calls of small primal leaf functions
// (lower.IsLeaf: a sigmoid) in body, as the optimiser's inline-leaves
// does before split reverse mode cuts its passes: a call translated by
// Figure 23 records a callee's record per call.
func (d *deriver) inlineLeaves(body ir.Expr, base *ir.Func) ir.Expr {
	inlined := false
	body = ir.Map(body, func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok || c.Fn == nil || c.Fn == base || len(c.Fn.Name.Derivs) > 0 || !lower.IsLeaf(c.Fn, d.eff) ||
			d.handRev(c.Fn) != nil { // its reverse mode is [rev g], not its body's
			return e
		}
		g := c.Fn
		// The leaf's body as prepare makes a body: prelude functions
		// inlined, constVec and Vec_init as builds.
		gb, err := lower.InlinePrelude(ir.Copy(g.Body, ir.Pos{}))
		if err != nil {
			return e
		}
		gb, params := lower.ANF(lower.Builds(gb, d.ns), g.Params, d.ns)
		anf := *g
		anf.Params = params
		inlined = true
		return lower.BindParams(&anf, c.Args, gb, c.P)
	})
	if !inlined {
		return body
	}
	// The parameters bound as a tuple split, and an argument the leaf
	// does not read dropped (tests/testdata/ad/unused_arg.ks).
	return (&lower.Simplifier{Eff: d.eff}).Simplify(body)
}

type procError string

func (e procError) Error() string { return string(e) }

const errBogDefined = procError("the record type is defined already, as another type")
