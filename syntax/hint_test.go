package syntax

import "testing"

func TestDidYouMean(t *testing.T) {
	names := []string{"count", "f", "let", "sqnorm", "values"}
	tests := []struct{ name, want string }{
		{"cuont", "did you mean count?"}, // a swap is one edit
		{"lett", "did you mean let?"},
		{"sqnrm", "did you mean sqnorm?"},
		{"valeus", "did you mean values?"},
		{"ff", "did you mean f?"},
		{"frobnicate", ""}, // nothing close
		{"let", ""},        // the name itself is no suggestion
		{"xyz", ""},        // two edits from let is too many for three letters
		{"countries", ""},  // four edits from count
		{"sqnorms", "did you mean sqnorm?"},
	}
	for _, tc := range tests {
		if got := DidYouMean(tc.name, names); got != tc.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	src := []byte("(def f Float (x : Float)\n\t(mull x x))\r\n(f 1.0)")
	tests := []struct {
		pos  Pos
		want string
	}{
		// The atom at the position is underlined; a tab before it kept.
		{Pos{"a.ks", 2, 3}, "   2 | \t(mull x x))\n     | \t ^^^^"},
		// A parenthesis gets one caret.
		{Pos{"a.ks", 2, 2}, "   2 | \t(mull x x))\n     | \t^"},
		// The end of a line (a missing closing parenthesis).
		{Pos{"a.ks", 3, 8}, "   3 | (f 1.0)\n     |        ^"},
		// No such line or column, or no position.
		{Pos{"a.ks", 9, 1}, ""},
		{Pos{"a.ks", 1, 99}, ""},
		{Pos{}, ""},
	}
	for _, tc := range tests {
		if got := Excerpt(src, tc.pos); got != tc.want {
			t.Errorf("Excerpt(%v) =\n%q\nwant\n%q", tc.pos, got, tc.want)
		}
	}
}
