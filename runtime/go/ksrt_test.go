package ksrt

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// floats are values whose %g formatting is checked against C's printf.
var floats = []float64{
	0, 1, -1, 0.1, 0.5, 1e-05, 2.0 / 3, 1e6, 999999, 999999.5, 1234567, 123456, 100000, 0.0001,
	0.00012345678, 1e-300, 1e300, math.MaxFloat64, math.SmallestNonzeroFloat64, 3.14159265358979,
	-2.5e-7, 12345.678, 0.000099999, 9.9999949e5, 1.5, 2.5, 0.125, 6.02214076e23, 1 / 3.0, 100, 1e5 + 0.5,
}

// TestFormatGMatchesC compiles a C program printing the same values with
// %g and compares.
func TestFormatGMatchesC(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\nint main(void) {\n")
	for _, f := range floats {
		for _, x := range []float64{f, -f} {
			src.WriteString("  printf(\"%g\\n\", " + strconvG(x) + ");\n")
		}
	}
	src.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	c := filepath.Join(dir, "g.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "g")
	if out, err := exec.Command(cc, "-o", exe, c).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	i := 0
	for _, f := range floats {
		for _, x := range []float64{f, -f} {
			if got := FormatG(x); got != want[i] {
				t.Errorf("FormatG(%v) = %q, C prints %q", x, got, want[i])
			}
			i++
		}
	}
	for x, want := range map[float64]string{math.Inf(1): "inf", math.Inf(-1): "-inf", math.NaN(): "nan"} {
		if got := FormatG(x); got != want {
			t.Errorf("FormatG(%v) = %q, want %q", x, got, want)
		}
	}
}

// strconvG spells a finite float exactly as a C double literal.
func strconvG(x float64) string { return strconv.FormatFloat(x, 'e', -1, 64) }

func TestRanhashdoub(t *testing.T) {
	for in, want := range map[int64]string{0: "0.4815", 1: "0.744771", 20000: "0.545205"} {
		if got := FormatG(Ranhashdoub(in)); got != want {
			t.Errorf("Ranhashdoub(%d) = %s, want %s", in, got, want)
		}
	}
}

func TestPrintNested(t *testing.T) {
	type tup struct {
		F0 int64
		F1 float64
	}
	var b strings.Builder
	old := Out
	defer func() { Out = old }()
	Out = newWriter(&b)
	Print(Tensor[int64]{Shape: []int64{2, 2}, Data: []int64{0, 1, 2, 3}})
	Print([]tup{{1, 2}, {3, 4.5}})
	Print(struct{}{})
	Out.Flush()
	if got, want := b.String(), "[[0, 1], [2, 3]][1,2, 3,4.5]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
