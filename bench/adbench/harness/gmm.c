/* The GMM harness: reads an ADBench GMM file, calls the objective, its
 * gradient ([rev gmm_objective]), [fwd gmm_objective] and the
 * Hessian-vector product [fwd [rev gmm_objective]] from the library ksc
 * built from bench/gmm.ks and bench/gmm_hvp.ks, checks them, and times
 * them.
 *
 *   gmm-harness FILE MIN_SECONDS
 *
 * prints lines "key value..." that bench/adbench reads. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmm.h"
#include "timing.h"

/* The objective's arguments, and their gradients (m, an Integer, has none). */
typedef struct { gmm_vec_f64 alpha; gmm_vec_vec_f64 mu, q, l, x; double wgamma; int64_t wm; } args_t;
typedef struct { gmm_vec_f64 alpha; gmm_vec_vec_f64 mu, q, l, x; double wgamma; } grad_t;

static double *readn(FILE *f, long n) {
  double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
  for (long i = 0; i < n; i++) {
    if (fscanf(f, "%lf", &p[i]) != 1) {
      fprintf(stderr, "gmm-harness: short input\n");
      exit(2);
    }
  }
  return p;
}

/* rows makes a vector of r rows of c elements over data. */
static gmm_vec_vec_f64 rows(double *data, long r, long c) {
  gmm_vec_vec_f64 m = {r, malloc((size_t)r * sizeof(gmm_vec_f64))};
  for (long i = 0; i < r; i++) m.data[i] = (gmm_vec_f64){c, data + i * c};
  return m;
}

static gmm_ctx *ctx;

static void check(int rc) {
  if (rc != 0) {
    fprintf(stderr, "gmm-harness: %s\n", gmm_ctx_error(ctx));
    exit(1);
  }
}

static double objective(args_t a) {
  double out;
  check(gmm_gmm_objective(ctx, a.alpha, a.mu, a.q, a.l, a.x, a.wgamma, a.wm, &out));
  return out;
}

/* gradient sets *g to the gradient of the objective at a times dr. */
static void gradient(args_t a, double dr, grad_t *g) {
  check(gmm_rev_gmm_objective(ctx, a.alpha, a.mu, a.q, a.l, a.x, a.wgamma, a.wm, dr,
                              &g->alpha, &g->mu, &g->q, &g->l, &g->x, &g->wgamma));
}

/* derivative returns the derivative of the objective at a along dx. */
static double derivative(args_t a, grad_t dx) {
  double out;
  check(gmm_fwd_gmm_objective(ctx, a.alpha, a.mu, a.q, a.l, a.x, a.wgamma, a.wm,
                              dx.alpha, dx.mu, dx.q, dx.l, dx.x, dx.wgamma, &out));
  return out;
}

/* copy_grad copies g out of the context (a reset frees what it made). */
static gmm_vec_f64 copy_vec(gmm_vec_f64 v) {
  gmm_vec_f64 c = {v.size, malloc((size_t)(v.size > 0 ? v.size : 1) * sizeof(double))};
  memcpy(c.data, v.data, (size_t)v.size * sizeof(double));
  return c;
}

static gmm_vec_vec_f64 copy_rows(gmm_vec_vec_f64 m) {
  gmm_vec_vec_f64 c = {m.size, malloc((size_t)(m.size > 0 ? m.size : 1) * sizeof(gmm_vec_f64))};
  for (long i = 0; i < m.size; i++) c.data[i] = copy_vec(m.data[i]);
  return c;
}

static grad_t copy_grad(grad_t g) {
  return (grad_t){copy_vec(g.alpha), copy_rows(g.mu), copy_rows(g.q), copy_rows(g.l), copy_rows(g.x), g.wgamma};
}

/* hvp sets *h to the derivative of the gradient at a along dx (dr = 1,
 * ddr = 0): the Hessian times dx. */
static void hvp(args_t a, grad_t dx, grad_t *h) {
  gmm_fwd_rev_gmm_objective_xr xr = {{a.alpha, a.mu, a.q, a.l, a.x, a.wgamma, a.wm}, 1.0};
  gmm_fwd_rev_gmm_objective_t t = {{dx.alpha, dx.mu, dx.q, dx.l, dx.x, dx.wgamma, {0}}, 0.0};
  gmm_fwd_rev_gmm_objective_out out;
  check(gmm_fwd_rev_gmm_objective(ctx, xr, t, &out));
  *h = (grad_t){out.f0, out.f1, out.f2, out.f3, out.f4, out.f5};
}

/* The parameters differentiated (alpha, mu, q, l), flattened: pointers to
 * each entry of the arguments and of the gradient. */
typedef struct { long n; double **arg, **grad; } params_t;

static void add(params_t *p, gmm_vec_f64 a, gmm_vec_f64 g) {
  for (long i = 0; i < a.size; i++) {
    p->arg[p->n] = &a.data[i];
    p->grad[p->n] = &g.data[i];
    p->n++;
  }
}

static params_t params(args_t a, grad_t g, long total) {
  params_t p = {0, malloc((size_t)total * sizeof(double *)), malloc((size_t)total * sizeof(double *))};
  add(&p, a.alpha, g.alpha);
  for (long k = 0; k < a.mu.size; k++) add(&p, a.mu.data[k], g.mu.data[k]);
  for (long k = 0; k < a.q.size; k++) add(&p, a.q.data[k], g.q.data[k]);
  for (long k = 0; k < a.l.size; k++) add(&p, a.l.data[k], g.l.data[k]);
  return p;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gmm-harness FILE MIN_SECONDS\n");
    return 2;
  }
  double minSeconds = atof(argv[2]);
  FILE *f = fopen(argv[1], "r");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  long d, K, n;
  if (fscanf(f, "%ld %ld %ld", &d, &K, &n) != 3) return 2;
  long nl = d * (d - 1) / 2;
  double *alpha = readn(f, K), *mu = readn(f, K * d);
  double *q = malloc((size_t)(K * d) * sizeof *q), *l = malloc((size_t)(K * nl + 1) * sizeof *l);
  for (long k = 0; k < K; k++) {
    double *row = readn(f, d + nl);
    memcpy(q + k * d, row, (size_t)d * sizeof *q);
    memcpy(l + k * nl, row + d, (size_t)nl * sizeof *l);
    free(row);
  }
  double *x = readn(f, n * d);
  double wgamma;
  long wm;
  if (fscanf(f, "%lf %ld", &wgamma, &wm) != 2) return 2;
  fclose(f);

  args_t a = {{K, alpha}, rows(mu, K, d), rows(q, K, d), rows(l, K, nl), rows(x, n, d), wgamma, wm};
  ctx = gmm_ctx_new();
  double obj = objective(a);
  printf("objective %.17g\n", obj);

  /* The gradient, copied out of the context. */
  grad_t g;
  gradient(a, 1.0, &g);
  long total = K + 2 * K * d + K * nl;
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
  int samples = 12;
  for (int s = 0; s < samples; s++) {
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

  /* The adjoint identity: <[fwd f](x, dx), 1> = <dx, [rev f](x, 1)>. */
  grad_t dx;
  gradient(a, 0.0, &dx); /* zeros of the right shape */
  params_t pd = params(a, dx, total);
  double lhs, rhs = 0, scale = 0;
  for (long i = 0; i < total; i++) {
    double t = sin(1.0 + (double)i * 0.7);
    *pd.grad[i] = t;
    rhs += t * grad[i];
    scale += fabs(t * grad[i]);
  }
  for (long i = 0; i < dx.x.size; i++) memset(dx.x.data[i].data, 0, (size_t)d * sizeof(double));
  dx.wgamma = 0;
  lhs = derivative(a, dx);
  printf("adjoint_error %.3g\n", fabs(lhs - rhs) / (scale > 0 ? scale : 1));

  /* The Hessian along dx against central differences of the gradient
   * along dx (first-order code only), every entry, each relative to
   * itself or where small to the largest entry. */
  grad_t hv, dxh = copy_grad(dx);
  hvp(a, dxh, &hv);
  params_t ph = params(a, hv, total);
  double *hd = malloc((size_t)total * sizeof *hd), *up = malloc((size_t)total * sizeof *up);
  double *arg0 = malloc((size_t)total * sizeof *arg0);
  for (long i = 0; i < total; i++) {
    hd[i] = *ph.grad[i];
    arg0[i] = *p.arg[i];
  }
  /* The step along dx: truncation error grows as the square of the step's
   * length (1.3e-5 at d64 K200 with 1e-6 per entry of a direction of
   * length 720), rounding error as the gradient's size over it. */
  double dxnorm = 0;
  for (long i = 0; i < total; i++) dxnorm += *pd.grad[i] * *pd.grad[i];
  dxnorm = sqrt(dxnorm);
  double hstep = 1e-4 / (dxnorm > 1 ? dxnorm : 1), hmax = 0, hvpErr = 0, hnoise = 1e-15 * gmax / hstep;
  for (long i = 0; i < total; i++) hmax = fabs(hd[i]) > hmax ? fabs(hd[i]) : hmax;
  for (int side = 0; side < 2; side++) {
    for (long i = 0; i < total; i++) *p.arg[i] = arg0[i] + (side == 0 ? hstep : -hstep) * *pd.grad[i];
    grad_t gs;
    gradient(a, 1.0, &gs);
    params_t ps = params(a, gs, total);
    for (long i = 0; i < total; i++) {
      if (side == 0) {
        up[i] = *ps.grad[i];
        continue;
      }
      double fd = (up[i] - *ps.grad[i]) / (2 * hstep);
      double err = fabs(fd - hd[i]) / (fabs(hd[i]) + 1e-4 * hmax + hnoise + 1e-12);
      if (err > hvpErr) hvpErr = err;
    }
    free(ps.arg);
    free(ps.grad);
  }
  for (long i = 0; i < total; i++) *p.arg[i] = arg0[i];
  printf("hvp_error %.3g\n", hvpErr);
  gmm_ctx_reset(ctx);

  double tf, tg, th;
  TIME(tf, minSeconds, { objective(a); gmm_ctx_reset(ctx); });
  TIME(tg, minSeconds, { gradient(a, 1.0, &g); gmm_ctx_reset(ctx); });
  TIME(th, minSeconds, { hvp(a, dxh, &hv); gmm_ctx_reset(ctx); });
  printf("time_objective %.6g\ntime_gradient %.6g\ntime_hvp %.6g\n", tf, tg, th);
  gmm_ctx_free(ctx);
  return 0;
}
