package optimise

import (
	"github.com/ksc-lang/ksc/ir"
)

// untapeFolds replaces a fold's tape that is read only at its last entry,
// (index (size v) ($foldtape f init v)), by the fold itself. Reverse mode
// binds a fold's value from its tape (linmap's splitFold) before it knows
// whether the reverse pass reads the tape; when the cotangent turns out
// to be zero (a fold computing an index, as the prelude's imax does for
// max), the tape would be written, an entry a step, for nothing.
func untapeFolds(ctx *Context) error {
	ns := ctx.Prog.Names()
	forEachBody(ctx.Prog, func(f *ir.Func) { f.Body = untape(f.Body, map[string]string{}, ns) })
	return nil
}

// untape rewrites the chains of lets in e; sizes maps the variables bound
// to (size v) in scope to v.
func untape(e ir.Expr, sizes map[string]string, ns *ir.Names) ir.Expr {
	switch e.(type) {
	case *ir.Let, *ir.Assert:
	default:
		return ir.MapChildren(e, func(x ir.Expr) ir.Expr { return untape(x, sizes, ns) })
	}
	local := make(map[string]string, len(sizes))
	for k, v := range sizes {
		local[k] = v
	}
	items, tail := ir.ChainItems(e)
	for k, it := range items {
		switch it := it.(type) {
		case *ir.Assert:
			it.Cond = untape(it.Cond, local, ns)
		case *ir.Let:
			it.Rhs = untape(it.Rhs, local, ns)
			if it.Pattern || len(it.Vars) != 1 {
				continue
			}
			c, ok := it.Rhs.(*ir.Call)
			if !ok || c.Prim == nil {
				continue
			}
			switch c.Prim.Name {
			case "size":
				if v, ok := c.Args[0].(*ir.Var); ok {
					local[it.Vars[0].Name] = v.Name
				}
			case "$foldtape":
				v, ok := c.Args[2].(*ir.Var)
				if !ok {
					continue
				}
				tape := it.Vars[0].Name
				isLast := func(x ir.Expr) bool {
					ix, ok := x.(*ir.Call)
					if !ok || ix.Prim == nil || ix.Prim.Name != "index" {
						return false
					}
					if r, ok := ix.Args[1].(*ir.Var); !ok || r.Name != tape {
						return false
					}
					switch n := ix.Args[0].(type) {
					case *ir.Var:
						return local[n.Name] == v.Name
					case *ir.Call:
						a, ok := n.Args[0].(*ir.Var)
						return n.Prim != nil && n.Prim.Name == "size" && ok && a.Name == v.Name
					}
					return false
				}
				// What the rest reads: the right-hand sides and conditions
				// of the later items (which have no bodies), and the tail.
				rest := []ir.Expr{tail}
				for _, later := range items[k+1:] {
					switch later := later.(type) {
					case *ir.Let:
						rest = append(rest, later.Rhs)
					case *ir.Assert:
						rest = append(rest, later.Cond)
					}
				}
				uses, last := 0, 0
				for _, x := range rest {
					ir.Inspect(x, func(y ir.Expr) bool {
						if r, ok := y.(*ir.Var); ok && r.Name == tape {
							uses++
						}
						if isLast(y) {
							last++
						}
						return true
					})
				}
				if uses == 0 || uses != last {
					continue
				}
				p := it.P
				value := ns.FreshVar(p, "fold", c.Args[1].Type())
				replace := func(x ir.Expr) ir.Expr {
					return ir.Map(x, func(y ir.Expr) ir.Expr {
						if isLast(y) {
							return ir.Ref(p, value)
						}
						return y
					})
				}
				for j := k + 1; j < len(items); j++ {
					switch it := items[j].(type) {
					case *ir.Let:
						it.Rhs = replace(it.Rhs)
					case *ir.Assert:
						it.Cond = replace(it.Cond)
					}
				}
				tail = replace(tail)
				it.Vars = []*ir.Var{value}
				it.Rhs = ir.MkPrim(p, "fold", c.Args[0], c.Args[1], c.Args[2])
			}
		}
	}
	return ir.WrapChain(items, untape(tail, local, ns))
}
