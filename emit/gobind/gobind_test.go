package gobind

import (
	"strings"
	"testing"

	cemit "github.com/ksc-lang/ksc/emit/c"
)

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"rev_loss": "RevLoss", "vrev_loss_wrt_0": "VrevLossWrt0", "f": "F", "_x": "X", "2d": "X2d",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"model": "model", "func": "func_", "main": "main_", "a0": "a0_"} {
		if got := PackageName(in); got != want {
			t.Errorf("PackageName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPackage: the bindings of a small manifest declare a method per
// entry point with Go types, a struct per tuple, a named BOG, and leave
// out (saying so) a function with a variant.
func TestPackage(t *testing.T) {
	f64 := &cemit.ManifestType{Kind: "Float", C: "double", KS: "Float"}
	i64 := &cemit.ManifestType{Kind: "Integer", C: "int64_t", KS: "Integer"}
	vec := &cemit.ManifestType{Kind: "Tensor", C: "m_vec_f64", KS: "(Vec Float)", Rank: 1, Elem: f64}
	tup := &cemit.ManifestType{Kind: "Tuple", C: "m_tup2_f64_vec_f64", KS: "(Tuple Float (Vec Float))", Elems: []*cemit.ManifestType{f64, vec}}
	bog := &cemit.ManifestType{Kind: "Opaque", C: "m_nt12_bog_f_f64", KS: "bog$f$f64"}
	vnt := &cemit.ManifestType{Kind: "Variant", C: "m_var_f64_i64", KS: "(Variant Float Integer)", Elems: []*cemit.ManifestType{f64, i64}}
	p := func(name string, t *cemit.ManifestType) cemit.ManifestParam {
		return cemit.ManifestParam{Name: name, Type: t}
	}
	m := &cemit.Manifest{Version: 2, Library: "libm.so", Prefix: "m", Functions: []cemit.ManifestFunc{
		{Name: "rev_f", Symbol: "m_rev_f", KS: "[rev f]", Params: []cemit.ManifestParam{p("v", vec), p("n", i64), p("dout", f64)}, Results: []cemit.ManifestParam{p("dv", vec)}},
		{Name: "g", Symbol: "m_g", KS: "g", Params: []cemit.ManifestParam{p("type", tup)}, Results: []cemit.ManifestParam{p("out", tup)}},
		{Name: "suffwdpass_f", Symbol: "m_suffwdpass_f", KS: "[suffwdpass f]", Params: []cemit.ManifestParam{p("x", f64)}, Results: []cemit.ManifestParam{p("out", f64), p("bog", bog)}},
		{Name: "h", Symbol: "m_h", KS: "h", Params: []cemit.ManifestParam{p("x", vnt)}, Results: []cemit.ManifestParam{p("out", f64)}},
		{Name: "Close", Symbol: "m_Close", KS: "Close", Results: []cemit.ManifestParam{p("out", f64)}},
	}}
	src, err := Package(m, "m")
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	for _, want := range []string{
		"func (c *Context) RevF(v []float64, n int64, dout float64) (dv []float64, err error) {",
		"type Tup2F64VecF64 struct {\n\tF0 float64\n\tF1 []float64\n}",
		"func (c *Context) G(type_ Tup2F64VecF64) (out Tup2F64VecF64, err error) {",
		"func (c *Context) SuffwdpassF(x float64) (out float64, bog BogF, err error) {",
		"c.bogs++",
		"// H (h) is not bound: x has a variant type.",
		"func (c *Context) Close_() (out float64, err error) {",
		"#cgo LDFLAGS: -L${SRCDIR} -lm -Wl,-rpath,${SRCDIR}",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the bindings lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(string(src))
	}
}
