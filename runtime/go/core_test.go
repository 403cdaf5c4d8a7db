package ksrt

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// failure returns the message of the runtime error f stops with, or "".
func failure(f func()) string {
	if err := Catch(f); err != nil {
		return err.Error()
	}
	return ""
}

func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	code := Run(&out, &errs, func(c *Ctx) {
		c.Print(int64(1))
		c.WriteString(" before\n")
		Fail("f.ks:3:4", "index %d out of range for size %d", 5, 3)
	})
	if code != 1 || out.String() != "1 before\n" || errs.String() != "f.ks:3:4: runtime error: index 5 out of range for size 3\n" {
		t.Errorf("Run: status %d, stdout %q, stderr %q", code, out.String(), errs.String())
	}
	out.Reset()
	errs.Reset()
	if code := Run(&out, &errs, func(c *Ctx) { c.Print(2.5) }); code != 0 || out.String() != "2.5" || errs.Len() != 0 {
		t.Errorf("Run: status %d, stdout %q, stderr %q", code, out.String(), errs.String())
	}
}

func TestRuntimeErrors(t *testing.T) {
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { IDiv("p", 1, 0) }, "p: runtime error: integer division by zero"},
		{func() { CheckIndex("p", -1, 3) }, "p: runtime error: index -1 out of range for size 3"},
		{func() { CheckIndex("p", 3, 3) }, "p: runtime error: index 3 out of range for size 3"},
		{func() { CheckIndexN("p", []int64{1, 3}, []int64{2, 3}) }, "p: runtime error: index (1,3) out of range for size (2,3)"},
		{func() { CheckSameSize("p", 2, 3) }, "p: runtime error: size mismatch: 2 and 3"},
		{func() { MakeVec[float64]("p", -2) }, "p: runtime error: negative size -2"},
		{func() { MakeTensor[float64]("p", 2, -1) }, "p: runtime error: negative size -1"},
		{func() { MakeTensor[float64]("p", 1<<32, 1<<32) }, "p: runtime error: tensor too large"},
		{func() { MakeVec[float64]("p", 1e17) }, "ksc: runtime error: out of memory allocating 800000000000000000 bytes"},
		// Sizes whose byte counts do not fit a signed 64-bit count: the
		// C runtime's message, at the position (the count once wrapped
		// to 0 bytes).
		{func() { MakeVec[float64]("p", 1<<61-1) }, "p: runtime error: size 2305843009213693951 too large"},
		{func() { MakeVec[float64]("p", 1<<60+1) }, "p: runtime error: size 1152921504606846977 too large"},
		{func() { AddTo("p", []float64{1}, []float64{1, 2}) }, "p: runtime error: size mismatch: 1 and 2"},
		{func() { TsDot("p", []tup2{{}}, []tup2{}) }, "p: runtime error: size mismatch: 1 and 0"},
		{func() { Zeros[[]float64]("p", int64(-1)) }, "p: runtime error: negative size -1"},
		{func() { IDiv("p", 7, 2) }, ""},
	} {
		if got := failure(c.f); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if IDiv("p", math.MinInt64, -1) != math.MinInt64 || IDiv("p", -7, 2) != -3 {
		t.Errorf("IDiv")
	}
}

func TestRanhashdoub(t *testing.T) {
	for in, want := range map[int64]string{0: "0.4815", 1: "0.744771", 20000: "0.545205", 1 << 32: "0.4815"} {
		if got := FormatG(Ranhashdoub(in)); got != want {
			t.Errorf("Ranhashdoub(%d) = %s, want %s", in, got, want)
		}
	}
}

func TestPolymorphic(t *testing.T) {
	m := Tensor[float64]{Shape: []int64{2, 2}, Data: []float64{1, 2, 3, 4}}
	type pair struct {
		F0 float64
		F1 []float64
	}
	type tan struct {
		F0 float64
		F1 unit
	}
	type withInt struct {
		F0 float64
		F1 int64
	}
	if !Eq(m, Tensor[float64]{Shape: []int64{2, 2}, Data: []float64{1, 2, 3, 4}}) ||
		Eq(m, Tensor[float64]{Shape: []int64{1, 4}, Data: []float64{1, 2, 3, 4}}) ||
		!Eq(pair{1, []float64{2}}, pair{1, []float64{2}}) || Eq(pair{1, []float64{2}}, pair{1, []float64{2, 3}}) ||
		Eq(math.NaN(), math.NaN()) || !Eq(0.0, math.Copysign(0, -1)) || !Eq("a", "a") {
		t.Errorf("Eq")
	}
	c := Copy(m)
	c.Data[0] = 9
	if m.Data[0] != 1 {
		t.Errorf("Copy shares memory")
	}
	acc := Copy(pair{1, []float64{1, 2}})
	acc = AddTo("p", acc, pair{0.5, []float64{10, 20}})
	if !Eq(acc, pair{1.5, []float64{11, 22}}) {
		t.Errorf("AddTo: %v", acc)
	}
	if z := ZeroLike(pair{3, []float64{1, 2}}); !Eq(z, pair{0, []float64{0, 0}}) {
		t.Errorf("ZeroLike: %v", z)
	}
	if z := ZeroTan[tan](withInt{3, 4}); z != (tan{}) {
		t.Errorf("ZeroTan: %v", z)
	}
	if z := Zeros[Tensor[float64]]("p", struct{ F0, F1 int64 }{2, 3}); len(z.Data) != 6 || z.Shape[1] != 3 {
		t.Errorf("Zeros: %v", z)
	}
	if z := Zeros[[][]float64]("p", []int64{2, 0, 1}); !Eq(z, [][]float64{{0, 0}, {}, {0}}) {
		t.Errorf("Zeros: %v", z)
	}
	if y := TsAdd("p", withInt{1, 2}, tan{0.5, unit{}}); y != (withInt{1.5, 2}) {
		t.Errorf("TsAdd: %v", y)
	}
	if y := TsScale(2, withInt{1.5, 3}); y != (withInt{3, 3}) {
		t.Errorf("TsScale: %v", y)
	}
	negNaN := math.Float64frombits(math.Float64bits(math.NaN()) | 1<<63)
	if y := TsNeg([]float64{1, 0, math.NaN()}); y[0] != -1 || !math.Signbit(y[1]) || !math.Signbit(y[2]) {
		t.Errorf("TsNeg: %v", y)
	}
	if y := TsNeg(negNaN); math.Signbit(y) {
		t.Errorf("TsNeg(-nan) keeps the sign")
	}
	if d := TsDot("p", pair{2, []float64{1, 2}}, pair{3, []float64{4, 5}}); d != 20 {
		t.Errorf("TsDot: %v", d)
	}
	if d := DotDiff("p", pair{2, []float64{1, 2}}, pair{1, []float64{1, 1}}, pair{3, []float64{4, 5}}); d != 8 {
		t.Errorf("DotDiff: %v", d)
	}
}

func TestFiles(t *testing.T) {
	files := Files("main")
	if len(files) < 3 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		if !strings.HasPrefix(f.Name, "rt_") || strings.HasSuffix(f.Name, "_test.go") {
			t.Errorf("file %s", f.Name)
		}
		if !regexp.MustCompile(`(?m)^package main$`).Match(f.Text) || bytes.Contains(f.Text, []byte("package ksrt")) {
			t.Errorf("%s: package clause not rewritten", f.Name)
		}
	}
}

// TestErrorCalls: the chain of calls after the message, innermost first,
// the deeper ones counted, and nothing past the C runtime's 1023 bytes.
func TestErrorCalls(t *testing.T) {
	e := WithCalls(&Error{Pos: "p", Msg: "m"}, []string{"g, called from a", "h, called from b"}, 2)
	if got, want := e.Error(), "p: runtime error: m\n  in h, called from b\n  in g, called from a"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var calls []string
	for i := range MaxCalls {
		calls = append(calls, fmt.Sprintf("f%d, called from x", i))
	}
	e = WithCalls(&Error{Pos: "p", Msg: "m"}, calls, 100)
	lines := strings.Split(e.Error(), "\n")
	if len(lines) != 2+MaxCalls || lines[1] != "  (88 calls deeper not shown)" || lines[2] != "  in f11, called from x" {
		t.Errorf("got %q", e.Error())
	}
	long := WithCalls(&Error{Pos: "p", Msg: strings.Repeat("x", 1000)}, calls, MaxCalls)
	if msg := long.Error(); len(msg) > 1023 || strings.Contains(msg, "\n") {
		t.Errorf("a message of %d bytes: %q", len(msg), msg)
	}
}
