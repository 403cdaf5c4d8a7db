/* Timing for the benchmark harnesses: TIME(result, min, body) sets result
 * to the median time per run of body over 9 rounds, each repeating body
 * until it lasts at least min/9 seconds, after a warm-up round. */
#ifndef TIMING_H
#define TIMING_H
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmpDouble(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define TIME(result, min, body)                                  \
  do {                                                           \
    double ts_[9];                                               \
    long reps_ = 1;                                              \
    for (;;) {                                                   \
      double t0_ = now();                                        \
      for (long r_ = 0; r_ < reps_; r_++) { body; }              \
      double dt_ = now() - t0_;                                  \
      if (dt_ * 9 >= (min)) break;                               \
      reps_ *= 2;                                                \
    }                                                            \
    for (int k_ = 0; k_ < 9; k_++) {                             \
      double t0_ = now();                                        \
      for (long r_ = 0; r_ < reps_; r_++) { body; }              \
      ts_[k_] = (now() - t0_) / (double)reps_;                   \
    }                                                            \
    qsort(ts_, 9, sizeof ts_[0], cmpDouble);                     \
    (result) = ts_[4];                                           \
  } while (0)
#endif
