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
	cemit "github.com/ksc-lang/ksc/emit/c"
	cruntime "github.com/ksc-lang/ksc/runtime/c"
	"github.com/ksc-lang/ksc/syntax"
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

// stages returns the program after each stage, as sections.
func stages(t *testing.T, file string) string {
	t.Helper()
	var b strings.Builder
	section := func(name, text string) {
		b.WriteString("-- " + name + " --\n")
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	files, err := driver.ParseFiles([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	section("parsed", string(syntax.FormatFile(files[0])))

	typed, err := driver.Load([]string{file}, driver.Typed)
	if err != nil {
		t.Fatal(err)
	}
	section("typed", string(typed.Format()))
	reparse(t, "typed", typed.Format())

	prog, err := driver.Load([]string{file}, driver.Derived)
	if err != nil {
		t.Fatal(err)
	}
	section("derived", string(prog.Format()))
	reparse(t, "derived", prog.Format())
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatal(err)
	}
	section("optimised", string(prog.Format()))
	reparse(t, "optimised", prog.Format())

	out, err := driver.EmitC(prog, cemit.Options{Prefix: "ks", Main: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath(baseCC().Cmd); err == nil {
		src := filepath.Join(t.TempDir(), "prog.c")
		if err := os.WriteFile(src, []byte(out.C), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := baseCC().Command(context.Background(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", src)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("generated C does not compile cleanly: %v\n%s", err, msg)
		}
	}
	section("c", strings.Replace(out.C, cruntime.Header, "/* runtime/c/ksc_runtime.h */\n", 1))
	return b.String()
}

// reparse checks that a printed stage parses and type-checks.
func reparse(t *testing.T, stage string, text []byte) {
	t.Helper()
	if _, err := driver.LoadSources([]driver.Source{{Name: stage, Text: text}}, driver.Typed); err != nil {
		t.Errorf("the %s stage does not read back: %v\n%s", stage, err, text)
	}
}
