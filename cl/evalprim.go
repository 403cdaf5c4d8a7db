package cl

import (
	"io"

	ksrt "github.com/ksc-lang/ksc/runtime/go"
	"math"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// parts splits the argument of a primitive into its argument parts, as
// ir.Parts does for types.
func parts(p *ir.Prim, s *types.Type, v Value) []Value {
	if p.Arity != 1 && s.Kind == types.Tuple {
		return v.(TupleValue)
	}
	return []Value{v}
}

// prim compiles F(p) for a primitive.
func (m *Machine) prim(c *Func) (code, error) {
	p := c.Prim
	if p.Def != "" {
		return m.preludeFunc(c)
	}
	if p.LM {
		return nil, errorf(c, "the evaluator does not run the linear-map operation %s", p.Name)
	}
	op := m.operation(p, c.P, c.S, c.T)
	if op == nil {
		return nil, errorf(c, "the evaluator does not run the primitive %s", p.Name)
	}
	s := c.S
	return func(v Value) (Value, error) { return op(parts(p, s, v)) }, nil
}

// an op is a primitive on its argument parts.
type op func(x []Value) (Value, error)

func pure1(f func(x []Value) Value) op {
	return func(x []Value) (Value, error) { return f(x), nil }
}

func float1(f func(float64) float64) op {
	return pure1(func(x []Value) Value { return f(x[0].(float64)) })
}

// operation returns the primitive p, whose argument has type s and
// result type t, or nil if the evaluator does not have it. A scalar
// primitive is its row's Eval (the Go backend's functions, so that the
// evaluator computes the same bits as the compiled program); the others
// are here.
func (m *Machine) operation(p *ir.Prim, pos Pos, s, t *types.Type) op {
	if p.Eval != nil {
		return func(x []Value) (Value, error) {
			v, err := p.Eval(x)
			if err != nil {
				return nil, fail(pos, "%v", err)
			}
			return v, nil
		}
	}
	if p.Identity {
		return pure1(func(x []Value) Value { return x[0] })
	}
	switch name := p.Name; name {
	case "eq":
		return pure1(func(x []Value) Value { return Equal(x[0], x[1]) })
	case "ne":
		return pure1(func(x []Value) Value { return !Equal(x[0], x[1]) })
	case "print":
		return m.print
	case "$trace":
		return func(x []Value) (Value, error) {
			_, err := io.WriteString(m.out, "Trace["+FormatValue(x[0])+"]\n")
			return x[0], err
		}
	}
	if op := tensorOperation(p.Name, pos, t); op != nil {
		return op
	}
	return recordOperation(p.Name, pos, s, t)
}

// print prints its argument parts and returns their number less one.
func (m *Machine) print(x []Value) (Value, error) {
	var b strings.Builder
	for _, v := range x {
		writeValue(&b, v)
	}
	if _, err := io.WriteString(m.out, b.String()); err != nil {
		return nil, err
	}
	return int64(len(x) - 1), nil
}

// tensorOperation returns the tensor and tangent primitives that take no
// function; t is the result type.
func tensorOperation(name string, pos Pos, t *types.Type) op {
	switch name {
	case "size":
		return pure1(func(x []Value) Value { return sizeValue(x[0].(*Tensor)) })
	case "index":
		return func(x []Value) (Value, error) {
			v := x[1].(*Tensor)
			k, err := flatIndex(pos, x[0], v)
			if err != nil {
				return nil, err
			}
			return v.Elems[k], nil
		}
	case "sum":
		return func(x []Value) (Value, error) {
			v := x[0].(*Tensor)
			if len(v.Elems) == 0 {
				return nil, fail(pos, "sum of an empty tensor")
			}
			return sum(pos, t, int64(len(v.Elems)), func(k int64) (Value, error) { return v.Elems[k], nil })
		}
	case "constVec":
		return func(x []Value) (Value, error) {
			return fill(pos, sizesOf(x[0]), func(int64) Value { return x[1] })
		}
	case "deltaVec":
		return func(x []Value) (Value, error) {
			sizes := sizesOf(x[0])
			z := zeroLike(x[2])
			v, err := fill(pos, sizes, func(int64) Value { return z })
			if err != nil {
				return nil, err
			}
			if k, err := flatIndex(pos, x[1], v); err == nil {
				v.Elems[k] = x[2]
			}
			return v, nil
		}
	case "delta":
		return pure1(func(x []Value) Value {
			if Equal(x[0], x[1]) {
				return x[2]
			}
			return zeroLike(x[2])
		})
	case "Vec_init":
		return pure1(func(x []Value) Value { return Vec(append([]Value(nil), x...)...) })
	case "unzip":
		return pure1(func(x []Value) Value {
			v := x[0].(*Tensor)
			out := make(TupleValue, len(t.Elems))
			for k := range out {
				out[k] = mapTensor(v, func(e Value) Value { return e.(TupleValue)[k] })
			}
			return out
		})
	case "ts_add":
		return func(x []Value) (Value, error) { return tsAdd(pos, x[0], x[1]) }
	case "ts_scale":
		return pure1(func(x []Value) Value { return tsScale(x[0].(float64), x[1]) })
	case "ts_neg":
		return pure1(func(x []Value) Value { return tsScale(-1, x[0]) })
	case "ts_dot":
		return func(x []Value) (Value, error) { return dotDiff(pos, x[0], nil, x[1]) }
	case "ts_zero":
		return pure1(func(x []Value) Value { return zeroTangent(t, x[0]) })
	case "$addTo":
		return func(x []Value) (Value, error) { return add(pos, x[0], x[1]) }
	case "$addAt":
		return func(x []Value) (Value, error) {
			v := x[0].(*Tensor)
			k, err := flatIndex(pos, x[1], v)
			if err != nil {
				return nil, err
			}
			e, err := add(pos, v.Elems[k], x[2])
			if err != nil {
				return nil, err
			}
			out := &Tensor{Shape: v.Shape, Elems: append([]Value(nil), v.Elems...)}
			out.Elems[k] = e
			return out, nil
		}
	case "$setAt":
		return func(x []Value) (Value, error) {
			v := x[0].(*Tensor)
			k, err := flatIndex(pos, x[1], v)
			if err != nil {
				return nil, err
			}
			out := &Tensor{Shape: v.Shape, Elems: append([]Value(nil), v.Elems...)}
			out.Elems[k] = x[2]
			return out, nil
		}
	}
	return nil
}

// recordOperation returns the primitives of split reverse mode's records
// and single-use form.
func recordOperation(name string, pos Pos, s, t *types.Type) op {
	switch name {
	case "$dup":
		return pure1(func(x []Value) Value { return TupleValue{x[0], x[0]} })
	case "$elim":
		return pure1(func([]Value) Value { return TupleValue{} })
	case "$inl":
		return pure1(func(x []Value) Value { return Variant{Left: true, V: x[0]} })
	case "$inr":
		return pure1(func(x []Value) Value { return Variant{V: x[1]} })
	case "$isl":
		return pure1(func(x []Value) Value { return x[0].(Variant).Left })
	case "$outl", "$outr":
		return pure1(func(x []Value) Value { return x[0].(Variant).V })
	case "$wrap", "$unwrap":
		return pure1(func(x []Value) Value { return x[0] })
	case "$shape", "shape":
		return pure1(func(x []Value) Value { return shapeOf(s, x[0]) })
	case "$zerosOfShape":
		return func(x []Value) (Value, error) { return zeros(pos, t, x[0]) }
	case "$flatten":
		return pure1(func(x []Value) Value {
			var fs []Value
			flatten(x[0], &fs)
			return &Tensor{Shape: []int64{int64(len(fs))}, Elems: fs}
		})
	case "$patternSeed":
		return pure1(func(x []Value) Value {
			var k int64
			return patternSeed(x[0], &k)
		})
	case "$patternCSR":
		return pure1(func(x []Value) Value {
			off, cols := []int64{0}, []int64{}
			patternRows(x[0], s, &off, &cols)
			return TupleValue{intVec(off), intVec(cols)}
		})
	case "$union":
		return pure1(func(x []Value) Value { return intVec(ksrt.SetUnion(ints(x[0]), ints(x[1]))) })
	case "$unionAll":
		return pure1(func(x []Value) Value {
			var sets [][]int64
			for _, s := range x[0].(*Tensor).Elems {
				sets = append(sets, ints(s))
			}
			return intVec(ksrt.UnionAll(sets))
		})
	case "$pairs":
		return func(x []Value) (Value, error) {
			var r []int64
			if err := ksrt.Catch(func() { r = ksrt.Pairs("", ints(x[0]), ints(x[1])) }); err != nil {
				return nil, fail(pos, "%s", err.Msg)
			}
			return intVec(r), nil
		}
	case "$pairsCSR":
		type csr struct{ Off, Cols []int64 }
		return func(x []Value) (Value, error) {
			var r csr
			if err := ksrt.Catch(func() {
				r = ksrt.PairsCSR[csr]("", ints(x[0]), ints(x[1]), ints(x[2]), x[3].(int64), x[4].(bool))
			}); err != nil {
				return nil, fail(pos, "%s", err.Msg)
			}
			return TupleValue{intVec(r.Off), intVec(r.Cols)}, nil
		}
	case "$colourColumns":
		type colouring struct {
			Count   int64
			Colours []int64
		}
		return func(x []Value) (Value, error) {
			var r colouring
			if err := ksrt.Catch(func() { r = ksrt.ColourColumns[colouring]("", ints(x[0]), ints(x[1]), x[2].(int64)) }); err != nil {
				return nil, fail(pos, "%s", err.Msg)
			}
			return TupleValue{r.Count, intVec(r.Colours)}, nil
		}
	case "$colour":
		type colouring struct {
			ByRows  bool
			Count   int64
			Colours []int64
		}
		return func(x []Value) (Value, error) {
			var r colouring
			if err := ksrt.Catch(func() { r = ksrt.Colour[colouring]("", ints(x[0]), ints(x[1]), x[2].(int64)) }); err != nil {
				return nil, fail(pos, "%s", err.Msg)
			}
			return TupleValue{r.ByRows, r.Count, intVec(r.Colours)}, nil
		}
	case "$unflatten":
		return func(x []Value) (Value, error) {
			fs := x[0].(*Tensor).Elems
			k := 0
			r := unflatten(x[1], fs, &k)
			if k != len(fs) {
				return nil, fail(pos, "size mismatch: %d and %d", len(fs), k)
			}
			return r, nil
		}
	}
	return nil
}

// fill returns the tensor of the given sizes whose element at flat
// position k is elem(k).
func fill(pos Pos, sizes []int64, elem func(k int64) Value) (*Tensor, error) {
	n, err := count(pos, sizes)
	if err != nil {
		return nil, err
	}
	v := &Tensor{Shape: sizes, Elems: make([]Value, n)}
	for k := range v.Elems {
		v.Elems[k] = elem(int64(k))
	}
	return v, nil
}

// A fun is the value of a Lam argument of a combinator.
type fun func(x Value) (Value, error)

// comb compiles a combinator: its arguments are evaluated in order, then
// the primitive runs with the functions of its Lam arguments.
func (m *Machine) comb(c *Comb) (code, error) {
	args := make([]code, len(c.Args))
	bodies := make([]code, len(c.Args))
	for k, a := range c.Args {
		var err error
		if l, ok := a.(*Lam); ok {
			bodies[k], err = m.compile(l.Body)
		} else {
			args[k], err = m.compile(a)
		}
		if err != nil {
			return nil, err
		}
	}
	run := combinator(c)
	if run == nil {
		return nil, errorf(c, "the evaluator does not run the primitive %s", c.Prim.Name)
	}
	return func(v Value) (Value, error) {
		ctx := v.(TupleValue)
		x := make([]Value, len(args))
		fs := make([]fun, len(args))
		for k := range args {
			if bodies[k] != nil {
				fs[k] = closure(bodies[k], ctx)
				continue
			}
			var err error
			if x[k], err = args[k](v); err != nil {
				return nil, err
			}
		}
		return run(x, fs)
	}, nil
}

// closure returns the function x -> body((ctx, x)).
func closure(body code, ctx TupleValue) fun {
	return func(x Value) (Value, error) {
		in := make(TupleValue, len(ctx)+1)
		copy(in, ctx)
		in[len(ctx)] = x
		return body(in)
	}
}

// combinator returns the primitive of c on its evaluated arguments x and
// functions fs, or nil.
func combinator(c *Comb) func(x []Value, fs []fun) (Value, error) {
	pos, t := c.P, c.T
	switch c.Prim.Name {
	case "build":
		return func(x []Value, fs []fun) (Value, error) { return build(pos, sizesOf(x[0]), fs[1]) }
	case "sumbuild":
		return func(x []Value, fs []fun) (Value, error) {
			sizes := sizesOf(x[0])
			for _, s := range sizes {
				if s <= 0 {
					return nil, fail(pos, "sumbuild over an empty range")
				}
			}
			n, err := count(pos, sizes)
			if err != nil {
				return nil, err
			}
			return sum(pos, t, n, func(k int64) (Value, error) { return fs[1](indexValue(k, sizes)) })
		}
	case "fold":
		return func(x []Value, fs []fun) (Value, error) { return fold(fs[0], x[1], x[2].(*Tensor), nil) }
	case "$foldtape":
		return func(x []Value, fs []fun) (Value, error) {
			v := x[2].(*Tensor)
			tape := make([]Value, 0, len(v.Elems)+1)
			last, err := fold(fs[0], x[1], v, func(acc Value) { tape = append(tape, acc) })
			if err != nil {
				return nil, err
			}
			return Vec(append(tape, last)...), nil
		}
	case "$foldrec":
		return func(x []Value, fs []fun) (Value, error) {
			v := x[2].(*Tensor)
			tape := make([]Value, 0, len(v.Elems)+1)
			recs := make([]Value, 0, len(v.Elems))
			acc := x[1]
			for _, e := range v.Elems {
				tape = append(tape, acc)
				r, err := fs[0](TupleValue{acc, e})
				if err != nil {
					return nil, err
				}
				acc = r.(TupleValue)[0]
				recs = append(recs, r.(TupleValue)[1])
			}
			return TupleValue{Vec(append(tape, acc)...), Vec(recs...)}, nil
		}
	case "map":
		return func(x []Value, fs []fun) (Value, error) {
			v := x[1].(*Tensor)
			return build(pos, v.Shape, func(i Value) (Value, error) { return fs[0](v.Elems[flat(i, v.Shape)]) })
		}
	case "map2":
		return func(x []Value, fs []fun) (Value, error) {
			a, b := x[1].(*Tensor), x[2].(*Tensor)
			if err := sameShape(pos, a, b); err != nil {
				return nil, err
			}
			return build(pos, a.Shape, func(i Value) (Value, error) {
				k := flat(i, a.Shape)
				return fs[0](TupleValue{a.Elems[k], b.Elems[k]})
			})
		}
	case "buildFromSparse":
		return func(x []Value, fs []fun) (Value, error) { return buildFromSparse(pos, t, x[0], sizesOf(x[1]), fs[2]) }
	case "$ifold", "$ifoldr":
		down := c.Prim.Name == "$ifoldr"
		return func(x []Value, fs []fun) (Value, error) { return ifold(x[0].(int64), x[1], fs[2], down) }
	case "$check":
		return func(x []Value, fs []fun) (Value, error) { return check5(pos, fs[0], fs[1], x[2], x[3], x[4]) }
	}
	return nil
}

// flat returns the flat position of an index value.
func flat(i Value, sizes []int64) int64 {
	is := sizesOf(i)
	k := int64(0)
	for d, x := range is {
		k = k*sizes[d] + x
	}
	return k
}

// build returns the tensor of the given sizes whose element at index i is f(i).
func build(pos Pos, sizes []int64, f fun) (*Tensor, error) {
	n, err := count(pos, sizes)
	if err != nil {
		return nil, err
	}
	v := &Tensor{Shape: sizes, Elems: make([]Value, n)}
	for k := range v.Elems {
		if v.Elems[k], err = f(indexValue(int64(k), sizes)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// fold is the left fold of f over v from acc; each gets the accumulators
// before each step.
func fold(f fun, acc Value, v *Tensor, each func(Value)) (Value, error) {
	for _, e := range v.Elems {
		if each != nil {
			each(acc)
		}
		var err error
		if acc, err = f(TupleValue{acc, e}); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func ifold(n int64, s Value, f fun, down bool) (Value, error) {
	for k := int64(0); k < n; k++ {
		i := k
		if down {
			i = n - 1 - k
		}
		var err error
		if s, err = f(TupleValue{s, i}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// buildFromSparse is zeros of the shape, then, for each index i of the
// loop counts in row-major order, with (j, x) = f(i), element j += x.
func buildFromSparse(pos Pos, t *types.Type, shape Value, counts []int64, f fun) (Value, error) {
	z, err := zeros(pos, t, shape)
	if err != nil {
		return nil, err
	}
	r := z.(*Tensor)
	err = eachIndex(counts, func(i Value) error {
		x, err := f(i)
		if err != nil {
			return err
		}
		pair := x.(TupleValue)
		k, err := flatIndex(pos, pair[0], r)
		if err != nil {
			return err
		}
		r.Elems[k], err = add(pos, r.Elems[k], pair[1])
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// eachIndex calls f with every index of the given sizes (an Integer for
// one size, else a tuple), in row-major order, until f fails. A size of 0
// or less makes the index space empty.
func eachIndex(sizes []int64, f func(i Value) error) error {
	for _, n := range sizes {
		if n <= 0 {
			return nil
		}
	}
	idx := make([]int64, len(sizes))
	for {
		var i Value = idx[0]
		if len(sizes) > 1 {
			t := make(TupleValue, len(idx))
			for d, x := range idx {
				t[d] = x
			}
			i = t
		}
		if err := f(i); err != nil {
			return err
		}
		d := len(idx) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < sizes[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return nil
		}
	}
}

// check5 is $check: with d1 = ts_dot(f(x + dx) - f(x), dt) and
// d2 = ts_dot(rev(x, dt), dx), |d1 - d2| / (|d1| + |d2|), or 0.
func check5(pos Pos, f, rev fun, x, dx, dt Value) (Value, error) {
	y0, err := f(x)
	if err != nil {
		return nil, err
	}
	x1, err := tsAdd(pos, x, dx)
	if err != nil {
		return nil, err
	}
	y1, err := f(x1)
	if err != nil {
		return nil, err
	}
	d1, err := dotDiff(pos, y1, y0, dt)
	if err != nil {
		return nil, err
	}
	g, err := rev(TupleValue{x, dt})
	if err != nil {
		return nil, err
	}
	d2, err := dotDiff(pos, g, nil, dx)
	if err != nil {
		return nil, err
	}
	den := math.Abs(d1) + math.Abs(d2)
	if den == 0 {
		return 0.0, nil
	}
	return math.Abs(d1-d2) / den, nil
}
