/* A host program that links libmodel.so built by ksc and checks it. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "host.c:%d: check failed: %s\n", __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

/* The edef callback of model.ks: it calls the library with cb_ctx and
 * keeps the code it got. */
static model_ctx *cb_ctx;
static int cb_rc = -1;
static char cb_err[256];

double callback(double x) {
  double r = 0;
  model_vec_f64 v = {1, &x};
  cb_rc = model_sqnorm(cb_ctx, v, &r);
  snprintf(cb_err, sizeof cb_err, "%s", model_ctx_error(cb_ctx));
  return x;
}

/* deep runs a recursion of depth 10^6 on a thread of its own, whose
 * stack (512 MiB) is large enough, with the context's limit raised. */
static void *deep(void *arg) {
  model_ctx *ctx = arg;
  CHECK(model_ctx_set_max_stack(ctx, (size_t)500 << 20) == model_OK);
  double d = 0;
  CHECK(model_depth(ctx, 1000000, 1.0, &d) == model_OK && d == 1000001.0);
  double dx = 0;
  CHECK(model_sufrev_depth(ctx, 1000000, 1.0, 1.0, &dx) == model_OK && dx == 1000001.0);
  return NULL;
}

int main(void) {
  model_ctx *ctx = model_ctx_new();
  CHECK(ctx != NULL);

  double data[3] = {1.0, 2.0, 2.0};
  model_vec_f64 v = {3, data};

  double n2 = 0;
  CHECK(model_sqnorm(ctx, v, &n2) == model_OK);
  CHECK(n2 == 9.0);

  model_tup2_vec_f64_f64 s;
  CHECK(model_scale(ctx, 2.0, v, &s) == model_OK);
  CHECK(s.f0.size == 3 && s.f0.data[0] == 2.0 && s.f0.data[2] == 4.0);
  CHECK(s.f1 == 3.0);

  /* The dense Jacobian: row-major, a row per Float of the result. */
  model_ten2_f64 J;
  CHECK(model_jac_scale(ctx, 2.0, v, &J) == model_OK);
  CHECK(J.size[0] == 4 && J.size[1] == 4);
  static const double want[16] = {1, 2, 0, 0, 2, 0, 2, 0, 2, 0, 0, 2, 0, 1.0 / 3, 2.0 / 3, 2.0 / 3};
  for (int k = 0; k < 16; k++) CHECK(fabs(J.data[k] - want[k]) < 1e-15);
  model_vec_f64 nullv = {2, NULL};
  CHECK(model_jac_scale(ctx, 2.0, nullv, &J) == model_ERR_RUNTIME);

  /* The same Jacobian in CSR form: row offsets, columns, values. */
  model_tup3_vec_i64_vec_i64_vec_f64 S;
  CHECK(model_sparsejac_scale(ctx, 2.0, v, &S) == model_OK);
  static const int64_t soff[5] = {0, 2, 4, 6, 9}, scol[9] = {0, 1, 0, 2, 0, 3, 1, 2, 3};
  CHECK(S.f0.size == 5 && S.f1.size == 9 && S.f2.size == 9);
  for (int k = 0; k < 5; k++) CHECK(S.f0.data[k] == soff[k]);
  for (int k = 0; k < 9; k++) CHECK(S.f1.data[k] == scol[k] && fabs(S.f2.data[k] - want[4 * (k < 2 ? 0 : k < 4 ? 1 : k < 6 ? 2 : 3) + scol[k]]) < 1e-15);
  CHECK(model_sparsejac_scale(ctx, 2.0, nullv, &S) == model_ERR_RUNTIME);
  CHECK(data[0] == 1.0 && data[2] == 2.0); /* inputs are not modified */

  double r0[2] = {1, 2}, r1[1] = {5};
  model_vec_f64 rows[2] = {{2, r0}, {1, r1}};
  model_vec_vec_f64 m = {2, rows};
  model_vec_f64 sums;
  CHECK(model_rowsums(ctx, m, &sums) == model_OK);
  CHECK(sums.size == 2 && sums.data[0] == 3.0 && sums.data[1] == 5.0);

  double l = 0;
  CHECK(model_safelog(ctx, 1.0, &l) == model_OK && l == 0.0);

  /* The error path: a failed assert returns a code and a message naming
   * the .ks line, and the host carries on. */
  l = 42;
  int rc = model_safelog(ctx, -1.0, &l);
  CHECK(rc == model_ERR_RUNTIME);
  CHECK(l == 42); /* the result is not written on error */
  CHECK(strstr(model_ctx_error(ctx), "model.ks:18:") != NULL);
  CHECK(strstr(model_ctx_error(ctx), "assertion failed") != NULL);
  printf("error: %s\n", model_ctx_error(ctx));

  double x = 0;
  rc = model_nth(ctx, v, 7, &x);
  CHECK(rc == model_ERR_RUNTIME);
  CHECK(strstr(model_ctx_error(ctx), "index 7 out of range for size 3") != NULL);

  /* After an error the context still works. */
  CHECK(model_sqnorm(ctx, v, &n2) == model_OK && n2 == 9.0);

  double t = 0;
  int64_t ti = 0;
  CHECK(model_twice__f64(ctx, 1.5, &t) == model_OK && t == 3.0);
  CHECK(model_twice__i64(ctx, 21, &ti) == model_OK && ti == 42);

  /* Split reverse mode: the forward pass returns the value and the BOG
   * (an opaque pointer in the header), the reverse pass takes it. */
  double value;
  model_nt18_bog_sqnorm_vec_f64 bog;
  CHECK(model_suffwdpass_sqnorm(ctx, v, &value, &bog) == model_OK);
  CHECK(value == 9.0);
  model_vec_f64 grad, grad2;
  CHECK(model_sufrevpass_sqnorm(ctx, 0.5, bog, &grad) == model_OK);
  CHECK(grad.size == 3 && grad.data[0] == 1.0 && grad.data[1] == 2.0 && grad.data[2] == 2.0);
  CHECK(model_rev_sqnorm(ctx, v, 0.5, &grad2) == model_OK);
  CHECK(grad2.size == 3 && grad2.data[1] == grad.data[1]);

  /* Results survive until reset; many calls do not grow memory without bound. */
  for (int i = 0; i < 1000; i++) {
    CHECK(model_scale(ctx, 1.0, v, &s) == model_OK);
    model_ctx_reset(ctx);
  }

  /* Two contexts are independent. */
  model_ctx *ctx2 = model_ctx_new();
  CHECK(model_safelog(ctx2, 0.0, &l) == model_ERR_RUNTIME);
  CHECK(model_sqnorm(ctx, v, &n2) == model_OK && strcmp(model_ctx_error(ctx), "") == 0);
  model_ctx_free(ctx2);

  /* Malformed arguments are an error naming the argument, before any code
   * relies on them: a negative size (which would defeat index checks), a
   * size with no data, a bad row of a matrix, a NULL BOG. */
  model_vec_f64 neg = {-1, data};
  x = 0;
  CHECK(model_nth(ctx, neg, 7, &x) == model_ERR_RUNTIME);
  CHECK(strstr(model_ctx_error(ctx), "argument v: negative size -1") != NULL);
  model_vec_f64 nodata = {3, NULL};
  CHECK(model_sqnorm(ctx, nodata, &n2) == model_ERR_RUNTIME);
  CHECK(strstr(model_ctx_error(ctx), "argument v: 3 elements and NULL data") != NULL);
  model_vec_f64 badrows[2] = {{2, r0}, {-5, r1}};
  model_vec_vec_f64 bad = {2, badrows};
  CHECK(model_rowsums(ctx, bad, &sums) == model_ERR_RUNTIME);
  CHECK(strstr(model_ctx_error(ctx), "argument m: negative size -5") != NULL);
  CHECK(model_sufrevpass_sqnorm(ctx, 0.5, NULL, &grad) == model_ERR_RUNTIME);
  CHECK(strstr(model_ctx_error(ctx), "a NULL BOG") != NULL);
  printf("error: %s\n", model_ctx_error(ctx));

  /* A NULL context or result pointer is an error code, not a crash. */
  CHECK(model_sqnorm(NULL, v, &n2) == model_ERR_USAGE);
  CHECK(strcmp(model_ctx_error(NULL), "the context is NULL") == 0);
  CHECK(model_sqnorm(ctx, v, NULL) == model_ERR_USAGE);
  CHECK(strstr(model_ctx_error(ctx), "result pointer is NULL") != NULL);
  model_ctx_reset(NULL);
  model_ctx_free(NULL);
  CHECK(model_ctx_bytes(NULL) == 0);

  /* An edef calling back into the library: with the context of the call
   * that is running, refused; with another context, it works. */
  double y = 0;
  cb_ctx = ctx;
  CHECK(model_via_callback(ctx, 2.0, &y) == model_OK && y == 3.0);
  CHECK(cb_rc == model_ERR_USAGE);
  CHECK(strstr(cb_err, "in use") != NULL);
  CHECK(strcmp(model_ctx_error(ctx), "") == 0);
  model_ctx *other = model_ctx_new();
  cb_ctx = other;
  CHECK(model_via_callback(ctx, 2.0, &y) == model_OK && y == 3.0);
  CHECK(cb_rc == model_OK);
  model_ctx_free(other);

  /* A recursion deeper than the context allows is an error code, not a
   * crash, and the context keeps working. */
  double d = 0;
  CHECK(model_depth(ctx, 1000, 1.0, &d) == model_OK && d == 1001.0);
  CHECK(model_depth(ctx, 100000000, 1.0, &d) == model_ERR_MEMORY);
  CHECK(strstr(model_ctx_error(ctx), "recursion too deep in depth") != NULL);
  CHECK(strstr(model_ctx_error(ctx), "model.ks:") != NULL);
  double dx = 0;
  CHECK(model_sufrev_depth(ctx, 100000000, 1.0, 1.0, &dx) == model_ERR_MEMORY);
  CHECK(model_depth(ctx, 1000, 1.0, &d) == model_OK && d == 1001.0);
  CHECK(model_ctx_set_max_stack(NULL, 1) == model_ERR_USAGE);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  CHECK(pthread_attr_setstacksize(&attr, (size_t)512 << 20) == 0);
  pthread_t th;
  if (pthread_create(&th, &attr, deep, ctx) == 0) {
    pthread_join(th, NULL);
  } else {
    CHECK(!"pthread_create");
  }
  pthread_attr_destroy(&attr);

  /* A memory limit: a call that would need more fails with ERR_MEMORY,
   * and the context keeps working. */
  model_ctx_reset(ctx);
  CHECK(model_ctx_set_max_bytes(ctx, (size_t)4 << 20) == model_OK);
  enum { BIG = 1000000 };
  double *big = calloc(BIG, sizeof *big);
  model_vec_f64 bv = {BIG, big};
  CHECK(model_scale(ctx, 2.0, bv, &s) == model_ERR_MEMORY);
  CHECK(strstr(model_ctx_error(ctx), "memory limit reached") != NULL);
  CHECK(model_scale(ctx, 2.0, v, &s) == model_OK && s.f0.data[2] == 4.0);
  CHECK(model_ctx_set_max_bytes(ctx, 0) == model_OK);
  CHECK(model_scale(ctx, 2.0, bv, &s) == model_OK && s.f0.size == BIG);
  CHECK(model_ctx_set_max_bytes(NULL, 1) == model_ERR_USAGE);
  free(big);

  model_ctx_free(ctx);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
