package ksrt

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
)

// formatC prints, for many doubles, the bits and C's printf("%g"):
// random bit patterns, random values in every decade, the decimal
// rounding boundaries of 6 significant digits and their neighbours
// (exact ties among them), powers of ten and their neighbours, the
// boundaries between fixed and scientific notation, subnormals and the
// extremes.
const formatC = `#define _DEFAULT_SOURCE 1
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
static uint64_t s = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static double u(void) { return (rnd() >> 11) * (1.0 / 9007199254740992.0); }
static void out(double x) {
  uint64_t b; memcpy(&b, &x, 8);
  if (isnan(x)) return;
  printf("%016llx %g\n", (unsigned long long)b, x);
  x = -x; memcpy(&b, &x, 8);
  printf("%016llx %g\n", (unsigned long long)b, x);
}
static void around(double x) {
  out(x); out(nextafter(x, INFINITY)); out(nextafter(x, -INFINITY));
}
int main(void) {
  double sp[] = {0.0, 1.0, 0.1, 0.5, 1e-5, 2.0/3, 1e6, 999999, 999999.5, 1234567, 123456,
    100000, 0.0001, 0.00012345678, 1e-300, 1e300, 1.7976931348623157e308, 4.9e-324,
    2.2250738585072014e-308, 3.14159265358979, 2.5e-7, 12345.678, 0.000099999, 9.9999949e5,
    1.5, 2.5, 0.125, 6.02214076e23, 1.0/3, 100, 1e5 + 0.5, INFINITY};
  for (unsigned i = 0; i < sizeof sp / sizeof sp[0]; i++) around(sp[i]);
  for (int i = 0; i < 100000; i++) {
    uint64_t b = rnd(); double x; memcpy(&x, &b, 8); out(x);
  }
  for (int e = -330; e <= 310; e++) {
    double p = pow(10.0, e);
    around(p); around(p * 0.99999949999); around(p * 0.9999995); around(p * 0.99999950001);
    for (int i = 0; i < 40; i++) out(p * (1 + 9 * u()));
  }
  /* Boundaries: d.ddddd5 x 10^e, exactly representable ties among them. */
  for (int i = 0; i < 20000; i++) {
    int e = (int)(rnd() % 40) - 12;
    double m = (double)(100000 + rnd() % 900000) + 0.5;
    double x = m * pow(10.0, e - 5);
    around(x);
  }
  for (long n = 1000000; n < 1000000 + 3000; n++) out((double)n * 10 + 5); /* integers ending in 5 */
  for (int k = 1; k < 60; k++) { around(ldexp(1, k) + 0.5); around(ldexp(1, -k)); around(ldexp(1, k)); }
  return 0;
}
`

// TestFormatGMatchesC checks FormatG against C's printf("%g") on a few
// hundred thousand values (see formatC).
func TestFormatGMatchesC(t *testing.T) {
	out := cProgram(t, formatC)
	sc := bufio.NewScanner(bytes.NewReader(out))
	n, bad := 0, 0
	for sc.Scan() {
		hexs, want, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		b, err := strconv.ParseUint(hexs, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		x := math.Float64frombits(b)
		n++
		if got := FormatG(x); got != want {
			if bad < 20 {
				t.Errorf("FormatG(%v) = %q, C prints %q", x, got, want)
			}
			bad++
		}
	}
	if n < 200000 {
		t.Errorf("only %d values", n)
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ", bad, n)
	}
}

func TestFormatGSpecial(t *testing.T) {
	negNaN := math.Float64frombits(math.Float64bits(math.NaN()) | 1<<63)
	for _, c := range []struct {
		x    float64
		want string
	}{
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {negNaN, "-nan"},
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {1e-5, "1e-05"}, {0.1, "0.1"}, {1e100, "1e+100"},
		{2.0 / 3, "0.666667"}, {1e6, "1e+06"}, {123456, "123456"}, {1234565, "1.23456e+06"},
	} {
		if got := FormatG(c.x); got != c.want {
			t.Errorf("FormatG(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

// printed returns what f prints through a context.
func printed(f func(c *Ctx)) string {
	var b strings.Builder
	c := NewCtx(&b)
	f(c)
	_ = c.Flush()
	return b.String()
}

type tup2 struct {
	F0 int64
	F1 float64
}

type tup3 struct {
	F0 bool
	F1 []float64
	F2 Tensor[int64]
}

type unit struct{}

func TestPrint(t *testing.T) {
	m := Tensor[int64]{Shape: []int64{2, 3}, Data: []int64{0, 1, 2, 3, 4, 5}}
	for _, c := range []struct {
		x    any
		want string
	}{
		{1.5, "1.5"}, {int64(-7), "-7"}, {true, "1"}, {false, "0"}, {"a\nb", "a\nb"},
		{[]float64{}, "[]"}, {[]float64{1, 0.5}, "[1, 0.5]"},
		{m, "[[0, 1, 2], [3, 4, 5]]"},
		{Tensor[float64]{Shape: []int64{2, 0}}, "[[], []]"},
		{Tensor[float64]{Shape: []int64{0, 2}}, "[]"},
		{Tensor[float64]{Shape: []int64{1, 2, 2}, Data: []float64{1, 2, 3, 4}}, "[[[1, 2], [3, 4]]]"},
		{[]tup2{{1, 2}, {3, 4.5}}, "[1,2, 3,4.5]"},
		{[][]int64{{1}, {}, {2, 3}}, "[[1], [], [2, 3]]"},
		{tup3{true, []float64{1}, m}, "1,[1],[[0, 1, 2], [3, 4, 5]]"},
		{unit{}, ""},
		{[]unit{{}, {}}, "[, ]"},
	} {
		if got := printed(func(ctx *Ctx) { ctx.Print(c.x) }); got != c.want {
			t.Errorf("Print(%#v) = %q, want %q", c.x, got, c.want)
		}
	}
	if got := printed(func(ctx *Ctx) { Trace(ctx, tup2{1, 2}) }); got != "Trace[1,2]\n" {
		t.Errorf("Trace: %q", got)
	}
}
