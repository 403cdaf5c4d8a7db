// Command revscale measures how the cost of derivatives grows with the
// size of the input: for sqnorm, dot, a matrix-vector product, logsumexp
// and a product over a vector by recursion (prodrec by a tail call,
// prodnt by a call whose value each level multiplies, so that the
// recursion is as deep as the vector is long), it times f, [rev f],
// [sufrev f] and [fwd f] (built by ksc build into a library, called from
// a C harness) at sizes 10^3 to 10^6 and prints the ratios of their times
// to f's, which must stay flat.
//
//	go run ./bench/revscale [-sizes 1000,10000,100000,1000000] [-min 0.2] [-rev lm|bog|suf]
//
// -rev is ksc's --rev: the strategy of [rev f] ([sufrev f] is split
// reverse mode in every strategy; with suf its passes are translated
// from the single-use form, docs/architecture.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ksc-lang/ksc/driver"
)

// The functions measured, written as a user would.
const source = `
(def sqnorm Float (v : Vec Float)
  (sumbuild (size v) (lam (i : Integer) (let (x (index i v)) (mul x x)))))
(gdef rev [sqnorm (Vec Float)])
(gdef sufrev [sqnorm (Vec Float)])

(def vdot Float ((a : Vec Float) (b : Vec Float)) (dot a b))
(gdef rev [vdot (Tuple (Vec Float) (Vec Float))])
(gdef sufrev [vdot (Tuple (Vec Float) (Vec Float))])

(def matvec Float ((m : Tensor 2 Float) (v : Vec Float))
  (sum (mul m v)))
(gdef rev [matvec (Tuple (Tensor 2 Float) (Vec Float))])
(gdef sufrev [matvec (Tuple (Tensor 2 Float) (Vec Float))])

(def logsumexp Float (v : Vec Float)
  (let (mx (max v))
    (add mx (log (sumbuild (size v) (lam (i : Integer) (exp (sub (index i v) mx))))))))
(gdef rev [logsumexp (Vec Float)])
(gdef sufrev [logsumexp (Vec Float)])

; The product of v[i..] times acc, by tail recursion over i.
(def prodrec Float ((v : Vec Float) (i : Integer) (acc : Float))
  (if (eq i (size v)) acc (prodrec v (add i 1) (mul acc (index i v)))))
(gdef rev [prodrec (Tuple (Vec Float) Integer Float)])
(gdef sufrev [prodrec (Tuple (Vec Float) Integer Float)])

; The same product by a recursion that is not a tail call: the derivative
; of each level needs the value of the levels below it.
(def prodnt Float ((v : Vec Float) (i : Integer))
  (if (eq i (size v)) 1.0 (mul (index i v) (prodnt v (add i 1)))))
(gdef rev [prodnt (Tuple (Vec Float) Integer)])
(gdef sufrev [prodnt (Tuple (Vec Float) Integer)])
`

// withFwd adds forward mode of every function measured.
const withFwd = `
(gdef fwd [sqnorm (Vec Float)])
(gdef fwd [vdot (Tuple (Vec Float) (Vec Float))])
(gdef fwd [matvec (Tuple (Tensor 2 Float) (Vec Float))])
(gdef fwd [logsumexp (Vec Float)])
(gdef fwd [prodrec (Tuple (Vec Float) Integer Float)])
(gdef fwd [prodnt (Tuple (Vec Float) Integer)])
`

// harness is the C timing program. It runs in a thread with a large
// stack, since reverse mode of the recursive product recurses as deep as
// the vector is long.
const harness = `
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rs.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* median time per call of body over rounds lasting at least min seconds. */
#define TIME(result, min, body)                                   \
  do {                                                            \
    double ts[15];                                                \
    int reps = 1;                                                 \
    for (;;) {                                                    \
      double t0 = now();                                          \
      for (int r = 0; r < reps; r++) { body; }                    \
      double dt = now() - t0;                                     \
      if (dt * 15 >= min) break;                                  \
      reps *= 2;                                                  \
    }                                                             \
    for (int k = 0; k < 15; k++) {                                \
      double t0 = now();                                          \
      for (int r = 0; r < reps; r++) { body; }                    \
      ts[k] = (now() - t0) / reps;                                \
    }                                                             \
    qsort(ts, 15, sizeof ts[0], cmp);                             \
    result = ts[7];                                               \
  } while (0)

static double minSeconds;
static long sizes[16];
static int nsizes;

static void *run(void *arg) {
  (void)arg;
  rs_ctx *ctx = rs_ctx_new();
  /* This thread's stack is 2 GiB (see main): recursion may use most of it. */
  rs_ctx_set_max_stack(ctx, ((size_t)1 << 31) - ((size_t)64 << 20));
  for (int s = 0; s < nsizes; s++) {
    long n = sizes[s];
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (long i = 0; i < n; i++) {
      x[i] = 1.0 + 1e-7 * (double)(i % 1000);
      y[i] = 0.5 - 1e-7 * (double)(i % 777);
    }
    rs_vec_f64 v = {n, x}, w = {n, y};
    long cols = 10, rows = n / cols;
    rs_ten2_f64 m = {{rows, cols}, y};
    rs_vec_f64 v10 = {cols, x};
    double out, tf, tr, tsuf, tfwd, ds;
    rs_vec_f64 gv, gw;
    rs_ten2_f64 gm;
#define CHECK(call) if ((call) != 0) { fprintf(stderr, "%s\n", rs_ctx_error(ctx)); exit(1); }
#define MEASURE(name, f, rev, sufrev, fwd)                                \
    TIME(tf, minSeconds, { CHECK(f); rs_ctx_reset(ctx); });               \
    TIME(tr, minSeconds, { CHECK(rev); rs_ctx_reset(ctx); });             \
    TIME(tsuf, minSeconds, { CHECK(sufrev); rs_ctx_reset(ctx); });        \
    TIME(tfwd, minSeconds, { CHECK(fwd); rs_ctx_reset(ctx); });           \
    printf("%s %ld %g %g %g %g\n", name, n, tf, tr, tsuf, tfwd)
    MEASURE("sqnorm", rs_sqnorm(ctx, v, &out), rs_rev_sqnorm(ctx, v, 1.0, &gv),
            rs_sufrev_sqnorm(ctx, v, 1.0, &gv), rs_fwd_sqnorm(ctx, v, w, &out));
    MEASURE("dot", rs_vdot(ctx, v, w, &out), rs_rev_vdot(ctx, v, w, 1.0, &gv, &gw),
            rs_sufrev_vdot(ctx, v, w, 1.0, &gv, &gw), rs_fwd_vdot(ctx, v, w, v, w, &out));
    MEASURE("matvec", rs_matvec(ctx, m, v10, &out), rs_rev_matvec(ctx, m, v10, 1.0, &gm, &gv),
            rs_sufrev_matvec(ctx, m, v10, 1.0, &gm, &gv), rs_fwd_matvec(ctx, m, v10, m, v10, &out));
    MEASURE("logsumexp", rs_logsumexp(ctx, v, &out), rs_rev_logsumexp(ctx, v, 1.0, &gv),
            rs_sufrev_logsumexp(ctx, v, 1.0, &gv), rs_fwd_logsumexp(ctx, v, w, &out));
    MEASURE("prodrec", rs_prodrec(ctx, v, 0, 1.0, &out), rs_rev_prodrec(ctx, v, 0, 1.0, 1.0, &gv, &ds),
            rs_sufrev_prodrec(ctx, v, 0, 1.0, 1.0, &gv, &ds), rs_fwd_prodrec(ctx, v, 0, 1.0, w, 1.0, &out));
    MEASURE("prodnt", rs_prodnt(ctx, v, 0, &out), rs_rev_prodnt(ctx, v, 0, 1.0, &gv),
            rs_sufrev_prodnt(ctx, v, 0, 1.0, &gv), rs_fwd_prodnt(ctx, v, 0, w, &out));
    fflush(stdout);
    free(x);
    free(y);
  }
  rs_ctx_free(ctx);
  return NULL;
}

int main(int argc, char **argv) {
  minSeconds = atof(argv[1]);
  for (int i = 2; i < argc && nsizes < 16; i++) sizes[nsizes++] = atol(argv[i]);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)1 << 31);
  pthread_t th;
  if (pthread_create(&th, &attr, run, NULL) != 0) return 2;
  pthread_join(th, NULL);
  return 0;
}
`

func main() {
	sizes := flag.String("sizes", "1000,10000,100000,1000000", "comma-separated vector sizes")
	minTime := flag.Float64("min", 0.2, "seconds each measurement lasts at least")
	rev := flag.String("rev", "lm", "how [rev f] is computed (ksc --rev): lm, bog or suf")
	flag.Parse()
	if err := run(*sizes, *minTime, driver.Options{Rev: *rev}); err != nil {
		fmt.Fprintln(os.Stderr, "revscale:", err)
		os.Exit(1)
	}
}

func run(sizes string, minTime float64, opts driver.Options) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "revscale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "revscale.ks")
	if err := os.WriteFile(file, []byte(source+withFwd), 0o644); err != nil {
		return err
	}
	prog, err := driver.LoadWith([]string{file}, driver.Derived, opts)
	if err != nil {
		return err
	}
	if err := driver.Optimise(prog, opts); err != nil {
		return err
	}
	if err := driver.BuildLibrary(ctx, prog, "rs", dir, driver.DefaultCC("-O3"), ""); err != nil {
		return err
	}
	c := filepath.Join(dir, "harness.c")
	if err := os.WriteFile(c, []byte(harness), 0o644); err != nil {
		return err
	}
	exe := filepath.Join(dir, "harness")
	cc := driver.DefaultCC("-O2")
	args := append([]string{"-std=c11", "-I", dir}, cc.Flags...)
	args = append(args, "-o", exe, c, "-L", dir, "-lrs", "-Wl,-rpath,"+dir, "-lpthread", "-lm")
	if out, err := cc.Command(context.Background(), args...).CombinedOutput(); err != nil {
		return fmt.Errorf("compiling the harness: %v\n%s", err, out)
	}
	cmdArgs := append([]string{strconv.FormatFloat(minTime, 'g', -1, 64)}, strings.Split(sizes, ",")...)
	out, err := exec.Command(exe, cmdArgs...).Output()
	if err != nil {
		return fmt.Errorf("running the harness: %v", err)
	}
	type row struct {
		name, size       string
		tf, tr, ts, tfwd float64
	}
	var rows []row
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 6 {
			return fmt.Errorf("unexpected harness output %q", line)
		}
		r := row{name: f[0], size: f[1]}
		for i, p := range []*float64{&r.tf, &r.tr, &r.ts, &r.tfwd} {
			if *p, err = strconv.ParseFloat(f[2+i], 64); err != nil {
				return fmt.Errorf("unexpected harness output %q", line)
			}
		}
		rows = append(rows, r)
	}
	ns := strings.Split(sizes, ",")
	for _, table := range []struct {
		title string
		t     func(row) float64
	}{
		{"[rev f] / f", func(r row) float64 { return r.tr }},
		{"[sufrev f] / f", func(r row) float64 { return r.ts }},
		{"[fwd f] / f", func(r row) float64 { return r.tfwd }},
	} {
		fmt.Printf("\n%s\n\n| function | %s |\n|---|%s\n", table.title, strings.Join(ns, " | "), strings.Repeat("---|", len(ns)))
		for _, name := range []string{"sqnorm", "dot", "matvec", "logsumexp", "prodrec", "prodnt"} {
			fmt.Printf("| %s |", name)
			for _, n := range ns {
				for _, r := range rows {
					if r.name == name && r.size == n {
						fmt.Printf(" %.2f (%s / %s) |", table.t(r)/r.tf, dur(table.t(r)), dur(r.tf))
					}
				}
			}
			fmt.Println()
		}
	}
	return nil
}

func dur(s float64) string {
	switch {
	case s < 1e-6:
		return fmt.Sprintf("%.0f ns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.1f µs", s*1e6)
	}
	return fmt.Sprintf("%.2f ms", s*1e3)
}
