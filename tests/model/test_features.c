/* Per-store features on small programs whose values are worked out by hand:
 * a 16x16x16 matmul in two loop orders (flops, bytes, strides, reuse), a
 * vectorized against a serial elementwise op, a parallel loop, and every
 * value finite on programs with odd indices. */
#include "loom/model.h"
#include "loom/script.h"
#include "test.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>

static const loom_func *read_func(loom_arena *a, const char *text) {
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_script_read(text, strlen(text), "t.py", a, &m, &d);
  if (st != LOOM_OK)
    fprintf(stderr, "read: %s\n", d.msg);
  loom_diag_free(&d);
  return st == LOOM_OK ? m->funcs[0] : NULL;
}

/* order is a permutation of "ijk", outermost first */
static void matmul(loom_buf *b, const char *order) {
  loom_buf_printf(b,
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"),"
      " C: T.Buffer((16, 16), \"float32\")):\n"
      "    for %c in range(16):\n"
      "        for %c in range(16):\n"
      "            for %c in range(16):\n"
      "                with T.block(\"matmul\"):\n"
      "                    vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "                    with T.init():\n"
      "                        C[vi, vj] = T.float32(0.0)\n"
      "                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
      order[0], order[1], order[2]);
}

static double unslog(float v) { return exp2(fabs(v)) - 1; }

static bool all_finite(const float *rows, int n) {
  for (int i = 0; i < n * LOOM_MODEL_FEATURE_DIM; i++)
    if (!isfinite(rows[i]))
      return false;
  return true;
}

static int features(loom_arena *a, const char *text, float **rows) {
  const loom_func *f = read_func(a, text);
  CHECK(f != NULL);
  if (!f)
    return 0;
  loom_diag d;
  loom_diag_init(&d);
  int n = 0;
  loom_status st = loom_model_features(f, 2, rows, &n, &d);
  if (st != LOOM_OK)
    fprintf(stderr, "features: %s\n", d.msg);
  CHECK(st == LOOM_OK);
  loom_diag_free(&d);
  CHECK(all_finite(*rows, n));
  return n;
}

/* Column of the buffer group whose bytes come k-th, for buffer feature c. */
static float buf_feat(const float *row, int k, int c) {
  return row[LOOM_FEAT_BUFFERS_ + k * LOOM_FEAT_BUF_DIM_ + c];
}

/* The group of the buffer with the given unique footprint and flags; -1
 * when no group matches. The matmul's buffers all have the same bytes, so
 * tests find them by what they do. */
static int find_buf(const float *row, bool is_write) {
  for (int k = 0; k < LOOM_MODEL_BUFFERS; k++)
    if (buf_feat(row, k, LOOM_FEAT_BUF_PRESENT) &&
        buf_feat(row, k, LOOM_FEAT_BUF_IS_WRITE) == is_write)
      return k;
  return -1;
}

static void test_matmul(loom_arena *a, const char *order, double a_stride,
                        double b_stride, double c_stride) {
  loom_buf b;
  loom_buf_init(&b);
  matmul(&b, order);
  float *rows = NULL;
  int n = features(a, b.data, &rows);
  loom_buf_free(&b);
  CHECK(n == 2); /* the init store and the update */
  if (n != 2) {
    free(rows);
    return;
  }
  const float *init = rows, *upd = rows + LOOM_MODEL_FEATURE_DIM;
  /* the update: 4096 iterations, one add and one multiply each */
  CHECK(upd[LOOM_FEAT_LOOP_DEPTH] == 3);
  CHECK(fabs(unslog(upd[LOOM_FEAT_LOOP_TRIPS]) - 4096) < 1e-6 * 4096);
  CHECK(fabs(unslog(upd[LOOM_FEAT_FLOPS]) - 2 * 16 * 16 * 16) < 1);
  CHECK(fabs(unslog(upd[LOOM_FEAT_FLOAT_ADDSUB]) - 4096) < 1);
  CHECK(fabs(unslog(upd[LOOM_FEAT_FLOAT_MUL]) - 4096) < 1);
  CHECK(fabs(unslog(upd[LOOM_FEAT_PROG_FLOPS]) - 8192) < 1);
  /* bytes: A, B and C read, C written, 4 bytes each per iteration */
  CHECK(fabs(unslog(upd[LOOM_FEAT_BYTES]) - 4096.0 * 16) < 1);
  CHECK(fabs(upd[LOOM_FEAT_INTENSITY] - 8192.0 / (4096.0 * 16)) < 1e-4);
  CHECK(upd[LOOM_FEAT_SERIAL_NUM] == 3 && upd[LOOM_FEAT_VECTOR_NUM] == 0);
  /* working sets: the innermost loop touches a row or column of 16 of
   * two buffers and one element of the third; the two innermost, one whole
   * buffer and rows of the others; the nest, all three */
  CHECK(fabs(unslog(upd[LOOM_FEAT_FOOTPRINT_1]) - (16 + 16 + 1) * 4) < 1e-2);
  CHECK(fabs(unslog(upd[LOOM_FEAT_FOOTPRINT_2]) - (256 + 16 + 16) * 4) < 1e-1);
  CHECK(fabs(unslog(upd[LOOM_FEAT_FOOTPRINT_3]) - 3 * 1024) < 1);
  CHECK(upd[LOOM_FEAT_FOOTPRINT_6] == upd[LOOM_FEAT_FOOTPRINT_3]);
  /* the init runs only when k == 0: 256 times, no flops */
  CHECK(fabs(unslog(init[LOOM_FEAT_LOOP_TRIPS]) - 256) < 1e-3);
  CHECK(init[LOOM_FEAT_FLOPS] == 0);

  /* each buffer: 16x16 floats of footprint, and its innermost stride */
  int kc = find_buf(upd, true);
  CHECK(kc >= 0);
  if (kc >= 0) {
    CHECK(buf_feat(upd, kc, LOOM_FEAT_BUF_IS_READ) == 1);
    CHECK(fabs(unslog(buf_feat(upd, kc, LOOM_FEAT_BUF_UNIQUE_BYTES)) - 1024) < 1e-3);
    CHECK(fabs(unslog(buf_feat(upd, kc, LOOM_FEAT_BUF_INNER_STRIDE)) - c_stride) < 1e-4);
    CHECK(fabs(unslog(buf_feat(upd, kc, LOOM_FEAT_BUF_UNIQUE_LINES)) - 16) < 1e-3);
    CHECK(buf_feat(upd, kc, LOOM_FEAT_BUF_REUSE_LOOP) == 1); /* k leaves C */
    /* innermost k leaves C in place: reused each iteration, after the
     * store touched one element of each buffer */
    if (c_stride == 0)
      CHECK(fabs(unslog(buf_feat(upd, kc, LOOM_FEAT_BUF_REUSE_BYTES)) - 12) < 1e-3);
  }
  /* A and B: by elimination, the reads; their strides are a_stride and
   * b_stride in some order (same bytes, so the sort may put either first) */
  double s[2];
  int m = 0;
  for (int k = 0; k < LOOM_MODEL_BUFFERS && m < 2; k++)
    if (k != kc && buf_feat(upd, k, LOOM_FEAT_BUF_PRESENT)) {
      CHECK(buf_feat(upd, k, LOOM_FEAT_BUF_IS_WRITE) == 0);
      CHECK(fabs(unslog(buf_feat(upd, k, LOOM_FEAT_BUF_UNIQUE_BYTES)) - 1024) < 1e-3);
      CHECK(buf_feat(upd, k, LOOM_FEAT_BUF_REUSE_LOOP) == 1);
      s[m++] = unslog(buf_feat(upd, k, LOOM_FEAT_BUF_INNER_STRIDE));
    }
  CHECK(m == 2);
  if (m == 2)
    CHECK((fabs(s[0] - a_stride) < 1e-4 && fabs(s[1] - b_stride) < 1e-4) ||
          (fabs(s[0] - b_stride) < 1e-4 && fabs(s[1] - a_stride) < 1e-4));
  free(rows);
}

static const char *serial_add =
    "@T.prim_func\n"
    "def main(A: T.Buffer((1024,), \"float32\"), B: T.Buffer((1024,), \"float32\")):\n"
    "    for io in range(128):\n"
    "        for ii in range(8):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(1024, io * 8 + ii)\n"
    "                B[vi] = A[vi] + T.float32(1.0)\n";

static const char *vector_add =
    "@T.prim_func\n"
    "def main(A: T.Buffer((1024,), \"float32\"), B: T.Buffer((1024,), \"float32\")):\n"
    "    for io in T.parallel(128):\n"
    "        for ii in T.vectorized(8):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(1024, io * 8 + ii)\n"
    "                B[vi] = A[vi] + T.float32(1.0)\n";

static void test_vectorized(loom_arena *a) {
  float *s = NULL, *v = NULL;
  int ns = features(a, serial_add, &s);
  int nv = features(a, vector_add, &v);
  CHECK(ns == 1 && nv == 1);
  if (ns == 1 && nv == 1) {
    CHECK(s[LOOM_FEAT_VECTOR_NUM] == 0 && v[LOOM_FEAT_VECTOR_NUM] == 1);
    CHECK(s[LOOM_FEAT_VECTOR_LEN] == 0 && fabs(unslog(v[LOOM_FEAT_VECTOR_LEN]) - 8) < 1e-4);
    CHECK(s[LOOM_FEAT_VECTOR_IS_INNERMOST] == 0 && v[LOOM_FEAT_VECTOR_IS_INNERMOST] == 1);
    CHECK(s[LOOM_FEAT_VECTOR_POS] == 0 && v[LOOM_FEAT_VECTOR_POS] == 1);
    CHECK(s[LOOM_FEAT_PARALLEL_NUM] == 0 && v[LOOM_FEAT_PARALLEL_NUM] == 1);
    CHECK(s[LOOM_FEAT_PARALLEL_POS] == 0 && v[LOOM_FEAT_PARALLEL_POS] == 1);
    CHECK(fabs(unslog(v[LOOM_FEAT_PROG_PARALLEL]) - 128) < 1e-3);
    CHECK(fabs(unslog(v[LOOM_FEAT_PROG_PAR_PER_CORE]) - 64) < 1e-3);
    CHECK(s[LOOM_FEAT_SERIAL_NUM] == 2 && v[LOOM_FEAT_SERIAL_NUM] == 0);
    /* the rest is the same program */
    CHECK(s[LOOM_FEAT_FLOPS] == v[LOOM_FEAT_FLOPS]);
    CHECK(fabs(unslog(s[LOOM_FEAT_FLOPS]) - 1024) < 1e-2);
    CHECK(s[LOOM_FEAT_BYTES] == v[LOOM_FEAT_BYTES]);
    for (int k = 0; k < 2; k++) {
      CHECK(buf_feat(s, k, LOOM_FEAT_BUF_IS_CONTIGUOUS) == 1);
      CHECK(buf_feat(s, k, LOOM_FEAT_BUF_REUSE_NONE) == 1);
      CHECK(fabs(unslog(buf_feat(s, k, LOOM_FEAT_BUF_UNIQUE_LINES)) - 64) < 1e-3);
    }
    CHECK(buf_feat(s, 2, LOOM_FEAT_BUF_PRESENT) == 0);
  }
  free(s);
  free(v);
}

/* Programs whose indices the affine analysis cannot follow, and a local
 * buffer: features exist and are finite. */
static const char *odd[] = {
    "@T.prim_func\n"
    "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    for i in range(64):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(64, i)\n"
    "            B[vi] = A[(vi * vi) % 64] / A[vi // 3] + T.exp(A[T.max(vi - 1, 0)])\n",
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    X = T.alloc_buffer((64,), \"float32\", scope=\"local\")\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"X\"):\n"
    "            vi, vj = T.axis.remap(\"SR\", [i, j])\n"
    "            with T.init():\n"
    "                X[vi] = T.float32(-3.0e38)\n"
    "            X[vi] = T.max(X[vi], A[vi, vj])\n"
    "    for i in range(64):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(64, i)\n"
    "            B[vi] = T.Select(X[vi] > T.float32(0), X[vi], T.float32(0))\n",
    "@T.prim_func\n"
    "def main(A: T.Buffer((8,), \"float32\")):\n"
    "    A[0] = T.float32(1.0)\n",
};

static void test_odd(loom_arena *a) {
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
    float *rows = NULL;
    int n = features(a, odd[i], &rows);
    CHECK(n >= 1);
    if (i == 1 && n == 3) {
      const float *upd = rows + LOOM_MODEL_FEATURE_DIM;
      CHECK(upd[LOOM_FEAT_ALLOC_NUM] == 1);
      CHECK(upd[LOOM_FEAT_STORE_IS_LOCAL] == 1);
      CHECK(upd[LOOM_FEAT_STORE_SCOPE_LOCAL] == 1);
      CHECK(fabs(unslog(upd[LOOM_FEAT_FLOAT_MATH]) - 4096) < 1);
      CHECK(fabs(unslog(rows[2 * LOOM_MODEL_FEATURE_DIM + LOOM_FEAT_SELECTS]) - 64) < 1e-2);
    }
    free(rows);
  }
  char name[48];
  CHECK_STREQ(loom_model_feature_name(LOOM_FEAT_LOOP_TRIPS, name), "loop_trips");
  CHECK_STREQ(loom_model_feature_name(LOOM_FEAT_BUFFERS_ + LOOM_FEAT_BUF_DIM_ +
                                          LOOM_FEAT_BUF_INNER_STRIDE, name),
              "buf1_inner_stride");
}

/* What cannot be lowered or nests too deep fails with a diagnostic and no
 * rows. */
static void test_refused(loom_arena *a) {
  const char *wide =
      "@T.prim_func\n"
      "def main(A: T.Buffer((128,), \"float32\")):\n"
      "    A[T.Ramp(0, 1, 128)] = T.Broadcast(T.float32(1.0), 128)\n";
  loom_buf deep;
  loom_buf_init(&deep);
  loom_buf_puts(&deep, "@T.prim_func\ndef main(A: T.Buffer((2,), \"float32\")):\n");
  for (int i = 0; i < 70; i++)
    loom_buf_printf(&deep, "%*sfor i%d in range(1):\n", 4 + 4 * i, "", i);
  loom_buf_printf(&deep, "%*sA[0] = A[1]\n", 4 + 4 * 70, "");
  const char *text[2] = {wide, deep.data};
  const char *why[2] = {"lanes", "too many nested loops"};
  for (int i = 0; i < 2; i++) {
    const loom_func *f = read_func(a, text[i]);
    CHECK(f != NULL);
    if (!f)
      continue;
    loom_diag d;
    loom_diag_init(&d);
    float *rows = (float *)&d;
    int n = -1;
    CHECK(loom_model_features(f, 1, &rows, &n, &d) == LOOM_ERROR);
    CHECK(rows == NULL && n == 0);
    CHECK_CONTAINS(d.msg, why[i]);
    loom_diag_free(&d);
  }
  loom_buf_free(&deep);
}

/* Every function of every script in a folder (and one level of subfolders):
 * features are finite, or refused with a message. Returns the count of
 * functions with features. */
static int n_featured, n_refused;

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
  if (loom_script_read(text, len, path, a, &m, &d) == LOOM_OK) {
    for (int i = 0; i < m->n_funcs; i++) {
      loom_diag e;
      loom_diag_init(&e);
      float *rows;
      int n;
      if (loom_model_features(m->funcs[i], 4, &rows, &n, &e) == LOOM_OK) {
        if (!all_finite(rows, n))
          fprintf(stderr, "%s: a feature is not finite\n", path);
        CHECK(all_finite(rows, n));
        n_featured++;
      } else {
        CHECK(e.msg != NULL && rows == NULL);
        n_refused++;
      }
      free(rows);
      loom_diag_free(&e);
    }
  }
  loom_arena_free(a);
  loom_diag_free(&d);
  free(text);
}

static void check_dir(const char *path, int depth) {
  DIR *dp = opendir(path);
  for (struct dirent *e; dp && (e = readdir(dp));) {
    if (e->d_name[0] == '.')
      continue;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    size_t n = strlen(e->d_name);
    if (n > 3 && !strcmp(e->d_name + n - 3, ".py"))
      check_file(sub);
    else if (depth > 0)
      check_dir(sub, depth - 1);
  }
  if (dp)
    closedir(dp);
}

static void test_corpus(const char *root) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/script/cases", root);
  check_dir(path, 0);
  CHECK(n_featured >= 8); /* the repository's own cases are always there */
  /* the shared corpus and conformance cases, when present */
  snprintf(path, sizeof path, "%s/../shared/corpus", root);
  check_dir(path, 0);
  snprintf(path, sizeof path, "%s/../shared/conformance", root);
  check_dir(path, 1);
  printf("features of %d functions, %d refused\n", n_featured, n_refused);
}

int main(int argc, char **argv) {
  loom_arena *a = loom_arena_new();
  /* i j k: A[i, k] moves by 1, B[k, j] by 16, C[i, j] not at all */
  test_matmul(a, "ijk", 1, 16, 0);
  /* i k j: A stays, B and C move by 1 */
  test_matmul(a, "ikj", 0, 1, 1);
  test_vectorized(a);
  test_odd(a);
  test_refused(a);
  test_corpus(argc > 1 ? argv[1] : ".");
  loom_arena_free(a);
  return test_summary("model/features");
}
