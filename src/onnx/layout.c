/* Channels-last activations (loom_onnx_options.is_channels_last), as TVM's
 * ConvertLayout makes them for NHWC: an operator that computes over NHWC
 * (ONNX_LAYOUT_NHWC) takes its 4-D input channels-last, the elementwise
 * operators after it keep the layout they are given, and every other
 * operator, and the graph's outputs, get the model's NCHW back. A value
 * in the other layout is a transpose call made once and then shared; a
 * weight is permuted at import instead, so that the graph holds its data
 * in the layout the call reads. */
#include "import.h"

#include <string.h>

static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

/* The convolution weights' layouts, from OIHW: HWIO, and HWC1 for a
 * depthwise one (its I is 1), as topi's NHWC convolutions read them. */
static const int64_t to_hwio[4] = {2, 3, 1, 0}, to_hwc1[4] = {2, 3, 0, 1};

/* Weight data t with its 4 axes permuted: axis i of the result is axis
 * perm[i] of t. */
static loom_status permute_data(importer *m, const loom_onnx_tensor *t,
                                const int64_t *perm, const char *name,
                                loom_onnx_tensor **out) {
  loom_onnx_tensor *p = loom_arena_alloc(m->a, sizeof *p);
  int64_t *shape = loom_arena_alloc(m->a, 4 * sizeof *shape);
  size_t w = onnx_elem_bytes(t->info.dtype);
  if (!p || !shape)
    return LOOM_NOMEM;
  *p = *t;
  p->name = name;
  p->info.shape = shape;
  int64_t stride[4], s = 1;
  for (int i = 3; i >= 0; i--) {
    stride[i] = s;
    s *= t->info.shape[i];
  }
  for (int i = 0; i < 4; i++)
    shape[i] = t->info.shape[perm[i]];
  if (t->data) {
    p->data = loom_arena_alloc(m->a, t->bytes + 8);
    if (!p->data)
      return LOOM_NOMEM;
    char *dst = p->data;
    const char *src = t->data;
    int64_t i[4];
    for (i[0] = 0; i[0] < shape[0]; i[0]++)
      for (i[1] = 0; i[1] < shape[1]; i[1]++)
        for (i[2] = 0; i[2] < shape[2]; i[2]++)
          for (i[3] = 0; i[3] < shape[3]; i[3]++) {
            int64_t from = 0;
            for (int k = 0; k < 4; k++)
              from += i[k] * stride[perm[k]];
            memcpy(dst, src + (size_t)from * w, w);
            dst += w;
          }
  }
  *out = p;
  return LOOM_OK;
}

/* Value v with its axes permuted, named name: a permuted weight, or the
 * result of a transpose call. */
static loom_status permuted(importer *m, int v, const int64_t *perm,
                            const char *name, int *out) {
  if (!name)
    return LOOM_NOMEM;
  if (m->vals[v].data) {
    loom_onnx_tensor *t;
    TRY(permute_data(m, m->vals[v].data, perm, name, &t));
    *out = import_add_weight(m, name, t);
    if (*out < 0)
      return LOOM_NOMEM;
    m->vals[*out].onnx = NULL;
    return LOOM_OK;
  }
  static const Onnx__NodeProto none = ONNX__NODE_PROTO__INIT;
  onnx_node n = {0};
  n.proto = &none;
  n.where = loom_arena_printf(m->a, "the transpose of '%s'", m->vals[v].name);
  n.opset = m->opset;
  n.arena = m->a;
  n.d = m->d;
  n.n_in = 1;
  n.te = loom_te_new(m->a);
  n.in = loom_arena_alloc(m->a, sizeof *n.in);
  n.args = loom_arena_alloc(m->a, sizeof *n.args);
  n.data = loom_arena_alloc(m->a, sizeof *n.data);
  n.vals = loom_arena_alloc(m->a, sizeof *n.vals);
  if (!n.where || !n.te || !n.in || !n.args || !n.data || !n.vals)
    return LOOM_NOMEM;
  n.in[0] = &m->vals[v].info;
  n.args[0] = NULL;
  n.data[0] = NULL;
  n.vals[0] = v;
  const loom_tensor_info *x = n.in[0];
  loom_te_tensor *in = node_arg(&n, 0), *y;
  TRY(node_apply(&n, "transpose", &in, 1, &y, "shape=%s axes=%s dtype=%s",
                 node_shape_str(&n, x->shape, 4), node_shape_str(&n, perm, 4),
                 node_dtype_str(&n, x->dtype)));
  TRY(import_call(m, &n, "transpose", y, name, out));
  m->vals[*out].onnx = NULL;
  return LOOM_OK;
}

/* Value v stored channels-last (is_nhwc) or as the model has it. */
static loom_status in_layout(importer *m, int v, bool is_nhwc, int *out) {
  ival *x = &m->vals[v];
  if (x->is_nhwc == is_nhwc || x->info.ndim != 4) {
    *out = v;
    return LOOM_OK;
  }
  if (x->other >= 0) {
    *out = x->other;
    return LOOM_OK;
  }
  const char *name = loom_arena_printf(m->a, "%s_%s", x->name,
                                       is_nhwc ? "nhwc" : "nchw");
  TRY(permuted(m, v, is_nhwc ? to_nhwc : to_nchw, name, out));
  m->vals[*out].is_nhwc = is_nhwc;
  m->vals[*out].other = v;
  m->vals[v].other = *out;
  return LOOM_OK;
}

loom_status onnx_layout_model(importer *m, int v, int *out) {
  return in_layout(m, v, false, out);
}

/* Extent a of value x as the model has it. */
static int64_t model_extent(const ival *x, int a) {
  return x->info.shape[x->is_nhwc ? to_nchw[a] : a];
}

/* Whether input 0 of n, 4-D, is one the operator builds channels-last: a
 * Conv of one group or a depthwise one, its weight as the model has it
 * (others keep NCHW). */
static bool takes_nhwc(importer *m, onnx_node *n) {
  if (n->n_in < 1 || n->vals[0] < 0 || m->vals[n->vals[0]].info.ndim != 4)
    return false;
  if (strcmp(n->proto->op_type, "Conv"))
    return true;
  if (n->n_in < 2 || n->vals[1] < 0 || m->vals[n->vals[1]].info.ndim != 4 ||
      m->vals[n->vals[1]].is_nhwc)
    return false;
  int64_t g = node_attr_int(n, "group", 1), c = model_extent(&m->vals[n->vals[0]], 1);
  const int64_t *w = m->vals[n->vals[1]].info.shape;
  return g == 1 || (g == c && w[0] == c && w[1] == 1);
}

/* The convolution's weight (input 1) in the layout its NHWC form reads. */
static loom_status conv_weight(importer *m, onnx_node *n) {
  int v = n->vals[1];
  bool is_depthwise = node_attr_int(n, "group", 1) > 1;
  const char *name = loom_arena_printf(m->a, "%s_%s", m->vals[v].name,
                                       is_depthwise ? "hwc1" : "hwio");
  return permuted(m, v, is_depthwise ? to_hwc1 : to_hwio, name, &n->vals[1]);
}

/* Whether every input of n is 4-D, all of one shape. */
static bool same_shapes(importer *m, onnx_node *n) {
  const ival *first = NULL;
  for (int i = 0; i < n->n_in; i++) {
    if (n->vals[i] < 0)
      continue;
    const ival *x = &m->vals[n->vals[i]];
    if (x->info.ndim != 4)
      return false;
    if (!first)
      first = x;
    for (int a = 0; a < 4; a++)
      if (model_extent(x, a) != model_extent(first, a))
        return false;
  }
  return true;
}

static bool any_nhwc(importer *m, onnx_node *n) {
  for (int i = 0; i < n->n_in; i++)
    if (n->vals[i] >= 0 && m->vals[n->vals[i]].is_nhwc)
      return true;
  return false;
}

loom_status onnx_layout_inputs(importer *m, onnx_node *n, const onnx_op *op,
                               bool *is_nhwc_out) {
  *is_nhwc_out = n->is_nhwc = false;
  if (!m->opts.is_channels_last)
    return LOOM_OK;
  onnx_layout l = op->layout;
  if (l == ONNX_LAYOUT_NHWC && takes_nhwc(m, n)) {
    TRY(in_layout(m, n->vals[0], true, &n->vals[0]));
    if (!strcmp(op->type, "Conv"))
      TRY(conv_weight(m, n));
    *is_nhwc_out = n->is_nhwc = true;
    return LOOM_OK;
  }
  if (l == ONNX_LAYOUT_FOLLOW && n->n_in >= 1 && n->vals[0] >= 0) {
    *is_nhwc_out = m->vals[n->vals[0]].is_nhwc;
    return LOOM_OK;
  }
  bool keeps = l == ONNX_LAYOUT_SAME && any_nhwc(m, n) && same_shapes(m, n);
  for (int i = 0; i < n->n_in; i++)
    if (n->vals[i] >= 0)
      TRY(in_layout(m, n->vals[i], keeps, &n->vals[i]));
  *is_nhwc_out = keeps;
  return LOOM_OK;
}
