"""Fits y = a exp(-b x) + c to data by gradient descent, with the error
and its gradient from the library ksc built from fit.ks:

    ksc build --python fit.ks -o out/libfit.so
    python3 host.py out

Works with numpy (arrays in and out) or without it (lists)."""

import math
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "out")
import fit  # noqa: E402  (the module ksc wrote beside libfit.so)

# Data from a = 2.5, b = 1.3, c = 0.5, with a little deterministic noise.
xs = [i / 10 for i in range(50)]
ys = [2.5 * math.exp(-1.3 * x) + 0.5 + 0.01 * math.sin(7 * i) for i, x in enumerate(xs)]

p = (1.0, 1.0, 0.0)
step = 0.5
for it in range(1001):
    err, grad = fit.vrev_loss_wrt_0(p, xs, ys, 1.0)
    if it % 250 == 0:
        print("iteration %4d: error %.6f" % (it, err))
    p = tuple(v - step * g for v, g in zip(p, grad))
print("a = %.3f, b = %.3f, c = %.3f" % p)
