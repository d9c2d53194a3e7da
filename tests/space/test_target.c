/* The CPU target: detection gives sane values on this machine, and the
 * textual form overrides them or is refused with a located message. */
#include "loom/space.h"
#include "test.h"

static void check_error(const char *spec, int col, const char *msg) {
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse(spec, &t, &d) == LOOM_ERROR);
  CHECK(d.loc.col == col);
  CHECK_CONTAINS(d.msg, msg);
  loom_diag_free(&d);
}

int main(void) {
  loom_target t;
  loom_target_detect(&t);
  CHECK(t.cores >= 1);
  CHECK(t.vector_bytes == 16 || t.vector_bytes == 32 || t.vector_bytes == 64);
  CHECK(t.l1d_bytes >= 0 && t.l2_bytes >= 0 && t.l3_bytes >= 0);

  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu", &t, &d) == LOOM_OK);
  CHECK(t.cores >= 1);
  CHECK(loom_target_parse("  cpu -cores=4 -vector-bytes=64 -fma=0 "
                          "-l2-bytes=1048576",
                          &t, &d) == LOOM_OK);
  CHECK(t.cores == 4 && t.vector_bytes == 64 && !t.has_fma &&
        t.l2_bytes == 1048576);
  CHECK(loom_target_parse("cpu -fma=1 -l1d-bytes=0", &t, &d) == LOOM_OK);
  CHECK(t.has_fma && t.l1d_bytes == 0);

  /* The compiler flags follow the target's vector width on x86. */
  char flags[256];
  const struct { const char *spec, *want; } widths[] = {
    {"cpu -vector-bytes=16", NULL},
    {"cpu -vector-bytes=32", "-mprefer-vector-width=256"},
    {"cpu -vector-bytes=64", "-mprefer-vector-width=512"},
  };
  for (size_t i = 0; i < sizeof widths / sizeof *widths; i++) {
    CHECK(loom_target_parse(widths[i].spec, &t, &d) == LOOM_OK);
    loom_target_cflags(&t, flags, sizeof flags);
    CHECK_CONTAINS(flags, "-O3 -march=native");
#if defined(__x86_64__) || defined(__i386__)
    if (widths[i].want)
      CHECK_CONTAINS(flags, widths[i].want);
    else
      CHECK(!strstr(flags, "prefer-vector-width"));
#else
    CHECK(!strstr(flags, "prefer-vector-width"));
#endif
  }
  loom_diag_free(&d);

  check_error("gpu", 1, "unknown target 'gpu'");
  check_error("cpux", 1, "unknown target");
  check_error("cpu -threads=4", 6, "unknown target option '-threads'");
  check_error("cpu -cores", 6, "needs '=value'");
  check_error("cpu -cores=", 12, "needs an integer, not ''");
  check_error("cpu -cores=four", 12, "needs an integer, not 'four'");
  check_error("cpu -cores=0", 12, "between 1 and 4096");
  check_error("cpu -vector-bytes=24", 19, "power of two");
  check_error("cpu -fma=2", 10, "0 or 1");
  check_error("cpu cores=2", 5, "expected a target option");
  check_error("cpu -l2-bytes=-5", 15, "must not be negative");
  return test_summary("target");
}
