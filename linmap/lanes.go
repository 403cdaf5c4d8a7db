package linmap

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// Lanes returns m, a linear map (LM S T) that may be a let-program,
// applied to k tangents of S at once: ts holds them with each Float's k
// values as one Vec Float, its lanes (types.Lanes), and so does the
// result. It is Forward with every tangent operation done on all lanes
// (a scaling scales each lane, a sum adds lane by lane), so the primal
// program, and the map's own values, are computed once for all k
// directions; a call of [D g] becomes a call of [vfwd g].
func Lanes(m, k, ts ir.Expr, ns *ir.Names, res Resolver) (out ir.Expr, err error) {
	defer catch(&err)
	b := &binder{ns: ns}
	f := &fwd{sem: sem{ns: ns, res: res, mode: lanes, lanes: b.atom(k)}, env: map[string]ir.Expr{}, ofs: map[string]*ir.Var{}, used: usedVars(m)}
	f.t = b.atom(ts)
	return b.wrap(f.conv(m)), nil
}

// zeroLanes is k zeros.
func (s *sem) zeroLanes(p ir.Pos) ir.Expr {
	l := s.ns.FreshVar(p, "l", types.IntegerType)
	return ir.MkPrim(p, "build", s.lanes, ir.MkLam(p, l, ir.Float(p, 0)))
}

// laneZero returns the zero lanes of the tangents of values like ex.
func (s *sem) laneZero(p ir.Pos, ex ir.Expr) ir.Expr {
	return s.mapFloats(p, ex, func(ir.Expr) ir.Expr { return s.zeroLanes(p) })
}

// laneDot returns the map (lmRow a) applied to the lanes t: for each
// lane, the sum over a's Floats of each times its tangent.
func (s *sem) laneDot(p ir.Pos, ea, et ir.Expr) ir.Expr {
	t := ea.Type()
	switch t.Kind {
	case types.Float:
		return ir.MkPrim(p, "ts_scale", ea, et)
	case types.Tuple:
		b := &binder{ns: s.ns}
		a, tv := b.atom(ea), b.atom(et)
		var sum ir.Expr
		for i, e := range t.Elems {
			if !hasFloat(e) {
				continue
			}
			part := s.laneDot(p, ir.MkGet(p, i+1, a), ir.MkGet(p, i+1, tv))
			if sum == nil {
				sum = part
			} else {
				sum = ir.MkPrim(p, "ts_add", b.atom(sum), part)
			}
		}
		if sum == nil {
			return b.wrap(s.zeroLanes(p))
		}
		return b.wrap(sum)
	case types.Tensor:
		if !hasFloat(t.Elem) {
			return s.zeroLanes(p)
		}
		b := &binder{ns: s.ns}
		a, tv := b.atom(ea), b.atom(et)
		i := s.ns.FreshVar(p, "i", types.IndexType(t.Rank))
		at := func(v ir.Expr) ir.Expr { return ir.MkPrim(p, "index", ir.Ref(p, i), v) }
		add := func(p ir.Pos, acc, x ir.Expr) ir.Expr { return ir.MkPrim(p, "ts_add", acc, x) }
		return b.wrap(s.foldRange(p, ir.MkPrim(p, "size", a), i, s.zeroLanes(p), s.laneDot(p, at(a), at(tv)), 0, add))
	}
	return s.zeroLanes(p)
}

// hasFloat reports whether a value of type t can hold a Float.
func hasFloat(t *types.Type) bool {
	switch t.Kind {
	case types.Float:
		return true
	case types.Tuple:
		for _, e := range t.Elems {
			if hasFloat(e) {
				return true
			}
		}
	case types.Tensor:
		return hasFloat(t.Elem)
	}
	return false
}

// laneFill returns the map (lmCol a) applied to the lanes t of a Float:
// each of a's Floats times them.
func (s *sem) laneFill(p ir.Pos, ea, et ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	tv := b.atom(et)
	return b.wrap(s.mapFloats(p, ea, func(x ir.Expr) ir.Expr { return ir.MkPrim(p, "ts_scale", x, tv) }))
}

// laneScatter returns the map (lmScatter sh j ex), whose target has type
// tt, applied to the lanes t: zero lanes of the tensor of shape sh but t
// at j.
func (s *sem) laneScatter(p ir.Pos, tt *types.Type, sh, j, t ir.Expr) ir.Expr {
	b := &binder{ns: s.ns}
	zero := b.atom(s.laneZero(p, ir.MkPrim(p, "$zerosOfShape", sh, &ir.Dummy{P: p, T: tt})))
	return b.wrap(ir.MkPrim(p, "$setAt", zero, j, t))
}

// laneScatterSum returns the lanes of buildFromSparse's map, the sum
// over the indices i < n of scatters (sc) of the lanes lt, computed after
// the lets items: a loop adding each into its element in place. It
// returns nil for a range of tensor indices.
func (s *sem) laneScatterSum(p ir.Pos, sc *ir.Call, n ir.Expr, i *ir.Var, items []ir.Expr, lt ir.Expr) ir.Expr {
	if n.Type().Kind != types.Integer {
		return nil
	}
	init := s.laneZero(p, ir.MkPrim(p, "$zerosOfShape", sc.Args[0], &ir.Dummy{P: p, T: sc.Type().To}))
	st := s.ns.FreshVar(p, "st", init.Type())
	q := s.ns.FreshVar(p, "q", types.IntegerType)
	sq := s.ns.FreshVar(p, "st_q", types.TupleOf(init.Type(), types.IntegerType))
	add := ir.WrapChain(items, ir.MkPrim(p, "$addAt", ir.Ref(p, st), sc.Args[1], lt))
	step := &ir.Let{P: p, Vars: []*ir.Var{st, q}, Pattern: true, Rhs: ir.Ref(p, sq),
		Body: ir.MkLet(p, i, ir.Ref(p, q), add)}
	return ir.MkPrim(p, "$ifold", n, init, ir.MkLam(p, sq, step))
}
