package derive

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// shapeBody makes the body of [shape f] (language.md section 5): f's body
// with its result replaced by an expression of the result's shape
// (of), so that what only fills the tensors of the result is never
// computed: the lets whose values the shape does not read are dropped,
// while sizes, the conditions of ifs, asserts and the shapes of callees
// remain. A value whose shape cannot be told from its
// expression (a fold's, a primitive's result) is computed and its shape
// taken ($shape).
func (d *deriver) shapeBody(f, base *ir.Func, p ir.Pos) {
	if _, ok := types.Shape(base.Result); !ok {
		d.errorf(p, "ksc cannot generate %s: a function returning %s has no shape", f.FullName(), base.Result)
		return
	}
	// Parameters of its own, named as f's, which the copied body reads.
	f.Params = make([]*ir.Var, len(base.Params))
	for i, v := range base.Params {
		f.Params[i] = &ir.Var{P: v.P, T: v.T, Name: v.Name}
	}
	f.OneParam = base.OneParam
	s := &shaper{d: d, p: p, ns: d.ns, known: map[string]*ir.Var{}}
	f.Body = s.of(ir.Copy(base.Body, ir.Pos{}))
}

// A shaper writes the shape expressions of one body. known maps a
// variable bound by a let to the variable bound, right after it, to its
// shape: the shape of a use is that variable, so that the value is
// needed only where something else reads it.
type shaper struct {
	d     *deriver
	p     ir.Pos
	ns    *ir.Names
	known map[string]*ir.Var
}

// of returns an expression of the shape of e's value, of type Sh(e's
// type).
func (s *shaper) of(e ir.Expr) ir.Expr {
	t := e.Type()
	if t.IsUniform() {
		return ir.MkTuple(e.Pos()) // every value of t looks alike
	}
	at := e.Pos()
	switch x := e.(type) {
	case *ir.Var:
		if sh := s.known[x.Name]; sh != nil {
			return ir.Ref(x.P, sh)
		}
	case *ir.Let:
		// A value the shape does not read is not computed, whatever its
		// effects ([shape f] does not run f: an edef it calls is not
		// called, a value it prints not printed).
		var out ir.Expr
		if x.Pattern || len(x.Vars) != 1 || x.Vars[0].T.IsUniform() {
			out = s.of(x.Body)
		} else {
			v := x.Vars[0]
			rhs := s.of(x.Rhs)
			sh := s.ns.FreshVar(v.P, v.Name+"_shape", rhs.Type())
			s.known[v.Name] = sh
			out = s.of(x.Body)
			if ir.Occurs(sh.Name, out) {
				out = &ir.Let{P: x.P, Vars: []*ir.Var{sh}, Rhs: rhs, Body: out}
			}
		}
		for _, v := range x.Vars {
			if ir.Occurs(v.Name, out) {
				return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: x.Rhs, Body: out, Of: x.Of}
			}
		}
		return out
	case *ir.If:
		return ir.MkIf(x.P, x.Cond, s.of(x.Then), s.of(x.Else))
	case *ir.Assert:
		return &ir.Assert{P: x.P, Cond: x.Cond, Body: s.of(x.Body), Msg: x.Msg}
	case *ir.Tuple:
		elems := make([]ir.Expr, len(x.Elems))
		for i, el := range x.Elems {
			elems[i] = s.of(el)
		}
		return ir.MkTuple(x.P, elems...)
	case *ir.Get:
		// A tuple's shape is the tuple of its parts' shapes (the part is
		// not uniform, so neither is the tuple).
		return ir.MkGet(x.P, x.I, s.of(x.X))
	case *ir.Call:
		if x.Fn != nil {
			if len(x.Fn.Name.Derivs) == 0 && x.Fn.Kind != ir.EdefFunc && x.Fn.Body != nil {
				if sg, err := s.d.need("shape", x.Fn, s.p); err == nil {
					return ir.CallFunc(x.P, sg, x.Args...)
				}
			}
			break
		}
		switch x.Prim.Name {
		case "build":
			lam := x.Args[1].(*ir.Lam)
			if t.Elem.IsUniform() {
				return x.Args[0] // the sizes
			}
			return ir.MkPrim(x.P, "build", x.Args[0], ir.MkLam(lam.P, lam.Param, s.of(lam.Body)))
		case "constVec":
			if t.Elem.IsUniform() {
				return x.Args[0]
			}
			return ir.MkPrim(x.P, "constVec", x.Args[0], s.of(x.Args[1]))
		case "index":
			// The element is not uniform: the tensor's shape is a tensor
			// of its elements' shapes.
			return ir.MkPrim(x.P, "index", x.Args[0], s.of(x.Args[1]))
		}
		if x.Prim.Identity {
			return s.of(x.Args[0])
		}
	}
	return ir.MkPrim(at, "$shape", e)
}

// shapeOfDerived makes the body of [shape [X g]], the shape of a derived
// function's result. A tangent has the shape of the value it is a tangent
// of (types.Tangent keeps every tensor and tuple, and a uniform type's
// tangent is uniform), so [shape [fwd g]] is [shape g] at the point,
// [shape [rev g]] and [shape [sufrev g]] the shape of the point, and
// [shape [vrev g]] both; [shape [CL g]] is [shape g]. Any other derived
// function (one of the arguments it differentiates, [rev g 0]; a shape of
// a shape) is run and its result's shape taken.
func (d *deriver) shapeOfDerived(f *ir.Func, p ir.Pos) {
	inner := f.Base
	g := inner.Base
	shapeOfG := func(x ir.Expr) ir.Expr {
		if g == nil || g.Kind == ir.EdefFunc || g.Body == nil || len(g.Name.Derivs) > 0 {
			return nil
		}
		sg, err := d.need("shape", g, p)
		if err != nil {
			return nil
		}
		return ir.CallFunc(p, sg, x)
	}
	if inner.Name.Wrt == nil {
		switch inner.Name.Derivs[0] {
		case "fwd":
			x, _ := d.params(f, "x", "dx")
			if b := shapeOfG(x); b != nil {
				f.Body = b
				return
			}
		case "rev", "sufrev":
			x, _ := d.params(f, "x", "dr")
			f.Body = ir.MkPrim(p, "$shape", x)
			return
		case "vrev":
			x, _ := d.params(f, "x", "dr")
			if b := shapeOfG(x); b != nil {
				f.Body = ir.MkTuple(p, b, ir.MkPrim(p, "$shape", x))
				return
			}
		case "CL":
			x := &ir.Var{P: f.P, T: f.Arg, Name: "x"}
			f.Params, f.OneParam = []*ir.Var{x}, true
			if b := shapeOfG(ir.Ref(p, x)); b != nil {
				f.Body = b
				return
			}
		}
	}
	x := &ir.Var{P: f.P, T: f.Arg, Name: "x"}
	f.Params, f.OneParam = []*ir.Var{x}, true
	f.Body = ir.MkPrim(p, "$shape", ir.CallFunc(p, inner, ir.Ref(p, x)))
}
