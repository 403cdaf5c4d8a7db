package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A docExample is a program of a document with the output the document
// says it prints.
type docExample struct {
	line int // where its code block starts
	src  string
	want string
}

// docExamples returns the programs of a Markdown document: each fenced
// code block holding a (def main ...) that the text after it says
// "prints `OUT`" of, or "prints" followed by a code block of the output.
func docExamples(doc string) []docExample {
	type block struct {
		line       int
		text, tail string // the block, and the prose up to the next block
	}
	var blocks []block
	lines := strings.Split(doc, "\n")
	fence := regexp.MustCompile("^( *)```")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			if len(blocks) > 0 {
				blocks[len(blocks)-1].tail += lines[i] + "\n"
			}
			continue
		}
		indent := len(m[1])
		b := block{line: i + 1}
		for i++; i < len(lines) && !fence.MatchString(lines[i]); i++ {
			l := lines[i]
			if len(l) >= indent {
				l = l[indent:]
			}
			b.text += l + "\n"
		}
		blocks = append(blocks, b)
	}
	inline := regexp.MustCompile("prints `([^`]*)`")
	var out []docExample
	for k, b := range blocks {
		if !strings.Contains(b.text, "(def main ") {
			continue
		}
		switch {
		case inline.MatchString(b.tail):
			out = append(out, docExample{b.line, b.text, inline.FindStringSubmatch(b.tail)[1] + "\n"})
		case strings.Contains(b.tail, "prints") && k+1 < len(blocks):
			out = append(out, docExample{b.line, b.text, blocks[k+1].text})
		}
	}
	return out
}

// TestLanguageExamples runs every example program of the language
// reference (docs/language.md) that says what it prints, and checks that
// it prints that, compiled to C.
func TestLanguageExamples(t *testing.T) {
	needCC(t)
	doc, err := os.ReadFile(filepath.Join("..", "docs", "language.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := docExamples(string(doc))
	if len(examples) < 10 {
		t.Fatalf("found %d examples in docs/language.md, want at least 10", len(examples))
	}
	for _, ex := range examples {
		t.Run("line"+strconv.Itoa(ex.line), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "example.ks")
			if err := os.WriteFile(file, []byte(ex.src), 0o644); err != nil {
				t.Fatal(err)
			}
			r := runProgram(t, "c", file)
			if r.code != 0 || r.stdout != ex.want {
				t.Errorf("docs/language.md:%d: the example printed %q (status %d, stderr %q), the text says %q",
					ex.line, r.stdout, r.code, r.stderr, ex.want)
			}
		})
	}
}
