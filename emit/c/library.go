package cemit

import "github.com/ksc-lang/ksc/ir"

// library returns the exported entry points and the header.
func (e *emitter) library(prog *ir.Program) (string, string) {
	return "", ""
}
