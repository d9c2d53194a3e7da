/* CUDA's warp matrix operations (nvcuda::wmma) for the tensor-core
 * intrinsics (src/schedule/intrin_wmma.c). A buffer of scope wmma.matrix_a,
 * wmma.matrix_b or wmma.accumulator is declared as an array of fragments,
 * one per 16 x 16 tile of its elements; the shape and layout each fragment
 * type needs are read off the calls that use the buffer, as nothing else
 * states them. */
#include "codegen/codegen_impl.h"

#include <string.h>

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

/* What the calls say of one fragment buffer. */
typedef struct frag_info {
  const loom_var *data;
  int64_t m, n, k;
  const char *layout; /* of a matrix_a or matrix_b load; NULL: not seen */
  const char *why;    /* the first contradiction */
  loom_loc at;        /* where, when a statement shows it */
} frag_info;

static loom_visit scan_store(void *ctx, loom_stmt *s) {
  frag_info *F = ctx;
  if (s->kind != LOOM_STMT_STORE || s->u.store.buffer->data != F->data)
    return LOOM_VISIT_GO;
  F->why = "its elements are written one by one, where only wmma calls may touch a "
           "fragment (tensorize the blocks that write it)";
  F->at = s->loc;
  return LOOM_VISIT_STOP;
}

static loom_visit scan_call(void *ctx, loom_expr *e) {
  frag_info *F = ctx;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer->data == F->data) {
    F->why = "its elements are read one by one, where only wmma calls may touch a "
             "fragment (tensorize the blocks that read it)";
    return LOOM_VISIT_STOP;
  }
  if (e->kind != LOOM_EXPR_CALL || !loom_op_is_wmma(e->u.call.op) ||
      e->u.call.op == LOOM_OP_TVM_MMA_SYNC)
    return LOOM_VISIT_GO;
  loom_expr **x = e->u.call.args;
  if (x[0]->kind != LOOM_EXPR_VAR || x[0]->u.var != F->data)
    return LOOM_VISIT_GO;
  int64_t m, n, k;
  if (!loom_ir_is_const_int(x[1], &m) || !loom_ir_is_const_int(x[2], &n) ||
      !loom_ir_is_const_int(x[3], &k)) {
    F->why = "its m, n and k are not constants";
    return LOOM_VISIT_STOP;
  }
  if (F->m && (F->m != m || F->n != n || F->k != k)) {
    F->why = "two calls give it different shapes";
    return LOOM_VISIT_STOP;
  }
  F->m = m, F->n = n, F->k = k;
  if (e->u.call.op == LOOM_OP_TVM_LOAD_MATRIX_SYNC) {
    const loom_expr *l = x[7];
    const char *layout = l->kind == LOOM_EXPR_STR ? l->u.str : "";
    if (strcmp(layout, "row_major") && strcmp(layout, "col_major")) {
      F->why = "a load's layout is neither \"row_major\" nor \"col_major\"";
      return LOOM_VISIT_STOP;
    }
    if (F->layout && strcmp(F->layout, layout)) {
      F->why = "it is loaded both row-major and column-major";
      return LOOM_VISIT_STOP;
    }
    F->layout = layout;
  }
  return LOOM_VISIT_GO;
}

/* The C++ element type of a fragment of t. */
static const char *frag_elem(loom_dtype t) {
  if (t.code == LOOM_DT_FLOAT && t.bits == 16)
    return "half";
  if (t.code == LOOM_DT_FLOAT && t.bits == 32)
    return "float";
  if (t.code == LOOM_DT_INT && t.bits == 8)
    return "signed char";
  if (t.code == LOOM_DT_INT && t.bits == 32)
    return "int";
  return NULL;
}

bool emit_fragment_alloc(emitter *E, const loom_stmt *s) {
  const loom_buffer *b = s->u.alloc.buffer;
  const char *scope = b->scope ? b->scope : "";
  loom_wmma_role role = loom_ir_scope_wmma(scope);
  if (role == LOOM_WMMA_NONE)
    return false;
  frag_info F = {.data = b->data};
  loom_ir_visitor v = {.stmt_pre = scan_store, .expr_pre = scan_call, .ctx = &F};
  loom_ir_visit_stmt(&v, s->u.alloc.body);
  int64_t size = 1, e;
  for (int i = 0; i < b->ndim; i++)
    size *= loom_ir_is_const_int(b->shape[i], &e) ? e : 0;
  int64_t rows, cols;
  loom_ir_wmma_tile(role, F.m, F.n, F.k, &rows, &cols);
  int64_t tile = rows * cols;
  const char *elem = frag_elem(b->dtype);
  if (!F.why && !F.m)
    F.why = "no wmma load, store or fill gives its shape";
  if (!F.why && role != LOOM_WMMA_ACC && !F.layout)
    F.why = "no load gives its layout";
  if (!F.why && !elem)
    F.why = "its dtype has no fragment type";
  if (!F.why && (size <= 0 || size % tile))
    F.why = "its size is not a whole number of fragments";
  if (F.why) {
    if (F.at.line)
      E->loc = F.at;
    emit_error(E, "the CUDA backend does not support fragment buffer '%s' (scope %s) "
               "here: %s", b->name, scope, F.why);
    return true;
  }
  if (loom_ptrmap_put(&E->locals, b->data, 1) != LOOM_OK ||
      loom_ptrmap_put(&E->fragments, b->data, 1) != LOOM_OK) {
    E->st = LOOM_NOMEM;
    return true;
  }
  emit_line_start(E);
  put(E, "{\n");
  E->indent++;
  emit_line_start(E);
  /* CUDA's fragment kinds are the scopes' names after "wmma.". */
  loom_buf_printf(E->out, "nvcuda::wmma::fragment<nvcuda::wmma::%s, %lld, %lld, %lld, %s",
                  scope + strlen("wmma."), (long long)F.m, (long long)F.n, (long long)F.k,
                  elem);
  if (role != LOOM_WMMA_ACC)
    loom_buf_printf(E->out, ", nvcuda::wmma::%s", F.layout);
  loom_buf_printf(E->out, "> %s[%lld];\n", emit_name(E, b->data), (long long)(size / tile));
  emit_stmt(E, s->u.alloc.body);
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
  return true;
}

/* T.tvm_access_ptr(T.type_annotation(t), data, offset, extent, rw): a
 * typed pointer to the element at offset. */
static void emit_ptr(emitter *E, const loom_expr *p, bool is_const) {
  bool is_ptr = p->kind == LOOM_EXPR_CALL && p->u.call.op == LOOM_OP_TVM_ACCESS_PTR &&
                p->u.call.n_args == 5;
  const loom_expr *const *x = is_ptr ? (const loom_expr *const *)p->u.call.args : NULL;
  if (!is_ptr || x[0]->kind != LOOM_EXPR_CALL) {
    emit_error(E, "a wmma load or store takes its memory as T.tvm_access_ptr(...)");
    return;
  }
  const char *elem = frag_elem(x[0]->dtype);
  if (!elem) {
    emit_error(E, "a wmma load or store of dtype with no fragment type");
    return;
  }
  loom_buf_printf(E->out, "((%s%s *)", is_const ? "const " : "", elem);
  emit_expr(E, x[1]);
  put(E, " + ");
  emit_expr(E, x[2]);
  put(E, ")");
}

static void emit_frag(emitter *E, const loom_expr *data, const loom_expr *index) {
  if (data->kind != LOOM_EXPR_VAR || loom_ptrmap_get(&E->fragments, data->u.var) < 0) {
    emit_error(E, "the CUDA backend does not support a wmma call on %s, which is not a "
               "fragment buffer of the kernel (scope wmma.matrix_a, wmma.matrix_b or "
               "wmma.accumulator)", data->kind == LOOM_EXPR_VAR ? data->u.var->name : "a value");
    return;
  }
  emit_expr(E, data);
  put(E, "[");
  emit_expr(E, index);
  put(E, "]");
}

void emit_wmma_call(emitter *E, const loom_expr *e) {
  const loom_expr *const *x = (const loom_expr *const *)e->u.call.args;
  switch (e->u.call.op) {
  case LOOM_OP_TVM_FILL_FRAGMENT:
    put(E, "nvcuda::wmma::fill_fragment(");
    emit_frag(E, x[0], x[4]);
    put(E, ", ");
    emit_expr(E, x[5]);
    put(E, ")");
    return;
  case LOOM_OP_TVM_LOAD_MATRIX_SYNC:
    put(E, "nvcuda::wmma::load_matrix_sync(");
    emit_frag(E, x[0], x[4]);
    put(E, ", ");
    emit_ptr(E, x[5], true);
    put(E, ", ");
    emit_expr(E, x[6]);
    put(E, ")");
    return;
  case LOOM_OP_TVM_STORE_MATRIX_SYNC:
    put(E, "nvcuda::wmma::store_matrix_sync(");
    emit_ptr(E, x[5], false);
    put(E, ", ");
    emit_frag(E, x[0], x[4]);
    put(E, ", ");
    emit_expr(E, x[6]);
    loom_buf_printf(E->out, ", nvcuda::wmma::mem_%s)",
                    x[7]->kind == LOOM_EXPR_STR && !strcmp(x[7]->u.str, "col_major")
                        ? "col_major" : "row_major");
    return;
  case LOOM_OP_TVM_MMA_SYNC:
    put(E, "nvcuda::wmma::mma_sync(");
    for (int i = 0; i < 4; i++) {
      if (i)
        put(E, ", ");
      emit_frag(E, x[2 * i], x[2 * i + 1]);
    }
    put(E, ")");
    return;
  default:
    return;
  }
}
