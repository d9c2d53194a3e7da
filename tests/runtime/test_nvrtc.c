/* NVRTC: CUDA C compiles to a cubin for sm_80 and sm_90 on a machine with
 * no GPU, with the registers and spills ptxas reports; a compile error
 * comes back as a diagnostic carrying NVRTC's own message; compiles run
 * from several threads at once. Without NVRTC the test is skipped, loudly,
 * and under CI (CI=true) it fails: the test command sets NVRTC up. */
#include "loom/runtime.h"
#include "test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char *add_src =
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "add(half *__restrict__ a, const half *__restrict__ b, int n) {\n"
    "  int i = blockIdx.x * 256 + threadIdx.x;\n"
    "  if (i < n)\n"
    "    a[i] = __hadd(a[i], b[i]);\n"
    "}\n";

static const char *bad_src =
    "extern \"C\" __global__ void broken(float *a) {\n"
    "  a[threadIdx.x] = undeclared_name;\n"
    "}\n";

static void check_cubin(loom_runtime_nvrtc *nv, int sm) {
  loom_runtime_cubin c;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_nvrtc_compile(nv, add_src, "add.cu", sm, &c, &d) == LOOM_OK);
  if (d.msg)
    fprintf(stderr, "sm_%d: %s\n", sm, d.msg);
  CHECK(c.data && c.size > 64 && !memcmp(c.data, "\x7f" "ELF", 4));
  CHECK(c.max_registers > 0 && c.max_registers <= 255 && c.spill_bytes == 0);
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d", sm);
  CHECK_CONTAINS(c.log, arch);
  printf("sm_%d: %zu-byte cubin, %d registers, %lld bytes spilled\n", sm, c.size,
         c.max_registers, (long long)c.spill_bytes);
  loom_runtime_cubin_free(&c);
  loom_diag_free(&d);
}

static void *compile_in_thread(void *nv) {
  loom_runtime_cubin c;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_runtime_nvrtc_compile(nv, add_src, "add.cu", 80, &c, &d);
  loom_runtime_cubin_free(&c);
  loom_diag_free(&d);
  return st == LOOM_OK ? nv : NULL;
}

int main(void) {
  loom_runtime_nvrtc *nv;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_runtime_nvrtc_open(&nv, &d) != LOOM_OK) {
    const char *ci = getenv("CI");
    fprintf(stderr, "NVRTC IS MISSING: %s\n", d.msg ? d.msg : "?");
    loom_diag_free(&d);
    if (ci && !strcmp(ci, "true")) {
      fprintf(stderr, "under CI the test command must set NVRTC up\n");
      return 1;
    }
    return 77;
  }
  int major, minor;
  loom_runtime_nvrtc_version(nv, &major, &minor);
  printf("NVRTC %d.%d from %s\n", major, minor, loom_runtime_nvrtc_path(nv));
  CHECK(major >= 11);

  check_cubin(nv, 80);
  check_cubin(nv, 90);

  /* A compile error names the file, the architecture and what NVRTC said. */
  loom_runtime_cubin c;
  CHECK(loom_runtime_nvrtc_compile(nv, bad_src, "broken.cu", 90, &c, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "broken.cu: NVRTC could not compile it for sm_90");
  bool says_why = false;
  for (int i = 0; i < d.n_notes; i++)
    says_why = says_why || strstr(d.notes[i].msg, "undeclared_name");
  CHECK(says_why);
  CHECK(c.data == NULL && c.log == NULL);
  loom_diag_free(&d);

  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    CHECK(pthread_create(&t[i], NULL, compile_in_thread, nv) == 0);
  for (int i = 0; i < 2; i++) {
    void *r = NULL;
    pthread_join(t[i], &r);
    CHECK(r == nv);
  }
  loom_runtime_nvrtc_close(nv);
  return test_summary("nvrtc");
}
