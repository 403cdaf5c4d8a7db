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
