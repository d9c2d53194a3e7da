/* Isolation: code run in a child comes back as a report. A kernel that
 * dereferences NULL is SIGSEGV, an endless loop is a timeout within bounded
 * time with nothing left running (not even a process the child started),
 * writes to shared memory reach the parent (kernel outputs, a timing taken
 * in the child), OpenMP works in a child, and many runs leak nothing. */
#define _DEFAULT_SOURCE /* kill, sleep, pause in a strict C11 build */
#include "loom/runtime.h"
#include "rt_util.h"
#include "test.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *kernels_src =
    "#include <stdint.h>\n"
    "int32_t null_deref(void **args) {\n"
    "  volatile int32_t *p = (volatile int32_t *)args[0];\n"
    "  return *p;\n"
    "}\n"
    "int32_t spin_forever(void **args) {\n"
    "  volatile int64_t *x = args[0];\n"
    "  for (;;) (*x)++;\n"
    "}\n"
    "int32_t iota(void **args) {\n"
    "  int32_t *a = args[0];\n"
    "  int64_t n = *(int64_t *)args[1];\n"
    "  for (int64_t i = 0; i < n; i++) a[i] = (int32_t)(i * i);\n"
    "  return 0;\n"
    "}\n";

/* A kernel and its arguments, as a child runs them. */
typedef struct call {
  test_kernel kernel;
  void **args;
} call;

static int run_call(void *ctx) {
  call *c = ctx;
  return c->kernel(c->args);
}

static int return_value(void *ctx) { return *(int *)ctx; }

static void test_exit_codes(void) {
  int values[] = {0, 3, 255, 256, -1};
  int kinds[] = {LOOM_RUNTIME_CHILD_OK, LOOM_RUNTIME_CHILD_EXIT,
                 LOOM_RUNTIME_CHILD_EXIT, LOOM_RUNTIME_CHILD_EXIT,
                 LOOM_RUNTIME_CHILD_EXIT};
  int codes[] = {0, 3, 255, 255, 255};
  for (int i = 0; i < 5; i++) {
    loom_runtime_child_result r;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_runtime_run_child(return_value, &values[i], 5000, &r, &d) == LOOM_OK);
    CHECK((int)r.kind == kinds[i] && r.exit_code == codes[i]);
    CHECK(r.ms >= 0 && r.ms < 5000 && r.pid > 0);
    CHECK(waitpid(r.pid, NULL, WNOHANG) < 0 && errno == ECHILD);
    loom_diag_free(&d);
  }
  char buf[64];
  loom_runtime_child_result r = {.kind = LOOM_RUNTIME_CHILD_EXIT, .exit_code = 3};
  CHECK_STREQ(loom_runtime_child_describe(&r, buf, sizeof buf), "exited with 3");
  r = (loom_runtime_child_result){.kind = LOOM_RUNTIME_CHILD_OK};
  CHECK_STREQ(loom_runtime_child_describe(&r, buf, sizeof buf), "ok");
  r = (loom_runtime_child_result){.kind = LOOM_RUNTIME_CHILD_TIMEOUT,
                                  .timeout_ms = 2000, .ms = 2001.5};
  CHECK_STREQ(loom_runtime_child_describe(&r, buf, sizeof buf),
              "timed out after 2000 ms");
  r = (loom_runtime_child_result){.kind = LOOM_RUNTIME_CHILD_SIGNAL, .signal = 99};
  CHECK_STREQ(loom_runtime_child_describe(&r, buf, sizeof buf),
              "killed by signal 99");
  CHECK_STREQ(loom_runtime_child_describe(&r, buf, 7), "killed");

  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_run_child(return_value, &values[0], -5, &r, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "timeout");
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_runtime_run_child(NULL, NULL, 0, &r, &d) == LOOM_ERROR);
  loom_diag_free(&d);
}

static void test_kernels(loom_runtime_lib *lib) {
  test_kernel null_deref =
      (test_kernel)loom_runtime_lib_symbol(lib, "null_deref");
  test_kernel spin =
      (test_kernel)loom_runtime_lib_symbol(lib, "spin_forever");
  test_kernel iota = (test_kernel)loom_runtime_lib_symbol(lib, "iota");
  CHECK(null_deref && spin && iota);
  if (!null_deref || !spin || !iota)
    return;
  loom_diag d;
  loom_diag_init(&d);
  loom_runtime_child_result r;
  char buf[64];

  /* NULL dereference: reported as SIGSEGV, and this process goes on. */
  void *null_args[1] = {NULL};
  call c = {null_deref, null_args};
  CHECK(loom_runtime_run_child(run_call, &c, 5000, &r, &d) == LOOM_OK);
  CHECK(r.kind == LOOM_RUNTIME_CHILD_SIGNAL && r.signal == SIGSEGV);
  CHECK_STREQ(loom_runtime_child_describe(&r, buf, sizeof buf),
              "killed by signal 11 (SIGSEGV)");

  /* An endless loop under a 300 ms limit: stopped in bounded time, reaped. */
  int64_t counter = 0;
  void *spin_args[1] = {&counter};
  c = (call){spin, spin_args};
  CHECK(loom_runtime_run_child(run_call, &c, 300, &r, &d) == LOOM_OK);
  CHECK(r.kind == LOOM_RUNTIME_CHILD_TIMEOUT);
  CHECK(r.ms >= 299 && r.ms < 3000);
  CHECK(is_gone(r.pid));
  CHECK(waitpid(r.pid, NULL, WNOHANG) < 0 && errno == ECHILD);
  CHECK_STREQ(loom_runtime_child_describe(&r, buf, sizeof buf),
              "timed out after 300 ms");
  CHECK(counter == 0); /* the child's writes to private memory stay there */

  /* A kernel writing a shared array: the parent sees the values. */
  int64_t n = 1000;
  loom_runtime_array *a = loom_runtime_array_new(LOOM_INT32, &n, 1, LOOM_RUNTIME_SHARED);
  CHECK(a != NULL);
  if (a) {
    void *iota_args[2] = {a->data, &n};
    c = (call){iota, iota_args};
    CHECK(loom_runtime_run_child(run_call, &c, 5000, &r, &d) == LOOM_OK);
    CHECK(r.kind == LOOM_RUNTIME_CHILD_OK);
    const int32_t *v = a->data;
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
      bad += v[i] != (int32_t)(i * i);
    CHECK(bad == 0);
  }
  loom_runtime_array_free(a);
  loom_diag_free(&d);
}

/* A runner's shape: the child times a kernel and hands the timing back
 * through shared memory. */
typedef struct timed_call {
  call c;
  loom_runtime_timing *timing; /* shared */
} timed_call;

static int time_in_child(void *ctx) {
  timed_call *t = ctx;
  loom_runtime_timer_config cfg = {.warmup = 1, .repeat = 3, .number = 2};
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_runtime_time(run_call, &t->c, &cfg, t->timing, &d);
  loom_diag_free(&d);
  return st == LOOM_OK ? 0 : 1;
}

static void test_timing_in_child(loom_runtime_lib *lib) {
  test_kernel iota = (test_kernel)loom_runtime_lib_symbol(lib, "iota");
  loom_runtime_timing *timing = loom_runtime_shared_alloc(sizeof *timing);
  int64_t n = 100000;
  loom_runtime_array *a = loom_runtime_array_new(LOOM_INT32, &n, 1, 0);
  CHECK(iota && timing && a);
  if (iota && timing && a) {
    void *args[2] = {a->data, &n};
    timed_call t = {{iota, args}, timing};
    loom_runtime_child_result r;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_runtime_run_child(time_in_child, &t, 10000, &r, &d) == LOOM_OK);
    CHECK(r.kind == LOOM_RUNTIME_CHILD_OK);
    CHECK(timing->repeat == 3 && timing->number == 2);
    CHECK(timing->median_ms > 0 && timing->median_ms < r.ms);
    loom_diag_free(&d);
  }
  loom_runtime_array_free(a);
  loom_runtime_shared_free(timing, sizeof *timing);
}

/* The child starts a process of its own that would sleep for a minute, then
 * hangs; the timeout must take the grandchild down with it. */
static int fork_and_hang(void *ctx) {
  volatile int *grandchild = ctx;
  pid_t p = fork();
  if (p == 0) {
    sleep(60);
    _exit(0);
  }
  *grandchild = (int)p;
  for (;;)
    pause();
}

static void test_grandchild_killed(void) {
  int *shared = loom_runtime_shared_alloc(sizeof(int));
  CHECK(shared != NULL);
  if (!shared)
    return;
  loom_runtime_child_result r;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_run_child(fork_and_hang, shared, 300, &r, &d) == LOOM_OK);
  CHECK(r.kind == LOOM_RUNTIME_CHILD_TIMEOUT);
  CHECK(*shared > 0);
  int gone = 0;
  for (int i = 0; i < 200 && !gone && *shared > 0; i++) {
    gone = is_gone(*shared);
    if (!gone)
      sleep_ms(5);
  }
  CHECK(gone);
  loom_diag_free(&d);
  loom_runtime_shared_free(shared, sizeof(int));
}

/* The child starts a process that would sleep for a minute, then returns at
 * once. That process holds the pipe the parent waits on, yet the run must end
 * promptly with no limit set, and the process must be killed with the group. */
static int fork_and_return(void *ctx) {
  volatile int *grandchild = ctx;
  pid_t p = fork();
  if (p == 0) {
    sleep(60);
    _exit(0);
  }
  *grandchild = (int)p;
  return 4;
}

static void test_grandchild_after_exit(void) {
  int *shared = loom_runtime_shared_alloc(sizeof(int));
  CHECK(shared != NULL);
  if (!shared)
    return;
  loom_runtime_child_result r;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_run_child(fork_and_return, shared, 0, &r, &d) == LOOM_OK);
  CHECK(r.kind == LOOM_RUNTIME_CHILD_EXIT && r.exit_code == 4);
  CHECK(r.ms < 2000);
  CHECK(*shared > 0);
  int gone = 0;
  for (int i = 0; i < 200 && !gone && *shared > 0; i++) {
    gone = is_gone(*shared);
    if (!gone)
      sleep_ms(5);
  }
  CHECK(gone);
  loom_diag_free(&d);
  loom_runtime_shared_free(shared, sizeof(int));
}

/* With SIGCHLD ignored the system reaps children itself and they cannot be
 * waited for: the run is an error naming the likely cause, not a hang. */
static void test_sigchld_ignored(void) {
  struct sigaction ign, old;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGCHLD, &ign, &old);
  int v = 0;
  loom_runtime_child_result r;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_run_child(return_value, &v, 5000, &r, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "SIGCHLD");
  CHECK(r.ms < 4000);
  loom_diag_free(&d);
  sigaction(SIGCHLD, &old, NULL);
}

/* Many short runs: no descriptor or child left over. */
static void test_no_leaks(void) {
  int fds_before = count_fds();
  int wrong = 0;
  for (int i = 0; i < 50; i++) {
    int v = i % 3;
    loom_runtime_child_result r;
    loom_diag d;
    loom_diag_init(&d);
    wrong += loom_runtime_run_child(return_value, &v, i % 2 ? 5000 : 0, &r, &d) != LOOM_OK;
    wrong += r.exit_code != v;
    loom_diag_free(&d);
  }
  CHECK(wrong == 0);
  CHECK(count_fds() == fds_before);
  CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

static const char *omp_src =
    "#include <stdint.h>\n"
    "int32_t twice(void **args) {\n"
    "  float *y = args[0];\n"
    "  int64_t n = *(int64_t *)args[1];\n"
    "  #pragma omp parallel for\n"
    "  for (int64_t i = 0; i < n; i++) y[i] = (float)i * 2.0f;\n"
    "  return 0;\n"
    "}\n";

/* An OpenMP kernel in a child, writing a shared array. This process never
 * runs a parallel region itself: the OpenMP runtime's thread pool does not
 * survive fork, which is why kernels are run only in children. */
static void test_openmp_in_child(void) {
  loom_runtime_lib *lib = compile_src(omp_src, true);
  CHECK(lib != NULL);
  if (!lib)
    return;
  test_kernel k = (test_kernel)loom_runtime_lib_symbol(lib, "twice");
  int64_t n = 1 << 16;
  loom_runtime_array *a = loom_runtime_array_new(LOOM_FLOAT32, &n, 1, LOOM_RUNTIME_SHARED);
  CHECK(k && a);
  if (k && a) {
    void *args[2] = {a->data, &n};
    call c = {k, args};
    loom_runtime_child_result r;
    loom_diag d;
    loom_diag_init(&d);
    for (int round = 0; round < 2; round++) {
      memset(a->data, 0, a->n_bytes);
      CHECK(loom_runtime_run_child(run_call, &c, 5000, &r, &d) == LOOM_OK);
      CHECK(r.kind == LOOM_RUNTIME_CHILD_OK);
      const float *y = a->data;
      int bad = 0;
      for (int64_t i = 0; i < n; i++)
        bad += y[i] != (float)i * 2.0f;
      CHECK(bad == 0);
    }
    loom_diag_free(&d);
  }
  loom_runtime_array_free(a);
  loom_runtime_lib_free(lib);
}

int main(void) {
  test_exit_codes();
  loom_runtime_lib *lib = compile_src(kernels_src, false);
  CHECK(lib != NULL);
  if (lib) {
    test_kernels(lib);
    test_timing_in_child(lib);
  }
  loom_runtime_lib_free(lib);
  test_grandchild_killed();
  test_grandchild_after_exit();
  test_openmp_in_child();
  test_sigchld_ignored();
  test_no_leaks();
  return test_summary("runtime_child");
}
