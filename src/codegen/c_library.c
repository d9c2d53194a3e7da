/* A loop nest the dispatch pass marked (include/loom/dispatch.h), printed
 * as the library call that computes it, when the nest still stores to the
 * product's output alone. The routine is looked up when the
 * program first runs (loom_library_symbol in the prelude), so a machine
 * without the library gets return code -4, not a failed load. Convolutions,
 * pools and products by a layer's weights go to oneDNN (c_dnnl.c). */
#include "codegen/codegen_impl.h"

#include "loom/dispatch.h"

#include <string.h>


typedef struct only_ctx {
  const loom_var *c; /* the product's output */
  bool is_other;     /* something else happens under the mark */
} only_ctx;

static loom_visit only_c(void *ctx, loom_stmt *s) {
  only_ctx *o = ctx;
  bool ok = s->kind == LOOM_STMT_FOR || s->kind == LOOM_STMT_SEQ || s->kind == LOOM_STMT_IF ||
            s->kind == LOOM_STMT_LET ||
            (s->kind == LOOM_STMT_STORE && s->u.store.buffer->data == o->c);
  o->is_other |= !ok;
  return ok ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

bool emit_stores_only(const loom_stmt *loop, const loom_buffer *out) {
  only_ctx o = {out->data, false};
  loom_ir_visitor v = {.stmt_pre = only_c, .ctx = &o};
  loom_ir_visit_stmt(&v, loop->u.loop.body);
  return !o.is_other;
}

/* The routine's pointer, looked up on the first call: a missing library is
 * return code -4. */
static void emit_lookup(emitter *E, const char *var, const char *params, const char *routine) {
  emit_line_start(E);
  loom_buf_printf(E->out, "typedef void (*%s_fn)(%s);\n", var, params);
  emit_line_start(E);
  loom_buf_printf(E->out, "static %s_fn %s;\n", var, var);
  emit_line_start(E);
  loom_buf_printf(E->out, "if (!%s) %s = (%s_fn)loom_library_symbol(\"%s\");\n", var, var, var,
                  routine);
  emit_line_start(E);
  loom_buf_printf(E->out, "if (!%s) return -4;\n", var);
}

/* A pointer argument: the buffer's, at batch * step when batch is given. */
static void emit_at(emitter *E, const loom_buffer *b, const char *batch, int64_t step) {
  loom_buf_puts(E->out, emit_name(E, b->data));
  if (batch)
    loom_buf_printf(E->out, " + %s * %lld", batch, (long long)step);
}

/* y = op(A) x; CBLAS's enums as ints: row-major 101, no transpose 111,
 * transpose 112. A is stored [m, k], or [k, m] transposed. */
static void emit_gemv(emitter *E, const loom_gemm *g, const char *t) {
  char params[256];
  snprintf(params, sizeof params,
           "int, int, int, int, %s, const %s *, int, const %s *, int, %s, %s *, int", t, t, t,
           t, t);
  emit_lookup(E, "loom_gemv", params, g->routine);
  emit_line_start(E);
  loom_buf_printf(E->out, "loom_gemv(101, %d, %lld, %lld, 1, %s, %lld, ", g->trans_a ? 112 : 111,
                  (long long)(g->trans_a ? g->k : g->m), (long long)(g->trans_a ? g->m : g->k),
                  emit_name(E, g->a->data), (long long)(g->trans_a ? g->m : g->k));
  loom_buf_printf(E->out, "%s, 1, %d, %s, 1);\n", emit_name(E, g->b->data), g->beta,
                  emit_name(E, g->c->data));
}

/* C = op(A) op(B). A batch with one B and A as stored rows is one product
 * of batch * m rows; any other batch is a product per batch, at its
 * offsets. */
static void emit_gemm(emitter *E, const loom_gemm *g, const char *t) {
  char params[256];
  snprintf(params, sizeof params,
           "int, int, int, int, int, int, %s, const %s *, int, const %s *, int, %s, %s *, int",
           t, t, t, t, t);
  emit_lookup(E, "loom_gemm", params, g->routine);
  bool is_one = g->batch == 1 || (!g->is_b_batched && !g->trans_a);
  const char *bi = NULL;
  if (!is_one) {
    bi = emit_fresh(E, "batch");
    emit_line_start(E);
    loom_buf_printf(E->out, "for (int64_t %s = 0; %s < %lld; ++%s)\n", bi, bi,
                    (long long)g->batch, bi);
    E->indent++;
  }
  emit_line_start(E);
  loom_buf_printf(E->out, "loom_gemm(101, %d, %d, %lld, %lld, %lld, 1, ", g->trans_a ? 112 : 111,
                  g->trans_b ? 112 : 111, (long long)(is_one ? g->batch * g->m : g->m),
                  (long long)g->n, (long long)g->k);
  emit_at(E, g->a, bi, g->m * g->k);
  loom_buf_printf(E->out, ", %lld, ", (long long)(g->trans_a ? g->m : g->k));
  emit_at(E, g->b, g->is_b_batched ? bi : NULL, g->k * g->n);
  loom_buf_printf(E->out, ", %lld, %d, ", (long long)(g->trans_b ? g->k : g->n), g->beta);
  emit_at(E, g->c, bi, g->m * g->n);
  loom_buf_printf(E->out, ", %lld);\n", (long long)g->n);
  if (!is_one)
    E->indent--;
}


bool emit_library_call(emitter *E, const loom_stmt *loop) {
  loom_gemm g;
  if (E->is_cuda || !E->func || E->parallel_depth > 0 || loop == E->as_loops)
    return false;
  if (emit_matmul_call(E, loop))
    return true;
  if (!loom_dispatch_marked_gemm(E->func, loop, &g) || strncmp(g.routine, "cblas", 5) ||
      !emit_stores_only(loop, g.c))
    return emit_conv_call(E, loop) || emit_pool_call(E, loop) || emit_taken(E, loop);
  const char *t = g.routine[6] == 's' ? "float" : "double";
  emit_line_start(E);
  loom_buf_printf(E->out, "{ /* %s: %s = %s%s x %s%s%s, by the library */\n", g.routine,
                  g.c->name, g.a->name, g.trans_a ? "^T" : "", g.b->name,
                  g.trans_b ? "^T" : "", g.batch > 1 ? " for each batch" : "");
  E->indent++;
  if (g.is_gemv)
    emit_gemv(E, &g, t);
  else
    emit_gemm(E, &g, t);
  E->indent--;
  emit_line_start(E);
  loom_buf_puts(E->out, "}\n");
  return true;
}
