// Package derive generates the bodies of derived functions that a
// program asks for with gdef, or calls, without writing them by hand
// (language.md section 5):
//
//	[D f]          the full Jacobian as a linear map: the Jacobian transform
//	               (jacobian.go) of f's body, in A-normal form
//	[fwd f]        (lmApply ([D f] x) dx)
//	[fwdfull f]    (tuple (f x) ([fwd f] x dx)), for callers differentiating
//	               a call of f (internal)
//	[rev f]        ([revacc f] x dr (ts_zero x)), or with --rev=bog
//	               [sufrevpass f] of [suffwdpass f]; [rev f k...] the
//	               gradient of the arguments k... only (wrtRev)
//	[revacc f]     ($addTo acc (lmApplyR dr ([D f] x))), reverse mode adding
//	               into an accumulator (internal)
//	[revfull f]    (tuple (f x) [revacc f]...), which the optimiser's
//	               split-bog pass cuts into the split passes (internal)
//	[suffwdpass f], [sufrevpass f], [bogrev f]
//	               split reverse mode: declared here, filled by split-bog
//	[sufrev f]     ([sufrevpass f] dr (get$2$2 ([suffwdpass f] x)))
//	[vrev f]       the value and the gradient from one forward sweep
//	[CL f]         f through the categorical language and back (package cl)
//	[shape f]      the shape of f's result without its values (shape.go)
//	[jac f]        the dense Jacobian: columns by [fwd f] or rows by
//	               [sufrevpass f] on one BOG, whichever are fewer (jac.go)
package derive

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ksc-lang/ksc/cl"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// Options control differentiation.
type Options struct {
	// Rev is how [rev f] is computed: "lm" (the default) through the
	// Jacobian and the accumulating reverse mode [revacc f], "suf"
	// through split reverse mode, [sufrevpass f] of [suffwdpass f], "bog"
	// the same with the passes cut from the optimised [revfull f]. The
	// split passes ([suffwdpass f], [sufrevpass f], [bogrev f], and so
	// [sufrev f]) are translated from the single-use form by Figure 23's
	// rules (package proc, procsplit.go) except under "bog", which keeps
	// the cut ones to compare with; a def the translation declines (a
	// call of a derived function, say) has cut passes under every
	// strategy.
	Rev string
	// Skip, if set, names derived functions to leave without a body: the
	// backend makes them (the Go backend's --ad=cps).
	Skip func(f *ir.Func) bool
	// Nested generates derivations of derived functions, [fwd [rev f]],
	// from the inner function's optimised body (nested.go). Without it
	// they wait: the driver derives again after optimising.
	Nested bool
}

// RevStrategies are the values of Options.Rev, the default first.
var RevStrategies = []string{"lm", "bog", "suf"}

// WantRev lists RevStrategies for an error message: "lm, bog or suf".
func WantRev() string {
	n := len(RevStrategies)
	return strings.Join(RevStrategies[:n-1], ", ") + " or " + RevStrategies[n-1]
}

// Derive fills in the body of every derived function of prog that has
// none, adding the derived functions they need.
func Derive(prog *ir.Program, opts Options) error {
	if opts.Rev != "" && !slices.Contains(RevStrategies, opts.Rev) {
		return fmt.Errorf("unknown reverse-mode strategy %q (want %s)", opts.Rev, WantRev())
	}
	d := &deriver{
		opts:     opts,
		prog:     prog,
		ns:       prog.Names(),
		prepared: map[*ir.Func]*prepared{},
		split:    map[*ir.Func]bool{},
	}
	for {
		n := len(prog.Funcs)
		for i := 0; i < len(prog.Funcs); i++ {
			f := prog.Funcs[i]
			if f.Kind == ir.DerivedFunc && f.Body == nil && !d.split[f] && (opts.Skip == nil || !opts.Skip(f)) {
				if nested(f) && opts.Skip != nil && opts.Skip(f.Base) {
					d.errorf(usePos(f), "ksc cannot generate %s with --ad=cps: the Go backend makes %s itself, not as code to differentiate", f.FullName(), f.Base.Name)
					continue
				}
				if opts.Nested && !Ready(f.Base) || !opts.Nested && waits(f) {
					continue // after the functions it differentiates are optimised
				}
				d.generate(f)
			}
		}
		d.close()
		if len(prog.Funcs) == n || len(d.errs) > 0 {
			break
		}
	}
	d.errs.Sort()
	if err := d.errs.Err(); err != nil {
		return err
	}
	order(prog)
	return nil
}

type deriver struct {
	opts     Options
	prog     *ir.Program
	ns       *ir.Names
	prepared map[*ir.Func]*prepared
	errs     syntax.ErrorList
	reported map[string]bool
	eff      lower.Effects
	split    map[*ir.Func]bool // passes of split reverse mode, made by the optimiser
	// procSplits are the split passes of --rev=suf, by base function.
	procSplits map[*ir.Func]*procSplit
}

// prepared is a function's body made ready for differentiation.
type prepared struct {
	params []*ir.Var
	body   ir.Expr
}

func (d *deriver) errorf(pos ir.Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	key := pos.String() + msg
	if d.reported == nil {
		d.reported = map[string]bool{}
	}
	if !d.reported[key] {
		d.reported[key] = true
		d.errs.Add(pos, "%s", msg)
	}
}

// usePos returns where a derived function was first needed.
func usePos(f *ir.Func) ir.Pos {
	if len(f.Uses) > 0 {
		return f.Uses[0]
	}
	return f.P
}

// generate fills in the body of one derived function.
func (d *deriver) generate(f *ir.Func) {
	defer func() {
		if r := recover(); r != nil {
			if fl, ok := r.(*failure); ok {
				if p := usePos(f); nested(f) && p != fl.pos {
					// Inside code ksc derived: the user asked for f here.
					d.errorf(p, "ksc cannot generate %s: %s (at %s)", f.FullName(), fl.msg, fl.pos)
					return
				}
				d.errorf(fl.pos, "%s", fl.msg)
				return
			}
			panic(ir.AtPos(r, usePos(f), f.FullName()))
		}
	}()
	if len(f.Name.Derivs) == 2 && f.Name.Derivs[0] == "shape" && f.Name.Wrt == nil {
		d.shapeOfDerived(f, usePos(f))
		return
	}
	if nested(f) {
		if o := f.Base; o != nil && (o.Name.Outer() == "jac" || o.Name.Outer() == "sparsejac") {
			d.errorf(usePos(f), "ksc cannot generate %s: derivations of Jacobians are not supported; for second derivatives use [jac [rev g]] (the Hessian) or [fwd [rev g]] (its products)", f.FullName())
			return
		}
		if d.nestedRev(f) {
			return
		}
	} else if len(f.Name.Derivs) != 1 && !(len(f.Name.Derivs) == 2 && ir.IsCL(f.Base)) {
		d.errorf(usePos(f), "ksc cannot generate %s: derivatives of derivatives are not supported", f.FullName())
		return
	}
	base := f.Base
	if ir.IsCL(base) {
		// [X [CL g]]: [CL g] is a def like any other once it has its
		// body, so X differentiates that.
		d.ensureBody(base)
	}
	if base == nil {
		d.errorf(usePos(f), "ksc cannot generate %s: %s is a primitive (its derivatives are built in; call the primitive)", f.FullName(), f.Name.Base)
		return
	}
	p := usePos(f)
	if reverseDeriv(f.Name.Derivs[0]) && d.noReverse(base) {
		return
	}
	if base.Name.Base == ir.PrimDefName(f.Name.Base) {
		// A derived function of a primitive, whose Base is the def
		// standing for it (typecheck's primDef): the same derivation of
		// that def, under the name the program uses.
		g, err := d.need(f.Name.Derivs[0], base, p)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		x := paramsOf(f, "x")[0]
		f.Body = ir.CallFunc(p, g, x)
		return
	}
	switch deriv := f.Name.Derivs[0]; deriv {
	case "D":
		d.jacobianBody(f, base)
	case "fwd", "fwdfull":
		dg, err := d.jacobianOf(base, p)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		x, dx := d.params(f, "x", "dx")
		wrt, _ := d.columns(f.Name.Wrt, base.Arg, p)
		if wrt != nil {
			// [fwd f I]: the tangent written out, zeros for the arguments
			// not at I, so that forward mode sees those parts are zero
			// and computes nothing from them (linmap.Forward's
			// structural zeros).
			dx = d.spreadTangent(p, wrt, x, dx)
		}
		if len(base.Name.Derivs) == 0 || ir.IsCL(base) {
			d.needActive(base, wrt, p) // activity.go
		}
		f.Body = ir.MkPrim(p, "lmApply", ir.CallFunc(p, dg, x), dx)
		if deriv == "fwdfull" {
			// (tuple (f x) (lmApply ([D f] x) dx)): the optimiser
			// computes both from one inlined Jacobian (see eliminate-lm).
			f.Body = ir.MkTuple(p, ir.CallFunc(p, base, x), f.Body)
		}
	case "revacc":
		dg, err := d.jacobianOf(base, p)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		x, dr, acc := d.params3(f)
		f.Body = ir.MkPrim(p, "$addTo", acc, ir.MkPrim(p, "lmApplyR", dr, ir.CallFunc(p, dg, x)))
	case "rev":
		if f.Name.Wrt != nil {
			d.wrtRev(f, base, p)
			return
		}
		if d.opts.Rev == "bog" || d.opts.Rev == "suf" {
			d.splitRev(f, base, p)
			return
		}
		ra, err := d.need("revacc", base, p)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		x, dr := d.params(f, "x", "dr")
		f.Body = ir.CallFunc(p, ra, x, dr, ir.MkPrim(p, "ts_zero", x))
	case "revfull":
		// (tuple (f x) ($addTo acc (lmApplyR dr ([D f] x)))): the optimiser
		// computes both from one inlined Jacobian (see eliminate-lm).
		dg, err := d.jacobianOf(base, p)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		x, dr, acc := d.params3(f)
		f.Body = ir.MkTuple(p, ir.CallFunc(p, base, x),
			ir.MkPrim(p, "$addTo", acc, ir.MkPrim(p, "lmApplyR", dr, ir.CallFunc(p, dg, x))))
	case "suffwdpass", "sufrevpass", "bogrev":
		if d.handSplit(f, base, p) {
			return
		}
		if d.opts.Rev != "bog" && d.procPasses(f, base, p) {
			return
		}
		// Split from the optimised [revfull f] by the split-bog pass.
		if _, err := d.need("revfull", base, p); err != nil {
			d.errorf(p, "%v", err)
			return
		}
		d.split[f] = true
	case "sufrev":
		d.splitRev(f, base, p)
	case "vrev":
		d.valueRev(f, base, p)
	case "CL":
		body, err := cl.Derive(base, d.ns)
		if err != nil {
			d.errorf(p, "ksc cannot generate %s: %v", f.FullName(), err)
			return
		}
		f.Params = base.Params
		f.OneParam = base.OneParam
		f.Body = body
	case "shape":
		d.shapeBody(f, base, p)
	case "jac":
		d.jacBody(f, base, p)
	case "sparsejac":
		d.sparsejacBody(f, base, p)
	case "pattern", "hpattern":
		d.patternBody(f, base, p, deriv == "hpattern")
	default:
		d.errorf(p, "ksc cannot generate %s yet (derivation %q is not implemented)", f.FullName(), deriv)
	}
}

// splitRev makes f (of type (Tuple S dT) -> dS) reverse mode through the
// split passes: ([sufrevpass g] dr (get$2$2 ([suffwdpass g] x))).
func (d *deriver) splitRev(f, base *ir.Func, p ir.Pos) {
	fw, rv, ok := d.splitPasses(base, p)
	if !ok {
		return
	}
	x, dr := d.params(f, "x", "dr")
	pb := d.ns.FreshVar(p, "pb", fw.Result)
	f.Body = ir.MkLet(p, pb, ir.CallFunc(p, fw, x), ir.CallFunc(p, rv, dr, ir.MkGet(p, 2, ir.Ref(p, pb))))
}

// wrtRev makes f, [rev g I], the gradient with respect to the arguments
// at the positions I only: the parts I of the gradient g's reverse mode
// adds into a zero, ($addTo (ts_zero x) (lmApplyR dr ([D g] x))), as
// [revacc g]'s body, which the optimiser turns into code in place. The
// parts left out are dead, so the optimiser removes the code that makes
// them. (With --rev bog too: the split passes compute the whole gradient.)
func (d *deriver) wrtRev(f, base *ir.Func, p ir.Pos) {
	dg, err := d.jacobianOf(base, p)
	if err != nil {
		d.errorf(p, "%v", err)
		return
	}
	x, dr := d.params(f, "x", "dr")
	grad := ir.MkPrim(p, "$addTo", ir.MkPrim(p, "ts_zero", x), ir.MkPrim(p, "lmApplyR", dr, ir.CallFunc(p, dg, x)))
	f.Body = d.wrtParts(p, f.Name.Wrt, base.Arg, grad)
}

// wrtParts returns the parts at the positions wrt of the gradient g with
// respect to an argument of type s: g itself if s is not a tuple (the one
// position is 0), the part at a single position, or the tuple of the
// parts.
func (d *deriver) wrtParts(p ir.Pos, wrt []int, s *types.Type, g ir.Expr) ir.Expr {
	t := g.Type()
	if s.Kind != types.Tuple {
		return g
	}
	v := d.ns.FreshVar(p, "grad", t)
	parts := make([]ir.Expr, len(wrt))
	for k, i := range wrt {
		parts[k] = ir.MkGet(p, i+1, ir.Ref(p, v))
	}
	if len(parts) == 1 {
		return ir.MkLet(p, v, g, parts[0])
	}
	return ir.MkLet(p, v, g, ir.MkTuple(p, parts...))
}

// valueRev makes f, [vrev g] of type (Tuple S dT) -> (Tuple T dS), the
// value and the gradient from one forward sweep: by default
// ([revfull g] x dr (ts_zero x)), whose value and gradient the optimiser
// computes from one inlined Jacobian; with --rev bog through the split
// passes, (tuple pb.1 ([sufrevpass g] dr pb.2)) with
// pb = ([suffwdpass g] x).
func (d *deriver) valueRev(f, base *ir.Func, p ir.Pos) {
	x, dr := d.params(f, "x", "dr")
	if d.opts.Rev != "bog" && f.Name.Wrt != nil {
		// (let (r (tuple (g x) ($addTo (ts_zero x) (lmApplyR dr ([D g] x)))))
		//   (tuple r.1 (the parts I of r.2))),
		// whose tuple eliminate-lm computes as [revfull g]'s body; the
		// parts of the gradient left out are then dead code.
		dg, err := d.jacobianOf(base, p)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		full := ir.MkTuple(p, ir.CallFunc(p, base, x),
			ir.MkPrim(p, "$addTo", ir.MkPrim(p, "ts_zero", x), ir.MkPrim(p, "lmApplyR", dr, ir.CallFunc(p, dg, x))))
		r := d.ns.FreshVar(p, "r", full.T)
		f.Body = ir.MkLet(p, r, full, ir.MkTuple(p, ir.MkGet(p, 1, ir.Ref(p, r)),
			d.wrtParts(p, f.Name.Wrt, base.Arg, ir.MkGet(p, 2, ir.Ref(p, r)))))
		return
	}
	if d.opts.Rev != "bog" {
		rf, err := d.need("revfull", base, p)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		f.Body = ir.CallFunc(p, rf, x, dr, ir.MkPrim(p, "ts_zero", x))
		return
	}
	fw, rv, ok := d.splitPasses(base, p)
	if !ok {
		return
	}
	pb := d.ns.FreshVar(p, "pb", fw.Result)
	var grad ir.Expr = ir.CallFunc(p, rv, dr, ir.MkGet(p, 2, ir.Ref(p, pb)))
	if f.Name.Wrt != nil {
		grad = d.wrtParts(p, f.Name.Wrt, base.Arg, grad)
	}
	f.Body = ir.MkLet(p, pb, ir.CallFunc(p, fw, x), ir.MkTuple(p, ir.MkGet(p, 1, ir.Ref(p, pb)), grad))
}

// splitPasses returns [suffwdpass g] and [sufrevpass g], declaring them,
// or reports why they cannot be made and returns false.
func (d *deriver) splitPasses(g *ir.Func, p ir.Pos) (fw, rv *ir.Func, ok bool) {
	fw, err := d.need("suffwdpass", g, p)
	if err == nil {
		rv, err = d.need("sufrevpass", g, p)
	}
	if err != nil {
		d.errorf(p, "%v", err)
		return nil, nil, false
	}
	return fw, rv, true
}

// params gives a derived function of a pair two parameters and returns
// references to them.
func (d *deriver) params(f *ir.Func, a, b string) (ir.Expr, ir.Expr) {
	p := f.P
	va := &ir.Var{P: p, T: f.Arg.Elems[0], Name: a}
	vb := &ir.Var{P: p, T: f.Arg.Elems[1], Name: b}
	f.Params = []*ir.Var{va, vb}
	return ir.Ref(p, va), ir.Ref(p, vb)
}

func (d *deriver) params3(f *ir.Func) (ir.Expr, ir.Expr, ir.Expr) {
	p := f.P
	vs := []*ir.Var{
		{P: p, T: f.Arg.Elems[0], Name: "x"},
		{P: p, T: f.Arg.Elems[1], Name: "dr"},
		{P: p, T: f.Arg.Elems[2], Name: "acc"},
	}
	f.Params = vs
	return ir.Ref(p, vs[0]), ir.Ref(p, vs[1]), ir.Ref(p, vs[2])
}

// lookup returns the function [deriv g], written by hand or derived, or nil.
func (d *deriver) lookup(deriv string, g *ir.Func) *ir.Func {
	return d.prog.Lookup(g.Name.Derive(deriv), g.BaseArg)
}

// ensureBody generates the body of [CL h] now if it has none yet, for a
// derivation of it that needs it.
func (d *deriver) ensureBody(g *ir.Func) {
	if ir.IsCL(g) && g.Body == nil && g.Kind == ir.DerivedFunc {
		d.generate(g)
	}
}

// need returns [deriv g], declaring it (to be derived) if it does not
// exist. An edef cannot be derived: it needs a hand-written derivative.
func (d *deriver) need(deriv string, g *ir.Func, pos ir.Pos) (*ir.Func, error) {
	if f := d.lookup(deriv, g); f != nil {
		f.Uses = append(f.Uses, pos)
		return f, nil
	}
	d.ensureBody(g)
	// The pattern of an edef is dense (patternBody): it needs no body.
	if deriv != "pattern" && deriv != "hpattern" && (g.Kind == ir.EdefFunc || g.Body == nil && !(d.opts.Nested && g.Kind == ir.DerivedFunc)) && !(splitDeriv(deriv) && d.handRev(g) != nil) {
		want := deriv
		if want == "revacc" {
			want = "rev"
		}
		return nil, fmt.Errorf("ksc cannot differentiate %s: it is declared by edef; write %s by hand", g.FullName(), g.Name.Derive(want))
	}
	if len(g.Name.Derivs) > 0 && !ir.IsCL(g) && !d.opts.Nested {
		return nil, fmt.Errorf("ksc cannot differentiate %s: derivatives of derivatives are not supported", g.FullName())
	}
	arg, res, msg := ir.DerivedSig(deriv, g.Arg, g.Result, d.prog.BogType(g))
	if msg != "" {
		return nil, fmt.Errorf("ksc cannot differentiate %s: %s", g.FullName(), msg)
	}
	f := &ir.Func{P: g.P, Name: g.Name.Derive(deriv), BaseArg: g.BaseArg, Arg: arg, Result: res,
		Kind: ir.DerivedFunc, Base: g, Uses: []ir.Pos{pos}, Implied: true}
	d.prog.Funcs = append(d.prog.Funcs, f)
	return f, nil
}

// jacobianOf returns [D g], to be derived if g is a def. For an edef the
// declaration suffices when [fwd g] and [rev g] are written by hand.
func (d *deriver) jacobianOf(g *ir.Func, pos ir.Pos) (*ir.Func, error) {
	if f := d.lookup("D", g); f != nil {
		return f, nil
	}
	d.ensureBody(g)
	if g.Kind == ir.EdefFunc || g.Body == nil || byIdentity(g) || isVrev(g) {
		arg, res, msg := ir.DerivedSig("D", g.Arg, g.Result, nil)
		if msg != "" {
			return nil, fmt.Errorf("ksc cannot differentiate %s: %s", g.FullName(), msg)
		}
		// A declaration only: its uses are applied through the
		// hand-written [fwd g] and [rev g] (or, for g = [rev h] or
		// [vrev h], those nested.go writes).
		f := &ir.Func{P: g.P, Name: g.Name.Derive("D"), BaseArg: g.BaseArg, Arg: arg, Result: res,
			Kind: ir.EdefFunc, Base: g, Uses: []ir.Pos{pos}}
		d.prog.Funcs = append(d.prog.Funcs, f)
		return f, nil
	}
	return d.need("D", g, pos)
}

// prepare returns g's body ready for differentiation: prelude inlined,
// maps and friends as builds, A-normal form with fresh names.
func (d *deriver) prepare(g *ir.Func) (*prepared, error) {
	if pr, ok := d.prepared[g]; ok {
		return pr, nil
	}
	body, err := lower.InlinePrelude(ir.Copy(g.Body, ir.Pos{}))
	if err != nil {
		return nil, err
	}
	body = lower.Builds(body, d.ns)
	if len(g.Name.Derivs) > 0 {
		body = ifoldsAsFolds(body, d.ns)
		body = d.chosenAsFull(body)
	}
	if d.eff == nil {
		d.eff = lower.ComputeEffects(d.prog)
	}
	anf, params := lower.ANF(body, g.Params, d.ns)
	// With every name distinct, the simplifier can split the tuple lets
	// that inlining makes, so each parameter keeps its own map.
	anf = (&lower.Simplifier{Eff: d.eff}).Simplify(anf)
	pr := &prepared{params: params, body: anf}
	d.prepared[g] = pr
	return pr, nil
}

// jacobianBody builds the body of [D g]: the argument's map is the
// identity (each parameter's the projection to it), then the Jacobian
// transform of the body.
func (d *deriver) jacobianBody(f, g *ir.Func) {
	pr, err := d.prepare(g)
	if err != nil {
		d.errorf(usePos(f), "%v", err)
		return
	}
	p := g.P
	j := &jac{d: d, ns: d.ns, env: map[string]*ir.Var{}}
	var lets []*ir.Let
	if len(pr.params) == 1 {
		x := pr.params[0]
		j.root = ir.Ref(p, x)
		if differentiable(x.T) {
			dx := d.ns.FreshVar(p, "d"+x.Name, types.LMOf(x.T, x.T))
			lets = append(lets, &ir.Let{P: p, Vars: []*ir.Var{dx}, Rhs: ir.MkPrim(p, "lmOne", ir.Ref(p, x)), Of: x})
			j.env[x.Name] = dx
		}
	} else {
		refs := make([]ir.Expr, len(pr.params))
		for i, v := range pr.params {
			refs[i] = ir.Ref(p, v)
		}
		root := d.ns.FreshVar(p, "x", g.Arg)
		lets = append(lets, &ir.Let{P: p, Vars: []*ir.Var{root}, Rhs: ir.MkTuple(p, refs...)})
		j.root = ir.Ref(p, root)
		for k, v := range pr.params {
			if !differentiable(v.T) {
				continue
			}
			dv := d.ns.FreshVar(p, "d"+v.Name, types.LMOf(g.Arg, v.T))
			lets = append(lets, &ir.Let{P: p, Vars: []*ir.Var{dv}, Rhs: j.projection(p, pr.params, k), Of: v})
			j.env[v.Name] = dv
		}
	}
	body := j.block(pr.body)
	if body == nil {
		body = ir.MkPrim(p, "lmZero", j.root, pr.body)
	}
	for i := len(lets) - 1; i >= 0; i-- {
		l := lets[i]
		body = &ir.Let{P: l.P, Vars: l.Vars, Rhs: l.Rhs, Body: body, Of: l.Of}
	}
	f.Params = pr.params
	f.OneParam = g.OneParam
	f.Body = body
}

// close declares the derivatives that applying linear maps will need:
// applying [D g] forwards needs [fwd g]; reverse-applying it needs
// [revacc g], or a hand-written [rev g].
func (d *deriver) close() {
	for i := 0; i < len(d.prog.Funcs); i++ {
		f := d.prog.Funcs[i]
		if f.Body == nil {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					panic(ir.AtPos(r, f.P, f.FullName()))
				}
			}()
			d.closeApplies(f)
		}()
	}
}

// closeApplies declares what each application of a linear map in f's body
// needs. A map bound by a let is followed to its binding, and each binding
// is walked once: substituting bound maps into their uses would double
// the term at every let of a chain.
func (d *deriver) closeApplies(f *ir.Func) {
	env := map[string]ir.Expr{} // linear-map variables in scope: their bindings
	var walk func(e ir.Expr)
	walk = func(e ir.Expr) {
		ir.Inspect(e, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.Let:
				if !e.Rhs.Type().Contains(types.LM) {
					return true
				}
				walk(e.Rhs)
				saved := make([]ir.Expr, len(e.Vars))
				for i, v := range e.Vars {
					saved[i] = env[v.Name]
					env[v.Name] = e.Rhs
					if t, ok := e.Rhs.(*ir.Tuple); ok && e.Pattern {
						env[v.Name] = t.Elems[i]
					}
				}
				walk(e.Body)
				for i, v := range e.Vars {
					if saved[i] == nil {
						delete(env, v.Name)
					} else {
						env[v.Name] = saved[i]
					}
				}
				return false
			case *ir.Call:
				if e.Prim == nil {
					return true
				}
				var m ir.Expr
				var deriv string
				switch e.Prim.Name {
				case "lmApply":
					m, deriv = e.Args[0], "fwd"
				case "lmPattern":
					m, deriv = e.Args[0], "pattern"
				case "lmHessianPattern":
					m, deriv = e.Args[0], "hpattern"
				case "lmApplyR":
					m, deriv = e.Args[1], "revacc"
				default:
					return true
				}
				for _, l := range d.leaves(m, f, env) {
					d.needApply(deriv, l.g, l.pos)
					if deriv == "revacc" && (ir.SplitCalls || len(f.Name.Derivs) > 0 && f.Name.Derivs[0] == "revfull") {
						// Splitting f splits the calls too; reverse mode
						// calls g's split passes where f reads g's value,
						// so as not to run g's primal code again
						// (ir.SplitCalls, linmap.Reverse).
						d.needSplit(l.g, l.pos)
					}
				}
			}
			return true
		})
	}
	walk(f.Body)
}

// A leaf is a call of [D g] that applying a map reaches, and where it is.
type leaf struct {
	g   *ir.Func
	pos ir.Pos
}

// leaves returns the functions g whose [D g] applying m reaches: the calls
// of [D g] in m and in the bindings of the linear-map variables m refers
// to (env), and, where m calls [D h] for the function h that f derives
// (whose body is inlined when f is defined), those in [D h]'s body. Each
// binding is walked once.
func (d *deriver) leaves(m ir.Expr, f *ir.Func, env map[string]ir.Expr) []leaf {
	var out []leaf
	seen := map[*ir.Func]bool{}
	walked := map[ir.Expr]bool{}
	var walk func(e ir.Expr, inline bool)
	walk = func(e ir.Expr, inline bool) {
		ir.Inspect(e, func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok && inline {
				if b := env[v.Name]; b != nil && !walked[b] {
					walked[b] = true
					walk(b, inline)
				}
				return true
			}
			c, ok := x.(*ir.Call)
			if !ok || c.Fn == nil || len(c.Fn.Name.Derivs) == 0 || c.Fn.Name.Derivs[0] != "D" || c.Fn.Base == nil {
				return true
			}
			g := c.Fn.Base
			if inline && f.Base == g && c.Fn.Body != nil {
				walk(c.Fn.Body, false)
				return true
			}
			if !seen[g] {
				seen[g] = true
				out = append(out, leaf{g: g, pos: c.P})
			}
			return true
		})
	}
	walk(m, true)
	return out
}

// needSplit declares the passes of g that splitting a caller of g needs,
// unless g's reverse mode is written by hand.
func (d *deriver) needSplit(g *ir.Func, pos ir.Pos) {
	if g.Kind == ir.EdefFunc || g.Body == nil {
		return // no passes to split: its [rev g] is written by hand (needApply)
	}
	if byIdentity(g) || isVrev(g) {
		return // reverse mode of [rev h] is [revacc [rev h]] (nested.go), and so for [vrev h]
	}
	if d.eff == nil {
		d.eff = lower.ComputeEffects(d.prog)
	}
	if lower.IsLeaf(g, d.eff) {
		return // run again by [revacc g] (see lower.IsLeaf)
	}
	if r := d.lookup("rev", g); r != nil && r.Kind != ir.DerivedFunc {
		return
	}
	for _, deriv := range []string{"suffwdpass", "bogrev"} {
		if _, err := d.need(deriv, g, pos); err != nil {
			d.errorf(pos, "%v", err)
		}
	}
}

// needApply declares what applying [D g] in direction deriv needs.
func (d *deriver) needApply(deriv string, g *ir.Func, pos ir.Pos) {
	if deriv == "revacc" {
		if r := d.lookup("rev", g); r != nil && r.Kind != ir.DerivedFunc {
			return // hand-written reverse mode
		}
	}
	if _, err := d.need(deriv, g, pos); err != nil {
		d.errorf(pos, "%v", err)
		return
	}
	if deriv == "fwd" && d.lookup("fwd", g).Kind == ir.DerivedFunc {
		// A call of g and the application of its map become one call
		// of [fwdfull g] (linmap.Forward).
		if _, err := d.need("fwdfull", g, pos); err != nil {
			d.errorf(pos, "%v", err)
		}
	}
}

// order sorts the functions so that each comes after those it calls
// (self-recursion apart), keeping the program's order where it can.
func order(prog *ir.Program) {
	index := map[*ir.Func]int{}
	for i, f := range prog.Funcs {
		index[f] = i
	}
	var out []*ir.Func
	state := map[*ir.Func]int{} // 1 visiting, 2 done
	var visit func(f *ir.Func)
	visit = func(f *ir.Func) {
		if state[f] != 0 {
			return
		}
		state[f] = 1
		if f.Body != nil {
			callees := ir.Funcs(f.Body)
			sort.SliceStable(callees, func(a, b int) bool { return index[callees[a]] < index[callees[b]] })
			for _, g := range callees {
				if _, ok := index[g]; ok && g != f {
					visit(g)
				}
			}
		}
		state[f] = 2
		out = append(out, f)
	}
	for _, f := range prog.Funcs {
		visit(f)
	}
	prog.Funcs = out
}

// reverseDeriv reports whether a derivation runs reverse mode.
func reverseDeriv(deriv string) bool {
	switch deriv {
	case "rev", "revacc", "revfull", "vrev", "sufrev", "suffwdpass", "sufrevpass", "bogrev":
		return true
	}
	return false
}

// noReverse reports, for each loop of g's body whose reverse pass ksc
// must not make (ir.Program.NoReverse), why, and whether there was one.
func (d *deriver) noReverse(g *ir.Func) bool {
	if g.Body == nil || len(d.prog.NoReverse) == 0 {
		return false
	}
	found := false
	ir.Inspect(g.Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok && c.Prim != nil {
			if why, no := d.prog.NoReverse[c.P]; no && c.Prim.Name == "fold" {
				d.errorf(c.P, "%s", why)
				found = true
			}
		}
		return true
	})
	return found
}
