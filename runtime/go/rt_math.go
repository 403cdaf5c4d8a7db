package ksrt

import (
	"math"
	"math/big"
)

// The elementary functions of the prelude, computed to match the C
// library (glibc) that the C backend calls, since both backends must print
// the same text. glibc's exp, log, pow, sin and cos return the correctly
// rounded result in all but very rare cases, so these compute the result
// in double-double arithmetic (about 100 bits) and round it once; Go's
// math package is only accurate to within an ulp (and math.Log is wrong
// for subnormal numbers on amd64). tanh, cosh, erf and lgamma follow the
// fdlibm algorithms that glibc uses, on top of these; erf and lgamma are Go's
// math package's (the same algorithms, within an ulp). NaN results carry
// the sign bit that glibc gives them on x86-64.

// dd is a double-double number hi + lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (x dd) add(y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s = quickTwoSum(s.hi, s.lo+t.hi)
	return quickTwoSum(s.hi, s.lo+t.lo)
}

func (x dd) addF(f float64) dd {
	s := twoSum(x.hi, f)
	return quickTwoSum(s.hi, s.lo+x.lo)
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

func (x dd) mul(y dd) dd {
	p := twoProd(x.hi, y.hi)
	return quickTwoSum(p.hi, p.lo+(x.hi*y.lo+x.lo*y.hi))
}

func (x dd) mulF(f float64) dd {
	p := twoProd(x.hi, f)
	return quickTwoSum(p.hi, p.lo+x.lo*f)
}

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.add(y.mulF(-q1))
	q2 := r.hi / y.hi
	r = r.add(y.mulF(-q2))
	q3 := r.hi / y.hi
	return quickTwoSum(q1, q2).addF(q3)
}

func (x dd) divF(f float64) dd { return x.div(dd{f, 0}) }

// Constants to about 107 bits.
var (
	ddLn2  = dd{0.6931471805599453, 2.3190468138462996e-17}
	ddPiO2 = dd{1.5707963267948966, 6.123233995736766e-17}
)

// pi/2 in three parts for the reduction of trigonometric arguments.
const (
	pio2_1 = 1.5707963267948966
	pio2_2 = 6.123233995736766e-17
	pio2_3 = -1.4973849048591698e-33
)

// negNaN is the NaN that x86-64 arithmetic produces: its sign bit is set.
var negNaN = math.Float64frombits(0xfff8000000000000)

// ddExp returns exp(r) for |r| <= 0.36 or so, as a double-double.
func ddExp(r dd) dd {
	// exp(r) = exp(r/256)^256: the Taylor series of exp(r/256), then eight
	// squarings.
	s := dd{math.Ldexp(r.hi, -8), math.Ldexp(r.lo, -8)}
	sum := dd{1, 0}
	term := dd{1, 0}
	for i := 1; i <= 10; i++ {
		term = term.mul(s).divF(float64(i))
		sum = sum.add(term)
	}
	for i := 0; i < 8; i++ {
		sum = sum.mul(sum)
	}
	return sum
}

// Exp is exp.
func Exp(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 709.8:
		return math.Inf(1)
	case x < -745.2:
		return 0
	case math.Abs(x) < 0x1p-54:
		return 1 + x
	}
	k := math.Round(x / math.Ln2)
	r := ddLn2.mulF(-k).addF(x)
	y := ddExp(r)
	return scale(y, int(k))
}

// scale rounds y * 2^k to a float64, once.
func scale(y dd, k int) float64 {
	if _, e := math.Frexp(y.hi); e+k > -1021 {
		return math.Ldexp(y.hi, k) // exact, or an overflow to Inf
	}
	// A subnormal result: its ulp is 2^-1074. Round q = y 2^(k+1074) to
	// an integer, ties to even, from both parts of y.
	q := math.Ldexp(y.hi, k+1074)
	lo := math.Ldexp(y.lo, k+1074)
	n := math.Floor(q)
	rest := (q - n) + lo
	switch {
	case rest > 0.5:
		n++
	case rest == 0.5 && math.Mod(n, 2) == 1:
		n++
	case rest < 0:
		n--
		if rest+1 > 0.5 || rest+1 == 0.5 && math.Mod(n, 2) == 1 {
			n++
		}
	}
	return math.Ldexp(n, -1074)
}

// ddLog returns log(x) for a finite x > 0, as a double-double.
func ddLog(x float64) dd {
	m, e := math.Frexp(x) // x = m * 2^e, m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	// log(m) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m-1)/(m+1).
	f := m - 1 // exact
	s := dd{f, 0}.div(dd{m, 0}.addF(1))
	s2 := s.mul(s)
	sum := dd{0, 0}
	p := s
	for i := 0; i < 24; i++ {
		sum = sum.add(p.divF(float64(2*i + 1)))
		p = p.mul(s2)
		if math.Abs(p.hi) < 0x1p-120*math.Abs(sum.hi) {
			break
		}
	}
	sum = dd{2 * sum.hi, 2 * sum.lo}
	return ddLn2.mulF(float64(e)).add(sum)
}

// Log is log.
func Log(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x < 0:
		return negNaN
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	case x == 1:
		return 0
	}
	return ddLog(x).hi
}

// reduce returns r and k with x = k pi/2 + r, |r| <= pi/4 or so, and r as
// a double-double.
func reduce(x float64) (dd, int) {
	if math.Abs(x) < 0x1p19 {
		k := math.Round(x * (2 / math.Pi))
		// x - k p1 - k p2 - k p3, the products exact (FMA) for the first two.
		r := twoProd(-k, pio2_1).addF(x)
		r = r.add(twoProd(-k, pio2_2))
		r = r.addF(-k * pio2_3)
		return r, int(int64(k) & 3)
	}
	// Payne and Hanek: x 4/pi to enough bits that the fraction is exact.
	z := new(big.Float).SetPrec(1600).SetFloat64(x)
	z.Mul(z, fourOverPi())
	z.Quo(z, big.NewFloat(2)) // x 2/pi
	k := new(big.Float).SetPrec(1600)
	zi, _ := z.Int(nil) // truncated
	k.SetInt(zi)
	f := new(big.Float).SetPrec(1600).Sub(z, k) // in (-1, 1)
	half := big.NewFloat(0.5)
	switch {
	case f.Cmp(half) > 0:
		f.Sub(f, big.NewFloat(1))
		zi.Add(zi, big.NewInt(1))
	case f.Cmp(new(big.Float).Neg(half)) < 0:
		f.Add(f, big.NewFloat(1))
		zi.Sub(zi, big.NewInt(1))
	}
	hi, _ := f.Float64()
	lo, _ := new(big.Float).Sub(f, new(big.Float).SetFloat64(hi)).Float64()
	q := new(big.Int).And(zi, big.NewInt(3)).Int64()
	return dd{hi, lo}.mul(ddPiO2), int(q)
}

// fourOverPi returns 4/pi to 1280 bits (from Go's math/trig_reduce.go).
func fourOverPi() *big.Float {
	words := [...]uint64{
		0x0000000000000001, 0x45f306dc9c882a53, 0xf84eafa3ea69bb81, 0xb6c52b3278872083,
		0xfca2c757bd778ac3, 0x6e48dc74849ba5c0, 0x0c925dd413a32439, 0xfc3bd63962534e7d,
		0xd1046bea5d768909, 0xd338e04d68befc82, 0x7323ac7306a673e9, 0x3908bf177bf25076,
		0x3ff12fffbc0b301f, 0xde5e2316b414da3e, 0xda6cfd9e4f96136e, 0x9e8c7ecd3cbfd45a,
		0xea4f758fd7cbe2f6, 0x7a0e73ef14a525d4, 0xd7f6bf623f1aba10, 0xac06608df8f6d757,
	}
	c := new(big.Float).SetPrec(1600)
	for i, w := range words {
		t := new(big.Float).SetPrec(1600).SetUint64(w)
		t.SetMantExp(t, -64*i)
		c.Add(c, t)
	}
	return c
}

// ddSinCos returns sin(r) and cos(r) for |r| <= pi/4 or so.
func ddSinCos(r dd) (dd, dd) {
	r2 := r.mul(r)
	sin, cos := r, dd{1, 0}
	ts, tc := r, dd{1, 0}
	for i := 1; i <= 14; i++ {
		ts = ts.mul(r2).divF(float64(-(2 * i) * (2*i + 1)))
		tc = tc.mul(r2).divF(float64(-(2*i - 1) * (2 * i)))
		sin = sin.add(ts)
		cos = cos.add(tc)
	}
	return sin, cos
}

// sinCos returns sin(x) and cos(x) as double-doubles, x finite.
func sinCos(x float64) (dd, dd) {
	r, k := reduce(x)
	s, c := ddSinCos(r)
	switch k {
	case 1:
		return c, s.neg()
	case 2:
		return s.neg(), c.neg()
	case 3:
		return c.neg(), s
	}
	return s, c
}

// Sin is sin.
func Sin(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		return negNaN
	case math.Abs(x) < 0x1p-26:
		return x // sin x = x - x^3/6 rounds to x
	}
	s, _ := sinCos(x)
	return s.hi
}

// Cos is cos.
func Cos(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		return negNaN
	case math.Abs(x) < 0x1p-27:
		return 1
	}
	_, c := sinCos(x)
	return c.hi
}

// tan returns tan(x), for Digamma.
func tan(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		return negNaN
	case math.Abs(x) < 0x1p-27:
		return x
	}
	s, c := sinCos(x)
	return s.div(c).hi
}

// PowI is pow(x, (double)n), the power of a Float by an Integer.
func PowI(x float64, n int64) float64 {
	y := float64(n) // as C converts it; even when |n| > 2^53
	switch {
	case y == 0:
		return 1
	case x == 1:
		return 1
	}
	odd := math.Mod(y, 2) != 0
	if math.IsNaN(x) {
		// glibc squares x and negates the square for an odd power of a
		// negative number: a NaN keeps its sign bit unless both hold.
		if odd {
			return math.Abs(x)
		}
		return x
	}
	neg := math.Signbit(x) && odd
	ax := math.Abs(x)
	var r float64
	switch {
	case ax == 0:
		if y < 0 {
			r = math.Inf(1)
		} else {
			r = 0
		}
	case math.IsInf(ax, 1):
		if y < 0 {
			r = 0
		} else {
			r = math.Inf(1)
		}
	default:
		r = powPos(ax, y)
	}
	if neg {
		return -r
	}
	return r
}

// powPos returns x^y for finite x > 0 and y an integer, y != 0.
func powPos(x, y float64) float64 {
	u := uint64(math.Abs(y))
	// Square and multiply, keeping each value as m 2^e with m near 1 so
	// that nothing overflows.
	m, e := math.Frexp(x)
	base := dd{m, 0}
	be := e
	acc := dd{1, 0}
	ae := 0
	for u > 0 {
		if u&1 == 1 {
			acc = acc.mul(base)
			ae += be
			acc, ae = renorm(acc, ae)
		}
		u >>= 1
		if u > 0 {
			base = base.mul(base)
			be *= 2
			base, be = renorm(base, be)
			if be > 1<<20 || be < -(1<<20) {
				// Certain overflow or underflow (x is not 1).
				if (be > 0) == (y > 0) {
					return math.Inf(1)
				}
				return 0
			}
		}
	}
	if y < 0 {
		acc = dd{1, 0}.div(acc)
		ae = -ae
		acc, ae = renorm(acc, ae)
	}
	if ae > 1100 {
		return math.Inf(1)
	}
	if ae < -1200 {
		return 0
	}
	return scale(acc, ae)
}

// renorm scales m into [0.5, 1) and adjusts the exponent.
func renorm(m dd, e int) (dd, int) {
	_, f := math.Frexp(m.hi)
	return dd{math.Ldexp(m.hi, -f), math.Ldexp(m.lo, -f)}, e + f
}

// Tanh is tanh, as fdlibm's s_tanh.c.
func Tanh(x float64) float64 {
	ax := math.Abs(x)
	var z float64
	switch {
	case math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		z = 1
	case x == 0:
		return x
	case ax < 0x1p-55:
		return x * (1 + x)
	case ax < 22:
		if ax >= 1 {
			t := math.Expm1(2 * ax)
			z = 1 - 2/(t+2)
		} else {
			t := math.Expm1(-2 * ax)
			z = -t / (t + 2)
		}
	default:
		z = 1
	}
	if math.Signbit(x) {
		return -z
	}
	return z
}

// Cosh is cosh, as fdlibm's e_cosh.c.
func Cosh(x float64) float64 {
	ax := math.Abs(x)
	switch {
	case math.IsNaN(x):
		return x
	case ax < 0.5*math.Ln2:
		if ax < 0x1p-55 {
			return 1
		}
		t := math.Expm1(ax)
		w := 1 + t
		return 1 + (t*t)/(w+w)
	case ax < 22:
		t := Exp(ax)
		return 0.5*t + 0.5/t
	case ax < 709.782712893384: // log(MaxFloat64)
		return 0.5 * Exp(ax)
	case ax <= 710.4758600739439: // the overflow threshold
		w := Exp(0.5 * ax)
		t := 0.5 * w
		return t * w
	}
	return math.Inf(1)
}

// Erf is erf: Go's math.Erf. glibc's erf is another implementation of
// the same fdlibm algorithm; the two differ in the last bit in about 0.5%
// of arguments (TestMathMatchesC).
func Erf(x float64) float64 {
	if math.IsNaN(x) {
		return x // glibc returns the argument's NaN, sign and all
	}
	return math.Erf(x)
}

// Lgamma is lgamma, the logarithm of the absolute value of Gamma: Go's
// math.Lgamma, which differs from glibc's in the last bit in about 2% of
// arguments, and more for negative non-integers, where glibc has an
// algorithm of its own (TestMathMatchesC).
func Lgamma(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		return math.Inf(1)
	case math.Abs(x) < 0x1p-70:
		// Gamma(x) = 1/x (1 + O(x)): -log|x|, with this package's Log,
		// right for subnormal x where math.Log is not.
		return -Log(math.Abs(x))
	}
	y, _ := math.Lgamma(x)
	return y
}

// Digamma is the derivative of lgamma, step by step as the C runtime's
// ks_digamma: the recurrence up to x >= 6, then the asymptotic series;
// reflection for negative x.
func Digamma(x float64) float64 {
	if x <= 0 && math.Floor(x) == x {
		return math.NaN()
	}
	if x < 0 {
		return Digamma(1-x) - math.Pi/tan(math.Pi*x)
	}
	r := 0.0
	for x < 6 {
		r -= 1 / x
		x++
	}
	f := 1 / (x * x)
	t := f * (-1/12.0 + f*(1/120.0+f*(-1/252.0+f*(1/240.0+f*(-1/132.0)))))
	return r + Log(x) - 0.5/x + t
}
