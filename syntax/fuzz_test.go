package syntax_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ksc-lang/ksc/syntax"
)

// addCorpus seeds a fuzz target with small programs and every .ks file of
// the test suite.
func addCorpus(f *testing.F) {
	for _, s := range []string{
		"",
		"(def f Float (x : Float) x)",
		"(def f Float ((x : Float) (y : Float)) (let ((a b) (tuple x y)) (add a b)))",
		"(let ((a b) (c d)) e)",
		"#| a #| nested |# comment |# (edef g Float (Tuple Float Float)) ; end",
		`(def main Integer () (print "a\"b\n" 1e38 -0x1f [rev [f (Vec Float)]]))`,
		"(gdef rev [f (Tensor 2 Float)])",
		"(gdef rev [f (Tensor 2 Float)] 0 2)",
		"(gdef rev [])",
		"(def f Float (x : Float) ([] x))",
		"(rule \"r\" (x : Float) (add x 0.0) x)",
		"(def f (Vec Float) (v : Vec Float) (build (size v) (lam (i : Integer) (index i v))))",
		"((((",
		"1. 1x .5 -",
	} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("../tests/testdata/*/*.ks")
	for _, file := range files {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(src)
		}
	}
}

// FuzzParse checks that no input makes the parser panic, that the
// canonical print of whatever parses reads back as the same tree, and
// that printing is idempotent.
func FuzzParse(f *testing.F) {
	addCorpus(f)
	opts := cmp.Options{cmpopts.IgnoreTypes(syntax.Pos{}), cmpopts.IgnoreFields(syntax.File{}, "Comments", "Name")}
	f.Fuzz(func(t *testing.T, src []byte) {
		f1, err := syntax.ParseFile("fuzz.ks", src)
		if err != nil {
			if _, ok := err.(syntax.ErrorList); !ok {
				t.Fatalf("error is not an ErrorList: %v", err)
			}
			return
		}
		out1 := syntax.FormatFile(f1)
		f2, err := syntax.ParseFile("fuzz.ks", out1)
		if err != nil {
			t.Fatalf("the canonical print does not parse: %v\n%s", err, out1)
		}
		if diff := cmp.Diff(syntax.Normalize(f1), syntax.Normalize(f2), opts); diff != "" {
			t.Fatalf("different tree after printing (-want +got):\n%s\n%s", diff, out1)
		}
		if out2 := syntax.FormatFile(f2); string(out2) != string(out1) {
			t.Fatalf("printing is not idempotent:\n%s\n---\n%s", out1, out2)
		}
	})
}
