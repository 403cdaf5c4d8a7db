package driver

import (
	"fmt"
	"strings"

	"github.com/ksc-lang/ksc/bog"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/proc"
	"github.com/ksc-lang/ksc/types"
)

// SUF returns the program's functions in single-use form (bog.ToSUF):
// each body in A-normal form, every variable used exactly once, with
// $dup and $elim. The text is valid ks and computes what the program does.
func SUF(prog *ir.Program) (text []byte, err error) {
	err = guard("single-use form", "", func() error {
		ns := prog.Names().Clone() // printing the view leaves the program as it was
		out := &ir.Program{Types: prog.Types}
		for _, f := range prog.Funcs {
			if f.Body == nil || f.Arg.Contains(types.LM) || f.Result.Contains(types.LM) {
				out.Funcs = append(out.Funcs, f)
				continue
			}
			body, params := lower.ANF(f.Body, f.Params, ns)
			s := bog.ToSUF(body, params, ns)
			if err := bog.CheckSUF(s, params); err != nil {
				return fmt.Errorf("internal: %s is not in single-use form: %v", f.FullName(), err)
			}
			g := *f
			g.Params, g.Body = params, s
			out.Funcs = append(out.Funcs, &g)
		}
		text = append(out.Format(), procedures(prog, ns)...)
		return nil
	})
	return text, err
}

// procedures returns, as ks comments, the body of every def in the
// procedure language of package proc (statements, each variable consumed
// once), or why it is not in it.
func procedures(prog *ir.Program, ns *ir.Names) []byte {
	var b strings.Builder
	b.WriteString("\n; The procedure language (seed 002, Figures 20-21; package proc), from which\n" +
		"; split reverse mode is translated by Figure 23's rules (unless --rev=bog):\n")
	for _, f := range prog.Funcs {
		if f.Body == nil || f.Kind != ir.DefFunc || f.Arg.Contains(types.LM) || f.Result.Contains(types.LM) {
			continue
		}
		// As derive prepares a body for differentiation: prelude inlined,
		// maps as builds.
		prepared, err := lower.InlinePrelude(ir.Copy(f.Body, ir.Pos{}))
		if err != nil {
			prepared = f.Body
		}
		body, params := lower.ANF(lower.Builds(prepared, ns), f.Params, ns)
		b.WriteString(";\n; " + f.FullName())
		for _, v := range params {
			fmt.Fprintf(&b, " (%s : %s)", v.Name, v.T)
		}
		blk, err := proc.FromExpr(body, params, ns)
		if err != nil {
			fmt.Fprintf(&b, "\n;   not in the procedure language: %v\n", err)
			continue
		}
		b.WriteString("\n")
		for _, line := range strings.SplitAfter(proc.Format(blk, "  "), "\n") {
			if line != "" {
				b.WriteString(";" + line)
			}
		}
	}
	return []byte(b.String())
}

// BOG returns the records of split reverse mode and the passes that make
// and read them, from an optimised program; nil if it has none.
func BOG(prog *ir.Program) []byte {
	out := &ir.Program{Types: prog.Types}
	for _, f := range prog.Funcs {
		switch f.Name.Outer() {
		case "suffwdpass", "sufrevpass", "bogrev", "sufrev", "suffwdloop", "bogup":
			out.Funcs = append(out.Funcs, f)
		}
	}
	if len(out.Funcs) == 0 {
		return nil
	}
	return out.Format()
}
