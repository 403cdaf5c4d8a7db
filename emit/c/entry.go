package cemit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// An entry is the C signature of an exported function and how its
// wrapper maps that signature onto the ks function (docs/abi.md,
// "Functions"). A derivative takes the separate arguments of the
// function it derives from, then the tangent or cotangent, and gives each
// of its results (a value, a gradient per argument, a BOG) through a
// pointer of its own; an argument whose tangent is the unit tuple
// (Integer, Bool, String) has no tangent parameter and no gradient.
type entry struct {
	params []slot   // the C parameters after ctx
	outs   []slot   // the result pointers, after the parameters
	args   []string // C expressions, from params: the ks function's C arguments
	stores []string // statements storing the ks function's result ks_r in outs
	result *types.Type
}

// A slot is a C parameter or result pointer. Role says what it holds, for
// the manifest: "argument", "tangent", "cotangent" or "bog" (parameters);
// "value", "tangent", "gradient" or "bog" (results). Of is the position
// of the argument a tangent or gradient belongs to.
type slot struct {
	name string
	t    *types.Type
	role string
	of   *int
}

// resultVar is the wrapper's local holding the ks function's result;
// paramNames keeps it, like every name the wrapper uses, from the
// parameters.
const resultVar = "ks_r"

// entryOf returns the C signature of f. A derivative [D g] of a function
// g gets the layout of its derivation ([jac g] g's parameter names); anything else (f itself, [CL f],
// [shape f], a derivative of a derivative) takes its argument tuple's
// fields and gives one result, out.
func (e *emitter) entryOf(f *ir.Func) entry {
	if len(f.Name.Derivs) >= 1 && f.Base != nil && (len(f.Base.Name.Derivs) == 0 || ir.IsCL(f.Base)) {
		if en, ok := e.derivedEntry(f, f.Name.Derivs[0]); ok {
			return en
		}
	}
	en := entry{result: f.Result}
	for i, t := range paramTypes(f.Arg) {
		name := paramNames(f)[i]
		en.params = append(en.params, slot{name: name, t: t, role: "argument"})
		en.args = append(en.args, name)
	}
	en.outs = []slot{{name: "out", t: f.Result, role: "value"}}
	en.stores = []string{"*out = " + resultVar + ";"}
	return en
}

// derivedEntry returns the layout of the derivation deriv of g = f.Base,
// g : S -> T, or false if f's types are not those the derivation gives.
func (e *emitter) derivedEntry(f *ir.Func, deriv string) (entry, bool) {
	g := f.Base
	s, t := g.Arg, g.Result
	xs := paramTypes(s)
	names, dnames := derivedNames(g)
	en := entry{result: f.Result}
	args := func() {
		for i, x := range xs {
			en.params = append(en.params, slot{name: names[i], t: x, role: "argument"})
		}
	}
	// tupleOf is the C value of type u (s or its tangent) with the given
	// fields, or the one field when s is not a tuple (when s is Integer,
	// u is the unit tuple, yet a single value).
	tupleOf := func(u *types.Type, fields []string) string {
		if s.Kind != types.Tuple {
			return fields[0]
		}
		if len(fields) == 0 {
			return "(" + e.ctype(u) + "){0}"
		}
		return "(" + e.ctype(u) + "){" + strings.Join(fields, ", ") + "}"
	}
	// grads adds a gradient result for each argument at positions wrt (all
	// if nil), read from the C value r of their tangents (a tuple of them
	// when there are several, or when wrt is nil and s a tuple).
	grads := func(r string, wrt []int) {
		tuple := len(wrt) > 1 || wrt == nil && s.Kind == types.Tuple
		if wrt == nil {
			for i := range xs {
				wrt = append(wrt, i)
			}
		}
		for k, i := range wrt {
			dx, _ := types.Tangent(xs[i])
			if dx.Equal(types.Unit) {
				continue
			}
			en.outs = append(en.outs, slot{name: dnames[i], t: dx, role: "gradient", of: &i})
			src := r
			if tuple {
				src = fmt.Sprintf("%s.f%d", r, k)
			}
			en.stores = append(en.stores, fmt.Sprintf("*%s = %s;", dnames[i], src))
		}
	}
	dt, ok := types.Tangent(t)
	if !ok {
		return en, false
	}
	pair := func(u *types.Type) bool { return u.Kind == types.Tuple && len(u.Elems) == 2 }
	switch deriv {
	case "fwd", "rev", "sufrev", "vrev":
		if !pair(f.Arg) || !f.Arg.Elems[0].Equal(s) {
			return en, false
		}
	case "suffwdpass":
		if !pair(f.Result) || !f.Arg.Equal(s) {
			return en, false
		}
	case "sufrevpass":
		if !pair(f.Arg) {
			return en, false
		}
	case "jac", "sparsejac":
		if !f.Arg.Equal(s) {
			return en, false
		}
	}
	switch deriv {
	case "fwd":
		args()
		// The tangents of the arguments at the positions wrt ([fwd f
		// I...]: the chosen ones, alone or as a tuple), or of all.
		wrt := f.Name.Wrt
		if s.Kind != types.Tuple {
			wrt = nil // the only position is 0
		}
		var dfields []string
		for i, x := range xs {
			if wrt != nil && !slices.Contains(wrt, i) {
				continue
			}
			dx, _ := types.Tangent(x)
			if dx.Equal(types.Unit) {
				dfields = append(dfields, "("+e.ctype(dx)+"){0}")
				continue
			}
			en.params = append(en.params, slot{name: dnames[i], t: dx, role: "tangent", of: &i})
			dfields = append(dfields, dnames[i])
		}
		ds, _ := types.Tangent(s)
		dx := tupleOf(ds, dfields)
		if wrt != nil {
			dx = dfields[0]
			if len(wrt) > 1 {
				dx = "(" + e.ctype(f.Arg.Elems[1]) + "){" + strings.Join(dfields, ", ") + "}"
			}
		}
		en.args = []string{tupleOf(s, names), dx}
		en.outs = []slot{{name: "dout", t: dt, role: "tangent"}}
		en.stores = []string{"*dout = " + resultVar + ";"}
	case "rev", "sufrev", "vrev":
		args()
		en.params = append(en.params, slot{name: "dout", t: dt, role: "cotangent"})
		en.args = []string{tupleOf(s, names), "dout"}
		r := resultVar
		if deriv == "vrev" {
			en.outs = []slot{{name: "out", t: t, role: "value"}}
			en.stores = []string{"*out = " + resultVar + ".f0;"}
			r += ".f1"
		}
		grads(r, f.Name.Wrt)
	case "suffwdpass":
		args()
		en.args = append([]string(nil), names...)
		en.outs = []slot{{name: "out", t: t, role: "value"}, {name: "bog", t: f.Result.Elems[1], role: "bog"}}
		en.stores = []string{"*out = " + resultVar + ".f0;", "*bog = " + resultVar + ".f1;"}
	case "sufrevpass":
		b := f.Arg.Elems[1]
		en.params = []slot{{name: "dout", t: dt, role: "cotangent"}, {name: "bog", t: b, role: "bog"}}
		en.args = []string{"dout", "bog"}
		grads(resultVar, nil)
	case "jac", "sparsejac":
		args()
		en.args = append([]string(nil), names...)
		en.outs = []slot{{name: "out", t: f.Result, role: "value"}}
		en.stores = []string{"*out = " + resultVar + ";"}
	default:
		return en, false
	}
	return en, true
}

// derivedNames returns the C names of g's parameters and of their
// tangents and gradients: the ks names and d followed by them, or p0, p1,
// ... and dp0, dp1, ... if those would collide with each other or with
// the names the wrapper uses.
func derivedNames(g *ir.Func) (names, dnames []string) {
	names = paramNames(g)
	seen := map[string]bool{"ctx": true, "out": true, "dout": true, "bog": true, resultVar: true}
	ok := true
	for _, n := range names {
		if seen[n] || seen["d"+n] {
			ok = false
		}
		seen[n], seen["d"+n] = true, true
	}
	if !ok {
		for i := range names {
			names[i] = fmt.Sprintf("p%d", i)
		}
	}
	for _, n := range names {
		dnames = append(dnames, "d"+n)
	}
	return names, dnames
}
