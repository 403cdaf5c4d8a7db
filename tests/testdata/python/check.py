"""Checks the Python bindings of testdata/python/model.ks: run as
check.py DIR, with DIR holding libmodel.so, model.json and model.py.
Prints "ok numpy" or "ok lists" (which representation of arrays the
module used) or fails with an assertion."""

import sys
import threading

sys.path.insert(0, sys.argv[1])
import model  # noqa: E402

np = model._np


def arr(x):
    """x as a plain list, whatever the module returned."""
    return x.tolist() if np is not None else x


xs, ys = [0.0, 1.0, 2.0], [1.0, 3.0, 5.0]
# loss(1, 0) = 1 + 4 + 9; its gradient by hand: sum 2 r x, sum 2 r, -2 r, 2 a r.
assert model.loss(2.0, 1.0, xs, ys) == 0.0
assert model.loss(1.0, 0.0, xs, ys) == 14.0
ga, gb, gx, gy = model.rev_loss(1.0, 0.0, xs, ys, 1.0)
assert (ga, gb, arr(gx), arr(gy)) == (-16.0, -12.0, [-2.0, -4.0, -6.0], [2.0, 4.0, 6.0]), (ga, gb, gx, gy)
v, ga2, gb2, gx2, gy2 = model.vrev_loss(1.0, 0.0, xs, ys, 2.0)
assert (v, ga2, gb2, arr(gx2)) == (14.0, -32.0, -24.0, [-4.0, -8.0, -12.0])

# Split reverse mode: a BOG kept until reset, used twice.
v, bog = model.suffwdpass_loss(1.0, 0.0, xs, ys)
assert v == 14.0 and isinstance(bog, model.Opaque)
assert model.sufrevpass_loss(1.0, bog)[0] == -16.0
assert model.sufrevpass_loss(0.5, bog)[0] == -8.0
# One result (an Integer argument has no gradient) is returned alone.
assert arr(model.rev_pick([1.0, 2.0], 1, 3.0)) == [0.0, 3.0]
model.reset()

m = model.scale(2.0, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
assert arr(m) == [[2.0, 4.0], [6.0, 8.0], [10.0, 12.0]], m
assert [arr(r) for r in model.rows(3)] == [[], [1.0], [2.0, 2.0]]
assert model.both(True, 41, "héllo") == (False, 42, "héllo")
assert arr(model.counts(4)) == [0, 1, 4, 9]
assert arr(model.counts(0)) == []

# Errors: the library's, with its message; wrong arguments.
try:
    model.pick([1.0, 2.0], 5)
    raise AssertionError("no error for an index out of range")
except model.KscError as e:
    assert e.code == 1 and "model.ks:15" in str(e) and "out of range" in str(e), str(e)
for bad in [(1.0, 2.0), (1.0, 2.0, [[1.0]], [1.0]), (1.0, 2.0, xs)]:
    try:
        model.loss(*bad)
        raise AssertionError("no error for %r" % (bad,))
    except (TypeError, ValueError):
        pass

# numpy arrays in, used in place (no copy when C-contiguous float64).
if np is not None:
    a = np.arange(4.0)
    assert model.loss(1.0, 0.0, a, a) == 0.0
    assert model.loss(1.0, 0.0, a[::2], a[::2] + 1) == 2.0  # strided: copied
    assert model.scale(1.0, np.ones((2, 3))).shape == (2, 3)
    # A 2-D array as a Vec of Vecs: its rows in place, strided or of
    # integers converted, the same sums as lists of rows.
    m = np.arange(12.0).reshape(4, 3)
    w = [1.0, -1.0, 2.0, 0.5]
    want = sum(wi * sum(r) for wi, r in zip(w, m.tolist()))
    assert model.rowdot(m, w) == want
    assert model.rowdot(m.tolist(), w) == want
    assert model.rowdot(np.asfortranarray(m), w) == want
    assert model.rowdot(m.astype(np.int64), w) == want

# Threads: a context each.
out = []


def work(k):
    for _ in range(50):
        r = model.vrev_loss(float(k), 0.0, xs, ys, 1.0)
    out.append((k, r[0]))


ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert sorted(out) == [(0, 35.0), (1, 14.0), (2, 3.0), (3, 2.0)], out

print("ok", "numpy" if np is not None else "lists")
