/* Targets: the machine a program is scheduled, built and tuned for. Each
 * kind of target is a row of one table (src/target/target.c) that says how it
 * is detected, which options its textual form takes, and the defaults the
 * schedule rules read for it; `cpu` is the only kind today. A target's key is
 * the canonical text of its hardware: tuning records are stored under it, so a
 * record made on one machine is not applied on another.
 *
 * The textual form is the kind followed by options that override what was
 * detected: "cpu -cores=4 -vector-bytes=32". */
#ifndef LOOM_TARGET_H
#define LOOM_TARGET_H

#include <stdbool.h>

#include "loom/base.h"

typedef enum {
  LOOM_TARGET_CPU,
  LOOM_TARGET_CUDA,
  LOOM_TARGET_KIND_COUNT_
} loom_target_kind;

/* A CPU, as detected from cpuid or /proc/cpuinfo and sysfs. */
typedef struct loom_cpu_desc {
  int cores;            /* online CPUs */
  int vector_bytes;     /* widest SIMD register: 16 (SSE/NEON), 32 (AVX2), 64 (AVX-512) */
  bool has_fma;
  int64_t l1d_bytes, l2_bytes, l3_bytes; /* per core for L1/L2; 0 when unknown */
} loom_cpu_desc;

/* The tensor-core instructions a GPU has, by operand type (the accumulator
 * is float32, or int32 for integers): mma.sync m16n8k16 for float16 and
 * bfloat16 and m16n8k32 for int8 from sm_80, m16n8k32 for the float8 types
 * from sm_89, and Hopper's asynchronous warpgroup wgmma (m64nNk16) on sm_90. */
enum {
  LOOM_TC_F16 = 1,
  LOOM_TC_BF16 = 2,
  LOOM_TC_INT8 = 4,
  LOOM_TC_FP8 = 8,
  LOOM_TC_WGMMA = 16,
};

/* An NVIDIA GPU, as the driver reports it (cuDeviceGetAttribute) or as a
 * named architecture's preset gives it. Sizes in bytes. */
typedef struct loom_gpu_desc {
  int sm;                       /* compute capability, major * 10 + minor: 80, 90 */
  bool is_detected;             /* read off a GPU of this machine */
  int multiprocessors;
  int max_threads_per_block, max_threads_per_sm, warp_size;
  int64_t shared_per_block;     /* static shared memory of a block */
  int64_t shared_per_block_optin; /* dynamic, with the opt-in attribute */
  int64_t shared_per_sm;
  int regs_per_sm, regs_per_block, regs_per_thread; /* 32-bit registers */
  int64_t l2_bytes;
  int bandwidth_gbps;           /* device memory, GB/s */
  int clock_mhz;                /* SM clock */
  unsigned tensor_cores;        /* LOOM_TC_* */
} loom_gpu_desc;

typedef struct loom_target {
  loom_target_kind kind;
  loom_cpu_desc cpu;    /* kind cpu */
  loom_gpu_desc gpu;    /* kind cuda */

  /* What the design space reads besides the hardware. Each kind sets its
   * defaults; the textual form overrides them. None is part of the key. */
  bool tensorize;       /* rules may use tensor intrinsics (-tensorize=1); off */
  /* Functions of fewer iterations (all blocks, both branches of an if) get
   * no parallel loop: a parallel region costs more to start and join than
   * they take. cpu: 65536; 0: no limit. */
  int64_t min_parallel_work;
  /* The largest innermost factor sample_perfect_tile draws (MetaSchedule's
   * max_innermost_factor). cpu: 64. */
  int max_innermost_factor;
  /* Parallel loops get at most cores times this many iterations
   * (MetaSchedule's max_jobs_per_core). cpu: 16. */
  int max_jobs_per_core;
  /* The most lanes the postprocessor vectorizes a loop with, and the
   * longest innermost loop left unsplit (MetaSchedule's
   * max_vectorize_extent). cpu: 64. */
  int max_vectorize_extent;
} loom_target;

/* The longest key loom_target_key writes, with its terminating zero. */
#define LOOM_TARGET_KEY_MAX 512

/* The CPU this runs on, read at run time; never fails: what cannot be read
 * gets a conservative value (16-byte vectors, one core). A cuda target is
 * read with loom_target_parse("cuda", ...): the GPU of this machine when the
 * driver finds one (gpu.is_detected), else the sm_90 preset. */
LOOM_API void loom_target_detect(loom_target *t);

/* A target from its textual form: the kind's detected machine (or, for a kind
 * that is not this machine, its defaults) with the options applied. Unknown
 * kinds, unknown options and bad values are errors located in spec (file
 * "<target>", line 1). */
LOOM_API loom_status loom_target_parse(const char *spec, loom_target *t,
                                       loom_diag *d);

/* The canonical text of t's hardware: its kind and every hardware option, in
 * the table's order ("cpu -cores=2 -vector-bytes=64 -fma=1 -l1d-bytes=..."),
 * truncated to n bytes. Parsing the key gives a target with the same key. */
LOOM_API void loom_target_key(const loom_target *t, char *buf, size_t n);

/* The name of a kind: "cpu", "cuda". */
LOOM_API const char *loom_target_kind_name(loom_target_kind k);

/* The C compiler flags for code that runs on t (a cpu, this machine):
 * optimized for the native CPU and, on x86, preferring vectors as wide as
 * t's registers ("-O3 -march=native -mprefer-vector-width=256"), truncated
 * to n bytes. */
LOOM_API void loom_target_cflags(const loom_target *t, char *buf, size_t n);

#endif
