// Package derive generates the bodies of derived functions ([D f],
// [fwd f], [rev f], [suffwdpass f], [sufrevpass f], [sufrev f], [CL f],
// [shape f]) that a program asks for with gdef or calls without writing
// them by hand.
//
// No derivation is implemented yet: every derived function without a
// hand-written body is reported as an error at the place that needs it.
package derive

import (
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
)

// Derive fills in the body of every derived function of prog that has none.
func Derive(prog *ir.Program) error {
	var errs syntax.ErrorList
	for _, f := range prog.Funcs {
		if f.Kind != ir.DerivedFunc || f.Body != nil {
			continue
		}
		pos := f.P
		if len(f.Uses) > 0 {
			pos = f.Uses[0]
		}
		errs.Add(pos, "ksc cannot generate %s yet (derivation %q is not implemented)", f.FullName(), f.Name.Derivs[0])
	}
	errs.Sort()
	return errs.Err()
}
