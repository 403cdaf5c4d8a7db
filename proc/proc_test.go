package proc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/proc"
	"github.com/ksc-lang/ksc/types"
)

// load type-checks src and returns its program.
func load(t *testing.T, src string, opts driver.Options) *ir.Program {
	t.Helper()
	prog, err := driver.LoadSourcesWith([]driver.Source{{Name: "p.ks", Text: []byte(src)}}, driver.Derived, opts)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// block converts def f of src to the procedure language.
func block(t *testing.T, src string) (*proc.Block, []*ir.Var, error) {
	t.Helper()
	prog := load(t, src, driver.Options{})
	for _, f := range prog.Funcs {
		if f.Name.Base == "f" && len(f.Name.Derivs) == 0 {
			ns := prog.Names()
			body, params := lower.ANF(f.Body, f.Params, ns)
			b, err := proc.FromExpr(body, params, ns)
			return b, params, err
		}
	}
	t.Fatal("no def f")
	return nil, nil, nil
}

// count returns how many statements of each kind b holds, branches
// included, by the statement's type name.
func count(b *proc.Block) map[string]int {
	n := map[string]int{}
	var walk func(b *proc.Block)
	walk = func(b *proc.Block) {
		for _, s := range b.Stmts {
			n[typeName(s)]++
			if c, ok := s.(*proc.Case); ok {
				walk(c.Then)
				walk(c.Else)
			}
		}
	}
	walk(b)
	return n
}

func typeName(s proc.Stmt) string {
	switch s.(type) {
	case *proc.Call:
		return "Call"
	case *proc.Const:
		return "Const"
	case *proc.Dup:
		return "Dup"
	case *proc.Elim:
		return "Elim"
	case *proc.Tuple:
		return "Tuple"
	case *proc.Untuple:
		return "Untuple"
	case *proc.Case:
		return "Case"
	case *proc.Assert:
		return "Assert"
	}
	return "?"
}

// TestSingleUse converts defs to the procedure language: each is
// well-typed by Figure 21 (every variable consumed once), with the Dups
// and Elims its sharing needs.
func TestSingleUse(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      map[string]int
	}{
		{"square", "(def f Float (u : Float) (mul u u))", map[string]int{"Dup": 1, "Call": 1}},
		// Figure 22: r = x^2 + sin(x y) + 1; x is read three times.
		{"figure 22", "(def f Float ((x : Float) (y : Float)) (add (mul x x) (add (sin (mul x y)) 1.0)))",
			map[string]int{"Dup": 2, "Call": 5, "Const": 1}},
		{"unused parameter", "(def f Float ((x : Float) (y : Float)) (sin x))", map[string]int{"Elim": 1, "Call": 1}},
		{"field", "(def f Float (p : Tuple Float Float Float) (get$2$3 p))", map[string]int{"Untuple": 1, "Elim": 2}},
		// y is read by one branch: the other eliminates it; x by both
		// and the condition.
		{"if", "(def f Float ((x : Float) (y : Float)) (if (gt x 0.0) (mul x y) x))",
			map[string]int{"Case": 1, "Elim": 1, "Dup": 1, "Call": 2, "Const": 1}},
		{"tuple", "(def f (Tuple Float Float) (x : Float) (tuple x (neg x)))", map[string]int{"Dup": 1, "Tuple": 1, "Call": 1}},
		{"assert", "(def f Float (x : Float) (assert (gt x 0.0) (log x)))", map[string]int{"Dup": 1, "Assert": 1, "Call": 2, "Const": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, params, err := block(t, c.src)
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.Check(b, params); err != nil {
				t.Fatalf("%v\n%s", err, proc.Format(b, ""))
			}
			got := count(b)
			for k, n := range c.want {
				if got[k] != n {
					t.Errorf("%d %s statements, want %d\n%s", got[k], k, n, proc.Format(b, ""))
				}
			}
			for k, n := range got {
				if c.want[k] == 0 {
					t.Errorf("%d unexpected %s statements\n%s", n, k, proc.Format(b, ""))
				}
			}
		})
	}
}

// TestCheckRejects gives Check blocks that break Figure 21's rules.
func TestCheckRejects(t *testing.T) {
	f := types.FloatType
	v := func(name string) *ir.Var { return &ir.Var{T: f, Name: name} }
	mul := ir.LookupPrim("mul")[0]
	for _, c := range []struct {
		name string
		b    *proc.Block
		want string
	}{
		{"used twice", &proc.Block{Stmts: []proc.Stmt{&proc.Call{Out: v("r"), Prim: mul, Args: []*ir.Var{v("x"), v("x")}}}, Result: v("r")},
			"x is used but not available"},
		{"never used", &proc.Block{Result: v("y")}, "x is never used"},
		{"unbound", &proc.Block{Stmts: []proc.Stmt{&proc.Elim{In: v("x")}}, Result: v("z")}, "z is used but not available"},
		{"wrong type", &proc.Block{Result: &ir.Var{T: types.IntegerType, Name: "x"}}, "x has type Float, used as Integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ins := []*ir.Var{v("x")}
			if c.name == "never used" {
				ins = append(ins, v("y"))
			}
			err := proc.Check(c.b, ins)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check: %v, want %q", err, c.want)
			}
		})
	}
}

// TestOtherLambdasAreNotProcedures: a lambda of another primitive than a
// loop is not in the language, and is reported with its position.
func TestOtherLambdasAreNotProcedures(t *testing.T) {
	_, _, err := block(t, "(def f Float (v : Vec Float)\n  ($ifold (size v) 0.0 (lam (s_i : Tuple Float Integer) (add (get$1$2 s_i) (index (get$2$2 s_i) v)))))")
	var np *proc.NotProcedure
	if !errors.As(err, &np) || np.Pos.Line != 2 {
		t.Fatalf("got %v, want a NotProcedure at line 2", err)
	}
}

// TestTapes checks what the forward pass records for the reverse pass
// (the BOG type of f under --rev=suf): a value a derivative rule reads,
// once however often it is used, nothing for a sum, the record of a
// callee only where the callee's value has a cotangent, and for an if
// which branch ran.
func TestTapes(t *testing.T) {
	for _, c := range []struct {
		name, src, arg, want string
	}{
		{"exp records its value", "(def f Float (x : Float) (exp x))", "Float", "(Tuple Float)"},
		{"a sum records nothing", "(def f Float ((x : Float) (y : Float)) (add x y))", "(Tuple Float Float)", "(Tuple)"},
		{"a square records its argument once", "(def f Float (u : Float) (mul u u))", "Float", "(Tuple Float)"},
		{"an unused call records nothing", "(def g Float (x : Float) (sin x))\n(def f Float (x : Float) (let (a (g x)) x))", "Float", "(Tuple)"},
		{"a call records its callee's record", "(def h Float (x : Float) (cos x))\n(def g Float (x : Float) (sin (h x)))\n(def f Float (x : Float) (g x))", "Float", "(Tuple bog$g$f64)"},
		// A leaf (a call of no function, a few nodes) is inlined first.
		{"a leaf's operations are recorded", "(def g Float (x : Float) (sin x))\n(def f Float (x : Float) (g x))", "Float", "(Tuple Float)"},
		{"an if records its branch", "(def f Float (x : Float) (if (gt x 0.0) (exp x) x))", "Float", "(Tuple (Variant (Tuple Float) (Tuple)))"},
		// The index, and the vector's shape for the zero its
		// accumulator starts from; not the vector.
		{"an index", "(def f Float ((v : Vec Float) (i : Integer)) (index i v))", "(Tuple (Vec Float) Integer)", "(Tuple Integer Integer)"},
		// An if whose branches record nothing records its condition.
		{"an if records its condition", "(def f Float (x : Float) (if (gt x 0.0) (mul x 2.0) x))", "Float", "(Tuple Bool)"},
		// Also when the condition is computed from a Float by a cheap
		// chain: the Bool is smaller than the Float.
		{"an if records its condition, not the Float it comes from", "(def f Float (x : Float) (if (gt (add x 1.0) 0.0) (mul x 2.0) x))", "Float", "(Tuple Bool)"},
		// A loop's reverse recomputes what is cheap from what is bound
		// outside the loop and its own index: here each x, read by the
		// square's rule, is an element of v, recorded once (with the
		// count and the vector's shape), not per iteration.
		{"a loop rereads its inputs", "(def f Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))",
			"(Vec Float)", "(Tuple (Vec Float) Integer Integer)"},
		// What is not cheap is recorded per iteration: a vector of the
		// iterations' tapes, here each exp's value.
		{"a loop records its iterations", "(def f Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (exp (index i v)))))",
			"(Vec Float)", "(Tuple (Vec (Tuple Float)) Integer Integer)"},
		// Of a chain of cheap operations on one value the reverse
		// recomputes the rest from that value: the sigmoid's records
		// the exp's value, not also its sum with 1 and the quotient.
		{"a sigmoid records its exp", "(def f Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (div 1.0 (add 1.0 (exp (neg (index i v))))))))",
			"(Vec Float)", "(Tuple (Vec (Tuple Float)) Integer Integer)"},
		// A buildFromSparse records each iteration's tape (the exp's
		// value; the index k is the reverse loop's own).
		{"a buildFromSparse", "(def f (Vec Float) (v : Vec Float) (buildFromSparse (size v) (size v) (lam (k : Integer) (tuple k (exp (index k v))))))",
			"(Vec Float)", "(Tuple (Vec (Tuple Float)) Integer Integer)"},
		// A loop over a tuple of sizes, a tensor of them.
		{"a loop over a tuple of sizes", "(def f Float (m : Tensor 2 Float) (sumbuild (size m) (lam (ij : Tuple Integer Integer) (exp (index ij m)))))",
			"(Tensor 2 Float)", "(Tuple (Tensor 2 (Tuple Float)) (Tuple Integer Integer) (Tuple Integer Integer))"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := load(t, c.src+"\n(gdef sufrev [f "+c.arg+"])\n", driver.Options{Rev: "suf"})
			var got *types.Type
			for _, ty := range prog.Types {
				if strings.HasPrefix(ty.Name, "bog$f$") {
					got = ty.Def
				}
			}
			if got == nil || got.String() != c.want {
				t.Errorf("the record of f is %v, want %s", got, c.want)
			}
		})
	}
}

// TestReverseLoopOrder checks the order of the reverse of a build: a loop
// around another runs last first ($ifoldr), an innermost one first to
// last ($ifold), so that the reverse of a triangular product adds into
// each accumulator row within the stores of the row before it
// (revLoop). The loops are listed outermost first.
func TestReverseLoopOrder(t *testing.T) {
	prog := load(t, `
(def f (Vec Float) ((q : Tensor 2 Float) (z : Vec Float))
  (build (size z) (lam (r : Integer)
    (sumbuild (add r 1) (lam (c : Integer)
      (mul (index (tuple r c) q) (index c z)))))))
(gdef sufrev [f (Tuple (Tensor 2 Float) (Vec Float))])
`, driver.Options{Rev: "suf"})
	var got []string
	for _, f := range prog.Funcs {
		if f.Name.Base != "f" || len(f.Name.Derivs) != 1 || f.Name.Derivs[0] != "sufrevpass" {
			continue
		}
		ir.Inspect(f.Body, func(x ir.Expr) bool {
			if c, ok := x.(*ir.Call); ok && c.Prim != nil && strings.HasPrefix(c.Prim.Name, "$ifold") {
				got = append(got, c.Prim.Name)
			}
			return true
		})
	}
	if want := []string{"$ifoldr", "$ifold"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the loops of [sufrevpass f] are %v, want %v", got, want)
	}
}
