package tests

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
)

// A spec describes the values of one argument (or of a cotangent) for a
// derivative check:
//
//	f        a Float in [-1.5, 1.5] away from 0
//	p        a positive Float in [0.5, 2]
//	i3       the Integer 3 (its tangent is unit)
//	v4, pv4  a Vec of 4 Floats (positive)
//	m2x3     a (Tensor 2 Float) of 2 rows and 3 columns
//	vv2x3    a (Vec (Vec Float)) of 2 rows of 3
//	t(a,b)   a tuple of the specs a and b
type spec string

// ksType returns the ks type of values of the spec.
func (s spec) ksType() string {
	switch {
	case s == "f" || s == "p":
		return "Float"
	case strings.HasPrefix(string(s), "i"):
		return "Integer"
	case strings.HasPrefix(string(s), "b"):
		return "Bool"
	case strings.HasPrefix(string(s), "vv"):
		return "(Vec (Vec Float))"
	case strings.HasPrefix(string(s), "pv") || strings.HasPrefix(string(s), "v"):
		return "(Vec Float)"
	case strings.HasPrefix(string(s), "m"):
		return "(Tensor 2 Float)"
	case strings.HasPrefix(string(s), "t("):
		parts := s.parts()
		ts := make([]string, len(parts))
		for i, p := range parts {
			ts[i] = p.ksType()
		}
		return "(Tuple " + strings.Join(ts, " ") + ")"
	}
	panic("bad spec " + s)
}

// parts splits t(a,b,...) at its top-level commas.
func (s spec) parts() []spec {
	inner := string(s[2 : len(s)-1])
	var out []spec
	depth, start := 0, 0
	for i, c := range inner {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, spec(inner[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, spec(inner[start:]))
}

func dims(s string) (int, int) {
	a, b, _ := strings.Cut(s, "x")
	r, _ := strconv.Atoi(a)
	c, _ := strconv.Atoi(b)
	return r, c
}

// lit spells a Float so that it reads back exactly.
func lit(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

func randFloat(rng *rand.Rand, positive bool) float64 {
	if positive {
		return 0.5 + 1.5*rng.Float64()
	}
	x := 0.2 + 1.3*rng.Float64()
	if rng.Intn(2) == 0 {
		x = -x
	}
	return x
}

func vecLit(xs []string) string {
	if len(xs) == 0 {
		return "(build 0 (lam (i : Integer) 0.0))"
	}
	return "(Vec_init " + strings.Join(xs, " ") + ")"
}

// value returns a random value of the spec as ks text; tangent asks for a
// random tangent of it instead (Integers and Bools give the unit tuple).
func (s spec) value(rng *rand.Rand, tangent bool) string {
	str := string(s)
	switch {
	case s == "f" || s == "p":
		return lit(randFloat(rng, s == "p" && !tangent))
	case strings.HasPrefix(str, "i"), strings.HasPrefix(str, "b"):
		if tangent {
			return "(tuple)"
		}
		if str[0] == 'b' {
			return map[byte]string{'0': "false", '1': "true"}[str[1]]
		}
		return str[1:]
	case strings.HasPrefix(str, "pv") || strings.HasPrefix(str, "v") && !strings.HasPrefix(str, "vv"):
		pos := strings.HasPrefix(str, "pv") && !tangent
		n, _ := strconv.Atoi(strings.TrimLeft(str, "pv"))
		xs := make([]string, n)
		for i := range xs {
			xs[i] = lit(randFloat(rng, pos))
		}
		return vecLit(xs)
	case strings.HasPrefix(str, "m"):
		r, c := dims(str[1:])
		xs := make([]string, r*c)
		for i := range xs {
			xs[i] = lit(randFloat(rng, false))
		}
		return fmt.Sprintf("(let (d %s) (build (tuple %d %d) (lam (ij : Tuple Integer Integer) (let ((i j) ij) (index (add (mul i %d) j) d)))))",
			vecLit(xs), r, c, c)
	case strings.HasPrefix(str, "vv"):
		r, c := dims(str[2:])
		rows := make([]string, r)
		for i := range rows {
			xs := make([]string, c)
			for j := range xs {
				xs[j] = lit(randFloat(rng, false))
			}
			rows[i] = vecLit(xs)
		}
		return "(Vec_init " + strings.Join(rows, " ") + ")"
	case strings.HasPrefix(str, "t("):
		parts := s.parts()
		xs := make([]string, len(parts))
		for i, p := range parts {
			xs[i] = p.value(rng, tangent)
		}
		return "(tuple " + strings.Join(xs, " ") + ")"
	}
	panic("bad spec " + s)
}

// A check is one function to differentiate at random points.
type check struct {
	name string
	src  string // ks definitions; the function checked is named name
	args []spec // the function's parameters
	dr   spec   // its result's cotangent
	fd   bool   // also compare forward mode with central differences
	// lean leaves out the checks of [vrev f] and [rev f k]
	// (writeValueChecks): the random programs check them on one in four,
	// which bounds the time of CI's 10,000.
	lean bool
	tol  float64
}

// argType returns the function's argument type.
func (c *check) argType() string {
	if len(c.args) == 1 {
		return c.args[0].ksType()
	}
	ts := make([]string, len(c.args))
	for i, a := range c.args {
		ts[i] = a.ksType()
	}
	return "(Tuple " + strings.Join(ts, " ") + ")"
}

// point returns the argument, a tangent of it and a cotangent of the
// result, as ks text.
func (c *check) point(rng *rand.Rand) (x, dx, dr string) {
	var xs, dxs []string
	for _, a := range c.args {
		xs = append(xs, a.value(rng, false))
		dxs = append(dxs, a.value(rng, true))
	}
	if len(c.args) == 1 {
		x, dx = xs[0], dxs[0]
	} else {
		x, dx = "(tuple "+strings.Join(xs, " ")+")", "(tuple "+strings.Join(dxs, " ")+")"
	}
	return x, dx, c.dr.value(rng, true)
}

// program returns a ks program checking every check at n random points,
// after the definitions in prelude: each line is "name adjoint-error
// fd-error split-adjoint-error value-adjoint-error value-error
// wrt-error", the
// adjoint identity between forward mode and [rev f], between forward
// mode and [sufrev f] and between forward mode and the gradient of
// [vrev f], the distance of [vrev f]'s value from f's, and that of
// [rev f k] (the last argument's gradient only) from [rev f]'s part; the central
// difference is taken per component of the result before the dot with dr,
// so that a large component cannot absorb a small one's change (random
// seed 1010354 had 1.9e18 beside 289.5, and a difference of 0). If selfCheck
// is set, main first prints "self_check E -1 0 0 0 0" with E the value of the
// program's (self_check).
func program(prelude string, checks []*check, n int, seed int64, selfCheck bool) string {
	rng := rand.New(rand.NewSource(seed))
	var b strings.Builder
	b.WriteString(prelude)
	b.WriteString("\n")
	for _, c := range checks {
		b.WriteString(c.src)
		b.WriteString("\n")
		fmt.Fprintf(&b, "(gdef fwd [%[1]s %[2]s])\n(gdef rev [%[1]s %[2]s])\n(gdef sufrev [%[1]s %[2]s])\n", c.name, c.argType())
		if !c.lean {
			c.writeValueChecks(&b)
		}
		t := c.argType()
		// The adjoint identity's error is relative to |a| + |b|, plus a
		// floor of 1e-2 |dx| |dr| so that a derivative that is zero by
		// cancellation (x - x), computed as a rounding residue one way
		// and as 0 the other, is not an error of 100%.
		//
		// The residue is a rounding of the terms that cancel, and those
		// can be much larger than |dx| |dr|. Random seed 702247
		// (testdata/ad/random_702247.ks) is 27 (dot (sub x3 x3) 2s) with
		// x3 = (constVec 3 x), 27 from a fold: f = 0 and every
		// derivative is exactly 0. Forward mode gives exactly 0 (dx -
		// dx); reverse mode adds three contributions of 54 dr to x's
		// cotangent and subtracts three, and the sum of three rounds by
		// half an ulp of 3 * 54 dr: 2^-47 at dr = 0.4785, 9e-17 of the
		// terms, as close to 0 as doubles get. The floor of 1e-4
		// |dx| |dr| tolerated a residue of 1e-14 |dx| |dr| (45 eps): it
		// called this 1.1e-10 too much. 1e-2 tolerates one rounding of
		// terms 4500 times |dr| (1e-12 |dx| |dr| absolute), and a
		// derivative that is wrong by any term larger than that (a
		// contribution dropped, doubled or misplaced) still fails: the
		// code was right and the floor was too low.
		fmt.Fprintf(&b, `(def adj$%[1]s Float ((x : %[2]s) (dx : %[3]s) (dr : %[4]s))
  (let ((a (ts_dot ([fwd %[1]s] x dx) dr))
        (b (ts_dot dx ([rev %[1]s] x dr)))
        (s (mul 1e-2 (mul (sqrt (ts_dot dx dx)) (sqrt (ts_dot dr dr))))))
    (div (abs (sub a b)) (add 1e-200 (add s (add (abs a) (abs b)))))))
(def sufadj$%[1]s Float ((x : %[2]s) (dx : %[3]s) (dr : %[4]s))
  (let ((a (ts_dot ([fwd %[1]s] x dx) dr))
        (b (ts_dot dx ([sufrev %[1]s] x dr)))
        (s (mul 1e-2 (mul (sqrt (ts_dot dx dx)) (sqrt (ts_dot dr dr))))))
    (div (abs (sub a b)) (add 1e-200 (add s (add (abs a) (abs b)))))))
`, c.name, t, tangentOf(t), tangentOf(c.dr.ksType()))
		if c.fd {
			fmt.Fprintf(&b, `(def fd$%[1]s Float ((x : %[2]s) (dx : %[3]s) (dr : %[4]s))
  (let ((h 1e-6)
        (yp (%[1]s (ts_add x (ts_scale h dx))))
        (ym (%[1]s (ts_add x (ts_scale (neg h) dx))))
        (fd (div (ts_dot (ts_add yp (ts_neg ym)) dr) (mul 2.0 h)))
        (an (ts_dot ([fwd %[1]s] x dx) dr)))
    (div (abs (sub fd an)) (add 1e-3 (abs an)))))
`, c.name, t, tangentOf(t), tangentOf(c.dr.ksType()))
		}
	}
	// Each check prints from a function of its own, and main adds up
	// what they return: one main holding every check's points would be
	// a function of thousands of lines, which gcc optimises in time
	// more than linear in its size.
	var calls []string
	if selfCheck {
		b.WriteString("(def main$self_check Integer ()\n    (print \"self_check \" (self_check) \" -1 0 0 0 0\\n\"))\n")
		calls = append(calls, "(main$self_check)")
	}
	// A point is bound once (x, dx, dr) and passed to every check of
	// it, so that its vectors are built once, not by each call: the
	// mains are then a small part of the generated code (they were a
	// quarter of the C of a batch of random programs).
	for _, c := range checks {
		var prints []string
		for k := 0; k < n; k++ {
			x, dx, dr := c.point(rng)
			fd := "-1.0"
			if c.fd {
				fd = fmt.Sprintf("(fd$%s x dx dr)", c.name)
			}
			vadj, vval, wrt := "0.0", "0.0", "0.0"
			if !c.lean {
				vadj = fmt.Sprintf("(vadj$%s x dx dr)", c.name)
				vval = fmt.Sprintf("(vval$%s x dr)", c.name)
				wrt = fmt.Sprintf("(wrt$%s x dr)", c.name)
			}
			prints = append(prints, fmt.Sprintf("(let ((x %[3]s) (dx %[4]s) (dr %[5]s))\n      (print %[1]q (adj$%[2]s x dx dr) \" \" %[6]s \" \" (sufadj$%[2]s x dx dr) \" \" %[7]s \" \" %[8]s \" \" %[9]s \"\\n\"))", c.name+" ", c.name, x, dx, dr, fd, vadj, vval, wrt))
		}
		fmt.Fprintf(&b, "(def main$%s Integer ()\n    %s)\n", c.name, sumOf(prints))
		calls = append(calls, fmt.Sprintf("(main$%s)", c.name))
	}
	fmt.Fprintf(&b, "(def main Integer ()\n  %s)\n", sumOf(calls))
	return b.String()
}

// writeValueChecks writes the checks of [vrev f] and [rev f k]: vadj$f,
// the adjoint identity between forward mode and [vrev f]'s gradient;
// vval$f, [vrev f]'s value against f's, relative to 1e-6 + |f x| (0 where
// the result has an Integer or Bool, which ts_dot cannot take); and
// wrt$f, [rev f k] against that part of [rev f]'s gradient, k the last
// argument (the last field of a tuple argument).
func (c *check) writeValueChecks(b *strings.Builder) {
	t, dt, dr := c.argType(), tangentOf(c.argType()), tangentOf(c.dr.ksType())
	fmt.Fprintf(b, "(gdef vrev [%s %s])\n", c.name, t)
	fmt.Fprintf(b, `(def vadj$%[1]s Float ((x : %[2]s) (dx : %[3]s) (dr : %[4]s))
  (let ((a (ts_dot ([fwd %[1]s] x dx) dr))
        (b (ts_dot dx (get$2$2 ([vrev %[1]s] x dr))))
        (s (mul 1e-2 (mul (sqrt (ts_dot dx dx)) (sqrt (ts_dot dr dr))))))
    (div (abs (sub a b)) (add 1e-200 (add s (add (abs a) (abs b)))))))
`, c.name, t, dt, dr)
	if rt := c.dr.ksType(); tangentOf(rt) == rt {
		fmt.Fprintf(b, `(def vval$%[1]s Float ((x : %[2]s) (dr : %[3]s))
  (let ((y (%[1]s x))
        (d (ts_add (get$1$2 ([vrev %[1]s] x dr)) (ts_neg y))))
    (div (sqrt (ts_dot d d)) (add 1e-6 (sqrt (ts_dot y y))))))
`, c.name, t, rt)
	} else {
		fmt.Fprintf(b, "(def vval$%s Float ((x : %s) (dr : %s)) 0.0)\n", c.name, t, dr)
	}
	fields := len(c.args)
	if fields == 1 && strings.HasPrefix(string(c.args[0]), "t(") {
		fields = len(c.args[0].parts())
	}
	if fields == 0 {
		fmt.Fprintf(b, "(def wrt$%s Float ((x : %s) (dr : %s)) 0.0)\n", c.name, t, dr)
		return
	}
	part := "g"
	if fields > 1 {
		part = fmt.Sprintf("(get$%d$%d g)", fields, fields)
	}
	fmt.Fprintf(b, `(def wrt$%[1]s Float ((x : %[2]s) (dr : %[3]s))
  (let ((g ([rev %[1]s] x dr))
        (p %[4]s)
        (d (ts_add p (ts_neg ([rev %[1]s %[5]d] x dr)))))
    (div (sqrt (ts_dot d d)) (add 1e-200 (sqrt (ts_dot p p))))))
`, c.name, t, dr, part, fields-1)
}

// tangentOf spells the tangent type of a ks type written by the specs.
func tangentOf(t string) string {
	r := strings.NewReplacer("Integer", "(Tuple)", "Bool", "(Tuple)")
	return r.Replace(t)
}

// parseChecks reads the ; CHECK lines of an AD test program:
//
//	; CHECK name spec... -> spec [nofd] [tol=T]
func parseChecks(src string) ([]*check, error) {
	var out []*check
	for i, line := range strings.Split(src, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "; CHECK ")
		if !ok {
			continue
		}
		lhs, rhs, ok := strings.Cut(rest, "->")
		f := strings.Fields(lhs)
		r := strings.Fields(rhs)
		if !ok || len(f) < 2 || len(r) < 1 {
			return nil, fmt.Errorf("line %d: want ; CHECK name spec... -> spec [nofd] [tol=T]", i+1)
		}
		c := &check{name: f[0], dr: spec(r[0]), fd: true}
		for _, a := range f[1:] {
			c.args = append(c.args, spec(a))
		}
		for _, opt := range r[1:] {
			switch {
			case opt == "nofd":
				c.fd = false
			case strings.HasPrefix(opt, "tol="):
				t, err := strconv.ParseFloat(opt[4:], 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", i+1, err)
				}
				c.tol = t
			default:
				return nil, fmt.Errorf("line %d: unknown option %q", i+1, opt)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// sumOf returns the ks sum of Integer expressions (0 for none), as a
// balanced tree so that nesting stays shallow.
func sumOf(xs []string) string {
	switch len(xs) {
	case 0:
		return "0"
	case 1:
		return xs[0]
	}
	h := len(xs) / 2
	return fmt.Sprintf("(add %s %s)", sumOf(xs[:h]), sumOf(xs[h:]))
}
