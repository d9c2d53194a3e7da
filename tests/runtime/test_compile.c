/* Compiling and loading C kernels: a kernel called through the loom calling
 * convention on runtime arrays computes what plain C computes; compiler
 * errors come back as diagnostics carrying the compiler's own message;
 * fifty compile/free cycles leak no descriptors and leave no files; OpenMP
 * kernels build and run. */
#include "loom/runtime.h"
#include "rt_util.h"
#include "test.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* C[i, j] = A[i, k] * B[k, j] summed over k, plus a scalar bias. */
static const char *matmul_src =
    "#include <stdint.h>\n"
    "int32_t mm(void **args) {\n"
    "  const float *A = args[0], *B = args[1];\n"
    "  float *C = args[2];\n"
    "  int64_t n = *(int64_t *)args[3], bias = *(int64_t *)args[4];\n"
    "  for (int64_t i = 0; i < n; i++)\n"
    "    for (int64_t j = 0; j < n; j++) {\n"
    "      float s = 0;\n"
    "      for (int64_t k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];\n"
    "      C[i * n + j] = s + (float)bias;\n"
    "    }\n"
    "  return 0;\n"
    "}\n"
    "int32_t fails(void **args) { (void)args; return 7; }\n";

static void test_matmul_kernel(void) {
  loom_runtime_lib *lib = compile_src(matmul_src, false);
  CHECK(lib != NULL);
  if (!lib)
    return;
  test_kernel mm = (test_kernel)loom_runtime_lib_symbol(lib, "mm");
  test_kernel fails =
      (test_kernel)loom_runtime_lib_symbol(lib, "fails");
  CHECK(mm && fails);
  CHECK(loom_runtime_lib_symbol(lib, "no_such_kernel") == NULL);
  int64_t n = 19, bias = 3, shape[2] = {n, n};
  loom_runtime_array *A = loom_runtime_array_new(LOOM_FLOAT32, shape, 2, 0);
  loom_runtime_array *B = loom_runtime_array_new(LOOM_FLOAT32, shape, 2, 0);
  loom_runtime_array *C = loom_runtime_array_new(LOOM_FLOAT32, shape, 2, 0);
  CHECK(A && B && C);
  if (mm && fails && A && B && C) {
    loom_runtime_array_fill(A, 1);
    loom_runtime_array_fill(B, 2);
    void *args[5] = {A->data, B->data, C->data, &n, &bias};
    CHECK(mm(args) == 0);
    CHECK(fails(args) == 7);
    const float *a = A->data, *b = B->data, *c = C->data;
    double worst = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t k = 0; k < n; k++)
          s += (double)a[i * n + k] * b[k * n + j];
        double err = fabs(c[i * n + j] - (s + bias));
        worst = err > worst ? err : worst;
      }
    CHECK(worst < 1e-4);
  }
  loom_runtime_array_free(A);
  loom_runtime_array_free(B);
  loom_runtime_array_free(C);
  loom_runtime_lib_free(lib);
}

/* Every failure is an error with the cause in the diagnostic, and leaves
 * nothing in the temporary directory. */
static void test_compile_error(void) {
  char dir[] = "/tmp/loom-rt-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  const char *src = "int f(void) { return undeclared_thing_42; }\n";
  loom_runtime_cc_options opt = {.flags = "-O0", .tmpdir = dir};
  loom_runtime_lib *lib = (loom_runtime_lib *)&opt; /* must be reset to NULL */
  double ms = -1;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_compile(src, strlen(src), &opt, &lib, &ms, &d) == LOOM_ERROR);
  CHECK(lib == NULL && ms > 0);
  CHECK_CONTAINS(d.msg, "C compiler");
  loom_buf b;
  loom_buf_init(&b);
  loom_diag_render(&d, &b);
  CHECK_CONTAINS(b.data, "undeclared_thing_42");
  CHECK_CONTAINS(b.data, "note:");
  loom_buf_free(&b);
  loom_diag_free(&d);

  /* A compiler that does not exist is an error, not a crash. */
  opt.cc = "loom-no-such-compiler-xyz";
  loom_diag_init(&d);
  CHECK(loom_runtime_compile(src, strlen(src), &opt, &lib, NULL, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "loom-no-such-compiler-xyz");
  loom_diag_free(&d);

  /* A bad flag reaches the compiler, whose complaint comes back. */
  opt.cc = NULL;
  opt.flags = "-O1 --loom-bogus-flag";
  const char *good = "int g(void) { return 1; }\n";
  loom_diag_init(&d);
  CHECK(loom_runtime_compile(good, strlen(good), &opt, &lib, NULL, &d) == LOOM_ERROR);
  loom_buf_init(&b);
  loom_diag_render(&d, &b);
  CHECK_CONTAINS(b.data, "loom-bogus-flag");
  loom_buf_free(&b);
  loom_diag_free(&d);

  /* Builds, but does not load: RTLD_NOW resolves every symbol up front. */
  const char *unresolved =
      "extern int loom_missing_symbol_xyz;\n"
      "int f(void) { return loom_missing_symbol_xyz; }\n";
  opt.flags = "-O0";
  loom_diag_init(&d);
  CHECK(loom_runtime_compile(unresolved, strlen(unresolved), &opt, &lib, NULL, &d) ==
        LOOM_ERROR);
  CHECK(lib == NULL);
  CHECK_CONTAINS(d.msg, "cannot load");
  CHECK_CONTAINS(d.msg, "loom_missing_symbol_xyz");
  loom_diag_free(&d);

  CHECK(count_entries(dir) == 0);
  rmdir(dir);

  /* A temporary directory that cannot be made. */
  opt.flags = "-O1";
  opt.tmpdir = "/nonexistent/loom/dir";
  loom_diag_init(&d);
  CHECK(loom_runtime_compile(good, strlen(good), &opt, &lib, NULL, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "/nonexistent/loom/dir");
  loom_diag_free(&d);
}

/* A compiler that hangs: a script that starts a long sleep and waits for
 * it. Under a 300 ms limit the compile fails in bounded time, and the sleep
 * it started is killed with it. */
static void test_compiler_timeout(void) {
  char dir[] = "/tmp/loom-rt-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char script[128], pidfile[128];
  snprintf(script, sizeof script, "%s/hang-cc", dir);
  snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
  FILE *f = fopen(script, "w");
  CHECK(f != NULL);
  if (!f)
    return;
  fprintf(f, "#!/bin/sh\nsleep 60 &\necho $! > %s\nwait\n", pidfile);
  fclose(f);
  chmod(script, 0700);
  loom_runtime_cc_options opt = {.cc = script, .flags = "", .timeout_ms = 300};
  loom_runtime_lib *lib = NULL;
  double ms = 0;
  loom_diag d;
  loom_diag_init(&d);
  const char *src = "int f(void) { return 0; }\n";
  CHECK(loom_runtime_compile(src, strlen(src), &opt, &lib, &ms, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "timed out after 300 ms");
  CHECK(lib == NULL && ms >= 299 && ms < 5000);
  loom_diag_free(&d);
  int pid = 0;
  f = fopen(pidfile, "r");
  CHECK(f && fscanf(f, "%d", &pid) == 1 && pid > 0);
  if (f)
    fclose(f);
  int gone = 0;
  for (int i = 0; i < 200 && !gone && pid > 0; i++) {
    gone = is_gone(pid);
    if (!gone)
      sleep_ms(5);
  }
  CHECK(gone);
  unlink(pidfile);
  unlink(script);
  rmdir(dir);
}

/* Fifty compile, call and free cycles in a private temporary directory: the
 * descriptor count is unchanged and the directory is left empty. Each
 * library returns a different constant, so a stale library handed back by
 * dlopen would show. */
static void test_no_leaks(void) {
  char dir[] = "/tmp/loom-rt-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  int fds_before = count_fds();
  int wrong = 0, failed = 0;
  for (int i = 0; i < 50; i++) {
    char src[128];
    snprintf(src, sizeof src, "int value(void) { return %d; }\n", 1000 + i);
    loom_runtime_cc_options opt = {.flags = "-O0", .tmpdir = dir};
    loom_runtime_lib *lib = NULL;
    loom_diag d;
    loom_diag_init(&d);
    if (loom_runtime_compile(src, strlen(src), &opt, &lib, NULL, &d) != LOOM_OK) {
      failed++;
    } else {
      int (*value)(void) = (int (*)(void))loom_runtime_lib_symbol(lib, "value");
      wrong += !value || value() != 1000 + i;
      loom_runtime_lib_free(lib);
    }
    loom_diag_free(&d);
    if (count_entries(dir) != 0)
      wrong++;
  }
  CHECK(failed == 0 && wrong == 0);
  CHECK(count_fds() == fds_before);
  CHECK(count_entries(dir) == 0);
  rmdir(dir);
}

/* Compiles from two threads at once, as a parallel builder does; each
 * library must be its own. */
typedef struct worker {
  int base, wrong;
} worker;

static void *compile_worker(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 4; i++) {
    char src[128];
    snprintf(src, sizeof src, "int value(void) { return %d; }\n", w->base + i);
    loom_runtime_cc_options opt = {.flags = "-O0\t-g0\n"};
    loom_runtime_lib *lib = NULL;
    loom_diag d;
    loom_diag_init(&d);
    if (loom_runtime_compile(src, strlen(src), &opt, &lib, NULL, &d) != LOOM_OK) {
      w->wrong++;
    } else {
      int (*value)(void) = (int (*)(void))loom_runtime_lib_symbol(lib, "value");
      w->wrong += !value || value() != w->base + i;
      loom_runtime_lib_free(lib);
    }
    loom_diag_free(&d);
  }
  return NULL;
}

static void test_parallel_compiles(void) {
  worker ws[2] = {{100, 0}, {200, 0}};
  pthread_t th[2];
  int started = 0;
  for (int i = 0; i < 2; i++)
    started += pthread_create(&th[i], NULL, compile_worker, &ws[i]) == 0;
  CHECK(started == 2);
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  CHECK(ws[0].wrong == 0 && ws[1].wrong == 0);
}

static const char *omp_src =
    "#include <stdint.h>\n"
    "#include <omp.h>\n"
    "int32_t saxpy(void **args) {\n"
    "  float *y = args[0];\n"
    "  const float *x = args[1];\n"
    "  int64_t n = *(int64_t *)args[2];\n"
    "  int32_t *threads = args[3];\n"
    "  #pragma omp parallel for\n"
    "  for (int64_t i = 0; i < n; i++) {\n"
    "    y[i] = 2.0f * x[i] + y[i];\n"
    "    if (i == 0) *threads = omp_get_num_threads();\n"
    "  }\n"
    "  return 0;\n"
    "}\n";

static void openmp_once(void) {
  loom_runtime_lib *lib = compile_src(omp_src, true);
  CHECK(lib != NULL);
  if (!lib)
    return;
  test_kernel k = (test_kernel)loom_runtime_lib_symbol(lib, "saxpy");
  int64_t n = 100003;
  loom_runtime_array *x = loom_runtime_array_new(LOOM_FLOAT32, &n, 1, 0);
  loom_runtime_array *y = loom_runtime_array_new(LOOM_FLOAT32, &n, 1, 0);
  int32_t threads = 0;
  CHECK(k && x && y);
  if (k && x && y) {
    loom_runtime_array_fill(x, 5);
    loom_runtime_array_fill(y, 6);
    float *y0 = malloc((size_t)n * sizeof *y0);
    memcpy(y0, y->data, (size_t)n * sizeof *y0);
    void *args[4] = {y->data, x->data, &n, &threads};
    CHECK(k(args) == 0);
    const float *xs = x->data, *ys = y->data;
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
      bad += fabsf(ys[i] - (2.0f * xs[i] + y0[i])) > 1e-6f;
    CHECK(bad == 0);
    CHECK(threads >= 1);
    free(y0);
  }
  loom_runtime_array_free(x);
  loom_runtime_array_free(y);
  loom_runtime_lib_free(lib);
}

/* Twice, with the first library freed between: the OpenMP runtime's parked
 * worker threads must outlive the kernel that started them. */
static void test_openmp(void) {
  openmp_once();
  sleep_ms(20);
  openmp_once();
  sleep_ms(20);
}

int main(void) {
  test_matmul_kernel();
  test_compile_error();
  test_compiler_timeout();
  test_no_leaks();
  test_parallel_compiles();
  test_openmp();
  return test_summary("runtime_compile");
}
