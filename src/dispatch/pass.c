/* The dispatch pass on one function, and the mark read back by the C
 * backend. */
#include "loom/dispatch.h"

#include <stdio.h>
#include <string.h>

#define N_MARKS 11

static const char *const trans_names[4] = {"NN", "NT", "TN", "TT"};

/* loop with the gemm's mark added to its annotations. */
static loom_stmt *marked(loom_arena *a, const loom_stmt *loop, const loom_gemm *g) {
  int n = loop->u.loop.n_annotations;
  loom_attr *at = loom_arena_alloc(a, (size_t)(n + N_MARKS) * sizeof *at);
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_FOR, loop->loc);
  if (!at || !s)
    return NULL;
  if (n)
    memcpy(at, loop->u.loop.annotations, (size_t)n * sizeof *at);
  const char *keys[N_MARKS] = {"loom.library", "loom.gemm", "loom.a",    "loom.b",
                               "loom.c",       "loom.m",    "loom.n",    "loom.k",
                               "loom.beta",    "loom.batch", "loom.b_batched"};
  loom_value *vals[N_MARKS] = {
      loom_ir_value_str(a, g->routine),
      loom_ir_value_str(a, trans_names[g->trans_a * 2 + g->trans_b]),
      loom_ir_value_str(a, g->a->name),
      loom_ir_value_str(a, g->b->name),
      loom_ir_value_str(a, g->c->name),
      loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, g->m)),
      loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, g->n)),
      loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, g->k)),
      loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, g->beta)),
      loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, g->batch)),
      loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, g->is_b_batched)),
  };
  for (int i = 0; i < N_MARKS; i++) {
    if (!vals[i])
      return NULL;
    at[n + i] = (loom_attr){keys[i], vals[i]};
  }
  *s = *loop;
  s->u.loop.annotations = at;
  s->u.loop.n_annotations = n + N_MARKS;
  return s;
}

loom_status loom_dispatch_func(loom_arena *a, const loom_func *f, const loom_func **out,
                               int *n_taken, char *why, size_t why_len) {
  *out = f;
  *n_taken = 0;
  if (why && why_len)
    why[0] = 0;
  const loom_stmt *root = f->body;
  if (!root || root->kind != LOOM_STMT_BLOCK_REALIZE) {
    if (why && why_len)
      snprintf(why, why_len, "has no root block");
    return LOOM_OK;
  }
  const loom_block *rb = root->u.realize.block;
  loom_stmt *const *top = &rb->body;
  int n_top = 1;
  if (rb->body && rb->body->kind == LOOM_STMT_SEQ) {
    top = rb->body->u.seq.stmts;
    n_top = rb->body->u.seq.n_stmts;
  }
  loom_stmt **stmts = loom_arena_alloc(a, (size_t)(n_top ? n_top : 1) * sizeof *stmts);
  if (!stmts)
    return LOOM_NOMEM;
  for (int i = 0; i < n_top; i++) {
    loom_gemm g;
    char reason[256];
    stmts[i] = top[i];
    if (!top[i] || top[i]->kind != LOOM_STMT_FOR)
      continue;
    if (!loom_dispatch_match_gemm(f, top[i], &g, reason, sizeof reason)) {
      if (why && why_len && !why[0])
        snprintf(why, why_len, "%s", reason);
      continue;
    }
    if (!(stmts[i] = marked(a, top[i], &g)))
      return LOOM_NOMEM;
    (*n_taken)++;
  }
  if (*n_taken == 0) {
    if (why && why_len && !why[0])
      snprintf(why, why_len, "has no loop nest at its top");
    return LOOM_OK;
  }
  loom_stmt *body = stmts[0];
  if (rb->body && rb->body->kind == LOOM_STMT_SEQ) {
    if (!(body = loom_ir_stmt(a, LOOM_STMT_SEQ, rb->body->loc)))
      return LOOM_NOMEM;
    body->u.seq.stmts = stmts;
    body->u.seq.n_stmts = n_top;
  }
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *nr = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, root->loc);
  loom_func *nf = loom_arena_alloc(a, sizeof *nf);
  if (!nb || !nr || !nf)
    return LOOM_NOMEM;
  *nb = *rb;
  nb->body = body;
  *nr = *root;
  nr->u.realize.block = nb;
  *nf = *f;
  nf->body = nr;
  *out = nf;
  return LOOM_OK;
}

/* ---- reading the mark back ---------------------------------------------------- */

static const char *mark_str(const loom_stmt *loop, const char *key) {
  const loom_value *v = loom_ir_attr_get(loop->u.loop.annotations,
                                         loop->u.loop.n_annotations, key);
  return v && v->kind == LOOM_VALUE_STR ? v->str : NULL;
}

static bool mark_int(const loom_stmt *loop, const char *key, int64_t *out) {
  const loom_value *v = loom_ir_attr_get(loop->u.loop.annotations,
                                         loop->u.loop.n_annotations, key);
  return v && v->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(v->expr, out);
}

typedef struct find_ctx {
  const char *name;
  const loom_buffer *found;
} find_ctx;

static loom_visit find_alloc(void *ctx, loom_stmt *s) {
  find_ctx *c = ctx;
  if ((s->kind == LOOM_STMT_ALLOCATE || s->kind == LOOM_STMT_DECL_BUFFER) &&
      !strcmp(s->u.alloc.buffer->name, c->name)) {
    c->found = s->u.alloc.buffer;
    return LOOM_VISIT_STOP;
  }
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    for (int i = 0; i < s->u.realize.block->n_alloc_buffers; i++)
      if (!strcmp(s->u.realize.block->alloc_buffers[i]->name, c->name)) {
        c->found = s->u.realize.block->alloc_buffers[i];
        return LOOM_VISIT_STOP;
      }
  return LOOM_VISIT_GO;
}

/* The buffer named name: a parameter, else an allocation in f's body. */
static const loom_buffer *buffer_named(const loom_func *f, const char *name) {
  if (!name)
    return NULL;
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer && !strcmp(f->params[i].buffer->name, name))
      return f->params[i].buffer;
  find_ctx c = {name, NULL};
  loom_ir_visitor v = {.stmt_pre = find_alloc, .ctx = &c};
  loom_ir_visit_stmt(&v, f->body);
  return c.found;
}

/* The number of elements of b, -1 when its shape is not constant (the C
 * backend sees buffers flattened: the count is what survives). */
static int64_t n_elems(const loom_buffer *b) {
  int64_t n = 1, e;
  for (int i = 0; i < b->ndim; i++) {
    if (!loom_ir_is_const_int(b->shape[i], &e) || e < 0)
      return -1;
    n *= e;
  }
  return n;
}

bool loom_dispatch_marked_gemm(const loom_func *f, const loom_stmt *loop, loom_gemm *out) {
  if (!loop || loop->kind != LOOM_STMT_FOR)
    return false;
  const char *routine = mark_str(loop, "loom.library"), *trans = mark_str(loop, "loom.gemm");
  if (!routine || !trans)
    return false;
  loom_gemm g = {0};
  int64_t beta, b_batched;
  static const char *const routines[] = {"cblas_sgemm", "cblas_dgemm", "cblas_sgemv",
                                         "cblas_dgemv"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(routine, routines[i]))
      g.routine = routines[i];
  g.is_gemv = g.routine && g.routine[10] == 'v';
  int t = -1;
  for (int i = 0; i < 4; i++)
    if (!strcmp(trans, trans_names[i]))
      t = i;
  g.a = buffer_named(f, mark_str(loop, "loom.a"));
  g.b = buffer_named(f, mark_str(loop, "loom.b"));
  g.c = buffer_named(f, mark_str(loop, "loom.c"));
  if (!g.routine || t < 0 || !g.a || !g.b || !g.c || !mark_int(loop, "loom.m", &g.m) ||
      !mark_int(loop, "loom.n", &g.n) || !mark_int(loop, "loom.k", &g.k) ||
      !mark_int(loop, "loom.beta", &beta) || (beta != 0 && beta != 1) ||
      !mark_int(loop, "loom.batch", &g.batch) || !mark_int(loop, "loom.b_batched", &b_batched) ||
      (b_batched != 0 && b_batched != 1) || g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0 ||
      g.m > INT32_MAX / g.batch || g.n > INT32_MAX || g.k > INT32_MAX)
    return false;
  g.is_b_batched = b_batched;
  if (g.is_gemv && (g.n != 1 || g.batch != 1 || g.trans_b))
    return false;
  g.trans_a = t >= 2;
  g.trans_b = t & 1;
  g.beta = (int)beta;
  loom_dtype want = LOOM_DTYPE(LOOM_DT_FLOAT, g.routine[6] == 's' ? 32 : 64, 1);
  const loom_buffer *bs[3] = {g.a, g.b, g.c};
  int64_t sizes[3] = {g.batch * g.m * g.k, (g.is_b_batched ? g.batch : 1) * g.k * g.n,
                      g.batch * g.m * g.n};
  for (int i = 0; i < 3; i++)
    if (!loom_dtype_eq(bs[i]->dtype, want) || n_elems(bs[i]) != sizes[i])
      return false;
  *out = g;
  return true;
}
