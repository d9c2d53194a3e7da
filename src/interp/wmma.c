/* CUDA's warp matrix operations (wmma) in the interpreter, so programs
 * tensorized with the intrinsics of src/schedule/intrin_wmma.c run here.
 *
 * A fragment buffer (scope wmma.matrix_a, wmma.matrix_b or
 * wmma.accumulator) is only touched through these calls, which name a
 * fragment by a buffer's data and an index. Fragment idx is the elements
 * [idx * R * C, (idx + 1) * R * C) of the buffer's flat storage, row-major
 * R x C: m x k for matrix_a, k x n for matrix_b, m x n for the accumulator.
 * That layout is the interpreter's own; nothing else reads those elements.
 * A view's data is the storage of the buffer it views, not offset by its
 * elem_offset: the index alone says where the fragment is. */
#include "interp/interp_impl.h"

#include <string.h>

/* A call, resolved when compiled. Its expressions are the node's: the
 * fragment index then the value (fill), the pointer's offset and the
 * stride (load, store); the four indices d, a, b, c (mma). */
struct wmma_call {
  int frag[4];    /* view slots of the fragments (mma: d, a, b, c) */
  int mem;        /* load, store: view slot of the pointer's buffer */
  int rows, cols; /* fill, load, store: the fragment's shape */
  bool is_col_major;
};

/* tvm_mma_sync's tiles: the only shape the built-in intrinsics use. */
#define MMA_SIZE 16

bool is_wmma_call(const loom_expr *e) {
  if (e->kind != LOOM_EXPR_CALL)
    return false;
  return loom_op_is_wmma(e->u.call.op);
}

/* ---- running ------------------------------------------------------------- */

static loom_dtype elem_type(const view *v) {
  loom_dtype t = v->buf->dtype;
  t.lanes = 1;
  return t;
}

static ilane convert(loom_dtype from, loom_dtype to, ilane x) {
  return loom_dtype_eq(from, to) ? x : cast_lane(from, to, x);
}

static const char *op_name(const snode *n) {
  return loom_op_table[n->s->u.evaluate.value->u.call.op].name;
}

/* Evaluates index expression k and gives the flat element where that
 * fragment of v (size elements) starts, refusing one past the storage. */
static loom_status frag_base(const snode *n, frame *fr, int k, const view *v,
                             int64_t size, int64_t *base) {
  int64_t idx;
  TRY(eval_int(n->exprs[k], fr, &idx));
  int64_t room = v->nbytes / elem_bytes(v->buf->dtype) / size;
  if (idx < 0 || idx >= room)
    return run_error(fr, "T.%s: fragment %lld of '%s' lies outside its "
                     "storage, which holds %lld fragments of %lld elements",
                     op_name(n), (long long)idx, v->buf->name, (long long)room,
                     (long long)size);
  *base = idx * size;
  return LOOM_OK;
}

/* The flat element of v at row r, column c of the matrix the pointer
 * starts at offset with stride (columns first when col_major). */
static loom_status mem_index(const snode *n, frame *fr, const view *v,
                             int64_t offset, int64_t stride, int r, int c,
                             int64_t *flat) {
  const wmma_call *w = n->wmma;
  int64_t major = w->is_col_major ? c : r, minor = w->is_col_major ? r : c;
  /* Wrapping arithmetic, as flat_index does: the check catches the rest. */
  int64_t f = (int64_t)((uint64_t)offset + (uint64_t)major * (uint64_t)stride +
                        (uint64_t)minor);
  if (f < 0 || f > v->max_flat)
    return run_error(fr, "T.%s: element (%d, %d) is element %lld of '%s', "
                     "outside its storage of %lld elements", op_name(n), r, c,
                     (long long)f, v->buf->name, (long long)(v->max_flat + 1));
  *flat = f;
  return LOOM_OK;
}

static loom_status exec_fill(const snode *n, frame *fr) {
  fr->loc = n->loc;
  const wmma_call *w = n->wmma;
  const view *v = &fr->views[w->frag[0]];
  int64_t size = (int64_t)w->rows * w->cols, base;
  TRY(frag_base(n, fr, 0, v, size, &base));
  ival x;
  TRY(n->exprs[1]->eval(n->exprs[1], fr, &x));
  if (x.t.lanes != 1)
    return run_error(fr, "T.%s: the value has %d lanes, expected 1",
                     op_name(n), x.t.lanes);
  loom_dtype t = elem_type(v);
  ilane value = convert(x.t, t, x.l[0]);
  for (int64_t i = 0; i < size; i++)
    store_elem(t, v->data, base + i, value);
  return LOOM_OK;
}

/* tvm_load_matrix_sync and tvm_store_matrix_sync: element (r, c) of the
 * fragment is element (r, c) of the matrix the pointer starts. */
static loom_status exec_copy(const snode *n, frame *fr) {
  fr->loc = n->loc;
  const wmma_call *w = n->wmma;
  const view *fv = &fr->views[w->frag[0]], *mv = &fr->views[w->mem];
  int64_t base, offset, stride;
  TRY(frag_base(n, fr, 0, fv, (int64_t)w->rows * w->cols, &base));
  TRY(eval_int(n->exprs[1], fr, &offset));
  TRY(eval_int(n->exprs[2], fr, &stride));
  loom_dtype ft = elem_type(fv), mt = elem_type(mv);
  bool is_load = n->s->u.evaluate.value->u.call.op == LOOM_OP_TVM_LOAD_MATRIX_SYNC;
  for (int r = 0; r < w->rows; r++)
    for (int c = 0; c < w->cols; c++) {
      int64_t at = 0, fi = base + (int64_t)r * w->cols + c;
      TRY(mem_index(n, fr, mv, offset, stride, r, c, &at));
      if (is_load)
        store_elem(ft, fv->data, fi, convert(mt, ft, load_elem(mt, mv->data, at)));
      else
        store_elem(mt, mv->data, at, convert(ft, mt, load_elem(ft, fv->data, fi)));
    }
  return LOOM_OK;
}

/* D = C + A B in D's dtype, k in order, each product and sum rounded as
 * the plain program's `C[i, j] + T.Cast(A[i, k]) * T.Cast(B[k, j])` would
 * be. Computed aside first: D may be C. */
static loom_status exec_mma(const snode *n, frame *fr) {
  fr->loc = n->loc;
  const wmma_call *w = n->wmma;
  const view *v[4];
  int64_t base[4];
  loom_dtype t[4];
  for (int k = 0; k < 4; k++) {
    v[k] = &fr->views[w->frag[k]];
    t[k] = elem_type(v[k]);
    TRY(frag_base(n, fr, k, v[k], MMA_SIZE * MMA_SIZE, &base[k]));
  }
  enum { D, A, B, C };
  ilane acc[MMA_SIZE * MMA_SIZE];
  for (int i = 0; i < MMA_SIZE; i++)
    for (int j = 0; j < MMA_SIZE; j++) {
      ilane x = convert(t[C], t[D],
                        load_elem(t[C], v[C]->data, base[C] + i * MMA_SIZE + j));
      for (int k = 0; k < MMA_SIZE; k++) {
        ilane a = load_elem(t[A], v[A]->data, base[A] + i * MMA_SIZE + k);
        ilane b = load_elem(t[B], v[B]->data, base[B] + k * MMA_SIZE + j);
        ilane p;
        const char *what; /* set on integer division only */
        binary_lane(LOOM_EXPR_MUL, t[D], convert(t[A], t[D], a),
                    convert(t[B], t[D], b), &p, &what);
        binary_lane(LOOM_EXPR_ADD, t[D], x, p, &x, &what);
      }
      acc[i * MMA_SIZE + j] = x;
    }
  for (int i = 0; i < MMA_SIZE * MMA_SIZE; i++)
    store_elem(t[D], v[D]->data, base[D] + i, acc[i]);
  return LOOM_OK;
}

/* ---- compiling ----------------------------------------------------------- */

/* Compiling reports a refusal as a message (NULL: accepted); one that could
 * not be made is "" with c marked out of memory. */
static const char *refuse(compiler *c, char *msg) {
  if (!msg)
    c->is_nomem = true;
  return msg ? msg : "";
}

/* The view slot of the buffer whose data argument k of call e names. */
static const char *find_data_arg(compiler *c, const loom_expr *e, int k,
                                 int *slot) {
  const loom_expr *a = e->u.call.args[k];
  *slot = a->kind == LOOM_EXPR_VAR ? scope_find_data(c, a->u.var) : -1;
  if (*slot >= 0)
    return NULL;
  return refuse(c, loom_arena_printf(c->arena, "T.%s: argument %d is not the "
                "data of a buffer in scope (X.data)",
                loom_op_table[e->u.call.op].name, k + 1));
}

/* Resolves argument k of e to a fragment buffer's view: of kind want, or of
 * any kind when want is LOOM_WMMA_NONE; its kind goes into *kind. */
static const char *find_fragment(compiler *c, const loom_expr *e, int k,
                                 loom_wmma_role want, int *slot, loom_wmma_role *kind) {
  const char *err = find_data_arg(c, e, k, slot);
  if (err)
    return err;
  const loom_buffer *b = c->views[*slot].buf; /* a view's slot is its depth */
  *kind = loom_ir_scope_wmma(b->scope);
  if (*kind != LOOM_WMMA_NONE && (want == LOOM_WMMA_NONE || *kind == want))
    return NULL;
  return refuse(c, loom_arena_printf(c->arena, "T.%s: buffer '%s' has scope "
                "\"%s\", expected %s", loom_op_table[e->u.call.op].name,
                b->name, b->scope, want == LOOM_WMMA_NONE ? "a wmma fragment scope "
                "(wmma.matrix_a, wmma.matrix_b or wmma.accumulator)"
                : want == LOOM_WMMA_A ? "\"wmma.matrix_a\""
                : want == LOOM_WMMA_B ? "\"wmma.matrix_b\"" : "\"wmma.accumulator\""));
}

/* The fragment's shape from the constant m, n, k (arguments 2 to 4). */
static const char *fragment_shape(compiler *c, const loom_expr *e,
                                  loom_wmma_role kind, wmma_call *w) {
  int64_t mnk[3];
  for (int k = 0; k < 3; k++) {
    const loom_expr *a = e->u.call.args[k + 1];
    mnk[k] = a->kind == LOOM_EXPR_INT ? a->u.int_value : 0;
    if (mnk[k] < 1 || mnk[k] > 1024)
      return refuse(c, loom_arena_printf(c->arena, "T.%s: m, n and k must be "
                    "integer constants in [1, 1024]",
                    loom_op_table[e->u.call.op].name));
  }
  int64_t rows, cols;
  loom_ir_wmma_tile(kind, mnk[0], mnk[1], mnk[2], &rows, &cols);
  w->rows = (int)rows;
  w->cols = (int)cols;
  return NULL;
}

/* Load and store: the pointer (argument 6) and the layout (argument 8). */
static const char *compile_pointer(compiler *c, const loom_expr *e,
                                   wmma_call *w, const loom_expr **offset) {
  const char *name = loom_op_table[e->u.call.op].name;
  const loom_expr *p = e->u.call.args[5], *order = e->u.call.args[7];
  if (p->kind != LOOM_EXPR_CALL || p->u.call.op != LOOM_OP_TVM_ACCESS_PTR ||
      p->u.call.n_args != 5)
    return refuse(c, loom_arena_printf(c->arena, "T.%s: argument 6 must be "
                  "T.tvm_access_ptr(type, X.data, offset, extent, rw)", name));
  const char *err = find_data_arg(c, p, 1, &w->mem);
  if (err)
    return err;
  *offset = p->u.call.args[2];
  const char *s = order->kind == LOOM_EXPR_STR ? order->u.str : NULL;
  if (s && (!strcmp(s, "row_major") || !strcmp(s, "col_major"))) {
    w->is_col_major = s[0] == 'c';
    return NULL;
  }
  if (!s)
    return refuse(c, loom_arena_printf(c->arena, "T.%s: the layout (argument "
                  "8) must be the string \"row_major\" or \"col_major\"", name));
  return refuse(c, loom_arena_printf(c->arena, "T.%s: layout \"%s\" is "
                "neither \"row_major\" nor \"col_major\"", name, s));
}

/* Resolves e's buffers and picks the expressions and the runner. */
static const char *compile_call_of(compiler *c, const loom_expr *e,
                                   wmma_call *w, const loom_expr **exprs,
                                   int *n_exprs, exec_fn *run) {
  loom_op op = e->u.call.op;
  loom_expr *const *args = e->u.call.args;
  loom_wmma_role kind;
  const char *err;
  if (op == LOOM_OP_TVM_MMA_SYNC) {
    static const loom_wmma_role want[4] = {LOOM_WMMA_ACC, LOOM_WMMA_A, LOOM_WMMA_B, LOOM_WMMA_ACC};
    for (int k = 0; k < 4; k++) {
      if ((err = find_fragment(c, e, 2 * k, want[k], &w->frag[k], &kind)))
        return err;
      exprs[k] = args[2 * k + 1];
    }
    *n_exprs = 4;
    *run = exec_mma;
    return NULL;
  }
  bool is_store = op == LOOM_OP_TVM_STORE_MATRIX_SYNC;
  if ((err = find_fragment(c, e, 0, is_store ? LOOM_WMMA_ACC : LOOM_WMMA_NONE,
                           &w->frag[0], &kind)) ||
      (err = fragment_shape(c, e, kind, w)))
    return err;
  exprs[0] = args[4];
  if (op == LOOM_OP_TVM_FILL_FRAGMENT) {
    exprs[1] = args[5];
    *n_exprs = 2;
    *run = exec_fill;
    return NULL;
  }
  if ((err = compile_pointer(c, e, w, &exprs[1])))
    return err;
  exprs[2] = args[6];
  *n_exprs = 3;
  *run = exec_copy;
  return NULL;
}

snode *compile_wmma(compiler *c, const loom_stmt *s, const loom_loc *loc,
                    int depth) {
  const loom_expr *e = s->u.evaluate.value;
  loom_op op = e->u.call.op;
  int arity = op == LOOM_OP_TVM_FILL_FRAGMENT ? 6 : 8;
  if (e->u.call.n_args != arity)
    return error_stmt(c, s, loc, loom_arena_printf(c->arena, "T.%s takes %d "
                      "arguments, not %d", loom_op_table[op].name, arity,
                      e->u.call.n_args));
  wmma_call *w = cnew(c, sizeof *w);
  if (!w)
    return NULL;
  const loom_expr *exprs[4];
  int n_exprs = 0;
  exec_fn run = NULL;
  const char *err = compile_call_of(c, e, w, exprs, &n_exprs, &run);
  if (c->is_nomem)
    return NULL;
  if (err)
    return error_stmt(c, s, loc, err);
  snode *n = new_stmt(c, s, loc, 0, n_exprs);
  if (!n)
    return NULL;
  for (int k = 0; k < n_exprs; k++)
    if (!(n->exprs[k] = compile_expr(c, exprs[k], depth + 1)))
      return NULL;
  n->wmma = w;
  n->run = run;
  return n;
}
