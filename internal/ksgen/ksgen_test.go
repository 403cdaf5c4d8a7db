package ksgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/driver"
)

// TestGeneratedProgramsCheck type-checks and differentiates generated
// programs: one that does not check is a bug in the generator.
func TestGeneratedProgramsCheck(t *testing.T) {
	dir := t.TempDir()
	for seed := int64(0); seed < 1000; seed++ {
		p := Generate(seed, "p_")
		file := filepath.Join(dir, "p.ks")
		if err := os.WriteFile(file, []byte(p.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		prog, err := driver.LoadWith([]string{file}, driver.Derived, driver.Options{})
		if err == nil {
			err = driver.Optimise(prog, driver.Options{CheckIR: true})
		}
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, p)
		}
	}
}

// TestGenerateIsDeterministic: a seed always gives the same program, and
// different seeds different ones.
func TestGenerateIsDeterministic(t *testing.T) {
	if a, b := Generate(7, "p_").String(), Generate(7, "p_").String(); a != b {
		t.Errorf("seed 7 gave two programs:\n%s\n%s", a, b)
	}
	if Generate(7, "p_").String() == Generate(8, "p_").String() {
		t.Errorf("seeds 7 and 8 gave the same program")
	}
}

// TestShrink shrinks a program under a synthetic failure (the program
// mentions sin) to one whose entry is small and still mentions sin.
func TestShrink(t *testing.T) {
	fails := func(p *Program) bool { return strings.Contains(p.String(), "(sin ") }
	for seed := int64(0); seed < 200; seed++ {
		p := Generate(seed, "p_")
		if !fails(p) {
			continue
		}
		before := len(p.String())
		q := Shrink(p, fails)
		if !fails(q) {
			t.Fatalf("seed %d: the shrunk program does not fail:\n%s", seed, q)
		}
		// What is left of each body: a sin of a constant at most, in the
		// lets, ifs and calls that lead to it.
		if len(q.String()) > before {
			t.Errorf("seed %d: shrinking grew the program", seed)
		}
		for _, f := range q.Funcs {
			if strings.Count(f.Body.String(), "(") > 12 {
				t.Errorf("seed %d: %s was not shrunk: %s", seed, f.Name, f.Body)
			}
		}
		return
	}
	t.Fatal("no seed gave a program with sin")
}
