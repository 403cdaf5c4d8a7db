package cemit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestManifest checks the manifest of a library against its header: the
// same entry points, parameters and C types, each type's layout described.
func TestManifest(t *testing.T) {
	src := `(def f (Tuple Float (Vec Float)) ((x : Float) (m : Tensor 2 Float) (n : Integer)) (tuple x (constVec n x)))
(def g Bool (u : Tuple) true)`
	file, err := syntax.ParseFile("t.ks", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := typecheck.Check([]*syntax.File{file})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Emit(prog, Options{Prefix: "m", Library: true})
	if err != nil {
		t.Fatal(err)
	}
	var man Manifest
	if err := json.Unmarshal([]byte(out.Manifest), &man); err != nil {
		t.Fatalf("%v\n%s", err, out.Manifest)
	}
	if man.Version != 1 || man.Library != "libm.so" || man.Prefix != "m" || len(man.Functions) != 2 {
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
	decl := "int m_f(m_ctx *ctx, " + strings.Join(ps, ", ") + ", " + f.Result.C + " *out);"
	if !strings.Contains(out.Header, decl) {
		t.Errorf("the header does not declare %s:\n%s", decl, out.Header)
	}
	m := f.Params[1].Type
	if m.Kind != "Tensor" || m.Rank != 2 || m.Elem.Kind != "Float" || m.Elem.C != "double" || !strings.Contains(out.Header, "int64_t size[2]; double *data; } "+m.C+";") {
		t.Errorf("m: %+v", m)
	}
	if r := f.Result; r.Kind != "Tuple" || len(r.Elems) != 2 || r.Elems[1].Kind != "Tensor" || r.Elems[1].Rank != 1 {
		t.Errorf("result: %+v", r)
	}
	if n := f.Params[2].Type; n.Kind != "Integer" || n.C != "int64_t" {
		t.Errorf("n: %+v", n)
	}
	// A tuple argument is passed as its fields: none for an empty one.
	if g := man.Functions[1]; len(g.Params) != 0 || g.Result.Kind != "Bool" || !strings.Contains(out.Header, "int m_g(m_ctx *ctx, bool *out);") {
		t.Errorf("g: %+v", g)
	}
}
