package ir

import "fmt"

// Inspect calls f on e and, while f returns true, on its subexpressions in
// evaluation order (lambda bodies included).
func Inspect(e Expr, f func(Expr) bool) {
	if !f(e) {
		return
	}
	switch e := e.(type) {
	case *Const, *Var, *Dummy:
	case *Call:
		for _, a := range e.Args {
			Inspect(a, f)
		}
	case *Tuple:
		for _, a := range e.Elems {
			Inspect(a, f)
		}
	case *Get:
		Inspect(e.X, f)
	case *Let:
		Inspect(e.Rhs, f)
		Inspect(e.Body, f)
	case *If:
		Inspect(e.Cond, f)
		Inspect(e.Then, f)
		Inspect(e.Else, f)
	case *Assert:
		Inspect(e.Cond, f)
		Inspect(e.Body, f)
	case *Lam:
		Inspect(e.Body, f)
	default:
		panic(fmt.Sprintf("ir: unknown expression %T", e))
	}
}

// Mentions reports whether e mentions a variable whose name is in set
// (free or not: binders are apart, so a name of set bound in e is one
// bound outside too, for the callers).
func Mentions(e Expr, set map[string]bool) bool {
	found := false
	Inspect(e, func(x Expr) bool {
		if v, ok := x.(*Var); ok && set[v.Name] {
			found = true
		}
		return !found
	})
	return found
}

// Size counts the nodes of e: the measure of the passes' budgets.
func Size(e Expr) int {
	n := 0
	Inspect(e, func(Expr) bool { n++; return true })
	return n
}

// Occurs reports whether the variable name occurs free in e.
func Occurs(name string, e Expr) bool {
	switch e := e.(type) {
	case *Const, *Dummy:
		return false
	case *Var:
		return e.Name == name
	case *Call:
		for _, a := range e.Args {
			if Occurs(name, a) {
				return true
			}
		}
		return false
	case *Tuple:
		for _, a := range e.Elems {
			if Occurs(name, a) {
				return true
			}
		}
		return false
	case *Get:
		return Occurs(name, e.X)
	case *Let:
		if Occurs(name, e.Rhs) {
			return true
		}
		for _, v := range e.Vars {
			if v.Name == name {
				return false
			}
		}
		return Occurs(name, e.Body)
	case *If:
		return Occurs(name, e.Cond) || Occurs(name, e.Then) || Occurs(name, e.Else)
	case *Assert:
		return Occurs(name, e.Cond) || Occurs(name, e.Body)
	case *Lam:
		return e.Param.Name != name && Occurs(name, e.Body)
	}
	panic(fmt.Sprintf("ir: unknown expression %T", e))
}

// Funcs returns the functions called in e, in order of first call.
func Funcs(e Expr) []*Func {
	var fs []*Func
	seen := map[*Func]bool{}
	Inspect(e, func(x Expr) bool {
		if c, ok := x.(*Call); ok && c.Fn != nil && !seen[c.Fn] {
			seen[c.Fn] = true
			fs = append(fs, c.Fn)
		}
		return true
	})
	return fs
}

// FreeVars returns the names of the variables occurring free in e.
func FreeVars(e Expr) map[string]bool {
	out := map[string]bool{}
	var walk func(e Expr, bound map[string]int)
	walk = func(e Expr, bound map[string]int) {
		switch e := e.(type) {
		case *Var:
			if bound[e.Name] == 0 {
				out[e.Name] = true
			}
		case *Let:
			walk(e.Rhs, bound)
			for _, v := range e.Vars {
				bound[v.Name]++
			}
			walk(e.Body, bound)
			for _, v := range e.Vars {
				bound[v.Name]--
			}
		case *Lam:
			bound[e.Param.Name]++
			walk(e.Body, bound)
			bound[e.Param.Name]--
		case *Call:
			for _, a := range e.Args {
				walk(a, bound)
			}
		case *Tuple:
			for _, a := range e.Elems {
				walk(a, bound)
			}
		case *Get:
			walk(e.X, bound)
		case *If:
			walk(e.Cond, bound)
			walk(e.Then, bound)
			walk(e.Else, bound)
		case *Assert:
			walk(e.Cond, bound)
			walk(e.Body, bound)
		}
	}
	walk(e, map[string]int{})
	return out
}

// ChainItems returns the lets and asserts heading e, as items without
// bodies (copies: setting an item's Body has no effect on e), and the
// expression they end in.
func ChainItems(e Expr) ([]Expr, Expr) {
	var items []Expr
	for {
		switch x := e.(type) {
		case *Let:
			items = append(items, &Let{P: x.P, Vars: x.Vars, Pattern: x.Pattern, Rhs: x.Rhs, Of: x.Of})
			e = x.Body
			continue
		case *Assert:
			items = append(items, &Assert{P: x.P, Cond: x.Cond, Msg: x.Msg})
			e = x.Body
			continue
		}
		return items, e
	}
}

// WrapChain puts items (lets and asserts, as ChainItems returns them)
// around body, the first outermost.
func WrapChain(items []Expr, body Expr) Expr {
	for i := len(items) - 1; i >= 0; i-- {
		switch it := items[i].(type) {
		case *Let:
			body = &Let{P: it.P, Vars: it.Vars, Pattern: it.Pattern, Rhs: it.Rhs, Body: body, Of: it.Of}
		case *Assert:
			body = &Assert{P: it.P, Cond: it.Cond, Body: body, Msg: it.Msg}
		}
	}
	return body
}

// ChainVars returns the variables the items (as ChainItems returns them)
// bind, in order.
func ChainVars(items []Expr) []*Var {
	var vs []*Var
	for _, it := range items {
		if l, ok := it.(*Let); ok {
			vs = append(vs, l.Vars...)
		}
	}
	return vs
}

// TailCalls returns f's calls of itself in tail position: f's body, the
// body of a let or assert in tail position, the branches of an if in tail
// position. The backends compile them as jumps back to f's start, so a
// tail recursion runs as a loop.
func TailCalls(f *Func) map[*Call]bool {
	out := map[*Call]bool{}
	var walk func(e Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Let:
			walk(e.Body)
		case *Assert:
			walk(e.Body)
		case *If:
			walk(e.Then)
			walk(e.Else)
		case *Call:
			if e.Fn == f {
				out[e] = true
			}
		}
	}
	walk(f.Body)
	return out
}
