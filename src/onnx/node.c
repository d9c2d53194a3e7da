/* What every operator's builder needs from its node: attributes, inputs as
 * arguments or as data read at import, library operators applied to them,
 * numpy broadcasting, and messages that name the node. */
#include "onnx_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

loom_status node_error(onnx_node *n, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return loom_diag_error(n->d, (loom_loc){0}, "%s: %s", n->where, msg);
}

const Onnx__AttributeProto *node_attr(const onnx_node *n, const char *name) {
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (!strcmp(n->proto->attribute[i]->name, name))
      return n->proto->attribute[i];
  return NULL;
}

int64_t node_attr_int(const onnx_node *n, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *a = node_attr(n, name);
  return a && a->has_i ? a->i : dflt;
}

double node_attr_float(const onnx_node *n, const char *name, double dflt) {
  const Onnx__AttributeProto *a = node_attr(n, name);
  return a && a->has_f ? a->f : dflt;
}

const char *node_attr_str(const onnx_node *n, const char *name,
                          const char *dflt) {
  const Onnx__AttributeProto *a = node_attr(n, name);
  if (!a || !a->has_s)
    return dflt;
  char *s = loom_arena_strndup(n->arena, (const char *)a->s.data, a->s.len);
  return s ? s : dflt;
}

int node_attr_ints(onnx_node *n, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = node_attr(n, name);
  if (!a)
    return -1;
  if (a->n_ints > (size_t)max) {
    node_error(n, "%s has %zu values; at most %d are supported", name,
               a->n_ints, max);
    return -2;
  }
  for (size_t i = 0; i < a->n_ints; i++)
    out[i] = a->ints[i];
  return (int)a->n_ints;
}

bool node_has(const onnx_node *n, int i) {
  return i < n->n_in && n->in[i] != NULL;
}

loom_te_tensor *node_arg(onnx_node *n, int i) {
  if (!node_has(n, i))
    return NULL;
  if (!n->args[i]) {
    char name[8];
    snprintf(name, sizeof name, "%c", i < 26 ? 'A' + i : 'Z');
    const loom_tensor_info *t = n->in[i];
    n->args[i] = loom_te_placeholder_c(n->te, name, t->shape, t->ndim,
                                       t->dtype);
  }
  return n->args[i];
}

loom_status node_const_ints(onnx_node *n, int i, const char *what,
                            int64_t *out, int max, int *count) {
  const loom_onnx_tensor *t = i < n->n_in ? n->data[i] : NULL;
  if (!t || loom_dtype_is_float(t->info.dtype) || t->info.ndim > 1)
    return node_error(n, "input %d (%s) must be a constant list of integers "
                      "(an initializer or a Constant node)", i, what);
  int64_t m = onnx_numel(&t->info);
  if (m > max)
    return node_error(n, "input %d (%s) has %lld values; at most %d are "
                      "supported", i, what, (long long)m, max);
  for (int64_t k = 0; k < m; k++)
    out[k] = onnx_tensor_get_int(t, k);
  *count = (int)m;
  return LOOM_OK;
}

loom_status node_apply(onnx_node *n, const char *op,
                       loom_te_tensor *const *inputs, int n_inputs,
                       loom_te_tensor **out, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  const char *settings[LOOM_TE_MAX_KEYS];
  int k = 0;
  for (char *s = text; *s;) {
    if (k == LOOM_TE_MAX_KEYS)
      return node_error(n, "too many settings for %s (internal)", op);
    settings[k++] = s;
    s += strcspn(s, " ");
    if (*s)
      *s++ = 0;
  }
  const loom_te_op *o = loom_te_op_find(op);
  if (!o)
    return node_error(n, "library operator %s is missing (internal)", op);
  loom_diag d;
  loom_diag_init(&d);
  loom_status s = loom_te_op_apply(n->te, o, settings, k, inputs, n_inputs,
                                   out, &d);
  if (s == LOOM_ERROR)
    node_error(n, "%s", d.msg ? d.msg : "the library operator failed");
  loom_diag_free(&d);
  return s;
}

const char *node_shape_str(onnx_node *n, const int64_t *shape, int ndim) {
  loom_buf b;
  loom_buf_init(&b);
  for (int i = 0; i < ndim; i++)
    loom_buf_printf(&b, i ? ",%lld" : "%lld", (long long)shape[i]);
  const char *s = loom_arena_strdup(n->arena, b.data ? b.data : "");
  loom_buf_free(&b);
  return s ? s : "";
}

const char *node_dtype_str(onnx_node *n, loom_dtype t) {
  char buf[LOOM_DTYPE_STRLEN];
  const char *s = loom_arena_strdup(n->arena, loom_dtype_str(t, buf));
  return s ? s : "";
}

loom_dtype node_acc_dtype(const onnx_node *n, loom_dtype t) {
  bool is_half = (t.code == LOOM_DT_FLOAT || t.code == LOOM_DT_BFLOAT) && t.bits == 16;
  return n->is_f32_accumulated && is_half ? LOOM_DTYPE(LOOM_DT_FLOAT, 32, t.lanes) : t;
}

typedef struct cast_ctx {
  loom_te_tensor *y;
  loom_dtype t;
} cast_ctx;

static loom_expr *cast_body(loom_te *te, void *user, loom_expr *const *idx) {
  cast_ctx *c = user;
  return loom_te_cast(te, c->t, loom_te_at(te, c->y, idx, 0));
}

loom_status node_cast(onnx_node *n, loom_te_tensor *y, loom_dtype t,
                        loom_te_tensor **out) {
  if (loom_dtype_eq(loom_te_dtype(y), t)) {
    *out = y;
    return LOOM_OK;
  }
  int64_t shape[ONNX_MAX_RANK];
  int rank = loom_te_ndim(y);
  if (rank == 0) {
    /* the library's cast takes tensors of rank 1 or more */
    cast_ctx c = {y, t};
    *out = loom_te_compute(n->te, "compute", NULL, 0, NULL, cast_body, &c);
    return *out ? LOOM_OK : LOOM_NOMEM;
  }
  for (int i = 0; i < rank; i++)
    loom_ir_is_const_int(loom_te_dim(y, i), &shape[i]);
  return node_apply(n, "cast", &y, 1, out, "shape=%s dtype=%s out_dtype=%s",
                    node_shape_str(n, shape, rank),
                    node_dtype_str(n, loom_te_dtype(y)), node_dtype_str(n, t));
}

void node_shape_exprs(onnx_node *n, const int64_t *shape, int ndim,
                      loom_expr **out) {
  for (int i = 0; i < ndim; i++)
    out[i] = loom_te_int(n->te, shape[i]);
}

loom_expr *node_bcast_at(onnx_node *n, loom_te_tensor *t,
                         loom_expr *const *idx, int n_idx) {
  int m = loom_te_ndim(t);
  loom_expr *ti[ONNX_MAX_RANK];
  for (int i = 0; i < m; i++) {
    int64_t e;
    bool is_one = loom_ir_is_const_int(loom_te_dim(t, i), &e) && e == 1;
    ti[i] = is_one ? loom_te_int(n->te, 0) : idx[n_idx - m + i];
  }
  return loom_te_at(n->te, t, ti, m);
}

loom_status node_bcast_shape(onnx_node *n, const loom_tensor_info *a,
                             const loom_tensor_info *b, int64_t *out,
                             int *ndim) {
  int r = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->ndim), ib = i - (r - b->ndim);
    int64_t x = ia >= 0 ? a->shape[ia] : 1, y = ib >= 0 ? b->shape[ib] : 1;
    if (x != y && x != 1 && y != 1)
      return node_error(n, "shapes do not broadcast: extent %lld against "
                        "%lld in dimension %d of the result",
                        (long long)x, (long long)y, i);
    out[i] = x == 1 ? y : x;
  }
  *ndim = r;
  return LOOM_OK;
}

loom_status node_axis(onnx_node *n, const char *what, int64_t axis, int rank,
                      int *out) {
  if (axis < -rank || axis >= rank)
    return node_error(n, "%s=%lld is out of range for rank %d", what,
                      (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return LOOM_OK;
}
