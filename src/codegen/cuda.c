/* CUDA C: one file per lowered function (loom_gpu_func), its kernels as
 *
 *   extern "C" __global__ void __launch_bounds__(THREADS) NAME(params)
 *
 * taking the kernel's parameters in order (include/loom/lower.h): element
 * pointers for buffers, values for scalars. Statements and expressions
 * print as in the C backend (c_stmt.c, c_expr.c), with the CUDA prelude's
 * helpers; each axis index is read once at the top. */
#include "codegen/codegen_impl.h"

#include <stdlib.h>
#include <string.h>

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

/* The buffer each data variable of a kernel points to, for its type. */
typedef struct pointee_ctx {
  loom_ptrmap map; /* data var -> 1 + index into bufs */
  const loom_buffer **bufs;
  int n, cap;
  loom_status st;
} pointee_ctx;

static void note_buffer(pointee_ctx *P, const loom_buffer *b) {
  if (loom_ptrmap_get(&P->map, b->data) >= 0)
    return;
  if (P->n == P->cap) {
    int cap = P->cap ? 2 * P->cap : 16;
    const loom_buffer **p = realloc(P->bufs, (size_t)cap * sizeof *p);
    if (!p) {
      P->st = LOOM_NOMEM;
      return;
    }
    P->bufs = p;
    P->cap = cap;
  }
  P->bufs[P->n] = b;
  if (loom_ptrmap_put(&P->map, b->data, P->n++) != LOOM_OK)
    P->st = LOOM_NOMEM;
}

static loom_visit pointee_stmt(void *ctx, loom_stmt *s) {
  if (s->kind == LOOM_STMT_STORE)
    note_buffer(ctx, s->u.store.buffer);
  return LOOM_VISIT_GO;
}

static loom_visit pointee_expr(void *ctx, loom_expr *e) {
  if (e->kind == LOOM_EXPR_LOAD)
    note_buffer(ctx, e->u.load.buffer);
  return LOOM_VISIT_GO;
}

static void emit_signature(emitter *E, const loom_gpu_kernel *k, pointee_ctx *P) {
  loom_buf_printf(E->out, "extern \"C\" __global__ void __launch_bounds__(%d) %s(",
                  k->threads > 0 ? k->threads : 1, k->name);
  for (int i = 0; i < k->n_params; i++) {
    const loom_var *v = k->params[i];
    put(E, i ? ",\n    " : "\n    ");
    if (v->dtype.code == LOOM_DT_HANDLE) {
      int at = loom_ptrmap_get(&P->map, v);
      const char *ty = at >= 0 ? emit_elem_type(P->bufs[at]->dtype) : "void";
      loom_buf_printf(E->out, "%s *%s%s", ty, E->is_noalias ? "__restrict__ " : "",
                      emit_name(E, v));
    } else {
      loom_buf_printf(E->out, "%s %s", emit_value_type(v->dtype), emit_name(E, v));
    }
  }
  put(E, ") {\n");
  if (k->dynamic_shared)
    put(E, "  extern __shared__ __align__(16) unsigned char loom_smem[];\n");
  for (int a = 0; a < LOOM_GPU_AXES; a++)
    if (k->axes[a]) {
      loom_buf_printf(E->out, "  const int32_t %s = (int32_t)%s;\n",
                      emit_name(E, k->axes[a]), loom_lower_gpu_axis_name(a));
      if (loom_ptrmap_put(&E->nonneg, k->axes[a], 1) != LOOM_OK)
        E->st = LOOM_NOMEM;
    }
}

static loom_status emit_kernel(const loom_gpu_kernel *k, bool is_noalias,
                               loom_buf *out, loom_diag *d) {
  emitter E = {.out = out, .d = d, .indent = 1, .loc = k->loc,
               .is_noalias = is_noalias, .is_cuda = true, .kernel = k};
  pointee_ctx P = {0};
  loom_ptrmap_init(&P.map);
  loom_ir_visitor v = {.stmt_pre = pointee_stmt, .expr_pre = pointee_expr, .ctx = &P};
  loom_ir_visit_stmt(&v, k->body);
  E.st = P.st;
  if (E.st == LOOM_OK) {
    emit_signature(&E, k, &P);
    emit_stmt(&E, k->body);
    put(&E, "}\n\n");
  }
  loom_status st = E.st;
  loom_ptrmap_free(&P.map);
  free(P.bufs);
  emit_free(&E);
  if (st == LOOM_OK && out->has_failed)
    st = LOOM_NOMEM;
  return st;
}

/* The host's products by cuBLAS, named in a comment each: they run
 * between the kernels, not in this file. */
static loom_visit note_library(void *ctx, loom_expr *e) {
  loom_buf *out = ctx;
  if (e->kind != LOOM_EXPR_CALL || e->u.call.n_args != 13 ||
      e->u.call.args[0]->kind != LOOM_EXPR_STR ||
      strcmp(e->u.call.args[0]->u.str, LOOM_GPU_CUBLAS))
    return LOOM_VISIT_GO;
  loom_expr **x = e->u.call.args;
  int64_t m = 0, n = 0, k = 0, batch = 0;
  loom_ir_is_const_int(x[7], &m), loom_ir_is_const_int(x[8], &n);
  loom_ir_is_const_int(x[9], &k), loom_ir_is_const_int(x[10], &batch);
  loom_buf_printf(out, "/* On the host, by cuBLAS (cublasGemmStridedBatchedEx): %s = %s %s %s, "
                  "%s into %s, %lld x %lld x %lld, batch %lld. */\n",
                  x[6]->kind == LOOM_EXPR_VAR ? x[6]->u.var->name : "?",
                  x[4]->kind == LOOM_EXPR_VAR ? x[4]->u.var->name : "?",
                  x[3]->kind == LOOM_EXPR_STR ? x[3]->u.str : "?",
                  x[5]->kind == LOOM_EXPR_VAR ? x[5]->u.var->name : "?",
                  x[1]->kind == LOOM_EXPR_STR ? x[1]->u.str : "?",
                  x[2]->kind == LOOM_EXPR_STR ? x[2]->u.str : "?", (long long)m, (long long)n,
                  (long long)k, (long long)batch);
  return LOOM_VISIT_GO;
}

loom_status loom_codegen_cuda(const loom_gpu_func *g, loom_buf *out, loom_diag *d) {
  const loom_func *f = g->host;
  const loom_value *v = loom_ir_attr_get(f->attrs, f->n_attrs, "tir.noalias");
  int64_t c;
  bool is_noalias = v && v->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(v->expr, &c) && c;
  loom_buf_printf(out, "/* Generated by Loom: the kernels of %s. */\n", f->name);
  loom_ir_visitor lib = {.expr_pre = note_library, .ctx = out};
  loom_ir_visit_stmt(&lib, f->body);
  loom_buf_puts(out, codegen_cuda_prelude);
  bool is_wmma = false;
  for (int i = 0; i < g->n_kernels; i++)
    is_wmma |= loom_ir_stmt_has_wmma(g->kernels[i].body);
  if (is_wmma)
    loom_buf_puts(out, "#include <mma.h>\n\n");
  for (int i = 0; i < g->n_kernels; i++)
    TRY(emit_kernel(&g->kernels[i], is_noalias, out, d));
  return out->has_failed ? LOOM_NOMEM : LOOM_OK;
}
