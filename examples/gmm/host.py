"""Fits a mixture of two Gaussians to points in the plane by gradient
descent, with the negative log-likelihood and its gradient from the
library ksc built from gmm.ks:

    ksc build --python gmm.ks -o out/libgmm.so
    python3 host.py out

It prints what host.c and gohost print. Works with numpy or without it."""

import math
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "out")
import gmm  # noqa: E402  (the module ksc wrote beside libgmm.so)

# 200 points around (-2, 0.5) and (1.5, 2), with deterministic scatter.
centres = [(-2.0, 0.5), (1.5, 2.0)]
x = [[centres[i % 2][0] + 0.6 * math.sin(1.7 * i + 0.3),
      centres[i % 2][1] + 0.6 * math.cos(2.3 * i)] for i in range(200)]

alpha, mu, s = [0.0, 0.0], [[-1.0, -1.0], [1.0, 1.0]], [0.0, 0.0]
step = 0.5
for it in range(301):
    err, dalpha, dmu, ds = gmm.vrev_nll_wrt_0_1_2(alpha, mu, s, x, 1.0)
    if it % 100 == 0:
        print("iteration %3d: nll %.6f" % (it, err))
    alpha = [a - step * g for a, g in zip(alpha, dalpha)]
    mu = [[m - step * g for m, g in zip(row, grow)] for row, grow in zip(mu, dmu)]
    s = [v - step * g for v, g in zip(s, ds)]
for j in range(2):
    print("component %d: weight %.3f, mean (%.3f, %.3f), sd %.3f"
          % (j, math.exp(alpha[j]) / sum(math.exp(a) for a in alpha), mu[j][0], mu[j][1], math.exp(s[j])))
