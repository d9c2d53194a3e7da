/* Task extraction (functions equal up to renaming are one task, weighted)
 * and the two task schedulers. */
#include "loom/script.h"
#include "loom/tune.h"
#include "test.h"

static const char *module =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func\n"
    "    def add_a(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
    "        for i in range(8):\n"
    "            B[i] = A[i] + T.float32(1.0)\n"
    "    @T.prim_func\n"
    "    def add_b(X: T.Buffer((8,), \"float32\"), Y: T.Buffer((8,), \"float32\")):\n"
    "        for j in range(8):\n"
    "            Y[j] = X[j] + T.float32(1.0)\n"
    "    @T.prim_func\n"
    "    def add_c(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
    "        for i in range(8):\n"
    "            B[i] = A[i] + T.float32(2.0)\n"
    "    @T.prim_func\n"
    "    def add_d(P: T.Buffer((8,), \"float32\"), Q: T.Buffer((8,), \"float32\")):\n"
    "        for k in range(8):\n"
    "            Q[k] = P[k] + T.float32(1.0)\n";

static void test_extract(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(module, strlen(module), "m.py", a, &m, &d) == LOOM_OK);
  loom_task *t;
  int n = 0;
  CHECK(loom_tune_extract_tasks(a, m, &t, &n) == LOOM_OK);
  CHECK(n == 2);
  if (n == 2) {
    CHECK_STREQ(t[0].func->name, "add_a");
    CHECK(t[0].weight == 3);
    CHECK_STREQ(t[1].func->name, "add_c");
    CHECK(t[1].weight == 1);
    CHECK(t[0].hash != t[1].hash);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void test_round_robin(void) {
  loom_task_scheduler *s = loom_task_scheduler_new(LOOM_TASK_ROUND_ROBIN, NULL, 3, 1);
  int seq[6];
  for (int i = 0; i < 3; i++)
    seq[i] = loom_task_scheduler_next(s);
  CHECK(seq[0] == 0 && seq[1] == 1 && seq[2] == 2);
  loom_task_scheduler_finish(s, 1);
  for (int i = 3; i < 6; i++)
    seq[i] = loom_task_scheduler_next(s);
  CHECK(seq[3] == 0 && seq[4] == 2 && seq[5] == 0);
  loom_task_scheduler_finish(s, 0);
  loom_task_scheduler_finish(s, 2);
  CHECK(loom_task_scheduler_next(s) == -1);
  loom_task_scheduler_free(s);
}

static void test_gradient(void) {
  int w[3] = {1, 1, 4};
  loom_task_scheduler *s = loom_task_scheduler_new(LOOM_TASK_GRADIENT, w, 3, 7);
  /* The first pass visits each task once. */
  for (int i = 0; i < 3; i++) {
    int t = loom_task_scheduler_next(s);
    CHECK(t == i);
    loom_task_scheduler_report(s, t, t == 0 ? 10.0 : t == 1 ? 100.0 : 0);
  }
  /* Task 2 has nothing valid: last. Task 1 is slower: more to gain. */
  CHECK(loom_task_scheduler_next(s) == 1);
  /* Task 1 improves 100 -> 50 -> 25 -> 12.5; task 0 stays at 10. */
  double lat = 100;
  for (int r = 0; r < 3; r++)
    loom_task_scheduler_report(s, 1, lat /= 2);
  CHECK(loom_task_scheduler_next(s) == 1);
  loom_task_scheduler_report(s, 2, 40.0); /* weight 4 and slow: now first */
  CHECK(loom_task_scheduler_next(s) == 2);
  loom_task_scheduler_finish(s, 2);
  loom_task_scheduler_finish(s, 1);
  CHECK(loom_task_scheduler_next(s) == 0);
  loom_task_scheduler_finish(s, 0);
  CHECK(loom_task_scheduler_next(s) == -1);
  loom_task_scheduler_free(s);

  /* Equal gradients: the choice is spread, and the same for the same seed. */
  int counts[2] = {0, 0}, first[20];
  for (int rep = 0; rep < 2; rep++) {
    loom_task_scheduler *e = loom_task_scheduler_new(LOOM_TASK_GRADIENT, NULL, 2, 99);
    for (int i = 0; i < 2; i++)
      loom_task_scheduler_report(e, loom_task_scheduler_next(e), 5.0);
    for (int i = 0; i < 20; i++) {
      int t = loom_task_scheduler_next(e);
      if (rep == 0) {
        first[i] = t;
        counts[t]++;
      } else {
        CHECK(first[i] == t);
      }
    }
    loom_task_scheduler_free(e);
  }
  CHECK(counts[0] > 0 && counts[1] > 0);
}

static void test_flops(void) {
  static const char *text =
      "@T.prim_func\n"
      "def mm(A: T.Buffer((32, 16), \"float32\"), B: T.Buffer((16, 8), \"float32\"), C: T.Buffer((32, 8), \"float32\"), D: T.Buffer((32, 8), \"float32\")):\n"
      "    for i, j, k in T.grid(32, 8, 16):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0.0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
      "    for i, j in T.grid(32, 8):\n"
      "        D[i, j] = T.exp(C[i, j]) / T.float32(2.0) + T.Cast(\"float32\", i * 2 + j)\n";
  loom_arena *a = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(text, strlen(text), "f.py", a, &m, &d) == LOOM_OK);
  /* 2 per matmul step; exp, divide and add per element (integer index
   * arithmetic does not count). */
  CHECK(loom_tune_flops(m->funcs[0]) == 2.0 * 32 * 8 * 16 + 3.0 * 32 * 8);
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(void) {
  test_flops();
  test_extract();
  test_round_robin();
  test_gradient();
  return test_summary("task");
}
