/* Fusion: the kinds of operators as TVM 0.27 annotates them; the fused
 * modules of the graph cases and ONNX models structurally equal to what
 * TVM's FuseOps and FuseTIR make of them (expect/, from make_expect.py);
 * a tensor passed twice; the tensors-per-call limit; and random graphs,
 * fused, computing the very numbers they computed unfused, in the
 * interpreter and compiled. */
#include "loom/fuse.h"
#include "loom/net.h"
#include "loom/onnx.h"
#include "program.h"
#include "test.h"

#include <math.h>

#define HEAD                                                                   \
  "from tvm.script import ir as I\n"                                           \
  "from tvm.script import tir as T\n"                                          \
  "from tvm.script import relax as R\n"                                        \
  "@I.ir_module\n"                                                             \
  "class Module:\n"

/* The operators of the random graphs, each on 8 x 8 tensors or vectors of
 * 8. */
#define OPS                                                                                  \
  "    @T.prim_func\n"                                                                       \
  "    def add(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"),\n"        \
  "            C: T.Buffer((8, 8), \"float32\")):\n"                                         \
  "        for i, j in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                                  \
  "                C[vi, vj] = A[vi, vj] + B[vi, vj]\n"                                      \
  "    @T.prim_func\n"                                                                       \
  "    def relu(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"      \
  "        for i, j in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                                  \
  "                C[vi, vj] = T.max(A[vi, vj], T.float32(0))\n"                             \
  "    @T.prim_func\n"                                                                       \
  "    def bias(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8,), \"float32\"),\n"         \
  "             C: T.Buffer((8, 8), \"float32\")):\n"                                        \
  "        for i, j in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                                  \
  "                C[vi, vj] = A[vi, vj] + B[vj]\n"                                          \
  "    @T.prim_func\n"                                                                       \
  "    def spread(B: T.Buffer((8,), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"      \
  "        for i, j in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                                  \
  "                C[vi, vj] = B[vi] * T.float32(0.5)\n"                                     \
  "    @T.prim_func\n"                                                                       \
  "    def transpose(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n" \
  "        for i, j in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                                  \
  "                C[vi, vj] = A[vj, vi] - T.float32(0.25)\n"                                \
  "    @T.prim_func\n"                                                                       \
  "    def rowsum(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"      \
  "        for i, k in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"                                  \
  "                with T.init():\n"                                                         \
  "                    C[vi] = T.float32(0)\n"                                               \
  "                C[vi] = C[vi] + A[vi, vk]\n"                                              \
  "    @T.prim_func\n"                                                                       \
  "    def mm(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"),\n"         \
  "           C: T.Buffer((8, 8), \"float32\")):\n"                                          \
  "        for i, j, k in T.grid(8, 8, 8):\n"                                                \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"                          \
  "                with T.init():\n"                                                         \
  "                    C[vi, vj] = T.float32(0)\n"                                           \
  "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"

/* More operators whose kinds TVM 0.27's AnnotateTIROpPattern was asked. */
#define MORE_OPS                                                                             \
  "    @T.prim_func\n"                                                                       \
  "    def pad(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((10, 10), \"float32\")):\n"     \
  "        for i, j in T.grid(10, 10):\n"                                                    \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                                  \
  "                C[vi, vj] = T.if_then_else(1 <= vi and vi < 9 and 1 <= vj and vj < 9,\n"  \
  "                                           A[vi - 1, vj - 1], T.float32(0))\n"            \
  "    @T.prim_func\n"                                                                       \
  "    def mm_f16(A: T.Buffer((8, 8), \"float16\"), B: T.Buffer((8, 8), \"float16\"),\n"     \
  "               C: T.Buffer((8, 8), \"float32\")):\n"                                      \
  "        for i, j, k in T.grid(8, 8, 8):\n"                                                \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"                          \
  "                with T.init():\n"                                                         \
  "                    C[vi, vj] = T.float32(0)\n"                                           \
  "                C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", A[vi, vk]) * "                \
  "T.Cast(\"float32\", B[vk, vj])\n"                                                         \
  "    @T.prim_func\n"                                                                       \
  "    def pool(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((4, 4), \"float32\")):\n"      \
  "        for i, j, r, s in T.grid(4, 4, 2, 2):\n"                                          \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj, vr, vs = T.axis.remap(\"SSRR\", [i, j, r, s])\n"                  \
  "                with T.init():\n"                                                         \
  "                    C[vi, vj] = T.float32(-1e30)\n"                                       \
  "                C[vi, vj] = T.max(C[vi, vj], A[vi * 2 + vr, vj * 2 + vs])\n"              \
  "    @T.prim_func\n"                                                                       \
  "    def softmax(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"   \
  "        M = T.alloc_buffer((8,))\n"                                                       \
  "        for i, k in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"M\"):\n"                                                       \
  "                vi, vk = T.axis.remap(\"SR\", [i, k])\n"                                  \
  "                with T.init():\n"                                                         \
  "                    M[vi] = T.float32(-1e30)\n"                                           \
  "                M[vi] = T.max(M[vi], A[vi, vk])\n"                                        \
  "        for i, j in T.grid(8, 8):\n"                                                      \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                                  \
  "                C[vi, vj] = T.exp(A[vi, vj] - M[vi])\n"                                   \
  "    @T.prim_func\n"                                                                       \
  "    def two_stores(A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"    \
  "        for i in range(8):\n"                                                             \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi = T.axis.spatial(8, i)\n"                                              \
  "                C[vi] = A[vi]\n"                                                          \
  "                C[vi] = C[vi] + T.float32(1)\n"                                           \
  "    @T.prim_func\n"                                                                       \
  "    def shift(A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"         \
  "        for i in range(8):\n"                                                             \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi = T.axis.spatial(8, i)\n"                                              \
  "                C[vi] = A[7 - vi]\n"                                                      \
  "    @T.prim_func\n"                                                                       \
  "    def gather(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"      \
  "        for i in range(8):\n"                                                             \
  "            with T.block(\"C\"):\n"                                                       \
  "                vi = T.axis.spatial(8, i)\n"                                              \
  "                C[vi] = A[vi, vi]\n"                                                      \
  "    @T.prim_func\n"                                                                       \
  "    def loops(A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"         \
  "        for i in range(8):\n"                                                             \
  "            C[i] = A[i] * T.float32(2)\n"

static void test_kinds(void) {
  static const struct {
    const char *func;
    loom_fuse_kind kind;
  } want[] = {
      {"add", LOOM_FUSE_ELEMWISE},       {"relu", LOOM_FUSE_ELEMWISE},
      {"bias", LOOM_FUSE_ELEMWISE},      {"spread", LOOM_FUSE_BROADCAST},
      {"transpose", LOOM_FUSE_INJECTIVE}, {"rowsum", LOOM_FUSE_REDUCE},
      {"mm", LOOM_FUSE_OUT_EWISE},       {"pad", LOOM_FUSE_INJECTIVE},
      {"mm_f16", LOOM_FUSE_OUT_EWISE},   {"pool", LOOM_FUSE_OUT_EWISE},
      {"softmax", LOOM_FUSE_OUT_EWISE},  {"two_stores", LOOM_FUSE_ELEMWISE},
      {"shift", LOOM_FUSE_INJECTIVE},    {"gather", LOOM_FUSE_BROADCAST},
      /* TVM: elementwise (no block to look at); Loom: opaque, as it cannot
       * be merged without blocks. */
      {"loops", LOOM_FUSE_OPAQUE},
  };
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, HEAD OPS MORE_OPS);
  CHECK(m != NULL);
  for (size_t i = 0; m && i < sizeof want / sizeof *want; i++) {
    const loom_func *f = loom_ir_module_find(m, want[i].func);
    CHECK(f != NULL);
    if (f && loom_fuse_kind_of(f) != want[i].kind) {
      fprintf(stderr, "%s: kind %s, expected %s\n", want[i].func,
              loom_fuse_kind_name(loom_fuse_kind_of(f)), loom_fuse_kind_name(want[i].kind));
      CHECK(!"kind as TVM's");
    }
  }
  loom_arena_free(a);
}

static loom_module *fused(loom_arena *a, const loom_module *m, loom_buf *explain) {
  loom_module *out = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_fuse_module(a, m, &out, explain, &d) != LOOM_OK) {
    fprintf(stderr, "fuse: %s\n", d.msg ? d.msg : "out of memory");
    out = NULL;
  }
  loom_diag_free(&d);
  return out;
}

static void check_equal(const char *what, const loom_module *got, const loom_module *want) {
  loom_ir_diff diff = {0};
  bool same = got && want && loom_ir_equal_module(got, want, &diff);
  if (!same && got && want)
    fprintf(stderr, "%s: not TVM's fusion: %s at %s\n", what, diff.what ? diff.what : "?",
            diff.path ? diff.path : "?");
  loom_ir_diff_free(&diff);
  CHECK(same);
}

/* The random inputs of g's parameters, seeded. */
static void **random_params(const loom_graph *g, loom_rng *r) {
  void **p = calloc((size_t)g->n_params + 1, sizeof *p);
  for (int i = 0; i < g->n_params; i++) {
    size_t n = loom_net_bytes(&g->values[i].info) / sizeof(float);
    float *x = malloc(n * sizeof *x + 1);
    for (size_t k = 0; k < n; k++)
      x[k] = (float)loom_rng_double(r) * 2 - 1;
    p[i] = x;
  }
  return p;
}

static void free_all(void **p, int n) {
  for (int i = 0; p && i < n; i++)
    free(p[i]);
  free(p);
}

/* Runs g of m in the interpreter on params; the outputs, malloc'd. */
static void **interp(const loom_module *m, const loom_graph *g, void *const *params) {
  void **outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
  for (int i = 0; i < g->n_outputs; i++)
    outs[i] = calloc(1, loom_net_bytes(&g->values[g->outputs[i]].info) + 1);
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_net_interp(m, g, (const void *const *)params, outs, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "interp: %s\n", d.msg ? d.msg : "?");
  CHECK(ok);
  loom_diag_free(&d);
  return outs;
}

/* Fused and unfused, the same numbers, bit for bit: fusion changes where
 * tensors live, not what is computed in which order. */
static void check_same_numbers(const char *what, const loom_module *m,
                               const loom_module *f, loom_rng *r) {
  const loom_graph *g = m->graphs[0], *fg = f->graphs[0];
  void **params = random_params(g, r);
  void **want = interp(m, g, params), **got = interp(f, fg, params);
  for (int i = 0; i < g->n_outputs; i++) {
    bool same = !memcmp(want[i], got[i], loom_net_bytes(&g->values[g->outputs[i]].info));
    if (!same)
      fprintf(stderr, "%s: output %d differs once fused\n", what, i);
    CHECK(same);
  }
  free_all(params, g->n_params);
  free_all(want, g->n_outputs);
  free_all(got, g->n_outputs);
}

/* The graph cases against TVM's fusion of them. */
static void test_cases(const char *root, loom_rng *r) {
  static const char *const cases[] = {"epilogue", "transpose_into_mm", "into_reduce",
                                      "diamond",  "leaves",            "twice",
                                      "residual", "injective_chain"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char path[512];
    loom_arena *a = loom_arena_new();
    snprintf(path, sizeof path, "%s/tests/fuse/cases/%s.py", root, cases[i]);
    loom_module *m = program_read_file(a, path);
    snprintf(path, sizeof path, "%s/tests/fuse/expect/%s.py", root, cases[i]);
    loom_module *want = program_read_file(a, path);
    loom_module *f = m ? fused(a, m, NULL) : NULL;
    CHECK(m && want && f);
    if (!m || !want || !f) {
      loom_arena_free(a);
      continue;
    }
    if (strcmp(cases[i], "twice"))
      check_equal(cases[i], f, want);
    check_same_numbers(cases[i], m, f, r);
    loom_arena_free(a);
  }
}

/* One tensor passed as two arguments (mm(c, c)): the merged block reads
 * the buffer through one region that covers both accesses, where TVM keeps
 * the first access's alone. */
static void test_twice(const char *root) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/fuse/cases/twice.py", root);
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read_file(a, path), *f = m ? fused(a, m, NULL) : NULL;
  const loom_func *mm = f ? loom_ir_module_find(f, "fused_mm_add") : NULL;
  CHECK(mm != NULL);
  loom_buf text;
  loom_buf_init(&text);
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  if (mm)
    loom_script_print_func(mm, &opts, &text);
  CHECK_CONTAINS(text.data, "T.reads(c[T.min(vi, vk):T.min(vi, vk) + (T.max(vi, vk) + 1 - "
                            "T.min(vi, vk)), T.min(vk, vj):");
  loom_buf_free(&text);
  loom_arena_free(a);
}

/* The model's weights (its parameters from n_inputs on) reach the fused
 * convolutions at positions 1 to 6 (the weights, the bias, the batch norm's
 * four) and the Gemm at 1 and 2; the residual add's other tensor and every
 * activation are not constants. */
static void check_constants(loom_arena *a, const loom_module *f, int n_inputs) {
  loom_module *m = NULL;
  CHECK(loom_fuse_mark_constants(a, f, n_inputs, &m) == LOOM_OK);
  static const struct {
    const char *func, *list;
  } want[] = {
      {"fused_conv2d_batch_norm_relu", "[1, 2, 3, 4, 5, 6]"},
      {"fused_conv2d1_batch_norm1_add_relu1", "[1, 2, 3, 4, 5, 6]"},
      {"max_pool2d", NULL},
      {"gemm", "[1, 2]"},
  };
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  for (size_t i = 0; m && i < sizeof want / sizeof *want; i++) {
    const loom_func *g = loom_ir_module_find(m, want[i].func);
    loom_buf text;
    loom_buf_init(&text);
    if (g)
      loom_script_print_func(g, &opts, &text);
    CHECK(g != NULL);
    if (want[i].list) {
      char line[128];
      snprintf(line, sizeof line, "\"layout_free_buffers\": %s", want[i].list);
      CHECK_CONTAINS(text.data, line);
    } else {
      CHECK(text.data && !strstr(text.data, "layout_free_buffers"));
    }
    loom_buf_free(&text);
  }
}

/* The ONNX test models against TVM's fusion of them, imported unfused. */
static void test_onnx(const char *root, loom_rng *r) {
  static const char *const models[] = {"convnet", "mlp", "misc"};
  for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
    char path[512];
    loom_arena *a = loom_arena_new();
    loom_onnx_model model;
    loom_diag d;
    loom_diag_init(&d);
    snprintf(path, sizeof path, "%s/tests/onnx/cases/%s.onnx", root, models[i]);
    bool ok = loom_onnx_read(path, a, &model, &d) == LOOM_OK;
    loom_diag_free(&d);
    snprintf(path, sizeof path, "%s/tests/fuse/expect/onnx_%s.py", root, models[i]);
    loom_module *want = program_read_file(a, path);
    loom_buf explain;
    loom_buf_init(&explain);
    loom_module *f = ok ? fused(a, model.module, &explain) : NULL;
    CHECK(ok && want && f);
    if (ok && want && f) {
      /* misc passes one tensor to Concat twice: the regions differ as in
       * test_twice. */
      if (strcmp(models[i], "misc"))
        check_equal(models[i], f, want);
      check_same_numbers(models[i], model.module, f, r);
      /* Fusing again finds nothing more: the module comes back as it is. */
      CHECK(fused(a, f, NULL) == f);
    }
    if (!strcmp(models[i], "convnet") && f) {
      CHECK_CONTAINS(explain.data,
                     "fused_conv2d1_batch_norm1_add_relu1: conv2d1 (out-elementwise-fusable), "
                     "batch_norm1 (elementwise), add (elementwise), relu1 (elementwise)\n");
      check_constants(a, f, model.n_inputs);
    }
    loom_buf_free(&explain);
    loom_arena_free(a);
  }
}

/* A chain of adds, each of a tensor of its own: merged, it would take more
 * tensors than a call may pass, so its calls stay as they are. */
static void test_too_many_tensors(loom_rng *r) {
  int n = LOOM_NET_MAX_ARGS + 4;
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_puts(&b, HEAD OPS "    @R.function\n    def main(");
  for (int i = 0; i <= n; i++)
    loom_buf_printf(&b, "%sx%d: R.Tensor((8, 8), dtype=\"float32\")", i ? ", " : "", i);
  loom_buf_puts(&b, "):\n        cls = Module\n        with R.dataflow():\n");
  for (int i = 1; i <= n; i++)
    loom_buf_printf(&b, "            v%d = R.call_tir(cls.add, (%s%d, x%d), "
                        "out_sinfo=R.Tensor((8, 8), dtype=\"float32\"))\n",
                    i, i == 1 ? "x" : "v", i == 1 ? 0 : i - 1, i);
  loom_buf_printf(&b, "            R.output(v%d)\n        return v%d\n", n, n);
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, b.data), *f = m ? fused(a, m, NULL) : NULL;
  CHECK(f && f->graphs[0]->n_calls == n);
  if (f)
    check_same_numbers("too many tensors", m, f, r);
  loom_arena_free(a);
  loom_buf_free(&b);
}

/* A random graph over x, y (8 x 8) and v (8): each call reads recent
 * values of the shapes it takes; the last value and a random earlier one
 * are returned. */
static void random_graph(loom_buf *b, loom_rng *r, int n_calls) {
  static const struct {
    const char *name;
    int n_args;
    bool arg_is_vec[2], out_is_vec;
  } ops[] = {
      {"add", 2, {0, 0}, 0},  {"relu", 1, {0}, 0},      {"bias", 2, {0, 1}, 0},
      {"spread", 1, {1}, 0},  {"transpose", 1, {0}, 0}, {"rowsum", 1, {0}, 1},
      {"mm", 2, {0, 0}, 0},
  };
  char names[80][8];
  bool is_vec[80];
  strcpy(names[0], "x");
  strcpy(names[1], "y");
  strcpy(names[2], "v");
  is_vec[0] = is_vec[1] = false;
  is_vec[2] = true;
  int n = 3;
  loom_buf_puts(b, HEAD OPS "    @R.function\n    def main(x: R.Tensor((8, 8), dtype=\"float32\"), "
                   "y: R.Tensor((8, 8), dtype=\"float32\"), v: R.Tensor((8,), dtype=\"float32\")):\n"
                   "        cls = Module\n        with R.dataflow():\n");
  for (int k = 0; k < n_calls; k++) {
    int o = (int)loom_rng_below(r, sizeof ops / sizeof *ops);
    int args[2];
    for (int i = 0; i < ops[o].n_args; i++) {
      /* the latest of the right shape, or now and then an older one */
      int at = n - 1;
      while (is_vec[at] != ops[o].arg_is_vec[i] || loom_rng_below(r, 3) == 0) {
        at = at == 0 ? n - 1 : at - 1;
        if (is_vec[at] == ops[o].arg_is_vec[i] && loom_rng_below(r, 2))
          break;
      }
      args[i] = at;
    }
    snprintf(names[n], sizeof names[n], "v%d", k);
    is_vec[n] = ops[o].out_is_vec;
    loom_buf_printf(b, "            v%d = R.call_tir(cls.%s, (%s%s%s), out_sinfo=R.Tensor(%s, "
                       "dtype=\"float32\"))\n",
                    k, ops[o].name, names[args[0]], ops[o].n_args > 1 ? ", " : ",",
                    ops[o].n_args > 1 ? names[args[1]] : "", is_vec[n] ? "(8,)" : "(8, 8)");
    n++;
  }
  int mid = 3 + (int)loom_rng_below(r, (uint64_t)n_calls);
  loom_buf_printf(b, "            R.output(%s, %s)\n        return (%s, %s)\n", names[mid],
                  names[n - 1], names[mid], names[n - 1]);
}

static void test_random(loom_rng *r) {
  loom_target t;
  loom_target_detect(&t);
  int calls = 0, fused_calls = 0;
  for (int trial = 0; trial < 24; trial++) {
    loom_buf text;
    loom_buf_init(&text);
    random_graph(&text, r, 4 + trial * 2);
    loom_arena *a = loom_arena_new();
    loom_module *m = program_read(a, text.data), *f = m ? fused(a, m, NULL) : NULL;
    CHECK(m && f);
    if (!m || !f) {
      fprintf(stderr, "%s", text.data);
      loom_arena_free(a);
      loom_buf_free(&text);
      continue;
    }
    calls += m->graphs[0]->n_calls;
    fused_calls += f->graphs[0]->n_calls;
    check_same_numbers("random graph", m, f, r);
    /* Compiled, the fused graph computes what the interpreter does. */
    const loom_graph *g = f->graphs[0];
    void **params = random_params(g, r);
    void **want = interp(f, g, params);
    void **got = calloc((size_t)g->n_outputs, sizeof *got);
    for (int i = 0; i < g->n_outputs; i++)
      got[i] = calloc(1, loom_net_bytes(&g->values[g->outputs[i]].info));
    loom_net *net = NULL;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_net_build(f, g, &t, &net, &d) == LOOM_OK);
    CHECK(net && loom_net_run(net, (const void *const *)params, got, &d) == LOOM_OK);
    for (int i = 0; i < g->n_outputs; i++) {
      const float *w = want[i], *x = got[i];
      size_t n = loom_net_bytes(&g->values[g->outputs[i]].info) / sizeof(float);
      bool close = true;
      for (size_t k = 0; k < n; k++)
        if (!(w[k] == x[k] || (isnan(w[k]) && isnan(x[k])) ||
              fabsf(w[k] - x[k]) <= 1e-4f * (1 + fabsf(w[k])))) {
          if (close)
            fprintf(stderr, "trial %d output %d [%zu]: %g, interpreter %g\n", trial, i, k, x[k], w[k]);
          close = false;
        }
      CHECK(close);
    }
    loom_net_free(net);
    loom_diag_free(&d);
    free_all(params, g->n_params);
    free_all(want, g->n_outputs);
    free_all(got, g->n_outputs);
    loom_arena_free(a);
    loom_buf_free(&text);
  }
  /* The graphs fuse: a quarter of the calls or more go into groups. */
  CHECK(fused_calls * 4 <= calls * 3);
  printf("random graphs: %d calls, %d once fused\n", calls, fused_calls);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  loom_rng r;
  loom_rng_seed(&r, 11);
  test_kinds();
  test_cases(root, &r);
  test_twice(root);
  test_onnx(root, &r);
  test_too_many_tensors(&r);
  test_random(&r);
  return test_summary("fuse/test_fuse");
}
