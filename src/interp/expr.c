/* Expressions of the interpreter: compiled once into nodes, then evaluated.
 * A node whose value is one lane of a type known before the run gets a
 * scalar evaluator; every node has the general one, which computes lane by
 * lane on runtime-typed values (if_then_else evaluating only the taken
 * branch, lets, ramps, broadcasts, bounds-checked loads). */
#include "interp/interp_impl.h"

#include "loom/script.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------- */

/* Prints e into a heap string for a message; NULL when out of memory. */
static char *expr_text(const loom_expr *e) {
  loom_buf b;
  loom_buf_init(&b);
  loom_script_print_expr(e, &b);
  return loom_buf_take(&b);
}

loom_status expr_error(frame *fr, const char *what, const loom_expr *e) {
  char *s = expr_text(e);
  loom_status st = run_error(fr, "%s in '%s'", what, s ? s : "?");
  free(s);
  return st;
}

/* Lane k of x, broadcasting a scalar. */
static ilane lane_at(const ival *x, int k) { return x->l[x->t.lanes == 1 ? 0 : k]; }

static bool is_int_like(loom_dtype t) {
  return !loom_dtype_is_float(t) && t.code != LOOM_DT_HANDLE;
}

static int64_t lane_to_int(loom_dtype t, ilane x) {
  return t.code == LOOM_DT_UINT && t.bits == 64 && x.u > INT64_MAX
             ? INT64_MAX
             : lane_i64(x);
}

loom_status eval_int(const enode *n, frame *fr, int64_t *out) {
  if (n->scalar && is_int_like(n->t)) {
    ilane x;
    TRY(get_scalar(n, fr, &x));
    *out = lane_to_int(n->t, x);
    return LOOM_OK;
  }
  ival x;
  TRY(n->eval(n, fr, &x));
  if (x.t.lanes != 1 || !is_int_like(x.t)) {
    char *s = expr_text(n->e);
    loom_status st = run_error(fr, "expected a scalar integer, got '%s'",
                               s ? s : "?");
    free(s);
    return st;
  }
  *out = lane_to_int(x.t, x.l[0]);
  return LOOM_OK;
}

static loom_status check_lanes(frame *fr, const loom_expr *e, int a, int b,
                               int *lanes) {
  if (a != b && a != 1 && b != 1)
    return run_error(fr, "operands with %d and %d lanes in '%s'", a, b,
                     loom_expr_kind_name(e->kind));
  *lanes = a > b ? a : b;
  return LOOM_OK;
}

/* ---- evaluators ---------------------------------------------------------- */

static loom_status eval_via_scalar(const enode *n, frame *fr, ival *out) {
  out->t = n->t;
  return get_scalar(n, fr, &out->l[0]);
}

static loom_status eval_error(const enode *n, frame *fr, ival *out) {
  (void)out;
  return run_error(fr, "%s", n->error);
}

static loom_status scalar_const(const enode *n, frame *fr, ilane *out) {
  (void)fr;
  *out = n->k;
  return LOOM_OK;
}

static loom_status scalar_var(const enode *n, frame *fr, ilane *out) {
  *out = fr->sv[n->slot];
  return LOOM_OK;
}

static loom_status eval_var(const enode *n, frame *fr, ival *out) {
  const ival *v = &fr->vars[n->slot];
  out->t = v->t;
  memcpy(out->l, v->l, (size_t)v->t.lanes * sizeof v->l[0]);
  return LOOM_OK;
}

static loom_status scalar_not(const enode *n, frame *fr, ilane *out) {
  const enode *a = n->kids[0];
  ilane x;
  TRY(get_scalar(a, fr, &x));
  out->u = !lane_is_true(a->t, x);
  return LOOM_OK;
}

static loom_status eval_not(const enode *n, frame *fr, ival *out) {
  TRY(n->kids[0]->eval(n->kids[0], fr, out));
  for (int k = 0; k < out->t.lanes; k++)
    out->l[k].u = !lane_is_true(out->t, out->l[k]);
  out->t = loom_dtype_with_lanes(LOOM_BOOL, out->t.lanes);
  return LOOM_OK;
}

static loom_status scalar_cast(const enode *n, frame *fr, ilane *out) {
  const enode *a = n->kids[0];
  ilane x;
  TRY(get_scalar(a, fr, &x));
  *out = cast_lane(a->t, n->t, x);
  return LOOM_OK;
}

static loom_status eval_cast(const enode *n, frame *fr, ival *out) {
  TRY(n->kids[0]->eval(n->kids[0], fr, out));
  loom_dtype from = out->t, to = n->e->dtype;
  for (int k = 0; k < from.lanes; k++)
    out->l[k] = cast_lane(from, to, out->l[k]);
  out->t = loom_dtype_with_lanes(to, from.lanes);
  return LOOM_OK;
}

static loom_status scalar_binary(const enode *n, frame *fr, ilane *out) {
  ilane a, b;
  TRY(get_scalar(n->kids[0], fr, &a));
  TRY(get_scalar(n->kids[1], fr, &b));
  const char *what = NULL;
  if (!binary_lane(n->e->kind, n->op_t, a, b, out, &what))
    return expr_error(fr, what, n->e);
  return LOOM_OK;
}

static loom_status eval_binary(const enode *n, frame *fr, ival *out) {
  ival b;
  TRY(n->kids[0]->eval(n->kids[0], fr, out));
  TRY(n->kids[1]->eval(n->kids[1], fr, &b));
  int lanes = 1;
  TRY(check_lanes(fr, n->e, out->t.lanes, b.t.lanes, &lanes));
  loom_dtype t = out->t;
  t.lanes = 1;
  for (int k = lanes - 1; k >= 0; k--) {
    const char *what = NULL;
    if (!binary_lane(n->e->kind, t, lane_at(out, k), lane_at(&b, k), &out->l[k],
                     &what))
      return expr_error(fr, what, n->e);
  }
  out->t = loom_dtype_with_lanes(n->e->dtype, lanes);
  return LOOM_OK;
}

static loom_status scalar_select(const enode *n, frame *fr, ilane *out) {
  ilane c, f;
  TRY(get_scalar(n->kids[0], fr, &c));
  TRY(get_scalar(n->kids[1], fr, out));
  TRY(get_scalar(n->kids[2], fr, &f));
  if (!c.u)
    *out = f;
  return LOOM_OK;
}

static loom_status eval_select(const enode *n, frame *fr, ival *out) {
  ival c, f;
  TRY(n->kids[0]->eval(n->kids[0], fr, &c));
  TRY(n->kids[1]->eval(n->kids[1], fr, out));
  TRY(n->kids[2]->eval(n->kids[2], fr, &f));
  int lanes = 1, lanes2 = 1;
  TRY(check_lanes(fr, n->e, out->t.lanes, f.t.lanes, &lanes));
  TRY(check_lanes(fr, n->e, c.t.lanes, lanes, &lanes2));
  for (int k = lanes2 - 1; k >= 0; k--)
    out->l[k] = lane_at(&c, k).u ? lane_at(out, k) : lane_at(&f, k);
  out->t.lanes = (uint16_t)lanes2;
  return LOOM_OK;
}

/* The indices of scalar access n (kids from first on) into idx, then the
 * bounds check that fails: the slow path of a load or store that is out of
 * bounds, evaluating everything as the general path would. */
loom_status access_error(const enode *const *kids, int m, frame *fr,
                         const view *v, bool is_store) {
  int64_t idx[8];
  for (int k = 0; k < m; k++) {
    ilane x;
    TRY(get_scalar(kids[k], fr, &x));
    idx[k] = lane_i64(x);
  }
  int64_t flat;
  return flat_index(fr, v, idx, is_store, &flat);
}

/* A load whose indices are scalar integers (at most 8 of them). Each index
 * is checked as it is computed: an unsigned compare covers both bounds, as
 * extents are never negative. */
static loom_status scalar_load(const enode *n, frame *fr, ilane *out) {
  const view *v = &fr->views[n->slot];
  uint64_t uf = (uint64_t)v->offset;
  for (int k = 0; k < n->n_kids; k++) {
    ilane x;
    TRY(get_scalar(n->kids[k], fr, &x));
    if (x.u >= (uint64_t)v->shape[k])
      return access_error((const enode *const *)n->kids, n->n_kids, fr, v,
                          false);
    uf += x.u * (uint64_t)v->strides[k];
  }
  int64_t f = (int64_t)uf;
  if (f < 0 || f > v->max_flat)
    return access_error((const enode *const *)n->kids, n->n_kids, fr, v, false);
  *out = load_one(n->t, v->data, f);
  return LOOM_OK;
}

static loom_status scalar_load_vars(const enode *n, frame *fr, ilane *out) {
  return load_vars(n, fr, out);
}

int *variable_slots(compiler *c, enode *const *es, int m) {
  for (int k = 0; k < m; k++)
    if (es[k]->leaf != LEAF_VAR)
      return NULL;
  int *slots = cnew(c, (size_t)(m ? m : 1) * sizeof *slots);
  for (int k = 0; slots && k < m; k++)
    slots[k] = es[k]->slot;
  return slots;
}

/* Evaluates the indices of an access into idx (lane by lane) and the number
 * of lanes the access has. idx is lanes x n, lane-major. */
static loom_status eval_indices(const enode *n, frame *fr, int64_t **idx_out,
                                int *lanes_out) {
  int m = n->n_kids, lanes = 1;
  ival *vals = malloc((m > 0 ? (size_t)m : 1) * sizeof *vals);
  if (!vals)
    return LOOM_NOMEM;
  loom_status st = LOOM_OK;
  for (int k = 0; k < m && st == LOOM_OK; k++) {
    st = n->kids[k]->eval(n->kids[k], fr, &vals[k]);
    if (st == LOOM_OK && loom_dtype_is_float(vals[k].t))
      st = run_error(fr, "buffer index is not an integer");
    if (st == LOOM_OK && vals[k].t.lanes != 1) {
      if (lanes != 1 && lanes != vals[k].t.lanes)
        st = run_error(fr, "indices with different lane counts");
      lanes = vals[k].t.lanes;
    }
  }
  int64_t *idx = NULL;
  if (st == LOOM_OK) {
    idx = malloc((size_t)lanes * (m > 0 ? (size_t)m : 1) * sizeof *idx);
    if (!idx)
      st = LOOM_NOMEM;
  }
  for (int l = 0; st == LOOM_OK && l < lanes; l++)
    for (int k = 0; k < m; k++)
      idx[l * m + k] = lane_i64(lane_at(&vals[k], l));
  free(vals);
  if (st != LOOM_OK) {
    free(idx);
    return st;
  }
  *idx_out = idx;
  *lanes_out = lanes;
  return LOOM_OK;
}

static loom_status eval_load(const enode *n, frame *fr, ival *out) {
  const view *v = &fr->views[n->slot];
  int m = n->n_kids, lanes = 1;
  int64_t *idx;
  TRY(eval_indices(n, fr, &idx, &lanes));
  loom_dtype t = v->buf->dtype;
  t.lanes = 1;
  loom_status st = LOOM_OK;
  for (int l = 0; l < lanes && st == LOOM_OK; l++) {
    int64_t flat;
    st = flat_index(fr, v, idx + (size_t)l * m, false, &flat);
    if (st == LOOM_OK)
      out->l[l] = load_elem(t, v->data, flat);
  }
  free(idx);
  out->t = loom_dtype_with_lanes(t, lanes);
  return st;
}

/* TVM's q_multiply_shift(x, y, q, s) on int32 (src/target/intrin_rule.cc):
 * x * y in 64 bits with x pre-shifted left by s when s > 0, then rounded
 * (adding 1 << (q + s' - 1)) and shifted right by q + s' where s' = -s when
 * s < 0, truncated back to int32. */
static ilane q_multiply_shift(ilane x, ilane y, ilane q, ilane s) {
  int64_t sv = lane_i64(s);
  int64_t left = sv > 0 ? sv : 0, right = sv > 0 ? 0 : -sv;
  uint64_t xv = (uint64_t)lane_i64(x) << (left & 63);
  uint64_t prod = xv * (uint64_t)lane_i64(y);
  int64_t total = right + lane_i64(q);
  if (total > 0 && total < 64)
    prod += (uint64_t)1 << (total - 1);
  int64_t r = (int64_t)prod;
  int sh = (int)(total & 63);
  uint64_t shifted = r < 0 ? ~(~prod >> sh) : prod >> sh;
  return norm_int(LOOM_INT32, shifted);
}

/* One lane of intrinsic call e with arguments x of type t; false when the
 * interpreter does not know the intrinsic. */
static bool intrinsic_at(const loom_expr *e, loom_dtype t, const ilane *x,
                         ilane *out) {
  loom_op op = e->u.call.op;
  if (op == LOOM_OP_Q_MULTIPLY_SHIFT)
    *out = q_multiply_shift(x[0], x[1], x[2], x[3]);
  else if (op == LOOM_OP_REINTERPRET)
    *out = lane_from_bits(e->dtype, lane_to_bits(t, x[0]));
  else if (!intrinsic_lane(op, t, x, out))
    return false;
  return true;
}

static loom_status unsupported(frame *fr, const loom_expr *e) {
  return run_error(fr, "T.%s is not supported by the interpreter",
                   loom_op_table[e->u.call.op].name);
}

static loom_status scalar_intrinsic(const enode *n, frame *fr, ilane *out) {
  ilane x[4] = {{0}};
  for (int k = 0; k < n->n_kids; k++)
    TRY(get_scalar(n->kids[k], fr, &x[k]));
  if (!intrinsic_at(n->e, n->op_t, x, out))
    return unsupported(fr, n->e);
  return LOOM_OK;
}

static loom_status eval_intrinsic(const enode *n, frame *fr, ival *out) {
  int m = n->n_kids;
  ival *args = calloc(4, sizeof *args);
  if (!args)
    return LOOM_NOMEM;
  loom_status st = LOOM_OK;
  for (int k = 0; k < m && st == LOOM_OK; k++)
    st = n->kids[k]->eval(n->kids[k], fr, &args[k]);
  int lanes = 1;
  for (int k = 0; k < m && st == LOOM_OK; k++)
    st = check_lanes(fr, n->e, lanes, args[k].t.lanes, &lanes);
  loom_dtype t = args[0].t;
  t.lanes = 1;
  for (int l = 0; l < lanes && st == LOOM_OK; l++) {
    ilane x[4] = {{0}};
    for (int k = 0; k < m; k++)
      x[k] = lane_at(&args[k], l);
    if (!intrinsic_at(n->e, t, x, &out->l[l]))
      st = unsupported(fr, n->e);
  }
  free(args);
  out->t = loom_dtype_with_lanes(n->e->dtype, lanes);
  return st;
}

static loom_status scalar_if_then_else(const enode *n, frame *fr, ilane *out) {
  int64_t c;
  TRY(eval_int(n->kids[0], fr, &c));
  const enode *k = n->kids[c ? 1 : 2];
  return get_scalar(k, fr, out);
}

static loom_status eval_if_then_else(const enode *n, frame *fr, ival *out) {
  int64_t c;
  TRY(eval_int(n->kids[0], fr, &c));
  const enode *k = n->kids[c ? 1 : 2];
  return k->eval(k, fr, out);
}

static loom_status scalar_let(const enode *n, frame *fr, ilane *out) {
  TRY(get_scalar(n->kids[0], fr, &fr->sv[n->slot]));
  return get_scalar(n->kids[1], fr, out);
}

static loom_status eval_let(const enode *n, frame *fr, ival *out) {
  TRY(n->kids[0]->eval(n->kids[0], fr, out));
  if (n->kids[0]->scalar) {
    fr->sv[n->slot] = out->l[0];
  } else {
    ival *v = &fr->vars[n->slot];
    v->t = out->t;
    memcpy(v->l, out->l, (size_t)out->t.lanes * sizeof out->l[0]);
  }
  return n->kids[1]->eval(n->kids[1], fr, out);
}

static loom_status eval_ramp(const enode *n, frame *fr, ival *out) {
  int lanes = n->e->u.ramp.lanes;
  ival stride;
  TRY(n->kids[0]->eval(n->kids[0], fr, out));
  TRY(n->kids[1]->eval(n->kids[1], fr, &stride));
  if (out->t.lanes != 1 || stride.t.lanes != 1)
    return run_error(fr, "T.Ramp of vectors");
  loom_dtype t = out->t;
  for (int k = 1; k < lanes; k++) {
    const char *what;
    binary_lane(LOOM_EXPR_ADD, t, out->l[k - 1], stride.l[0], &out->l[k], &what);
  }
  out->t = loom_dtype_with_lanes(t, lanes);
  return LOOM_OK;
}

static loom_status eval_broadcast(const enode *n, frame *fr, ival *out) {
  int lanes = n->e->u.broadcast.lanes;
  TRY(n->kids[0]->eval(n->kids[0], fr, out));
  if (out->t.lanes != 1)
    return run_error(fr, "T.Broadcast of a vector");
  for (int k = 1; k < lanes; k++)
    out->l[k] = out->l[0];
  out->t = loom_dtype_with_lanes(out->t, lanes);
  return LOOM_OK;
}

/* ---- compiling ----------------------------------------------------------- */

static enode *new_node(compiler *c, const loom_expr *e, int n_kids) {
  enode *n = cnew(c, sizeof *n);
  if (!n)
    return NULL;
  n->e = e;
  n->slot = -1;
  n->n_kids = n_kids;
  if (n_kids > 0)
    n->kids = cnew(c, (size_t)n_kids * sizeof *n->kids);
  return c->is_nomem ? NULL : n;
}

/* A node that fails with msg when evaluated. */
static enode *error_node(compiler *c, const loom_expr *e, const char *msg) {
  if (!msg)
    c->is_nomem = true;
  enode *n = new_node(c, e, 0);
  if (!n)
    return NULL;
  n->eval = eval_error;
  n->error = msg;
  return n;
}

/* An error node whose message is fmt with one string. */
static enode *errorf_node(compiler *c, const loom_expr *e, const char *fmt,
                          const char *a) {
  return error_node(c, e, loom_arena_printf(c->arena, fmt, a));
}

/* Makes n scalar of type t with evaluator f. */
static enode *as_scalar(enode *n, scalar_fn f, loom_dtype t) {
  n->scalar = f;
  n->eval = eval_via_scalar;
  n->t = t;
  n->t.lanes = 1;
  return n;
}

static bool all_scalar(const enode *n) {
  for (int k = 0; k < n->n_kids; k++)
    if (!n->kids[k]->scalar)
      return false;
  return true;
}

static bool compile_kids(compiler *c, enode *n, loom_expr *const *es,
                         int depth) {
  for (int k = 0; k < n->n_kids; k++) {
    n->kids[k] = compile_expr(c, es[k], depth + 1);
    if (!n->kids[k])
      return false;
  }
  return true;
}

static enode *compile_const(compiler *c, const loom_expr *e) {
  enode *n = new_node(c, e, 0);
  if (!n)
    return NULL;
  loom_dtype t = e->dtype;
  t.lanes = 1;
  if (e->kind == LOOM_EXPR_FLOAT)
    n->k = norm_float(t, e->u.float_value);
  else if (loom_dtype_is_float(t))
    n->k = norm_float(t, (double)e->u.int_value);
  else
    n->k = norm_int(t, (uint64_t)e->u.int_value);
  n->leaf = LEAF_CONST;
  return as_scalar(n, scalar_const, t);
}

static enode *compile_var(compiler *c, const loom_expr *e) {
  const scope_var *v = scope_find_var(c, e->u.var);
  if (!v)
    return errorf_node(c, e, "variable '%s' has no value here", e->u.var->name);
  enode *n = new_node(c, e, 0);
  if (!n)
    return NULL;
  n->slot = v->slot;
  n->eval = eval_var;
  if (!v->is_scalar)
    return n;
  n->leaf = LEAF_VAR;
  return as_scalar(n, scalar_var, v->t);
}

static enode *compile_unary(compiler *c, const loom_expr *e, int depth) {
  enode *n = new_node(c, e, 1);
  if (!n || !compile_kids(c, n, &e->u.unary.a, depth))
    return NULL;
  bool is_not = e->kind == LOOM_EXPR_NOT;
  n->eval = is_not ? eval_not : eval_cast;
  if (!all_scalar(n))
    return n;
  return as_scalar(n, is_not ? scalar_not : scalar_cast,
                   is_not ? LOOM_BOOL : e->dtype);
}

static enode *compile_select(compiler *c, const loom_expr *e, int depth) {
  enode *n = new_node(c, e, 3);
  loom_expr *es[3] = {e->u.select.cond, e->u.select.t, e->u.select.f};
  if (!n || !compile_kids(c, n, es, depth))
    return NULL;
  n->eval = eval_select;
  if (!all_scalar(n))
    return n;
  return as_scalar(n, scalar_select, n->kids[1]->t);
}

static enode *compile_load(compiler *c, const loom_expr *e, int depth) {
  const loom_buffer *b = e->u.load.buffer;
  int slot = scope_find_view(c, b);
  if (slot < 0)
    return errorf_node(c, e, "buffer '%s' has no storage here", b->name);
  int m = e->u.load.n_indices;
  if (m != b->ndim)
    return error_node(c, e, loom_arena_printf(c->arena, "%d indices into %d-d "
                      "buffer '%s'", m, b->ndim, b->name));
  enode *n = new_node(c, e, m);
  if (!n || !compile_kids(c, n, e->u.load.indices, depth))
    return NULL;
  n->slot = slot;
  n->eval = eval_load;
  if (!all_scalar(n) || m > 8)
    return n;
  for (int k = 0; k < m; k++)
    if (loom_dtype_is_float(n->kids[k]->t))
      return n;
  n->index_slots = variable_slots(c, n->kids, m);
  if (!n->index_slots)
    return as_scalar(n, scalar_load, b->dtype);
  n->leaf = LEAF_LOAD;
  return as_scalar(n, scalar_load_vars, b->dtype);
}

static bool is_leaf(const enode *n) {
  return n->leaf == LEAF_VAR || n->leaf == LEAF_CONST;
}

static enode *compile_binary(compiler *c, const loom_expr *e, int depth) {
  enode *n = new_node(c, e, 2);
  loom_expr *es[2] = {e->u.bin.a, e->u.bin.b};
  if (!n || !compile_kids(c, n, es, depth))
    return NULL;
  n->eval = eval_binary;
  if (!all_scalar(n))
    return n;
  /* The lanes are computed in the left operand's type, as in eval_binary. */
  n->op_t = n->kids[0]->t;
  scalar_fn f = fast_binary(e->kind, n->op_t);
  as_scalar(n, f ? f : scalar_binary, e->dtype);
  if ((f = fast_add_mul(n)))
    n->scalar = f;
  if (e->kind == LOOM_EXPR_ADD && n->op_t.code == LOOM_DT_INT &&
      (n->op_t.bits == 32 || n->op_t.bits == 64) && is_leaf(n->kids[0]) &&
      is_leaf(n->kids[1]))
    n->leaf = LEAF_ADD;
  return n;
}

static enode *compile_call(compiler *c, const loom_expr *e, int depth) {
  loom_op op = e->u.call.op;
  int m = e->u.call.n_args;
  const loom_expr *name;
  switch (op) {
  case LOOM_OP_CALL_EXTERN:
  case LOOM_OP_CALL_PURE_EXTERN:
    name = m > 0 ? e->u.call.args[0] : NULL;
    return errorf_node(c, e, "cannot run extern call '%s'",
                       name && name->kind == LOOM_EXPR_STR ? name->u.str : "?");
  case LOOM_OP_TVM_FILL_FRAGMENT: case LOOM_OP_TVM_LOAD_MATRIX_SYNC:
  case LOOM_OP_TVM_STORE_MATRIX_SYNC: case LOOM_OP_TVM_MMA_SYNC:
    /* wmma.c runs them as statements (T.evaluate) of their own. */
    return errorf_node(c, e, "T.%s runs in the interpreter only as a "
                       "statement of its own", loom_op_table[op].name);
  case LOOM_OP_TYPE_ANNOTATION: case LOOM_OP_TVM_ACCESS_PTR:
  case LOOM_OP_ADDRESS_OF: case LOOM_OP_RET:
  case LOOM_OP_Q_MULTIPLY_SHIFT_PER_AXIS:
    return errorf_node(c, e, "T.%s is not supported by the interpreter",
                       loom_op_table[op].name);
  default: break;
  }
  bool is_ite = op == LOOM_OP_IF_THEN_ELSE;
  if (!is_ite && (m < 1 || m > 4))
    return errorf_node(c, e, "T.%s is not supported by the interpreter",
                       loom_op_table[op].name);
  /* if_then_else reads its first three arguments, as the evaluator always
   * did; the reader gives it exactly three. */
  enode *n = new_node(c, e, is_ite ? 3 : m);
  if (!n)
    return NULL;
  if (is_ite && m < 3)
    return errorf_node(c, e, "T.%s needs 3 arguments", loom_op_table[op].name);
  if (!compile_kids(c, n, e->u.call.args, depth))
    return NULL;
  if (is_ite) {
    n->eval = eval_if_then_else;
    const enode *a = n->kids[1], *b = n->kids[2];
    if (all_scalar(n) && is_int_like(n->kids[0]->t) && loom_dtype_eq(a->t, b->t))
      return as_scalar(n, scalar_if_then_else, a->t);
    return n;
  }
  n->eval = eval_intrinsic;
  if (!all_scalar(n))
    return n;
  n->op_t = n->kids[0]->t;
  return as_scalar(n, scalar_intrinsic, e->dtype);
}

static enode *compile_let(compiler *c, const loom_expr *e, int depth) {
  enode *n = new_node(c, e, 2);
  if (!n)
    return NULL;
  n->kids[0] = compile_expr(c, e->u.let.value, depth + 1);
  if (!n->kids[0])
    return NULL;
  int mark = c->n_vars, slot_mark = c->n_var_slots;
  const enode *v = n->kids[0];
  n->slot = scope_bind(c, e->u.let.var, -1, v->scalar != NULL, v->t);
  n->kids[1] = compile_expr(c, e->u.let.body, depth + 1);
  scope_pop(c, mark, slot_mark, c->n_views);
  if (!n->kids[1])
    return NULL;
  n->eval = eval_let;
  if (!all_scalar(n))
    return n;
  return as_scalar(n, scalar_let, n->kids[1]->t);
}

static enode *compile_vector(compiler *c, const loom_expr *e, int depth) {
  bool is_ramp = e->kind == LOOM_EXPR_RAMP;
  int lanes = is_ramp ? e->u.ramp.lanes : e->u.broadcast.lanes;
  if (lanes < 1 || lanes > LOOM_INTERP_MAX_LANES)
    return error_node(c, e, loom_arena_printf(c->arena, "%d lanes (limit is "
                      "%d)", lanes, LOOM_INTERP_MAX_LANES));
  enode *n = new_node(c, e, is_ramp ? 2 : 1);
  loom_expr *es[2] = {is_ramp ? e->u.ramp.base : e->u.broadcast.value,
                      e->u.ramp.stride};
  if (!n || !compile_kids(c, n, es, depth))
    return NULL;
  n->eval = is_ramp ? eval_ramp : eval_broadcast;
  return n;
}

enode *compile_expr(compiler *c, const loom_expr *e, int depth) {
  if (depth >= INTERP_MAX_DEPTH)
    return error_node(c, e, loom_arena_printf(c->arena, "program nested too "
                      "deeply (limit is %d)", INTERP_MAX_DEPTH));
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT: return compile_const(c, e);
  case LOOM_EXPR_STR:
    return errorf_node(c, e, "string \"%s\" used as a value", e->u.str);
  case LOOM_EXPR_VAR: return compile_var(c, e);
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return compile_unary(c, e, depth);
  case LOOM_EXPR_SELECT: return compile_select(c, e, depth);
  case LOOM_EXPR_LOAD: return compile_load(c, e, depth);
  case LOOM_EXPR_CALL: return compile_call(c, e, depth);
  case LOOM_EXPR_LET: return compile_let(c, e, depth);
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST: return compile_vector(c, e, depth);
  default: return compile_binary(c, e, depth);
  }
}
