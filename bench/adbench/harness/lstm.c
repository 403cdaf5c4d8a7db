/* The LSTM harness: reads an ADBench LSTM file, calls the loss, its
 * gradient ([rev lstm_objective]) and [fwd lstm_objective] from the
 * library ksc built from bench/lstm.ks, checks them, and times them.
 *
 *   lstm-harness FILE MIN_SECONDS
 *
 * prints lines "key value" that bench/adbench reads. The gradient is
 * taken with respect to main_params and extra_params. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lstm.h"
#include "timing.h"

/* The loss's arguments, or a tangent or gradient of them. */
typedef struct { lstm_vec_vec_f64 main, extra, state, sequence; } args_t;

static double *readn(FILE *f, long n) {
  double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
  for (long i = 0; i < n; i++) {
    if (fscanf(f, "%lf", &p[i]) != 1) {
      fprintf(stderr, "lstm-harness: short input\n");
      exit(2);
    }
  }
  return p;
}

/* rows makes a vector of r rows of c elements over data. */
static lstm_vec_vec_f64 rows(double *data, long r, long c) {
  lstm_vec_vec_f64 m = {r, malloc((size_t)r * sizeof(lstm_vec_f64))};
  for (long i = 0; i < r; i++) m.data[i] = (lstm_vec_f64){c, data + i * c};
  return m;
}

static lstm_ctx *ctx;

static void check(int rc) {
  if (rc != 0) {
    fprintf(stderr, "lstm-harness: %s\n", lstm_ctx_error(ctx));
    exit(1);
  }
}

static double objective(args_t a) {
  double out;
  check(lstm_lstm_objective(ctx, a.main, a.extra, a.state, a.sequence, &out));
  return out;
}

/* gradient sets *g to the gradient of the loss at a times dr. */
static void gradient(args_t a, double dr, args_t *g) {
  check(lstm_rev_lstm_objective(ctx, a.main, a.extra, a.state, a.sequence, dr,
                                &g->main, &g->extra, &g->state, &g->sequence));
}

/* derivative returns the derivative of the loss at a along dx. */
static double derivative(args_t a, args_t dx) {
  double out;
  check(lstm_fwd_lstm_objective(ctx, a.main, a.extra, a.state, a.sequence,
                                dx.main, dx.extra, dx.state, dx.sequence, &out));
  return out;
}

/* Pointers to the entries differentiated (main_params, extra_params) of
 * the arguments and of a tangent or gradient of the same shape. */
typedef struct { long n; double **arg, **grad; } params_t;

static params_t params(args_t a, args_t g, long total) {
  params_t p = {0, malloc((size_t)total * sizeof(double *)), malloc((size_t)total * sizeof(double *))};
  lstm_vec_vec_f64 as[2] = {a.main, a.extra}, gs[2] = {g.main, g.extra};
  for (int m = 0; m < 2; m++)
    for (long r = 0; r < as[m].size; r++)
      for (long i = 0; i < as[m].data[r].size; i++) {
        p.arg[p.n] = &as[m].data[r].data[i];
        p.grad[p.n] = &gs[m].data[r].data[i];
        p.n++;
      }
  return p;
}

static void zero(lstm_vec_vec_f64 m) {
  for (long r = 0; r < m.size; r++) memset(m.data[r].data, 0, (size_t)m.data[r].size * sizeof(double));
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lstm-harness FILE MIN_SECONDS\n");
    return 2;
  }
  double minSeconds = atof(argv[2]);
  FILE *f = fopen(argv[1], "r");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  long l, c, b;
  if (fscanf(f, "%ld %ld %ld", &l, &c, &b) != 3) return 2;
  double *mainp = readn(f, 2 * l * 4 * b), *extra = readn(f, 3 * b);
  double *state = readn(f, 2 * l * b), *seq = readn(f, c * b);
  fclose(f);

  args_t a = {rows(mainp, 2 * l, 4 * b), rows(extra, 3, b), rows(state, 2 * l, b), rows(seq, c, b)};
  ctx = lstm_ctx_new();
  double obj = objective(a);
  printf("objective %.17g\n", obj);

  args_t g;
  gradient(a, 1.0, &g);
  long total = 2 * l * 4 * b + 3 * b;
  params_t p = params(a, g, total);
  double *grad = malloc((size_t)total * sizeof *grad);
  for (long i = 0; i < total; i++) grad[i] = *p.grad[i];

  /* Central differences on a sample of entries, each compared relative to
   * itself, or where it is small to the largest entry (the truncation
   * error of the difference quotient is relative to the function's
   * scale) or to the rounding error of the quotient. */
  double gmax = 0;
  for (long i = 0; i < total; i++) gmax = fabs(grad[i]) > gmax ? fabs(grad[i]) : gmax;
  double fdErr = 0;
  for (int s = 0; s < 12; s++) {
    long i = (long)(((unsigned long)s * 2654435761u) % (unsigned long)total);
    double v = *p.arg[i], h = 1e-5 * (fabs(v) > 1 ? fabs(v) : 1);
    *p.arg[i] = v + h;
    double up = objective(a);
    *p.arg[i] = v - h;
    double down = objective(a);
    *p.arg[i] = v;
    double fd = (up - down) / (2 * h);
    double noise = 1e-11 * fabs(obj) / h;
    double err = fabs(fd - grad[i]) / (fabs(grad[i]) + 1e-3 * gmax + noise + 1e-12);
    if (err > fdErr) fdErr = err;
  }
  printf("fd_error %.3g\n", fdErr);

  /* The adjoint identity: [fwd f](x, dx) = <dx, [rev f](x, 1)>. */
  args_t dx;
  gradient(a, 0.0, &dx); /* a tangent of the right shape */
  zero(dx.main), zero(dx.extra), zero(dx.state), zero(dx.sequence);
  params_t pd = params(a, dx, total);
  double lhs, rhs = 0, scale = 0;
  for (long i = 0; i < total; i++) {
    double t = sin(1.0 + (double)i * 0.7);
    *pd.grad[i] = t;
    rhs += t * grad[i];
    scale += fabs(t * grad[i]);
  }
  lhs = derivative(a, dx);
  printf("adjoint_error %.3g\n", fabs(lhs - rhs) / (scale > 0 ? scale : 1));
  lstm_ctx_reset(ctx);

  double tf, tg;
  TIME(tf, minSeconds, { objective(a); lstm_ctx_reset(ctx); });
  TIME(tg, minSeconds, { gradient(a, 1.0, &g); lstm_ctx_reset(ctx); });
  printf("time_objective %.6g\ntime_gradient %.6g\n", tf, tg);
  lstm_ctx_free(ctx);
  return 0;
}
