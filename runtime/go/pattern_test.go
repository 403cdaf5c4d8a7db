package ksrt

import (
	"slices"
	"strings"
	"testing"
)

type colouring struct {
	ByRows  bool
	Count   int64
	Colours []int64
}

// csr makes the CSR pattern of rows.
func csr(rows [][]int64) (off, cols []int64) {
	off = []int64{0}
	cols = []int64{}
	for _, r := range rows {
		cols = append(cols, r...)
		off = append(off, int64(len(cols)))
	}
	return off, cols
}

// TestColour checks that $colour's colouring is proper (no two columns
// sharing a row alike, or no two rows sharing a column) and chooses the
// side with fewer colours, the columns on a tie.
func TestColour(t *testing.T) {
	ba := [][]int64{} // 4 observations of 3 points by 2 cameras of 2 parameters
	for k, obs := range [][2]int64{{0, 0}, {1, 0}, {0, 1}, {1, 2}} {
		cam, pt := obs[0], obs[1]
		row := []int64{2 * cam, 2*cam + 1, 4 + pt, 7 + int64(k)}
		ba = append(ba, row, row)
	}
	for _, c := range []struct {
		name   string
		rows   [][]int64
		n      int64
		byRows bool
		count  int64
	}{
		{"diagonal", [][]int64{{0}, {1}, {2}}, 3, false, 1},
		{"gradient", [][]int64{{0, 1, 2, 3}}, 4, true, 1},
		{"one column", [][]int64{{0}, {0}, {0}}, 1, false, 1},
		{"tridiagonal", [][]int64{{0, 1}, {0, 1, 2}, {1, 2, 3}, {2, 3}}, 4, false, 3},
		{"arrowhead", [][]int64{{0, 1, 2}, {0, 1}, {0, 2}}, 3, false, 3},
		{"two dense rows", [][]int64{{0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}}, 5, true, 2},
		{"bundle adjustment", ba, 11, false, 4},
		{"empty", nil, 0, false, 0},
		{"no entries", [][]int64{{}, {}}, 3, false, 0},
	} {
		off, cols := csr(c.rows)
		r := Colour[colouring]("", off, cols, c.n)
		if r.ByRows != c.byRows || r.Count != c.count {
			t.Errorf("%s: by rows %v with %d colours, want %v with %d", c.name, r.ByRows, r.Count, c.byRows, c.count)
		}
		// Each row's columns (each column's rows) have distinct colours.
		groups := c.rows
		if r.ByRows {
			if int64(len(r.Colours)) != int64(len(c.rows)) {
				t.Fatalf("%s: %d colours for %d rows", c.name, len(r.Colours), len(c.rows))
			}
			groups = make([][]int64, c.n)
			for i, row := range c.rows {
				for _, j := range row {
					groups[j] = append(groups[j], int64(i))
				}
			}
		} else if int64(len(r.Colours)) != c.n {
			t.Fatalf("%s: %d colours for %d columns", c.name, len(r.Colours), c.n)
		}
		for _, g := range groups {
			seen := map[int64]bool{}
			for _, v := range g {
				col := r.Colours[v]
				if col < 0 || col >= r.Count || seen[col] {
					t.Errorf("%s: colours %v are not a proper colouring of %v (by rows %v)", c.name, r.Colours, c.rows, r.ByRows)
				}
				seen[col] = true
			}
		}
	}
}

func TestColourMalformed(t *testing.T) {
	for _, c := range []struct {
		off, cols []int64
		n         int64
		want      string
	}{
		{[]int64{}, nil, 1, "malformed sparsity pattern"},
		{[]int64{0, 2, 1}, []int64{0}, 1, "malformed sparsity pattern"},
		{[]int64{0, 2, 1, 3}, []int64{0, 0, 0}, 1, "offsets decrease at row 1"},
		{[]int64{0, 1}, []int64{5}, 2, "column 5 out of range for 2"},
	} {
		got := failure(func() { Colour[colouring]("x.ks:1:1", c.off, c.cols, c.n) })
		if !strings.Contains(got, c.want) {
			t.Errorf("Colour(%v, %v, %d) failed with %q, want %q", c.off, c.cols, c.n, got, c.want)
		}
	}
}

func TestSetUnion(t *testing.T) {
	for _, c := range [][3][]int64{
		{{}, {}, {}},
		{{1, 3}, {}, {1, 3}},
		{{1, 3, 5}, {2, 3, 6}, {1, 2, 3, 5, 6}},
		{{0}, {0}, {0}},
	} {
		if got := SetUnion(c[0], c[1]); !slices.Equal(got, c[2]) {
			t.Errorf("SetUnion(%v, %v) = %v, want %v", c[0], c[1], got, c[2])
		}
	}
}

func TestPatternSeedAndCSR(t *testing.T) {
	type pair struct {
		F0 []float64
		F1 int64
		F2 float64
	}
	type ppair struct {
		F0 [][]int64
		F1 struct{}
		F2 []int64
	}
	seed := PatternSeed[ppair](pair{[]float64{1, 2}, 7, 3})
	if !slices.EqualFunc(seed.F0, [][]int64{{0}, {1}}, slices.Equal) || !slices.Equal(seed.F2, []int64{2}) {
		t.Errorf("PatternSeed = %v", seed)
	}
	type rows struct{ F0, F1 []int64 }
	r := PatternCSR[rows](ppair{[][]int64{{0, 2}, {}}, struct{}{}, []int64{1}})
	if !slices.Equal(r.F0, []int64{0, 2, 2, 3}) || !slices.Equal(r.F1, []int64{0, 2, 1}) {
		t.Errorf("PatternCSR = %v", r)
	}
}

// TestPairs checks $pairs (both orders, as one increasing set), and that
// a position that does not fit a pair is an error.
func TestPairs(t *testing.T) {
	code := func(i, j int64) int64 { return i<<32 | j }
	got := Pairs("p", []int64{0, 2}, []int64{2, 5})
	want := []int64{code(0, 2), code(0, 5), code(2, 0), code(2, 2), code(2, 5), code(5, 0), code(5, 2)}
	if !slices.Equal(got, want) {
		t.Errorf("Pairs = %v, want %v", got, want)
	}
	if got := Pairs("p", nil, []int64{1}); len(got) != 0 {
		t.Errorf("Pairs of an empty set = %v", got)
	}
	err := Catch(func() { Pairs("p", []int64{1 << 31}, []int64{0}) })
	if err == nil || !strings.Contains(err.Msg, "out of range") {
		t.Errorf("a position of 2^31: %v, want an error", err)
	}
}

// TestPairsCSR checks $pairsCSR: the rows of the pairs, followed with
// withJ by the transposed pattern's columns after n, and its errors.
func TestPairsCSR(t *testing.T) {
	type csrT struct{ Off, Cols []int64 }
	code := func(i, j int64) int64 { return i<<32 | j }
	pairs := []int64{code(0, 0), code(0, 1), code(1, 0), code(2, 2)}
	joff, jcols := csr([][]int64{{0, 1}, {2}}) // 2 result Floats over 3 positions
	r := PairsCSR[csrT]("p", pairs, joff, jcols, 3, true)
	if want := []int64{0, 3, 5, 7}; !slices.Equal(r.Off, want) {
		t.Errorf("offsets %v, want %v", r.Off, want)
	}
	if want := []int64{0, 1, 3, 0, 3, 2, 4}; !slices.Equal(r.Cols, want) {
		t.Errorf("columns %v, want %v", r.Cols, want)
	}
	r = PairsCSR[csrT]("p", pairs, joff, jcols, 3, false)
	if want := []int64{0, 1, 0, 2}; !slices.Equal(r.Cols, want) {
		t.Errorf("without J: columns %v, want %v", r.Cols, want)
	}
	for _, bad := range [][]int64{{code(0, 3)}, {code(3, 0)}, {code(1, 0), code(0, 0)}, {-1}} {
		if err := Catch(func() { PairsCSR[csrT]("p", bad, joff, jcols, 3, true) }); err == nil {
			t.Errorf("pairs %v: no error", bad)
		}
	}
}

// TestColourColumns checks $colourColumns on a tridiagonal pattern: 3
// colours whatever the size, no two columns sharing a row alike.
func TestColourColumns(t *testing.T) {
	type colT struct {
		Count   int64
		Colours []int64
	}
	for _, n := range []int64{3, 10, 100} {
		var rows [][]int64
		for i := int64(0); i < n; i++ {
			var r []int64
			for j := max(0, i-1); j <= min(n-1, i+1); j++ {
				r = append(r, j)
			}
			rows = append(rows, r)
		}
		off, cols := csr(rows)
		c := ColourColumns[colT]("p", off, cols, n)
		if c.Count != 3 {
			t.Errorf("n = %d: %d colours, want 3", n, c.Count)
		}
		for _, r := range rows {
			seen := map[int64]bool{}
			for _, j := range r {
				if seen[c.Colours[j]] {
					t.Errorf("n = %d: row %v has two columns of colour %d", n, r, c.Colours[j])
				}
				seen[c.Colours[j]] = true
			}
		}
	}
	if err := Catch(func() { ColourColumns[colT]("p", []int64{0, 1}, []int64{5}, 3) }); err == nil {
		t.Errorf("a column out of range: no error")
	}
}
