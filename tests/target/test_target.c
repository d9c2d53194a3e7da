/* Targets: detection gives sane values on this machine, the textual form
 * overrides them or is refused with a located message, and the key names the
 * hardware and nothing else. */
#include "loom/target.h"
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

/* A GPU: the driver's when there is one, a named architecture's figures
 * when asked for, overridden by options whichever comes first. */
static void check_cuda(void) {
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cuda", &t, &d) == LOOM_OK);
  CHECK(t.kind == LOOM_TARGET_CUDA && !strcmp(loom_target_kind_name(t.kind), "cuda"));
  if (t.gpu.is_detected) {
    CHECK(t.gpu.sm >= 50 && t.gpu.multiprocessors > 0 && t.gpu.warp_size == 32);
    CHECK(t.gpu.shared_per_block_optin >= t.gpu.shared_per_block);
    CHECK(t.gpu.bandwidth_gbps > 0 && t.gpu.l2_bytes > 0);
  } else {
    CHECK(t.gpu.sm == 90 && t.gpu.multiprocessors == 132);
  }
  CHECK(loom_target_parse("cuda -arch=sm_80", &t, &d) == LOOM_OK);
  if (!t.gpu.is_detected) {
    CHECK(t.gpu.sm == 80 && t.gpu.multiprocessors == 108 &&
          t.gpu.shared_per_block_optin == 163 * 1024 &&
          t.gpu.l2_bytes == 40 << 20);
    char key[LOOM_TARGET_KEY_MAX];
    loom_target_key(&t, key, sizeof key);
    CHECK_STREQ(key, "cuda -arch=sm_80 -multiprocessors=108 -max-threads-per-block=1024 "
                     "-max-threads-per-sm=2048 -warp-size=32 -shared-per-block=49152 "
                     "-shared-per-block-optin=166912 -shared-per-sm=167936 "
                     "-regs-per-sm=65536 -regs-per-block=65536 -regs-per-thread=255 "
                     "-l2-bytes=41943040 -bandwidth-gbps=2039 -clock-mhz=1410");
  }
  CHECK((t.gpu.tensor_cores & (LOOM_TC_F16 | LOOM_TC_BF16 | LOOM_TC_INT8)) ==
        (LOOM_TC_F16 | LOOM_TC_BF16 | LOOM_TC_INT8));
  CHECK(!(t.gpu.tensor_cores & LOOM_TC_WGMMA));
  CHECK(loom_target_parse("cuda -arch=sm_90a", &t, &d) == LOOM_OK);
  CHECK(t.gpu.sm == 90 && (t.gpu.tensor_cores & LOOM_TC_WGMMA) &&
        (t.gpu.tensor_cores & LOOM_TC_FP8));
  /* The architecture goes first wherever it is written. */
  CHECK(loom_target_parse("cuda -multiprocessors=100 -arch=sm_80 "
                          "-max-innermost-factor=16",
                          &t, &d) == LOOM_OK);
  CHECK(t.gpu.sm == 80 && t.gpu.multiprocessors == 100 &&
        t.max_innermost_factor == 16);
  /* Keys read back, and differ between machines and kinds. */
  char key[LOOM_TARGET_KEY_MAX], again[LOOM_TARGET_KEY_MAX];
  loom_target_key(&t, key, sizeof key);
  CHECK(loom_target_parse(key, &t, &d) == LOOM_OK);
  loom_target_key(&t, again, sizeof again);
  CHECK_STREQ(again, key);
  CHECK(loom_target_parse("cuda -arch=sm_90", &t, &d) == LOOM_OK);
  loom_target_key(&t, again, sizeof again);
  CHECK(strcmp(again, key) != 0 && !strncmp(again, "cuda -arch=sm_90 ", 17));
  loom_diag_free(&d);
}

/* The key of the target spec reads as. */
static void key_of(const char *spec, char key[LOOM_TARGET_KEY_MAX]) {
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse(spec, &t, &d) == LOOM_OK);
  loom_target_key(&t, key, LOOM_TARGET_KEY_MAX);
  loom_diag_free(&d);
}

int main(void) {
  loom_target t;
  loom_target_detect(&t);
  CHECK(t.cpu.cores >= 1);
  CHECK(t.cpu.vector_bytes == 16 || t.cpu.vector_bytes == 32 || t.cpu.vector_bytes == 64);
  CHECK(t.cpu.l1d_bytes >= 0 && t.cpu.l2_bytes >= 0 && t.cpu.l3_bytes >= 0);

  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu", &t, &d) == LOOM_OK);
  CHECK(t.cpu.cores >= 1);
  CHECK(loom_target_parse("  cpu -cores=4 -vector-bytes=64 -fma=0 "
                          "-l2-bytes=1048576",
                          &t, &d) == LOOM_OK);
  CHECK(t.cpu.cores == 4 && t.cpu.vector_bytes == 64 && !t.cpu.has_fma &&
        t.cpu.l2_bytes == 1048576);
  CHECK(loom_target_parse("cpu -fma=1 -l1d-bytes=0", &t, &d) == LOOM_OK);
  CHECK(t.cpu.has_fma && t.cpu.l1d_bytes == 0);

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

  /* The design-space defaults come with the kind, and are options. */
  CHECK(loom_target_parse("cpu", &t, &d) == LOOM_OK);
  CHECK(t.kind == LOOM_TARGET_CPU && !strcmp(loom_target_kind_name(t.kind), "cpu"));
  CHECK(t.max_innermost_factor == 64 && t.max_jobs_per_core == 16 &&
        t.max_vectorize_extent == 64 &&
        t.min_parallel_work == 65536 && !t.tensorize);
  CHECK(loom_target_parse("cpu -max-innermost-factor=16 -max-jobs-per-core=4",
                          &t, &d) == LOOM_OK);
  CHECK(t.max_innermost_factor == 16 && t.max_jobs_per_core == 4);

  /* The key: the kind and the hardware, in the table's order; options that
   * only steer the design space are not part of it. Read back, it gives
   * the same key. */
  char key[LOOM_TARGET_KEY_MAX], again[LOOM_TARGET_KEY_MAX];
  key_of("cpu -cores=2 -vector-bytes=64 -fma=1 -l1d-bytes=49152 "
         "-l2-bytes=1048576 -l3-bytes=33554432 -tensorize=1",
         key);
  CHECK_STREQ(key, "cpu -cores=2 -vector-bytes=64 -fma=1 -l1d-bytes=49152 "
                   "-l2-bytes=1048576 -l3-bytes=33554432");
  key_of(key, again);
  CHECK_STREQ(again, key);
  loom_target_detect(&t);
  loom_target_key(&t, key, sizeof key);
  CHECK(!strncmp(key, "cpu -cores=", 11));
  key_of(key, again);
  CHECK_STREQ(again, key);
  /* Another machine, another key; another design-space option, the same. */
  key_of("cpu -cores=2", key);
  key_of("cpu -cores=3", again);
  CHECK(strcmp(key, again) != 0);
  key_of("cpu -cores=2 -min-parallel-work=0", again);
  CHECK_STREQ(again, key);
  /* A short buffer is truncated, not overrun. */
  char tiny[8];
  loom_target_key(&t, tiny, sizeof tiny);
  CHECK_STREQ(tiny, "cpu -co");
  loom_diag_free(&d);

  check_cuda();

  check_error("gpu", 1, "unknown target 'gpu'");
  check_error("cuda -arch=sm_75", 12, "no preset for architecture 'sm_75' (known: sm_80");
  check_error("cuda -arch=90", 12, "an architecture such as sm_90, not '90'");
  check_error("cuda -arch=sm_9", 12, "an architecture such as sm_90");
  check_error("cuda -cores=2", 7, "a cuda target knows -arch, -multiprocessors");
  check_error("cuda -warp-size=33", 17, "power of two");
  check_error("cuda -regs-per-sm=0", 19, "between 1 and 1073741824");
  check_error("cpux", 1, "unknown target");
  check_error("cpu -threads=4", 6, "unknown target option '-threads'");
  check_error("cpu -threads=4", 6, "knows -cores, -vector-bytes, -fma");
  check_error("cpu -max-innermost-factor=0", 27, "between 1 and 4096");
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
