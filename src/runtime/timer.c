/* Timing calls the way TVM's time evaluator does: warm-up, then repeated
 * measurements of `number` back-to-back calls each, optionally starting every
 * measurement with a cold last-level cache. */
#define _GNU_SOURCE /* _SC_LEVEL3_CACHE_SIZE */
#include "runtime/runtime_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FALLBACK_CACHE_BYTES ((size_t)64 << 20)
#define MAX_FLUSH_BYTES ((size_t)1 << 30)
/* Limits that keep a configuration from running for days or overflowing. */
#define MAX_REPEAT 100000
#define MAX_NUMBER 1000000000

double runtime_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

loom_runtime_timer_config loom_runtime_timer_default(void) {
  loom_runtime_timer_config c = {.warmup = 1, .repeat = 5, .number = 0,
                                 .min_repeat_ms = 10, .flush_cache = false};
  return c;
}

/* Parses a cache size as /sys writes it ("32768K", "36M"). */
static size_t parse_size(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s)
    return 0;
  if (*end == 'K')
    v <<= 10;
  else if (*end == 'M')
    v <<= 20;
  else if (*end == 'G')
    v <<= 30;
  return (size_t)v;
}

/* The largest size among cpu0's caches in /sys, 0 if none can be read. */
static size_t sys_cache_bytes(void) {
  size_t best = 0;
  for (int i = 0; i < 16; i++) {
    char path[96], line[64];
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "re");
    if (!f)
      break;
    if (fgets(line, sizeof line, f)) {
      size_t v = parse_size(line);
      if (v > best)
        best = v;
    }
    fclose(f);
  }
  return best;
}

size_t loom_runtime_cache_bytes(void) {
  long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (v <= 0)
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (v > 0)
    return (size_t)v;
  size_t s = sys_cache_bytes();
  return s ? s : FALLBACK_CACHE_BYTES;
}

/* Reads and writes every cache line of buf so that what the measured call
 * touched is evicted. The accesses are volatile: buf is freed unread, and the
 * compiler would otherwise be free to drop every store. */
static void flush(unsigned char *buf, size_t n) {
  volatile unsigned char *p = buf;
  for (size_t i = 0; i < n; i += 64)
    p[i] = (unsigned char)(p[i] + 1);
}

/* Twice the largest cache, so that what survives a pass is never the
 * kernel's data whatever the replacement policy; capped, because a bogus
 * size from the system must not cost gigabytes per measurement. */
static size_t flush_bytes(void) {
  size_t n = loom_runtime_cache_bytes();
  return n > MAX_FLUSH_BYTES / 2 ? MAX_FLUSH_BYTES : n * 2;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static loom_status check_config(const loom_runtime_timer_config *c,
                                loom_diag *d) {
  if (c->warmup < 0 || c->warmup > MAX_REPEAT)
    return loom_diag_error(d, (loom_loc){0},
                           "timer warmup must be in 0..%d, not %d", MAX_REPEAT,
                           c->warmup);
  if (c->repeat < 1 || c->repeat > MAX_REPEAT)
    return loom_diag_error(d, (loom_loc){0},
                           "timer repeat must be in 1..%d, not %d", MAX_REPEAT,
                           c->repeat);
  if (c->number < 0 || c->number > MAX_NUMBER)
    return loom_diag_error(d, (loom_loc){0},
                           "timer number must be in 0..%d, not %d", MAX_NUMBER,
                           c->number);
  if (!(c->min_repeat_ms >= 0 && c->min_repeat_ms <= 3.6e6))
    return loom_diag_error(d, (loom_loc){0},
                           "timer min_repeat_ms must be in 0..3600000, not %g",
                           c->min_repeat_ms);
  return LOOM_OK;
}

/* Calls call(ctx) n times; *ms gets the elapsed time. */
static loom_status run_calls(int (*call)(void *), void *ctx, int n,
                             const char *phase, double *ms, loom_diag *d) {
  double t0 = runtime_now_ms();
  for (int i = 0; i < n; i++) {
    int rc = call(ctx);
    if (rc != 0)
      return loom_diag_error(d, (loom_loc){0},
                             "the timed call returned %d during %s", rc, phase);
  }
  *ms = runtime_now_ms() - t0;
  return LOOM_OK;
}

/* The smallest power-of-two-ish count of calls that lasts min_ms, found by
 * growing from one call. These runs double as warm-up. */
static loom_status choose_number(int (*call)(void *), void *ctx, double min_ms,
                                 int *number, loom_diag *d) {
  int n = 1;
  for (;;) {
    double ms;
    TRY(run_calls(call, ctx, n, "calibration", &ms, d));
    if (ms >= min_ms || n >= MAX_NUMBER)
      break;
    /* Aim a little past the target; at least double, at most 100x. */
    double want = ms > 0 ? (double)n * min_ms * 1.2 / ms : (double)n * 100;
    if (want > (double)n * 100)
      want = (double)n * 100;
    if (want < (double)n * 2)
      want = (double)n * 2;
    n = want > MAX_NUMBER ? MAX_NUMBER : (int)want;
  }
  *number = n;
  return LOOM_OK;
}

void loom_runtime_timing_of(double *per_call, int repeat, int number,
                      loom_runtime_timing *out) {
  double sum = 0;
  for (int i = 0; i < repeat; i++)
    sum += per_call[i];
  double mean = sum / repeat, var = 0;
  for (int i = 0; i < repeat; i++)
    var += (per_call[i] - mean) * (per_call[i] - mean);
  qsort(per_call, (size_t)repeat, sizeof *per_call, cmp_double);
  out->median_ms = repeat % 2 ? per_call[repeat / 2]
                              : (per_call[repeat / 2 - 1] + per_call[repeat / 2]) / 2;
  out->mean_ms = mean;
  out->min_ms = per_call[0];
  out->max_ms = per_call[repeat - 1];
  out->stddev_ms = repeat > 1 ? sqrt(var / (repeat - 1)) : 0;
  out->repeat = repeat;
  out->number = number;
}

loom_status loom_runtime_time(int (*call)(void *ctx), void *ctx,
                              const loom_runtime_timer_config *cfg,
                              loom_runtime_timing *out, loom_diag *d) {
  loom_runtime_timer_config c = cfg ? *cfg : loom_runtime_timer_default();
  memset(out, 0, sizeof *out);
  if (!call)
    return loom_diag_error(d, (loom_loc){0}, "no function to time");
  TRY(check_config(&c, d));
  double ms;
  TRY(run_calls(call, ctx, c.warmup, "warm-up", &ms, d));
  int number = c.number;
  if (number == 0)
    TRY(choose_number(call, ctx, c.min_repeat_ms, &number, d));
  double *per_call = malloc((size_t)c.repeat * sizeof *per_call);
  size_t flush_n = c.flush_cache ? flush_bytes() : 0;
  unsigned char *buf = flush_n ? calloc(flush_n, 1) : NULL;
  if (!per_call || (flush_n && !buf)) {
    free(per_call);
    free(buf);
    return LOOM_NOMEM;
  }
  loom_status st = LOOM_OK;
  for (int i = 0; i < c.repeat && st == LOOM_OK; i++) {
    if (buf)
      flush(buf, flush_n);
    st = run_calls(call, ctx, number, "measurement", &ms, d);
    per_call[i] = ms / number;
  }
  if (st == LOOM_OK)
    loom_runtime_timing_of(per_call, c.repeat, number, out);
  free(per_call);
  free(buf);
  return st;
}
