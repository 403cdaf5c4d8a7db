package ir_test

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/ir"
)

// typed type-checks and derives src (driver.LoadSources renames it apart after type checking).
func typed(t *testing.T, src string) *ir.Program {
	t.Helper()
	prog, err := driver.LoadSources([]driver.Source{{Name: "t.ks", Text: []byte(src)}}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

func body(t *testing.T, p *ir.Program, name string) string {
	t.Helper()
	for _, f := range p.Funcs {
		if f.Name.Base == name && len(f.Name.Derivs) == 0 {
			return ir.FormatExpr(f.Body)
		}
	}
	t.Fatalf("no function %s", name)
	return ""
}

// TestRenameApart checks that every binder that rebinds a name in scope
// is renamed with its uses, that binders in sibling scopes keep their
// names, and that the result passes the checker, which requires it.
func TestRenameApart(t *testing.T) {
	tests := []struct{ src, name, want string }{
		{
			`(def f Float (x : Float) (let (y x) (let (x 2.0) (add x y))))`, "f",
			`(let (y x) (let (x$1 2.0) (add x$1 y)))`,
		},
		{
			// Siblings keep their names; the lambda's i inside another i is renamed.
			`(def f Float (v : Vec Float)
			   (add (sumbuild (size v) (lam (i : Integer) (index i v)))
			        (sumbuild (size v) (lam (i : Integer)
			          (sumbuild (size v) (lam (i : Integer) (index i v)))))))`, "f",
			`(add (sumbuild (size v) (lam (i : Integer) (index i v))) (sumbuild (size v) (lam (i : Integer) (sumbuild (size v) (lam (i$1 : Integer) (index i$1 v))))))`,
		},
		{
			// A pattern rebinding a parameter; the right-hand side still
			// reads the parameter.
			`(def f Float ((a : Float) (b : Float)) (let ((b a) (tuple a b)) (sub a b)))`, "f",
			`(let ((b$1 a$1) (tuple a b)) (sub a$1 b$1))`,
		},
	}
	for _, tt := range tests {
		p := typed(t, tt.src)
		if !p.NoShadow {
			t.Errorf("%s: the typed program is not marked NoShadow", tt.src)
		}
		if got := strings.Join(strings.Fields(body(t, p, tt.name)), " "); got != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.src, got, tt.want)
		}
		if err := ir.Check(p); err != nil {
			t.Errorf("%s: %v", tt.src, err)
		}
	}
}

// TestCheckRejectsShadowing checks that the IR checker reports a binder
// that rebinds a name in scope once the program is marked NoShadow, and
// not before.
func TestCheckRejectsShadowing(t *testing.T) {
	p := typed(t, `(def f Float (x : Float) (let (y (mul x 2.0)) (add y x)))`)
	var f *ir.Func
	for _, g := range p.Funcs {
		if g.Name.Base == "f" {
			f = g
		}
	}
	l := f.Body.(*ir.Let)
	l.Vars[0] = &ir.Var{P: l.Vars[0].P, T: l.Vars[0].T, Name: "x"} // (let (x (mul x 2.0)) (add y x))
	l.Body = ir.Subst(l.Body, map[string]ir.Expr{"y": ir.Ref(l.P, l.Vars[0])})
	err := ir.Check(p)
	if err == nil || !strings.Contains(err.Error(), "x is bound where a variable of that name is in scope") {
		t.Errorf("Check = %v, want an error about x", err)
	}
	p.NoShadow = false
	if err := ir.Check(p); err != nil {
		t.Errorf("without NoShadow, Check = %v", err)
	}
}

// TestFreshBinders checks that every binder gets a new name and free
// variables keep theirs.
func TestFreshBinders(t *testing.T) {
	p := typed(t, `(def f Float (v : Vec Float)
	  (sumbuild (size v) (lam (i : Integer) (let (a (index i v)) (mul a a)))))`)
	var e ir.Expr
	for _, g := range p.Funcs {
		if g.Name.Base == "f" {
			e = g.Body
		}
	}
	lam := e.(*ir.Call).Args[1]
	got := strings.Join(strings.Fields(ir.FormatExpr(ir.FreshBinders(lam, p.Names()))), " ")
	want := `(lam (i$1 : Integer) (let (a$1 (index i$1 v)) (mul a$1 a$1)))`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
