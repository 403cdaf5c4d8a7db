package ksrt

import (
	"math"
	"reflect"
	"slices"
)

// Sparsity patterns ([sparsejac f], language.md section 5): a set is an
// increasing []int64; the pattern of a value has its shape with each
// Float replaced by a set.

var setType = reflect.TypeFor[[]int64]()

// PatternSeed is $patternSeed: x's pattern as an argument, each Float
// replaced by the set of its own flat position.
func PatternSeed[T any](x any) T {
	var k int64
	return patternSeed(reflect.ValueOf(x), reflect.TypeFor[T](), &k).Interface().(T)
}

func patternSeed(x reflect.Value, t reflect.Type, k *int64) reflect.Value {
	switch {
	case x.Kind() == reflect.Float64:
		*k++
		return reflect.ValueOf([]int64{*k - 1})
	case x.Kind() == reflect.Slice:
		r := reflect.MakeSlice(t, x.Len(), x.Len())
		for i := 0; i < x.Len(); i++ {
			r.Index(i).Set(patternSeed(x.Index(i), t.Elem(), k))
		}
		return r
	case isTensorType(x.Type()):
		r := reflect.New(t).Elem()
		r.Field(0).Set(reflect.ValueOf(append([]int64(nil), tensorShape(x)...)))
		xd := x.Field(1)
		data := reflect.MakeSlice(t.Field(1).Type, xd.Len(), xd.Len())
		for i := 0; i < xd.Len(); i++ {
			data.Index(i).Set(patternSeed(xd.Index(i), t.Field(1).Type.Elem(), k))
		}
		r.Field(1).Set(data)
		return r
	case x.Kind() == reflect.Struct:
		r := reflect.New(t).Elem()
		for i := 0; i < x.NumField(); i++ {
			r.Field(i).Set(patternSeed(x.Field(i), t.Field(i).Type, k))
		}
		return r
	}
	return reflect.Zero(t) // Integer, Bool, String: the unit pattern
}

// PatternCSR is $patternCSR: the sets of the pattern p in flat order as
// CSR rows, the tuple (offsets, columns) of type T.
func PatternCSR[T any](p any) T {
	off := []int64{0}
	cols := []int64{}
	patternRows(reflect.ValueOf(p), &off, &cols)
	r := reflect.New(reflect.TypeFor[T]()).Elem()
	r.Field(0).Set(reflect.ValueOf(off))
	r.Field(1).Set(reflect.ValueOf(cols))
	return r.Interface().(T)
}

func patternRows(p reflect.Value, off, cols *[]int64) {
	switch {
	case p.Type() == setType:
		*cols = append(*cols, p.Interface().([]int64)...)
		*off = append(*off, int64(len(*cols)))
	case isTensor(p):
		pe := elems(p)
		for i := 0; i < pe.Len(); i++ {
			patternRows(pe.Index(i), off, cols)
		}
	case p.Kind() == reflect.Struct:
		for i := 0; i < p.NumField(); i++ {
			patternRows(p.Field(i), off, cols)
		}
	}
}

// UnionAll is $unionAll: the union of a vector of sets, sorted once.
func UnionAll(sets [][]int64) []int64 {
	n := 0
	for _, s := range sets {
		n += len(s)
	}
	r := make([]int64, 0, n)
	for _, s := range sets {
		r = append(r, s...)
	}
	slices.Sort(r)
	return slices.Compact(r)
}

// SetUnion is $union: the union of two sets.
func SetUnion(a, b []int64) []int64 {
	r := make([]int64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			r = append(r, a[i])
			i++
		case b[j] < a[i]:
			r = append(r, b[j])
			j++
		default:
			r = append(r, a[i])
			i++
			j++
		}
	}
	r = append(r, a[i:]...)
	return append(r, b[j:]...)
}

// Colour is $colour: how [sparsejac f] sweeps the CSR pattern (off,
// cols) with n columns. Its columns are coloured greedily, in order, so
// that no two sharing a row are alike (a forward sweep per colour), or
// its rows so that no two sharing a column are (a reverse sweep per
// colour), whichever needs fewer colours, the columns on a tie; the side
// whose lower bound (its longest row, or column) is smaller is coloured
// first and the other only as far as it could need fewer. The result is
// the tuple (by rows, number of colours, colour of each) of type T. A
// malformed pattern is a runtime error.
func Colour[T any](pos string, off, cols []int64, n int64) T {
	checkCSR(pos, off, cols, n)
	m := int64(len(off)) - 1
	lbCols, lbRows := int64(0), int64(0)
	for i := int64(0); i < m; i++ {
		lbCols = max(lbCols, off[i+1]-off[i])
	}
	cptr, rows := transpose(off, cols, n)
	for j := int64(0); j < n; j++ {
		lbRows = max(lbRows, cptr[j+1]-cptr[j])
	}
	byCols := func(limit int64) (int64, []int64) { return greedy(cptr, rows, off, cols, n, limit) }
	byRows := func(limit int64) (int64, []int64) { return greedy(off, cols, cptr, rows, m, limit) }
	firstRows := lbRows < lbCols
	first, second, otherLB := byCols, byRows, lbRows
	if firstRows {
		first, second, otherLB = byRows, byCols, lbCols
	}
	count, colour := first(math.MaxInt64)
	rowsChosen := firstRows
	limit := count // the columns win a tie
	if firstRows {
		limit++
	}
	if otherLB < limit {
		if c2, col2 := second(limit); c2 < limit {
			count, colour, rowsChosen = c2, col2, !firstRows
		}
	}
	r := reflect.New(reflect.TypeFor[T]()).Elem()
	r.Field(0).SetBool(rowsChosen)
	r.Field(1).SetInt(count)
	r.Field(2).Set(reflect.ValueOf(colour))
	return r.Interface().(T)
}

// greedy colours the count vertices of a bipartite pattern greedily, in
// order, so that no two sharing a neighbour are alike: vertex v's
// neighbours are tidx[tptr[v]:tptr[v+1]], and neighbour r's vertices
// oidx[optr[r]:optr[r+1]]. It returns the number of colours and each
// vertex's, or limit as soon as that many are needed. A vertex without
// neighbours (a column or row of no entry) takes colour 0 and does not
// count.
func greedy(tptr, tidx, optr, oidx []int64, count, limit int64) (int64, []int64) {
	colour := make([]int64, count)
	seen := make([]int64, count+1) // seen[c] == v+1: c is a neighbour's of v
	used := int64(0)
	for v := range colour {
		colour[v] = -1
	}
	for v := int64(0); v < count; v++ {
		for a := tptr[v]; a < tptr[v+1]; a++ {
			r := tidx[a]
			for b := optr[r]; b < optr[r+1]; b++ {
				if w := oidx[b]; colour[w] >= 0 {
					seen[colour[w]] = v + 1
				}
			}
		}
		c := int64(0)
		for seen[c] == v+1 {
			c++
		}
		colour[v] = c
		if tptr[v+1] > tptr[v] { // a vertex of no entry needs no sweep
			used = max(used, c+1)
		}
		if used >= limit {
			return limit, nil
		}
	}
	return used, colour
}

// pairLimit bounds the positions a pair code holds: i * 2^32 + j.
const pairLimit = 1 << 31

// Pairs is $pairs: the pairs (i, j) and (j, i) for i in the set a and j
// in the set b, each coded as i * 2^32 + j, as a set (increasing).
func Pairs(pos string, a, b []int64) []int64 {
	for _, s := range [][]int64{a, b} {
		for _, x := range s {
			if x < 0 || x >= pairLimit {
				Fail(pos, "position %d out of range for a pair of positions", x)
			}
		}
	}
	cross := func(a, b []int64) []int64 {
		r := make([]int64, 0, len(a)*len(b))
		for _, i := range a {
			for _, j := range b {
				r = append(r, i<<32|j)
			}
		}
		return r
	}
	return SetUnion(cross(a, b), cross(b, a))
}

// PairsCSR is $pairsCSR: the n x n pattern of the coded pairs as CSR
// rows, each row i followed, if withJ, by the columns n + k of the rows k
// of the CSR pattern (off, cols) that hold i; the tuple (offsets,
// columns) of type T. A pair or a column out of range is a runtime
// error.
func PairsCSR[T any](pos string, pairs, off, cols []int64, n int64, withJ bool) T {
	checkCSR(pos, off, cols, n)
	tptr, trows := transpose(off, cols, n) // each position's rows k
	roff := []int64{0}
	rcols := []int64{}
	q := 0
	for i := int64(0); i < n; i++ {
		for ; q < len(pairs) && pairs[q]>>32 == i; q++ {
			if j := pairs[q] & (1<<32 - 1); j < n {
				rcols = append(rcols, j)
			} else {
				Fail(pos, "pair (%d, %d) out of range for %d", i, j, n)
			}
		}
		if q < len(pairs) && pairs[q]>>32 < i {
			Fail(pos, "pairs not increasing at (%d, %d)", pairs[q]>>32, pairs[q]&(1<<32-1))
		}
		if withJ {
			for _, k := range trows[tptr[i]:tptr[i+1]] {
				rcols = append(rcols, n+k)
			}
		}
		roff = append(roff, int64(len(rcols)))
	}
	if q < len(pairs) {
		Fail(pos, "pair (%d, %d) out of range for %d", pairs[q]>>32, pairs[q]&(1<<32-1), n)
	}
	r := reflect.New(reflect.TypeFor[T]()).Elem()
	r.Field(0).Set(reflect.ValueOf(roff))
	r.Field(1).Set(reflect.ValueOf(rcols))
	return r.Interface().(T)
}

// ColourColumns is $colourColumns: the columns of the CSR pattern (off,
// cols) with n columns coloured greedily, in order, so that no two
// sharing a row are alike; the tuple (number of colours, colour of each)
// of type T. A malformed pattern is a runtime error.
func ColourColumns[T any](pos string, off, cols []int64, n int64) T {
	checkCSR(pos, off, cols, n)
	cptr, rows := transpose(off, cols, n)
	count, colour := greedy(cptr, rows, off, cols, n, math.MaxInt64)
	r := reflect.New(reflect.TypeFor[T]()).Elem()
	r.Field(0).SetInt(count)
	r.Field(1).Set(reflect.ValueOf(colour))
	return r.Interface().(T)
}

// checkCSR fails unless (off, cols) is a CSR pattern with n columns:
// offsets from 0 to the number of entries, never decreasing, and columns
// in range.
func checkCSR(pos string, off, cols []int64, n int64) {
	m := int64(len(off)) - 1
	if m < 0 || n < 0 || off[0] != 0 || off[m] != int64(len(cols)) {
		Fail(pos, "malformed sparsity pattern")
	}
	for i := int64(0); i < m; i++ {
		if off[i+1] < off[i] {
			Fail(pos, "malformed sparsity pattern: offsets decrease at row %d", i)
		}
	}
	for _, c := range cols {
		if uint64(c) >= uint64(n) {
			Fail(pos, "malformed sparsity pattern: column %d out of range for %d", c, n)
		}
	}
}

// transpose returns the CSR pattern (off, cols), whose columns are less
// than n, transposed: each column's rows, in increasing order.
func transpose(off, cols []int64, n int64) (cptr, rows []int64) {
	cptr = make([]int64, n+1)
	for _, c := range cols {
		cptr[c+1]++
	}
	for j := int64(0); j < n; j++ {
		cptr[j+1] += cptr[j]
	}
	rows = make([]int64, len(cols))
	fill := append([]int64(nil), cptr...)
	for i := int64(0); i+1 < int64(len(off)); i++ {
		for k := off[i]; k < off[i+1]; k++ {
			rows[fill[cols[k]]] = i
			fill[cols[k]]++
		}
	}
	return cptr, rows
}
