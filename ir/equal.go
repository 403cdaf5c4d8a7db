package ir

import "math"

// Equal reports whether two expressions are the same, up to positions:
// the same variables (by name), constants, calls and binders.
func Equal(a, b Expr) bool {
	switch a := a.(type) {
	case *Var:
		x, ok := b.(*Var)
		return ok && a.Name == x.Name
	case *Const:
		x, ok := b.(*Const)
		if !ok || !a.T.Equal(x.T) {
			return false
		}
		if f, ok := a.Val.(float64); ok {
			g := x.Val.(float64)
			return f == g && math.Signbit(f) == math.Signbit(g) || math.IsNaN(f) && math.IsNaN(g)
		}
		return a.Val == x.Val
	case *Dummy:
		x, ok := b.(*Dummy)
		return ok && a.T.Equal(x.T)
	case *Call:
		x, ok := b.(*Call)
		if !ok || a.Fn != x.Fn || a.Prim != x.Prim || len(a.Args) != len(x.Args) {
			return false
		}
		for i := range a.Args {
			if !Equal(a.Args[i], x.Args[i]) {
				return false
			}
		}
		return true
	case *Tuple:
		x, ok := b.(*Tuple)
		if !ok || len(a.Elems) != len(x.Elems) {
			return false
		}
		for i := range a.Elems {
			if !Equal(a.Elems[i], x.Elems[i]) {
				return false
			}
		}
		return true
	case *Get:
		x, ok := b.(*Get)
		return ok && a.I == x.I && a.N == x.N && Equal(a.X, x.X)
	case *Let:
		x, ok := b.(*Let)
		if !ok || a.Pattern != x.Pattern || len(a.Vars) != len(x.Vars) {
			return false
		}
		for i := range a.Vars {
			if a.Vars[i].Name != x.Vars[i].Name {
				return false
			}
		}
		return Equal(a.Rhs, x.Rhs) && Equal(a.Body, x.Body)
	case *If:
		x, ok := b.(*If)
		return ok && Equal(a.Cond, x.Cond) && Equal(a.Then, x.Then) && Equal(a.Else, x.Else)
	case *Assert:
		x, ok := b.(*Assert)
		return ok && a.Msg == x.Msg && Equal(a.Cond, x.Cond) && Equal(a.Body, x.Body)
	case *Lam:
		x, ok := b.(*Lam)
		return ok && a.Param.Name == x.Param.Name && a.Param.T.Equal(x.Param.T) && Equal(a.Body, x.Body)
	}
	return false
}
