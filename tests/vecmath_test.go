package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cruntime "github.com/ksc-lang/ksc/runtime/c"
)

// vecmathProgram computes each function of the runtime's vector math over
// a range, in a loop gcc vectorises (through libmvec) and one element at a
// time through a volatile pointer (scalar libm), and prints the largest
// difference in units in the last place, or "scalar" where the platform
// has no vector math.
const vecmathProgram = `#define _DEFAULT_SOURCE 1
#include "ksc_runtime.h"
#define N 100000
static double x[N], y[N], out[N];

/* ulps is |a - b| in units of the last place of b. */
static double ulps(double a, double b) {
  if (a == b || (isnan(a) && isnan(b))) return 0;
  if (!isfinite(a) || !isfinite(b)) return 1e300;
  double u = nextafter(fabs(b), INFINITY) - fabs(b);
  return fabs(a - b) / u;
}

#define VEC1(F) static void vec_##F(void) { for (int i = 0; i < N; i++) out[i] = F(x[i]); }
VEC1(exp) VEC1(log) VEC1(sin) VEC1(cos) VEC1(cosh) VEC1(tanh) VEC1(erf)
static void vec_pow(void) { for (int i = 0; i < N; i++) out[i] = pow(x[i], y[i]); }

static void linear(double lo, double hi) {
  for (int i = 0; i < N; i++) x[i] = lo + (hi - lo) * i / (N - 1);
}
static void logarithmic(double lo, double hi) {
  for (int i = 0; i < N; i++) x[i] = exp(log(lo) + (log(hi) - log(lo)) * i / (N - 1));
}

typedef double (*fn1)(double);
static void report(const char *name, void (*vec)(void), fn1 f) {
  volatile fn1 scalar = f;
  vec();
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double d = ulps(out[i], scalar(x[i]));
    if (d > worst) worst = d;
  }
  printf("%s %.3f\n", name, worst);
}

int main(void) {
#ifndef KS_VECTOR_MATH
  printf("scalar\n");
  return 0;
#endif
  linear(-700, 700); report("exp", vec_exp, exp);
  logarithmic(1e-300, 1e300); report("log", vec_log, log);
  linear(-100, 100); report("sin", vec_sin, sin);
  report("cos", vec_cos, cos);
  linear(-700, 700); report("cosh", vec_cosh, cosh);
  linear(-20, 20); report("tanh", vec_tanh, tanh);
  linear(-6, 6); report("erf", vec_erf, erf);
  logarithmic(0.01, 100);
  for (int i = 0; i < N; i++) y[i] = -20 + 40.0 * ((i * 7919) % N) / N;
  vec_pow();
  double (*volatile scalar)(double, double) = pow;
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double d = ulps(out[i], scalar(x[i], y[i]));
    if (d > worst) worst = d;
  }
  printf("pow %.3f\n", worst);
  return 0;
}
`

// TestVectorMath measures, for each function of the C runtime's vector
// math (runtime/c/ksc_runtime.h), how far libmvec's vector variant, which
// gcc calls in a vectorised loop, is from the scalar function: at most 4
// units in the last place, glibc's stated bound, over the ranges above.
// It fails if a loop was not vectorised (no call of a vector variant in
// the program), so the test measures what it says.
func TestVectorMath(t *testing.T) {
	needCC(t)
	if !wantBackend("c") {
		t.Skip("the C backend is not selected")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ksc_runtime.h"), []byte(cruntime.Header), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "vecmath.c")
	if err := os.WriteFile(src, []byte(vecmathProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exe := filepath.Join(dir, "vecmath")
	if warnings, err := baseCC("-O3").CompileC(ctx, src, exe); err != nil || warnings != "" {
		t.Fatalf("%v\n%s", err, warnings)
	}
	out, err := exec.CommandContext(ctx, exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(out)) == "scalar" {
		t.Skip("no vector math on this platform (x86-64, gcc and glibc 2.35 or later)")
	}
	syms, err := exec.CommandContext(ctx, "nm", "-D", exe).Output()
	if err != nil {
		t.Skipf("nm: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, v, _ := strings.Cut(l, " ")
		worst, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("cannot read %q", l)
		}
		t.Logf("%s: at most %.3f ulps from the scalar function", name, worst)
		if worst > 4 {
			t.Errorf("%s: the vector variant is %.3f ulps from the scalar function, more than glibc's 4", name, worst)
		}
		if !strings.Contains(string(syms), "_"+name+"@") {
			t.Errorf("%s: the loop was not vectorised (no vector variant in the program)", name)
		}
	}
}
