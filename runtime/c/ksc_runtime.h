/* ksc runtime for generated C: the context with its arena allocator,
 * runtime errors, integer arithmetic with defined overflow, printing in the
 * formats of the ks language, and $ranhashdoub.
 *
 * It is included into every C file ksc generates; every function is static,
 * so a library exports nothing from here. There is no global mutable state:
 * everything lives in a ks_ctx. */
#ifndef KSC_RUNTIME_H
#define KSC_RUNTIME_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* With AVX-512 enabled (-march=native on a machine that has it), gcc 12
 * vectorises with 512-bit registers, and on the Intel Xeon measured
 * (docs/performance.md, "-march=native on an AVX-512 machine") GMM's
 * objective then took 1.2-1.3 times as long as the default build's at d10
 * and d64, its gradient 1.1 times at d20 and n = 10^4: rows of 10 or 20
 * elements are short for 8 lanes. So generated code prefers 256-bit vectors, as
 * -mprefer-vector-width=256 would (the same machine code), and a library
 * built with -march=native is as fast as the default build (within 3%) or
 * faster; -DKS_PREFER_512 keeps gcc's choice (d64's gradient and Hessian-vector
 * product were 8-12% faster with it there). gcc knows the option from
 * version 8 on. */
#if defined(__AVX512F__) && defined(__GNUC__) && __GNUC__ >= 8 && !defined(__clang__) && !defined(KS_PREFER_512)
#pragma GCC target("prefer-vector-width=256")
#endif

/* KS_OMP(directive) is the OpenMP pragma "omp directive" in a build with
 * OpenMP, and nothing without (where -Wall would warn of an unknown
 * pragma): the C that ksc --threads emits also compiles as serial C. */
#define KS_OMP_STR(...) #__VA_ARGS__
#ifdef _OPENMP
#define KS_OMP(...) _Pragma(KS_OMP_STR(omp __VA_ARGS__))
#else
#define KS_OMP(...)
#endif

#ifdef _OPENMP
#include <omp.h>
#endif
/* Each iteration of a parallel loop calls setjmp (see ks_par below), with
 * OpenMP or without (KS_THREADS: C from ksc --threads). What is live across
 * it (the loop index, values made before the loop) is not changed between
 * the setjmp and a longjmp, and after a longjmp the iteration's own values
 * are not read, so gcc's -Wclobbered warnings about them are wrong. */
#if (defined(_OPENMP) || defined(KS_THREADS)) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wclobbered"
#endif

/* gcc turns a loop that only stores zeros (or copies) into a call of memset
 * (memcpy) (-ftree-loop-distribute-patterns, on at -O2 and above). The
 * reverse passes zero many short accumulators, d elements per point and
 * component in GMM, and there the call costs more than the stores: GMM's
 * gradient at n = 10000, d = 10 spent 11% of its time in memset and took
 * 0.88 times as long without it (docs/performance.md). The pragma equals
 * -fno-tree-loop-distribute-patterns on the command line (the same machine
 * code on gcc 12) and applies to every function below it; the runtime's own
 * memset and memcpy calls stay calls. clang, whose loop idiom pass does
 * the same, is left as it is. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

/* Vector math. On x86-64 with glibc 2.35 or later, gcc may compute these
 * functions a vector of 2 (4 with AVX2, 8 with AVX-512) arguments at a time
 * in the loops it vectorises, calling glibc's libmvec (which -lm links as
 * needed): glibc states its vector variants are within 4 ulps of the
 * correctly rounded result, as its scalar ones are within 1-2. So a value
 * computed in a vectorised loop may differ from the same function's scalar
 * value (and from the Go backend's) in its last bits; TestVectorMath
 * measures the difference. gcc vectorises such a loop only with
 * -fno-math-errno, which ksc passes (the generated code never reads errno
 * after a math function). Compiling with -DKS_SCALAR_MATH keeps every call
 * scalar. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)) && !defined(KS_SCALAR_MATH)
#define KS_VECTOR_MATH __attribute__((__simd__("notinbranch")))
KS_VECTOR_MATH double exp(double);
KS_VECTOR_MATH double log(double);
KS_VECTOR_MATH double sin(double);
KS_VECTOR_MATH double cos(double);
KS_VECTOR_MATH double cosh(double);
KS_VECTOR_MATH double tanh(double);
KS_VECTOR_MATH double erf(double);
KS_VECTOR_MATH double pow(double, double);
#endif

/* KS_CLONES marks a function whose loops gcc may vectorise: on x86-64
 * with glibc, gcc compiles it twice, for AVX2 and for the baseline (SSE2),
 * and the dynamic loader picks the AVX2 copy on a machine that has it
 * (function multiversioning, resolved once per process by an ifunc). A
 * library built with the default flags so runs as fast as one built with
 * -march=native where it matters, and still runs everywhere: GMM's
 * gradient at d64 took 0.6 times as long (docs/performance.md). The two
 * copies compute the same operations in the same order (ISO C mode does
 * not contract a * b + c into an FMA, and AVX2 alone does not enable FMA),
 * so their values agree but for vector math (libmvec's AVX2 variants, like
 * its SSE2 ones, are within 4 ulps). Nothing changes when the flags enable
 * AVX2 already (-march=native), and -DKS_NO_CLONES turns it off. Under
 * ThreadSanitizer the loader runs the copies' resolver before the
 * sanitizer is ready and the process crashes, so it is off there too. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__) && \
    defined(__ELF__) && !defined(__AVX2__) && !defined(__SANITIZE_THREAD__) && !defined(KS_NO_CLONES)
#define KS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KS_CLONES
#endif

/* KS_IVDEP precedes the loop of a build whose body reads tensors and
 * computes scalars, nothing else (emit/c's pureScalarBody): its only
 * stores are to the new tensor's elements, fresh memory no iteration
 * reads, so no iteration depends on another through memory. gcc cannot
 * see that the arena's new memory overlaps no input, and checks it at run
 * time; beyond ten such checks (--param vect-max-version-for-alias-checks)
 * it does not vectorise, as in an LSTM layer's loop over its gates. It
 * also precedes a copy without checks of a reverse loop (a fold) whose only
 * stores add into the state's accumulators at the loop's index plus
 * shifts at least 8 apart, and which reads those accumulators in no
 * other way (emit/c's version.go, ivdep): an accumulator is held by the
 * state alone, and each element gets its updates in the scalar loop's
 * order. */
#if defined(__GNUC__) && !defined(__clang__)
#define KS_IVDEP _Pragma("GCC ivdep")
#else
#define KS_IVDEP
#endif

#if defined(__GNUC__)
#define KS_UNUSED __attribute__((unused))
#define KS_NORETURN __attribute__((noreturn))
#define KS_ALWAYS_INLINE __attribute__((always_inline))
#define KS_NOINLINE __attribute__((noinline))
#define KS_EXPORT __attribute__((visibility("default")))
#else
#define KS_UNUSED
#define KS_NORETURN
#define KS_ALWAYS_INLINE
#define KS_NOINLINE
#define KS_EXPORT
#endif

#define KS_PI 3.14159265358979323846

/* KS_SYMBOL(name) gives a declaration the linker symbol name (an edef's
 * C function), whatever the C name it is declared under. */
#define KS_STR_(x) #x
#define KS_STR(x) KS_STR_(x)
#define KS_SYMBOL(name) __asm__(KS_STR(__USER_LABEL_PREFIX__) name)

typedef const char *ks_str;

/* Arena memory comes in chunks; each allocation is aligned to KS_ALIGN so
 * that loops over doubles can use aligned vector loads. */
#define KS_ALIGN 64
#define KS_CHUNK_MIN ((size_t)1 << 20)

typedef struct ks_chunk {
  struct ks_chunk *next;
  size_t size, used;
  /* data follows, KS_ALIGN-aligned */
} ks_chunk;

/* The most calls a runtime error's message lists. */
#define KS_CALLS 12

typedef struct ks_ctx {
  ks_chunk *chunks;   /* the current chunk first */
  ks_chunk *spare;    /* chunks released by ks_arena_release, for reuse */
  jmp_buf jmp;        /* where a runtime error returns to */
  int code;           /* the error code of the last runtime error */
  char err[1024];     /* its message */
  struct ks_ctx *sub; /* contexts of the threads of parallel loops */
  int nsub;
  bool escaped; /* a $setAt stored a new pointer (see the C backend's arena.go) */
  char *scratch;      /* where a loop's new state waits while the arena is released (ks_scratch) */
  size_t scratch_cap; /* its bytes */
  size_t scratch_len; /* the bytes of it in use */
  size_t in_use;        /* the bytes allocated and not released */
  size_t max_bytes;     /* the most in_use may reach; 0: no limit */
  uintptr_t stack_base; /* the stack where the running entry point began */
  size_t max_stack;     /* the bytes of stack below it recursion may use */
  /* The chain of calls of ks functions running, for the message of a
   * runtime error: the first KS_CALLS of ncalls, outermost first, each
   * "f, called from FILE:LINE:COL" (ks_call, ks_return). */
  size_t ncalls;
  const char *calls[KS_CALLS];
  struct ks_par_site *par_sites; /* what it learnt of each parallel loop (ks_par_choose) */
  int npar_sites;
} ks_ctx;

/* ks_call records a call of a ks function about to be made at site;
 * ks_return, its return. */
static inline KS_UNUSED void ks_call(ks_ctx *ctx, const char *site) {
  size_t n = ctx->ncalls++;
  if (n < KS_CALLS) ctx->calls[n] = site;
}
static inline KS_UNUSED void ks_return(ks_ctx *ctx) { ctx->ncalls--; }

/* Error codes returned by library functions. */
enum { KS_OK = 0, KS_ERR_RUNTIME = 1, KS_ERR_MEMORY = 2, KS_ERR_USAGE = 3 };

/* ks_err_line appends line to the message if all of it fits. */
static KS_UNUSED bool ks_err_line(ks_ctx *ctx, const char *line) {
  size_t len = strlen(ctx->err), n = strlen(line);
  if (len + n >= sizeof ctx->err) return false;
  memcpy(ctx->err + len, line, n + 1);
  return true;
}

/* ks_err_calls appends to the message the calls that led to the error,
 * innermost first, a line each (the Go runtime's Error.Error writes the
 * same). */
static KS_UNUSED void ks_err_calls(ks_ctx *ctx) {
  char line[512];
  size_t n = ctx->ncalls, shown = n < KS_CALLS ? n : KS_CALLS;
  if (n > shown) {
    snprintf(line, sizeof line, "\n  (%zu calls deeper not shown)", n - shown);
    if (!ks_err_line(ctx, line)) return;
  }
  for (size_t i = shown; i-- > 0;) {
    snprintf(line, sizeof line, "\n  in %s", ctx->calls[i]);
    if (!ks_err_line(ctx, line)) return;
  }
}

static KS_UNUSED KS_NORETURN void ks_fail_code(ks_ctx *ctx, int code, const char *pos, const char *fmt, ...) {
  int n = snprintf(ctx->err, sizeof ctx->err, "%s: runtime error: ", pos);
  if (n < 0 || (size_t)n >= sizeof ctx->err) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->err + n, sizeof ctx->err - (size_t)n, fmt, ap);
  va_end(ap);
  ks_err_calls(ctx);
  ctx->code = code;
  longjmp(ctx->jmp, 1);
}

#define ks_fail(ctx, pos, ...) ks_fail_code(ctx, KS_ERR_RUNTIME, pos, __VA_ARGS__)

static KS_UNUSED size_t ks_chunk_header(void) {
  return (sizeof(ks_chunk) + KS_ALIGN - 1) / KS_ALIGN * KS_ALIGN;
}

/* ks_alloc_slow is ks_alloc when the current chunk is full: another
 * chunk, released or new. */
static KS_UNUSED void *ks_alloc_slow(ks_ctx *ctx, size_t bytes) {
  ks_chunk *c = ctx->chunks;
  if ((c == NULL || c->size - c->used < bytes) && ctx->spare != NULL) {
    /* Reuse a released chunk that is large enough. */
    for (ks_chunk **s = &ctx->spare; *s != NULL; s = &(*s)->next) {
      if ((*s)->size >= bytes) {
        c = *s;
        *s = c->next;
        c->next = ctx->chunks;
        c->used = 0;
        ctx->chunks = c;
        break;
      }
    }
  }
  if (c == NULL || c->size - c->used < bytes) {
    size_t size = KS_CHUNK_MIN;
    if (c != NULL && c->size * 2 > size) size = c->size * 2;
    while (size < bytes) size *= 2;
    void *mem = NULL;
    if (posix_memalign(&mem, KS_ALIGN, ks_chunk_header() + size) != 0) mem = NULL;
    if (mem == NULL) ks_fail_code(ctx, KS_ERR_MEMORY, "ksc", "out of memory allocating %zu bytes", bytes);
    c = (ks_chunk *)mem;
    c->next = ctx->chunks;
    c->size = size;
    c->used = 0;
    ctx->chunks = c;
  }
  void *p = (char *)c + ks_chunk_header() + c->used;
  c->used += bytes;
  return p;
}

/* ks_alloc returns bytes of the arena, aligned to KS_ALIGN. The common
 * case, room in the current chunk, is inline: derived code allocates a
 * small record or vector per call of a callee's forward pass, in loops. */
static inline KS_UNUSED void *ks_alloc(ks_ctx *ctx, size_t bytes) {
  bytes = (bytes + KS_ALIGN - 1) / KS_ALIGN * KS_ALIGN;
  if (ctx->max_bytes != 0 && bytes > ctx->max_bytes - ctx->in_use)
    ks_fail_code(ctx, KS_ERR_MEMORY, "ksc", "memory limit reached: %zu bytes more, %zu in use, limit %zu (ctx_set_max_bytes)",
                 bytes, ctx->in_use, ctx->max_bytes);
  ctx->in_use += bytes;
  ks_chunk *c = ctx->chunks;
  if (c == NULL || c->size - c->used < bytes) return ks_alloc_slow(ctx, bytes);
  void *p = (char *)c + ks_chunk_header() + c->used;
  c->used += bytes;
  return p;
}

/* Sizes. A tensor's elements are one C object, of at most PTRDIFF_MAX
 * bytes (pointer arithmetic beyond is undefined), so a tensor of elements
 * of size elem has at most KS_MAX_COUNT(elem) of them: ks_alloc_array
 * fails beyond. The C compiler must know it too. Integer arithmetic wraps
 * (ks_iadd), so from (gt (add (size v) 1) (size v)) being false gcc
 * concludes that the size is INT64_MAX, and from (gt (add k 1) k) being
 * false that k is; it then warns that a loop over v, or over a new
 * (constVec k x), "invokes undefined behavior" at iteration 2^61 - 1
 * (-Waggressive-loop-optimizations), in code that cannot run. So the
 * bound is stated wherever the generated code learns a size: where a
 * program reads the size of a vector (ks_assume_size), where it indexes
 * one (ks_check_index), and where it allocates a tensor (ks_alloc_array).
 * These are always inlined, even with -Os, so that the compiler sees the
 * bound at the call. */
#define KS_MAX_COUNT(elem) ((uint64_t)PTRDIFF_MAX / (uint64_t)((elem) ? (elem) : 1))

#if defined(__GNUC__)
#define KS_ASSUME(c) ((c) ? (void)0 : __builtin_unreachable())
#else
#define KS_ASSUME(c) ((void)0)
#endif

/* ks_assume_size tells the C compiler that n, the size of a vector of
 * elements of size elem, is within 0 .. KS_MAX_COUNT(elem). */
static inline KS_UNUSED KS_ALWAYS_INLINE void ks_assume_size(int64_t n, size_t elem) {
  KS_ASSUME((uint64_t)n <= KS_MAX_COUNT(elem));
}

static KS_UNUSED KS_NORETURN void ks_fail_size(ks_ctx *ctx, const char *pos, int64_t n) {
  if (n < 0) ks_fail(ctx, pos, "negative size %" PRId64, n);
  ks_fail_code(ctx, KS_ERR_MEMORY, pos, "size %" PRId64 " too large", n);
}

/* ks_alloc_array allocates n elements of size elem, failing on a negative
 * n or one above KS_MAX_COUNT(elem). */
static inline KS_UNUSED KS_ALWAYS_INLINE void *ks_alloc_array(ks_ctx *ctx, const char *pos, int64_t n, size_t elem) {
  if ((uint64_t)n > KS_MAX_COUNT(elem)) ks_fail_size(ctx, pos, n);
  if (n == 0) return NULL;
  return ks_alloc(ctx, (size_t)n * elem);
}

/* A ks_mark is a point in the arena to return to: generated loops whose
 * iterations leave nothing in the arena (their values hold no pointers)
 * release what each iteration allocated, so the memory is reused. */
typedef struct ks_mark {
  ks_chunk *chunk;
  size_t used;
  size_t in_use; /* ctx->in_use then ({NULL, 0, 0} releases all) */
} ks_mark;

static inline KS_UNUSED ks_mark ks_arena_mark(ks_ctx *ctx) {
  ks_mark m = {ctx->chunks, ctx->chunks != NULL ? ctx->chunks->used : 0, ctx->in_use};
  return m;
}

/* ks_arena_release_chunks moves the chunks allocated after keep to the
 * spare list. */
static KS_UNUSED void ks_arena_release_chunks(ks_ctx *ctx, ks_chunk *keep) {
  while (ctx->chunks != NULL && ctx->chunks != keep) {
    ks_chunk *c = ctx->chunks;
    ctx->chunks = c->next;
    c->next = ctx->spare;
    ctx->spare = c;
  }
}

/* ks_arena_release frees everything allocated since m was taken. */
static inline KS_UNUSED void ks_arena_release(ks_ctx *ctx, ks_mark m) {
  if (ctx->chunks != m.chunk) ks_arena_release_chunks(ctx, m.chunk);
  if (m.chunk != NULL) m.chunk->used = m.used;
  ctx->in_use = m.in_use;
}

/* Loop states kept by copying (the C backend's arena.go). A loop whose
 * new state is made of several new tensors keeps only the state: its
 * pieces allocated since the loop's base mark (ks_above) are copied to the
 * context's scratch buffer, the arena is released to the base, and the
 * pieces are copied back (ks_in_scratch tells which). */

/* ks_round is what ks_alloc takes for bytes. */
static inline KS_UNUSED size_t ks_round(size_t bytes) { return (bytes + KS_ALIGN - 1) / KS_ALIGN * KS_ALIGN; }

/* ks_above reports whether p points into arena memory allocated since m. */
static inline KS_UNUSED bool ks_above(const ks_ctx *ctx, ks_mark m, const void *p) {
  uintptr_t q = (uintptr_t)p;
  for (const ks_chunk *c = ctx->chunks; c != NULL; c = c->next) {
    uintptr_t d = (uintptr_t)c + ks_chunk_header();
    if (c == m.chunk) return q >= d + m.used && q < d + c->used;
    if (q >= d && q < d + c->used) return true;
  }
  return false;
}

/* ks_scratch returns the scratch buffer with room for bytes, all of them
 * in use. It grows to the largest state kept, at most half of what one
 * iteration allocated (so within ctx_set_max_bytes's limit), and no more:
 * a loop's states are mostly of one size. */
static KS_UNUSED char *ks_scratch(ks_ctx *ctx, size_t bytes) {
  if (bytes > ctx->scratch_cap) {
    char *s = realloc(ctx->scratch, bytes);
    if (s == NULL) ks_fail_code(ctx, KS_ERR_MEMORY, "ksc", "out of memory allocating %zu bytes", bytes);
    ctx->scratch = s;
    ctx->scratch_cap = bytes;
  }
  ctx->scratch_len = bytes;
  return ctx->scratch;
}

/* ks_in_scratch reports whether p points into the scratch buffer's bytes
 * in use. */
static inline KS_UNUSED bool ks_in_scratch(const ks_ctx *ctx, const void *p) {
  uintptr_t q = (uintptr_t)p, s = (uintptr_t)ctx->scratch;
  return ctx->scratch != NULL && q >= s && q < s + ctx->scratch_len;
}

static KS_UNUSED void ks_free_chunks(ks_chunk *c) {
  while (c != NULL) {
    ks_chunk *next = c->next;
    free(c);
    c = next;
  }
}

/* Recursion and the stack. A recursive ks function (one in a cycle of
 * calls) checks on entry how much stack its thread has used since the
 * entry point began (ks_stack_check), and fails with KS_ERR_MEMORY beyond
 * ctx->max_stack bytes, rather than overflowing the host's stack. Bytes,
 * not calls: the frames of f and of [sufrev f] differ in size, and the
 * stack is what runs out. The default, KS_MAX_STACK or half the stack
 * limit (ulimit -s) if that is smaller, fits the main thread and glibc's
 * default threads; a host running the library on a thread with a larger
 * stack raises it (NAME_ctx_set_max_stack), on one with a smaller stack
 * lowers it. */
#define KS_MAX_STACK ((size_t)4 << 20)

static KS_UNUSED size_t ks_default_max_stack(void) {
  size_t n = KS_MAX_STACK;
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < n) n = (size_t)(rl.rlim_cur / 2);
  return n;
}

/* ks_main_max_stack is the limit of a program's main, which runs on the
 * main thread, whose stack is the stack limit (ulimit -s, which thus
 * raises it): all of it but 1 MiB for what runs below the last check
 * (code that does not recurse, the C library), or half of a small one;
 * 1 GiB if unlimited. */
static KS_UNUSED size_t ks_main_max_stack(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return (size_t)1 << 30;
  size_t n = (size_t)rl.rlim_cur, margin = (size_t)1 << 20;
  return n > 2 * margin ? n - margin : n / 2;
}

/* ks_stack_here returns the address of the calling function's frame. */
#if defined(__GNUC__)
#define ks_stack_here() ((uintptr_t)__builtin_frame_address(0))
#else
static uintptr_t ks_stack_here(void) {
  volatile char probe = 0;
  return (uintptr_t)&probe;
}
#endif

static KS_UNUSED KS_NORETURN void ks_stack_fail(ks_ctx *ctx, const char *pos, const char *fn) {
  ks_fail_code(ctx, KS_ERR_MEMORY, pos, "recursion too deep in %s: more than %zu bytes of stack "
               "(to raise the limit: ulimit -s for a program; for a library, a thread with a larger stack and ctx_set_max_stack)", fn, ctx->max_stack);
}

#define ks_stack_check(ctx, pos, fn)                                                                \
  do {                                                                                             \
    uintptr_t ks_here_ = ks_stack_here();                                                          \
    uintptr_t ks_used_ = (ctx)->stack_base > ks_here_ ? (ctx)->stack_base - ks_here_ : ks_here_ - (ctx)->stack_base; \
    if (ks_used_ > (ctx)->max_stack) ks_stack_fail(ctx, pos, fn);                                 \
  } while (0)

static KS_UNUSED void ks_ctx_init(ks_ctx *ctx) {
  memset(ctx, 0, sizeof *ctx);
  ctx->max_stack = ks_default_max_stack();
}

/* ks_ctx_reset releases everything allocated, and keeps the chunks for
 * the next calls: all of them become spare, oldest first, so that the same
 * call again fills them in the same order as the first time and asks the
 * system for nothing (no fresh pages, no page faults). The context keeps
 * the memory of its largest call until ks_ctx_destroy. */
static KS_UNUSED void ks_ctx_reset(ks_ctx *ctx) {
  for (int t = 0; t < ctx->nsub; t++) ks_ctx_reset(&ctx->sub[t]);
  ctx->in_use = 0;
  ks_chunk *oldest_first = ctx->spare;
  while (ctx->chunks != NULL) {
    ks_chunk *c = ctx->chunks;
    ctx->chunks = c->next;
    c->next = oldest_first;
    c->used = 0;
    oldest_first = c;
  }
  ctx->spare = oldest_first;
}

static KS_UNUSED void ks_ctx_destroy(ks_ctx *ctx) {
  for (int t = 0; t < ctx->nsub; t++) ks_ctx_destroy(&ctx->sub[t]);
  free(ctx->sub);
  ctx->sub = NULL;
  free(ctx->par_sites);
  ctx->par_sites = NULL;
  ctx->npar_sites = 0;
  ctx->nsub = 0;
  ks_free_chunks(ctx->chunks);
  ks_free_chunks(ctx->spare);
  free(ctx->scratch);
  ctx->scratch = NULL;
  ctx->scratch_cap = ctx->scratch_len = 0;
  ctx->chunks = NULL;
  ctx->spare = NULL;
}

/* ks_ctx_bytes returns the bytes of memory the context holds. */
static KS_UNUSED size_t ks_ctx_bytes(const ks_ctx *ctx) {
  size_t n = ctx->scratch_cap;
  for (const ks_chunk *c = ctx->chunks; c != NULL; c = c->next) n += c->size;
  for (const ks_chunk *c = ctx->spare; c != NULL; c = c->next) n += c->size;
  for (int t = 0; t < ctx->nsub; t++) n += ks_ctx_bytes(&ctx->sub[t]);
  return n;
}

/* Parallel loops (ksc --threads). The iterations of a loop whose values
 * hold no pointers and whose body prints nothing are shared among OpenMP
 * threads. Each thread runs its iterations with a context of its own
 * (ctx->sub[thread]), whose arena it empties after each iteration, and
 * which catches a runtime error of an iteration. After the loop the error
 * of the first failing iteration, if any, is raised in the caller's
 * context: the same error as the serial loop raises. Sums are added up
 * after the loop, in order, so results do not depend on the threads. */
typedef struct ks_par {
  ks_ctx *parent;
  int site;    /* the loop's number, its index in parent->par_sites */
  int64_t failed; /* the first failing iteration, or -1 */
  int code;
  bool team;   /* whether the loop runs on a team of threads */
  bool timed;  /* whether this run is timed (ks_par_choose) */
  double wall; /* when it began (ks_par_clock's wall time) */
  double cpu;  /* the CPU time its threads spent in its iterations */
  char err[1024];
} ks_par;

/* Whether a team of threads is faster than one thread depends on the loop
 * (a short one costs less than waking the team) and on what else the
 * machine runs: a neighbour busy on one of two cores deschedules one of the
 * team's threads now and then, and the others wait for its share. So the
 * context measures each parallel loop of the program (a site) every time
 * it runs: the ratio of its wall time to the CPU time its threads spent in
 * its iterations, kept for the times it ran on a team and for those it ran
 * on one thread (the latter near 1 when the thread has a core to itself,
 * 1.5 when it gets two thirds of one). The loop runs the way whose ratio is
 * lower, on a team only if its ratio is below KS_PAR_GAIN times one
 * thread's, since a team spends more CPU time on the same work (one
 * thread's ratio is at least 1, so a team's below KS_PAR_GAIN wins without
 * a trial of one thread). Now and
 * then it runs the other way to measure it again: after 2 runs, then 4,
 * doubling to KS_PAR_PERIOD, and after 2 again when the preference
 * changes. A way more than twice as slow is tried less and less often, down
 * to once in KS_PAR_PERIOD_FAR runs: on a busy machine, a loop of a few
 * microseconds on a team waits milliseconds for a thread to be scheduled.
 * A thread's CPU time costs a system call to read (near a microsecond), so
 * the runs of the way preferred of a loop whose last timed run took less
 * than KS_PAR_SHORT seconds are timed one in KS_PAR_SAMPLE, but for the
 * first KS_PAR_SAMPLE after the preference changed (a trial that was lucky
 * is found out at once); other runs, trials of the other way, and runs of
 * a way not yet measured, always. Which way a
 * loop runs never changes its result (see ks_par_chunk), only its time. */
#define KS_PAR_GAIN 0.9
#define KS_PAR_PERIOD 64
#define KS_PAR_PERIOD_FAR 4096
#define KS_PAR_SAMPLE 8
#define KS_PAR_SHORT 1e-3

typedef struct ks_par_site {
  double cost[2]; /* wall over CPU time on one thread [0] and on a team [1]; 0: not measured */
  int pref;       /* the way preferred: 1 for a team */
  unsigned runs;  /* runs since the other way was last tried */
  unsigned period; /* runs between such tries */
  unsigned untimed; /* runs of the way preferred since one was timed */
  unsigned settled; /* runs of the way preferred since it became so (to KS_PAR_SAMPLE) */
  double wall;      /* the wall time of the last run timed, in seconds */
} ks_par_site;

/* ks_par_choose reports whether the next run of a loop runs on a team, and
 * sets *timed to whether it is to be timed. */
static KS_UNUSED bool ks_par_choose(ks_par_site *s, bool *timed) {
  *timed = true;
  if (s->cost[1] == 0) return true;
  int pref;
  if (s->cost[1] < KS_PAR_GAIN) {
    /* One thread's ratio is at least 1 (its wall time is at least its
     * CPU time): a team's below KS_PAR_GAIN needs no trial of one thread. */
    pref = 1;
    s->period = 0;
  } else if (s->cost[0] == 0) {
    return false;
  } else {
    pref = s->cost[1] < KS_PAR_GAIN * s->cost[0];
    if (pref != s->pref || s->period == 0) {
      s->period = 2;
      s->runs = 0;
    }
  }
  if (pref != s->pref) s->settled = 0;
  s->pref = pref;
  if (s->period != 0 && ++s->runs >= s->period) {
    s->runs = 0;
    if (s->period < (s->cost[!pref] > 2 * s->cost[pref] ? KS_PAR_PERIOD_FAR : KS_PAR_PERIOD)) s->period *= 2;
    return !pref;
  }
  bool fresh = s->settled < KS_PAR_SAMPLE;
  if (fresh) s->settled++;
  *timed = ++s->untimed >= KS_PAR_SAMPLE || fresh || s->wall >= KS_PAR_SHORT;
  if (*timed) s->untimed = 0;
  return pref;
}

/* ks_par_learn records that a run of a loop was on a team or not (team),
 * took wall seconds, and cost (its wall time over its threads' CPU time).
 * The way preferred keeps a moving average, so that one slow run does not
 * change the preference; a trial of the other way replaces what was known
 * of it. */
static KS_UNUSED void ks_par_learn(ks_par_site *s, bool team, double wall, double cost) {
  s->wall = wall;
  if (!(cost > 0)) return;
  double *c = &s->cost[team];
  if (*c == 0 || (int)team != s->pref) *c = cost;
  else *c = 0.75 * *c + 0.25 * cost;
}

/* ks_par_clock returns the CPU time of the calling thread (cpu) or the
 * wall time, in seconds. */
static KS_UNUSED double ks_par_clock(bool cpu) {
  struct timespec ts;
  if (clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts) != 0) return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ks_par_begin starts the loop numbered site of the program; team says
 * whether it is worth a team of threads at all (for a reduction, enough
 * iterations). */
static KS_UNUSED void ks_par_begin(ks_ctx *ctx, ks_par *par, int site, bool team) {
  int n = 1;
#ifdef _OPENMP
  n = omp_get_max_threads();
#endif
  if (ctx->nsub < n) {
    ks_ctx *sub = realloc(ctx->sub, (size_t)n * sizeof *sub);
    if (sub == NULL) ks_fail_code(ctx, KS_ERR_MEMORY, "ksc", "out of memory starting threads");
    for (int t = ctx->nsub; t < n; t++) memset(&sub[t], 0, sizeof sub[t]);
    ctx->sub = sub;
    ctx->nsub = n;
  }
  if (ctx->npar_sites <= site) {
    ks_par_site *s = realloc(ctx->par_sites, (size_t)(site + 1) * sizeof *s);
    if (s == NULL) ks_fail_code(ctx, KS_ERR_MEMORY, "ksc", "out of memory starting threads");
    memset(&s[ctx->npar_sites], 0, (size_t)(site + 1 - ctx->npar_sites) * sizeof *s);
    ctx->par_sites = s;
    ctx->npar_sites = site + 1;
  }
  par->parent = ctx;
  par->site = site;
  par->failed = -1;
  par->code = KS_OK;
  par->err[0] = 0;
  par->timed = false;
  par->team = team && n > 1 && ks_par_choose(&ctx->par_sites[site], &par->timed);
  par->cpu = 0;
  par->wall = par->timed ? ks_par_clock(false) : 0;
}

/* ks_par_start returns the CPU time of the calling thread as it starts
 * iterations of the loop, and ks_par_stop adds the time since to the loop's. */
static inline KS_UNUSED double ks_par_start(const ks_par *par) { return par->timed ? ks_par_clock(true) : 0; }
static KS_UNUSED void ks_par_stop(ks_par *par, double start) {
  if (!par->timed) return;
  double t = ks_par_clock(true) - start;
#ifdef _OPENMP
#pragma omp atomic update
#endif
  par->cpu += t;
}

/* ks_par_ctx returns the context of the calling thread. Its stack is
 * measured from where the thread began the loop, or, on the thread that
 * runs the loop's caller, from where the caller's began. */
#define ks_par_ctx(par) ks_par_ctx_at(par, ks_stack_here())
static inline KS_UNUSED ks_ctx *ks_par_ctx_at(ks_par *par, uintptr_t here) {
  int t = 0;
#ifdef _OPENMP
  t = omp_get_thread_num();
#endif
  ks_ctx *sub = &par->parent->sub[t];
  /* A worker thread's stack is OpenMP's (OMP_STACKSIZE, else the
   * thread default): at most KS_MAX_STACK of it, whatever the caller's. */
  sub->max_stack = t == 0 || par->parent->max_stack < KS_MAX_STACK ? par->parent->max_stack : KS_MAX_STACK;
  sub->max_bytes = par->parent->max_bytes;
  sub->stack_base = t == 0 ? par->parent->stack_base : here;
  /* The iteration runs inside the parent's calls. */
  sub->ncalls = par->parent->ncalls;
  memcpy(sub->calls, par->parent->calls, sizeof sub->calls);
  return sub;
}

/* ks_par_fail records the runtime error of iteration i, raised in sub. */
static KS_UNUSED void ks_par_fail(ks_par *par, int64_t i, ks_ctx *sub) {
#ifdef _OPENMP
#pragma omp critical(ks_par_fail)
#endif
  {
    if (par->failed < 0 || i < par->failed) {
      par->failed = i;
      par->code = sub->code;
      memcpy(par->err, sub->err, sizeof par->err);
    }
  }
  ks_arena_release(sub, (ks_mark){NULL, 0, 0});
}

/* A reduction (emit/c's reduce.go: a reverse pass summing into
 * accumulators) runs in KS_PAR_CHUNKS chunks of its iterations, whatever
 * the number of threads, so that its result does not depend on it.
 * ks_par_chunk returns where chunk c of n iterations begins. */
#define KS_PAR_CHUNKS 4
/* A reduction of fewer iterations is not worth a team of threads. */
#define KS_PAR_MIN 64
static inline KS_UNUSED int64_t ks_par_chunk(int64_t n, int64_t c) {
  if (n <= 0) return 0;
  int64_t q = n / KS_PAR_CHUNKS, r = n % KS_PAR_CHUNKS;
  return c * q + (c < r ? c : r);
}

/* ks_par_release empties the threads' arenas once nothing in them is
 * needed: the chunks' states of a reduction, added into its result. */
static KS_UNUSED void ks_par_release(ks_ctx *ctx) {
  for (int t = 0; t < ctx->nsub; t++) ks_arena_release(&ctx->sub[t], (ks_mark){NULL, 0, 0});
}

/* ks_par_end records the loop's cost and raises the error of the first
 * failing iteration, if any. */
static KS_UNUSED void ks_par_end(ks_ctx *ctx, ks_par *par) {
  if (par->timed && par->cpu > 0) {
    double wall = ks_par_clock(false) - par->wall;
    ks_par_learn(&ctx->par_sites[par->site], par->team, wall, wall / par->cpu);
  }
  if (par->failed < 0) return;
  memcpy(ctx->err, par->err, sizeof ctx->err);
  ctx->code = par->code;
  longjmp(ctx->jmp, 1);
}

/* Integer arithmetic wraps around, as in Go. */
static inline KS_UNUSED int64_t ks_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline KS_UNUSED int64_t ks_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline KS_UNUSED int64_t ks_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline KS_UNUSED int64_t ks_ineg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }

static inline KS_UNUSED int64_t ks_idiv(ks_ctx *ctx, const char *pos, int64_t a, int64_t b) {
  if (b == 0) ks_fail(ctx, pos, "integer division by zero");
  if (b == -1) return ks_ineg(a);
  return a / b;
}

static inline KS_UNUSED double ks_lgamma(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

/* ks_digamma is the derivative of lgamma: the recurrence
 * psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series;
 * reflection for negative x. The Go runtime uses the same steps. */
static KS_UNUSED double ks_digamma(double x) {
  if (x <= 0 && floor(x) == x) return NAN;
  if (x < 0) return ks_digamma(1 - x) - KS_PI / tan(KS_PI * x);
  double r = 0;
  while (x < 6) {
    r -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  double t = f * (-1 / 12.0 + f * (1 / 120.0 + f * (-1 / 252.0 + f * (1 / 240.0 + f * (-1 / 132.0)))));
  return r + log(x) - 0.5 / x + t;
}

static KS_UNUSED double ks_ranhashdoub(int64_t in) {
  uint64_t v = (uint64_t)(int64_t)(int32_t)(uint32_t)(uint64_t)in;
  v = v * 3935559000370003845ULL + 2691343689449507681ULL;
  v ^= v >> 21;
  v ^= v << 37;
  v ^= v >> 4;
  v *= 4768777513237032717ULL;
  v ^= v << 20;
  v ^= v >> 41;
  v ^= v << 5;
  return 5.42101086242752217e-20 * (double)v;
}

/* Index checks. */
/* ks_check_index fails unless i indexes a vector of n elements of size
 * elem. */
static inline KS_UNUSED KS_ALWAYS_INLINE void ks_check_index(ks_ctx *ctx, const char *pos, int64_t i, int64_t n, size_t elem) {
  ks_assume_size(n, elem);
  if ((uint64_t)i >= (uint64_t)n) ks_fail(ctx, pos, "index %" PRId64 " out of range for size %" PRId64, i, n);
}

/* ks_checked_index is $checkIndex: i, failing as ks_check_index does. */
static inline KS_UNUSED int64_t ks_checked_index(ks_ctx *ctx, const char *pos, int64_t i, int64_t n) {
  if ((uint64_t)i >= (uint64_t)n) ks_fail(ctx, pos, "index %" PRId64 " out of range for size %" PRId64, i, n);
  return i;
}

static inline KS_UNUSED void ks_check_size(ks_ctx *ctx, const char *pos, int64_t n) {
  if (n < 0) ks_fail(ctx, pos, "negative size %" PRId64, n);
}

static inline KS_UNUSED void ks_check_same_size(ks_ctx *ctx, const char *pos, int64_t a, int64_t b) {
  if (a != b) ks_fail(ctx, pos, "size mismatch: %" PRId64 " and %" PRId64, a, b);
}

/* ks_count returns the number of elements of a tensor with the given
 * sizes, failing on a negative size or overflow. */
static KS_UNUSED int64_t ks_count(ks_ctx *ctx, const char *pos, int rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) {
    if (sizes[d] < 0) ks_fail(ctx, pos, "negative size %" PRId64, sizes[d]);
    if (sizes[d] != 0 && n > INT64_MAX / sizes[d]) ks_fail_code(ctx, KS_ERR_MEMORY, pos, "tensor too large");
    n *= sizes[d];
  }
  return n;
}

static KS_UNUSED void ks_check_index_n(ks_ctx *ctx, const char *pos, int rank, const int64_t *idx, const int64_t *sizes) {
  for (int d = 0; d < rank; d++) {
    if ((uint64_t)idx[d] >= (uint64_t)sizes[d]) {
      char is[256], ss[256];
      int ni = 0, ns = 0;
      for (int k = 0; k < rank; k++) {
        ni += snprintf(is + ni, sizeof is - (size_t)ni, "%s%" PRId64, k ? "," : "", idx[k]);
        ns += snprintf(ss + ns, sizeof ss - (size_t)ns, "%s%" PRId64, k ? "," : "", sizes[k]);
        if (ni > 200 || ns > 200) break;
      }
      ks_fail(ctx, pos, "index (%s) out of range for size (%s)", is, ss);
    }
  }
}

/* Sparsity patterns ([sparsejac f], language.md section 5). A set is an
 * increasing array of integers. */

/* ks_set_union writes the union of the sets a (na elements) and b (nb)
 * to out, which has room for na + nb, and returns its size. */
static KS_UNUSED int64_t ks_set_union(const int64_t *a, int64_t na, const int64_t *b, int64_t nb, int64_t *out) {
  int64_t i = 0, j = 0, k = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j]) {
      out[k++] = a[i++];
    } else if (b[j] < a[i]) {
      out[k++] = b[j++];
    } else {
      out[k++] = a[i++];
      j++;
    }
  }
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
  return k;
}

/* ks_cmp_i64 orders int64_ts for qsort. */
static KS_UNUSED int ks_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* ks_sort_unique sorts the n integers of a and removes repeats, returning
 * how many are left ($unionAll). */
static KS_UNUSED int64_t ks_sort_unique(int64_t *a, int64_t n) {
  if (n == 0) return 0;
  qsort(a, (size_t)n, sizeof *a, ks_cmp_i64);
  int64_t k = 1;
  for (int64_t i = 1; i < n; i++) {
    if (a[i] != a[k - 1]) a[k++] = a[i];
  }
  return k;
}

/* ks_greedy colours the count vertices of a bipartite pattern greedily,
 * in order, so that no two sharing a neighbour alike: vertex v's
 * neighbours are tidx[tptr[v]...tptr[v+1]-1], and neighbour r's vertices
 * oidx[optr[r]...optr[r+1]-1]. It writes each vertex's colour to colour
 * and returns the number of colours, or limit as soon as that many are
 * needed; a vertex without neighbours takes colour 0 and does not count.
 * seen has count + 1 entries. */
static KS_UNUSED int64_t ks_greedy(const int64_t *tptr, const int64_t *tidx, const int64_t *optr, const int64_t *oidx, int64_t count, int64_t limit, int64_t *colour, int64_t *seen) {
  for (int64_t c = 0; c <= count; c++) seen[c] = -1;
  for (int64_t v = 0; v < count; v++) colour[v] = -1;
  int64_t used = 0;
  for (int64_t v = 0; v < count; v++) {
    for (int64_t a = tptr[v]; a < tptr[v + 1]; a++) {
      int64_t r = tidx[a];
      for (int64_t b = optr[r]; b < optr[r + 1]; b++) {
        int64_t w = oidx[b];
        if (colour[w] >= 0) seen[colour[w]] = v;
      }
    }
    int64_t c = 0;
    while (seen[c] == v) c++;
    colour[v] = c;
    if (tptr[v + 1] > tptr[v] && c + 1 > used) used = c + 1; /* a vertex of no entry needs no sweep */
    if (used >= limit) return limit;
  }
  return used;
}

/* ks_csr_check fails unless off[0..m] and cols[0..nnz-1] are a CSR
 * pattern with n columns: offsets from 0 to nnz, never decreasing,
 * columns in range. It returns the longest row's length. */
static KS_UNUSED int64_t ks_csr_check(ks_ctx *ctx, const char *pos, const int64_t *off, int64_t m, const int64_t *cols, int64_t nnz, int64_t n) {
  if (m < 0 || n < 0 || off[0] != 0 || off[m] != nnz) ks_fail(ctx, pos, "malformed sparsity pattern");
  int64_t longest = 0;
  for (int64_t i = 0; i < m; i++) {
    if (off[i + 1] < off[i]) ks_fail(ctx, pos, "malformed sparsity pattern: offsets decrease at row %" PRId64, i);
    if (off[i + 1] - off[i] > longest) longest = off[i + 1] - off[i];
  }
  for (int64_t k = 0; k < nnz; k++) {
    if ((uint64_t)cols[k] >= (uint64_t)n) ks_fail(ctx, pos, "malformed sparsity pattern: column %" PRId64 " out of range for %" PRId64, cols[k], n);
  }
  return longest;
}

/* ks_csr_transpose sets *cptr (n + 1 offsets) and *rows (nnz) to the
 * checked CSR pattern (off, m rows, cols, nnz entries) transposed: each
 * column's rows, in increasing order. */
static KS_UNUSED void ks_csr_transpose(ks_ctx *ctx, const char *pos, const int64_t *off, int64_t m, const int64_t *cols, int64_t nnz, int64_t n, int64_t **cptr, int64_t **rows) {
  int64_t *cp = ks_alloc_array(ctx, pos, n + 1, sizeof *cp);
  int64_t *rs = ks_alloc_array(ctx, pos, nnz, sizeof *rs);
  for (int64_t j = 0; j <= n; j++) cp[j] = 0;
  for (int64_t k = 0; k < nnz; k++) cp[cols[k] + 1]++;
  for (int64_t j = 0; j < n; j++) cp[j + 1] += cp[j];
  int64_t *fill = ks_alloc_array(ctx, pos, n + 1, sizeof *fill);
  for (int64_t j = 0; j <= n; j++) fill[j] = cp[j];
  for (int64_t i = 0; i < m; i++) {
    for (int64_t k = off[i]; k < off[i + 1]; k++) rs[fill[cols[k]]++] = i;
  }
  *cptr = cp;
  *rows = rs;
}

/* ks_colour chooses how [sparsejac f] sweeps the CSR pattern with m rows
 * (offsets off[0..m]) and n columns (cols[0..off[m]-1]): its columns
 * coloured greedily so that no two sharing a row are alike (one forward
 * sweep per colour), or its rows so that no two sharing a column are
 * (one reverse sweep per colour), whichever needs fewer colours, the
 * columns on a tie. The side whose lower bound (its longest row, or
 * column) is smaller is coloured first, and the other only as far as it
 * could need fewer, so that a gradient's single row costs no colouring of
 * its n columns against each other. It sets *by_rows, writes the colours
 * (n, or m, entries) to colour, which has room for both, and returns the
 * number of colours. A malformed pattern is a runtime error. */
static KS_UNUSED int64_t ks_colour(ks_ctx *ctx, const char *pos, const int64_t *off, int64_t m, const int64_t *cols, int64_t nnz, int64_t n, bool *by_rows, int64_t *colour) {
  int64_t lb_cols = ks_csr_check(ctx, pos, off, m, cols, nnz, n), lb_rows = 0;
  int64_t *cptr, *rows;
  ks_csr_transpose(ctx, pos, off, m, cols, nnz, n, &cptr, &rows);
  for (int64_t j = 0; j < n; j++) {
    if (cptr[j + 1] - cptr[j] > lb_rows) lb_rows = cptr[j + 1] - cptr[j];
  }
  int64_t big = m > n ? m : n;
  int64_t *seen = ks_alloc_array(ctx, pos, big + 1, sizeof *seen);
  int64_t *other = ks_alloc_array(ctx, pos, big, sizeof *other);
  /* Columns: vertices the columns, neighbours the rows; rows: the
   * other way round. */
  bool first_rows = lb_rows < lb_cols;
  int64_t first = first_rows ? ks_greedy(off, cols, cptr, rows, m, INT64_MAX, colour, seen)
                             : ks_greedy(cptr, rows, off, cols, n, INT64_MAX, colour, seen);
  *by_rows = first_rows;
  /* The columns win a tie. */
  int64_t limit = first_rows ? first + 1 : first;
  if ((first_rows ? lb_cols : lb_rows) < limit) {
    int64_t second = first_rows ? ks_greedy(cptr, rows, off, cols, n, limit, other, seen)
                                : ks_greedy(off, cols, cptr, rows, m, limit, other, seen);
    if (second < limit) {
      *by_rows = !first_rows;
      int64_t count = first_rows ? n : m;
      for (int64_t v = 0; v < count; v++) colour[v] = other[v];
      return second;
    }
  }
  return first;
}

/* ks_colour_columns colours the n columns of the CSR pattern greedily so
 * that no two sharing a row are alike ($colourColumns: [sparsejac [rev
 * f]] has forward sweeps only), writes each column's colour to colour
 * and returns the number of colours. */
static KS_UNUSED int64_t ks_colour_columns(ks_ctx *ctx, const char *pos, const int64_t *off, int64_t m, const int64_t *cols, int64_t nnz, int64_t n, int64_t *colour) {
  ks_csr_check(ctx, pos, off, m, cols, nnz, n);
  int64_t *cptr, *rows;
  ks_csr_transpose(ctx, pos, off, m, cols, nnz, n, &cptr, &rows);
  int64_t *seen = ks_alloc_array(ctx, pos, n + 1, sizeof *seen);
  return ks_greedy(cptr, rows, off, cols, n, INT64_MAX, colour, seen);
}

/* Pairs of positions ([sparsejac [rev f]]), each coded as i * 2^32 + j. */
#define KS_PAIR_LIMIT ((int64_t)1 << 31)

/* ks_pairs writes the set of the pairs (i, j) and (j, i), i in the set a
 * (na elements), j in b (nb), to out, which has room for 2 na nb, and
 * returns its size ($pairs). tmp has room for 2 na nb. */
static KS_UNUSED int64_t ks_pairs(ks_ctx *ctx, const char *pos, const int64_t *a, int64_t na, const int64_t *b, int64_t nb, int64_t *out, int64_t *tmp) {
  for (int64_t k = 0; k < na; k++) {
    if (a[k] < 0 || a[k] >= KS_PAIR_LIMIT) ks_fail(ctx, pos, "position %" PRId64 " out of range for a pair of positions", a[k]);
  }
  for (int64_t k = 0; k < nb; k++) {
    if (b[k] < 0 || b[k] >= KS_PAIR_LIMIT) ks_fail(ctx, pos, "position %" PRId64 " out of range for a pair of positions", b[k]);
  }
  int64_t q = 0;
  for (int64_t x = 0; x < na; x++) {
    for (int64_t y = 0; y < nb; y++) tmp[q++] = a[x] << 32 | b[y];
  }
  for (int64_t y = 0; y < nb; y++) {
    for (int64_t x = 0; x < na; x++) tmp[q++] = b[y] << 32 | a[x];
  }
  return ks_set_union(tmp, na * nb, tmp + na * nb, na * nb, out);
}

/* ks_pairs_csr writes the n x n pattern of the set of coded pairs (np of
 * them) as CSR rows to roff (n + 1) and rcols (room for np, plus nnz if
 * with_j), each row i followed, if with_j, by the columns n + k of the
 * rows k of the CSR pattern (off, m rows, cols, nnz entries) holding i
 * ($pairsCSR). It returns the number of entries. */
static KS_UNUSED int64_t ks_pairs_csr(ks_ctx *ctx, const char *pos, const int64_t *pairs, int64_t np, const int64_t *off, int64_t m, const int64_t *cols, int64_t nnz, int64_t n, bool with_j, int64_t *roff, int64_t *rcols) {
  ks_csr_check(ctx, pos, off, m, cols, nnz, n);
  int64_t *tptr, *trows;
  ks_csr_transpose(ctx, pos, off, m, cols, nnz, n, &tptr, &trows);
  int64_t q = 0, e = 0;
  roff[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    for (; q < np && pairs[q] >> 32 == i; q++) {
      int64_t j = pairs[q] & (((int64_t)1 << 32) - 1);
      if (j >= n) ks_fail(ctx, pos, "pair (%" PRId64 ", %" PRId64 ") out of range for %" PRId64, i, j, n);
      rcols[e++] = j;
    }
    if (q < np && pairs[q] >> 32 < i) ks_fail(ctx, pos, "pairs not increasing at position %" PRId64, q);
    if (with_j) {
      for (int64_t k = tptr[i]; k < tptr[i + 1]; k++) rcols[e++] = n + trows[k];
    }
    roff[i + 1] = e;
  }
  if (q < np) ks_fail(ctx, pos, "pair (%" PRId64 ", %" PRId64 ") out of range for %" PRId64, pairs[q] >> 32, pairs[q] & (((int64_t)1 << 32) - 1), n);
  return e;
}

/* Printing, in the formats of language.md section 6. */
static KS_UNUSED void ks_print_f64(double x) {
  if (isnan(x)) {
    fputs(signbit(x) ? "-nan" : "nan", stdout);
  } else {
    printf("%g", x);
  }
}
static KS_UNUSED void ks_print_i64(int64_t x) { printf("%" PRId64, x); }
static KS_UNUSED void ks_print_bool(bool x) { fputs(x ? "1" : "0", stdout); }
static KS_UNUSED void ks_print_str(ks_str x) { fputs(x, stdout); }

#endif /* KSC_RUNTIME_H */
