package tests

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/syntax"
)

var errorMark = regexp.MustCompile(`; ERROR "((?:[^"\\]|\\.)*)"`)

// TestErrors checks the programs of testdata/errors: every line marked
// ; ERROR "regexp" must get an error matching regexp, and no other line
// may get one. A file may hold several programs separated by lines that
// start with ";----"; each is checked on its own, with its line numbers
// kept, up to the optimised program (where derivatives of derivatives are
// made).
func TestErrors(t *testing.T) {
	for _, file := range programFiles(t, "errors") {
		t.Run(strings.TrimPrefix(strings.TrimSuffix(file, ".ks"), "testdata/errors/"), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range chunks(string(src)) {
				checkErrors(t, file, chunk)
			}
		})
	}
}

// chunks splits a file at ";----" lines, blanking the other chunks' lines
// so that positions stay those of the file.
func chunks(src string) []string {
	lines := strings.Split(src, "\n")
	var bounds []int
	bounds = append(bounds, 0)
	for i, l := range lines {
		if strings.HasPrefix(l, ";----") {
			bounds = append(bounds, i)
		}
	}
	bounds = append(bounds, len(lines))
	var out []string
	for k := 0; k+1 < len(bounds); k++ {
		c := make([]string, len(lines))
		copy(c[bounds[k]:bounds[k+1]], lines[bounds[k]:bounds[k+1]])
		out = append(out, strings.Join(c, "\n"))
	}
	return out
}

func checkErrors(t *testing.T, file, src string) {
	t.Helper()
	want := map[int]*regexp.Regexp{}
	for i, l := range strings.Split(src, "\n") {
		if m := errorMark.FindStringSubmatch(l); m != nil {
			want[i+1] = regexp.MustCompile(unquote(m[1]))
		}
	}
	if len(want) == 0 {
		return // a chunk without errors (the header of a file)
	}
	_, err := driver.LoadSources([]driver.Source{{Name: file, Text: []byte(src)}}, driver.Optimised)
	if err == nil {
		t.Errorf("no errors reported; want errors on lines %v", keys(want))
		return
	}
	if driver.IsInternal(err) {
		t.Fatalf("internal compiler error: %v", err)
	}
	var el syntax.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("error without a position: %v", err)
	}
	got := map[int]bool{}
	for _, e := range el {
		line := int(e.Pos.Line)
		if e.Pos.File != file {
			t.Errorf("error in file %q, want %q: %v", e.Pos.File, file, e)
			continue
		}
		re, ok := want[line]
		text := strings.TrimPrefix(e.Error(), e.Pos.String()+": ") // with the hint
		switch {
		case !ok:
			t.Errorf("unexpected error: %v", e)
		case !re.MatchString(text):
			t.Errorf("%d: error %q does not match %q", line, text, re)
		}
		got[line] = true
	}
	for line, re := range want {
		if !got[line] {
			t.Errorf("%s:%d: missing error matching %q", file, line, re)
		}
	}
}

func keys(m map[int]*regexp.Regexp) string {
	var ks []string
	for k := range m {
		ks = append(ks, fmt.Sprint(k))
	}
	return strings.Join(ks, ", ")
}
