package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ksc-lang/ksc/driver"
	cruntime "github.com/ksc-lang/ksc/runtime/c"
)

// TestGolden compares each program of testdata/golden after every stage
// with NAME.golden (sections "-- STAGE --"); go test -update rewrites
// them. Before comparing, it checks the output: printed stages parse and
// type-check again, and the C compiles with -fsyntax-only.
func TestGolden(t *testing.T) {
	for _, file := range programFiles(t, "golden") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(filepath.Base(name), func(t *testing.T) {
			got := stages(t, file)
			goldenFile := name + ".golden"
			if *update {
				if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(goldenFile)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("stages differ from %s (-want +got); if the change is right, run go test ./tests -run Golden -update:\n%s", goldenFile, diff)
			}
		})
	}
}

// stages returns the program after each stage of the pipeline table
// (driver.Pipeline), as sections, with the IR checker after every step.
// The stages whose text is ks must read back; the C must compile.
func stages(t *testing.T, file string) string {
	t.Helper()
	var b strings.Builder
	s := &driver.State{Paths: []string{file}, Opts: driver.Options{CheckIR: true}}
	for _, st := range driver.Pipeline() {
		if err := s.Advance(st.Name); err != nil {
			t.Fatalf("%s: %v", st.Name, err)
		}
		var text strings.Builder
		err := st.Print(s, &text)
		switch {
		case driver.IsNotApplicable(err):
			text.WriteString(err.Error())
		case err != nil:
			t.Fatalf("%s: %v", st.Name, err)
		}
		out := text.String()
		switch st.Name {
		case "typed", "derived", "suf", "optimised":
			reparse(t, st.Name, []byte(out))
		case "c":
			checkCompiles(t, out)
			out = strings.Replace(out, cruntime.Header, "/* runtime/c/ksc_runtime.h */\n", 1)
		}
		b.WriteString("-- " + st.Name + " --\n")
		b.WriteString(out)
		if !strings.HasSuffix(out, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// checkCompiles checks that generated C compiles without a warning.
func checkCompiles(t *testing.T, c string) {
	t.Helper()
	if _, err := exec.LookPath(baseCC().Cmd); err != nil {
		return
	}
	src := filepath.Join(t.TempDir(), "prog.c")
	if err := os.WriteFile(src, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := baseCC().Command(context.Background(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", src)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("generated C does not compile cleanly: %v\n%s", err, msg)
	}
}

// reparse checks that a printed stage parses and type-checks.
func reparse(t *testing.T, stage string, text []byte) {
	t.Helper()
	if _, err := driver.LoadSources([]driver.Source{{Name: stage, Text: text}}, driver.Typed); err != nil {
		t.Errorf("the %s stage does not read back: %v\n%s", stage, err, text)
	}
}
