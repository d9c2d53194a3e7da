/* The normalization passes against the interpreter: every program of
 * tests/<module>/cases and ../shared/corpus, normalized by each pass alone
 * and by all of them, must verify and compute the same outputs as the
 * original on random inputs. Then what each pass does to the forms it is
 * for: loops from 1, bare root statements, blocks without iter vars (and
 * the kinds the dependence analysis gives them). */
#include "loom/interp.h"
#include "loom/normalize.h"
#include "loom/script.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>

/* Programs whose statements run more often than this are not interpreted. */
#define MAX_INSTANCES 2000000.0

static int n_checked, n_skipped;

/* Statement instances of s, or a huge number when a loop is not constant. */
static double instances(const loom_stmt *s) {
  if (!s)
    return 0;
  switch (s->kind) {
  case LOOM_STMT_FOR: {
    int64_t e;
    if (!loom_ir_is_const_int(s->u.loop.extent, &e))
      return 1e30;
    return (double)(e > 0 ? e : 0) * instances(s->u.loop.body);
  }
  case LOOM_STMT_BLOCK_REALIZE:
    return instances(s->u.realize.block->init) +
           instances(s->u.realize.block->body) + 1;
  case LOOM_STMT_SEQ: {
    double n = 0;
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      n += instances(s->u.seq.stmts[i]);
    return n;
  }
  case LOOM_STMT_IF:
    return instances(s->u.if_.then_case) + instances(s->u.if_.else_case) + 1;
  case LOOM_STMT_LET: return instances(s->u.let.body) + 1;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return instances(s->u.alloc.body) + 1;
  case LOOM_STMT_ATTR: return instances(s->u.attr.body) + 1;
  case LOOM_STMT_ASSERT: return instances(s->u.assert_.body) + 1;
  default: return 1;
  }
}

static bool has_scalar_params(const loom_func *f) {
  for (int i = 0; i < f->n_params; i++)
    if (!f->params[i].buffer)
      return true;
  return false;
}

/* Runs f on inputs from seed; false (args NULL) when it cannot run. */
static bool run(const loom_func *f, uint64_t seed, loom_interp_array **args) {
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_interp_alloc_args(f, NULL, args, &d) == LOOM_OK;
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params; i++)
    if (args[i])
      loom_interp_fill_random(args[i], &r);
  ok = ok && loom_interp_run(f, args, NULL, &d) == LOOM_OK;
  loom_diag_free(&d);
  if (!ok)
    loom_interp_free_args(f, args);
  return ok;
}

/* f and g (f normalized) compute the same on two random inputs. */
static void check_same(const char *what, const loom_func *f, const loom_func *g) {
  if (has_scalar_params(f) || instances(f->body) > MAX_INSTANCES) {
    n_skipped++;
    return;
  }
  for (uint64_t seed = 1; seed <= 2; seed++) {
    loom_interp_array *x[64] = {0}, *y[64] = {0};
    if (f->n_params > 64 || !run(f, seed, x)) {
      n_skipped++;
      return;
    }
    bool ok = run(g, seed, y);
    if (!ok)
      fprintf(stderr, "%s: the normalized '%s' does not run\n", what, f->name);
    CHECK(ok);
    for (int i = 0; ok && i < f->n_params; i++) {
      if (!x[i])
        continue;
      char *why = NULL;
      bool same = loom_interp_compare(y[i], x[i], 0, 0, &why);
      if (!same)
        fprintf(stderr, "%s: '%s' parameter %d differs %s\n", what, f->name, i,
                why ? why : "");
      free(why);
      CHECK(same);
    }
    loom_interp_free_args(f, x);
    if (ok)
      loom_interp_free_args(g, y);
  }
  n_checked++;
}

static void check_file(const char *path) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(path, &text, &len, &d) != LOOM_OK) {
    loom_diag_free(&d);
    return;
  }
  loom_arena *a = loom_arena_new();
  loom_module *m;
  if (loom_script_read(text, len, path, a, &m, &d) != LOOM_OK) {
    /* schedule scripts and deliberately broken programs */
    loom_diag_free(&d);
    loom_arena_free(a);
    free(text);
    return;
  }
  for (int p = 0; p <= LOOM_NORMALIZE_COUNT_; p++) {
    loom_module *n = NULL;
    loom_diag e;
    loom_diag_init(&e);
    loom_status st = p < LOOM_NORMALIZE_COUNT_
                         ? loom_normalize_run(a, m, (loom_normalize_pass)p, &n, &e)
                         : loom_normalize_module(a, m, &n, &e);
    char what[1200];
    snprintf(what, sizeof what, "%s [%s]", path,
             p < LOOM_NORMALIZE_COUNT_ ? loom_normalize_pass_name((loom_normalize_pass)p)
                                       : "all");
    if (st != LOOM_OK)
      fprintf(stderr, "%s: %s\n", what, e.msg ? e.msg : "out of memory");
    CHECK(st == LOOM_OK);
    loom_diag_free(&e);
    if (st != LOOM_OK)
      continue;
    CHECK(n->n_funcs == m->n_funcs);
    for (int i = 0; i < m->n_funcs && i < n->n_funcs; i++)
      check_same(what, m->funcs[i], n->funcs[i]);
    /* A second run changes nothing more. */
    loom_module *again = NULL;
    loom_diag_init(&e);
    st = p < LOOM_NORMALIZE_COUNT_
             ? loom_normalize_run(a, n, (loom_normalize_pass)p, &again, &e)
             : loom_normalize_module(a, n, &again, &e);
    loom_diag_free(&e);
    CHECK(st == LOOM_OK && loom_ir_equal_module(again, n, NULL));
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  free(text);
}

static void check_dir(const char *dir) {
  DIR *dp = opendir(dir);
  if (!dp)
    return;
  struct dirent *e;
  char *names[256];
  int n = 0;
  while ((e = readdir(dp)) && n < 256) {
    size_t len = strlen(e->d_name);
    if (len > 3 && !strcmp(e->d_name + len - 3, ".py"))
      names[n++] = strdup(e->d_name);
  }
  closedir(dp);
  for (int i = 0; i < n; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    check_file(path);
    free(names[i]);
  }
}

/* ---- what each pass does ----------------------------------------------------- */

static char *normalized(const char *src, int pass) {
  loom_arena *a = loom_arena_new();
  loom_module *m, *n = NULL;
  loom_diag d;
  loom_diag_init(&d);
  char *out = NULL;
  loom_status st = loom_script_read(src, strlen(src), "t.py", a, &m, &d);
  if (st == LOOM_OK)
    st = pass < 0 ? loom_normalize_module(a, m, &n, &d)
                  : loom_normalize_run(a, m, (loom_normalize_pass)pass, &n, &d);
  if (st == LOOM_OK) {
    loom_buf b;
    loom_buf_init(&b);
    loom_print_opts o = {LOOM_DIALECT_TIR};
    loom_script_print_module(n, &o, &b);
    out = loom_buf_take(&b);
    check_same("inline case", m->funcs[0], n->funcs[0]);
  } else {
    fprintf(stderr, "normalize failed: %s\n", d.msg ? d.msg : "?");
  }
  CHECK(st == LOOM_OK);
  loom_diag_free(&d);
  loom_arena_free(a);
  return out;
}

#define HEAD "from tvm.script import tir as T\n@T.prim_func\n"

static void test_loop_zero(void) {
  char *s = normalized(HEAD
                       "def main(A: T.Buffer((100,), \"float32\"), B: T.Buffer((100,), \"float32\")):\n"
                       "    for i_ in range(1, 100):\n"
                       "        with T.block(\"block\"):\n"
                       "            i = T.axis.remap(\"S\", [i_])\n"
                       "            B[i] = A[i] + T.float32(1)\n"
                       "    for j in range(3, 7):\n"
                       "        for k in range(j, 10):\n"
                       "            B[j * 10 + k] = A[k - 1]\n",
                       LOOM_NORMALIZE_LOOP_ZERO);
  CHECK_CONTAINS(s, "for i_ in range(99):");
  CHECK_CONTAINS(s, "i = T.axis.spatial((1, 100), i_ + 1)");
  CHECK_CONTAINS(s, "for j in range(4):");
  CHECK_CONTAINS(s, "for k in range(j * -1 + 7):");
  CHECK_CONTAINS(s, "B[j * 11 + k + 33] = A[k + j + 2]");
  free(s);
}

static void test_wrap_root(void) {
  char *s = normalized(HEAD
                       "def main(A: T.Buffer((100,), \"float32\"), B: T.Buffer((100,), \"float32\")):\n"
                       "    B[0] = T.float32(0)\n"
                       "    for i_ in range(99):\n"
                       "        with T.block(\"block\"):\n"
                       "            i = T.axis.remap(\"R\", [i_])\n"
                       "            B[i + 1] = B[i] + A[i + 1]\n",
                       LOOM_NORMALIZE_WRAP_ROOT);
  CHECK_CONTAINS(s, "with T.block(\"store\"):\n"
                    "        T.reads()\n"
                    "        T.writes(B[0])\n"
                    "        B[0] = T.float32(0.0)\n");
  free(s);
  /* A function of bare loops gets a root block and one block per store,
   * under the loops. */
  s = normalized(HEAD
                 "def main(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
                 "    for i in range(8):\n"
                 "        B[i] = T.float32(0)\n"
                 "        for k in range(8):\n"
                 "            B[i] = B[i] + A[i, k]\n",
                 -1);
  CHECK_CONTAINS(s, "# with T.block(\"root\"):");
  CHECK_CONTAINS(s, "with T.block(\"store\"):\n"
                    "            v_i = T.axis.spatial(8, i)");
  CHECK_CONTAINS(s, "with T.block(\"store_1\"):\n"
                    "                v_i, v_k = T.axis.remap(\"SR\", [i, k])");
  free(s);
}

static void test_iter_vars(void) {
  /* Under an if/else: both loops spatial. */
  char *s = normalized(HEAD
                       "def main(A: T.Buffer((10, 10), \"float16\")):\n"
                       "    for i in range(10):\n"
                       "        if i % 2 == 0:\n"
                       "            for j in range(10):\n"
                       "                with T.block(\"block1\"):\n"
                       "                    A[i, j] = T.float16(1)\n"
                       "        else:\n"
                       "            for j in range(10):\n"
                       "                with T.block(\"block2\"):\n"
                       "                    A[i, j] = T.float16(2)\n",
                       LOOM_NORMALIZE_ITER_VARS);
  CHECK_CONTAINS(s, "v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"
                    "                    T.reads()\n"
                    "                    T.writes(A[v_i, v_j])\n"
                    "                    A[v_i, v_j] = T.float16(1.0)");
  free(s);
  /* A scan written without iter vars: ordered; an in-place update:
   * spatial; a histogram (a data-dependent write that conflicts across
   * iterations): ordered too. */
  s = normalized(HEAD
                 "def main(A: T.Buffer((16,), \"int32\"), B: T.Buffer((16,), \"int32\"), H: T.Buffer((16,), \"int32\")):\n"
                 "    for i in range(15):\n"
                 "        with T.block(\"scan\"):\n"
                 "            B[i + 1] = B[i] + A[i + 1]\n"
                 "    for i in range(16):\n"
                 "        with T.block(\"inplace\"):\n"
                 "            A[i] = A[i] * 2\n"
                 "    for i in range(16):\n"
                 "        with T.block(\"hist\"):\n"
                 "            H[A[i] % 16] = H[A[i] % 16] + 1\n",
                 LOOM_NORMALIZE_ITER_VARS);
  CHECK_CONTAINS(s, "with T.block(\"scan\"):\n            v_i = T.axis.scan(15, i)");
  CHECK_CONTAINS(s, "with T.block(\"inplace\"):\n            v_i = T.axis.spatial(16, i)");
  CHECK_CONTAINS(s, "with T.block(\"hist\"):\n            v_i = T.axis.scan(16, i)");
  free(s);
  /* A triangular loop: the iter var's domain is the bound of the range. */
  s = normalized(HEAD
                 "def main(A: T.Buffer((8, 8), \"float32\")):\n"
                 "    for i in range(8):\n"
                 "        for j in range(i + 1):\n"
                 "            with T.block(\"lower\"):\n"
                 "                A[i, j] = T.float32(1)\n",
                 -1);
  CHECK_CONTAINS(s, "v_i = T.axis.spatial(8, i)");
  CHECK_CONTAINS(s, "v_j = T.axis.spatial(8, j)");
  free(s);
}

/* Allocation failure: every allocation of the output arena fails in turn;
 * each run ends in LOOM_NOMEM (or, once enough succeed, the full result)
 * without crashing or leaking. */
static void test_faults(void) {
  static const char *const src =
      HEAD "def main(A: T.Buffer((16,), \"int32\"), B: T.Buffer((16, 4), \"int32\")):\n"
           "    A[0] = 0\n"
           "    for i in range(1, 16):\n"
           "        for k in range(4):\n"
           "            with T.block(\"scan\"):\n"
           "                A[i] = A[i - 1] + B[i, k]\n";
  loom_arena *in = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(src, strlen(src), "f.py", in, &m, &d) == LOOM_OK);
  loom_diag_free(&d);
  bool is_done = false;
  int n_failed = 0;
  for (long k = 1; k < 5000 && !is_done; k++) {
    loom_arena *a = loom_arena_new();
    loom_faultsim fs = {k, 0};
    loom_arena_set_faultsim(a, &fs);
    loom_module *out = NULL;
    loom_diag_init(&d);
    loom_status st = loom_normalize_module(a, m, &out, &d);
    if (st == LOOM_OK && fs.count < k) {
      is_done = true; /* every allocation succeeded */
      CHECK(out->funcs[0] != m->funcs[0]);
    } else if (st != LOOM_NOMEM) {
      fprintf(stderr, "fault at %ld: status %d (%s)\n", k, (int)st,
              d.msg ? d.msg : "");
      n_failed++;
    }
    loom_diag_free(&d);
    loom_arena_free(a);
  }
  CHECK(is_done);
  CHECK(n_failed == 0);
  loom_arena_free(in);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  test_faults();
  test_loop_zero();
  test_wrap_root();
  test_iter_vars();
  char path[1024];
  snprintf(path, sizeof path, "%s/tests", root);
  DIR *dp = opendir(path);
  struct dirent *e;
  while (dp && (e = readdir(dp))) {
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "%s/tests/%s/cases", root, e->d_name);
    check_dir(path);
  }
  if (dp)
    closedir(dp);
  snprintf(path, sizeof path, "%s/../shared/corpus", root);
  check_dir(path);
  printf("normalize: %d functions compared, %d skipped\n", n_checked, n_skipped);
  CHECK(n_checked > 20);
  return test_summary("normalize");
}
