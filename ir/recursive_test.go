package ir

import (
	"testing"

	"github.com/ksc-lang/ksc/types"
)

func TestRecursive(t *testing.T) {
	fn := func(name string) *Func {
		return &Func{Name: Name{Base: name}, Arg: types.Unit, Result: types.Unit}
	}
	call := func(g *Func) Expr { return &Call{Fn: g, T: types.Unit} }
	// a -> b -> a (mutual), c -> c (direct, inside a lambda), d -> a
	// (calls a cycle, is not in one), e -> edef (no body).
	a, b, c, d, e, x := fn("a"), fn("b"), fn("c"), fn("d"), fn("e"), fn("edef")
	a.Body = call(b)
	b.Body = &Tuple{Elems: []Expr{call(a), call(x)}, T: types.Unit}
	c.Body = &Lam{Param: &Var{Name: "i", T: types.IntegerType}, Body: call(c)}
	d.Body = call(a)
	e.Body = call(x)
	got := Recursive([]*Func{d, a, b, c, e, x})
	want := map[*Func]bool{a: true, b: true, c: true}
	if len(got) != len(want) {
		t.Errorf("Recursive = %d functions, want %d", len(got), len(want))
	}
	for f := range want {
		if !got[f] {
			t.Errorf("%s is recursive, Recursive says not", f.Name.Base)
		}
	}
}
