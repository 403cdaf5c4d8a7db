/* The host of FuzzLibrary: it reads requests "op a b c" from stdin, one
 * per line, calls libmodel.so and answers "rc value" on stdout. The
 * vectors and matrices it passes have the sizes a request gives: real
 * memory when 0 <= size <= 4096 elements, else NULL data, so that every
 * request is one a host may make (the library must refuse the bad ones),
 * never a lie about memory the library cannot see. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

enum { MAXREAL = 4096 };

static double buf[MAXREAL];

static model_vec_f64 vec(int64_t n) {
  model_vec_f64 v = {n, n >= 0 && n <= MAXREAL ? buf : NULL};
  return v;
}

int main(void) {
  for (int i = 0; i < MAXREAL; i++) buf[i] = 0.5 * i;
  model_ctx *ctx = model_ctx_new();
  if (ctx == NULL) return 2;
  model_ctx_set_max_bytes(ctx, (size_t)64 << 20);
  int op;
  long long a, b, c;
  while (scanf("%d %lld %lld %lld", &op, &a, &b, &c) == 4) {
    int rc = -1;
    double value = 0;
    model_vec_f64 r;
    switch (op) {
    case 0:
      rc = model_make(ctx, a, &r);
      if (rc == model_OK)
        for (int64_t k = 0; k < r.size; k++) value += r.data[k];
      break;
    case 1:
      rc = model_fill(ctx, a, 2.0, &r);
      if (rc == model_OK)
        for (int64_t k = 0; k < r.size; k++) value += r.data[k];
      break;
    case 2:
      rc = model_pick(ctx, vec(a), b, &value);
      break;
    case 3: {
      int64_t rows = a, cols = b;
      int real = rows >= 0 && cols >= 0 && (cols == 0 || rows <= MAXREAL / cols);
      model_ten2_f64 m = {{rows, cols}, real ? buf : NULL};
      rc = model_pick2(ctx, m, c, c / 2, &value);
      break;
    }
    case 4:
      rc = model_total(ctx, vec(a), &value);
      break;
    case 5:
      rc = model_rev_total(ctx, vec(a), b, &r);
      if (rc == model_OK)
        for (int64_t k = 0; k < r.size; k++) value += r.data[k];
      break;
    case 6:
      rc = model_depth(ctx, a, 1.0, &value);
      break;
    case 7:
      rc = model_sufrev_depth(ctx, a, 1.0, 1.0, &value);
      break;
    }
    printf("%d %.17g\n", rc, value);
    fflush(stdout);
    model_ctx_reset(ctx);
  }
  model_ctx_free(ctx);
  return 0;
}
