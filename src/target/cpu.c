/* The cpu kind of target: what the rules and postprocessors need to know
 * about the machine (cores, SIMD width, FMA, caches), read at run time from
 * cpuid or /proc/cpuinfo and sysfs, the options that override it, and the
 * C compiler flags for code that runs on it. */
#include "target_impl.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* Conservative values for what cannot be read: SSE/NEON width, one core. */
#define DEFAULT_VECTOR_BYTES 16
/* Starting and joining the threads of a parallel loop costs microseconds
 * on every call, more than a function of fewer iterations than this takes
 * in all (100 float16 additions take well under one). */
#define DEFAULT_MIN_PARALLEL_WORK 65536
/* MetaSchedule's CPU defaults for its tiling and parallelizing rules. */
#define DEFAULT_MAX_INNERMOST_FACTOR 64
#define DEFAULT_MAX_JOBS_PER_CORE 16
#define DEFAULT_MAX_VECTORIZE_EXTENT 64

#if defined(__x86_64__) || defined(__i386__)
/* XCR0 bits say whether the OS saves the wide registers; a CPU that has
 * AVX-512 under an OS that does not enable it cannot use it. */
static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static void detect_simd(loom_cpu_desc *t) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return;
  bool has_osxsave = c & (1u << 27), has_avx = c & (1u << 28);
  t->has_fma = c & (1u << 12);
  uint64_t xcr0 = has_osxsave ? read_xcr0() : 0;
  bool os_ymm = (xcr0 & 0x6) == 0x6, os_zmm = (xcr0 & 0xe6) == 0xe6;
  if (!(has_avx && os_ymm)) {
    t->has_fma = false;
    return;
  }
  unsigned max_leaf = __get_cpuid_max(0, NULL);
  if (max_leaf < 7)
    return;
  __cpuid_count(7, 0, a, b, c, d);
  if (b & (1u << 5))
    t->vector_bytes = 32;           /* AVX2 */
  if ((b & (1u << 16)) && os_zmm)
    t->vector_bytes = 64;           /* AVX-512F */
}
#else
/* Elsewhere the flags line of /proc/cpuinfo tells (asimd on Arm is 16
 * bytes, already the default). */
static void detect_simd(loom_cpu_desc *t) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) && strncmp(line, "Features", 8))
      continue;
    if (strstr(line, " fma") || strstr(line, " asimd"))
      t->has_fma = true;
    if (strstr(line, " avx2"))
      t->vector_bytes = 32;
    if (strstr(line, " avx512f"))
      t->vector_bytes = 64;
    break;
  }
  fclose(f);
}
#endif

/* A sysfs size such as "32K", "1024K" or "32M"; 0 when unreadable. */
static int64_t read_size(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  char buf[64] = {0};
  bool ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok)
    return 0;
  char *end;
  long long v = strtoll(buf, &end, 10);
  if (v <= 0)
    return 0;
  int64_t scale = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1;
  return (int64_t)v * scale;
}

static bool read_word(const char *path, char *out, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  bool ok = fgets(out, (int)n, f) != NULL;
  fclose(f);
  if (ok)
    out[strcspn(out, "\n")] = 0;
  return ok;
}

/* cpu0's caches from sysfs: index<k>/{level,type,size}. */
static void detect_caches(loom_cpu_desc *t) {
  for (int k = 0; k < 16; k++) {
    char path[128], level[16], type[32];
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/level", k);
    if (!read_word(path, level, sizeof level))
      break;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/type", k);
    if (!read_word(path, type, sizeof type))
      continue;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/size", k);
    int64_t size = read_size(path);
    if (!strcmp(type, "Instruction"))
      continue;
    switch (atoi(level)) {
    case 1: t->l1d_bytes = size; break;
    case 2: t->l2_bytes = size; break;
    case 3: t->l3_bytes = size; break;
    default: break;
    }
  }
}

void loom_target_cflags(const loom_target *t, char *buf, size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  /* GCC's tuning for some CPUs (znver1, skylake-avx512) prefers vectors
   * narrower than the registers; loops tiled for the full width then run
   * at half of it. */
  if (t->kind == LOOM_TARGET_CPU && t->cpu.vector_bytes >= 32) {
    snprintf(buf, n, "-O3 -march=native -mprefer-vector-width=%d",
             t->cpu.vector_bytes * 8);
    return;
  }
#else
  (void)t;
#endif
  snprintf(buf, n, "-O3 -march=native");
}

void loom_target_detect(loom_target *t) {
  memset(t, 0, sizeof *t);
  t->kind = LOOM_TARGET_CPU;
  t->cpu.vector_bytes = DEFAULT_VECTOR_BYTES;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  t->cpu.cores = n > 0 && n < 1 << 20 ? (int)n : 1;
  detect_simd(&t->cpu);
  detect_caches(&t->cpu);
  t->min_parallel_work = DEFAULT_MIN_PARALLEL_WORK;
  t->max_innermost_factor = DEFAULT_MAX_INNERMOST_FACTOR;
  t->max_jobs_per_core = DEFAULT_MAX_JOBS_PER_CORE;
  t->max_vectorize_extent = DEFAULT_MAX_VECTORIZE_EXTENT;
}

#define CPU(field) offsetof(loom_target, cpu.field)

static const target_option cpu_options[] = {
    {"cores", OPT_INT, CPU(cores), true},
    {"vector-bytes", OPT_POW2, CPU(vector_bytes), true},
    {"fma", OPT_BOOL, CPU(has_fma), true},
    {"l1d-bytes", OPT_BYTES, CPU(l1d_bytes), true},
    {"l2-bytes", OPT_BYTES, CPU(l2_bytes), true},
    {"l3-bytes", OPT_BYTES, CPU(l3_bytes), true},
    {"tensorize", OPT_BOOL, offsetof(loom_target, tensorize), false},
    {"min-parallel-work", OPT_BYTES, offsetof(loom_target, min_parallel_work),
     false},
    {"max-innermost-factor", OPT_INT,
     offsetof(loom_target, max_innermost_factor), false},
    {"max-jobs-per-core", OPT_INT, offsetof(loom_target, max_jobs_per_core),
     false},
    {"max-vectorize-extent", OPT_INT,
     offsetof(loom_target, max_vectorize_extent), false},
};

const target_kind target_kind_cpu = {
    .name = "cpu",
    .init = loom_target_detect,
    .options = cpu_options,
    .n_options = (int)(sizeof cpu_options / sizeof *cpu_options),
};
