/* OpenBLAS at its best for a benchmark's peer: started without the
 * OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE some machines set, and, where its
 * own detection takes the CPU for an older core, started again with the
 * core the CPU matches. Shared by the benchmarks that link OpenBLAS. */
#ifndef LOOM_BENCH_OPENBLAS_ENV_H
#define LOOM_BENCH_OPENBLAS_ENV_H

#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The OpenBLAS kernels for what this CPU can do, when OpenBLAS's own
 * detection fell back to an older core; NULL when it did not. A CPU model
 * newer than the library (Emerald Rapids under 0.3.21) is taken for a
 * Prescott, SSE3 only: a peer three times slower than it can be. */
static inline const char *better_openblas_core(void) {
  static const char *const old[] = {"Prescott", "Core2", "Penryn", "Dunnington",
                                    "Nehalem", "Atom", "Katmai", "Coppermine",
                                    "Northwood", "Banias", "Generic"};
  const char *core = openblas_get_corename();
  bool is_old = false;
  for (size_t i = 0; core && i < sizeof old / sizeof *old; i++)
    is_old |= !strcasecmp(core, old[i]);
  if (!is_old)
    return NULL;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  return NULL;
}

/* Re-executes the program as the comment above says; returns nonzero when
 * that failed. *detected gets the core OpenBLAS had picked when the run is
 * the re-executed one (NULL otherwise). */
static inline int bench_openblas_setup(char **argv, const char **detected) {
  /* OpenBLAS reads these when it is loaded: start again without them, so
   * that it picks its kernels and blocking for this machine. Where its
   * pick is a core older than the CPU, start again with the core the CPU
   * matches (LOOM_BENCH_OPENBLAS_DETECTED keeps what it had picked). */
  *detected = getenv("LOOM_BENCH_OPENBLAS_DETECTED");
  if (!*detected && (getenv("OPENBLAS_CORETYPE") || getenv("OPENBLAS_L2_SIZE"))) {
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("OPENBLAS_L2_SIZE");
    execv("/proc/self/exe", argv);
    perror("re-exec");
    return 1;
  }
  const char *better = *detected ? NULL : better_openblas_core();
  if (better) {
    setenv("LOOM_BENCH_OPENBLAS_DETECTED", openblas_get_corename(), 1);
    setenv("OPENBLAS_CORETYPE", better, 1);
    execv("/proc/self/exe", argv);
    perror("re-exec");
    return 1;
  }
  return 0;
}

#endif
