/* The counting edef of TestPrimalEvaluations: counted(x) is sin(x) and
   counts its calls; ncount(k) returns the count so far and resets it (k
   only makes each call of ncount distinct, so that no optimiser shares
   two of them). */
#include <math.h>
#include <stdint.h>

static int64_t calls;

double counted(double x) {
  calls++;
  return sin(x);
}

int64_t ncount(int64_t k) {
  (void)k;
  int64_t n = calls;
  calls = 0;
  return n;
}

/* The edefs of TestInactiveTangents: data_term(x) is x*x; its hand-written
   forward and reverse modes call tangent_work(x), 2x, which counts its
   calls; ntangent(k) returns the count so far and resets it. */
static int64_t tangent_calls;

double data_term(double x) { return x * x; }

double tangent_work(double x) {
  tangent_calls++;
  return 2 * x;
}

int64_t ntangent(int64_t k) {
  (void)k;
  int64_t n = tangent_calls;
  tangent_calls = 0;
  return n;
}
