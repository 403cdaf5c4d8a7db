package ir

import (
	"testing"

	"github.com/ksc-lang/ksc/types"
)

// TestMayFail: failing is what asserts, impure primitives and recursion
// do, and what calls them; the chain records calls of those but for a
// function's calls of itself.
func TestMayFail(t *testing.T) {
	fn := func(name string) *Func { return &Func{Name: Name{Base: name}, Body: &Const{T: types.FloatType}} }
	call := func(g *Func, args ...Expr) *Call { return &Call{Fn: g, Args: args, T: types.FloatType} }
	pure, impure := &Prim{Name: "add", Pure: true}, &Prim{Name: "index"}
	leaf := fn("leaf")
	leaf.Body = &Call{Prim: pure, T: types.FloatType}
	idx := fn("idx")
	idx.Body = &Call{Prim: impure, T: types.FloatType}
	asserts := fn("asserts")
	asserts.Body = &Assert{Cond: &Const{T: types.BoolType}, Body: call(leaf)}
	caller := fn("caller")
	caller.Body = call(fn("unrelated"), call(idx))
	self := fn("self")
	self.Body = call(self)
	edef := &Func{Name: Name{Base: "e"}, Kind: EdefFunc}
	usesEdef := fn("usesEdef")
	usesEdef.Body = call(edef)
	funcs := []*Func{leaf, idx, asserts, caller, self, edef, usesEdef}
	fails := MayFail(funcs, Recursive(funcs))
	for f, want := range map[*Func]bool{leaf: false, idx: true, asserts: true, caller: true, self: true, edef: false, usesEdef: false} {
		if fails[f] != want {
			t.Errorf("MayFail(%s) = %v, want %v", f.Name, fails[f], want)
		}
	}
	if !fails.Records(caller, call(idx)) || fails.Records(caller, call(leaf)) || fails.Records(self, call(self)) {
		t.Errorf("Records: want only the call of idx from caller recorded")
	}
}
