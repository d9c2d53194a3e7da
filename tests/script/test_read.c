/* Tests of the TVMScript reader: the IR it builds (kinds, dtypes, iter
 * vars, the root block rule, literal typing, inferred regions), every error
 * case in tests/script/errors (line:col and message), every shared program
 * in both spellings, allocation failure at every step, and mutated inputs
 * that must be refused cleanly rather than crash. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "loom/script.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------- */

static loom_arena *arena;

/* Reads src; NULL (with the message printed) on error. */
static loom_module *read_ok(const char *src) {
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m = NULL;
  if (loom_script_read(src, strlen(src), "test.py", arena, &m, &d) != LOOM_OK) {
    loom_buf b;
    loom_buf_init(&b);
    loom_diag_render(&d, &b);
    fprintf(stderr, "unexpected error:\n%s", b.data ? b.data : "?\n");
    loom_buf_free(&b);
    m = NULL;
  }
  loom_diag_free(&d);
  return m;
}

static loom_func *main_of(loom_module *m) {
  return m && m->n_funcs > 0 ? m->funcs[0] : NULL;
}

/* The body under the root block, when there is one. */
static loom_block *root_of(loom_func *f) {
  if (!f || f->body->kind != LOOM_STMT_BLOCK_REALIZE)
    return NULL;
  return f->body->u.realize.block;
}

/* Finds the block named `name` anywhere in s (depth-first). */
static loom_stmt *find_realize(loom_stmt *s, const char *name) {
  if (!s)
    return NULL;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE:
    if (!strcmp(s->u.realize.block->name, name))
      return s;
    {
      loom_stmt *r = find_realize(s->u.realize.block->init, name);
      return r ? r : find_realize(s->u.realize.block->body, name);
    }
  case LOOM_STMT_FOR: return find_realize(s->u.loop.body, name);
  case LOOM_STMT_IF: {
    loom_stmt *r = find_realize(s->u.if_.then_case, name);
    return r ? r : find_realize(s->u.if_.else_case, name);
  }
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++) {
      loom_stmt *r = find_realize(s->u.seq.stmts[i], name);
      if (r)
        return r;
    }
    return NULL;
  case LOOM_STMT_LET: return find_realize(s->u.let.body, name);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return find_realize(s->u.alloc.body, name);
  case LOOM_STMT_ATTR: return find_realize(s->u.attr.body, name);
  case LOOM_STMT_ASSERT: return find_realize(s->u.assert_.body, name);
  default: return NULL;
  }
}

static loom_block *find_block(loom_func *f, const char *name) {
  loom_stmt *r = f ? find_realize(f->body, name) : NULL;
  return r ? r->u.realize.block : NULL;
}

static bool is_int(const loom_expr *e, loom_dtype t, int64_t v) {
  return e && e->kind == LOOM_EXPR_INT && loom_dtype_eq(e->dtype, t) &&
         e->u.int_value == v;
}

static bool is_var(const loom_expr *e, const char *name) {
  return e && e->kind == LOOM_EXPR_VAR && !strcmp(e->u.var->name, name);
}

/* A region range that is the single point `name` (a var). */
static bool is_point_var(const loom_range *r, const char *name) {
  return is_var(r->min, name) && is_int(r->extent, r->min->dtype, 1);
}

static bool is_const_range(const loom_range *r, int64_t min, int64_t extent) {
  return r->min && r->min->kind == LOOM_EXPR_INT &&
         r->min->u.int_value == min && r->extent &&
         r->extent->kind == LOOM_EXPR_INT && r->extent->u.int_value == extent;
}

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"

/* ---- functions, params, attributes --------------------------------------- */

static void test_params_and_attrs(void) {
  loom_module *m = read_ok(
      HEADER
      "def main(a: T.handle, B: T.Buffer((\"n\", 4), \"float16\"), n: T.int32, "
      "x: T.float32):\n"
      "    T.func_attr({\"tirx.noalias\": True})\n"
      "    A = T.match_buffer(a, (n, 4), \"int8\")\n"
      "    for i, j in T.grid(n, 4):\n"
      "        B[i, j] = T.Cast(\"float16\", A[i, j])\n");
  loom_func *f = main_of(m);
  CHECK(f && !m->is_ir_module && f->n_params == 4);
  if (!f || f->n_params != 4)
    return;
  CHECK(f->params[0].var->dtype.code == LOOM_DT_HANDLE);
  CHECK(f->params[0].buffer && f->params[0].buffer->dtype.code == LOOM_DT_INT &&
        f->params[0].buffer->dtype.bits == 8);
  CHECK(f->params[1].buffer && f->params[1].buffer->ndim == 2);
  CHECK(f->params[2].buffer == NULL &&
        loom_dtype_eq(f->params[2].var->dtype, LOOM_INT32));
  CHECK(loom_dtype_eq(f->params[3].var->dtype, LOOM_FLOAT32));
  /* The string "n" in B's shape and A's shape name the scalar parameter. */
  loom_expr *bn = f->params[1].buffer->shape[0];
  CHECK(bn->kind == LOOM_EXPR_VAR && bn->u.var == f->params[2].var);
  CHECK(f->params[0].buffer->shape[0]->u.var == f->params[2].var);
  /* Keys are stored in the classic spelling; global_symbol is added. */
  CHECK(loom_ir_attr_get(f->attrs, f->n_attrs, "tir.noalias") != NULL);
  CHECK(loom_ir_attr_get(f->attrs, f->n_attrs, "tirx.noalias") == NULL);
  const loom_value *gs =
      loom_ir_attr_get(f->attrs, f->n_attrs, "global_symbol");
  CHECK(gs && gs->kind == LOOM_VALUE_STR && !strcmp(gs->str, "main"));
  /* No blocks: no root block. */
  CHECK(f->body->kind == LOOM_STMT_FOR);
  /* The old subscript spelling of T.Buffer. */
  f = main_of(read_ok(HEADER "def main(A: T.Buffer[(4, 4), \"int8\"], "
                             "B: T.Buffer[4, \"int8\"], C: T.Buffer[(4,)]):\n"
                             "    C[0] = T.Cast(\"float32\", A[0, 0] + B[0])\n"));
  CHECK(f && f->params[0].buffer->ndim == 2 &&
        f->params[0].buffer->dtype.bits == 8 &&
        f->params[1].buffer->ndim == 1 && f->params[1].buffer->dtype.bits == 8 &&
        f->params[2].buffer->ndim == 1 &&
        loom_dtype_eq(f->params[2].buffer->dtype, LOOM_FLOAT32));
}

static void test_module(void) {
  loom_module *m =
      read_ok("# from tvm.script import ir as I\n"
              "# from tvm.script import tirx as T\n\n"
              "@I.ir_module\nclass Module:\n"
              "    @T.prim_func(s_tir=True)\n"
              "    def f(A: T.Buffer((4,), \"float32\")):\n"
              "        T.func_attr({\"global_symbol\": \"other\"})\n"
              "        for i in range(4):\n"
              "            A[i] = T.float32(1.0)\n\n"
              "    @T.prim_func(private=True, s_tir=True)\n"
              "    def g(A: T.Buffer((4,), \"float32\")):\n"
              "        for i in range(4):\n"
              "            A[i] = T.float32(2.0)\n");
  CHECK(m && m->is_ir_module && m->n_funcs == 2);
  if (!m || m->n_funcs != 2)
    return;
  const loom_value *gs = loom_ir_attr_get(
      m->funcs[0]->attrs, m->funcs[0]->n_attrs, "global_symbol");
  CHECK(gs && !strcmp(gs->str, "other"));
  CHECK(m->funcs[1]->n_attrs == 0); /* private: no global_symbol */
  CHECK(!strcmp(m->funcs[1]->name, "g"));
}

/* ---- the root block ------------------------------------------------------ */

static void test_root_block(void) {
  /* Blocks under a loop nest: wrapped in "root", with no regions. */
  loom_func *f =
      main_of(read_ok(HEADER "def main(A: T.Buffer((4,), \"float32\")):\n"
                             "    for i in range(4):\n"
                             "        with T.block(\"B\"):\n"
                             "            vi = T.axis.spatial(4, i)\n"
                             "            A[vi] = T.float32(0.0)\n"));
  loom_block *r = root_of(f);
  CHECK(r && !strcmp(r->name, "root") && r->n_iter_vars == 0 &&
        r->n_reads == 0 && r->n_writes == 0 && r->body->kind == LOOM_STMT_FOR);
  CHECK(f && f->body->u.realize.predicate == NULL);
  /* One block without iter vars is the root itself, and keeps its (absent)
   * regions, as TVM's completer never fills the root's. */
  f = main_of(read_ok(HEADER "def main(A: T.Buffer((4,), \"float32\")):\n"
                             "    with T.block(\"top\"):\n"
                             "        for i in range(4):\n"
                             "            A[i] = T.float32(0.0)\n"));
  r = root_of(f);
  CHECK(r && !strcmp(r->name, "top") && r->n_reads == 0 && r->n_writes == 0);
  /* ... unless the function allocates buffers: then a root owns them. */
  f = main_of(read_ok(HEADER "def main(A: T.Buffer((4,), \"float32\")):\n"
                             "    tmp = T.alloc_buffer((4,))\n"
                             "    with T.block(\"top\"):\n"
                             "        for i in range(4):\n"
                             "            tmp[i] = T.float32(0.0)\n"
                             "            A[i] = tmp[i]\n"));
  r = root_of(f);
  CHECK(r && !strcmp(r->name, "root") && r->n_alloc_buffers == 1);
  loom_block *top = find_block(f, "top");
  CHECK(top && top->n_writes == 2 && top->n_reads == 1);
  if (top && top->n_writes == 2) {
    CHECK(!strcmp(top->writes[0].buffer->name, "tmp"));
    CHECK(is_const_range(&top->writes[0].ranges[0], 0, 4));
  }
  /* A single block with iter vars is wrapped. */
  f = main_of(read_ok(HEADER "def main(A: T.Buffer((4,), \"float32\")):\n"
                             "    with T.block(\"one\"):\n"
                             "        vi = T.axis.spatial(4, 0)\n"
                             "        A[vi] = T.float32(0.0)\n"));
  r = root_of(f);
  CHECK(r && !strcmp(r->name, "root"));
  /* A function without blocks stays as written. */
  f = main_of(read_ok(HEADER "def main(A: T.Buffer((4,), \"float32\")):\n"
                             "    A[0] = T.float32(0.0)\n"));
  CHECK(f && f->body->kind == LOOM_STMT_STORE);
}

/* ---- blocks, iter vars, regions ------------------------------------------ */

static void test_matmul(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(A: T.Buffer((64, 32), \"float32\"), B: T.Buffer((32, 16), "
      "\"float32\"), C: T.Buffer((64, 16), \"float32\")):\n"
      "    for i, j, k in T.grid(64, 16, 32):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0.0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"));
  loom_block *b = find_block(f, "C");
  CHECK(b && b->n_iter_vars == 3 && b->init != NULL);
  if (!b || b->n_iter_vars != 3)
    return;
  CHECK(b->iter_vars[0].kind == LOOM_ITER_SPATIAL);
  CHECK(b->iter_vars[1].kind == LOOM_ITER_SPATIAL);
  CHECK(b->iter_vars[2].kind == LOOM_ITER_REDUCE);
  CHECK(is_int(b->iter_vars[2].dom.extent, LOOM_INT32, 32));
  CHECK(is_int(b->iter_vars[2].dom.min, LOOM_INT32, 0));
  /* Reads skip C (written by a block with an init), in order of access. */
  CHECK(b->n_reads == 2 && b->n_writes == 1);
  if (b->n_reads == 2) {
    CHECK(!strcmp(b->reads[0].buffer->name, "A"));
    CHECK(is_point_var(&b->reads[0].ranges[0], "vi"));
    CHECK(is_point_var(&b->reads[0].ranges[1], "vk"));
    CHECK(!strcmp(b->reads[1].buffer->name, "B"));
  }
  if (b->n_writes == 1) {
    CHECK(!strcmp(b->writes[0].buffer->name, "C"));
    CHECK(is_point_var(&b->writes[0].ranges[1], "vj"));
  }
  /* The realize binds the loop variables. */
  loom_stmt *r = find_realize(f->body, "C");
  CHECK(r && r->u.realize.n_iter_values == 3 &&
        is_var(r->u.realize.iter_values[2], "k"));
  /* The loop nest is three serial loops with int32 vars. */
  loom_stmt *l = root_of(f)->body;
  CHECK(l->kind == LOOM_STMT_FOR && l->u.loop.kind == LOOM_FOR_SERIAL &&
        loom_dtype_eq(l->u.loop.var->dtype, LOOM_INT32) &&
        is_int(l->u.loop.extent, LOOM_INT32, 64));
}

static void test_relaxed_regions(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(A: T.Buffer((256,), \"float32\"), B: T.Buffer((16, 16), "
      "\"float32\"), C: T.Buffer((16,), \"float32\")):\n"
      "    for i in range(16):\n"
      "        with T.block(\"row\"):\n"
      "            vi = T.axis.spatial(16, i)\n"
      "            for k in range(16):\n"
      "                B[vi, k] = A[vi * 16 + k] + A[vi * 16 + k // 2 + 1]\n"
      "            for k0, k1 in T.grid(4, 4):\n"
      "                C[vi] = C[vi] + B[vi, k0 * 4 + k1] + B[(vi + 1) % 16, "
      "k1]\n"));
  loom_block *b = find_block(f, "row");
  CHECK(b && b->n_reads == 3 && b->n_writes == 2);
  if (!b || b->n_reads != 3 || b->n_writes != 2)
    return;
  /* A[vi * 16 + k] with k in [0, 16), with A[vi * 16 + k // 2 + 1]:
   * vi * 16 .. vi * 16 + 15. */
  const loom_range *ra = &b->reads[0].ranges[0];
  CHECK(!strcmp(b->reads[0].buffer->name, "A"));
  CHECK(ra->min->kind == LOOM_EXPR_MUL && is_var(ra->min->u.bin.a, "vi") &&
        is_int(ra->min->u.bin.b, LOOM_INT32, 16));
  CHECK(is_int(ra->extent, LOOM_INT32, 16));
  /* B: written as B[vi, 0:16]; read over two points, a hull that does not
   * compare in dimension 0 (T.min / T.max) and 0:16 in dimension 1. */
  CHECK(!strcmp(b->writes[0].buffer->name, "B"));
  CHECK(is_point_var(&b->writes[0].ranges[0], "vi"));
  CHECK(is_const_range(&b->writes[0].ranges[1], 0, 16));
  CHECK(!strcmp(b->reads[2].buffer->name, "B"));
  CHECK(b->reads[2].ranges[0].min->kind == LOOM_EXPR_MIN);
  CHECK(is_const_range(&b->reads[2].ranges[1], 0, 16));
  /* C is read and written at one point. */
  CHECK(!strcmp(b->reads[1].buffer->name, "C"));
  CHECK(is_point_var(&b->reads[1].ranges[0], "vi"));
}

static void test_nested_block_regions(void) {
  loom_func *f = main_of(read_ok(
      HEADER "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), "
             "\"float32\")):\n"
             "    for io in range(8):\n"
             "        with T.block(\"outer\"):\n"
             "            vo = T.axis.spatial(8, io)\n"
             "            tmp = T.alloc_buffer((8,))\n"
             "            for ii in range(8):\n"
             "                with T.block(\"inner\"):\n"
             "                    vi = T.axis.spatial(64, vo * 8 + ii)\n"
             "                    tmp[vi % 8] = A[vi]\n"
             "            for ii in range(8):\n"
             "                B[vo * 8 + ii] = tmp[ii]\n"));
  loom_block *in = find_block(f, "inner"), *out = find_block(f, "outer");
  CHECK(in && in->n_reads == 1 && in->n_writes == 1);
  /* The outer block sees A through the inner block's binding, relaxed over
   * ii; its own buffer tmp is not listed. */
  CHECK(out && out->n_alloc_buffers == 1 && out->n_reads == 1 &&
        out->n_writes == 1);
  if (out && out->n_reads == 1 && out->n_writes == 1) {
    CHECK(!strcmp(out->reads[0].buffer->name, "A"));
    CHECK(is_int(out->reads[0].ranges[0].extent, LOOM_INT32, 8));
    CHECK(out->reads[0].ranges[0].min->kind == LOOM_EXPR_MUL);
    CHECK(!strcmp(out->writes[0].buffer->name, "B"));
    CHECK(is_int(out->writes[0].ranges[0].extent, LOOM_INT32, 8));
  }
}

static void test_match_buffer_regions(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), "
      "\"float32\")):\n"
      "    for i in range(16):\n"
      "        with T.block(\"copy\"):\n"
      "            vi = T.axis.spatial(16, i)\n"
      "            Av = T.match_buffer(A[vi, 0:16], (16,))\n"
      "            for j in range(4):\n"
      "                B[vi, j] = Av[j + 2]\n"));
  loom_block *b = find_block(f, "copy");
  CHECK(b && b->n_match_buffers == 1 && b->n_reads == 1);
  if (!b || b->n_reads != 1)
    return;
  CHECK(b->match_buffers[0].buffer->ndim == 1);
  CHECK(b->match_buffers[0].buffer->dtype.code == LOOM_DT_FLOAT);
  /* Av[j + 2] for j in [0, 4) is A[vi, 2:6]. */
  CHECK(!strcmp(b->reads[0].buffer->name, "A"));
  CHECK(is_point_var(&b->reads[0].ranges[0], "vi"));
  CHECK(is_const_range(&b->reads[0].ranges[1], 2, 4));
  CHECK(is_const_range(&b->writes[0].ranges[1], 0, 4));
}

static void test_explicit_header(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(A: T.Buffer((100, 64), \"float32\"), C: T.Buffer((100,), "
      "\"float32\")):\n"
      "    for i0, i1, k in T.grid(13, 8, 64):\n"
      "        with T.block(\"sum\"):\n"
      "            vi = T.axis.spatial(100, i0 * 8 + i1)\n"
      "            vk = T.axis.reduce(64, k)\n"
      "            vs = T.axis.scan((2, 10), i1)\n"
      "            vo = T.axis.opaque(8, i1)\n"
      "            T.where(i0 * 8 + i1 < 100)\n"
      "            T.reads(A[vi, 0:vk + 1], A[vi:vi + 4, vk])\n"
      "            T.writes([C[vi]])\n"
      "            T.block_attr({\"tirx.x\": 1, \"b\": [1, \"s\"], \"a\": "
      "None})\n"
      "            C[vi] = C[vi] + A[vi, vk]\n"));
  loom_block *b = find_block(f, "sum");
  loom_stmt *r = f ? find_realize(f->body, "sum") : NULL;
  CHECK(b && r && b->n_iter_vars == 4);
  if (!b || !r || b->n_iter_vars != 4)
    return;
  CHECK(b->iter_vars[2].kind == LOOM_ITER_SCAN &&
        is_int(b->iter_vars[2].dom.min, LOOM_INT32, 2) &&
        is_int(b->iter_vars[2].dom.extent, LOOM_INT32, 8));
  CHECK(b->iter_vars[3].kind == LOOM_ITER_OPAQUE);
  CHECK(r->u.realize.predicate && r->u.realize.predicate->kind == LOOM_EXPR_LT);
  CHECK(b->n_reads == 2 && b->n_writes == 1);
  if (b->n_reads == 2) {
    /* 0:vk + 1 has extent vk + 1; vi:vi + 4 has extent 4. */
    CHECK(b->reads[0].ranges[1].extent->kind == LOOM_EXPR_ADD);
    CHECK(is_int(b->reads[1].ranges[0].extent, LOOM_INT32, 4));
    CHECK(is_point_var(&b->reads[1].ranges[1], "vk"));
  }
  /* Annotations sorted by key, tirx. keys in the classic spelling. */
  CHECK(b->n_annotations == 3);
  if (b->n_annotations == 3) {
    CHECK(!strcmp(b->annotations[0].key, "a") &&
          b->annotations[0].value->kind == LOOM_VALUE_NONE);
    CHECK(!strcmp(b->annotations[1].key, "b") &&
          b->annotations[1].value->kind == LOOM_VALUE_LIST &&
          b->annotations[1].value->n_items == 2);
    CHECK(!strcmp(b->annotations[2].key, "tir.x"));
  }
}

static void test_corpus_regions(const char *shared) {
  char path[4096];
  snprintf(path, sizeof path, "%s/corpus/softmax.py", shared);
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(path, &text, &len, &d) != LOOM_OK) {
    loom_diag_free(&d);
    return;
  }
  loom_diag_free(&d);
  loom_func *f = main_of(read_ok(text));
  free(text);
  loom_block *mx = find_block(f, "max"), *norm = find_block(f, "norm");
  CHECK(mx && mx->n_reads == 1 && mx->n_writes == 1 && mx->init);
  if (mx && mx->n_reads == 1)
    CHECK(!strcmp(mx->reads[0].buffer->name, "A"));
  CHECK(norm && norm->n_reads == 2);
  if (norm && norm->n_reads == 2) {
    CHECK(!strcmp(norm->reads[0].buffer->name, "ex"));
    CHECK(!strcmp(norm->reads[1].buffer->name, "total"));
  }
  CHECK(root_of(f) && root_of(f)->n_alloc_buffers == 3);

  snprintf(path, sizeof path, "%s/corpus/conv2d_nhwc.py", shared);
  loom_diag_init(&d);
  if (loom_read_file(path, &text, &len, &d) != LOOM_OK) {
    loom_diag_free(&d);
    return;
  }
  loom_diag_free(&d);
  f = main_of(read_ok(text));
  free(text);
  loom_block *conv = find_block(f, "conv");
  if (!conv)
    conv = find_block(f, "conv2d_nhwc");
  CHECK(conv && conv->n_reads == 2 && conv->n_writes == 1);
  if (conv && conv->n_reads == 2) {
    CHECK(!strcmp(conv->reads[0].buffer->name, "pad"));
    /* pad[vn, vh + vrh, ...]: a point. */
    CHECK(is_int(conv->reads[0].ranges[1].extent, LOOM_INT32, 1));
    CHECK(conv->reads[0].ranges[1].min->kind == LOOM_EXPR_ADD);
  }
}

/* ---- expressions and literal typing -------------------------------------- */

static void test_literal_typing(void) {
  loom_func *f =
      main_of(read_ok(HEADER "def main(A: T.Buffer((8,), \"float16\"), C: "
                             "T.Buffer((8,), \"int64\")):\n"
                             "    for i in range(8):\n"
                             "        A[i] = A[i] + 1\n"
                             "    for i in range(T.int64(8)):\n"
                             "        C[i + 1] = C[i] * 2 + i\n"
                             "    A[0] = 2\n"
                             "    A[1] = 2 * 8 + 0.5\n"
                             "    C[2 * 3] = T.int64(7) + T.int32(1)\n"));
  CHECK(f && f->body->kind == LOOM_STMT_SEQ && f->body->u.seq.n_stmts == 5);
  if (!f || f->body->kind != LOOM_STMT_SEQ || f->body->u.seq.n_stmts != 5)
    return;
  loom_stmt **s = f->body->u.seq.stmts;
  loom_dtype f16 = LOOM_DTYPE(LOOM_DT_FLOAT, 16, 1);
  /* A[i] + 1 on float16 adds T.float16(1.0). */
  loom_expr *v = s[0]->u.loop.body->u.store.value;
  CHECK(v->kind == LOOM_EXPR_ADD && loom_dtype_eq(v->dtype, f16));
  CHECK(v->u.bin.b->kind == LOOM_EXPR_FLOAT &&
        loom_dtype_eq(v->u.bin.b->dtype, f16) &&
        v->u.bin.b->u.float_value == 1.0);
  /* An int64 loop: i + 1 adds T.int64(1); literals take int64. */
  loom_stmt *l = s[1];
  CHECK(loom_dtype_eq(l->u.loop.var->dtype, LOOM_INT64));
  CHECK(is_int(l->u.loop.min, LOOM_INT64, 0));
  loom_expr *idx = l->u.loop.body->u.store.indices[0];
  CHECK(idx->kind == LOOM_EXPR_ADD && is_int(idx->u.bin.b, LOOM_INT64, 1));
  loom_expr *cv = l->u.loop.body->u.store.value;
  CHECK(loom_dtype_eq(cv->dtype, LOOM_INT64));
  /* A store of a literal takes the buffer's dtype; literals fold. */
  CHECK(s[2]->u.store.value->kind == LOOM_EXPR_FLOAT &&
        loom_dtype_eq(s[2]->u.store.value->dtype, f16));
  CHECK(s[3]->u.store.value->kind == LOOM_EXPR_FLOAT &&
        s[3]->u.store.value->u.float_value == 16.5);
  CHECK(is_int(s[4]->u.store.indices[0], LOOM_INT32, 6));
  /* A typed int32 constant next to int64 is promoted. */
  loom_expr *p = s[4]->u.store.value;
  CHECK(p->kind == LOOM_EXPR_ADD && is_int(p->u.bin.b, LOOM_INT64, 1));
}

static void test_expressions(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(A: T.Buffer((16,), \"int32\"), F: T.Buffer((16,), "
      "\"float32\"), B: T.Buffer((16,), \"bool\"), n: T.int32):\n"
      "    for i in range(16):\n"
      "        A[i] = A[i] / 2 + A[i] // 3 + A[i] % 4 + T.truncdiv(A[i], 5) + "
      "T.truncmod(A[i], 6) + T.floordiv(A[i], 7) + T.floormod(A[i], 8) + "
      "T.Div(A[i], 9)\n"
      "        B[i] = 0 <= i < n\n"
      "        F[i] = T.if_then_else(i < 8, F[i], 0) + T.Select(i < 2, 1, "
      "F[i]) "
      "+ T.exp(F[i]) + T.min_value(\"float32\") + T.float32(\"inf\") + -F[i]\n"
      "        A[i] = T.max(A[i], n) + T.min(0, A[i]) + T.Cast(\"int32\", "
      "F[i]) + "
      "T.int32(F[i]) + (A[i] if i < 3 else 4) + -A[i] + ~A[i]\n"
      "        T.evaluate(T.call_extern(\"void\", \"f\", A.data, 1))\n"
      "        T.evaluate(T.tvm_access_ptr(T.type_annotation(\"float32\"), "
      "F.data, 0, 16, 1))\n"));
  CHECK(f != NULL);
  if (!f)
    return;
  loom_stmt *body = f->body->u.loop.body;
  CHECK(body->kind == LOOM_STMT_SEQ && body->u.seq.n_stmts == 6);
  if (body->kind != LOOM_STMT_SEQ || body->u.seq.n_stmts != 6)
    return;
  loom_stmt **s = body->u.seq.stmts;
  /* Left-nested sum: walk down the left spine, last operand first. */
  loom_expr_kind want[] = {
      LOOM_EXPR_DIV, LOOM_EXPR_FLOORMOD, LOOM_EXPR_FLOORDIV, LOOM_EXPR_MOD,
      LOOM_EXPR_DIV, LOOM_EXPR_FLOORMOD, LOOM_EXPR_FLOORDIV};
  loom_expr *e = s[0]->u.store.value;
  for (int i = 0; i < 7; i++) {
    CHECK(e->kind == LOOM_EXPR_ADD && e->u.bin.b->kind == want[i]);
    e = e->u.bin.a;
  }
  CHECK(e->kind == LOOM_EXPR_DIV); /* A[i] / 2: truncating on ints */
  /* 0 <= i < n is (0 <= i) and (i < n). */
  loom_expr *c = s[1]->u.store.value;
  CHECK(c->kind == LOOM_EXPR_AND && c->u.bin.a->kind == LOOM_EXPR_LE &&
        c->u.bin.b->kind == LOOM_EXPR_LT && c->dtype.code == LOOM_DT_BOOL);
  /* Float expression: -F[i] is F[i] * -1. */
  loom_expr *fe = s[2]->u.store.value;
  CHECK(fe->kind == LOOM_EXPR_ADD && fe->u.bin.b->kind == LOOM_EXPR_MUL &&
        fe->u.bin.b->u.bin.b->kind == LOOM_EXPR_FLOAT &&
        fe->u.bin.b->u.bin.b->u.float_value == -1.0);
  loom_expr *inf = fe->u.bin.a->u.bin.b;
  CHECK(inf->kind == LOOM_EXPR_FLOAT && inf->u.float_value > 1e308);
  loom_expr *minv = fe->u.bin.a->u.bin.a->u.bin.b;
  CHECK(minv->kind == LOOM_EXPR_FLOAT && minv->u.float_value < -3.4e38);
  /* if_then_else(c, F[i], 0): the literal is float32. */
  loom_expr *ite = fe;
  while (ite->kind == LOOM_EXPR_ADD)
    ite = ite->u.bin.a;
  CHECK(ite->kind == LOOM_EXPR_CALL && ite->u.call.op == LOOM_OP_IF_THEN_ELSE &&
        ite->u.call.args[2]->kind == LOOM_EXPR_FLOAT &&
        loom_dtype_eq(ite->dtype, LOOM_FLOAT32));
  /* Integer expression pieces. */
  loom_expr *ie = s[3]->u.store.value;
  CHECK(ie->kind == LOOM_EXPR_ADD && ie->u.bin.b->kind == LOOM_EXPR_CALL &&
        ie->u.bin.b->u.call.op == LOOM_OP_BITWISE_NOT);
  loom_expr *sel = ie->u.bin.a->u.bin.a->u.bin.b;
  CHECK(sel->kind == LOOM_EXPR_SELECT &&
        is_int(sel->u.select.f, LOOM_INT32, 4));
  loom_expr *cast = ie->u.bin.a->u.bin.a->u.bin.a->u.bin.b;
  CHECK(cast->kind == LOOM_EXPR_CAST && loom_dtype_eq(cast->dtype, LOOM_INT32));
  /* call_extern: result dtype first, the callee as args[0]. */
  loom_expr *ce = s[4]->u.evaluate.value;
  CHECK(ce->kind == LOOM_EXPR_CALL && ce->u.call.op == LOOM_OP_CALL_EXTERN &&
        ce->dtype.code == LOOM_DT_VOID && ce->u.call.n_args == 3 &&
        ce->u.call.args[0]->kind == LOOM_EXPR_STR &&
        !strcmp(ce->u.call.args[0]->u.str, "f") &&
        ce->u.call.args[1]->kind == LOOM_EXPR_VAR &&
        ce->u.call.args[1]->dtype.code == LOOM_DT_HANDLE);
  loom_expr *ap = s[5]->u.evaluate.value;
  CHECK(ap->kind == LOOM_EXPR_CALL && ap->u.call.op == LOOM_OP_TVM_ACCESS_PTR &&
        ap->u.call.n_args == 5 && ap->dtype.code == LOOM_DT_HANDLE &&
        ap->u.call.args[0]->u.call.op == LOOM_OP_TYPE_ANNOTATION &&
        loom_dtype_eq(ap->u.call.args[0]->dtype, LOOM_FLOAT32) &&
        ap->u.call.args[0]->u.call.n_args == 0);
}

/* ---- statements ---------------------------------------------------------- */

static void test_statements(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), "
      "\"float32\")):\n"
      "    for i in range(64):\n"
      "        if i % 2 == 0:\n"
      "            x: T.float32 = A[i] * T.float32(2.0)\n"
      "            y: T.let[T.float32] = x\n"
      "            z = y + 1\n"
      "            B[i] = z\n"
      "        elif i < 32:\n"
      "            B[i] = A[i]\n"
      "        else:\n"
      "            B[i] += T.float32(1.0)\n"
      "    assert A[0] >= T.float32(0.0), \"non-negative\"\n"
      "    with T.attr(0, \"pragma_marker\", 1):\n"
      "        flat = T.decl_buffer((64,), scope=\"local\")\n"
      "        flat[0] = B[0]\n"
      "        alias = T.Buffer((8, 8), data=flat.data, scope=\"local\")\n"
      "        B[1] = alias[0, 0]\n"));
  CHECK(f && f->body->kind == LOOM_STMT_SEQ && f->body->u.seq.n_stmts == 2);
  if (!f || f->body->kind != LOOM_STMT_SEQ || f->body->u.seq.n_stmts != 2)
    return;
  loom_stmt *loop = f->body->u.seq.stmts[0];
  CHECK(loop->loc.line == 5 && loop->loc.col == 5);
  loom_stmt *ifs = loop->u.loop.body;
  CHECK(ifs->kind == LOOM_STMT_IF && ifs->loc.line == 6 && ifs->loc.col == 9);
  /* Lets chain: each binds the rest of the sequence. */
  loom_stmt *l1 = ifs->u.if_.then_case;
  CHECK(l1->kind == LOOM_STMT_LET && !strcmp(l1->u.let.var->name, "x") &&
        loom_dtype_eq(l1->u.let.var->dtype, LOOM_FLOAT32));
  loom_stmt *l2 = l1->u.let.body;
  CHECK(l2->kind == LOOM_STMT_LET && !strcmp(l2->u.let.var->name, "y"));
  loom_stmt *l3 = l2->u.let.body;
  CHECK(l3->kind == LOOM_STMT_LET && !strcmp(l3->u.let.var->name, "z") &&
        l3->u.let.value->kind == LOOM_EXPR_ADD &&
        l3->u.let.value->u.bin.b->kind == LOOM_EXPR_FLOAT);
  CHECK(l3->u.let.body->kind == LOOM_STMT_STORE &&
        is_var(l3->u.let.body->u.store.value, "z"));
  /* elif is a nested if; += is a store of a sum. */
  loom_stmt *el = ifs->u.if_.else_case;
  CHECK(el && el->kind == LOOM_STMT_IF && el->u.if_.else_case &&
        el->u.if_.else_case->kind == LOOM_STMT_STORE &&
        el->u.if_.else_case->u.store.value->kind == LOOM_EXPR_ADD);
  /* assert binds the rest; attr holds an allocation holding a decl. */
  loom_stmt *as = f->body->u.seq.stmts[1];
  CHECK(as->kind == LOOM_STMT_ASSERT &&
        as->u.assert_.message->kind == LOOM_EXPR_STR &&
        as->u.assert_.body->kind == LOOM_STMT_ATTR);
  loom_stmt *at = as->u.assert_.body;
  CHECK(!strcmp(at->u.attr.key, "pragma_marker") &&
        at->u.attr.node->kind == LOOM_VALUE_EXPR);
  loom_stmt *al = at->u.attr.body;
  CHECK(al->kind == LOOM_STMT_ALLOCATE &&
        !strcmp(al->u.alloc.buffer->scope, "local"));
  loom_stmt *decl = al->u.alloc.body->u.seq.stmts[1];
  CHECK(decl->kind == LOOM_STMT_DECL_BUFFER &&
        decl->u.alloc.buffer->data == al->u.alloc.buffer->data &&
        decl->u.alloc.buffer->ndim == 2);
}

static void test_loops(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(A: T.Buffer((64,), \"float32\")):\n"
      "    for b in T.thread_binding(2, thread=\"blockIdx.x\"):\n"
      "        for t in T.thread_binding(0, 4, \"threadIdx.x\"):\n"
      "            for v in T.vectorized(2):\n"
      "                for u in T.unroll(2, annotations={\"z\": 1, \"a\": "
      "\"x\"}):\n"
      "                    for p in T.parallel(1):\n"
      "                        for s in range(3, 5):\n"
      "                            A[b * 32 + t * 8 + v * 4 + u * 2 + p + s] = "
      "T.float32(0.0)\n"));
  loom_stmt *l = f ? f->body : NULL;
  CHECK(l && l->u.loop.kind == LOOM_FOR_THREAD_BINDING &&
        !strcmp(l->u.loop.thread, "blockIdx.x"));
  if (!l)
    return;
  l = l->u.loop.body;
  CHECK(l->u.loop.kind == LOOM_FOR_THREAD_BINDING &&
        !strcmp(l->u.loop.thread, "threadIdx.x") &&
        is_int(l->u.loop.extent, LOOM_INT32, 4));
  l = l->u.loop.body;
  CHECK(l->u.loop.kind == LOOM_FOR_VECTORIZED);
  l = l->u.loop.body;
  CHECK(l->u.loop.kind == LOOM_FOR_UNROLLED && l->u.loop.n_annotations == 2 &&
        !strcmp(l->u.loop.annotations[0].key, "a"));
  l = l->u.loop.body;
  CHECK(l->u.loop.kind == LOOM_FOR_PARALLEL);
  l = l->u.loop.body;
  CHECK(l->u.loop.kind == LOOM_FOR_SERIAL &&
        is_int(l->u.loop.min, LOOM_INT32, 3) &&
        is_int(l->u.loop.extent, LOOM_INT32, 2));
}

static void test_buffers_and_dialects(void) {
  /* In a tirx function, T.alloc_buffer is a statement. */
  loom_func *f = main_of(read_ok(
      "# from tvm.script import tirx as T\n\n@T.prim_func(s_tir=True)\n"
      "def main(A: T.Buffer((8,), \"float32\", offset_factor=4, align=64)):\n"
      "    tmp = T.alloc_buffer((8,), \"float32\", scope=\"shared\")\n"
      "    for i in range(8):\n"
      "        with T.sblock(\"B\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            loc = T.sblock_alloc_buffer((1,), strides=(1,))\n"
      "            T.sblock_attr({\"tirx.k\": True})\n"
      "            loc[0] = A[vi]\n"
      "            tmp[vi] = loc[0]\n"));
  loom_block *r = root_of(f);
  CHECK(r && r->n_alloc_buffers == 0 && r->body->kind == LOOM_STMT_ALLOCATE);
  loom_block *b = find_block(f, "B");
  CHECK(b && b->n_alloc_buffers == 1 && b->alloc_buffers[0]->n_strides == 1 &&
        b->n_annotations == 1 && !strcmp(b->annotations[0].key, "tir.k"));
  /* Written by B; loc (its own buffer) is not a region. */
  CHECK(b && b->n_writes == 1 && !strcmp(b->writes[0].buffer->name, "tmp"));
  /* offset_factor makes a fresh offset variable; align 64 is the default. */
  loom_buffer *a = f ? f->params[0].buffer : NULL;
  CHECK(a && a->offset_factor == 4 && a->align == 0 && a->elem_offset &&
        a->elem_offset->kind == LOOM_EXPR_VAR);
  /* The classic spelling: T.alloc_buffer inside a block is the block's. */
  f = main_of(read_ok(HEADER
                      "def main(A: T.Buffer((8,), \"float32\")):\n"
                      "    for i in range(8):\n"
                      "        with T.block(\"B\"):\n"
                      "            vi = T.axis.spatial(8, i)\n"
                      "            t = T.alloc_buffer((1,), \"float32\", "
                      "scope=\"local\")\n"
                      "            t[0] = A[vi]\n"
                      "            A[vi] = t[0]\n"));
  b = find_block(f, "B");
  CHECK(b && b->n_alloc_buffers == 1 &&
        !strcmp(b->alloc_buffers[0]->scope, "local"));
  /* Undefined names in a match_buffer shape define int32 variables. */
  f = main_of(read_ok(HEADER
                      "def main(a: T.handle):\n"
                      "    A = T.match_buffer(a, (m, 4), strides=(s, 1))\n"
                      "    for i in range(m):\n"
                      "        A[i, 0] = T.float32(0.0)\n"));
  a = f ? f->params[0].buffer : NULL;
  CHECK(a && a->shape[0]->kind == LOOM_EXPR_VAR &&
        loom_dtype_eq(a->shape[0]->dtype, LOOM_INT32) &&
        a->strides[0]->kind == LOOM_EXPR_VAR &&
        f->body->u.loop.extent->u.var == a->shape[0]->u.var);
}

static void test_typevar_shapes(void) {
  loom_func *f = main_of(
      read_ok("# from typing import TypeVar\n# from tvm.script import ir as I\n"
              "# from tvm.script import tir as T\n\n"
              "n = TypeVar(\"n\")\n@I.ir_module\nclass Module:\n"
              "    @T.prim_func\n"
              "    def main(A: T.Buffer((T.int64(2), n), \"float32\")):\n"
              "        for i, j in T.grid(T.int64(2), n):\n"
              "            A[i, j] = T.float32(0.0)\n"));
  loom_buffer *a = f ? f->params[0].buffer : NULL;
  CHECK(a && a->shape[1]->kind == LOOM_EXPR_VAR &&
        loom_dtype_eq(a->shape[1]->dtype, LOOM_INT64));
}

static void test_misc(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(S: T.Buffer((), \"float32\"), U: T.Buffer((2,), \"uint64\")):\n"
      "    with T.block(\"root\"):\n"
      "        T.reads()\n"
      "        T.writes()\n"
      "        for i in range(2):\n"
      "            with T.block(\"s\"):\n"
      "                vi = T.axis.spatial(2, i)\n"
      "                S[()] = S[()] + T.float32(1.0)\n"
      "                U[vi] = T.uint64(18446744073709551615)\n"
      "        n = T.int32()\n"
      "        T.evaluate(T.Let(x + n, where={x: 1}))\n"));
  loom_block *r = root_of(f);
  CHECK(r && !strcmp(r->name, "root"));
  loom_block *s = find_block(f, "s");
  CHECK(s && s->loc.line == 9 && s->loc.col == 13);
  CHECK(s && s->n_reads == 1 && s->reads[0].n_ranges == 0 &&
        s->reads[0].buffer->ndim == 0);
  CHECK(s && s->n_writes == 2);
  loom_stmt *st = s ? s->body->u.seq.stmts[1] : NULL;
  CHECK(st && st->u.store.value->kind == LOOM_EXPR_INT &&
        st->u.store.value->u.int_value == -1 &&
        st->u.store.value->dtype.code == LOOM_DT_UINT);
  /* n = T.int32() declares a variable; T.Let binds x for its body. */
  loom_stmt *ev = r ? r->body->u.seq.stmts[1] : NULL;
  CHECK(ev && ev->kind == LOOM_STMT_EVALUATE &&
        ev->u.evaluate.value->kind == LOOM_EXPR_LET &&
        ev->u.evaluate.value->u.let.body->kind == LOOM_EXPR_ADD);
}

/* N, M = T.int32(), T.int32() declares two symbolic variables, as TVM prints
 * those a signature's shapes use; they are the shapes' variables. */
static void test_symbol_tuple(void) {
  loom_func *f = main_of(read_ok(
      HEADER
      "def main(a: T.handle, b: T.handle):\n"
      "    N, M = T.int32(), T.int32()\n"
      "    A = T.match_buffer(a, (N, M))\n"
      "    B = T.match_buffer(b, (N, M))\n"
      "    for i, j in T.grid(N, M):\n"
      "        B[i, j] = A[i, j]\n"));
  const loom_buffer *A = f && f->n_params == 2 ? f->params[0].buffer : NULL;
  const loom_buffer *B = f && f->n_params == 2 ? f->params[1].buffer : NULL;
  CHECK(A && B && A->ndim == 2 && B->ndim == 2);
  CHECK(A && A->shape[0]->kind == LOOM_EXPR_VAR && A->shape[1]->kind == LOOM_EXPR_VAR &&
        A->shape[0]->u.var != A->shape[1]->u.var);
  CHECK(A && B && A->shape[0]->u.var == B->shape[0]->u.var &&
        loom_dtype_eq(A->shape[0]->dtype, LOOM_INT32));
}

/* ---- error cases, data-driven -------------------------------------------- */

static char *slurp(const char *path, size_t *len) {
  loom_diag d;
  loom_diag_init(&d);
  char *text = NULL;
  if (loom_read_file(path, &text, len, &d) != LOOM_OK)
    text = NULL;
  loom_diag_free(&d);
  return text;
}

/* Lists the regular files in dir ending in suffix, sorted. */
static int list_files(const char *dir, const char *suffix, char ***out) {
  DIR *dp = opendir(dir);
  int n = 0, cap = 0;
  char **names = NULL;
  if (!dp)
    return 0;
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) {
    size_t l = strlen(e->d_name), sl = strlen(suffix);
    if (l < sl || strcmp(e->d_name + l - sl, suffix))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      names = realloc(names, sizeof(char *) * (size_t)cap);
    }
    names[n] = malloc(strlen(dir) + l + 2);
    sprintf(names[n++], "%s/%s", dir, e->d_name);
  }
  closedir(dp);
  for (int i = 1; i < n; i++) /* insertion sort: a few hundred names */
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  *out = names;
  return n;
}

static void free_list(char **names, int n) {
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

static void test_error_files(const char *root) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%.2000s/tests/script/errors", root);
  char **files;
  int n = list_files(dir, ".py", &files);
  CHECK(n > 40);
  for (int i = 0; i < n; i++) {
    size_t len;
    char *text = slurp(files[i], &len);
    int line = 0, col = 0, used = 0;
    CHECK(text && sscanf(text, "# error: %d:%d: %n", &line, &col, &used) == 2);
    if (!text || !used) {
      fprintf(stderr, "%s: no '# error: LINE:COL: message' header\n", files[i]);
      free(text);
      continue;
    }
    const char *msg = text + used;
    char want[512];
    snprintf(want, sizeof want, "%.*s", (int)strcspn(msg, "\n"), msg);
    loom_diag d;
    loom_diag_init(&d);
    loom_module *m = NULL;
    loom_status st = loom_script_read(text, len, files[i], arena, &m, &d);
    bool ok = st == LOOM_ERROR && d.loc.line == line && d.loc.col == col &&
              d.msg && strstr(d.msg, want);
    CHECK(ok);
    if (!ok)
      fprintf(stderr, "%s: expected %d:%d: %s\n  got %d:%d: %s\n", files[i],
              line, col, want, d.loc.line, d.loc.col, d.msg ? d.msg : "(none)");
    loom_diag_free(&d);
    free(text);
  }
  free_list(files, n);
}

/* ---- every shared program, in both spellings ----------------------------- */

/* Replaces every occurrence of `from` in *text with `to`. */
static void replace_all(char **text, const char *from, const char *to) {
  loom_buf b;
  loom_buf_init(&b);
  const char *p = *text, *q;
  size_t fl = strlen(from);
  while ((q = strstr(p, from)) != NULL) {
    loom_buf_putn(&b, p, (size_t)(q - p));
    loom_buf_puts(&b, to);
    p = q + fl;
  }
  loom_buf_puts(&b, p);
  free(*text);
  *text = loom_buf_take(&b);
}

/* The classic spelling, as tools/conformance's classic() writes it. */
static char *classic(const char *text) {
  char *t = strdup(text);
  replace_all(&t, "T.sblock_alloc_buffer(", "T.alloc_buffer(");
  replace_all(&t, "T.sblock", "T.block");
  replace_all(&t, "import tirx as T", "import tir as T");
  replace_all(&t, "tvm.tirx", "tvm.tir");
  replace_all(&t, "\"tirx.", "\"tir.");
  replace_all(&t, "@T.prim_func(s_tir=True)", "@T.prim_func");
  replace_all(&t, ", s_tir=True)", ")");
  return t;
}

static int read_and_verify(const char *name, const char *text) {
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m = NULL;
  int ok = loom_script_read(text, strlen(text), name, a, &m, &d) == LOOM_OK;
  if (ok && loom_ir_verify_module(m, &d) != LOOM_OK) {
    fprintf(stderr, "%s: read, but the IR does not verify:\n", name);
    ok = 0;
  }
  if (!ok) {
    loom_buf b;
    loom_buf_init(&b);
    loom_diag_render(&d, &b);
    fprintf(stderr, "%s", b.data ? b.data : "?\n");
    loom_buf_free(&b);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  return ok;
}

static int read_dir(const char *dir, const char *suffix) {
  char **files;
  int n = list_files(dir, suffix, &files), count = 0;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(files[i]);
    if (len > 9 && !strcmp(files[i] + len - 9, ".sched.py"))
      continue; /* a schedule script, not a program */
    char *text = slurp(files[i], &len);
    if (!text)
      continue;
    CHECK(read_and_verify(files[i], text));
    char *c = classic(text);
    char name[4200];
    snprintf(name, sizeof name, "%s (classic)", files[i]);
    CHECK(read_and_verify(name, c));
    free(c);
    free(text);
    count++;
  }
  free_list(files, n);
  return count;
}

static void test_shared_programs(const char *shared) {
  char path[4096];
  int n = 0;
  snprintf(path, sizeof path, "%s/corpus", shared);
  n += read_dir(path, ".py");
  snprintf(path, sizeof path, "%s/conformance/programs", shared);
  n += read_dir(path, ".py");
  snprintf(path, sizeof path, "%s/conformance", shared);
  DIR *dp = opendir(path);
  struct dirent *e;
  while (dp && (e = readdir(dp)) != NULL) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "programs"))
      continue;
    char sub[4400];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    for (int k = 0; k < 2; k++) {
      char f[4500];
      snprintf(f, sizeof f, "%s/%s", sub, k ? "after.py" : "before.py");
      size_t len;
      char *text = slurp(f, &len);
      if (!text)
        continue;
      CHECK(read_and_verify(f, text));
      char *c = classic(text);
      CHECK(read_and_verify(f, c));
      free(c);
      free(text);
      n++;
    }
  }
  if (dp)
    closedir(dp);
  CHECK(n > 100);
  printf("test_read: %d shared programs read in both spellings\n", n);
}

/* ---- allocation failure and mutated input -------------------------------- */

static const char *fault_program = HEADER
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16,), "
    "\"float32\")):\n"
    "    T.func_attr({\"tir.noalias\": True})\n"
    "    tmp = T.alloc_buffer((16,))\n"
    "    for i, k in T.grid(16, 16):\n"
    "        with T.block(\"sum\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                tmp[vi] = T.float32(0.0)\n"
    "            tmp[vi] = tmp[vi] + A[vi, vk] * 2\n"
    "    for i in range(16):\n"
    "        with T.block(\"out\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            for j in range(4):\n"
    "                B[vi] = T.max(tmp[vi], T.float32(0.5)) + A[vi, j * 4]\n";

static void test_fault_injection(void) {
  size_t len = strlen(fault_program);
  int passed = 0;
  for (long n = 1; n < 100000 && !passed; n++) {
    loom_faultsim fs = {n, 0};
    loom_arena *a = loom_arena_new();
    loom_arena_set_faultsim(a, &fs);
    loom_diag d;
    loom_diag_init(&d);
    loom_module *m = NULL;
    loom_status st = loom_script_read(fault_program, len, "f.py", a, &m, &d);
    CHECK(st == LOOM_OK || st == LOOM_NOMEM);
    if (st == LOOM_NOMEM)
      CHECK(d.has_error);
    passed = st == LOOM_OK;
    loom_diag_free(&d);
    loom_arena_free(a);
  }
  CHECK(passed);
}

/* A small deterministic generator (xorshift), for mutations. */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Mutates text by lines and tokens: programs that still parse give the
 * builder shapes it never sees from a printer. Any outcome but a crash (or
 * an error without a location) is fine. */
static void test_mutations(const char *shared) {
  char path[4096];
  snprintf(path, sizeof path, "%s/conformance/programs", shared);
  char **files;
  int nf = list_files(path, ".py", &files);
  static const char *const words[] = {"T.int64(3)",
                                      "0",
                                      "-1",
                                      "n",
                                      "A",
                                      "T.block(\"x\")",
                                      "(1, 2)",
                                      "[]",
                                      "T.init()",
                                      "vi",
                                      "True",
                                      "1.5",
                                      "\"s\"",
                                      "T.reads()",
                                      "None",
                                      "i",
                                      "T.axis.remap(\"SR\", [i])",
                                      "T.grid(2)",
                                      "x: T.int32 = 1",
                                      "A[0]",
                                      "T.Buffer((2,))",
                                      "T.match_buffer(A[0], (1,))",
                                      "{}",
                                      "T.where(1)"};
  uint64_t seed = 0x9e3779b97f4a7c15u;
  int refused = 0, read = 0;
  for (int k = 0; k < 3000 && nf > 0; k++) {
    size_t len;
    char *text = slurp(files[rng_next(&seed) % (uint64_t)nf], &len);
    if (!text || len == 0) {
      free(text);
      continue;
    }
    for (int edits = 1 + (int)(rng_next(&seed) % 3); edits > 0; edits--) {
      size_t at = rng_next(&seed) % len;
      size_t span = 1 + rng_next(&seed) % 12;
      if (at + span > len)
        span = len - at;
      const char *w = words[rng_next(&seed) % (sizeof words / sizeof *words)];
      loom_buf b;
      loom_buf_init(&b);
      loom_buf_putn(&b, text, at);
      if (rng_next(&seed) % 3)
        loom_buf_puts(&b, w);
      loom_buf_puts(&b, text + at + span);
      free(text);
      len = b.len;
      text = loom_buf_take(&b);
      if (len == 0)
        break;
    }
    loom_arena *a = loom_arena_new();
    loom_diag d;
    loom_diag_init(&d);
    loom_module *m = NULL;
    loom_status st = loom_script_read(text, len, "mut.py", a, &m, &d);
    if (st == LOOM_OK) {
      read++;
    } else {
      refused++;
      CHECK(d.has_error && d.msg);
    }
    loom_diag_free(&d);
    loom_arena_free(a);
    free(text);
  }
  free_list(files, nf);
  printf("test_read: mutations: %d read, %d refused\n", read, refused);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  char shared[2048];
  snprintf(shared, sizeof shared, "%.2000s/../shared", root);
  arena = loom_arena_new();
  test_params_and_attrs();
  test_module();
  test_root_block();
  test_matmul();
  test_relaxed_regions();
  test_nested_block_regions();
  test_match_buffer_regions();
  test_explicit_header();
  test_literal_typing();
  test_expressions();
  test_statements();
  test_loops();
  test_buffers_and_dialects();
  test_typevar_shapes();
  test_misc();
  test_symbol_tuple();
  test_error_files(root);
  test_fault_injection();
  DIR *dp = opendir(shared);
  if (dp) {
    closedir(dp);
    test_corpus_regions(shared);
    test_shared_programs(shared);
    test_mutations(shared);
  } else {
    printf("test_read: %s absent; shared programs skipped\n", shared);
  }
  loom_arena_free(arena);
  return test_summary("test_read");
}
