package driver

import (
	"errors"
	"fmt"
	"io"

	"github.com/ksc-lang/ksc/eval"
	"github.com/ksc-lang/ksc/ir"
	ksrt "github.com/ksc-lang/ksc/runtime/go"
)

// Eval runs the main of a typed program (Load with Typed: not derived, not
// optimised) with the reference evaluator (package eval), as if it were
// compiled and run: what it prints goes to stdout, a runtime error goes to
// stderr as one line and the status is 1. An error is a program the
// evaluator does not run (*eval.Unsupported, for example a call of a
// derived function), or a bug in it (*InternalError).
func Eval(prog *ir.Program, stdout, stderr io.Writer) (code int, err error) {
	err = guard("the evaluator", "", func() error { return eval.Run(prog, stdout) })
	var re *ksrt.Error
	if errors.As(err, &re) {
		fmt.Fprintln(stderr, re.Error())
		return 1, nil
	}
	return 0, err
}
