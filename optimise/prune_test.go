package optimise

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
)

// TestDropUnused: an internal derived function, or one derive made for
// another (Implied), survives only if a function the program defines or
// requests reaches it, directly or through other such functions; the
// others all stay, called or not.
func TestDropUnused(t *testing.T) {
	mk := func(base string, derivs ...string) *ir.Func {
		return &ir.Func{Name: ir.Name{Base: base, Derivs: derivs}, Body: &ir.Tuple{}}
	}
	calls := func(f *ir.Func, gs ...*ir.Func) {
		var args []ir.Expr
		for _, g := range gs {
			args = append(args, &ir.Call{Fn: g})
		}
		f.Body = &ir.Tuple{Elems: args}
	}
	f, g := mk("f"), mk("g")
	rev := mk("f", "rev")
	revacc := mk("f", "revacc")
	bogrev := mk("g", "bogrev")
	fwdpass := mk("g", "suffwdpass")
	revaccG := mk("g", "revacc") // split: no longer called
	revfullG := mk("g", "revfull")
	fwdG := mk("g", "fwd") // made by derive for [fwd f], since inlined
	fwdG.Implied = true
	fwdH := mk("h", "fwd") // requested by a gdef, called by nothing
	calls(rev, revacc)
	calls(revacc, fwdpass, bogrev)
	calls(revaccG, revfullG)
	prog := &ir.Program{Funcs: []*ir.Func{f, g, rev, revacc, bogrev, fwdpass, revaccG, revfullG, fwdG, fwdH}}
	if err := dropUnused(&Context{Prog: prog}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fn := range prog.Funcs {
		got = append(got, fn.Name.String())
	}
	want := []string{"f", "g", "[rev f]", "[revacc f]", "[bogrev g]", "[suffwdpass g]", "[fwd h]"}
	if len(got) != len(want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("kept %v, want %v", got, want)
		}
	}
}
