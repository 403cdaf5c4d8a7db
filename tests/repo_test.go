package tests

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPackageDocs: every package of the repository says what it owns in
// a doc comment, and the README's layout table names it (or the first
// element of its path: bench, examples), so neither drifts from the tree
// (issue 18). It fails if a package is added without either.
func TestPackageDocs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| (.*?) \\|").FindAllStringSubmatch(string(readme), -1) {
		for _, p := range regexp.MustCompile("`([a-z/]+)`").FindAllStringSubmatch(m[1], -1) {
			listed[p[1]] = true
		}
	}
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		rel = filepath.ToSlash(rel)
		for name, p := range pkgs {
			doc := false
			for _, f := range p.Files {
				doc = doc || f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != ""
			}
			if !doc {
				t.Errorf("package %s (%s) has no doc comment saying what it owns", name, rel)
			}
			if !listed[rel] && !listed[strings.Split(rel, "/")[0]] {
				t.Errorf("the README's layout table does not list %s", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
