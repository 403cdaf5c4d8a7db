package tests

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// structureSrc holds functions whose reverse mode must be plain loops.
const structureSrc = `
(def sqnorm Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))
(def vdot Float ((a : Vec Float) (b : Vec Float)) (dot a b))
(def mv (Vec Float) ((m : Tensor 2 Float) (v : Vec Float)) (mul m v))
(def lse Float (v : Vec Float)
  (let (m (max v))
    (add m (log (sumbuild (size v) (lam (i : Integer) (exp (sub (index i v) m))))))))
(def prodacc Float ((v : Vec Float) (i : Integer) (acc : Float))
  (if (eq i (size v)) acc (prodacc v (add i 1) (mul acc (index i v)))))
(gdef rev [sqnorm (Vec Float)])
(gdef rev [vdot (Tuple (Vec Float) (Vec Float))])
(gdef rev [mv (Tuple (Tensor 2 Float) (Vec Float))])
(gdef rev [lse (Vec Float)])
(gdef rev [prodacc (Tuple (Vec Float) Integer Float)])
(gdef fwd [sqnorm (Vec Float)])
(gdef fwd [mv (Tuple (Tensor 2 Float) (Vec Float))])
`

// allocates reports whether a call makes a new tensor.
func allocates(c *ir.Call) bool {
	if c.Prim == nil || !c.T.Contains(types.Tensor) || c.Prim.Identity {
		return false
	}
	switch c.Prim.Name {
	case "index", "size", "$addTo", "$addAt", "$ifold", "$ifoldr", "fold":
		return false
	}
	return true
}

// loopBodies calls f on the body of every loop in e.
func loopBodies(e ir.Expr, f func(ir.Expr)) {
	ir.Inspect(e, func(x ir.Expr) bool {
		c, ok := x.(*ir.Call)
		if !ok || c.Prim == nil {
			return true
		}
		for _, a := range c.Args {
			if l, ok := a.(*ir.Lam); ok {
				f(l.Body)
			}
		}
		return true
	})
}

// TestOptimisedDerivativeStructure checks structural facts of the
// optimised derivatives: no linear map is left anywhere, and the loops of
// the reverse passes allocate nothing (the source's loops allocate
// nothing either), so the adjoint of an index adds into one gradient.
func TestOptimisedDerivativeStructure(t *testing.T) {
	prog, err := driver.LoadSources([]driver.Source{{Name: "structure.ks", Text: []byte(structureSrc)}}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range prog.Funcs {
		if f.Body == nil {
			continue
		}
		found[f.FullName()] = true
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Prim != nil && c.Prim.LM {
				t.Errorf("%s: the linear-map operation %s is left", f.FullName(), c.Prim.Name)
			}
			if e.Type().Contains(types.LM) {
				t.Errorf("%s: an expression of type %s is left", f.FullName(), e.Type())
			}
			return true
		})
		if len(f.Name.Derivs) == 0 {
			loopBodies(f.Body, func(body ir.Expr) {
				ir.Inspect(body, func(e ir.Expr) bool {
					if c, ok := e.(*ir.Call); ok && allocates(c) {
						t.Errorf("the source %s allocates in a loop; the test needs one that does not", f.FullName())
					}
					return true
				})
			})
			continue
		}
		if f.Name.Derivs[0] != "revacc" {
			continue
		}
		loopBodies(f.Body, func(body ir.Expr) {
			ir.Inspect(body, func(e ir.Expr) bool {
				if c, ok := e.(*ir.Call); ok && allocates(c) && c.Prim.Name != "$foldtape" {
					t.Errorf("%s allocates %s inside a loop: %s", f.FullName(), c.T, ir.FormatExpr(c))
				}
				return true
			})
		})
	}
	for _, want := range []string{"[revacc [sqnorm (Vec Float)]]", "[revacc [mv (Tuple (Tensor 2 Float) (Vec Float))]]",
		"[revacc [lse (Vec Float)]]", "[revacc [prodacc (Tuple (Vec Float) Integer Float)]]", "[fwd [mv (Tuple (Tensor 2 Float) (Vec Float))]]"} {
		if !found[want] {
			t.Errorf("no %s after optimisation", want)
		}
	}
}

// TestConstantArguments checks that a gradient with respect to some
// arguments only ([rev f 0], [vrev f 0]) does no work for the others:
// once optimised, it makes no value of a constant's type (no zero
// gradient to accumulate into, no copy) and updates none in place, in a
// loop (two nested in quad) or out of it. Their values are checked with the other
// derivatives' (program in adgen_test.go).
func TestConstantArguments(t *testing.T) {
	src := `
(def loss Float ((p : Tuple Float Float) (xs : Vec Float) (ys : Vec Float))
  (sumbuild (size xs) (lam (i : Integer)
    (let ((a b) p)
    (let (r (sub (add (mul a (index i xs)) b) (index i ys))) (mul r r))))))
(gdef rev [loss (Tuple (Tuple Float Float) (Vec Float) (Vec Float))] 0)
(gdef vrev [loss (Tuple (Tuple Float Float) (Vec Float) (Vec Float))] 0)
(def quad Float ((w : Tensor 2 Float) (x : Vec Float))
  (sumbuild (size x) (lam (i : Integer)
    (sumbuild (size x) (lam (j : Integer) (mul (index i x) (mul (index (tuple i j) w) (index j x))))))))
(gdef rev [quad (Tuple (Tensor 2 Float) (Vec Float))] 1)
`
	prog, err := driver.LoadSources([]driver.Source{{Name: "constants.ks", Text: []byte(src)}}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	constant := map[string]*types.Type{
		"[rev [loss (Tuple (Tuple Float Float) (Vec Float) (Vec Float))] 0]":  types.VecOf(types.FloatType),
		"[vrev [loss (Tuple (Tuple Float Float) (Vec Float) (Vec Float))] 0]": types.VecOf(types.FloatType),
		"[rev [quad (Tuple (Tensor 2 Float) (Vec Float))] 1]":                 types.TensorOf(2, types.FloatType),
	}
	for _, f := range prog.Funcs {
		ct, ok := constant[f.FullName()]
		if !ok {
			continue
		}
		delete(constant, f.FullName())
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Prim != nil {
				if c.Prim.InPlace && c.Args[0].Type().Equal(ct) || allocates(c) && c.T.Equal(ct) {
					t.Errorf("%s: %s", f.FullName(), ir.FormatExpr(c))
				}
			}
			return true
		})
	}
	for name := range constant {
		t.Errorf("no %s after optimisation", name)
	}
}

// TestUserRules checks that a program's rules rewrite its code.
func TestUserRules(t *testing.T) {
	src := `
(rule "twice" (x : Float) (mul x 2.0) (add x x))
(def f Float (y : Float) (mul (sin y) 2.0))
`
	prog, err := driver.LoadSources([]driver.Source{{Name: "rules.ks", Text: []byte(src)}}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	got := ir.FormatFunc(prog.Funcs[0])
	if want := "(add t$1 t$1)"; !strings.Contains(got, "(add ") || strings.Contains(got, "(mul ") {
		t.Errorf("the rule did not apply (want something like %s):\n%s", want, got)
	}
}
