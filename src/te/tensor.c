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

loom_var *loom_te_reduce_axis(loom_te *te, loom_expr *extent,
                              const char *name) {
  if (!extent)
    return NULL;
  if (!loom_dtype_is_int(extent->dtype))
    return te_fail(te, "the extent of reduce axis '%s' is not an integer",
                   name);
  loom_var *v = loom_ir_var(te->arena, name, LOOM_INT32);
  if (!v)
    return te_fail(te, "out of memory");
  if (te->n_axes >= TE_MAX_AXES)
    return te_fail(te, "too many reduce axes (limit is %d)", TE_MAX_AXES);
  te->axes[te->n_axes].var = v;
  te->axes[te->n_axes].extent = extent;
  te->n_axes++;
  return v;
}

loom_expr *te_axis_extent(const loom_te *te, const loom_var *v) {
  for (int i = 0; i < te->n_axes; i++)
    if (te->axes[i].var == v)
      return te->axes[i].extent;
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
  loom_dtype t = r ? r->src->dtype : body->dtype;
  loom_te_tensor *x = new_tensor(te, name, shape, ndim, t);
  if (!x)
    return NULL;
  x->is_compute = true;
  x->axes = axes;
  x->body = r ? NULL : body;
  x->reduce = r;
  return x;
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
  x->src = src;
  x->axes = ax;
  x->n_axes = n_axes;
  x->where = where && !(where->kind == LOOM_EXPR_INT && where->u.int_value)
                 ? where
                 : NULL;
  return marker;
}

loom_expr *loom_te_sum(loom_te *te, loom_expr *src, loom_var *const *axes,
                       int n_axes, loom_expr *where) {
  return loom_te_reduce(te, LOOM_TE_SUM, src, axes, n_axes, where);
}
