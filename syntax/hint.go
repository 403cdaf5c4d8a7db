package syntax

import (
	"fmt"
	"sort"
	"strings"
)

// Keywords returns the words that begin the special forms of the language
// (let, if, def, ...), sorted, for suggestions.
func Keywords() []string {
	ks := make([]string, 0, len(forms))
	for k := range forms {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TypeNames are the names of the built-in types and type constructors.
var TypeNames = []string{"Bool", "Float", "Integer", "LM", "Lam", "String", "Tensor", "Tuple", "Variant", "Vec"}

// DidYouMean returns the hint "did you mean X?" for the name of names
// closest to name, or "" if none is close: within a third of name's
// length in edits (at least one), counting a swap of adjacent letters as
// one edit. Ties go to the earliest in names.
func DidYouMean(name string, names []string) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, n := range names {
		if n == name {
			continue
		}
		if d := editDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "did you mean " + best + "?"
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent letters each
// count 1 ("cuont" is 1 from "count").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Excerpt returns the line of src that pos is on and, under it, a caret
// marking pos, underlining the whole atom that starts there:
//
//	2 |   (lett (y (mul x x)) y))
//	  |    ^^^^
//
// Tabs before the position are kept in the marker line, so the caret
// lines up. It returns "" if pos is not in src.
func Excerpt(src []byte, pos Pos) string {
	if !pos.IsValid() {
		return ""
	}
	lines := strings.Split(string(src), "\n")
	if int(pos.Line) > len(lines) {
		return ""
	}
	line := strings.TrimRight(lines[pos.Line-1], "\r")
	col := int(pos.Col) - 1
	if col < 0 || col > len(line) {
		return ""
	}
	n := 1
	if col < len(line) && !strings.ContainsRune("()[] \t;\"", rune(line[col])) {
		n = 0
		for col+n < len(line) && !strings.ContainsRune("()[] \t;\"", rune(line[col+n])) {
			n++
		}
	}
	var pad strings.Builder
	for _, c := range line[:col] {
		if c == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	num := fmt.Sprintf("%4d", pos.Line)
	gutter := strings.Repeat(" ", len(num))
	return num + " | " + line + "\n" + gutter + " | " + pad.String() + strings.Repeat("^", n)
}
