/* The tuner's learned cost model: per-store features of a candidate (in the
 * manner of Ansor's and MetaSchedule's per-store features), and models that
 * learn from measured candidates to rank unmeasured ones, so that only the
 * promising ones are compiled and measured.
 *
 * A candidate is a scheduled prim func. Features are read from its lowered
 * form (include/loom/lower.h): one row of LOOM_MODEL_FEATURE_DIM floats per
 * buffer store. A model scores a candidate from its rows; higher is better.
 * Scores compare candidates of one workload; their scale means nothing. */
#ifndef LOOM_MODEL_H
#define LOOM_MODEL_H

#include "loom/ir.h"

/* ---- features (src/tune/features.c) ---------------------------------------
 * Every value is finite. Counts and sizes with a wide range are written as
 * slog(x) = sign(x) * log2(1 + |x|); flags are 0 or 1. The columns: */
enum {
  /* Loops around the store, outermost first. */
  LOOM_FEAT_LOOP_DEPTH,        /* number of loops */
  LOOM_FEAT_LOOP_TRIPS,        /* slog: product of extents (times the store runs) */
  LOOM_FEAT_INNER_EXTENT,      /* slog: extent of the innermost loop */
  LOOM_FEAT_SERIAL_NUM,        /* loops of each kind and slog of their product */
  LOOM_FEAT_SERIAL_LEN,
  LOOM_FEAT_PARALLEL_NUM,
  LOOM_FEAT_PARALLEL_LEN,
  LOOM_FEAT_VECTOR_NUM,
  LOOM_FEAT_VECTOR_LEN,
  LOOM_FEAT_UNROLL_NUM,
  LOOM_FEAT_UNROLL_LEN,
  LOOM_FEAT_VECTOR_IS_INNERMOST, /* flag */
  LOOM_FEAT_VECTOR_POS,        /* loops inside the innermost vectorized one + 1; 0: none */
  LOOM_FEAT_PARALLEL_POS,      /* depth of the outermost parallel loop + 1; 0: none */
  /* GPU thread structure around the store (slog; 0 on a CPU). */
  LOOM_FEAT_GPU_BLOCKS,        /* product of the blockIdx loops */
  LOOM_FEAT_GPU_THREADS,       /* product of the threadIdx loops */
  LOOM_FEAT_GPU_THREAD_X,      /* the threadIdx.x loop: lanes that access together */
  LOOM_FEAT_GPU_VTHREADS,      /* product of the vthread loops */
  /* Operations of the stored value and indices, times the trips (slog). */
  LOOM_FEAT_FLOAT_ADDSUB,
  LOOM_FEAT_FLOAT_MUL,
  LOOM_FEAT_FLOAT_DIV,
  LOOM_FEAT_FLOAT_MATH,        /* min, max, intrinsic calls */
  LOOM_FEAT_INT_OPS,
  LOOM_FEAT_COMPARES,          /* comparisons and logic */
  LOOM_FEAT_SELECTS,
  LOOM_FEAT_CASTS,
  LOOM_FEAT_FLOPS,             /* slog: float operations */
  LOOM_FEAT_BYTES,             /* slog: bytes loaded and stored */
  LOOM_FEAT_INTENSITY,         /* flops / bytes (not log-scaled) */
  LOOM_FEAT_UNIQUE_BYTES,      /* slog: footprint of all accesses */
  LOOM_FEAT_INTENSITY_UNIQUE,  /* slog: flops / footprint */
  /* Working sets: slog of the bytes all accesses of the store touch within
   * the innermost 1, 2, ... 6 loops (one run of those loops), the sizes
   * the caches must hold for the reuse those loops offer. */
  LOOM_FEAT_FOOTPRINT_1,
  LOOM_FEAT_FOOTPRINT_2,
  LOOM_FEAT_FOOTPRINT_3,
  LOOM_FEAT_FOOTPRINT_4,
  LOOM_FEAT_FOOTPRINT_5,
  LOOM_FEAT_FOOTPRINT_6,
  /* Buffers allocated in scope of the store (ALLOCATE around it). */
  LOOM_FEAT_ALLOC_NUM,
  LOOM_FEAT_ALLOC_BYTES,       /* slog */
  LOOM_FEAT_STORE_IS_LOCAL,    /* flag: the stored buffer is allocated, not a parameter */
  LOOM_FEAT_STORE_SCOPE_GLOBAL,/* flags: scope of the stored buffer */
  LOOM_FEAT_STORE_SCOPE_SHARED,
  LOOM_FEAT_STORE_SCOPE_LOCAL,
  /* The whole program. */
  LOOM_FEAT_PROG_FLOPS,        /* slog */
  LOOM_FEAT_PROG_BYTES,        /* slog */
  LOOM_FEAT_PROG_STORES,       /* number of stores */
  LOOM_FEAT_PROG_PARALLEL,     /* slog: product of the outermost parallel loops */
  LOOM_FEAT_PROG_PAR_PER_CORE, /* slog: that over the cores given */
  LOOM_FEAT_BUFFERS_           /* where the per-buffer groups start */
};

/* Per accessed buffer, up to LOOM_MODEL_BUFFERS of them per store, sorted
 * by bytes touched (largest first); absent ones are all zero. The store's
 * own buffer counts as written; loads of it as read too. */
enum {
  LOOM_FEAT_BUF_PRESENT,       /* flag */
  LOOM_FEAT_BUF_IS_READ,       /* flag */
  LOOM_FEAT_BUF_IS_WRITE,      /* flag */
  LOOM_FEAT_BUF_BYTES,         /* slog: bytes touched (accesses * element bytes) */
  LOOM_FEAT_BUF_UNIQUE_BYTES,  /* slog: footprint over all loops */
  LOOM_FEAT_BUF_LINES,         /* slog: cache lines touched, access by access */
  LOOM_FEAT_BUF_UNIQUE_LINES,  /* slog: distinct cache lines of the footprint */
  LOOM_FEAT_BUF_REUSE_LOOP,    /* flags: reuse type: a loop does not move the */
  LOOM_FEAT_BUF_REUSE_SERIAL,  /* access; the store reads it more than once; */
  LOOM_FEAT_BUF_REUSE_NONE,    /* neither */
  LOOM_FEAT_BUF_REUSE_DIST,    /* slog: iterations between reuses */
  LOOM_FEAT_BUF_REUSE_COUNT,   /* slog: times each element is reused */
  LOOM_FEAT_BUF_REUSE_BYTES,   /* slog: bytes the store touches between reuses */
  LOOM_FEAT_BUF_INNER_STRIDE,  /* slog: elements the innermost loop steps by */
  LOOM_FEAT_BUF_IS_CONTIGUOUS, /* flag: innermost moving loop has stride 1 */
  LOOM_FEAT_BUF_MIN_STRIDE,    /* slog: smallest nonzero stride over the loops */
  LOOM_FEAT_BUF_BYTES_PER_LINE,/* slog: unique bytes / unique lines */
  LOOM_FEAT_BUF_NONAFFINE,     /* flag: an index the analysis could not follow */
  LOOM_FEAT_BUF_DIM_
};

#define LOOM_MODEL_BUFFERS 5
#define LOOM_MODEL_CACHE_LINE 64
#define LOOM_MODEL_FEATURE_DIM \
  (LOOM_FEAT_BUFFERS_ + LOOM_MODEL_BUFFERS * LOOM_FEAT_BUF_DIM_)

/* The name of column i ("loop_trips", "buf2_inner_stride"), for dumps. */
LOOM_API const char *loom_model_feature_name(int i, char buf[48]);

/* Lowers candidate and writes one row per buffer store into *rows (heap,
 * n_rows * LOOM_MODEL_FEATURE_DIM floats, row-major; the caller frees it;
 * NULL when there are no stores). cores is the number of cores parallel
 * loops run on (0: 1). Fails when the candidate cannot be lowered (d says
 * why) or on running out of memory. */
LOOM_API loom_status loom_model_features(const loom_func *candidate, int cores,
                                         LOOM_GIVE float **rows, int *n_rows,
                                         loom_diag *d);

/* ---- cost models (src/tune/model*.c) -------------------------------------- */

/* One candidate as a model sees it: its feature rows. */
typedef struct loom_model_input {
  const float *rows;   /* n_rows * LOOM_MODEL_FEATURE_DIM */
  int n_rows;
} loom_model_input;

typedef struct loom_model loom_model;

/* The operations every model implements; a model is this plus its state. */
typedef struct loom_model_vtable {
  const char *name;
  loom_status (*update)(loom_model *m, uint64_t workload,
                        const loom_model_input *cands, const double *latency,
                        int n, loom_diag *d);
  loom_status (*predict)(loom_model *m, const loom_model_input *cands, int n,
                         double *scores, loom_diag *d);
  loom_status (*save)(const loom_model *m, loom_buf *out, loom_diag *d);
  loom_status (*load)(loom_model *m, const void *bytes, size_t len,
                      loom_diag *d);
  void (*free)(loom_model *m);
} loom_model_vtable;

struct loom_model {
  const loom_model_vtable *vt;
};

typedef struct loom_model_options {
  uint64_t seed;       /* scores before the first training; XGBoost's seed */
  int max_depth;       /* 0: 10 */
  double eta;          /* 0: 0.2 */
  double gamma;        /* 0: 0.001 */
  int rounds;          /* boosting rounds per training; 0: 60 */
  int threads;         /* 0: 1, which keeps training reproducible */
  int min_train;       /* measured candidates before the first training; 0: 1 */
} loom_model_options;

/* A model of gradient-boosted trees (XGBoost) on the per-store rows: a
 * candidate's score is the sum of its rows' predictions, trained on every
 * candidate measured so far against its normalized throughput within its
 * workload (the fastest latency over its own), as MetaSchedule's XGBModel
 * does. o may be NULL. */
LOOM_API loom_status loom_model_xgb_new(const loom_model_options *o,
                                        LOOM_GIVE loom_model **out,
                                        loom_diag *d);
/* Uniform random scores from a seeded generator, for comparison. */
LOOM_API loom_status loom_model_random_new(uint64_t seed,
                                           LOOM_GIVE loom_model **out,
                                           loom_diag *d);

/* Learns from n measured candidates of workload (any key that tells
 * workloads apart, such as loom_ir_hash_func of the unscheduled func).
 * latency[i] is candidate i's in any unit; a candidate that failed has a
 * latency that is not a positive finite number, and gets the worst label. */
LOOM_API loom_status loom_model_update(loom_model *m, uint64_t workload,
                                       const loom_model_input *cands,
                                       const double *latency, int n,
                                       loom_diag *d);
/* Writes n scores; higher is better. Deterministic for a model's seed and
 * history. */
LOOM_API loom_status loom_model_predict(loom_model *m,
                                        const loom_model_input *cands, int n,
                                        double *scores, loom_diag *d);
/* Appends the model's whole state (its training data included) to out, so
 * a database can keep it; loading it into a model of the same kind gives
 * the same predictions. load fails on bytes that are not such a state. */
LOOM_API loom_status loom_model_save(const loom_model *m, loom_buf *out,
                                     loom_diag *d);
LOOM_API loom_status loom_model_load(loom_model *m, const void *bytes,
                                     size_t len, loom_diag *d);
LOOM_API void loom_model_free(LOOM_TAKE loom_model *m);
LOOM_API const char *loom_model_name(const loom_model *m);

#endif
