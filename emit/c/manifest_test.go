package cemit

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/derive"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/optimise"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestManifest checks the manifest of a library against its header: the
// same entry points, parameters and C types, each type's layout described.
func TestManifest(t *testing.T) {
	src := `(def f (Tuple Float (Vec Float)) ((x : Float) (m : Tensor 2 Float) (n : Integer)) (tuple x (constVec n x)))
(def g Bool (u : Tuple) true)`
	prog := checked(t, src)
	out, err := Emit(prog, Options{Prefix: "m", Library: true})
	if err != nil {
		t.Fatal(err)
	}
	var man Manifest
	if err := json.Unmarshal([]byte(out.Manifest), &man); err != nil {
		t.Fatalf("%v\n%s", err, out.Manifest)
	}
	if man.Version != 2 || man.Library != "libm.so" || man.Prefix != "m" || len(man.Functions) != 2 {
		t.Fatalf("manifest %+v", man)
	}
	f := man.Functions[0]
	if f.Name != "f" || f.Symbol != "m_f" || f.KS != "[f (Tuple Float (Tensor 2 Float) Integer)]" || len(f.Params) != 3 {
		t.Fatalf("f: %+v", f)
	}
	// The header declares the same function with the same C types.
	var ps []string
	for _, p := range f.Params {
		ps = append(ps, p.Type.C+" "+p.Name)
	}
	// (The tuple result's type has a short name, an alias of the type.)
	alias := "typedef " + f.Results[0].Type.C + " m_f_out;"
	decl := "int m_f(m_ctx *ctx, " + strings.Join(ps, ", ") + ", m_f_out *out);"
	if !strings.Contains(out.Header, decl) || !strings.Contains(out.Header, alias) {
		t.Errorf("the header does not declare %s and %s:\n%s", alias, decl, out.Header)
	}
	m := f.Params[1].Type
	if m.Kind != "Tensor" || m.Rank != 2 || m.Elem.Kind != "Float" || m.Elem.C != "double" || !strings.Contains(out.Header, "int64_t size[2]; double *data; } "+m.C+";") {
		t.Errorf("m: %+v", m)
	}
	if r := f.Results[0].Type; r.Kind != "Tuple" || len(r.Elems) != 2 || r.Elems[1].Kind != "Tensor" || r.Elems[1].Rank != 1 {
		t.Errorf("result: %+v", r)
	}
	if n := f.Params[2].Type; n.Kind != "Integer" || n.C != "int64_t" {
		t.Errorf("n: %+v", n)
	}
	// A tuple argument is passed as its fields: none for an empty one.
	if g := man.Functions[1]; len(g.Params) != 0 || g.Results[0].Type.Kind != "Bool" || !strings.Contains(out.Header, "int m_g(m_ctx *ctx, bool *out);") {
		t.Errorf("g: %+v", g)
	}
}

// TestDerivedEntries: a derivative takes the separate arguments of the
// function it derives from, then its tangent or cotangent, and gives each
// result through a pointer of its own; Integer arguments have neither
// tangent nor gradient. The manifest says which is which.
func TestDerivedEntries(t *testing.T) {
	src := `(def f Float ((w : Vec Float) (b : Float) (n : Integer)) (mul b (index n w)))
(def g Float (x : Float) x)
(def h Float ((dw : Float) (w : Float)) w)
(def k Float ((p : Tuple Float Float) (y : Float)) (mul (get$1$2 p) y))
(def ig Float (n : Integer) (to_float n))
(gdef fwd [ig Integer])
(gdef rev [ig Integer])
(def u Float (x : Tuple) 1.0)
(gdef fwd [u (Tuple)])
(gdef rev [u (Tuple)])
(gdef rev [k (Tuple (Tuple Float Float) Float)])
(gdef fwd [f (Tuple (Vec Float) Float Integer)])
(gdef rev [f (Tuple (Vec Float) Float Integer)])
(gdef vrev [f (Tuple (Vec Float) Float Integer)])
(gdef rev [f (Tuple (Vec Float) Float Integer)] 1)
(gdef vrev [f (Tuple (Vec Float) Float Integer)] 0 1)
(gdef sufrev [f (Tuple (Vec Float) Float Integer)])
(gdef suffwdpass [g Float])
(gdef sufrevpass [g Float])
(gdef rev [g Float])
(gdef rev [h (Tuple Float Float)])`
	prog := checked(t, src)
	if err := derive.Derive(prog, derive.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := optimise.Run(prog, optimise.Options{}); err != nil { // makes the split passes
		t.Fatal(err)
	}
	out, err := Emit(prog, Options{Prefix: "m", Library: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range []string{
		"int m_fwd_f(m_ctx *ctx, m_vec_f64 w, double b, int64_t n, m_vec_f64 dw, double db, double *dout);",
		"int m_rev_f(m_ctx *ctx, m_vec_f64 w, double b, int64_t n, double dout, m_vec_f64 *dw, double *db);",
		"int m_vrev_f(m_ctx *ctx, m_vec_f64 w, double b, int64_t n, double dout, double *out, m_vec_f64 *dw, double *db);",
		"int m_rev_f_wrt_1(m_ctx *ctx, m_vec_f64 w, double b, int64_t n, double dout, double *db);",
		"int m_vrev_f_wrt_0_1(m_ctx *ctx, m_vec_f64 w, double b, int64_t n, double dout, double *out, m_vec_f64 *dw, double *db);",
		"int m_sufrev_f(m_ctx *ctx, m_vec_f64 w, double b, int64_t n, double dout, m_vec_f64 *dw, double *db);",
		"int m_suffwdpass_g(m_ctx *ctx, double x, double *out, m_suffwdpass_g_bog *bog);",
		"int m_sufrevpass_g(m_ctx *ctx, double dout, m_sufrevpass_g_bog bog, double *dx);",
		// Tuple types get short names after the entry point and parameter.
		"typedef m_tup2_f64_f64 m_rev_k_p; /* (Tuple Float Float) */\ntypedef m_tup2_f64_f64 m_rev_k_dp; /* (Tuple Float Float) */\n" +
			"int m_rev_k(m_ctx *ctx, m_rev_k_p p, double y, double dout, m_rev_k_dp *dp, double *dy);",
		"int m_rev_g(m_ctx *ctx, double x, double dout, double *dx);",
		// An Integer argument has no tangent, and no gradient; nor has a
		// function of no arguments.
		"int m_fwd_ig(m_ctx *ctx, int64_t n, double *dout);",
		"int m_rev_ig(m_ctx *ctx, int64_t n, double dout);",
		"int m_fwd_u(m_ctx *ctx, double *dout);",
		"int m_rev_u(m_ctx *ctx, double dout);",
		// Names that would collide fall back to p0, dp0, ...
		"int m_rev_h(m_ctx *ctx, double p0, double p1, double dout, double *dp0, double *dp1);",
	} {
		if !strings.Contains(out.Header, decl) {
			t.Errorf("the header does not declare %s", decl)
		}
	}
	if t.Failed() {
		t.Log(out.Header)
	}
	// The wrappers compile, without a warning.
	if cc, err := exec.LookPath("cc"); err == nil {
		file := filepath.Join(t.TempDir(), "m.c")
		if err := os.WriteFile(file, []byte(out.C), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", file).CombinedOutput(); err != nil {
			t.Errorf("cc: %v\n%s", err, b)
		}
	}
	var man Manifest
	if err := json.Unmarshal([]byte(out.Manifest), &man); err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, f := range man.Functions {
		var rs []string
		for _, p := range append(f.Params, f.Results...) {
			r := p.Role
			if p.Of != nil {
				r += fmt.Sprint(*p.Of)
			}
			rs = append(rs, r)
		}
		roles[f.Name] = strings.Join(rs, " ")
	}
	for name, want := range map[string]string{
		"fwd_f":        "argument argument argument tangent0 tangent1 tangent",
		"vrev_f":       "argument argument argument cotangent value gradient0 gradient1",
		"rev_f_wrt_1":  "argument argument argument cotangent gradient1",
		"sufrevpass_g": "cotangent bog gradient0",
		"suffwdpass_g": "argument value bog",
	} {
		if roles[name] != want {
			t.Errorf("%s: roles %q, want %q", name, roles[name], want)
		}
	}
}

// checked returns the type-checked program of the source src.
func checked(t *testing.T, src string) *ir.Program {
	t.Helper()
	file, err := syntax.ParseFile("t.ks", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := typecheck.Check([]*syntax.File{file})
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
