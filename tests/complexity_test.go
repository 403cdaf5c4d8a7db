package tests

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/eval"
	"github.com/ksc-lang/ksc/internal/ksgen"
	"github.com/ksc-lang/ksc/ir"
)

var costTable = flag.Bool("cost.table", false, "TestDerivativeCostGrowth: log every function's cost ratios (with -v)")

// TestDerivativeCostGrowth runs f, [fwd f], [rev f] and [sufrev f] of
// every function a ; CHECK line of testdata/ad names, optimised, in the
// reference evaluator, which counts their operations (eval.CallCounting:
// a cost model shared with no backend), with the inputs' sizes scaled by
// 2 and by 8 (and by 32 where a ratio grows). A derivative costs a
// constant factor of the function (and of the sizes of its argument and
// result, which it reads and writes whole), so its ratio to f must not
// grow with the sizes: it fails if a ratio at 8 is more than 1.5 times
// the ratio at 2 and more than 4, and so again from 8 to 32. (The
// quadratic reverse mode of an element of an element,
// TestElementsInPlace, grew 2.5 times on elem_build; the forward mode of
// a recursion pairing its value with a tuple, 3.7 times.) Integer arguments are not scaled; a function whose
// inputs cannot be scaled (it reads fixed sizes) fails at the larger
// size and is left out, and the test wants most of the corpus checked.
func TestDerivativeCostGrowth(t *testing.T) {
	derivativeCostGrowth(t, driver.Options{}, knownGrowth)
}

// TestSUFCostGrowth is TestDerivativeCostGrowth with [rev f] made of the
// split passes translated from the single-use form (--rev=suf, package
// proc), those of [sufrev f] by default. Nothing grows:
// row_steps's state, whose rows the build shares, accumulates into the
// cotangent passed in, copied only where it is first updated in place.
func TestSUFCostGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	derivativeCostGrowth(t, driver.Options{Rev: "suf"}, nil)
}

// derivativeCostGrowth checks the corpus's derivatives under opts, known
// being the derivatives whose cost is known to grow (knownGrowth).
func derivativeCostGrowth(t *testing.T, opts driver.Options, known map[string]string) {
	var mu sync.Mutex
	checked, left := 0, 0
	seen := map[string]bool{}
	t.Run("corpus", func(t *testing.T) {
		for _, file := range programFiles(t, "ad") {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".ks"), func(t *testing.T) {
				t.Parallel()
				c, l := costGrowth(t, file, seen, &mu, opts, known)
				mu.Lock()
				checked, left = checked+c, left+l
				mu.Unlock()
			})
		}
	})
	if checked+left < 200 {
		return // a -run pattern chose some files: the checks below are of the whole corpus
	}
	for name, why := range known {
		if !seen[name] {
			t.Errorf("%s is known to grow (%s) but no longer grows: take it out", name, why)
		}
	}
	t.Logf("%d functions checked, %d left out", checked, left)
	if checked < 3*left {
		t.Errorf("only %d functions checked (%d left out)", checked, left)
	}
}

// knownGrowth are the derivatives, [deriv f], whose cost is known to grow
// faster than f's by default (the linear-map [rev f]; the translated
// split passes have none, nor had the cut ones' [sufrev f] but for
// row_steps), and why: the test reports them, and fails if one no longer
// does.
var knownGrowth = map[string]string{
	"[rev row_steps]": "a state copied by build (its rows shared) has a cotangent of its own per step, a zero of every row: LSTM's state, issue 12",
}

// costGrowth checks the functions of one file for TestDerivativeCostGrowth,
// returning how many it checked and left out, and noting in seen the
// derivatives of known that still grow.
func costGrowth(t *testing.T, file string, seen map[string]bool, mu *sync.Mutex, opts driver.Options, known map[string]string) (checked, left int) {
	src, checks := fileChecks(t, file)
	prog := costProgram(t, file, src, checks, opts)
	for _, c := range checks {
		grows, ok := growth(t, file, prog, c)
		if !ok {
			left++
			continue
		}
		checked++
		for name, msg := range grows {
			if why, ok := known[name]; ok {
				mu.Lock()
				seen[name] = true
				mu.Unlock()
				t.Logf("%s (known: %s)", msg, why)
				continue
			}
			t.Error(msg)
		}
	}
	return checked, left
}

// growth returns the derivatives of c.name in prog whose cost grows faster
// than the function's (TestDerivativeCostGrowth), each with a message, or
// false if the function's inputs cannot be scaled. A ratio that grows
// from sizes x2 to x8 is measured again at x32, and must grow again: the
// ratio of a derivative of constant factor may still be settling at x8
// (a part of f's cost that does not grow with the sizes).
func growth(t *testing.T, where string, prog *ir.Program, c *check) (map[string]string, bool) {
	scales := []int{2, 8, 32}
	ratios := make([]map[string]float64, 3)
	at := func(k int) bool {
		r, err := costRatios(prog, c, scales[k])
		if err != nil {
			t.Logf("%s: %s at scale %d: %v (left out)", where, c.name, scales[k], err)
			return false
		}
		ratios[k] = r
		return true
	}
	if !at(0) || !at(1) {
		return nil, false
	}
	if *costTable {
		t.Logf("%s: %s: fwd %.2f %.2f, rev %.2f %.2f, sufrev %.2f %.2f", where, c.name,
			ratios[0]["fwd"], ratios[1]["fwd"], ratios[0]["rev"], ratios[1]["rev"], ratios[0]["sufrev"], ratios[1]["sufrev"])
	}
	grows := func(d string, k int) bool {
		return ratios[k+1][d] > 1.5*ratios[k][d] && ratios[k+1][d] > 4
	}
	out := map[string]string{}
	for _, d := range []string{"fwd", "rev", "sufrev"} {
		if !grows(d, 0) {
			continue
		}
		if ratios[2] == nil && !at(2) {
			return out, true // x32 is too large for it: left at x8
		}
		if !grows(d, 1) {
			continue
		}
		name := "[" + d + " " + c.name + "]"
		out[name] = fmt.Sprintf("%s: %s costs %.1f, %.1f and %.1f times %s at sizes x2, x8 and x32: it grows faster than the function",
			where, name, ratios[0][d], ratios[1][d], ratios[2][d], c.name)
	}
	return out, true
}

// TestRandomCostGrowth is TestDerivativeCostGrowth on random programs
// (internal/ksgen) from seed -random.seed on, -random.n of them.
func TestRandomCostGrowth(t *testing.T) {
	n := *randomN
	if testing.Short() {
		n = 50
	}
	checked := 0
	for seed := *randomSeed; seed < *randomSeed+int64(n); seed++ {
		p := ksgen.Generate(seed, fmt.Sprintf("p%d_", seed))
		args, dr := p.Specs()
		c := &check{name: p.Entry().Name, args: specs(args), dr: spec(dr)}
		where := fmt.Sprintf("random seed %d", seed)
		prog := optimisedText(t, "random.ks", p.String())
		grows, ok := growth(t, where, prog, c)
		if ok {
			checked++
		}
		for _, msg := range grows {
			t.Errorf("%s\n%s", msg, p.String())
		}
	}
	t.Logf("%d of %d programs checked", checked, n)
	if checked < n/2 {
		t.Errorf("only %d of %d programs checked", checked, n)
	}
}

// costProgram loads file with the derivatives of its checks and
// optimises it.
func costProgram(t *testing.T, file, src string, checks []*check, opts driver.Options) *ir.Program {
	t.Helper()
	var b strings.Builder
	b.WriteString(src)
	for _, c := range checks {
		fmt.Fprintf(&b, "\n(gdef fwd [%[1]s %[2]s])\n(gdef rev [%[1]s %[2]s])\n(gdef sufrev [%[1]s %[2]s])\n", c.name, c.argType())
	}
	return optimisedWith(t, filepath.Base(file), b.String(), opts)
}

// optimisedText loads the program text, saved as a file of the given
// name, and optimises it.
func optimisedText(t *testing.T, name, text string) *ir.Program {
	t.Helper()
	return optimisedWith(t, name, text, driver.Options{})
}

// optimisedWith is optimisedText with options.
func optimisedWith(t *testing.T, name, text string, opts driver.Options) *ir.Program {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	prog, err := driver.LoadWith([]string{tmp}, driver.Derived, opts)
	if err == nil {
		err = driver.Optimise(prog, opts)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, text)
	}
	return prog
}

// costLimit bounds the operations of one evaluation: a function whose
// cost at the largest size is beyond it is left out (at x8) or left at
// x8 (at x32).
const costLimit = 20_000_000

// costRatios returns the operations of [fwd f], [rev f] and [sufrev f]
// over those of f, at one point whose sizes are scaled.
func costRatios(prog *ir.Program, c *check, scale int) (map[string]float64, error) {
	rng := rand.New(rand.NewSource(1))
	var xs, dxs []eval.Value
	for _, a := range c.args {
		xs = append(xs, a.evalValue(rng, scale, false))
		dxs = append(dxs, a.evalValue(rng, scale, true))
	}
	x, dx := eval.Value(eval.Tuple(xs)), eval.Value(eval.Tuple(dxs))
	if len(xs) == 1 {
		x, dx = xs[0], dxs[0]
	}
	find := func(deriv string) *ir.Func {
		for _, f := range prog.Funcs {
			n := f.Name
			if n.Base == c.name && n.Wrt == nil && (deriv == "" && len(n.Derivs) == 0 || len(n.Derivs) == 1 && n.Derivs[0] == deriv) {
				return f
			}
		}
		return nil
	}
	f := find("")
	if f == nil {
		return nil, fmt.Errorf("no function %s", c.name)
	}
	y, base, err := eval.CallCounting(prog, f, costLimit, xs...)
	if err != nil {
		return nil, err
	}
	// A derivative reads and writes values the size of f's argument and
	// result, which f itself may not (it may read one element).
	base += eval.Scalars(x) + eval.Scalars(y)
	dr := tangentLike(rng, y) // f's result may not scale as the spec says
	out := map[string]float64{}
	for _, d := range []struct {
		deriv string
		args  []eval.Value
	}{{"fwd", []eval.Value{x, dx}}, {"rev", []eval.Value{x, dr}}, {"sufrev", []eval.Value{x, dr}}} {
		g := find(d.deriv)
		if g == nil {
			return nil, fmt.Errorf("no [%s %s]", d.deriv, c.name)
		}
		_, ops, err := eval.CallCounting(prog, g, costLimit, d.args...)
		if err != nil {
			return nil, fmt.Errorf("[%s %s]: %v", d.deriv, c.name, err)
		}
		out[d.deriv] = float64(ops) / float64(base)
	}
	return out, nil
}

// tangentLike returns a random tangent of the value y.
func tangentLike(rng *rand.Rand, y eval.Value) eval.Value {
	switch y := y.(type) {
	case float64:
		return randFloat(rng, false)
	case *eval.Tensor:
		data := make([]eval.Value, len(y.Data))
		for i, e := range y.Data {
			data[i] = tangentLike(rng, e)
		}
		return &eval.Tensor{Shape: y.Shape, Data: data}
	case eval.Tuple:
		t := make(eval.Tuple, len(y))
		for i, e := range y {
			t[i] = tangentLike(rng, e)
		}
		return t
	}
	return eval.Tuple{}
}

// evalValue returns a random value of the spec, as spec.value does, for
// the evaluator, its sizes multiplied by scale.
func (s spec) evalValue(rng *rand.Rand, scale int, tangent bool) eval.Value {
	str := string(s)
	floats := func(n int, pos bool) []eval.Value {
		xs := make([]eval.Value, n)
		for i := range xs {
			xs[i] = randFloat(rng, pos)
		}
		return xs
	}
	switch {
	case s == "f" || s == "p":
		return randFloat(rng, s == "p" && !tangent)
	case strings.HasPrefix(str, "i"), strings.HasPrefix(str, "b"):
		if tangent {
			return eval.Tuple{}
		}
		if str[0] == 'b' {
			return str[1] == '1'
		}
		n, _ := strconv.ParseInt(str[1:], 10, 64)
		return n
	case strings.HasPrefix(str, "pv") || strings.HasPrefix(str, "v") && !strings.HasPrefix(str, "vv"):
		n, _ := strconv.Atoi(strings.TrimLeft(str, "pv"))
		return eval.Vec(floats(n*scale, strings.HasPrefix(str, "pv") && !tangent)...)
	case strings.HasPrefix(str, "m"):
		r, c := dims(str[1:])
		return &eval.Tensor{Shape: []int64{int64(r * scale), int64(c * scale)}, Data: floats(r*c*scale*scale, false)}
	case strings.HasPrefix(str, "vv"):
		r, c := dims(str[2:])
		rows := make([]eval.Value, r*scale)
		for i := range rows {
			rows[i] = eval.Vec(floats(c*scale, false)...)
		}
		return eval.Vec(rows...)
	case strings.HasPrefix(str, "t("):
		parts := s.parts()
		xs := make(eval.Tuple, len(parts))
		for i, p := range parts {
			xs[i] = p.evalValue(rng, scale, tangent)
		}
		return xs
	}
	panic("bad spec " + s)
}
