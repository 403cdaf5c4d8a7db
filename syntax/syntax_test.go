package syntax

import (
	"fmt"
	"strings"
	"testing"
)

func TestReadAtoms(t *testing.T) {
	for _, tc := range []struct {
		src  string
		kind AtomKind
		text string
	}{
		{"x", IdentAtom, "x"},
		{"get$1$2", IdentAtom, "get$1$2"},
		{"aten::mul", IdentAtom, "aten::mul"},
		{"x:", IdentAtom, "x:"},
		{"-", IdentAtom, "-"},
		{"-x", IdentAtom, "-x"},
		{"42", IntAtom, "42"},
		{"-7", IntAtom, "-7"},
		{"+7", IntAtom, "+7"},
		{"0x1f", IntAtom, "0x1f"},
		{"1.0", FloatAtom, "1.0"},
		{"-1.23", FloatAtom, "-1.23"},
		{"1e38", FloatAtom, "1e38"},
		{"2.5E-3", FloatAtom, "2.5E-3"},
		{`"a\"b\n"`, StringAtom, "a\"b\n"},
	} {
		sx, _, errs := Read("t.ks", []byte(tc.src))
		if len(errs) != 0 || len(sx) != 1 {
			t.Errorf("Read(%q): %v, %d s-expressions", tc.src, errs, len(sx))
			continue
		}
		a, ok := sx[0].(*Atom)
		if !ok || a.Kind != tc.kind || a.Text != tc.text {
			t.Errorf("Read(%q) = %#v, want kind %d text %q", tc.src, sx[0], tc.kind, tc.text)
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`"abc`, "1:1: unterminated string"},
		{"#| a #| b |# c", "1:1: unterminated block comment"},
		{"1.", "1:1: malformed number"},
		{"12x", "1:1: malformed number"},
		{"(a\n  b", "1:1: unclosed"},
		{"a )", "1:3: unexpected \")\""},
		{"(a]", "1:3: \"]\" closes \"(\""},
		{`"\q"`, `1:2: unknown escape \q`},
		{"\"a\x00b\"", "1:3: a NUL byte in a string"},
		{"#", `1:1: unexpected character '#'`},
	} {
		_, _, errs := Read("t.ks", []byte(tc.src))
		if len(errs) == 0 || !strings.Contains(errs.Error(), tc.want) {
			t.Errorf("Read(%q): errors %q, want %q", tc.src, errs, tc.want)
		}
	}
}

func TestComments(t *testing.T) {
	sx, cs, errs := Read("t.ks", []byte("; a\n#| b #| c |# |# x ; d\n"))
	if len(errs) != 0 || len(sx) != 1 || len(cs) != 3 {
		t.Fatalf("got %d s-expressions, %d comments, errors %v", len(sx), len(cs), errs)
	}
	if !cs[0].Own || !cs[1].Own || cs[2].Own {
		t.Errorf("Own flags: %v %v %v", cs[0].Own, cs[1].Own, cs[2].Own)
	}
}

func TestParseLetForms(t *testing.T) {
	for _, tc := range []struct {
		src     string
		binds   int
		pattern bool
	}{
		{"(let (x 1) x)", 1, false},
		{"(let ((a b) p) a)", 1, true},
		{"(let ((x 1) (y 2)) x)", 2, false},
		{"(let ((x 1)) x)", 1, false},
		{"(let ((a b) (c d)) a)", 1, true}, // ambiguous: the tuple pattern wins
		{"(let ((x 1) ((a b) p) (y 2)) x)", 3, false},
	} {
		e, err := ParseExpr("t.ks", []byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		l := e.(*Let)
		if len(l.Binds) != tc.binds || l.Binds[0].Pattern != tc.pattern {
			t.Errorf("%s: %d bindings, first pattern %v", tc.src, len(l.Binds), l.Binds[0].Pattern)
		}
	}
}

func TestParseNames(t *testing.T) {
	for _, tc := range []struct {
		src    string
		derivs string
		base   string
		arg    string
		wrt    string
	}{
		{"(f x)", "", "f", "", ""},
		{"([f Float] x)", "", "f", "Float", ""},
		{"([rev f] x)", "rev", "f", "", ""},
		{"([rev [f (Vec Float)]] x)", "rev", "f", "(Vec Float)", ""},
		{"([shape [rev f]] x)", "shape rev", "f", "", ""},
		{"([rev f 0 2] x)", "rev", "f", "", "[0 2]"},
		{"([vrev [f (Tuple Float Float)] 1] x)", "vrev", "f", "(Tuple Float Float)", "[1]"},
	} {
		e, err := ParseExpr("t.ks", []byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		n := e.(*Call).Fn
		arg := ""
		if r := n.Root(); r.Arg != nil {
			arg = r.Arg.T.String()
		}
		wrt := ""
		if n.Wrt != nil {
			wrt = fmt.Sprint(n.Wrt)
		}
		if strings.Join(n.Derivs(), " ") != tc.derivs || n.Root().Base != tc.base || arg != tc.arg || wrt != tc.wrt {
			t.Errorf("%s: derivs %v base %s arg %s wrt %s", tc.src, n.Derivs(), n.Root().Base, arg, wrt)
		}
		// The printer writes the name back as it was.
		if got := FormatExpr(e); got != tc.src {
			t.Errorf("%s printed as %s", tc.src, got)
		}
	}
}

func TestParseParams(t *testing.T) {
	src := `(def f Float (v : Vec Float) 1.0)
(def g Float () 1.0)
(def h Float ((a : Float) (b : Tensor 2 (Vec Float)) (t : Tuple)) 1.0)
(def k (Float) ((a : (Integer)) (b : Vec (Float)) (c : (Tuple (Bool) (String)))) 1.0)`
	f, err := ParseFile("t.ks", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// Knossos' parenthesised scalars, (Float), are the scalars.
	want := [][]string{{"(Vec Float)"}, {}, {"Float", "(Tensor 2 (Vec Float))", "(Tuple)"}, {"Integer", "(Vec Float)", "(Tuple Bool String)"}}
	for i, d := range f.Decls {
		ps := d.(*Def).Params
		if len(ps) != len(want[i]) {
			t.Errorf("def %d: %d params", i, len(ps))
			continue
		}
		for j, p := range ps {
			if p.Type.T.String() != want[i][j] {
				t.Errorf("def %d param %d: %s, want %s", i, j, p.Type.T, want[i][j])
			}
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"(def   f Float ( x : Float )   x)", "(def f Float (x : Float) x)\n"},
		{"(edef g Float (Float Float))", "(edef g Float (Tuple Float Float))\n"},
		{"(gdef rev [f (Vec Float)])", "(gdef rev [f (Vec Float)])\n"},
		{"; c\n(def f Float (x : Float) x) ; t\n", "; c\n(def f Float (x : Float) x) ; t\n"},
		{"(def f Float (x : Float)\n (let ((y x) (z w)) y))", "(def f Float (x : Float) (let ((y x) (z w)) y))\n"},
		// Read as a tuple pattern (y x) bound to (z (g w)), and printed so.
		{"(def f Float ((x : Float)) (let ((y x) (z (g w))) y))",
			"(def f Float ((x : Float)) (let ((y x) (z (g w))) y))\n"},
	} {
		f, err := ParseFile("t.ks", []byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if got := string(FormatFile(f)); got != tc.want {
			t.Errorf("FormatFile(%q) =\n%s\nwant\n%s", tc.src, got, tc.want)
		}
	}
}

// TestFormatAmbiguousLet prints a grouped let of two bindings whose first
// would read back as a tuple pattern: the printer must regroup it.
func TestFormatAmbiguousLet(t *testing.T) {
	let := &Let{Grouped: true, Binds: []*Binding{
		{Vars: []*Ident{{Name: "y"}}, Rhs: &Var{Name: "x"}},
		{Vars: []*Ident{{Name: "z"}}, Rhs: &Var{Name: "w"}},
	}, Body: &Var{Name: "y"}}
	got := FormatExpr(let)
	want := "(let ((y x)) (let ((z w)) y))"
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	e, err := ParseExpr("t.ks", []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if l := e.(*Let); len(l.Binds) != 1 || l.Binds[0].Pattern {
		t.Errorf("read back as %s", FormatExpr(e))
	}
}

// TestParseExprError: a malformed expression is an error with its
// position, not a panic.
func TestParseExprError(t *testing.T) {
	for _, src := range []string{"(let (x 1.0))", "(lam x)", "(if true 1.0)", "([] x)", "([rev []] x)", "($dummy (Float 2))"} {
		_, err := ParseExpr("t.ks", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "t.ks:1:") {
			t.Errorf("%s: error %v, want one at t.ks:1:", src, err)
		}
	}
}

// TestNestingLimit: lists nested deeper than MaxDepth are one positioned
// error, read in linear time, not a stack overflow; MaxDepth levels read.
func TestNestingLimit(t *testing.T) {
	deep := strings.Repeat("(", MaxDepth+1) + strings.Repeat(")", MaxDepth+1)
	_, _, errs := Read("t.ks", []byte(deep))
	if len(errs) != 1 || errs[0].Pos.Col != MaxDepth+1 || !strings.Contains(errs[0].Msg, "nest more than") {
		t.Errorf("%d levels: %v", MaxDepth+1, errs)
	}
	huge := strings.Repeat("(", 1000000)
	if _, _, errs := Read("t.ks", []byte(huge)); len(errs) != 1 {
		t.Errorf("10^6 levels: %d errors, want 1", len(errs))
	}
	ok := strings.Repeat("(", MaxDepth) + strings.Repeat(")", MaxDepth)
	if _, _, errs := Read("t.ks", []byte(ok)); len(errs) != 0 {
		t.Errorf("%d levels: %v", MaxDepth, errs)
	}
}
