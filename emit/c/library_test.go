package cemit

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
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

// TestDerivedNameTaken: a def whose C name is a derived function's
// export is an error at the def, not a silent suffix.
func TestDerivedNameTaken(t *testing.T) {
	mk := func(base string, derivs ...string) *ir.Func {
		return &ir.Func{P: ir.Pos{File: "t.ks", Line: 3, Col: 6}, Name: ir.Name{Base: base, Derivs: derivs}, BaseArg: types.FloatType, Body: &ir.Tuple{}}
	}
	check := func(fs ...*ir.Func) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = r.(*syntax.Error)
			}
		}()
		checkDerivedNames(fs)
		return nil
	}
	if err := check(mk("f"), mk("f", "rev"), mk("rev_f")); err == nil || !strings.Contains(err.Error(), "t.ks:3:6: the def rev_f would be exported under the name of [rev f]") {
		t.Errorf("def rev_f beside [rev f]: %v", err)
	}
	wrt := mk("f", "rev")
	wrt.Name.Wrt = []int{0}
	if err := check(mk("f"), wrt, mk("rev_f_wrt_0")); err == nil {
		t.Errorf("def rev_f_wrt_0 beside [rev f 0]: no error")
	}
	if err := check(mk("f"), mk("f", "rev"), mk("rev_g"), mk("fwd_f")); err != nil {
		t.Errorf("no clash: %v", err)
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
