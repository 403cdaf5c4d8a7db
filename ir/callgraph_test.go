package ir

import "testing"

// TestRecursive: self-recursion and mutual recursion are found, callers of
// recursive functions and plain functions are not.
func TestRecursive(t *testing.T) {
	mk := func(name string) *Func { return &Func{Name: Name{Base: name}} }
	call := func(fs ...*Func) Expr {
		var args []Expr
		for _, f := range fs {
			args = append(args, &Call{Fn: f})
		}
		return &Tuple{Elems: args}
	}
	self, even, odd, caller, leaf := mk("self"), mk("even"), mk("odd"), mk("caller"), mk("leaf")
	leaf.Body = &Tuple{}
	self.Body = call(self, leaf)
	even.Body = call(odd)
	odd.Body = call(even, leaf)
	caller.Body = call(self, even, leaf)
	got := Recursive(&Program{Funcs: []*Func{caller, self, even, odd, leaf}})
	want := map[*Func]bool{self: true, even: true, odd: true}
	for _, f := range []*Func{self, even, odd, caller, leaf} {
		if got[f] != want[f] {
			t.Errorf("%s: recursive %v, want %v", f.Name.Base, got[f], want[f])
		}
	}
}
