/* The TE builder: symbolic sizes, placeholders, compute stages and the
 * reductions that may form a compute body. */
#include "te_impl.h"

#include <stdio.h>
#include <string.h>

loom_te *loom_te_new(loom_arena *a) {
  loom_te *te = loom_arena_alloc(a, sizeof *te);
  if (te)
    te->arena = a;
  return te;
}

loom_arena *loom_te_arena(const loom_te *te) { return te->arena; }
const char *loom_te_error(const loom_te *te) { return te->error; }

loom_var *loom_te_var(loom_te *te, const char *name) {
  return loom_ir_var(te->arena, name, LOOM_INT32);
}

static bool shape_ok(loom_te *te, const char *name, loom_expr *const *shape,
                     int ndim) {
  if (ndim < 0 || ndim > TE_MAX_RANK) {
    te_fail(te, "tensor '%s' has rank %d (limit is %d)", name, ndim,
            TE_MAX_RANK);
    return false;
  }
  for (int i = 0; i < ndim; i++) {
    if (!shape[i])
      return false;
    if (!loom_dtype_is_int(shape[i]->dtype)) {
      te_fail(te, "dimension %d of tensor '%s' is not an integer", i, name);
      return false;
    }
    int64_t v;
    if (loom_ir_is_const_int(shape[i], &v) && v < 0) {
      te_fail(te, "dimension %d of tensor '%s' is negative (%lld)", i, name,
              (long long)v);
      return false;
    }
  }
  return true;
}

static loom_te_tensor *new_tensor(loom_te *te, const char *name,
                                  loom_expr *const *shape, int ndim,
                                  loom_dtype t) {
  if (!name || !*name)
    return te_fail(te, "a tensor needs a name");
  if (!shape_ok(te, name, shape, ndim))
    return NULL;
  if (te->n_tensors >= TE_MAX_TENSORS)
    return te_fail(te, "too many tensors (limit is %d)", TE_MAX_TENSORS);
  loom_te_tensor *x = loom_arena_alloc(te->arena, sizeof *x);
  if (!x || !(x->buffer = loom_ir_buffer(te->arena, name, t,
                                         (loom_expr **)shape, ndim)))
    return te_fail(te, "out of memory");
  te->tensors[te->n_tensors++] = x;
  return x;
}

loom_te_tensor *loom_te_placeholder(loom_te *te, const char *name,
                                    loom_expr *const *shape, int ndim,
                                    loom_dtype t) {
  return new_tensor(te, name, shape, ndim, t);
}

loom_te_tensor *loom_te_placeholder_c(loom_te *te, const char *name,
                                      const int64_t *shape, int ndim,
                                      loom_dtype t) {
  loom_expr *s[TE_MAX_RANK];
  if (ndim < 0 || ndim > TE_MAX_RANK)
    return te_fail(te, "tensor '%s' has rank %d (limit is %d)", name, ndim,
                   TE_MAX_RANK);
  for (int i = 0; i < ndim; i++)
    s[i] = loom_te_int(te, shape[i]);
  return new_tensor(te, name, s, ndim, t);
}

loom_var *loom_te_reduce_axis_range(loom_te *te, loom_expr *min,
                                    loom_expr *extent, const char *name) {
  if (!min || !extent)
    return NULL;
  if (!loom_dtype_is_int(extent->dtype) || !loom_dtype_is_int(min->dtype))
    return te_fail(te, "the range of reduce axis '%s' is not an integer one",
                   name);
  loom_var *v = loom_ir_var(te->arena, name, LOOM_INT32);
  if (!v)
    return te_fail(te, "out of memory");
  if (te->n_axes >= TE_MAX_AXES)
    return te_fail(te, "too many reduce axes (limit is %d)", TE_MAX_AXES);
  te->axes[te->n_axes].var = v;
  te->axes[te->n_axes].min = min;
  te->axes[te->n_axes].extent = extent;
  te->n_axes++;
  return v;
}

loom_var *loom_te_reduce_axis(loom_te *te, loom_expr *extent,
                              const char *name) {
  return loom_te_reduce_axis_range(te, loom_te_int(te, 0), extent, name);
}

loom_expr *te_axis_extent(const loom_te *te, const loom_var *v) {
  for (int i = 0; i < te->n_axes; i++)
    if (te->axes[i].var == v)
      return te->axes[i].extent;
  return NULL;
}

loom_expr *te_axis_min(const loom_te *te, const loom_var *v) {
  for (int i = 0; i < te->n_axes; i++)
    if (te->axes[i].var == v)
      return te->axes[i].min;
  return NULL;
}

loom_te_tensor *loom_te_compute(loom_te *te, const char *name,
                                loom_expr *const *shape, int ndim,
                                const char *const *axis_names,
                                loom_te_fcompute f, void *user) {
  if (te->error)
    return NULL;
  if (!name || !shape_ok(te, name, shape, ndim))
    return NULL;
  loom_var **axes = loom_arena_alloc(te->arena, sizeof *axes * (ndim + 1));
  loom_expr *idx[TE_MAX_RANK];
  if (!axes)
    return te_fail(te, "out of memory");
  for (int i = 0; i < ndim; i++) {
    char buf[16];
    snprintf(buf, sizeof buf, "i%d", i);
    axes[i] = loom_ir_var(te->arena, axis_names ? axis_names[i] : buf,
                          LOOM_INT32);
    if (!axes[i] || !(idx[i] = loom_ir_ref(te->arena, axes[i])))
      return te_fail(te, "out of memory");
  }
  loom_expr *body = f(te, user, idx);
  if (!body)
    return te->error ? NULL : te_fail(te, "stage '%s' has no body", name);
  const te_reduce *r = te_find_reduce(te, body);
  int n_out = r && r->comm ? r->comm->n : 1;
  loom_te_tensor **outs =
      loom_arena_alloc(te->arena, sizeof *outs * (size_t)n_out);
  if (!outs)
    return te_fail(te, "out of memory");
  for (int i = 0; i < n_out; i++) {
    const char *oname =
        n_out > 1 ? loom_arena_printf(te->arena, "%s_v%d", name, i) : name;
    loom_dtype t = r ? r->srcs[i]->dtype : body->dtype;
    loom_te_tensor *x = oname ? new_tensor(te, oname, shape, ndim, t) : NULL;
    if (!x)
      return te->error ? NULL : te_fail(te, "out of memory");
    x->is_compute = true;
    x->axes = axes;
    x->body = r ? NULL : body;
    x->reduce = r;
    x->outputs = outs;
    x->n_outputs = n_out;
    x->op_name = outs[0] ? outs[0]->op_name : loom_arena_strdup(te->arena, name);
    outs[i] = x;
  }
  return outs[0];
}

int loom_te_n_outputs(const loom_te_tensor *t) {
  return !t ? 0 : t->n_outputs ? t->n_outputs : 1;
}

loom_te_tensor *loom_te_output(const loom_te_tensor *t, int i) {
  if (!t || i < 0 || i >= loom_te_n_outputs(t))
    return NULL;
  return t->n_outputs ? t->outputs[i] : (loom_te_tensor *)t;
}

static loom_attr *push_attr(loom_te *te, loom_te_tensor *t, const char *key) {
  loom_attr *attrs =
      loom_arena_alloc(te->arena, sizeof *attrs * (size_t)(t->n_attrs + 1));
  if (!attrs)
    return te_fail(te, "out of memory");
  if (t->n_attrs)
    memcpy(attrs, t->attrs, sizeof *attrs * (size_t)t->n_attrs);
  t->attrs = attrs;
  loom_attr *a = &attrs[t->n_attrs++];
  a->key = loom_arena_strdup(te->arena, key);
  return a;
}

void loom_te_set_attr_int(loom_te *te, loom_te_tensor *t, const char *key,
                          int64_t v) {
  if (!t)
    return;
  loom_attr *a = push_attr(te, t, key);
  if (a)
    a->value = loom_ir_value_expr(te->arena, loom_te_int(te, v));
}

void loom_te_set_attr_str(loom_te *te, loom_te_tensor *t, const char *key,
                          const char *v) {
  if (!t)
    return;
  loom_attr *a = push_attr(te, t, key);
  if (a)
    a->value = loom_ir_value_str(te->arena, v);
}

void loom_te_set_layout_free(loom_te *te, loom_te_tensor *t,
                             loom_te_tensor *p) {
  if (!t || !p)
    return;
  if (p->is_compute) {
    te_fail(te, "'%s' is not a placeholder; only placeholders are free to "
            "re-layout", loom_te_name(p));
    return;
  }
  loom_te_tensor **l = loom_arena_alloc(
      te->arena, sizeof *l * (size_t)(t->n_layout_free + 1));
  if (!l) {
    te_fail(te, "out of memory");
    return;
  }
  if (t->n_layout_free)
    memcpy(l, t->layout_free, sizeof *l * (size_t)t->n_layout_free);
  l[t->n_layout_free++] = p;
  t->layout_free = l;
}

/* The accessors take NULL (a tensor whose construction failed) so that a
 * builder may run on and report the first error once at its end. */
int loom_te_ndim(const loom_te_tensor *t) { return t ? t->buffer->ndim : 0; }
loom_expr *loom_te_dim(const loom_te_tensor *t, int i) {
  return t && i >= 0 && i < t->buffer->ndim ? t->buffer->shape[i] : NULL;
}
loom_dtype loom_te_dtype(const loom_te_tensor *t) {
  return t ? t->buffer->dtype : LOOM_FLOAT32;
}
const char *loom_te_name(const loom_te_tensor *t) {
  return t ? t->buffer->name : "";
}

loom_expr *loom_te_at(loom_te *te, loom_te_tensor *t, loom_expr *const *idx,
                      int n) {
  if (!t)
    return NULL;
  if (n != t->buffer->ndim)
    return te_fail(te, "tensor '%s' has %d dimension%s but is indexed with %d",
                   t->buffer->name, t->buffer->ndim,
                   t->buffer->ndim == 1 ? "" : "s", n);
  for (int i = 0; i < n; i++) {
    if (!idx[i])
      return NULL;
    if (!loom_dtype_is_int(idx[i]->dtype))
      return te_fail(te, "index %d of tensor '%s' is not an integer", i,
                     t->buffer->name);
  }
  return loom_ir_load(te->arena, t->buffer, (loom_expr **)idx, n);
}

loom_te_tensor *te_find_tensor(const loom_te *te, const loom_buffer *b) {
  for (int i = 0; i < te->n_tensors; i++)
    if (te->tensors[i]->buffer == b)
      return te->tensors[i];
  return NULL;
}

/* ---- reductions ---------------------------------------------------------- */

const te_reduce *te_find_reduce(const loom_te *te, const loom_expr *e) {
  for (int i = 0; i < te->n_reduces; i++)
    if (te->reduces[i].marker == e)
      return &te->reduces[i];
  return NULL;
}

loom_expr *loom_te_reduce(loom_te *te, loom_te_reducer r, loom_expr *src,
                          loom_var *const *axes, int n_axes,
                          loom_expr *where) {
  if (!src)
    return NULL;
  if (n_axes < 1)
    return te_fail(te, "a reduction needs at least one reduce axis");
  for (int i = 0; i < n_axes; i++)
    if (!axes[i] || !te_axis_extent(te, axes[i]))
      return te_fail(te, "argument %d of a reduction is not a reduce axis", i);
  if (where && where->dtype.code != LOOM_DT_BOOL)
    return te_fail(te, "the where= condition of a reduction is not a bool");
  if (te->n_reduces >= TE_MAX_REDUCES)
    return te_fail(te, "too many reductions (limit is %d)", TE_MAX_REDUCES);
  /* The marker is a fresh node that stands for the reduction until
   * loom_te_compute takes it as a body. */
  loom_var *mv = loom_ir_var(te->arena, "reduce", src->dtype);
  loom_expr *marker = mv ? loom_ir_ref(te->arena, mv) : NULL;
  loom_var **ax = loom_arena_dup(te->arena, axes, sizeof *axes * (size_t)n_axes);
  if (!marker || !ax)
    return te_fail(te, "out of memory");
  te_reduce *x = &te->reduces[te->n_reduces++];
  x->marker = marker;
  x->reducer = r;
  x->comm = NULL;
  x->srcs = loom_arena_dup(te->arena, &src, sizeof src);
  x->src = src;
  x->axes = ax;
  x->n_axes = n_axes;
  x->where = where && !(where->kind == LOOM_EXPR_INT && where->u.int_value)
                 ? where
                 : NULL;
  return x->srcs ? marker : te_fail(te, "out of memory");
}

static void *dup_ptrs(loom_te *te, const void *p, int n) {
  return loom_arena_dup(te->arena, p, sizeof(void *) * (size_t)n);
}

/* Checks the combiner's shape: every lhs / rhs variable has its source's
 * dtype, and every result and identity that dtype too, since the result
 * is stored back into the output of that dtype. */
static bool comm_ok(loom_te *te, const loom_te_comm_reducer *r,
                    loom_expr *const *src) {
  if (r->n < 1 || r->n > LOOM_TE_MAX_VALUES) {
    te_fail(te, "a comm_reducer combines 1 to %d values, not %d",
            LOOM_TE_MAX_VALUES, r->n);
    return false;
  }
  for (int i = 0; i < r->n; i++) {
    if (!src[i] || !r->lhs[i] || !r->rhs[i] || !r->result[i] ||
        !r->identity[i])
      return false;
    loom_dtype t = src[i]->dtype;
    char a[LOOM_DTYPE_STRLEN], b[LOOM_DTYPE_STRLEN];
    const loom_dtype got[4] = {r->lhs[i]->dtype, r->rhs[i]->dtype,
                               r->result[i]->dtype, r->identity[i]->dtype};
    static const char *const what[4] = {"left operand", "right operand",
                                        "result", "identity"};
    for (int k = 0; k < 4; k++)
      if (!loom_dtype_eq(got[k], t)) {
        te_fail(te, "the %s of value %d of a comm_reducer is %s but the "
                "value reduced is %s", what[k], i, loom_dtype_str(got[k], a),
                loom_dtype_str(t, b));
        return false;
      }
  }
  return true;
}

loom_expr *loom_te_comm_reduce(loom_te *te, const loom_te_comm_reducer *r,
                               loom_expr *const *src, loom_var *const *axes,
                               int n_axes, loom_expr *where) {
  if (te->error || !r || !comm_ok(te, r, src))
    return NULL;
  loom_expr *marker = loom_te_reduce(te, LOOM_TE_SUM, src[0], axes, n_axes,
                                     where);
  if (!marker)
    return NULL;
  te_reduce *x = &te->reduces[te->n_reduces - 1];
  loom_te_comm_reducer *c = loom_arena_alloc(te->arena, sizeof *c);
  if (!c)
    return te_fail(te, "out of memory");
  c->n = r->n;
  c->lhs = dup_ptrs(te, r->lhs, r->n);
  c->rhs = dup_ptrs(te, r->rhs, r->n);
  c->result = dup_ptrs(te, r->result, r->n);
  c->identity = dup_ptrs(te, r->identity, r->n);
  x->srcs = dup_ptrs(te, src, r->n);
  if (!c->lhs || !c->rhs || !c->result || !c->identity || !x->srcs)
    return te_fail(te, "out of memory");
  x->comm = c;
  return marker;
}

loom_expr *loom_te_sum(loom_te *te, loom_expr *src, loom_var *const *axes,
                       int n_axes, loom_expr *where) {
  return loom_te_reduce(te, LOOM_TE_SUM, src, axes, n_axes, where);
}
