package typecheck

import (
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// TestSparseTupledRewrite: a call of buildFromSparseTupled becomes build
// and buildFromSparse, with no call of the name left; every node has a
// position, the call's for the nodes of the rewrite and its own for the
// user's; the rewrite binds no name that is in scope at the call; and
// the IR checker accepts the result.
func TestSparseTupledRewrite(t *testing.T) {
	const src = `(def f (Tuple (Vec Float) (Tensor 2 Float)) ((n : Integer) (shapes$1 : Integer) (k$1 : Float))
  (buildFromSparseTupled (tuple n (constVec (tuple 2 2) (tuple))) n
    (lam (k : Integer) (tuple (tuple k k$1) (tuple (tuple 0 shapes$1) 2.0)))))
`
	file, err := syntax.ParseFile("t.ks", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Check([]*syntax.File{file})
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Check(prog); err != nil {
		t.Fatalf("the IR checker: %v", err)
	}
	f := prog.Funcs[0]
	call := syntax.Pos{File: "t.ks", Line: 2, Col: 3}
	params := map[string]bool{}
	for _, v := range f.Params {
		params[v.Name] = true
	}
	prims := map[string]int{}
	binder := func(v *ir.Var) {
		if !v.P.IsValid() {
			t.Errorf("the binder %s has no position", v.Name)
		}
		if params[v.Name] {
			t.Errorf("the binder %s rebinds a parameter", v.Name)
		}
	}
	ir.Inspect(f.Body, func(e ir.Expr) bool {
		p := e.Pos()
		if !p.IsValid() {
			t.Errorf("%s has no position", ir.FormatExpr(e))
		}
		user := p.Line == 3 || p.Line == 2 && p.Col > call.Col
		if !user && p != call {
			t.Errorf("%s is at %s, not at the call %s", ir.FormatExpr(e), p, call)
		}
		switch e := e.(type) {
		case *ir.Call:
			if e.Prim != nil {
				prims[e.Prim.Name]++
			}
		case *ir.Let:
			for _, v := range e.Vars {
				binder(v)
			}
		case *ir.Lam:
			binder(e.Param)
		}
		return true
	})
	if prims["build"] != 1 || prims["buildFromSparse"] != 2 {
		t.Errorf("primitives called: %v, want one build and two buildFromSparse", prims)
	}
}
