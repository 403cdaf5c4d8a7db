package lower_test

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestInlinePreludeNested: a prelude definition that calls another
// prelude function (max calls imax) is inlined with that one too, each
// assert keeping its own function's message.
func TestInlinePreludeNested(t *testing.T) {
	f, err := syntax.ParseFile("t.ks", []byte(`(def f Float (v : Vec Float) (max v))`))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := typecheck.Check([]*syntax.File{f})
	if err != nil {
		t.Fatal(err)
	}
	var body ir.Expr
	for _, fn := range prog.Funcs {
		if fn.Name.Base == "f" {
			body = fn.Body
		}
	}
	out, err := lower.InlinePrelude(body)
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[string]bool{}
	ir.Inspect(out, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok && c.Prim != nil && c.Prim.Def != "" {
			t.Errorf("%s is still called", c.Prim.Name)
		}
		if a, ok := e.(*ir.Assert); ok {
			msgs[a.Msg] = true
		}
		return true
	})
	if !msgs["max of an empty vector"] || !msgs["imax of an empty vector"] {
		t.Errorf("assert messages %v, want max's and imax's", msgs)
	}
}
