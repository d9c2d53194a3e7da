/* Graphs run: random graphs over a few prim funcs, built and run, against
 * the interpreter (a plan that put two live tensors in the same place
 * would change the answer); the plan's invariant checked directly; .npy
 * files written and read back, and bad ones refused. */
#include "loom/interp.h"
#include "loom/net.h"
#include "loom/script.h"
#include "net/net_impl.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUNCS                                                                           \
  "from tvm.script import ir as I\n"                                                    \
  "from tvm.script import tir as T\n"                                                   \
  "from tvm.script import relax as R\n"                                                 \
  "@I.ir_module\n"                                                                      \
  "class Module:\n"                                                                     \
  "    @T.prim_func\n"                                                                  \
  "    def add(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\"),\n"   \
  "            C: T.Buffer((4, 8), \"float32\")):\n"                                    \
  "        for i, j in T.grid(4, 8):\n"                                                 \
  "            with T.block(\"C\"):\n"                                                  \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                             \
  "                C[vi, vj] = A[vi, vj] + B[vi, vj] * T.float32(0.5)\n"                \
  "    @T.prim_func\n"                                                                  \
  "    def neg(A: T.Buffer((4, 8), \"float32\"), C: T.Buffer((4, 8), \"float32\")):\n"  \
  "        for i, j in T.grid(4, 8):\n"                                                 \
  "            with T.block(\"C\"):\n"                                                  \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                             \
  "                C[vi, vj] = T.float32(1) - A[vi, vj]\n"                              \
  "    @T.prim_func\n"                                                                  \
  "    def mm(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\"),\n"    \
  "           C: T.Buffer((4, 8), \"float32\")):\n"                                     \
  "        for i, j, k in T.grid(4, 8, 4):\n"                                           \
  "            with T.block(\"C\"):\n"                                                  \
  "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"                     \
  "                with T.init():\n"                                                    \
  "                    C[vi, vj] = T.float32(0)\n"                                      \
  "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"

#define TENSOR "R.Tensor((4, 8), dtype=\"float32\")"

/* A graph of n_calls random calls over the parameters x and y. */
static void random_graph(loom_buf *b, loom_rng *r, int n_calls) {
  loom_buf_puts(b, FUNCS "    @R.function\n    def main(x: " TENSOR ", y: " TENSOR "):\n"
                         "        cls = Module\n        with R.dataflow():\n");
  static const char *const funcs[] = {"add", "neg", "mm"};
  char names[64][8];
  strcpy(names[0], "x");
  strcpy(names[1], "y");
  for (int k = 0; k < n_calls; k++) {
    int f = (int)loom_rng_below(r, 3);
    /* Mostly recent values, so that old ones die and their space is reused. */
    int lo = k + 2 > 4 ? k + 2 - 4 : 0;
    int a = lo + (int)loom_rng_below(r, (uint64_t)(k + 2 - lo));
    int c = lo + (int)loom_rng_below(r, (uint64_t)(k + 2 - lo));
    snprintf(names[k + 2], sizeof names[k + 2], "v%d", k);
    if (f == 1)
      loom_buf_printf(b, "            v%d = R.call_tir(cls.neg, (%s,), out_sinfo=" TENSOR ")\n",
                      k, names[a]);
    else
      loom_buf_printf(b, "            v%d = R.call_tir(cls.%s, (%s, %s), out_sinfo=" TENSOR ")\n",
                      k, funcs[f], names[a], names[c]);
  }
  int mid = 2 + (int)loom_rng_below(r, (uint64_t)n_calls);
  loom_buf_printf(b, "            R.output(%s, %s)\n        return (%s, %s)\n", names[mid],
                  names[n_calls + 1], names[mid], names[n_calls + 1]);
}

/* Every two values placed in the arena whose lives overlap are apart. */
static bool plan_is_sound(const loom_graph *g, const net_home *h) {
  int *last = calloc((size_t)g->n_values, sizeof *last);
  for (int v = 0; v < g->n_values; v++)
    last[v] = v - g->n_params;
  for (int k = 0; k < g->n_calls; k++)
    for (int i = 0; i < g->calls[k].n_args; i++)
      last[g->calls[k].args[i]] = k;
  bool ok = true;
  for (int a = g->n_params; a < g->n_values; a++)
    for (int b = a + 1; b < g->n_values; b++) {
      if (h[a].kind != NET_ARENA || h[b].kind != NET_ARENA)
        continue;
      int first_b = b - g->n_params;
      if (last[a] < first_b)
        continue; /* a is dead before b is made */
      size_t sa = loom_net_bytes(&g->values[a].info), sb = loom_net_bytes(&g->values[b].info);
      if (h[a].offset < h[b].offset + sb && h[b].offset < h[a].offset + sa)
        ok = false;
    }
  free(last);
  return ok;
}

static void test_random_graphs(void) {
  loom_rng r;
  loom_rng_seed(&r, 7);
  loom_target t;
  loom_target_detect(&t);
  int reused = 0;
  for (int trial = 0; trial < 12; trial++) {
    loom_buf text;
    loom_buf_init(&text);
    random_graph(&text, &r, 3 + trial * 3);
    loom_arena *a = loom_arena_new();
    loom_module *m = NULL;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_script_read(text.data, text.len, "random.py", a, &m, &d) == LOOM_OK);
    if (d.has_error)
      fprintf(stderr, "%s\n%s", d.msg, text.data);
    const loom_graph *g = m ? m->graphs[0] : NULL;
    net_home *h = g ? calloc((size_t)g->n_values, sizeof *h) : NULL;
    size_t arena_bytes = 0, unplanned = 0;
    CHECK(h && net_plan(g, h, &arena_bytes, &unplanned) == LOOM_OK);
    CHECK(h && plan_is_sound(g, h));
    reused += arena_bytes < unplanned;
    float x[32], y[32], got[2][32], want[2][32];
    for (int i = 0; i < 32; i++) {
      x[i] = (float)loom_rng_double(&r) - 0.5f;
      y[i] = (float)loom_rng_double(&r) - 0.5f;
    }
    const void *params[] = {x, y};
    void *outs[] = {got[0], got[1]}, *wants[] = {want[0], want[1]};
    loom_net *n = NULL;
    CHECK(g && loom_net_build(m, g, &t, &n, &d) == LOOM_OK);
    CHECK(n && loom_net_run(n, params, outs, &d) == LOOM_OK);
    CHECK(g && loom_net_interp(m, g, params, wants, &d) == LOOM_OK);
    /* The compiler may contract a * b + c: close, not the same bits. A plan
     * that shared the space of two live tensors is far off. */
    for (int o = 0; o < 2; o++)
      for (int i = 0; i < 32; i++)
        CHECK(fabsf(got[o][i] - want[o][i]) <= 1e-4f * (1 + fabsf(want[o][i])));
    loom_net_free(n);
    free(h);
    loom_diag_free(&d);
    loom_arena_free(a);
    loom_buf_free(&text);
  }
  /* The longer graphs let later tensors take the space of dead ones. */
  CHECK(reused >= 8);
}

static void test_npy(void) {
  char dir[] = "/tmp/loom_npy_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/a.npy", dir);
  int64_t shape[] = {2, 3, 5};
  loom_tensor_info t = {LOOM_FLOAT32, shape, 3};
  float data[30];
  for (int i = 0; i < 30; i++)
    data[i] = (float)i * 0.25f;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_net_npy_write(path, &t, data, &d) == LOOM_OK);
  loom_arena *a = loom_arena_new();
  loom_tensor_info back;
  void *got = NULL;
  CHECK(loom_net_npy_read(path, a, &back, &got, &d) == LOOM_OK);
  CHECK(loom_ir_tensor_info_equal(&t, &back) && got && !memcmp(got, data, sizeof data));
  /* Header forms Loom does not read are refused, saying why. */
  static const char *const bad[][2] = {
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", "a dtype other than"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "Fortran order"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "not as long as"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "a dtype other than"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    FILE *f = fopen(path, "wb");
    size_t n = strlen(bad[i][0]);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)n, 0};
    fwrite(pre, 1, 10, f);
    fwrite(bad[i][0], 1, n, f);
    fwrite(data, 1, 8, f);
    fclose(f);
    loom_diag_free(&d);
    loom_diag_init(&d);
    CHECK(loom_net_npy_read(path, a, &back, &got, &d) == LOOM_ERROR);
    CHECK_CONTAINS(d.msg, bad[i][1]);
  }
  unlink(path);
  rmdir(dir);
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(void) {
  test_random_graphs();
  test_npy();
  return test_summary("net/test_net");
}
