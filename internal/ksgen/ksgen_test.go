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
	failed := 0
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
			t.Errorf("seed %d: %v\n%s", seed, err, p)
			if failed++; failed == 10 {
				t.Fatal("10 programs failed; stopping")
			}
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

// TestFeatureCoverage: every feature of AllFeatures is exercised by some
// of 1000 generated programs, and Features names no other.
func TestFeatureCoverage(t *testing.T) {
	count := map[string]int{}
	for seed := int64(0); seed < 1000; seed++ {
		for _, f := range Generate(seed, "p_").Features() {
			count[f]++
		}
	}
	known := map[string]bool{}
	for _, f := range AllFeatures() {
		known[f.Name] = true
		if count[f.Name] == 0 {
			t.Errorf("no program of 1000 exercises %s (%s)", f.Name, f.Doc)
		}
	}
	for name := range count {
		if !known[name] {
			t.Errorf("Features gives %q, which AllFeatures does not list", name)
		}
	}
}

// TestShrinkKeepsFixedNodes: shrinking under a synthetic failure (the
// program indexes or recurses) leaves the indices, sizes and recursion
// guards the generator keeps in range as they were.
func TestShrinkKeepsFixedNodes(t *testing.T) {
	fails := func(p *Program) bool {
		s := p.String()
		return strings.Contains(s, "(index ") || strings.Contains(s, "(sub i 1)")
	}
	shrunk := 0
	for seed := int64(0); seed < 300; seed++ {
		p := Generate(seed, "p_")
		if !fails(p) {
			continue
		}
		fixed := map[string]bool{}
		for _, f := range p.Funcs {
			for _, n := range allNodes(f.Body) {
				if n.Fixed {
					fixed[n.String()] = true
				}
			}
		}
		q := Shrink(p, fails)
		shrunk++
		for _, f := range q.Funcs {
			for _, n := range allNodes(f.Body) {
				if n.Fixed && !fixed[n.String()] {
					t.Errorf("seed %d: a fixed node became %s", seed, n)
				}
				if n.Hold && n.Head == "if" && !n.Kids[0].Fixed {
					t.Errorf("seed %d: the guard of a recursion lost its condition: %s", seed, n)
				}
			}
		}
	}
	if shrunk < 10 {
		t.Errorf("only %d programs index or recurse", shrunk)
	}
}

// TestRecursionBounded: the arguments a recursive helper passes to itself,
// and the value of each level, go through a function bounded by 1, so a
// helper's values cannot grow as a power of the depth (seed 1010354 of the
// random test once squared an argument at every level).
func TestRecursionBounded(t *testing.T) {
	bounded := map[string]bool{"sin": true, "cos": true, "tanh": true}
	recursive := 0
	for seed := int64(0); seed < 300; seed++ {
		p := Generate(seed, "p_")
		for _, f := range p.Funcs {
			for _, n := range allNodes(f.Body) {
				if n.Head == "let" && n.Kids[0].Head == f.Name {
					recursive++
					self := n.Kids[0]
					for _, k := range append(self.Kids[1:], n.Kids[1]) {
						if !bounded[k.Head] {
							t.Errorf("seed %d: %s: %s is not bounded", seed, f.Name, k)
						}
					}
				}
			}
		}
	}
	if recursive < 10 {
		t.Errorf("only %d recursive helpers in 300 programs", recursive)
	}
}
