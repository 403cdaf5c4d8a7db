package bog

import (
	"fmt"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// ToSUF returns an expression in A-normal form (see lower.ANF) in the
// single-use form of seed 002 (the procedure language of Figures 20-23):
// every variable is used exactly once on every path. A variable used more
// than once is first duplicated, (let ((x1 x2) ($dup x)) ...), and a
// variable a path does not use is eliminated, (let (_ ($elim x)) ...).
// A use inside a lambda (a loop body, run many times) counts once: the
// lambda holds that copy. params are the variables bound around e.
func ToSUF(e ir.Expr, params []*ir.Var, ns *ir.Names) ir.Expr {
	s := &suf{ns: ns}
	return s.bind(params, e)
}

type suf struct {
	ns *ir.Names
}

// uses counts the free occurrences of name in e along one path: in an if,
// the larger of the branches' counts (each branch is made to use the
// variable that many times).
func uses(name string, e ir.Expr) int {
	switch x := e.(type) {
	case *ir.Var:
		if x.Name == name {
			return 1
		}
		return 0
	case *ir.Const, *ir.Dummy:
		return 0
	case *ir.Let:
		n := uses(name, x.Rhs)
		for _, v := range x.Vars {
			if v.Name == name {
				return n
			}
		}
		return n + uses(name, x.Body)
	case *ir.If:
		return uses(name, x.Cond) + max(uses(name, x.Then), uses(name, x.Else))
	case *ir.Lam:
		if x.Param.Name == name || !ir.Occurs(name, x.Body) {
			return 0
		}
		return 1 // the lambda takes one copy, however often it uses it
	case *ir.Call:
		n := 0
		for _, a := range x.Args {
			n += uses(name, a)
		}
		return n
	case *ir.Tuple:
		n := 0
		for _, a := range x.Elems {
			n += uses(name, a)
		}
		return n
	case *ir.Get:
		return uses(name, x.X)
	case *ir.Assert:
		return uses(name, x.Cond) + uses(name, x.Body)
	}
	panic(fmt.Sprintf("bog: unknown expression %T", e))
}

// bind makes each of vars used exactly once in body, then converts body.
func (s *suf) bind(vars []*ir.Var, body ir.Expr) ir.Expr {
	body = s.expr(body)
	for i := len(vars) - 1; i >= 0; i-- {
		body = s.single(vars[i], body)
	}
	return body
}

// single makes v used exactly once in body (already converted otherwise).
func (s *suf) single(v *ir.Var, body ir.Expr) ir.Expr {
	p := v.P
	switch n := uses(v.Name, body); {
	case n == 0:
		u := s.ns.FreshVar(p, "_", types.Unit)
		return ir.MkLet(p, u, ir.MkPrim(p, "$elim", ir.Ref(p, v)), body)
	case n == 1:
		// One use on the longest path: other paths eliminate the variable.
		return s.renameUses(v.Name, body, func() string { return v.Name })
	default:
		// n uses: n-1 dups, each copy renamed at one use, in order.
		copies := make([]*ir.Var, n)
		for i := range copies {
			copies[i] = s.ns.FreshVar(p, v.Name, v.T)
		}
		k := 0
		body = s.renameUses(v.Name, body, func() string {
			name := copies[k].Name
			k++
			return name
		})
		cur := v
		var lets []*ir.Let
		for i := 0; i < n-1; i++ {
			rest := copies[i+1]
			if i < n-2 {
				rest = s.ns.FreshVar(p, v.Name, v.T)
			}
			lets = append(lets, &ir.Let{P: p, Vars: []*ir.Var{copies[i], rest}, Pattern: true, Rhs: ir.MkPrim(p, "$dup", ir.Ref(p, cur))})
			cur = rest
		}
		for i := len(lets) - 1; i >= 0; i-- {
			l := lets[i]
			body = &ir.Let{P: l.P, Vars: l.Vars, Pattern: true, Rhs: l.Rhs, Body: body}
		}
		return body
	}
}

// renameUses renames the free occurrences of name, one by one in order,
// to the names next gives; in an if, both branches count from the same
// point, and a branch using fewer eliminates the copies it does not use.
func (s *suf) renameUses(name string, e ir.Expr, next func() string) ir.Expr {
	var walk func(e ir.Expr) ir.Expr
	walk = func(e ir.Expr) ir.Expr {
		switch x := e.(type) {
		case *ir.Var:
			if x.Name == name {
				return &ir.Var{P: x.P, T: x.T, Name: next()}
			}
			return x
		case *ir.Let:
			rhs := walk(x.Rhs)
			for _, v := range x.Vars {
				if v.Name == name {
					return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: rhs, Body: x.Body, Of: x.Of}
				}
			}
			return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: rhs, Body: walk(x.Body), Of: x.Of}
		case *ir.Lam:
			if x.Param.Name == name || !ir.Occurs(name, x.Body) {
				return x
			}
			// The lambda takes one copy; inside, that copy is made
			// single-use in its turn.
			one := &ir.Var{P: x.P, T: varType(name, x.Body), Name: next()}
			body := ir.Subst(x.Body, map[string]ir.Expr{name: ir.Ref(x.P, one)})
			return &ir.Lam{P: x.P, Param: x.Param, Body: s.single(one, body)}
		case *ir.If:
			cond := walk(x.Cond)
			nt, ne := uses(name, x.Then), uses(name, x.Else)
			var names []string
			for i := 0; i < max(nt, ne); i++ {
				names = append(names, next())
			}
			branch := func(b ir.Expr, n int) ir.Expr {
				k := 0
				out := s.renameUses(name, b, func() string { k++; return names[k-1] })
				for i := n; i < len(names); i++ { // copies this branch does not use
					u := &ir.Var{P: x.P, T: types.Unit, Name: "_" + names[i]}
					t := varType(name, x.Then)
					if t == nil {
						t = varType(name, x.Else)
					}
					out = ir.MkLet(x.P, u, ir.MkPrim(x.P, "$elim", &ir.Var{P: x.P, T: t, Name: names[i]}), out)
				}
				return out
			}
			return ir.MkIf(x.P, cond, branch(x.Then, nt), branch(x.Else, ne))
		}
		return ir.MapChildren(e, walk)
	}
	return walk(e)
}

// varType returns the type of a free occurrence of name in e, or nil.
func varType(name string, e ir.Expr) *types.Type {
	var t *types.Type
	ir.Inspect(e, func(x ir.Expr) bool {
		if v, ok := x.(*ir.Var); ok && v.Name == name && t == nil {
			t = v.T
		}
		return t == nil
	})
	return t
}

// expr converts the binders inside e.
func (s *suf) expr(e ir.Expr) ir.Expr {
	switch x := e.(type) {
	case *ir.Let:
		rhs := s.expr(x.Rhs)
		return &ir.Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: rhs, Body: s.bind(x.Vars, x.Body), Of: x.Of}
	case *ir.Lam:
		return &ir.Lam{P: x.P, Param: x.Param, Body: s.bind([]*ir.Var{x.Param}, x.Body)}
	}
	return ir.MapChildren(e, s.expr)
}

// FromSUF converts single-use form back: dups become the variable they
// copy, and elims disappear.
func FromSUF(e ir.Expr) ir.Expr {
	return ir.Map(e, func(e ir.Expr) ir.Expr {
		l, ok := e.(*ir.Let)
		if !ok {
			return e
		}
		c, ok := l.Rhs.(*ir.Call)
		if !ok || c.Prim == nil {
			return e
		}
		switch c.Prim.Name {
		case "$elim":
			return l.Body
		case "$dup":
			m := map[string]ir.Expr{}
			for _, v := range l.Vars {
				m[v.Name] = c.Args[0]
			}
			return ir.Subst(l.Body, m)
		}
		return e
	})
}

// CheckSUF reports a variable of e (bound by e, or one of params) that is
// not used exactly once on some path.
func CheckSUF(e ir.Expr, params []*ir.Var) error {
	var err error
	check := func(vs []*ir.Var, body ir.Expr) {
		for _, v := range vs {
			if strings.HasPrefix(v.Name, "_") {
				continue // the unit an $elim returns
			}
			if n := uses(v.Name, body); n != 1 && err == nil {
				err = fmt.Errorf("%s: %s is used %d times", v.P, v.Name, n)
			}
		}
	}
	check(params, e)
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Let:
			check(x.Vars, x.Body)
		case *ir.Lam:
			check([]*ir.Var{x.Param}, x.Body)
		case *ir.If:
			for _, name := range freeNames(x.Then, x.Else) {
				if strings.HasPrefix(name, "_") {
					continue
				}
				if uses(name, x.Then) != uses(name, x.Else) && err == nil {
					err = fmt.Errorf("%s: the branches use %s differently", x.P, name)
				}
			}
		}
		return err == nil
	})
	return err
}

// freeNames returns the names of the variables occurring in the expressions.
func freeNames(es ...ir.Expr) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range es {
		ir.Inspect(e, func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok && !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, v.Name)
			}
			return true
		})
	}
	return out
}
