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
