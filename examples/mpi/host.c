/* The GMM objective (bench/gmm.ks) and its gradient with respect to the
 * parameters, over points split across MPI ranks: each rank generates
 * and holds only its shard of the points, calls the library ksc built
 * from ../../bench/gmm.ks and shard.ks on it, and the ranks combine their
 * values and gradients in a fixed order, so that the result depends on
 * the number of shards only (see docs/scaling.md):
 *
 *   ksc build ../../bench/gmm.ks shard.ks -o out/libgmmshard.so
 *   mpicc -std=c11 -O2 -Iout host.c -Lout -lgmmshard -Wl,-rpath,"$PWD/out" -lm -o gmm-mpi
 *   mpirun -np 2 ./gmm-mpi D K N [SUB [REPEATS]]
 *
 * D dimensions, K components, N points in all (point i is the same
 * whatever the number of ranks), SUB shards per rank (default 1; ranks
 * and SUB powers of two), REPEATS timed evaluations (default 1). Rank 0
 * prints the number of shards, the objective, the gradient (all of it if
 * it has at most 200 elements, else its sum of absolute values) with 17
 * digits, and the fastest evaluation's seconds. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmmshard.h"

/* unit returns a number in [0, 1) determined by i (splitmix64). */
static double unit(uint64_t i) {
  uint64_t z = i * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

/* A matrix as rows, in one block, as the library takes it. */
typedef struct {
  gmmshard_vec_vec_f64 m;
  double *data;
} rows;

static rows make_rows(int64_t n, int64_t d) {
  rows r = {{n, malloc((size_t)(n > 0 ? n : 1) * sizeof(gmmshard_vec_f64))},
            malloc((size_t)(n * d > 0 ? n * d : 1) * sizeof(double))};
  if (r.m.data == NULL || r.data == NULL) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < n; i++) r.m.data[i] = (gmmshard_vec_f64){d, r.data + i * d};
  return r;
}

/* The parameters and a shard's gradient, flattened: value, alpha, mu, q, l. */
typedef struct {
  int64_t d, k, tri, size;
} layout;

static void flatten(layout L, double value, gmmshard_vec_f64 da, gmmshard_vec_vec_f64 dmu, gmmshard_vec_vec_f64 dq,
                    gmmshard_vec_vec_f64 dl, double *out) {
  double *p = out;
  *p++ = value;
  for (int64_t j = 0; j < L.k; j++) *p++ = da.data[j];
  for (int64_t j = 0; j < L.k; j++)
    for (int64_t e = 0; e < L.d; e++) *p++ = dmu.data[j].data[e];
  for (int64_t j = 0; j < L.k; j++)
    for (int64_t e = 0; e < L.d; e++) *p++ = dq.data[j].data[e];
  for (int64_t j = 0; j < L.k; j++)
    for (int64_t e = 0; e < L.tri; e++) *p++ = dl.data[j].data[e];
}

/* add adds b into a, element by element: a is the left operand. */
static void add(double *a, const double *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) a[i] = a[i] + b[i];
}

static void fail(gmmshard_ctx *ctx) {
  fprintf(stderr, "gmm-mpi: %s\n", gmmshard_ctx_error(ctx));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 4) {
    if (rank == 0) fprintf(stderr, "usage: gmm-mpi D K N [SUB [REPEATS]]\n");
    MPI_Finalize();
    return 2;
  }
  int64_t d = atoll(argv[1]), k = atoll(argv[2]), n = atoll(argv[3]);
  int sub = argc > 4 ? atoi(argv[4]) : 1, repeats = argc > 5 ? atoi(argv[5]) : 1;
  int shards = ranks * sub;
  if (d < 1 || k < 1 || sub < 1 || repeats < 1 || n < shards || (ranks & (ranks - 1)) || (sub & (sub - 1))) {
    if (rank == 0) fprintf(stderr, "gmm-mpi: need D, K >= 1, N >= shards, ranks and SUB powers of two\n");
    MPI_Finalize();
    return 2;
  }
  layout L = {d, k, d * (d - 1) / 2, 0};
  L.size = 1 + k + 2 * k * d + k * L.tri;

  /* The parameters, the same on every rank. */
  double *alpha = malloc((size_t)k * sizeof(double));
  rows mu = make_rows(k, d), q = make_rows(k, d), l = make_rows(k, L.tri);
  if (alpha == NULL) return 1;
  for (int64_t j = 0; j < k; j++) {
    alpha[j] = unit(1000000 + (uint64_t)j) - 0.5;
    for (int64_t e = 0; e < d; e++) {
      mu.data[j * d + e] = unit(2000000 + (uint64_t)(j * d + e));
      q.data[j * d + e] = 0.2 * (unit(3000000 + (uint64_t)(j * d + e)) - 0.5);
    }
    for (int64_t e = 0; e < L.tri; e++) l.data[j * L.tri + e] = 0.2 * (unit(4000000 + (uint64_t)(j * L.tri + e)) - 0.5);
  }
  /* This rank's points: shard s (of shards) is points [s n / shards,
   * (s+1) n / shards); this rank holds shards rank*sub .. rank*sub+sub-1. */
  int64_t first = (int64_t)rank * sub * n / shards, last = (int64_t)(rank + 1) * sub * n / shards;
  rows x = make_rows(last - first, d);
  for (int64_t i = first; i < last; i++)
    for (int64_t e = 0; e < d; e++) x.data[(i - first) * d + e] = 2 * unit(10000000 + (uint64_t)(i * d + e)) - 1;

  gmmshard_ctx *ctx = gmmshard_ctx_new();
  double *parts = malloc((size_t)(sub * L.size) * sizeof(double));
  double *recv = malloc((size_t)L.size * sizeof(double));
  if (ctx == NULL || parts == NULL || recv == NULL) return 1;
  double best = INFINITY;
  for (int r = 0; r < repeats; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    /* Each shard: value and gradient from the library. */
    for (int s = 0; s < sub; s++) {
      int64_t a = ((int64_t)rank * sub + s) * n / shards - first, b = ((int64_t)rank * sub + s + 1) * n / shards - first;
      gmmshard_vec_vec_f64 xs = {b - a, x.m.data + a}; /* a view of the shard's rows, not a copy */
      double v;
      gmmshard_vec_f64 da;
      gmmshard_vec_vec_f64 dmu, dq, dl;
      if (gmmshard_vrev_gmm_points_wrt_0_1_2_3(ctx, (gmmshard_vec_f64){k, alpha}, mu.m, q.m, l.m, xs, 1.0, &v, &da, &dmu,
                                                &dq, &dl) != gmmshard_OK)
        fail(ctx);
      flatten(L, v, da, dmu, dq, dl, parts + s * L.size);
      gmmshard_ctx_reset(ctx);
    }
    /* Shards combined by a balanced binary tree in shard order, first
     * within the rank, then across ranks (rank r + step into rank r): the
     * same tree for the same number of shards, however they are spread. */
    for (int step = 1; step < sub; step *= 2)
      for (int s = 0; s + step < sub; s += 2 * step) add(parts + s * L.size, parts + (s + step) * L.size, L.size);
    for (int step = 1; step < ranks; step *= 2) {
      if (rank % (2 * step) == 0) {
        if (rank + step < ranks) {
          MPI_Recv(recv, (int)L.size, MPI_DOUBLE, rank + step, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          add(parts, recv, L.size);
        }
      } else if (rank % (2 * step) == step) {
        MPI_Send(parts, (int)L.size, MPI_DOUBLE, rank - step, 0, MPI_COMM_WORLD);
        break;
      }
    }
    /* The prior, once, on rank 0; then everyone has the whole. */
    if (rank == 0) {
      double v;
      gmmshard_vec_vec_f64 dq, dl;
      if (gmmshard_vrev_wishart_prior_wrt_0_1(ctx, q.m, l.m, 1.0, 0, 1.0, &v, &dq, &dl) != gmmshard_OK) fail(ctx);
      parts[0] += v;
      double *pq = parts + 1 + k + k * d, *pl = pq + k * d;
      for (int64_t j = 0; j < k; j++) {
        for (int64_t e = 0; e < d; e++) pq[j * d + e] += dq.data[j].data[e];
        for (int64_t e = 0; e < L.tri; e++) pl[j * L.tri + e] += dl.data[j].data[e];
      }
      gmmshard_ctx_reset(ctx);
    }
    MPI_Bcast(parts, (int)L.size, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (t < best) best = t;
  }
  if (rank == 0) {
    printf("shards %d\nobjective %.17g\n", shards, parts[0]);
    if (L.size - 1 <= 200) {
      for (int64_t i = 1; i < L.size; i++) printf("g %.17g\n", parts[i]);
    } else {
      double s = 0;
      for (int64_t i = 1; i < L.size; i++) s += fabs(parts[i]);
      printf("gradient |g|_1 %.17g (%lld elements)\n", s, (long long)(L.size - 1));
    }
    printf("seconds %.6f\n", best);
  }
  gmmshard_ctx_free(ctx);
  free(parts);
  free(recv);
  free(alpha);
  free(x.m.data);
  free(x.data);
  free(mu.m.data);
  free(mu.data);
  free(q.m.data);
  free(q.data);
  free(l.m.data);
  free(l.data);
  MPI_Finalize();
  return 0;
}
