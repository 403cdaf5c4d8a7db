package cemit

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// TestExports: a library exports the program's defs and the derived
// functions it requests, not the internal derivations nor those derive
// made only for others, and suffixes overloads that would share a name,
// and names the interface takes.
func TestExports(t *testing.T) {
	vf := types.VecOf(types.FloatType)
	mk := func(base string, arg *types.Type, derivs ...string) *ir.Func {
		return &ir.Func{Name: ir.Name{Base: base, Derivs: derivs}, BaseArg: arg, Body: &ir.Tuple{}}
	}
	implied := mk("g", types.FloatType, "fwd")
	implied.Implied = true
	prog := &ir.Program{Funcs: []*ir.Func{
		mk("f", types.FloatType), mk("f", vf), mk("g", types.FloatType),
		mk("f", types.FloatType, "rev"), mk("f", types.FloatType, "revacc"), implied,
	}}
	var got []string
	for _, e := range Exports(prog, "m") {
		got = append(got, e.Name)
	}
	want := "m_f__f64 m_f__vec_f64 m_g m_rev_f"
	if strings.Join(got, " ") != want {
		t.Errorf("exports %v, want %s", got, want)
	}

	// Names the interface takes: its own, and a type's.
	prog = &ir.Program{Funcs: []*ir.Func{mk("ctx_new", types.FloatType), mk("OK", types.FloatType), mk("vec_f64", vf)}}
	got = nil
	for _, e := range exports(prog, "m", map[string]bool{"m_vec_f64": true}) {
		got = append(got, e.Name)
	}
	want = "m_ctx_new_2 m_OK_2 m_vec_f64_2"
	if strings.Join(got, " ") != want {
		t.Errorf("exports %v, want %s", got, want)
	}
}

func TestCheckLibraryName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"model", true}, {"k", true}, {"kss", true}, {"ks2", true}, {"_lib", true}, {"int", true},
		{"ks", false}, {"ksu", false}, {"ksh", false}, {"KS", false}, {"ks_x", false}, {"KS_OK", false}, {"ksu_f", false},
		{"__x", false}, {"_X", false}, {"", false}, {"2d", false}, {"my-lib", false},
	} {
		if err := CheckLibraryName(c.name); (err == nil) != c.ok {
			t.Errorf("CheckLibraryName(%q) = %v, want ok %v", c.name, err, c.ok)
		}
	}
}
