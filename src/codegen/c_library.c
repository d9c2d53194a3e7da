/* A loop nest the dispatch pass marked (include/loom/dispatch.h), printed
 * as the library call that computes it, when the nest still stores to the
 * product's output alone. The routine is looked up when the
 * program first runs (loom_library_symbol in the prelude), so a machine
 * without the library gets return code -4, not a failed load. */
#include "codegen/codegen_impl.h"

#include "loom/dispatch.h"

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

typedef struct only_ctx {
  const loom_var *c; /* the product's output */
  bool is_other;      /* something else happens under the mark */
} only_ctx;

static loom_visit only_c(void *ctx, loom_stmt *s) {
  only_ctx *o = ctx;
  bool ok = s->kind == LOOM_STMT_FOR || s->kind == LOOM_STMT_SEQ || s->kind == LOOM_STMT_IF ||
            s->kind == LOOM_STMT_LET ||
            (s->kind == LOOM_STMT_STORE && s->u.store.buffer->data == o->c);
  o->is_other |= !ok;
  return ok ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

/* Whether the lowered nest under loop stores to the product's output and
 * nothing else: a schedule may have moved another block under the mark
 * (reverse_compute_at of the epilogue), and the call would skip it. */
static bool is_product_alone(const loom_stmt *loop, const loom_gemm *g) {
  only_ctx o = {g->c->data, false};
  loom_ir_visitor v = {.stmt_pre = only_c, .ctx = &o};
  loom_ir_visit_stmt(&v, loop->u.loop.body);
  return !o.is_other;
}

bool emit_library_call(emitter *E, const loom_stmt *loop) {
  loom_gemm g;
  if (E->is_cuda || !E->func || E->parallel_depth > 0 ||
      !loom_dispatch_marked_gemm(E->func, loop, &g) || !is_product_alone(loop, &g))
    return false;
  bool is_single = g.routine[6] == 's';
  const char *t = is_single ? "float" : "double";
  /* CBLAS's enums as ints: row-major 101, no transpose 111, transpose 112. */
  long long lda = g.trans_a ? g.m : g.k, ldb = g.trans_b ? g.k : g.n, ldc = g.n;
  emit_line_start(E);
  loom_buf_printf(E->out, "{ /* %s: %s = %s%s x %s%s%s, by the library */\n", g.routine,
                  g.c->name, g.a->name, g.trans_a ? "^T" : "", g.b->name,
                  g.trans_b ? "^T" : "", g.batch > 1 ? " for each batch" : "");
  E->indent++;
  if (g.is_gemv) {
    /* y = op(A) x: A stored [m, k] (no transpose) or [k, m] (transpose). */
    emit_line_start(E);
    loom_buf_printf(E->out,
                    "typedef void (*loom_gemv_fn)(int, int, int, int, %s, const %s *, int, "
                    "const %s *, int, %s, %s *, int);\n", t, t, t, t, t);
    emit_line_start(E);
    put(E, "static loom_gemv_fn loom_gemv;\n");
    emit_line_start(E);
    loom_buf_printf(E->out, "if (!loom_gemv) loom_gemv = (loom_gemv_fn)loom_library_symbol(\"%s\");\n",
                    g.routine);
    emit_line_start(E);
    put(E, "if (!loom_gemv) return -4;\n");
    emit_line_start(E);
    loom_buf_printf(E->out, "loom_gemv(101, %d, %lld, %lld, 1, %s, %lld, %s, 1, %d, %s, 1);\n",
                    g.trans_a ? 112 : 111, (long long)(g.trans_a ? g.k : g.m),
                    (long long)(g.trans_a ? g.m : g.k), emit_name(E, g.a->data), lda,
                    emit_name(E, g.b->data), g.beta, emit_name(E, g.c->data));
    E->indent--;
    emit_line_start(E);
    put(E, "}\n");
    return true;
  }
  emit_line_start(E);
  loom_buf_printf(E->out,
                  "typedef void (*loom_gemm_fn)(int, int, int, int, int, int, %s, "
                  "const %s *, int, const %s *, int, %s, %s *, int);\n",
                  t, t, t, t, t);
  emit_line_start(E);
  put(E, "static loom_gemm_fn loom_gemm;\n");
  emit_line_start(E);
  loom_buf_printf(E->out, "if (!loom_gemm) loom_gemm = (loom_gemm_fn)loom_library_symbol(\"%s\");\n",
                  g.routine);
  emit_line_start(E);
  put(E, "if (!loom_gemm) return -4;\n");
  /* A batch with one B and A as stored rows is one product of batch * m
   * rows; any other batch is a product per batch, at its offsets. */
  bool is_one = g.batch == 1 || (!g.is_b_batched && !g.trans_a);
  long long rows = is_one ? g.batch * g.m : g.m;
  const char *a = emit_name(E, g.a->data), *b = emit_name(E, g.b->data),
             *c = emit_name(E, g.c->data);
  const char *at = a, *bt = b, *ct = c, *bi = NULL;
  char ao[96], bo[96], co[96];
  if (!is_one) {
    bi = emit_fresh(E, "batch");
    emit_line_start(E);
    loom_buf_printf(E->out, "for (int64_t %s = 0; %s < %lld; ++%s)\n", bi, bi,
                    (long long)g.batch, bi);
    snprintf(ao, sizeof ao, "%s + %s * %lld", a, bi, (long long)(g.m * g.k));
    snprintf(bo, sizeof bo, "%s + %s * %lld", b, bi, (long long)(g.k * g.n));
    snprintf(co, sizeof co, "%s + %s * %lld", c, bi, (long long)(g.m * g.n));
    at = ao;
    bt = g.is_b_batched ? bo : b;
    ct = co;
    E->indent++;
  }
  emit_line_start(E);
  loom_buf_printf(E->out, "loom_gemm(101, %d, %d, %lld, %lld, %lld, 1, %s, %lld, %s, %lld, %d, %s, %lld);\n",
                  g.trans_a ? 112 : 111, g.trans_b ? 112 : 111, rows, (long long)g.n,
                  (long long)g.k, at, lda, bt, ldb, g.beta, ct, ldc);
  if (!is_one)
    E->indent--;
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
  return true;
}
