/* Tests of the dependence analysis: the corpus programs (copies in
 * tests/arith/cases) and hand-written stencils, scans, triangular nests and
 * in-place updates with their expected witnesses, and random small loop
 * nests whose answers are compared with brute-force enumeration of every
 * pair of accesses in execution order. */
#include "loom/arith.h"
#include "loom/script.h"
#include "test.h"

#include <stdlib.h>

/* Override with -D to stress the analysis with other streams. */
#ifndef DEPEND_SEED
#define DEPEND_SEED 17
#endif
#ifndef DEPEND_COUNT
#define DEPEND_COUNT 250
#endif

static const char *root = ".";

typedef struct prog {
  loom_arena *arena;
  loom_module *m;
  loom_arith_deps *deps;
  char *text;
} prog;

static bool prog_load(prog *p, const char *text, const char *name) {
  *p = (prog){loom_arena_new(), NULL, NULL, NULL};
  loom_diag d;
  loom_diag_init(&d);
  bool is_ok = loom_script_read(text, strlen(text), name, p->arena, &p->m, &d) == LOOM_OK &&
               loom_arith_deps_new(p->m->funcs[0], &p->deps, &d) == LOOM_OK;
  if (!is_ok)
    fprintf(stderr, "%s: %s (line %d)\n", name, d.msg, d.loc.line);
  loom_diag_free(&d);
  return is_ok;
}

static bool prog_load_file(prog *p, const char *path) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  bool is_ok = loom_read_file(path, &text, &len, &d) == LOOM_OK;
  loom_diag_free(&d);
  if (!is_ok) {
    *p = (prog){0};
    return false;
  }
  is_ok = prog_load(p, text, path);
  p->text = text;
  return is_ok;
}

static void prog_free(prog *p) {
  loom_arith_deps_free(p->deps);
  loom_arena_free(p->arena);
  free(p->text);
}

/* The n-th loop (0-based, in program order) whose variable is called name. */
static loom_var *find_loop(const loom_stmt *s, const char *name, int *nth) {
  if (!s)
    return NULL;
  loom_var *v = NULL;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    if (!strcmp(s->u.loop.var->name, name) && (*nth)-- == 0)
      return s->u.loop.var;
    return find_loop(s->u.loop.body, name, nth);
  case LOOM_STMT_BLOCK_REALIZE:
    v = find_loop(s->u.realize.block->init, name, nth);
    return v ? v : find_loop(s->u.realize.block->body, name, nth);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts && !v; i++)
      v = find_loop(s->u.seq.stmts[i], name, nth);
    return v;
  case LOOM_STMT_IF:
    v = find_loop(s->u.if_.then_case, name, nth);
    return v ? v : find_loop(s->u.if_.else_case, name, nth);
  default: return NULL;
  }
}

static const loom_block *find_block(const loom_stmt *s, const char *name) {
  if (!s)
    return NULL;
  const loom_block *b = NULL;
  switch (s->kind) {
  case LOOM_STMT_FOR: return find_block(s->u.loop.body, name);
  case LOOM_STMT_BLOCK_REALIZE:
    b = s->u.realize.block;
    if (b->name && !strcmp(b->name, name))
      return b;
    return find_block(b->body, name);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts && !b; i++)
      b = find_block(s->u.seq.stmts[i], name);
    return b;
  case LOOM_STMT_IF:
    b = find_block(s->u.if_.then_case, name);
    return b ? b : find_block(s->u.if_.else_case, name);
  default: return NULL;
  }
}

static loom_var *loop(prog *p, const char *name) {
  int nth = 0;
  return find_loop(p->m->funcs[0]->body, name, &nth);
}

/* Asks whether loop name carries a dependence; returns the witness text
 * (or "" when none). */
static const char *carried(prog *p, const char *name, bool *is_carried,
                           loom_dep_witness *w) {
  loom_diag d;
  loom_diag_init(&d);
  *w = (loom_dep_witness){0};
  loom_status st = loom_arith_deps_loop_carried(p->deps, loop(p, name), is_carried, w, &d);
  CHECK(st == LOOM_OK);
  if (st != LOOM_OK)
    fprintf(stderr, "query failed: %s\n", d.msg);
  loom_diag_free(&d);
  return *is_carried && w->text ? w->text : "";
}

static void expect_carried(prog *p, const char *name, const char *witness) {
  bool is_carried = false;
  loom_dep_witness w;
  const char *t = carried(p, name, &is_carried, &w);
  CHECK(is_carried);
  if (witness)
    CHECK_STREQ(t, witness);
}

static void expect_parallel(prog *p, const char *name) {
  bool is_carried = true;
  loom_dep_witness w;
  const char *t = carried(p, name, &is_carried, &w);
  CHECK(!is_carried);
  if (is_carried)
    fprintf(stderr, "loop %s: unexpected dependence: %s\n", name, t);
}

static bool block_independent(prog *p, const char *name, loom_dep_witness *w) {
  bool is_independent = false;
  loom_diag d;
  loom_diag_init(&d);
  const loom_block *b = find_block(p->m->funcs[0]->body, name);
  CHECK(b != NULL);
  CHECK(loom_arith_deps_block_independent(p->deps, b, &is_independent, w, &d) == LOOM_OK);
  loom_diag_free(&d);
  return is_independent;
}

static char *case_path(const char *dir, const char *name) {
  size_t n = strlen(root) + strlen(dir) + strlen(name) + 3;
  char *path = malloc(n);
  snprintf(path, n, "%s/%s/%s", root, dir, name);
  return path;
}

static void test_cases(void) {
  prog p;
  loom_dep_witness w;
  char *path = case_path("tests/arith/cases", "seed_prefix_sum.py");
  CHECK(prog_load_file(&p, path));
  expect_carried(&p, "i_", "B[i + 1] written at 13:13 is read as B[i] at 13:13 by "
                           "iteration i_ + 1 (i_ = 0, then i_ = 1)");
  CHECK(!block_independent(&p, "block", &w));
  CHECK(w.kind == LOOM_DEP_RAW && w.distance == 1 && w.is_exact);
  CHECK_STREQ(loom_arith_deps_assumptions(p.deps), "");
  prog_free(&p);
  free(path);

  path = case_path("tests/arith/cases", "seed_inplace.py");
  CHECK(prog_load_file(&p, path));
  expect_parallel(&p, "i_");
  CHECK(block_independent(&p, "block", &w));
  prog_free(&p);
  free(path);

  path = case_path("tests/arith/cases", "seed_branches.py");
  CHECK(prog_load_file(&p, path));
  expect_parallel(&p, "i");
  expect_parallel(&p, "j");
  CHECK(block_independent(&p, "block1", &w));
  prog_free(&p);
  free(path);

  path = case_path("tests/arith/cases", "seed_loop_from_one.py");
  CHECK(prog_load_file(&p, path));
  expect_parallel(&p, "i_");
  prog_free(&p);
  free(path);

  path = case_path("tests/arith/cases", "matmul_1024.py");
  CHECK(prog_load_file(&p, path));
  expect_parallel(&p, "i");
  expect_parallel(&p, "j");
  expect_carried(&p, "k", NULL);
  CHECK(!block_independent(&p, "matmul", &w));
  CHECK(w.buffer && !strcmp(w.buffer->name, "C"));
  bool is_legal = false;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_arith_deps_can_interchange(p.deps, loop(&p, "i"), loop(&p, "j"), &is_legal,
                                        &w, &d) == LOOM_OK);
  CHECK(is_legal);
  CHECK(loom_arith_deps_can_interchange(p.deps, loop(&p, "j"), loop(&p, "k"), &is_legal,
                                        &w, &d) == LOOM_OK);
  CHECK(is_legal);
  loom_diag_free(&d);
  prog_free(&p);
  free(path);

  path = case_path("tests/arith/cases", "conv2d_nhwc.py");
  CHECK(prog_load_file(&p, path));
  for (int i = 0; i < 4; i++)
    expect_parallel(&p, (const char *[]){"n", "h", "w", "c"}[i]);
  expect_carried(&p, "rh", NULL);
  expect_carried(&p, "ci", NULL);
  CHECK(block_independent(&p, "pad", &w));
  CHECK(!block_independent(&p, "conv", &w));
  prog_free(&p);
  free(path);
}

/* Every corpus program analyses without failing (skipped without it). */
static void test_shared_corpus(void) {
  static const char *names[] = {"seed_prefix_sum.py", "seed_inplace.py",
                                "seed_branches.py", "seed_loop_from_one.py",
                                "matmul_1024.py", "conv2d_nhwc.py", "softmax.py"};
  int n_read = 0;
  for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
    char *path = case_path("../shared/corpus", names[i]);
    FILE *f = fopen(path, "rb");
    if (f) {
      fclose(f);
      prog p;
      CHECK(prog_load_file(&p, path));
      n_read++;
      prog_free(&p);
    }
    free(path);
  }
  printf("shared corpus: %d programs analysed%s\n", n_read,
         n_read ? "" : " (skipped: ../shared absent)");
}

static const char *const header =
    "@T.prim_func\n"
    "def main(A: T.Buffer((64,), \"int32\"), B: T.Buffer((8, 8), \"int32\"), "
    "I: T.Buffer((16,), \"int32\")):\n";

static bool load_body(prog *p, const char *body) {
  char text[8192];
  snprintf(text, sizeof text, "%s%s", header, body);
  return prog_load(p, text, "t.py");
}

static void test_handwritten(void) {
  prog p;
  loom_dep_witness w;
  loom_diag d;
  bool is_legal = true, is_carried = false;

  /* A Jacobi stencil reads what it does not write: parallel. */
  CHECK(load_body(&p, "    for i in range(1, 63):\n"
                      "        A[i] = A[i - 1] + A[i + 1]\n"
                      "    for j in range(1, 7):\n"
                      "        B[0, j] = B[1, j - 1] + B[1, j + 1]\n"));
  expect_carried(&p, "i", "A[i + 1] read at 4:9 is written as A[i] at 4:9 by "
                          "iteration i + 1 (i = 1, then i = 2)");
  expect_parallel(&p, "j");
  prog_free(&p);

  /* A 2-D scan along j: j carries it, i does not, and they may swap. */
  CHECK(load_body(&p, "    for i in range(8):\n"
                      "        for j in range(1, 8):\n"
                      "            B[i, j] = B[i, j - 1] + 1\n"));
  expect_parallel(&p, "i");
  expect_carried(&p, "j", "B[i, j] written at 5:13 is read as B[i, j - 1] at 5:13 "
                          "by iteration j + 1 (i = 0, j = 1, then i = 0, j = 2)");
  loom_diag_init(&d);
  CHECK(loom_arith_deps_can_interchange(p.deps, loop(&p, "i"), loop(&p, "j"), &is_legal,
                                        &w, &d) == LOOM_OK);
  CHECK(is_legal);
  /* Backwards: not nested that way. */
  CHECK(loom_arith_deps_can_interchange(p.deps, loop(&p, "j"), loop(&p, "i"), &is_legal,
                                        &w, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "not nested inside loop 'j'");
  loom_diag_free(&d);
  prog_free(&p);

  /* A dependence of distance (1, -1) forbids interchange. */
  CHECK(load_body(&p, "    for i in range(1, 8):\n"
                      "        for j in range(7):\n"
                      "            B[i, j] = B[i - 1, j + 1] * 2\n"));
  loom_diag_init(&d);
  CHECK(loom_arith_deps_can_interchange(p.deps, loop(&p, "i"), loop(&p, "j"), &is_legal,
                                        &w, &d) == LOOM_OK);
  CHECK(!is_legal);
  CHECK_STREQ(w.text, "B[i, j] written at 5:13 is read as B[i - 1, j + 1] at 5:13 "
                      "by iteration i + 1, j - 1 (i = 1, j = 1, then i = 2, j = 0)");
  loom_diag_free(&d);
  expect_carried(&p, "i", NULL);
  expect_parallel(&p, "j");
  prog_free(&p);

  /* Triangular nests: a row sum is carried by j only; a column update by
   * i only. */
  CHECK(load_body(&p, "    for i in range(8):\n"
                      "        for j in range(i):\n"
                      "            A[i] = A[i] + B[i, j]\n"
                      "    for k in range(8):\n"
                      "        for l in range(k + 1, 8):\n"
                      "            B[0, l] = B[0, l] + 1\n"));
  expect_parallel(&p, "i");
  expect_carried(&p, "j", NULL);
  expect_carried(&p, "k", "B[0, l] read at 8:13 is written at 8:13 by iteration "
                          "k + 1 (k = 0, l = 2, then k = 1, l = 2)");
  expect_parallel(&p, "l");
  prog_free(&p);

  /* An in-place update through blocks, and one that reads its neighbour. */
  CHECK(load_body(&p, "    for i in range(64):\n"
                      "        with T.block(\"upd\"):\n"
                      "            vi = T.axis.remap(\"S\", [i])\n"
                      "            A[vi] = A[vi] * 2 + 1\n"
                      "    for i in range(63):\n"
                      "        with T.block(\"shift\"):\n"
                      "            vi = T.axis.remap(\"S\", [i])\n"
                      "            A[vi] = A[vi + 1]\n"));
  CHECK(block_independent(&p, "upd", &w));
  CHECK(!block_independent(&p, "shift", &w));
  CHECK_STREQ(w.text, "A[vi + 1] read at 10:13 is written as A[vi] at 10:13 by "
                      "iteration i + 1 (i = 0, then i = 1)");
  CHECK(w.kind == LOOM_DEP_WAR);
  prog_free(&p);

  /* Nested blocks with a scratch buffer of their own: each instance of
   * "rev" reverses its own slice, so i may run in parallel; shared scratch
   * at the top makes i carry a dependence through it. */
  static const char *nested =
      "    for i in range(%d):\n"
      "        with T.block(\"rev\"):\n"
      "            vi = T.axis.remap(\"S\", [i])\n"
      "%s"
      "            for j in range(4):\n"
      "                with T.block(\"load\"):\n"
      "                    vj = T.axis.remap(\"S\", [j])\n"
      "                    tmp[vj] = A[vi * 4 + vj]\n"
      "            for j in range(4):\n"
      "                with T.block(\"store\"):\n"
      "                    vj = T.axis.remap(\"S\", [j])\n"
      "                    A[vi * 4 + vj + %d] = tmp[3 - vj]\n";
  char body[2048];
  snprintf(body, sizeof body, nested, 8,
           "            tmp = T.alloc_buffer((4,), \"int32\")\n", 0);
  CHECK(load_body(&p, body));
  expect_parallel(&p, "i");
  CHECK(block_independent(&p, "rev", &w));
  prog_free(&p);
  snprintf(body, sizeof body, nested, 7,
           "            tmp = T.alloc_buffer((4,), \"int32\")\n", 4);
  CHECK(load_body(&p, body));
  expect_carried(&p, "i", NULL);
  CHECK(!block_independent(&p, "rev", &w));
  CHECK(w.buffer && !strcmp(w.buffer->name, "A"));
  prog_free(&p);
  snprintf(body, sizeof body, "    tmp = T.alloc_buffer((4,), \"int32\")\n%s", nested);
  char body2[2048];
  snprintf(body2, sizeof body2, body, 8, "", 0);
  CHECK(load_body(&p, body2));
  expect_carried(&p, "i", NULL);
  CHECK(!block_independent(&p, "rev", &w));
  CHECK(w.buffer && !strcmp(w.buffer->name, "tmp"));
  prog_free(&p);

  /* A scatter through an index buffer: conservative, and it says why. */
  CHECK(load_body(&p, "    for i in range(16):\n"
                      "        A[I[i]] = A[I[i]] + 1\n"));
  carried(&p, "i", &is_carried, &w);
  CHECK(is_carried);
  CHECK(!w.is_exact);
  CHECK_CONTAINS(w.text, "assumed: an index that is not affine");
  CHECK_CONTAINS(loom_arith_deps_assumptions(p.deps), "4:9: index is not affine: I[i]");
  prog_free(&p);

  /* Under a data-dependent condition the guarded write still counts. */
  CHECK(load_body(&p, "    for i in range(16):\n"
                      "        if I[i] > 0:\n"
                      "            A[0] = A[0] + 1\n"));
  expect_carried(&p, "i", NULL);
  CHECK_CONTAINS(loom_arith_deps_assumptions(p.deps), "condition is not affine");
  prog_free(&p);

  /* Even and odd iterations touch different halves. */
  CHECK(load_body(&p, "    for i in range(32):\n"
                      "        if i % 2 == 0:\n"
                      "            A[i // 2] = A[i // 2] + 1\n"
                      "        else:\n"
                      "            A[i // 2 + 32] = 1\n"));
  expect_parallel(&p, "i");
  prog_free(&p);

  /* An extern call handed A's pointer may touch all of A; one that is
   * handed no buffer touches none (and the assumption says so). */
  CHECK(load_body(&p, "    for i in range(8):\n"
                      "        T.evaluate(T.call_extern(\"int32\", \"f\", A.data, i))\n"
                      "    for j in range(8):\n"
                      "        T.evaluate(T.call_extern(\"void\", \"trace\", j))\n"));
  carried(&p, "i", &is_carried, &w);
  CHECK(is_carried && !w.is_exact);
  CHECK_CONTAINS(w.text, "A[...] read at 4:9 is written at 4:9 by iteration i + 1");
  CHECK_CONTAINS(w.text, "assumed: a call handed the buffer's pointer");
  expect_parallel(&p, "j");
  CHECK_CONTAINS(loom_arith_deps_assumptions(p.deps), "4:9: T.evaluate is assumed to read "
                                                      "and write all of each buffer");
  CHECK_CONTAINS(loom_arith_deps_assumptions(p.deps), "6:9: effects of T.evaluate on "
                                                      "anything but buffers");
  prog_free(&p);

  /* A T.decl_buffer over A's pointer is A itself, seen through a view. */
  CHECK(load_body(&p, "    for i in range(8):\n"
                      "        Al = T.decl_buffer((64,), \"int32\", data=A.data)\n"
                      "        Al[i + 1] = A[i]\n"));
  carried(&p, "i", &is_carried, &w);
  CHECK(is_carried && !w.is_exact);
  CHECK(w.buffer && !strcmp(w.buffer->name, "A"));
  prog_free(&p);

  /* A loop that is not in the function. */
  CHECK(load_body(&p, "    for i in range(4):\n        A[i] = 0\n"));
  loom_arena *a = loom_arena_new();
  loom_var *stray = loom_ir_var(a, "stray", LOOM_INT32);
  loom_diag_init(&d);
  CHECK(loom_arith_deps_loop_carried(p.deps, stray, &is_carried, &w, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "'stray' is not a loop of function 'main'");
  loom_diag_free(&d);
  loom_arena_free(a);
  prog_free(&p);
}

/* ---- brute force --------------------------------------------------------- */

typedef struct access_fn {
  int a, b, c; /* a*i + b*j + c, then // 2 when is_halved, then + 16 */
  bool is_halved;
  bool is_product; /* (i*j + c) % 5 + 16 instead: not affine */
} access_fn;

static int64_t floordiv2(int64_t x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

static int64_t apply(const access_fn *f, int64_t i, int64_t j) {
  if (f->is_product)
    return ((i * j + f->c) % 5 + 5) % 5 + 16;
  int64_t x = f->a * i + f->b * j + f->c;
  return (f->is_halved ? floordiv2(x) : x) + 16;
}

static void print_fn(char *buf, size_t n, const access_fn *f) {
  if (f->is_product)
    snprintf(buf, n, "(i * j + %d) %% 5 + 16", f->c);
  else if (f->is_halved)
    snprintf(buf, n, "(%d * i + %d * j + %d) // 2 + 16", f->a, f->b, f->c);
  else
    snprintf(buf, n, "%d * i + %d * j + %d + 16", f->a, f->b, f->c);
}

typedef struct event {
  int64_t i, j, elem;
  int stmt;
  bool is_write;
} event;

static void random_fn(loom_rng *rng, access_fn *f) {
  static const int coefs[] = {-1, 0, 0, 1, 1, 2};
  f->a = coefs[loom_rng_below(rng, 6)];
  f->b = coefs[loom_rng_below(rng, 6)];
  f->c = (int)loom_rng_below(rng, 5) - 2;
  f->is_halved = loom_rng_below(rng, 4) == 0;
  f->is_product = loom_rng_below(rng, 8) == 0;
}

static void test_brute_force(void) {
  loom_rng rng;
  loom_rng_seed(&rng, DEPEND_SEED);
  int n_cases = DEPEND_COUNT, n_wrong = 0, n_carried[3] = {0, 0, 0}, n_inexact = 0;
  for (int c = 0; c < n_cases; c++) {
    int ei = 1 + (int)loom_rng_below(&rng, 4), ej = 1 + (int)loom_rng_below(&rng, 3);
    int shape = (int)loom_rng_below(&rng, 3); /* 0: [0, ej); 1: [i, i + ej); 2: [0, i) */
    int n_stmts = 1 + (int)loom_rng_below(&rng, 2);
    access_fn wf[2], rf[2];
    char body[4096], ws[128], rs[128];
    int len = snprintf(body, sizeof body,
                       "    for i in range(%d):\n        for j in range(%s):\n", ei,
                       shape == 0 ? (snprintf(ws, sizeof ws, "%d", ej), ws)
                       : shape == 1 ? (snprintf(ws, sizeof ws, "i, i + %d", ej), ws)
                                    : "i");
    /* Each statement may sit under an affine condition; with an else
     * branch, statement s + 2 is the other side. */
    static const char *const conds[] = {"(i + j) % 2 == 0", "i < j", "i != j",
                                        "i * 2 + 1 >= j", "not (i == 1 and j == 2)"};
    int cond[2] = {-1, -1};
    bool has_else[2] = {false, false};
    access_fn ewf[2], erf[2];
    for (int s = 0; s < n_stmts; s++) {
      random_fn(&rng, &wf[s]);
      random_fn(&rng, &rf[s]);
      print_fn(ws, sizeof ws, &wf[s]);
      print_fn(rs, sizeof rs, &rf[s]);
      if (loom_rng_below(&rng, 3) == 0) {
        cond[s] = (int)loom_rng_below(&rng, 5);
        has_else[s] = loom_rng_below(&rng, 2) == 0;
        len += snprintf(body + len, sizeof body - (size_t)len,
                        "            if %s:\n    ", conds[cond[s]]);
      }
      len += snprintf(body + len, sizeof body - (size_t)len,
                      "            A[%s] = A[%s] + 1\n", ws, rs);
      if (has_else[s]) {
        random_fn(&rng, &ewf[s]);
        random_fn(&rng, &erf[s]);
        print_fn(ws, sizeof ws, &ewf[s]);
        print_fn(rs, sizeof rs, &erf[s]);
        len += snprintf(body + len, sizeof body - (size_t)len,
                        "            else:\n                A[%s] = A[%s] + 1\n", ws, rs);
      }
    }
    /* Every access in execution order: the read, then the write. */
    event ev[256];
    int n_ev = 0;
    for (int64_t i = 0; i < ei; i++) {
      int64_t lo = shape == 1 ? i : 0, hi = shape == 0 ? ej : shape == 1 ? i + ej : i;
      for (int64_t j = lo; j < hi; j++)
        for (int s = 0; s < n_stmts; s++) {
          bool holds = true;
          switch (cond[s]) {
          case 0: holds = (i + j) % 2 == 0; break;
          case 1: holds = i < j; break;
          case 2: holds = i != j; break;
          case 3: holds = i * 2 + 1 >= j; break;
          case 4: holds = !(i == 1 && j == 2); break;
          default: break;
          }
          /* The textual order: s's then-branch, its else-branch, then s + 1. */
          if (holds) {
            ev[n_ev++] = (event){i, j, apply(&rf[s], i, j), 2 * s, false};
            ev[n_ev++] = (event){i, j, apply(&wf[s], i, j), 2 * s, true};
          } else if (has_else[s]) {
            ev[n_ev++] = (event){i, j, apply(&erf[s], i, j), 2 * s + 1, false};
            ev[n_ev++] = (event){i, j, apply(&ewf[s], i, j), 2 * s + 1, true};
          }
        }
    }
    bool want_i = false, want_j = false, want_swap_bad = false;
    for (int x = 0; x < n_ev; x++)
      for (int y = x + 1; y < n_ev; y++) {
        const event *e = &ev[x], *f = &ev[y];
        if (e->elem != f->elem || (!e->is_write && !f->is_write))
          continue;
        bool is_same = e->i == f->i && e->j == f->j && e->stmt == f->stmt;
        want_i |= e->i != f->i;
        want_j |= e->i == f->i && e->j != f->j;
        /* Swapped order compares (j, i, stmt). */
        if (!is_same && (f->j < e->j || (f->j == e->j && (f->i < e->i ||
                                                         (f->i == e->i && f->stmt < e->stmt)))))
          want_swap_bad = true;
      }
    bool is_affine = true;
    for (int s = 0; s < n_stmts; s++) {
      is_affine &= !wf[s].is_product && !rf[s].is_product;
      if (has_else[s])
        is_affine &= !ewf[s].is_product && !erf[s].is_product;
    }
    prog p;
    if (!load_body(&p, body)) {
      n_wrong++;
      prog_free(&p);
      continue;
    }
    bool got_i, got_j, is_legal = true;
    loom_dep_witness w;
    carried(&p, "i", &got_i, &w);
    carried(&p, "j", &got_j, &w);
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_arith_deps_can_interchange(p.deps, loop(&p, "i"), loop(&p, "j"), &is_legal,
                                          &w, &d) == LOOM_OK);
    loom_diag_free(&d);
    n_carried[0] += got_i;
    n_carried[1] += got_j;
    n_carried[2] += !is_legal;
    /* Exact where affine; never a false "independent" anywhere. */
    bool is_wrong = is_affine ? got_i != want_i || got_j != want_j || is_legal == want_swap_bad
                              : (want_i && !got_i) || (want_j && !got_j) ||
                                    (want_swap_bad && is_legal);
    n_inexact += !is_affine;
    if (is_wrong) {
      if (n_wrong++ < 5)
        fprintf(stderr, "wrong answer (i %d/%d, j %d/%d, swap-illegal %d/%d) for:\n%s",
                got_i, want_i, got_j, want_j, !is_legal, want_swap_bad, body);
    }
    prog_free(&p);
  }
  CHECK(n_wrong == 0);
  printf("brute force: %d nests (%d not affine), %d wrong; carried by i %d, by j %d, "
         "interchange refused %d\n", n_cases, n_inexact, n_wrong, n_carried[0],
         n_carried[1], n_carried[2]);
}

int main(int argc, char **argv) {
  if (argc > 1)
    root = argv[1];
  test_cases();
  test_shared_corpus();
  test_handwritten();
  test_brute_force();
  return test_summary("arith/depend");
}
