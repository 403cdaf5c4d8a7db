/* A host of a library whose names collide with C's and the library's
 * own (model.ks): it compiles, links and runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

/* The edefs of model.ks that the C library does not define (malloc, isnan
 * and sin are the C library's own: a model calling them so gets those). */
double ks_alloc(double x) { return 10 * x; }
double ksu_twice(double x) { return 100 * x; }

int main(void) {
  int failures = 0;
  model_ctx *ctx = model_ctx_new();
  double y = 0;
  /* The C library's isnan and sin, the host's ks_alloc and ksu_twice.
   * (calls_malloc would call the real malloc with a double, as model.ks
   * asks: it is only compiled.) */
  if (model_calls(ctx, NAN, &y) != model_OK || y != 0.0) failures++;
  if (model_calls(ctx, 1.0, &y) != model_OK || y != sin(1.0) + 10.0 + 200.0) failures++;
  if (model_ctx_new_2(ctx, 1.0, &y) != model_OK || y != 2.0) failures++;
  if (model_OK_2(ctx, 1.0, &y) != model_OK || y != 3.0) failures++;
  if (model_ctx_set_max_stack_2(ctx, 1.0, &y) != model_OK || y != 4.0) failures++;
  if (model_free(ctx, 1.0, &y) != model_OK || y != 5.0) failures++;
  int64_t n = 0;
  if (model_int(ctx, 1, &n) != model_OK || n != 6) failures++;
  model_ctx_free(ctx);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
