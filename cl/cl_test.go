package cl_test

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ksc-lang/ksc/cl"
	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// The flag of the whole-program tests, accepted so that
// go test ./cl ./tests -nosan runs: package cl compiles no C.
var _ = flag.Bool("nosan", false, "ignored (package cl compiles no C)")

// load type-checks a program.
func load(t *testing.T, src string) *ir.Program {
	t.Helper()
	prog, err := driver.LoadSources([]driver.Source{{Name: "test.ks", Text: []byte(src)}}, driver.Typed)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return prog
}

// fn returns the function of prog named name (the last overload).
func fn(t *testing.T, prog *ir.Program, name string) *ir.Func {
	t.Helper()
	var found *ir.Func
	for _, f := range prog.Funcs {
		if f.Name.String() == name {
			found = f
		}
	}
	if found == nil {
		t.Fatalf("no function %s", name)
	}
	return found
}

func convert(t *testing.T, f *ir.Func, pruned bool) *cl.Def {
	t.Helper()
	conv := cl.Convert
	if !pruned {
		conv = cl.ConvertUnpruned
	}
	d, err := conv(f)
	if err != nil {
		t.Fatalf("converting %s: %v", f.FullName(), err)
	}
	if err := cl.CheckDef(d); err != nil {
		t.Fatalf("%s: %v\n%s", f.FullName(), err, cl.FormatDef(d, nil))
	}
	return d
}

const examples = `
(def f Float ((x : Float) (y : Float) (z : Float)) (add (mul x y) z))
(def g Float ((x : Float) (y : Float)) (let (z (mul x 2.0)) (add z z)))
(def h (Vec Float) ((n : Integer) (v : Vec Float) (k : Float))
  (build n (lam (i : Integer) (mul k (index i v)))))
(def sqnorm Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))
`

// TestCLConvert checks the CL of the examples of docs/cl.md, before and
// after pruning.
func TestCLConvert(t *testing.T) {
	prog := load(t, examples)
	tests := []struct {
		name             string
		unpruned, pruned string
	}{
		{"f", `
(def f (x y z) : (Tuple Float Float Float) => Float
  (comp (tuple (comp (tuple (proj 1 3) (proj 2 3)) (F mul)) (proj 3 3)) (F add)))
`, `
(def f (x y z) : (Tuple Float Float Float) => Float
  (comp
    (tuple
      (comp (prune 1 2 / 3)
        (tuple (comp (prune 1 / 2) (proj 1 1)) (comp (prune 2 / 2) (proj 1 1)))
        (F mul))
      (comp (prune 3 / 3) (proj 1 1)))
    (F add)))
`},
		{"g", `
(def g (x y) : (Tuple Float Float) => Float
  (let z (comp (tuple (proj 1 2) (K 2.0)) (F mul)) (comp (tuple (proj 3 3) (proj 3 3)) (F add))))
`, `
(def g (x y) : (Tuple Float Float) => Float
  (comp (prune 1 / 2)
    (let z
      (comp (tuple (proj 1 1) (comp (prune / 1) (K 2.0))) (F mul))
      (comp (prune 2 / 2) (tuple (proj 1 1) (proj 1 1)) (F add)))))
`},
		{"h", `
(def h (n v k) : (Tuple Integer (Vec Float) Float) => (Vec Float)
  (build (proj 1 3)
    (lam (i : Integer)
      (comp (tuple (proj 3 4) (comp (tuple (proj 4 4) (proj 2 4)) (F index))) (F mul)))))
`, `
(def h (n v k) : (Tuple Integer (Vec Float) Float) => (Vec Float)
  (build
    (comp (prune 1 / 3) (proj 1 1))
    (lam (i : Integer)
      (comp (prune 2 3 4 / 4)
        (tuple
          (comp (prune 2 / 3) (proj 1 1))
          (comp (prune 1 3 / 3)
            (tuple (comp (prune 2 / 2) (proj 1 1)) (comp (prune 1 / 2) (proj 1 1)))
            (F index)))
        (F mul)))))
`},
		{"sqnorm", `
(def sqnorm (v) : (Tuple (Vec Float)) => Float
  (sumbuild
    (comp (proj 1 1) (F size))
    (lam (i : Integer)
      (let x
        (comp (tuple (proj 2 2) (proj 1 2)) (F index))
        (comp (tuple (proj 3 3) (proj 3 3)) (F mul))))))
`, `
(def sqnorm (v) : (Tuple (Vec Float)) => Float
  (sumbuild
    (comp (proj 1 1) (F size))
    (lam (i : Integer)
      (let x
        (comp (tuple (comp (prune 2 / 2) (proj 1 1)) (comp (prune 1 / 2) (proj 1 1))) (F index))
        (comp (prune 3 / 3) (tuple (proj 1 1) (proj 1 1)) (F mul))))))
`},
	}
	for _, tt := range tests {
		f := fn(t, prog, tt.name)
		if got := cl.FormatDef(convert(t, f, false), nil); got != tt.unpruned[1:] {
			t.Errorf("unpruned CL of %s:\n%s", tt.name, cmp.Diff(tt.unpruned[1:], got))
		}
		if got := cl.FormatDef(convert(t, f, true), nil); got != tt.pruned[1:] {
			t.Errorf("pruned CL of %s:\n%s", tt.name, cmp.Diff(tt.pruned[1:], got))
		}
	}
}

// pruningCases have unused parameters, unused and shadowed let variables,
// lambdas that do not use their index or the enclosing variables, tuple
// patterns, and asserts and ifs that use different variables.
const pruningCases = `
(def unused_param Float ((a : Float) (b : Integer) (c : Float)) (mul a c))
(def no_params Float () 1.5)
(def constant Float ((a : Float) (b : Float)) 2.0)
(def unused_let Float ((a : Float) (b : Float)) (let (x (mul a a)) b))
(def shadow Float ((x : Float) (y : Float))
  (let (x (add x y)) (let (x (mul x 2.0)) x)))
(def pattern Float (p : Tuple Float Float Float)
  (let ((a b c) p) (add a c)))
(def no_index (Vec Float) ((n : Integer) (x : Float)) (build n (lam (i : Integer) x)))
(def only_index (Vec Integer) ((n : Integer) (x : Float)) (build n (lam (i : Integer) (mul i 2))))
(def nested Float ((v : Vec Float) (w : Vec Float) (s : Float))
  (sumbuild (size v) (lam (i : Integer)
    (sumbuild (size w) (lam (j : Integer) (mul s (index j w)))))))
(def branches Float ((c : Bool) (a : Float) (b : Float) (d : Float))
  (if c (assert (gt a 0.0) (mul a a)) (add b b)))
(def folds Float ((v : Vec Float) (k : Float) (unused : Integer))
  (fold (lam (acc_x : Tuple Float Float) (let ((acc x) acc_x) (add acc (mul k x)))) 0.0 v))
`

// TestCLPruning checks that in the CL of each function no sub-term receives
// a variable it does not use (cl.CheckPruned), and that the same functions
// converted without pruning do not have that property where they have
// unused variables.
func TestCLPruning(t *testing.T) {
	prog := load(t, pruningCases)
	for _, f := range prog.Funcs {
		d := convert(t, f, true)
		if err := cl.CheckPruned(d); err != nil {
			t.Errorf("%s: %v\n%s", f.Name, err, cl.FormatDef(d, nil))
		}
		u := convert(t, f, false)
		if err := cl.CheckPruned(u); err == nil && f.Name.Base != "no_params" {
			t.Errorf("%s: unpruned CL passes CheckPruned:\n%s", f.Name, cl.FormatDef(u, nil))
		}
	}
	// Some expected prunings, as printed.
	want := map[string][]string{
		"unused_param": {"(comp (prune 1 3 / 3)"},
		"constant":     {"(comp (prune / 2) (K 2.0))"},
		"unused_let":   {"(comp (prune 2 / 3) (proj 1 1))"},
		"shadow":       {"(comp (prune 3 / 3)\n      (let x", "(comp (prune 2 / 2) (proj 1 1))"},
		"pattern":      {"(comp (prune 2 4 / 4)"},
		"no_index":     {"(comp (prune 2 / 3) (proj 1 1))"},
		"only_index":   {"(comp (prune 2 / 2) (tuple (proj 1 1) (comp (prune / 1) (K 2))) (F mul))"},
		"nested":       {"(comp (prune 1 / 3) (proj 1 1) (F size))", "(lam (i : Integer)\n      (comp (prune 2 3 / 4)"},
		"folds":        {"(comp (prune 1 2 / 3)", "(comp (prune 2 3 / 3)", "(comp (prune 1 3 4 / 4)"},
	}
	for name, frags := range want {
		text := cl.FormatDef(convert(t, fn(t, prog, name), true), nil)
		for _, frag := range frags {
			if !strings.Contains(text, frag) {
				t.Errorf("the CL of %s lacks %q:\n%s", name, frag, text)
			}
		}
	}
}

// TestCLCheckPrunedRejects checks that CheckPruned names what a sub-term
// receives without using.
func TestCLCheckPrunedRejects(t *testing.T) {
	prog := load(t, pruningCases)
	d := convert(t, fn(t, prog, "unused_param"), false)
	err := cl.CheckPruned(d)
	if err == nil || !strings.Contains(err.Error(), "receives b") {
		t.Errorf("CheckPruned of the unpruned unused_param: %v, want an error naming b", err)
	}
	// A pruning that keeps everything, and one that reorders.
	s := types.TupleOf(types.FloatType, types.FloatType)
	for _, body := range []cl.Term{
		&cl.Comp{A: &cl.Prune{S: s, Idx: []int{1, 2}}, B: &cl.Proj{S: s, I: 1}},
		&cl.Comp{A: &cl.Prune{S: s, Idx: []int{2, 1}}, B: &cl.Proj{S: s, I: 1}},
	} {
		f := &ir.Func{Name: ir.Name{Base: "k"}, Arg: s, Result: types.FloatType,
			Params: []*ir.Var{{Name: "a", T: types.FloatType}, {Name: "b", T: types.FloatType}}}
		if err := cl.CheckPruned(&cl.Def{Func: f, Params: f.Params, Body: body}); err == nil {
			t.Errorf("CheckPruned accepts %s", cl.Sprint(body))
		}
	}
}

// TestCLCheckErrors checks that ill-typed terms are errors at a position,
// not panics.
func TestCLCheckErrors(t *testing.T) {
	F, I, B := types.FloatType, types.IntegerType, types.BoolType
	ff := types.TupleOf(F, F)
	pos := syntax.Pos{File: "t.ks", Line: 3, Col: 7}
	add := ir.LookupPrim("add")[0] // (Float, Float) -> Float
	build := ir.LookupPrim("build")[0]
	tests := []struct {
		term cl.Term
		msg  string
	}{
		{nil, "missing term"},
		{&cl.Id{P: pos}, "identity without a type"},
		{&cl.Const{P: pos, S: ff, T: F, Val: int64(1)}, "has type Integer"},
		{&cl.Const{P: pos, S: ff, T: F, Val: 1}, "Go type int"},
		{&cl.Prune{P: pos, S: F, Idx: []int{1}}, "not a tuple"},
		{&cl.Prune{P: pos, S: ff, Idx: []int{3}}, "field 3 of a 2-tuple"},
		{&cl.Proj{P: pos, S: ff, I: 0}, "field 0"},
		{&cl.Func{P: pos, Prim: add, S: types.TupleOf(I, I), T: F}, "add takes"},
		{&cl.Func{P: pos, Prim: add, S: F, T: F}, "add takes"},
		{&cl.Func{P: pos, S: F, T: F}, "exactly one"},
		{&cl.Func{P: pos, Prim: build, S: F, T: F}, "combinator"},
		{&cl.Comp{P: pos, A: &cl.Proj{S: ff, I: 1}, B: &cl.Proj{S: ff, I: 1}}, "composition of a term returning Float with one taking (Tuple Float Float)"},
		{&cl.Tuple{P: pos, S: ff, Elems: []cl.Term{&cl.Id{T: F}}}, "field 1 of a tuple"},
		{&cl.If{P: pos, Cond: &cl.Proj{S: ff, I: 1}, Then: &cl.Id{T: ff}, Else: &cl.Id{T: ff}}, "not Bool"},
		{&cl.If{P: pos, Cond: &cl.Const{S: ff, T: B, Val: true}, Then: &cl.Proj{S: ff, I: 1}, Else: &cl.Id{T: ff}}, "branches"},
		{&cl.Let{P: pos, Vars: []cl.Var{{Name: "x", T: F}}, Rhs: &cl.Proj{S: ff, I: 1}, Body: &cl.Proj{S: ff, I: 1}}, "extended context"},
		{&cl.Let{P: pos, Vars: []cl.Var{{Name: "x", T: I}}, Rhs: &cl.Proj{S: ff, I: 1}, Body: &cl.Id{T: ff}}, "binds x"},
		{&cl.Let{P: pos, Vars: []cl.Var{{Name: "a", T: F}, {Name: "b", T: F}}, Pattern: true, Rhs: &cl.Proj{S: ff, I: 1}, Body: &cl.Id{T: ff}}, "pattern"},
		{&cl.Lam{P: pos, Param: cl.Var{Name: "i", T: I}, Body: &cl.Id{T: types.TupleOf(F, I)}}, "outside"},
		{&cl.Assert{P: pos, Cond: &cl.Proj{S: ff, I: 1}, Body: &cl.Id{T: ff}}, "not Bool"},
		{&cl.Comb{P: pos, Prim: build, S: ff, T: types.VecOf(F), Args: []cl.Term{
			&cl.Const{S: ff, T: I, Val: int64(3)}, &cl.Proj{S: ff, I: 1}}}, "must be a function"},
		{&cl.Comb{P: pos, Prim: build, S: ff, T: types.VecOf(I), Args: []cl.Term{
			&cl.Const{S: ff, T: I, Val: int64(3)},
			&cl.Lam{Param: cl.Var{Name: "i", T: I}, Body: &cl.Proj{S: types.TupleOf(F, F, I), I: 1}}}}, "returns (Vec Float), not (Vec Integer)"},
		{&cl.Comb{P: pos, Prim: add, S: ff, T: F}, "takes no function"},
	}
	for _, tt := range tests {
		_, _, err := cl.Check(tt.term)
		var se *syntax.Error
		if !errors.As(err, &se) {
			t.Errorf("Check(%s) = %v, want a *syntax.Error", cl.Sprint(tt.term), err)
			continue
		}
		if !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Check(%s): %q, want it to mention %q", cl.Sprint(tt.term), se.Msg, tt.msg)
		}
	}
	inner := &cl.Proj{P: pos, S: ff, I: 5}
	_, _, err := cl.Check(&cl.Comp{A: &cl.Id{T: ff}, B: inner})
	if se := new(syntax.Error); !errors.As(err, &se) || se.Pos != pos {
		t.Errorf("Check of an ill-typed sub-term: %v, want an error at %s", err, pos)
	}
}

// TestCLConvertErrors checks that what CL cannot express is an error at its
// position.
func TestCLConvertErrors(t *testing.T) {
	F := types.FloatType
	pos := syntax.Pos{File: "t.ks", Line: 2, Col: 5}
	x := &ir.Var{Name: "x", T: F}
	lam := &ir.Lam{P: pos, Param: &ir.Var{Name: "y", T: F}, Body: &ir.Var{Name: "y", T: F}}
	tests := []struct {
		body ir.Expr
		msg  string
	}{
		{&ir.Let{P: pos, Vars: []*ir.Var{{Name: "l", T: lam.Type()}}, Rhs: lam, Body: ir.Ref(pos, x)}, "lambda"},
		{&ir.Var{P: pos, Name: "nowhere", T: F}, "not in scope"},
		{&ir.Call{P: pos, T: types.VecOf(F), Prim: ir.LookupPrim("build")[0], Args: []ir.Expr{ir.Int(pos, 3), ir.Float(pos, 1)}}, "must be a lambda"},
	}
	for _, tt := range tests {
		f := &ir.Func{P: pos, Name: ir.Name{Base: "bad"}, BaseArg: F, Arg: F, Result: tt.body.Type(), Params: []*ir.Var{x}, Body: tt.body}
		_, err := cl.Convert(f)
		var se *syntax.Error
		if !errors.As(err, &se) || se.Pos != pos || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Convert(%s) = %v, want an error at %s about %q", ir.FormatExpr(tt.body), err, pos, tt.msg)
		}
		if _, err := cl.Derive(f, &ir.Names{}); err == nil {
			t.Errorf("Derive(%s) succeeds", ir.FormatExpr(tt.body))
		}
		if _, err := cl.Format(&ir.Program{Funcs: []*ir.Func{f}}); !errors.As(err, new(syntax.ErrorList)) {
			t.Errorf("Format of %s: %v, want a syntax.ErrorList", ir.FormatExpr(tt.body), err)
		}
	}
}

// TestCLBackOrder checks that converting back keeps the order of effects:
// a value computed before a binding is bound before it.
func TestCLBackOrder(t *testing.T) {
	prog := load(t, `
(def f Integer (n : Integer)
  (add (print "a") (let (x (print "b" n)) (add x n))))
(def g (Tuple Integer Integer) (n : Integer)
  (let (unused (print "c")) (tuple (print "d") (assert (gt n 0) (print "e")))))
(def h Integer (n : Integer)
  (get$2$2 (tuple (print "c") (add n 1))))
(def k (Tuple Integer Integer) (n : Integer)
  (let (p (tuple (print "k") (add n 1))) (tuple (get$2$2 p) (get$1$2 p))))
`)
	want := map[string]string{
		"f": `(let (t$1 (print "a")) (let (x$1 (print "b" n)) (add t$1 (add x$1 n))))`,
		"g": `(let (unused$1 (print "c")) (let (t$1 (print "d")) (assert (gt n 0) (tuple t$1 (print "e")))))`,
		"h": `(let (t$1 (print "c")) (add n 1))`,
		"k": `(let (p$1 (tuple (print "k") (add n 1))) (tuple (get$2$2 p$1) (get$1$2 p$1)))`,
	}
	for name, w := range want {
		f := fn(t, prog, name)
		body, err := convert(t, f, true).Expr(&ir.Names{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(ir.FormatExpr(body)), " "); got != w {
			t.Errorf("%s converted back:\n%s\nwant\n%s", name, got, w)
		}
	}
}

// TestCLApply checks t ◇ c on terms built by hand: a constant keeps the
// effects of its input, and a tuple computes its input once.
func TestCLApply(t *testing.T) {
	I, S := types.IntegerType, types.StringType
	printS := ir.LookupPrim("print")[0]
	pos := syntax.Pos{}
	hello := ir.MkPrim(pos, "print", &ir.Const{T: S, Val: "hi"})
	konst := &cl.Const{S: I, T: I, Val: int64(7)}
	got, err := cl.Apply(konst, hello, &ir.Names{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ir.FormatExpr(got); s != `(let (t$1 (print "hi")) 7)` {
		t.Errorf("K(7) applied to a print: %s", s)
	}
	pair := &cl.Tuple{S: I, Elems: []cl.Term{&cl.Id{T: I}, &cl.Comp{A: &cl.Id{T: I}, B: &cl.Func{Prim: printS, S: I, T: I}}}}
	got, err = cl.Apply(pair, hello, &ir.Names{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ir.FormatExpr(got); s != `(let (t$1 (print "hi")) (tuple t$1 (print t$1)))` {
		t.Errorf("(I, F(print)) applied to a print: %s", s)
	}
	if _, err := cl.Apply(konst, ir.Float(pos, 1), &ir.Names{}); err == nil {
		t.Errorf("applying a term on Integer to a Float succeeds")
	}
}

// evalCases are functions and arguments at which the evaluator runs
// their CL, pruned, unpruned and after a round trip through the IR.
var evalCases = []struct {
	name string
	arg  cl.Value
	want string
}{
	{"f", cl.TupleValue{2.0, 3.0, 0.5}, "6.5"},
	{"g", cl.TupleValue{1.5, 100.0}, "6"},
	{"h", cl.TupleValue{int64(3), cl.Vec(1.0, 2.0, 3.0), 2.0}, "[2, 4, 6]"},
	{"sqnorm", cl.Vec(1.0, 2.0, 3.0), "14"},
	{"shadow", cl.TupleValue{1.0, 2.0}, "6"},
	{"pattern", cl.TupleValue{1.0, 2.0, 4.0}, "5"},
	{"no_index", cl.TupleValue{int64(2), 1.5}, "[1.5, 1.5]"},
	{"nested", cl.TupleValue{cl.Vec(1.0, 1.0), cl.Vec(1.0, 2.0), 3.0}, "18"},
	{"branches", cl.TupleValue{true, 3.0, 1.0, 0.0}, "9"},
	{"branches", cl.TupleValue{false, 3.0, 1.0, 0.0}, "2"},
	{"folds", cl.TupleValue{cl.Vec(1.0, 2.0), 10.0, int64(0)}, "30"},
	{"tensors", cl.TupleValue{int64(2), int64(3)}, "[[0, 1, 2], [1, 2, 3]] 9 [0, 2, 4] 2,3"},
	{"sparse", int64(3), "[1.5, 0, 0.333333, 0]"},
	{"prelude", cl.Vec(3.0, -1.0, 4.0), "4 2 [-1.5, -3.5, -1]"},
}

const evalProgram = examples + pruningCases + `
(def tensors (Tuple (Tensor 2 Integer) Integer (Vec Integer) (Tuple Integer Integer)) ((r : Integer) (c : Integer))
  (let (m (build (tuple r c) (lam (ij : Tuple Integer Integer) (add (get$1$2 ij) (get$2$2 ij)))))
    (tuple m (sum (map (lam (x : Integer) x) m))
           (map2 (lam (ab : Tuple Integer Integer) (add (get$1$2 ab) (get$2$2 ab))) (build c (lam (i : Integer) i)) (build c (lam (i : Integer) i)))
           (size m))))
(def sparse (Vec Float) (n : Integer)
  (buildFromSparse 4 n (lam (i : Integer) (tuple (mul 2 (div i 2)) (div 1.0 (to_float (add i 1)))))))
(def prelude (Tuple Float Integer (Vec Float)) (v : Vec Float)
  (tuple (max v) (imax v) (sub (mul 0.5 v) 3.0)))
`

// TestCLEval checks the evaluator on functions of all kinds, on their CL
// pruned and unpruned and after a round trip through the IR.
func TestCLEval(t *testing.T) {
	prog := load(t, evalProgram)
	ns := prog.Names()
	for _, tt := range evalCases {
		f := fn(t, prog, tt.name)
		back, err := convert(t, f, true).Expr(ns)
		if err != nil {
			t.Fatal(err)
		}
		trip := *f
		trip.Body = back
		if err := ir.Check(&ir.Program{Funcs: []*ir.Func{&trip}}); err != nil {
			t.Errorf("%s converted back: %v", tt.name, err)
		}
		for _, d := range []*cl.Def{convert(t, f, true), convert(t, f, false), convert(t, &trip, true)} {
			m := cl.NewMachine(nil)
			v, err := m.Eval(d.Body, context(d, tt.arg))
			if err != nil {
				t.Errorf("%s%s: %v", tt.name, cl.FormatValue(tt.arg), err)
				continue
			}
			if got := formatParts(v); got != tt.want {
				t.Errorf("%s at %s = %s, want %s", tt.name, cl.FormatValue(tt.arg), formatParts(v), tt.want)
			}
		}
	}
}

// context returns the context of d's parameters for the argument arg.
func context(d *cl.Def, arg cl.Value) cl.Value {
	if len(d.Params) == 1 {
		return cl.TupleValue{arg}
	}
	return arg
}

// formatParts prints a tuple's parts separated by spaces, like print.
func formatParts(v cl.Value) string {
	t, ok := v.(cl.TupleValue)
	if !ok {
		return cl.FormatValue(v)
	}
	parts := make([]string, len(t))
	for i, x := range t {
		parts[i] = cl.FormatValue(x)
	}
	return strings.Join(parts, " ")
}

// TestCLEvalErrors checks runtime errors and the depth limit.
func TestCLEvalErrors(t *testing.T) {
	prog := load(t, `
(def down Integer (n : Integer) (if (eq n 0) 0 (add 1 (down (sub n 1)))))
(def bad Float (v : Vec Float) (index 5 v))
(def checked Float (x : Float) (assert (gt x 0.0) (log x)))
(def loud Integer (x : Integer) (print "x=" x "\n"))
(edef ext Float (Float))
(def calls_ext Float (x : Float) (ext x))
`)
	var out bytes.Buffer
	m := cl.NewMachine(&out)
	if v, err := m.Call(fn(t, prog, "down"), int64(1000)); err != nil || v != int64(1000) {
		t.Errorf("down 1000 = %v, %v", v, err)
	}
	tests := []struct {
		f   string
		arg cl.Value
		msg string
	}{
		{"down", int64(cl.MaxDepth + 1), "runtime error: recursion too deep in down"},
		{"bad", cl.Vec(1.0), "test.ks:3:32: runtime error: index 5 out of range for size 1"},
		{"checked", -1.0, "test.ks:4:32: runtime error: assertion failed"},
		{"calls_ext", 1.0, "no definition"},
	}
	for _, tt := range tests {
		_, err := m.Call(fn(t, prog, tt.f), tt.arg)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s %s: %v, want an error containing %q", tt.f, cl.FormatValue(tt.arg), err, tt.msg)
		}
	}
	if v, err := m.Call(fn(t, prog, "loud"), int64(4)); err != nil || v != int64(2) || out.String() != "x=4\n" {
		t.Errorf("loud 4 = %v, %v, printing %q", v, err, out.String())
	}
	// Values of the wrong type are errors, not panics.
	if _, err := m.Call(fn(t, prog, "down"), 1.5); err == nil || !strings.Contains(err.Error(), "1.5 is not a value of type Integer") {
		t.Errorf("down 1.5: %v", err)
	}
	if _, err := m.Call(fn(t, prog, "bad"), &cl.Tensor{Shape: []int64{2}, Elems: []cl.Value{1.0}}); err == nil {
		t.Errorf("bad of a malformed tensor succeeds")
	}
	if _, err := m.Eval(&cl.Proj{S: types.TupleOf(types.FloatType), I: 1}, cl.TupleValue{"s"}); err == nil {
		t.Errorf("evaluating a projection of a (Tuple Float) on (s) succeeds")
	}
}

// TestCLFormat checks emit --stage cl's printer on a derived program: it
// skips the functions with linear maps in their types and names
// overloads by their argument types.
func TestCLFormat(t *testing.T) {
	prog, err := driver.LoadSources([]driver.Source{{Name: "test.ks", Text: []byte(`
(def sq Float (x : Float) (mul x x))
(def sq Integer (x : Integer) (mul x x))
(gdef fwd [sq Float])
(gdef CL [sq Integer])
`)}}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	text, err := cl.Format(prog)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	for _, want := range []string{"(def [sq Float] (x)", "(def [sq Integer] (x)", "(def [fwd [sq Float]] (x dx)", "(def [CL [sq Integer]] (x)", "(F [D [sq Float]])"} {
		if !strings.Contains(s, want) {
			t.Errorf("Format lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "(def [D") {
		t.Errorf("Format prints a function with linear maps:\n%s", s)
	}
}

// TestCLDerive checks the body of [CL f] for a derived function.
func TestCLDerive(t *testing.T) {
	prog, err := driver.LoadSources([]driver.Source{{Name: "test.ks", Text: []byte(examples + `
(gdef CL [h (Tuple Integer (Vec Float) Float)])
`)}}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Check(prog); err != nil {
		t.Fatal(err)
	}
	var clh *ir.Func
	for _, f := range prog.Funcs {
		if f.Name.String() == "[CL h]" {
			clh = f
		}
	}
	if clh == nil {
		t.Fatal("no [CL h]")
	}
	want := "(build n (lam (i$1 : Integer) (mul k (index i$1 v))))"
	if got := ir.FormatExpr(clh.Body); got != want {
		t.Errorf("[CL h] = %s, want %s", got, want)
	}
}

// TestCLParse checks that printed CL parses back to the same CL, and that
// malformed CL is an error at its position.
func TestCLParse(t *testing.T) {
	prog := load(t, evalProgram)
	text, err := cl.Format(prog)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := cl.Parse("test.cl", text, prog)
	if err != nil {
		t.Fatal(err)
	}
	var again strings.Builder
	for _, d := range defs {
		again.WriteString(cl.FormatDef(d, cl.Namer(prog)) + "\n")
	}
	if diff := cmp.Diff(string(text), again.String()); diff != "" {
		t.Errorf("print(parse(print(CL))) differs (-want +got):\n%s", diff)
	}
	bad := []struct{ src, msg string }{
		{"(def f (x y z) : (Tuple Float Float Float) => Float (K 1))", "returns Integer, not Float"},
		{"(def nowhere () : (Tuple) => Float (K 1.0))", "no function nowhere"},
		{"(def f (x y) : (Tuple Float Float Float) => Float id)", "context of 2 parameters"},
		{"(def f (x y z) : (Tuple Float Float Float) => Float (prune 1 / 2))", "(prune 1 / 2) of an input"},
		{"(def f (x y z) : (Tuple Float Float Float) => Float (comp (proj 1 3) (F frobnicate)))", "no function or primitive frobnicate taking Float"},
		{"(def f (x y z) : (Tuple Float Float Float) => Float (wibble))", "unknown CL term wibble"},
		{"(def f (x y z) : (Tuple Float Float Floaty) => Float id)", "unknown type Floaty"},
		{"(def f (x y z) : (Tuple Float Float Float) => Float (build (K 3) (lam (i : Float) (K 1.0))))", "build cannot take"},
		{"(def f (x y z) : (Tuple Float Float Float) => Float", "unclosed"},
	}
	for _, b := range bad {
		_, err := cl.Parse("bad.cl", []byte(b.src), prog)
		var el syntax.ErrorList
		if !errors.As(err, &el) || !strings.Contains(err.Error(), b.msg) || !strings.HasPrefix(err.Error(), "bad.cl:1:") {
			t.Errorf("Parse(%s): %v, want an error at bad.cl:1 about %q", b.src, err, b.msg)
		}
	}
}
