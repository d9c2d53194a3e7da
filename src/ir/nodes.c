/* Node constructors and the kind tables. Constructors only allocate and fill;
 * they never check types (the verifier does) and pass NULL through, so a
 * failed allocation surfaces once, at the builder's boundary. */
#include "loom/ir.h"

#include <string.h>

const loom_op_info loom_op_table[LOOM_OP_COUNT_] = {
#define X(name, script, arity, rule) {script, arity, LOOM_RESULT_##rule},
#include "loom/ir_intrinsics.def"
#undef X
};

static const char *const expr_names[] = {
#define X(name, spelling, cls) #name,
#include "loom/ir_exprs.def"
#undef X
};

static const char *const stmt_names[] = {
#define X(name, what) what,
#include "loom/ir_stmts.def"
#undef X
};

const char *loom_expr_kind_name(loom_expr_kind k) { return expr_names[k]; }
const char *loom_stmt_kind_name(loom_stmt_kind k) { return stmt_names[k]; }

int loom_op_lookup(const char *name, size_t n) {
  for (int i = 0; i < LOOM_OP_COUNT_; i++)
    if (strlen(loom_op_table[i].name) == n &&
        !memcmp(loom_op_table[i].name, name, n))
      return i;
  return -1;
}

bool loom_op_is_wmma(loom_op op) {
  return op == LOOM_OP_TVM_FILL_FRAGMENT || op == LOOM_OP_TVM_LOAD_MATRIX_SYNC ||
         op == LOOM_OP_TVM_STORE_MATRIX_SYNC || op == LOOM_OP_TVM_MMA_SYNC;
}

#define NEW(a, T) ((T *)loom_arena_alloc((a), sizeof(T)))

loom_var *loom_ir_var(loom_arena *a, const char *name, loom_dtype t) {
  loom_var *v = NEW(a, loom_var);
  if (!v)
    return NULL;
  v->name = loom_arena_strdup(a, name ? name : "v");
  v->dtype = t;
  v->elem = LOOM_VOID;
  return v->name ? v : NULL;
}

static loom_expr *expr(loom_arena *a, loom_expr_kind k, loom_dtype t) {
  loom_expr *e = NEW(a, loom_expr);
  if (e) {
    e->kind = k;
    e->dtype = t;
  }
  return e;
}

loom_expr *loom_ir_int(loom_arena *a, loom_dtype t, int64_t v) {
  loom_expr *e = expr(a, LOOM_EXPR_INT, t);
  if (e)
    e->u.int_value = v;
  return e;
}

loom_expr *loom_ir_float(loom_arena *a, loom_dtype t, double v) {
  loom_expr *e = expr(a, LOOM_EXPR_FLOAT, t);
  if (e)
    e->u.float_value = v;
  return e;
}

loom_expr *loom_ir_str(loom_arena *a, const char *s) {
  loom_expr *e = s ? expr(a, LOOM_EXPR_STR, LOOM_HANDLE) : NULL;
  if (e && !(e->u.str = loom_arena_strdup(a, s)))
    return NULL;
  return e;
}

loom_expr *loom_ir_ref(loom_arena *a, loom_var *v) {
  loom_expr *e = v ? expr(a, LOOM_EXPR_VAR, v->dtype) : NULL;
  if (e)
    e->u.var = v;
  return e;
}

static bool is_bool_result(loom_expr_kind k) {
  return k == LOOM_EXPR_EQ || k == LOOM_EXPR_NE || k == LOOM_EXPR_LT ||
         k == LOOM_EXPR_LE || k == LOOM_EXPR_GT || k == LOOM_EXPR_GE ||
         k == LOOM_EXPR_AND || k == LOOM_EXPR_OR;
}

loom_expr *loom_ir_binary(loom_arena *a, loom_expr_kind k, loom_expr *x,
                          loom_expr *y) {
  if (!x || !y)
    return NULL;
  loom_dtype t = x->dtype;
  if (is_bool_result(k))
    t = loom_dtype_with_lanes(LOOM_BOOL, x->dtype.lanes);
  loom_expr *e = expr(a, k, t);
  if (e) {
    e->u.bin.a = x;
    e->u.bin.b = y;
  }
  return e;
}

loom_expr *loom_ir_not(loom_arena *a, loom_expr *x) {
  loom_expr *e = x ? expr(a, LOOM_EXPR_NOT, x->dtype) : NULL;
  if (e)
    e->u.unary.a = x;
  return e;
}

loom_expr *loom_ir_cast(loom_arena *a, loom_dtype t, loom_expr *x) {
  loom_expr *e = x ? expr(a, LOOM_EXPR_CAST, t) : NULL;
  if (e)
    e->u.unary.a = x;
  return e;
}

loom_expr *loom_ir_select(loom_arena *a, loom_expr *c, loom_expr *t,
                          loom_expr *f) {
  loom_expr *e = c && t && f ? expr(a, LOOM_EXPR_SELECT, t->dtype) : NULL;
  if (e) {
    e->u.select.cond = c;
    e->u.select.t = t;
    e->u.select.f = f;
  }
  return e;
}

/* Copies an array of n expression pointers, failing if any is NULL. */
static loom_expr **dup_exprs(loom_arena *a, loom_expr **xs, int n) {
  for (int i = 0; i < n; i++)
    if (!xs[i])
      return NULL;
  return loom_arena_dup(a, xs, sizeof(loom_expr *) * (size_t)n);
}

loom_expr *loom_ir_load(loom_arena *a, loom_buffer *b, loom_expr **indices,
                        int n) {
  loom_expr **idx = b ? dup_exprs(a, indices, n) : NULL;
  loom_expr *e = idx ? expr(a, LOOM_EXPR_LOAD, b->dtype) : NULL;
  if (e) {
    /* A ramp index loads a vector of the buffer's element type. */
    if (n > 0 && indices[n - 1]->dtype.lanes > 1)
      e->dtype = loom_dtype_with_lanes(b->dtype, indices[n - 1]->dtype.lanes);
    e->u.load.buffer = b;
    e->u.load.indices = idx;
    e->u.load.n_indices = n;
  }
  return e;
}

loom_expr *loom_ir_call(loom_arena *a, loom_dtype t, loom_op op,
                        loom_expr **args, int n) {
  loom_expr **xs = dup_exprs(a, args, n);
  loom_expr *e = xs ? expr(a, LOOM_EXPR_CALL, t) : NULL;
  if (e) {
    e->u.call.op = op;
    e->u.call.args = xs;
    e->u.call.n_args = n;
  }
  return e;
}

loom_expr *loom_ir_let(loom_arena *a, loom_var *v, loom_expr *value,
                       loom_expr *body) {
  loom_expr *e = v && value && body ? expr(a, LOOM_EXPR_LET, body->dtype) : NULL;
  if (e) {
    e->u.let.var = v;
    e->u.let.value = value;
    e->u.let.body = body;
  }
  return e;
}

loom_expr *loom_ir_ramp(loom_arena *a, loom_expr *base, loom_expr *stride,
                        int lanes) {
  loom_expr *e = base && stride ? expr(a, LOOM_EXPR_RAMP,
                                       loom_dtype_with_lanes(base->dtype, lanes))
                                : NULL;
  if (e) {
    e->u.ramp.base = base;
    e->u.ramp.stride = stride;
    e->u.ramp.lanes = lanes;
  }
  return e;
}

loom_expr *loom_ir_broadcast(loom_arena *a, loom_expr *value, int lanes) {
  loom_expr *e = value ? expr(a, LOOM_EXPR_BROADCAST,
                              loom_dtype_with_lanes(value->dtype, lanes))
                       : NULL;
  if (e) {
    e->u.broadcast.value = value;
    e->u.broadcast.lanes = lanes;
  }
  return e;
}

loom_stmt *loom_ir_stmt(loom_arena *a, loom_stmt_kind k, loom_loc loc) {
  loom_stmt *s = NEW(a, loom_stmt);
  if (s) {
    s->kind = k;
    s->loc = loc;
  }
  return s;
}

loom_block *loom_ir_block(loom_arena *a, const char *name) {
  loom_block *b = NEW(a, loom_block);
  if (b && !(b->name = loom_arena_strdup(a, name)))
    return NULL;
  return b;
}

loom_buffer *loom_ir_buffer(loom_arena *a, const char *name, loom_dtype t,
                            loom_expr **shape, int ndim) {
  loom_buffer *b = NEW(a, loom_buffer);
  if (!b)
    return NULL;
  b->name = loom_arena_strdup(a, name);
  b->data = loom_ir_var(a, name, LOOM_HANDLE);
  b->dtype = t;
  b->shape = ndim ? dup_exprs(a, shape, ndim) : NULL;
  b->ndim = ndim;
  b->scope = "global";
  if (!b->name || !b->data || (ndim && !b->shape))
    return NULL;
  b->data->elem = t;
  return b;
}

loom_func *loom_ir_func(loom_arena *a, const char *name) {
  loom_func *f = NEW(a, loom_func);
  if (f && !(f->name = loom_arena_strdup(a, name)))
    return NULL;
  if (f)
    f->ret_type = LOOM_VOID;
  return f;
}

loom_module *loom_ir_module(loom_arena *a) { return NEW(a, loom_module); }

loom_value *loom_ir_value_expr(loom_arena *a, loom_expr *e) {
  loom_value *v = e ? NEW(a, loom_value) : NULL;
  if (v) {
    v->kind = LOOM_VALUE_EXPR;
    v->expr = e;
  }
  return v;
}

loom_value *loom_ir_value_str(loom_arena *a, const char *s) {
  loom_value *v = NEW(a, loom_value);
  if (v) {
    v->kind = LOOM_VALUE_STR;
    if (!(v->str = loom_arena_strdup(a, s)))
      return NULL;
  }
  return v;
}

const loom_value *loom_ir_attr_get(const loom_attr *attrs, int n,
                                   const char *key) {
  for (int i = 0; i < n; i++)
    if (!strcmp(attrs[i].key, key))
      return attrs[i].value;
  return NULL;
}

bool loom_ir_func_is_layout_free(const loom_func *f, int i) {
  const loom_value *l = loom_ir_attr_get(f->attrs, f->n_attrs, "layout_free_buffers");
  for (int k = 0; l && l->kind == LOOM_VALUE_LIST && k < l->n_items; k++) {
    int64_t at;
    if (l->items[k]->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(l->items[k]->expr, &at) &&
        at == i)
      return true;
  }
  return false;
}

bool loom_ir_is_const_int(const loom_expr *e, int64_t *v) {
  if (!e || e->kind != LOOM_EXPR_INT)
    return false;
  if (v)
    *v = e->u.int_value;
  return true;
}

const loom_func *loom_ir_module_find(const loom_module *m, const char *name) {
  for (int i = 0; i < m->n_funcs; i++)
    if (!strcmp(m->funcs[i]->name, name))
      return m->funcs[i];
  return NULL;
}

loom_func *loom_ir_func_anonymous(loom_arena *a, const loom_func *f) {
  loom_func *g = loom_arena_dup(a, f, sizeof *f);
  loom_attr *attrs = loom_arena_alloc(a, (size_t)(f->n_attrs + 1) * sizeof *attrs);
  if (!g || !attrs)
    return NULL;
  g->name = "main";
  g->attrs = attrs;
  g->n_attrs = 0;
  for (int i = 0; i < f->n_attrs; i++)
    if (strcmp(f->attrs[i].key, "global_symbol"))
      attrs[g->n_attrs++] = f->attrs[i];
  return g;
}
