/* The CPU target: what the rules and postprocessors need to know about the
 * machine (cores, SIMD width, FMA, caches), read at run time from cpuid or
 * /proc/cpuinfo and sysfs, and a textual form that overrides any of it. */
#include "loom/space.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
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

#if defined(__x86_64__) || defined(__i386__)
/* XCR0 bits say whether the OS saves the wide registers; a CPU that has
 * AVX-512 under an OS that does not enable it cannot use it. */
static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static void detect_simd(loom_target *t) {
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
static void detect_simd(loom_target *t) {
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
static void detect_caches(loom_target *t) {
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
  if (t->vector_bytes >= 32) {
    snprintf(buf, n, "-O3 -march=native -mprefer-vector-width=%d",
             t->vector_bytes * 8);
    return;
  }
#else
  (void)t;
#endif
  snprintf(buf, n, "-O3 -march=native");
}

void loom_target_detect(loom_target *t) {
  memset(t, 0, sizeof *t);
  t->vector_bytes = DEFAULT_VECTOR_BYTES;
  t->min_parallel_work = DEFAULT_MIN_PARALLEL_WORK;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  t->cores = n > 0 && n < 1 << 20 ? (int)n : 1;
  detect_simd(t);
  detect_caches(t);
}

/* ---- the textual form ----------------------------------------------------- */

typedef enum { KEY_INT, KEY_BYTES, KEY_BOOL } key_type;

/* The keys a spec may override: one row each. */
static const struct target_key {
  const char *name;
  key_type type;
  size_t offset;
} keys[] = {
    {"cores", KEY_INT, offsetof(loom_target, cores)},
    {"vector-bytes", KEY_INT, offsetof(loom_target, vector_bytes)},
    {"fma", KEY_BOOL, offsetof(loom_target, has_fma)},
    {"l1d-bytes", KEY_BYTES, offsetof(loom_target, l1d_bytes)},
    {"l2-bytes", KEY_BYTES, offsetof(loom_target, l2_bytes)},
    {"l3-bytes", KEY_BYTES, offsetof(loom_target, l3_bytes)},
    {"tensorize", KEY_BOOL, offsetof(loom_target, tensorize)},
    {"min-parallel-work", KEY_BYTES, offsetof(loom_target, min_parallel_work)},
};
#define N_KEYS (int)(sizeof keys / sizeof *keys)

static loom_loc at(const char *spec, const char *p) {
  return (loom_loc){.file = "<target>", .line = 1, .col = (int)(p - spec) + 1};
}

static loom_status set_key(const char *spec, const char *key, size_t klen,
                           const char *val, size_t vlen, loom_target *t,
                           loom_diag *d) {
  const struct target_key *k = NULL;
  for (int i = 0; i < N_KEYS; i++)
    if (strlen(keys[i].name) == klen && !strncmp(keys[i].name, key, klen))
      k = &keys[i];
  if (!k)
    return loom_diag_error(d, at(spec, key),
                           "unknown target option '-%.*s' (known: -cores, "
                           "-vector-bytes, -fma, -l1d-bytes, -l2-bytes, "
                           "-l3-bytes, -tensorize, -min-parallel-work)",
                           (int)klen, key);
  char buf[32];
  char *end = NULL;
  long long v = 0;
  if (vlen > 0 && vlen < sizeof buf) {
    memcpy(buf, val, vlen);
    buf[vlen] = 0;
    errno = 0;
    v = strtoll(buf, &end, 10);
  }
  if (!end || *end || errno || vlen == 0)
    return loom_diag_error(d, at(spec, val),
                           "target option '-%s' needs an integer, not '%.*s'",
                           k->name, (int)vlen, val);
  char *field = (char *)t + k->offset;
  switch (k->type) {
  case KEY_BOOL:
    if (v != 0 && v != 1)
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' is 0 or 1, not %lld",
                             k->name, v);
    *(bool *)field = v;
    break;
  case KEY_INT:
    if (v < 1 || v > 4096)
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' must be between 1 and "
                             "4096, not %lld",
                             k->name, v);
    if (!strcmp(k->name, "vector-bytes") && (v & (v - 1)))
      return loom_diag_error(d, at(spec, val),
                             "target option '-vector-bytes' must be a power "
                             "of two, not %lld",
                             v);
    *(int *)field = (int)v;
    break;
  case KEY_BYTES:
    if (v < 0)
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' must not be negative",
                             k->name);
    *(int64_t *)field = v;
    break;
  }
  return LOOM_OK;
}

loom_status loom_target_parse(const char *spec, loom_target *t,
                              loom_diag *d) {
  loom_target_detect(t);
  const char *p = spec;
  while (isspace((unsigned char)*p))
    p++;
  if (strncmp(p, "cpu", 3) || (p[3] && !isspace((unsigned char)p[3])))
    return loom_diag_error(d, at(spec, p),
                           "unknown target '%s' (only \"cpu\", with options "
                           "such as \"cpu -cores=4\", is known)",
                           spec);
  p += 3;
  for (;;) {
    while (isspace((unsigned char)*p))
      p++;
    if (!*p)
      return LOOM_OK;
    if (*p != '-')
      return loom_diag_error(d, at(spec, p),
                             "expected a target option '-key=value'");
    const char *key = ++p;
    while (*p && *p != '=' && !isspace((unsigned char)*p))
      p++;
    if (*p != '=')
      return loom_diag_error(d, at(spec, key),
                             "target option '-%.*s' needs '=value'",
                             (int)(p - key), key);
    size_t klen = (size_t)(p - key);
    const char *val = ++p;
    while (*p && !isspace((unsigned char)*p))
      p++;
    TRY(set_key(spec, key, klen, val, (size_t)(p - val), t, d));
  }
}
