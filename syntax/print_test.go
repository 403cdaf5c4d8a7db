package syntax

import (
	"strings"
	"testing"
)

// TestFormatDeepNestIsLinear pins that the text of a deep nest grows with
// the nest's size: indentation stops at MaxIndent (it used to grow with
// the depth, so a chain of 9,000 lets printed 324 MB).
func TestFormatDeepNestIsLinear(t *testing.T) {
	chain := func(k int) string {
		var b strings.Builder
		b.WriteString("(def f Float (x : Float)\n")
		for i := 0; i < k; i++ {
			b.WriteString("(let (x (mul x (sin x)))\n")
		}
		b.WriteString("x" + strings.Repeat(")", k) + ")\n")
		return b.String()
	}
	size := map[int]int{}
	for _, k := range []int{1000, 4000} {
		f, err := ParseFile("chain.ks", []byte(chain(k)))
		if err != nil {
			t.Fatal(err)
		}
		out := FormatFile(f)
		size[k] = len(out)
		for i, l := range strings.Split(string(out), "\n") {
			if ind := len(l) - len(strings.TrimLeft(l, " ")); ind > MaxIndent+2 {
				t.Fatalf("k=%d: line %d indented %d, more than MaxIndent+2", k, i+1, ind)
			}
		}
	}
	if r := float64(size[4000]) / float64(size[1000]); r > 4.2 {
		t.Errorf("4 times the lets print %.1f times the text (%d, %d bytes), want about 4", r, size[1000], size[4000])
	}
}

// TestFormatDeepNestWithComments: past MaxIndent, comments still go where
// they were, and formatting stays idempotent and keeps the tree.
func TestFormatDeepNestWithComments(t *testing.T) {
	var b strings.Builder
	b.WriteString("(def f Float (x : Float)\n")
	for i := 0; i < 50; i++ {
		b.WriteString("; level\n(let (x (mul x (sin (add x 1.0)))) ; trailing\n")
	}
	b.WriteString("x" + strings.Repeat(")", 50) + ")\n")
	f, err := ParseFile("deep.ks", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	once := FormatFile(f)
	g, err := ParseFile("deep.ks", once)
	if err != nil {
		t.Fatalf("the formatted text does not parse: %v\n%s", err, once)
	}
	if twice := FormatFile(g); string(twice) != string(once) {
		t.Errorf("formatting is not idempotent:\n%s\n---\n%s", once, twice)
	}
	if a, b := FormatDecl(f.Decls[0]), FormatDecl(g.Decls[0]); a != b {
		t.Errorf("formatting changed the tree")
	}
	if n := strings.Count(string(once), "; level"); n != 50 {
		t.Errorf("%d of 50 comments kept", n)
	}
	if n := strings.Count(string(once), "; trailing"); n != 50 {
		t.Errorf("%d of 50 trailing comments kept", n)
	}
}
