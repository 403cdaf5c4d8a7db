/* Fits a mixture of two Gaussians to points in the plane by gradient
 * descent, with the negative log-likelihood and its gradient from the
 * library ksc built from gmm.ks:
 *
 *   ksc build gmm.ks -o out/libgmm.so
 *   cc -std=c11 -Iout host.c -Lout -lgmm -Wl,-rpath,"$PWD/out" -lm -o gmm-host
 *   ./gmm-host
 *
 * It prints what host.py prints. */
#include <math.h>
#include <stdio.h>

#include "gmm.h"

enum { N = 200, K = 2, D = 2 };

int main(void) {
  /* 200 points around (-2, 0.5) and (1.5, 2), with deterministic scatter. */
  static const double centres[K][D] = {{-2.0, 0.5}, {1.5, 2.0}};
  static double xdata[N][D];
  gmm_vec_f64 xrows[N];
  for (int i = 0; i < N; i++) {
    xdata[i][0] = centres[i % 2][0] + 0.6 * sin(1.7 * i + 0.3);
    xdata[i][1] = centres[i % 2][1] + 0.6 * cos(2.3 * i);
    xrows[i] = (gmm_vec_f64){D, xdata[i]};
  }
  gmm_vec_vec_f64 x = {N, xrows};

  double alpha[K] = {0, 0}, mu[K][D] = {{-1, -1}, {1, 1}}, s[K] = {0, 0};
  gmm_vec_f64 murows[K] = {{D, mu[0]}, {D, mu[1]}};
  gmm_ctx *ctx = gmm_ctx_new();
  if (ctx == NULL) return 1;
  const double step = 0.5;
  for (int it = 0; it <= 300; it++) {
    /* [vrev nll 0 1 2]: the value, and the gradient with respect to
     * alpha, mu and s, in ctx's memory until the reset. */
    double nll;
    gmm_vec_f64 dalpha, ds;
    gmm_vec_vec_f64 dmu;
    if (gmm_vrev_nll_wrt_0_1_2(ctx, (gmm_vec_f64){K, alpha}, (gmm_vec_vec_f64){K, murows},
                               (gmm_vec_f64){K, s}, x, 1.0, &nll, &dalpha, &dmu, &ds) != gmm_OK) {
      fprintf(stderr, "%s\n", gmm_ctx_error(ctx));
      gmm_ctx_free(ctx);
      return 1;
    }
    if (it % 100 == 0) printf("iteration %3d: nll %.6f\n", it, nll);
    for (int j = 0; j < K; j++) {
      alpha[j] -= step * dalpha.data[j];
      s[j] -= step * ds.data[j];
      for (int e = 0; e < D; e++) mu[j][e] -= step * dmu.data[j].data[e];
    }
    gmm_ctx_reset(ctx);
  }
  double total = exp(alpha[0]) + exp(alpha[1]);
  for (int j = 0; j < K; j++)
    printf("component %d: weight %.3f, mean (%.3f, %.3f), sd %.3f\n", j, exp(alpha[j]) / total, mu[j][0], mu[j][1],
           exp(s[j]));
  gmm_ctx_free(ctx);
  return 0;
}
