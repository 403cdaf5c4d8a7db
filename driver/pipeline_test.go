package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPipelineOrder checks the pipeline table's constraints, as the Go
// compiler's SSA backend checks its pass table: names are unique, every
// step reads a step before it, the steps that advance the program form
// one chain (each reads the one before), views read one of them, and
// every step prints and documents itself.
func TestPipelineOrder(t *testing.T) {
	seen := map[string]bool{}
	isRun := map[string]bool{}
	lastRun := ""
	for i, st := range Pipeline() {
		if st.Name == "" || st.Doc == "" || st.Print == nil {
			t.Errorf("step %d (%q) lacks a name, a doc or a printer", i, st.Name)
		}
		if seen[st.Name] {
			t.Errorf("step %q appears twice", st.Name)
		}
		if st.After != "" && !seen[st.After] {
			t.Errorf("step %q reads %q, which does not come before it", st.Name, st.After)
		}
		switch {
		case st.Run != nil:
			if st.After != lastRun {
				t.Errorf("step %q advances the program from %q, but the program is at %q there", st.Name, st.After, lastRun)
			}
			lastRun = st.Name
			isRun[st.Name] = true
		case !isRun[st.After]:
			t.Errorf("view %q reads %q, which is not a step that makes a program", st.Name, st.After)
		}
		seen[st.Name] = true
	}
	for _, s := range []Stage{Typed, Derived, Optimised} {
		if !isRun[string(s)] {
			t.Errorf("Load's stage %q is not a step that makes a program", s)
		}
	}
}

// TestEveryStagePrints runs every stage of the table on a program that
// has something for each (split reverse mode for bog), with the IR
// checker after each step, and checks what each prints; a program
// without split reverse mode gets NotApplicable from bog, and one without
// main from go.
func TestEveryStagePrints(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := write("p.ks", "(def f Float (x : Float) (mul x (sin x)))\n(gdef sufrev [f Float])\n"+
		"(def g Float ((v : Vec Float) (k : Float)) (sumbuild (size v) (lam (i : Integer) (mul k (sin (index i v))))))\n"+
		"(gdef rev [g (Tuple (Vec Float) Float)])\n"+
		"(def main Integer () (print ([sufrev f] 0.5 1.0) \"\\n\"))\n")
	want := map[string]string{
		"parsed":    "(gdef sufrev [f Float])",
		"typed":     "(def f Float (x : Float)",
		"derived":   "(def [sufrev f] Float",
		"suf":       "$dup",
		"cl":        "(comp (tuple (proj 1 1)",
		"optimised": "(def [sufrev f] Float",
		"bog":       "(deftype bog$f$f64",
		"c":         "int main(",
		"go":        "package main",
	}
	for _, st := range Pipeline() {
		var b strings.Builder
		if err := Emit([]string{file}, st.Name, Options{CheckIR: true}, &b); err != nil {
			t.Errorf("%s: %v", st.Name, err)
			continue
		}
		w, ok := want[st.Name]
		if !ok {
			t.Errorf("%s: a stage this test does not know: say what it prints", st.Name)
		} else if !strings.Contains(b.String(), w) {
			t.Errorf("%s: the text has no %q:\n%s", st.Name, w, b.String())
		}
	}
	// Printing the views of the derived program leaves it as it was: the
	// optimised program is the same, fresh names and all.
	var direct, after strings.Builder
	if err := Emit([]string{file}, "optimised", Options{}, &direct); err != nil {
		t.Fatal(err)
	}
	s, err := Reach([]string{file}, "derived", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"suf", "cl"} {
		st, _ := Lookup(v)
		if err := st.Print(s, &strings.Builder{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Advance("optimised"); err != nil {
		t.Fatal(err)
	}
	after.Write(s.Prog.Format())
	if direct.String() != after.String() {
		t.Errorf("printing suf and cl changed the optimised program:\n%s\nwant\n%s", after.String(), direct.String())
	}
	plain := write("plain.ks", "(def f Float (x : Float) (mul x x))\n")
	err = Emit([]string{plain}, "bog", Options{}, &strings.Builder{})
	if !IsNotApplicable(err) {
		t.Errorf("bog of a program without split reverse mode: %v, want NotApplicable", err)
	}
	if err := Emit([]string{plain}, "go", Options{}, &strings.Builder{}); !IsNotApplicable(err) {
		t.Errorf("go of a program without main: %v, want NotApplicable", err)
	}
	if err := Emit([]string{plain}, "nonsense", Options{}, &strings.Builder{}); err == nil {
		t.Errorf("a stage not in the table: no error")
	}
}

// TestAdvanceForwardOnly: a state advances along the table and refuses to
// go back to a stage its program has passed (steps change it in place).
func TestAdvanceForwardOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.ks")
	if err := os.WriteFile(file, []byte("(def f Float (x : Float) (mul x x))\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var trace []string
	s, err := Reach([]string{file}, "typed", Options{Trace: func(st string) { trace = append(trace, st) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Advance("optimised"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trace, " "); got != "parsed typed derived optimised" {
		t.Errorf("steps run: %s, want parsed typed derived optimised", got)
	}
	if err := s.Advance("derived"); err == nil {
		t.Errorf("advancing an optimised program to derived: no error")
	}
}
