"""The GMM objective (bench/gmm.ks) and its gradient with respect to the
parameters, over points split into shards mapped over the workers of a
Dask cluster, each calling the library ksc built, through its Python
bindings, on its shard; the client combines the shards' values and
gradients in a fixed order (see docs/scaling.md):

    ksc build ../../bench/gmm.ks ../mpi/shard.ks --python -o out/libgmmshard.so
    python3 gmm_dask.py out D K N SHARDS... [--workers W] [--repeats R]

D dimensions, K components, N points in all (point i is the same whatever
the shards, and the same as examples/mpi's), for each SHARDS (a power of
two) in turn, on a LocalCluster of W worker processes (default 2), each
evaluation timed R times (default 1). For each it prints the shards, the
objective, the gradient (all of it if it has at most 200 elements, else its
sum of absolute values) with 17 digits, and the fastest evaluation's
seconds: what examples/mpi's host prints, the same bits for the same
number of shards. On a cluster, give the scheduler's address instead of
--workers (--scheduler tcp://HOST:8786); every worker must see the
library's directory at the same path.
"""

import argparse
import sys
import time

import numpy as np


def unit(i):
    """Numbers in [0, 1) determined by the integers i (splitmix64), as
    examples/mpi/host.c computes them."""
    z = np.asarray(i, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


def parameters(d, k):
    tri = d * (d - 1) // 2
    alpha = unit(1000000 + np.arange(k)) - 0.5
    mu = unit(2000000 + np.arange(k * d)).reshape(k, d)
    q = (0.2 * (unit(3000000 + np.arange(k * d)) - 0.5)).reshape(k, d)
    l = (0.2 * (unit(4000000 + np.arange(k * tri)) - 0.5)).reshape(k, tri)
    return alpha, mu, q, l


def points(first, last, d):
    """Points first .. last-1, one row each."""
    return (2 * unit(10000000 + np.arange(first * d, last * d)) - 1).reshape(last - first, d)


def flatten(value, *grads):
    return np.concatenate([[value]] + [np.ravel(np.asarray(g, dtype=np.float64)) for g in grads])


def shard_points(d, n, shards, s):
    """Shard s of the n points: made once, on a worker, and kept there."""
    return points(s * n // shards, (s + 1) * n // shards, d)


def shard_gradient(libdir, alpha, mu, q, l, x):
    """The value and gradient of gmm_points on the points x, flattened:
    runs on the worker that holds x. The library's memory is released
    after the call."""
    if libdir not in sys.path:
        sys.path.insert(0, libdir)
    import gmmshard

    v, da, dmu, dq, dl = gmmshard.vrev_gmm_points_wrt_0_1_2_3(alpha, mu, q, l, x, 1.0)
    return flatten(v, da, dmu, dq, dl)


def combine(parts):
    """Sums the shards' vectors by a balanced binary tree in shard order,
    the left operand first: the order examples/mpi uses."""
    parts = list(parts)
    step = 1
    while step < len(parts):
        for s in range(0, len(parts) - step, 2 * step):
            parts[s] = parts[s] + parts[s + step]
        step *= 2
    return parts[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("libdir")
    ap.add_argument("d", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("shards", type=int, nargs="+")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--scheduler", help="a running cluster's scheduler, instead of a LocalCluster")
    args = ap.parse_args()
    for s in args.shards:
        if s < 1 or s & (s - 1) or args.n < s:
            ap.error("SHARDS must be powers of two, at most N")
    sys.path.insert(0, args.libdir)
    import gmmshard
    from dask.distributed import Client, LocalCluster

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    d, k, n = args.d, args.k, args.n
    alpha, mu, q, l = parameters(d, k)
    for shards in args.shards:
        # The points stay on the workers; each evaluation sends the
        # parameters and gets the shards' gradients back.
        xs = [client.submit(shard_points, d, n, shards, s, pure=False) for s in range(shards)]
        client.gather(xs)  # made before the timing
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            futures = [client.submit(shard_gradient, args.libdir, alpha, mu, q, l, x, pure=False) for x in xs]
            total = combine(client.gather(futures))
            # The prior, once, here.
            v, dq, dl = gmmshard.vrev_wishart_prior_wrt_0_1(q, l, 1.0, 0, 1.0)
            total[0] += v
            pq = 1 + k + k * d
            total[pq:pq + k * d] += np.ravel(dq)
            total[pq + k * d:] += np.ravel(dl)
            best = min(best, time.perf_counter() - t0)
        print("shards %d" % shards)
        print("objective %.17g" % total[0])
        if len(total) - 1 <= 200:
            for g in total[1:]:
                print("g %.17g" % g)
        else:
            print("gradient |g|_1 %.17g (%d elements)" % (np.sum(np.abs(total[1:])), len(total) - 1))
        print("seconds %.6f" % best)
        sys.stdout.flush()
    client.close()


if __name__ == "__main__":
    main()
