package pyemit

import (
	"strings"
	"testing"
)

// TestModule: the module is the library's, with no placeholder left
// (tests/python_test.go runs it against a library).
func TestModule(t *testing.T) {
	m := Module("gmm")
	for _, want := range []string{`"gmm.json"`, "libgmm.so", "class KscError"} {
		if !strings.Contains(m, want) {
			t.Errorf("the module lacks %q", want)
		}
	}
	if strings.Contains(m, "NAME") {
		t.Errorf("a placeholder is left in the module")
	}
}

func TestIsKeyword(t *testing.T) {
	for name, want := range map[string]bool{"lambda": true, "None": true, "model": false, "print": false, "match": false} {
		if IsKeyword(name) != want {
			t.Errorf("IsKeyword(%q) = %v", name, !want)
		}
	}
}
