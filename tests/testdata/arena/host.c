/* Calls f and [rev f] of loops.ks on n rows of 64 and prints the memory
 * the context holds after each call, in bytes: "f BYTES" and "rev BYTES";
 * then after a reset ("reset BYTES") and after [rev f] again ("again
 * BYTES"); then after n steps of a fold of a vector of 64 (steps: "steps
 * BYTES") and the state's element 1 ("y1 VALUE"); then the same for
 * steps2 ("steps2 BYTES", "y1 VALUE", and row 1's element 1 of z, "z11
 * VALUE"); then after blocks of n rows ("blocks BYTES") and the last
 * row ("b0 VALUE", "b1 VALUE"). */
#include <stdio.h>
#include <stdlib.h>

#include "loops.h"

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000, d = 64;
  loops_vec_vec_f64 x = {n, malloc((size_t)n * sizeof(loops_vec_f64))};
  double *data = malloc((size_t)(n * d) * sizeof(double));
  double *mu = malloc((size_t)d * sizeof(double));
  if (x.data == NULL || data == NULL || mu == NULL) return 2;
  for (int64_t j = 0; j < d; j++) mu[j] = 0.01 * (double)j;
  for (int64_t i = 0; i < n; i++) {
    x.data[i] = (loops_vec_f64){d, data + i * d};
    for (int64_t j = 0; j < d; j++) data[i * d + j] = 0.001 * (double)((i * 7 + j) % 13);
  }
  loops_vec_f64 m = {d, mu};
  loops_ctx *ctx = loops_ctx_new();
  double y;
  if (loops_f(ctx, x, m, &y) != 0) return 3;
  printf("f %zu\n", loops_ctx_bytes(ctx));
  loops_ctx_free(ctx);
  ctx = loops_ctx_new();
  loops_vec_vec_f64 dx;
  loops_vec_f64 dmu;
  if (loops_rev_f(ctx, x, m, 1.0, &dx, &dmu) != 0) return 4;
  printf("rev %zu\n", loops_ctx_bytes(ctx));
  loops_ctx_reset(ctx);
  printf("reset %zu\n", loops_ctx_bytes(ctx));
  if (loops_rev_f(ctx, x, m, 1.0, &dx, &dmu) != 0) return 5;
  printf("again %zu\n", loops_ctx_bytes(ctx));
  loops_ctx_free(ctx);
  ctx = loops_ctx_new();
  loops_vec_f64 ys;
  if (loops_steps(ctx, m, n, &ys) != 0) return 6;
  printf("steps %zu\n", loops_ctx_bytes(ctx));
  printf("y1 %.17g\n", ys.data[1]);
  loops_ctx_free(ctx);
  ctx = loops_ctx_new();
  loops_steps2_out s2;
  if (loops_steps2(ctx, m, n, &s2) != 0) return 7;
  printf("steps2 %zu\n", loops_ctx_bytes(ctx));
  printf("y1 %.17g\n", s2.f0.data[1]);
  printf("z11 %.17g\n", s2.f1.data[1].data[1]);
  loops_ctx_free(ctx);
  ctx = loops_ctx_new();
  loops_vec_vec_f64 b;
  if (loops_blocks(ctx, m, n, &b) != 0) return 8;
  printf("blocks %zu\n", loops_ctx_bytes(ctx));
  printf("b0 %.17g\nb1 %.17g\n", b.data[n - 1].data[0], b.data[n - 1].data[1]);
  loops_ctx_free(ctx);
  return 0;
}
