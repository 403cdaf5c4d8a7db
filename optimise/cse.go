package optimise

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
)

// available is a value bound by an enclosing let.
type available struct {
	rhs ir.Expr
	v   *ir.Var
}

// cse replaces a let whose value equals the value of an enclosing let by
// the variable of the enclosing one. It leaves alone what must stay
// distinct: values with effects, and fresh zeros and in-place updates,
// which are accumulators of derived code that are updated in place.
//
// It needs binders apart (ir.Program.NoShadow), so that a value bound in
// scope cannot go stale under a binder of a name it mentions. Its cost is
// linear in the size of the body (times the nesting of let values inside
// let values): the values in scope are found by hash, and a shared
// variable is renamed where the walk meets its uses, not by substituting
// into the rest of the body at each let.
func cse(e ir.Expr, eff lower.Effects) ir.Expr {
	c := &cser{
		eff:     eff,
		seed:    maphash.MakeSeed(),
		avail:   map[uint64][]available{},
		renamed: map[string]*ir.Var{},
	}
	return c.walk(e)
}

type cser struct {
	eff     lower.Effects
	seed    maphash.Seed
	avail   map[uint64][]available // values bound by the enclosing lets, by hash
	renamed map[string]*ir.Var     // variables replaced by an equal one in scope
}

func (c *cser) walk(e ir.Expr) ir.Expr {
	switch x := e.(type) {
	case *ir.Var:
		if r := c.renamed[x.Name]; r != nil {
			return ir.Ref(x.P, r)
		}
		return x
	case *ir.Let:
		rhs := c.walk(x.Rhs)
		if x.Pattern || !shareable(rhs, c.eff) {
			return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: rhs, Body: c.walk(x.Body), Of: x.Of}
		}
		h := c.hash(rhs)
		for _, a := range c.avail[h] {
			if ir.Equal(a.rhs, rhs) && a.v.T.Equal(x.Vars[0].T) {
				c.renamed[x.Vars[0].Name] = a.v
				body := c.walk(x.Body)
				delete(c.renamed, x.Vars[0].Name)
				return body
			}
		}
		c.avail[h] = append(c.avail[h], available{rhs: rhs, v: x.Vars[0]})
		body := c.walk(x.Body)
		c.avail[h] = c.avail[h][:len(c.avail[h])-1]
		return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: rhs, Body: body, Of: x.Of}
	}
	return ir.MapChildren(e, c.walk)
}

// hash returns a hash of e that equal values share.
func (c *cser) hash(e ir.Expr) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var buf [8]byte
	num := func(n uint64) {
		binary.LittleEndian.PutUint64(buf[:], n)
		h.Write(buf[:])
	}
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Var:
			h.WriteString("v" + x.Name)
		case *ir.Const:
			h.WriteString("c")
			switch v := x.Val.(type) {
			case float64:
				num(math.Float64bits(v))
			case int64:
				num(uint64(v))
			case bool:
				if v {
					num(1)
				} else {
					num(0)
				}
			case string:
				h.WriteString(v)
			}
		case *ir.Call:
			if x.Fn != nil {
				h.WriteString("f" + x.Fn.FullName())
			} else {
				h.WriteString("p" + x.Prim.Name)
			}
			num(uint64(len(x.Args)))
		case *ir.Tuple:
			h.WriteString("t")
			num(uint64(len(x.Elems)))
		case *ir.Get:
			h.WriteString("g")
			num(uint64(x.I))
		case *ir.Let:
			h.WriteString("l")
			for _, v := range x.Vars {
				h.WriteString(v.Name)
			}
		case *ir.Lam:
			h.WriteString("λ" + x.Param.Name)
		default:
			h.WriteString("?")
		}
		return true
	})
	return h.Sum64()
}

// freshZero are the primitives that make the zeros derived code starts an
// accumulator from: each result is updated in place ($addTo, $addAt), so
// two of them, equal as expressions, are not one value. Vec_init is one
// since small-vectors writes a small constVec as one.
var freshZero = map[string]bool{"ts_zero": true, "constVec": true, "deltaVec": true, "$zerosOfShape": true, "Vec_init": true}

// shareable reports whether two evaluations of e may be replaced by one.
func shareable(e ir.Expr, eff lower.Effects) bool {
	if ir.IsAtom(e) || lower.HasEffect(e, eff) {
		return false
	}
	ok := true
	ir.Inspect(e, func(x ir.Expr) bool {
		if c, isCall := x.(*ir.Call); isCall && c.Prim != nil && (c.Prim.InPlace || freshZero[c.Prim.Name]) {
			ok = false
		}
		return ok
	})
	return ok
}
