package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ksc-lang/ksc/syntax"
)

// allSources returns every .ks file under testdata.
func allSources(t *testing.T) []string {
	t.Helper()
	var fs []string
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".ks" {
			fs = append(fs, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// treeOpts compare syntax trees ignoring positions, comments and the file name.
var treeOpts = cmp.Options{
	cmpopts.IgnoreTypes(syntax.Pos{}),
	cmpopts.IgnoreFields(syntax.File{}, "Comments", "Name"),
}

// TestRoundTrip checks, for every source under testdata that parses, that
// the canonical print parses to the same tree and that printing is
// idempotent.
func TestRoundTrip(t *testing.T) {
	n := 0
	for _, file := range allSources(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f1, err := syntax.ParseFile(file, src)
		if err != nil {
			continue // error tests may not parse
		}
		n++
		out1 := syntax.FormatFile(f1)
		f2, err := syntax.ParseFile(file, out1)
		if err != nil {
			t.Errorf("%s: the canonical print does not parse: %v\n%s", file, err, out1)
			continue
		}
		if diff := cmp.Diff(syntax.Normalize(f1), syntax.Normalize(f2), treeOpts); diff != "" {
			t.Errorf("%s: print(parse(x)) parses to a different tree (-want +got):\n%s", file, diff)
		}
		if out2 := syntax.FormatFile(f2); string(out2) != string(out1) {
			t.Errorf("%s: formatting is not idempotent:\n--- first ---\n%s--- second ---\n%s", file, out1, out2)
		}
	}
	if n < 10 {
		t.Errorf("only %d sources parsed", n)
	}
}
