/* Fits y = a exp(-b x) + c to data by gradient descent, with the error
 * and its gradient from the library ksc built from fit.ks:
 *
 *   ksc build fit.ks -o out/libfit.so
 *   cc -std=c11 -Iout host.c -Lout -lfit -Wl,-rpath,"$PWD/out" -lm -o fit-host
 *   ./fit-host
 *
 * It prints what host.py prints. */
#include <math.h>
#include <stdio.h>

#include "fit.h"

enum { N = 50 };

int main(void) {
  double xs[N], ys[N];
  for (int i = 0; i < N; i++) {
    xs[i] = i / 10.0;
    ys[i] = 2.5 * exp(-1.3 * xs[i]) + 0.5 + 0.01 * sin(7.0 * i);
  }
  fit_ctx *ctx = fit_ctx_new();
  if (ctx == NULL) return 1;
  fit_loss_p p = {1.0, 1.0, 0.0}; /* loss's argument p: (a, b, c) */
  const double step = 0.5;
  for (int it = 0; it <= 1000; it++) {
    /* [vrev loss 0]: loss's arguments and the cotangent 1.0 of the
     * error; the results are the error and the gradient with respect to
     * p (argument 0), in ctx's memory. */
    double err;
    fit_vrev_loss_wrt_0_dp g;
    if (fit_vrev_loss_wrt_0(ctx, p, (fit_vec_f64){N, xs}, (fit_vec_f64){N, ys}, 1.0, &err, &g) != fit_OK) {
      fprintf(stderr, "%s\n", fit_ctx_error(ctx));
      fit_ctx_free(ctx);
      return 1;
    }
    if (it % 250 == 0) printf("iteration %4d: error %.6f\n", it, err);
    p.f0 -= step * g.f0;
    p.f1 -= step * g.f1;
    p.f2 -= step * g.f2;
    fit_ctx_reset(ctx); /* release the result */
  }
  printf("a = %.3f, b = %.3f, c = %.3f\n", p.f0, p.f1, p.f2);
  fit_ctx_free(ctx);
  return 0;
}
