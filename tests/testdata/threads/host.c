/* Four threads call libmodel.so at once, each with a context of its own
 * (the library's rule): TestThreads builds both with -fsanitize=thread,
 * which reports any data race between them. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

#define THREADS 4

typedef struct {
  int id;
  int failures;
} job;

#define CHECK(j, cond)                                                               \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "thread %d: host.c:%d: check failed: %s\n", (j)->id, __LINE__, #cond); \
      (j)->failures++;                                                               \
    }                                                                                \
  } while (0)

static void *work(void *arg) {
  job *j = arg;
  model_ctx *ctx = model_ctx_new();
  if (ctx == NULL) {
    j->failures++;
    return NULL;
  }
  double data[100];
  for (int i = 0; i < 100; i++) data[i] = j->id + i * 0.01;
  model_vec_f64 v = {100, data};
  for (int iter = 0; iter < 200; iter++) {
    double n2 = 0;
    CHECK(j, model_sqnorm(ctx, v, &n2) == model_OK);
    model_vec_f64 g;
    CHECK(j, model_rev_sqnorm(ctx, v, 1.0, &g) == model_OK && g.size == 100 && g.data[3] == 2 * data[3]);
    double d = 0;
    CHECK(j, model_depth(ctx, 100 + j->id, 1.0, &d) == model_OK && d == 101 + j->id);
    double dx = 0;
    CHECK(j, model_sufrev_depth(ctx, 100, 1.0, 1.0, &dx) == model_OK && dx == 101.0);
    CHECK(j, model_depth(ctx, -1, 1.0, &d) == model_ERR_RUNTIME);
    CHECK(j, strstr(model_ctx_error(ctx), "assertion failed") != NULL);
    model_ctx_reset(ctx);
  }
  model_ctx_free(ctx);
  return NULL;
}

int main(void) {
  pthread_t th[THREADS];
  job jobs[THREADS];
  for (int t = 0; t < THREADS; t++) {
    jobs[t] = (job){t, 0};
    if (pthread_create(&th[t], NULL, work, &jobs[t]) != 0) return 2;
  }
  int failures = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    failures += jobs[t].failures;
  }
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
