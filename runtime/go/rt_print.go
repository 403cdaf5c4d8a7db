package ksrt

import (
	"math"
	"reflect"
	"strconv"
)

// FormatG formats a Float as C's printf("%g") does, and as the C runtime
// prints NaN: nan or -nan by its sign bit.
func FormatG(x float64) string { return string(AppendG(nil, x)) }

// AppendG appends FormatG(x) to b.
func AppendG(b []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		if math.Signbit(x) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	case math.IsInf(x, 1):
		return append(b, "inf"...)
	case math.IsInf(x, -1):
		return append(b, "-inf"...)
	case x == 0:
		if math.Signbit(x) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	// %g with precision P = 6: let X be the decimal exponent x has when
	// written with P significant digits (after rounding). If -4 <= X < P,
	// write x with P-1-X digits after the point, else in scientific
	// notation with P-1; then drop trailing zeros and a trailing point.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], x, 'e', 5, 64)
	k := len(e) - 1
	for e[k] != 'e' {
		k--
	}
	exp, _ := strconv.Atoi(string(e[k+1:]))
	if exp < -4 || exp >= 6 {
		b = append(b, trimZeros(e[:k])...)
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	f := strconv.AppendFloat(buf[:0], x, 'f', 5-exp, 64)
	return append(b, trimZeros(f)...)
}

// trimZeros removes trailing zeros after a decimal point, and the point
// if nothing follows it.
func trimZeros(s []byte) []byte {
	dot := false
	for _, c := range s {
		if c == '.' {
			dot = true
		}
	}
	if !dot {
		return s
	}
	n := len(s)
	for s[n-1] == '0' {
		n--
	}
	if s[n-1] == '.' {
		n--
	}
	return s[:n]
}

// WriteString writes a String as it is.
func (c *Ctx) WriteString(s string) { _, _ = c.out.WriteString(s) }

// Print prints a value in the format of the ks language: Float as %g,
// Integer in decimal, Bool as 1 or 0, String raw, tensors as [a, b, c]
// (nested by dimension), tuples as their parts joined by commas.
func (c *Ctx) Print(x any) {
	switch x := x.(type) {
	case float64:
		c.printFloat(x)
	case int64:
		c.printInt(x)
	case string:
		c.WriteString(x)
	case bool:
		c.printBool(x)
	case []float64:
		_ = c.out.WriteByte('[')
		for i, y := range x {
			if i > 0 {
				c.WriteString(", ")
			}
			c.printFloat(y)
		}
		_ = c.out.WriteByte(']')
	default:
		c.printValue(reflect.ValueOf(x))
	}
}

func (c *Ctx) printFloat(x float64) {
	var buf [32]byte
	_, _ = c.out.Write(AppendG(buf[:0], x))
}

func (c *Ctx) printInt(x int64) {
	var buf [24]byte
	_, _ = c.out.Write(strconv.AppendInt(buf[:0], x, 10))
}

func (c *Ctx) printBool(x bool) {
	if x {
		_ = c.out.WriteByte('1')
	} else {
		_ = c.out.WriteByte('0')
	}
}

func (c *Ctx) printValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Float64:
		c.printFloat(v.Float())
	case reflect.Int64:
		c.printInt(v.Int())
	case reflect.Bool:
		c.printBool(v.Bool())
	case reflect.String:
		c.WriteString(v.String())
	case reflect.Slice:
		_ = c.out.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				c.WriteString(", ")
			}
			c.printValue(v.Index(i))
		}
		_ = c.out.WriteByte(']')
	case reflect.Struct:
		if isTensorType(v.Type()) {
			k := 0
			c.printNested(tensorShape(v), v.Field(1), &k)
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if i > 0 {
				_ = c.out.WriteByte(',')
			}
			c.printValue(v.Field(i))
		}
	default:
		panic("ksrt: cannot print a " + v.Type().String())
	}
}

// printNested prints the elements of a tensor from data[*k] on, one
// bracket level per dimension of shape.
func (c *Ctx) printNested(shape []int64, data reflect.Value, k *int) {
	_ = c.out.WriteByte('[')
	for i := int64(0); i < shape[0]; i++ {
		if i > 0 {
			c.WriteString(", ")
		}
		if len(shape) == 1 {
			c.printValue(data.Index(*k))
			*k++
		} else {
			c.printNested(shape[1:], data, k)
		}
	}
	_ = c.out.WriteByte(']')
}

// Trace is $trace: it prints Trace[x] and a newline, and returns x.
func Trace[T any](c *Ctx, x T) T {
	c.WriteString("Trace[")
	c.Print(x)
	c.WriteString("]\n")
	return x
}
