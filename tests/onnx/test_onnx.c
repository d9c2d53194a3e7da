/* The ONNX importer: (a) ONNX's own node tests (libonnx-testdata), each
 * model that imports run call by call with the interpreter and compared
 * with the expected outputs, as read and again with the importer's
 * rewrites (channels-last, batch norms folded); (b) refusals, as
 * messages; (c) an MLP and a small residual conv net made by
 * cases/make_cases.py, a model of the forms the node tests leave out and
 * one of the places where the layouts meet, run and compared with NumPy's
 * results. */
#include "loom/interp.h"
#include "loom/onnx.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NODE_TESTS "/usr/include/onnx/backend/test/data/node"

/* Models whose calls run more loop iterations than this are imported but
 * not run: the interpreter would take seconds on each. */
#define MAX_WORK 20000000

/* Fewer node-test models importing than this is a regression. */
#define MIN_IMPORTED 420
/* Fewer node-test models that the rewrites change than this is one too. */
#define MIN_REWRITTEN 28

static const loom_onnx_options rewrites = {.is_channels_last = true, .is_bn_folded = true};

static const char *src_root = ".";
static bool is_verbose; /* -v: print every refusal */

/* ---- running a graph with the interpreter ------------------------------------- */

static loom_interp_array *array_of(const loom_tensor_info *t,
                                   const void *data, size_t bytes) {
  loom_interp_array *a = loom_interp_array_new(t->dtype, t->shape, t->ndim);
  if (a && data) {
    size_t width = t->dtype.bits < 8 ? 1 : t->dtype.bits / 8;
    if ((size_t)a->n_elems * width == bytes)
      memcpy(a->data, data, bytes);
  }
  return a;
}

/* Loop iterations of the stores under s: the work the interpreter does. */
static double work(const loom_stmt *s) {
  if (!s)
    return 0;
  switch (s->kind) {
  case LOOM_STMT_FOR: {
    int64_t e = 1;
    loom_ir_is_const_int(s->u.loop.extent, &e);
    return (double)e * work(s->u.loop.body);
  }
  case LOOM_STMT_SEQ: {
    double w = 0;
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      w += work(s->u.seq.stmts[i]);
    return w;
  }
  case LOOM_STMT_BLOCK_REALIZE:
    return work(s->u.realize.block->init) + work(s->u.realize.block->body);
  case LOOM_STMT_LET:
    return work(s->u.let.body);
  case LOOM_STMT_IF:
    return work(s->u.if_.then_case) + work(s->u.if_.else_case);
  default:
    return 1;
  }
}

static double graph_work(const loom_onnx_model *m) {
  double w = 0;
  for (int i = 0; i < m->graph->n_calls; i++)
    w += work(loom_ir_module_find(m->module, m->graph->calls[i].func)->body);
  return w;
}

/* Runs the graph on inputs (n_inputs of them); values[] gets every value.
 * Returns 0 and prints why on a failure. */
static int run_graph(const loom_onnx_model *m, loom_interp_array **inputs,
                     loom_interp_array **values, const char *name) {
  const loom_graph *g = m->graph;
  for (int i = 0; i < m->n_inputs; i++)
    values[i] = inputs[i];
  for (int i = 0; i < m->n_weights; i++)
    values[m->n_inputs + i] = array_of(&m->weights[i].info,
                                       m->weights[i].data,
                                       m->weights[i].bytes);
  for (int i = 0; i < g->n_calls; i++) {
    const loom_graph_call *c = &g->calls[i];
    const loom_func *f = loom_ir_module_find(m->module, c->func);
    loom_interp_array *args[64];
    if (!f || c->n_args + 1 > 64 || f->n_params != c->n_args + 1) {
      printf("  %s: call %d of %s does not fit the function\n", name, i,
             c->func);
      return 0;
    }
    values[c->out] = array_of(&g->values[c->out].info, NULL, 0);
    for (int k = 0; k < c->n_args; k++)
      args[k] = values[c->args[k]];
    args[c->n_args] = values[c->out];
    loom_diag d;
    loom_diag_init(&d);
    loom_status s = loom_interp_run(f, args, NULL, &d);
    if (s != LOOM_OK)
      printf("  %s: running %s: %s\n", name, c->func, d.msg ? d.msg : "?");
    loom_diag_free(&d);
    if (s != LOOM_OK)
      return 0;
  }
  return 1;
}

static void free_values(const loom_onnx_model *m, loom_interp_array **values) {
  for (int i = 0; i < m->graph->n_values; i++)
    loom_interp_array_free(values[i]);
}

static loom_interp_array *read_array(const char *path, loom_arena *a) {
  loom_onnx_tensor t;
  loom_diag d;
  loom_diag_init(&d);
  loom_status s = loom_onnx_read_tensor(path, a, &t, &d);
  if (s != LOOM_OK)
    printf("  %s: %s\n", path, d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return s == LOOM_OK ? array_of(&t.info, t.data, t.bytes) : NULL;
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Runs model m on dir's input_N.pb (prefix "input_") and compares each
 * output with output_N.pb. Returns 1 when all match. */
static int run_and_compare(const loom_onnx_model *m, const char *dir,
                           const char *in_fmt, const char *out_fmt,
                           const char *name, loom_arena *a) {
  int n_values = m->graph->n_values;
  loom_interp_array **values = calloc((size_t)n_values + 1, sizeof *values);
  loom_interp_array **inputs = calloc((size_t)m->n_inputs + 1, sizeof *inputs);
  int ok = values && inputs;
  char path[1024];
  for (int i = 0; ok && i < m->n_inputs; i++) {
    snprintf(path, sizeof path, "%s/", dir);
    snprintf(path + strlen(path), sizeof path - strlen(path), in_fmt, i);
    inputs[i] = read_array(path, a);
    ok = inputs[i] != NULL;
  }
  bool has_run = ok;
  if (ok)
    ok = run_graph(m, inputs, values, name);
  for (int i = 0; !has_run && inputs && i < m->n_inputs; i++)
    loom_interp_array_free(inputs[i]);
  for (int i = 0; ok && i < m->graph->n_outputs; i++) {
    snprintf(path, sizeof path, "%s/", dir);
    snprintf(path + strlen(path), sizeof path - strlen(path), out_fmt, i);
    loom_interp_array *want = read_array(path, a), *got = values[m->graph->outputs[i]];
    /* The node tests store bfloat16 data as uint16, its bits, and make
     * them by truncating float32, where Loom rounds to nearest even: a
     * bfloat16 output is held to one step of its 8-bit significand. */
    bool is_bf16 = got->dtype.code == LOOM_DT_BFLOAT;
    if (want && want->dtype.code == LOOM_DT_UINT && want->dtype.bits == 16 && is_bf16)
      want->dtype = got->dtype;
    char *why = NULL;
    ok = want && loom_interp_compare(got, want, is_bf16 ? 1.0 / 128 : 1e-4, 1e-5, &why);
    if (!ok)
      printf("  %s: output %d differs: %s\n", name, i, why ? why : "?");
    free(why);
    loom_interp_array_free(want);
  }
  /* The graph's values hold the inputs once it ran. */
  if (has_run)
    free_values(m, values);
  free(values);
  free(inputs);
  return ok;
}

/* ---- (a) ONNX's node tests ---------------------------------------------------- */

typedef struct refusal {
  char op[64];
  int count;
  char example[320];
} refusal;

/* The operator a refusal names ("node 'x' (Conv): ..."), or "(model)". */
static void refusal_key(const char *msg, char *op, size_t n) {
  const char *p = strstr(msg, "' (");
  p = p ? p + 3 : NULL;
  if (!p && (p = strstr(msg, "node #")) && (p = strchr(p, '(')))
    p++;
  const char *e = p ? strstr(p, "):") : NULL;
  if (!p || !e) {
    snprintf(op, n, "(model)");
    return;
  }
  snprintf(op, n, "%.*s", (int)(e - p), p);
}

static int by_count(const void *a, const void *b) {
  const refusal *x = a, *y = b;
  return x->count != y->count ? y->count - x->count : strcmp(x->op, y->op);
}

/* Operators the importer lacks on one line each few, then the refusals of
 * operators it has (an attribute, a rank, an input it cannot take) and of
 * whole models (a type), each with its first example. */
static void print_refusals(refusal *r, int n) {
  qsort(r, (size_t)n, sizeof *r, by_count);
  int col = 0, total = 0;
  printf("  operators not supported:");
  for (int i = 0; i < n; i++) {
    if (!strstr(r[i].example, "operator not supported"))
      continue;
    total += r[i].count;
    col += printf("%s %s (%d)", col ? "," : "", r[i].op, r[i].count);
    if (col > 60) {
      printf("\n   ");
      col = 0;
    }
  }
  printf("\n  (%d models in all)\n", total);
  for (int i = 0; i < n; i++)
    if (!strstr(r[i].example, "operator not supported"))
      printf("  refused %-20s %3d  e.g. %s\n", r[i].op, r[i].count,
             r[i].example);
}

static int cmp_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* The node tests as read (o NULL) or with the rewrites o asks for. */
static void test_node_tests(const loom_onnx_options *o) {
  struct dirent **list;
  int n = scandir(NODE_TESTS, &list, NULL, cmp_name);
  if (n < 0) {
    printf("node tests: %s absent, skipped\n", NODE_TESTS);
    return;
  }
  int n_models = 0, n_imported = 0, n_passed = 0, n_failed = 0, n_big = 0;
  int n_rewritten = 0;
  refusal refusals[512];
  int n_refusals = 0, n_refused = 0;
  for (int i = 0; i < n; i++) {
    const char *name = list[i]->d_name;
    char dir[512], path[1024];
    snprintf(dir, sizeof dir, "%s/%s", NODE_TESTS, name);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (strncmp(name, "test_", 5) || !exists(path))
      continue;
    n_models++;
    loom_arena *a = loom_arena_new();
    loom_onnx_model m;
    loom_diag d;
    loom_diag_init(&d);
    if (loom_onnx_read_with(path, a, o, &m, &d) != LOOM_OK) {
      char op[64];
      refusal_key(d.msg ? d.msg : "", op, sizeof op);
      int k = 0;
      while (k < n_refusals && strcmp(refusals[k].op, op))
        k++;
      if (k == n_refusals && n_refusals < 512) {
        snprintf(refusals[k].op, sizeof refusals[k].op, "%s", op);
        snprintf(refusals[k].example, sizeof refusals[k].example, "%s: %s",
                 name, d.msg ? d.msg : "?");
        refusals[k].count = 0;
        n_refusals++;
      }
      if (k < n_refusals)
        refusals[k].count++;
      n_refused++;
      if (is_verbose)
        printf("  %s: %s\n", name, d.msg ? d.msg : "?");
    } else {
      n_imported++;
      loom_onnx_model plain;
      if (o && loom_onnx_read(path, a, &plain, &d) == LOOM_OK)
        n_rewritten += plain.graph->n_calls != m.graph->n_calls ||
                       plain.n_weights != m.n_weights;
      loom_diag v;
      loom_diag_init(&v);
      if (loom_ir_verify_graph(m.module, m.graph, &v) != LOOM_OK) {
        printf("  %s: the graph does not verify: %s\n", name, v.msg);
        n_failed++;
      }
      loom_diag_free(&v);
      snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/test_data_set_0");
      if (graph_work(&m) > MAX_WORK) {
        n_big++;
      } else if (run_and_compare(&m, dir, "input_%d.pb", "output_%d.pb", name,
                                 a)) {
        n_passed++;
      } else {
        n_failed++;
      }
    }
    loom_diag_free(&d);
    loom_arena_free(a);
  }
  for (int i = 0; i < n; i++)
    free(list[i]);
  free(list);
  printf("node tests%s: %d models, %d import, %d pass, %d fail, %d not run "
         "(more than %d iterations), %d refused\n", o ? " (rewritten)" : "",
         n_models, n_imported, n_passed, n_failed, n_big, MAX_WORK, n_refused);
  if (o)
    printf("  %d models the rewrites change\n", n_rewritten);
  else
    print_refusals(refusals, n_refusals);
  CHECK(n_failed == 0);
  CHECK(n_imported >= MIN_IMPORTED);
  CHECK(!o || n_rewritten >= MIN_REWRITTEN);
}

/* ---- (b) refusals ---------------------------------------------------------------- */

/* A symbolic dimension given a value: the input and the output have it. */
static void check_dims(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/onnx/cases/dynamic_shape.onnx", src_root);
  static const char *const names[] = {"height", "batch"};
  static const int64_t values[] = {7, 5};
  loom_onnx_options o = {.dim_names = names, .dim_values = values, .n_dims = 2};
  loom_arena *a = loom_arena_new();
  loom_onnx_model m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_onnx_read_with(path, a, &o, &m, &d) == LOOM_OK);
  if (m.graph) {
    const loom_tensor_info *x = &m.graph->values[0].info;
    const loom_tensor_info *y = &m.graph->values[m.graph->outputs[0]].info;
    CHECK(x->ndim == 2 && x->shape[0] == 5 && x->shape[1] == 3);
    CHECK(y->ndim == 2 && y->shape[0] == 5 && y->shape[1] == 3);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void expect_error(const char *file, const char *expected) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/onnx/cases/%s", src_root, file);
  loom_arena *a = loom_arena_new();
  loom_onnx_model m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_onnx_read(path, a, &m, &d) == LOOM_ERROR);
  loom_buf b;
  loom_buf_init(&b);
  loom_diag_render(&d, &b);
  /* The message without the source root the path starts with. */
  const char *text = b.data ? b.data : "";
  const char *rel = strstr(text, "tests/onnx/cases/");
  CHECK_CONTAINS(rel ? rel : text, expected);
  loom_buf_free(&b);
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void test_refusals(void) {
  expect_error("unsupported_op.onnx",
               "tests/onnx/cases/unsupported_op.onnx: error: node 'hardmax' "
               "(Hardmax): operator not supported; supported: Abs, Add, And, "
               "ArgMax, ArgMin, AveragePool, BatchNormalization, Cast, ");
  expect_error("unsupported_attr_value.onnx",
               "tests/onnx/cases/unsupported_attr_value.onnx: error: node "
               "'pool' (MaxPool): ceil_mode=1 is not supported (only 0)\n");
  expect_error("unsupported_attr.onnx",
               "tests/onnx/cases/unsupported_attr.onnx: error: node 't' "
               "(Transpose): attribute 'note' is not supported; it takes: "
               "perm\n");
  expect_error("dynamic_shape.onnx",
               "tests/onnx/cases/dynamic_shape.onnx: error: input 'x' has "
               "dimension 0 'batch', which is not a constant; static shapes "
               "are required: give it a value (loom model: --dim batch=N)\n");
  check_dims();
  expect_error("make_cases.py",
               "tests/onnx/cases/make_cases.py: error: not an ONNX model");
  const char *const *ops = loom_onnx_operators();
  int n = 0;
  while (ops[n])
    n++;
  CHECK(n == 80);
  CHECK_STREQ(ops[0], "Abs");
}

/* ---- (c) networks ------------------------------------------------------------------- */

static void run_network(const char *stem, const loom_onnx_options *o,
                        int want_inputs, int want_weights, int want_calls,
                        int want_funcs) {
  char dir[1024], path[2048], in[128], out[128];
  snprintf(dir, sizeof dir, "%s/tests/onnx/cases", src_root);
  snprintf(path, sizeof path, "%s/%s.onnx", dir, stem);
  snprintf(in, sizeof in, "%s_input_%%d.pb", stem);
  snprintf(out, sizeof out, "%s_output_%%d.pb", stem);
  loom_arena *a = loom_arena_new();
  loom_onnx_model m;
  loom_diag d;
  loom_diag_init(&d);
  loom_status s = loom_onnx_read_with(path, a, o, &m, &d);
  if (s != LOOM_OK)
    printf("  %s: %s\n", stem, d.msg ? d.msg : "?");
  CHECK(s == LOOM_OK);
  if (s == LOOM_OK) {
    CHECK(m.n_inputs == want_inputs);
    CHECK(m.n_weights == want_weights);
    CHECK(m.graph->n_params == m.n_inputs + m.n_weights);
    CHECK(m.graph->n_calls == want_calls);
    CHECK(m.module->n_funcs == want_funcs);
    CHECK(run_and_compare(&m, dir, in, out, stem, a));
    loom_diag verify;
    loom_diag_init(&verify);
    CHECK(loom_ir_verify_module(m.module, &verify) == LOOM_OK);
    CHECK(loom_ir_verify_graph(m.module, m.graph, &verify) == LOOM_OK);
    if (verify.has_error)
      printf("  %s: %s\n", stem, verify.msg);
    loom_diag_free(&verify);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* Reads cases/FILE with the rewrites o asks for: false, said, on an error. */
static bool read_case(const char *file, const loom_onnx_options *o, loom_arena *a,
                      loom_onnx_model *m) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/onnx/cases/%s", src_root, file);
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_onnx_read_with(path, a, o, m, &d) == LOOM_OK;
  if (!ok)
    printf("  %s: %s\n", file, d.msg ? d.msg : "?");
  CHECK(ok);
  loom_diag_free(&d);
  return ok;
}

/* The conv net's two 8-to-8 convolutions share one function, as do its
 * batch norms of 8 channels and its ReLUs on one shape. */
static void test_convnet_names(void) {
  loom_arena *a = loom_arena_new();
  loom_onnx_model m;
  if (read_case("convnet.onnx", NULL, a, &m)) {
    const loom_graph *g = m.graph;
    CHECK_STREQ(g->calls[0].func, "conv2d");
    CHECK_STREQ(g->calls[4].func, "conv2d1");
    CHECK_STREQ(g->calls[7].func, "conv2d1");
    CHECK_STREQ(g->calls[1].func, "batch_norm");
    CHECK_STREQ(g->calls[5].func, "batch_norm1");
    CHECK_STREQ(g->calls[8].func, "batch_norm1");
    CHECK_STREQ(g->calls[6].func, "relu1");
    CHECK_STREQ(g->calls[10].func, "relu1");
    CHECK_STREQ(g->values[0].name, "x");
    CHECK_STREQ(g->values[1].name, "c1.w");
    CHECK(g->calls[0].n_args == 3); /* x, weight, bias */
    CHECK(g->calls[0].args[0] == 0 && g->calls[0].args[1] == 1);
  }
  loom_arena_free(a);
}

/* Rewritten, the layout model's outputs keep the model's names (the
 * channels-last value beside one takes another), and the depthwise
 * weight is read HWC1, folded with its batch norm. */
static void test_layout_names(void) {
  loom_arena *a = loom_arena_new();
  loom_onnx_model m;
  if (read_case("layout.onnx", &rewrites, a, &m)) {
    const loom_graph *g = m.graph;
    CHECK_STREQ(g->values[g->outputs[0]].name, "y");
    CHECK_STREQ(g->values[g->outputs[1]].name, "p");
    bool has_p_nhwc = false, has_hwc1 = false;
    for (int i = 0; i < g->n_values; i++) {
      has_p_nhwc |= !strcmp(g->values[i].name, "p_nhwc");
      has_hwc1 |= !strcmp(g->values[i].name, "wd_folded_hwc1");
    }
    CHECK(has_p_nhwc);
    CHECK(has_hwc1);
  }
  loom_arena_free(a);
}

int main(int argc, char **argv) {
  if (argc > 1)
    src_root = argv[1];
  is_verbose = argc > 2 && !strcmp(argv[2], "-v");
  if (!exists(NODE_TESTS)) {
    printf("%s is absent (libonnx-testdata): skipped\n", NODE_TESTS);
    return 77;
  }
  test_refusals();
  run_network("mlp", NULL, 1, 6, 5, 5);
  run_network("convnet", NULL, 1, 20, 14, 11);
  /* Rewritten: three convolutions with their folded weights and bias,
   * the batch norms gone, a transpose in and one out. */
  run_network("convnet", &rewrites, 1, 8, 13, 11);
  /* Reshape's shape and Clip's bounds are read at import; the Constant
   * is the one weight. */
  run_network("misc", NULL, 3, 1, 6, 6);
  run_network("misc", &rewrites, 3, 1, 6, 6);
  run_network("layout", NULL, 2, 8, 8, 8);
  /* x and x2 transposed (x2 by r1's function), c1 back to NCHW for the
   * broadcast Add, r1 to NHWC for the depthwise Conv, p back for the
   * Softmax and the output; the batch norm folded. */
  run_network("layout", &rewrites, 2, 5, 12, 11);
  test_convnet_names();
  test_layout_names();
  test_node_tests(NULL);
  test_node_tests(&rewrites);
  return test_summary("onnx");
}
