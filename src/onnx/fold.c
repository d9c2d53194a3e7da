/* BatchNormalization folded into the Conv before it
 * (loom_onnx_options.is_bn_folded): y = (conv(x, W) + B - mean) * s + beta
 * with s = scale / sqrt(var + epsilon) per output channel is conv(x, W * s)
 * + (B - mean) * s + beta, so the Conv is built with those weights and
 * bias and the BatchNormalization's result, and the batch norm makes no
 * call. The new data are computed in double and rounded once. */
#include "import.h"

#include <math.h>
#include <string.h>

/* The one node after `from` reading value `name`, or -1 when it has other
 * readers or is one of the graph's outputs. */
static int only_reader(const Onnx__GraphProto *g, int from, const char *name,
                       int *input) {
  int found = -1;
  for (size_t i = 0; i < g->n_output; i++)
    if (!strcmp(g->output[i]->name, name))
      return -1;
  for (size_t k = (size_t)from + 1; k < g->n_node; k++)
    for (size_t i = 0; i < g->node[k]->n_input; i++)
      if (!strcmp(g->node[k]->input[i], name)) {
        if (found >= 0)
          return -1;
        found = (int)k;
        *input = (int)i;
      }
  return found;
}

/* The data of the value the model names `name`, when it is constant and
 * of type t. */
static const loom_onnx_tensor *constant(const importer *m, const char *name,
                                        loom_dtype t) {
  int v = *name ? import_find(m, name) : -1;
  const loom_onnx_tensor *d = v >= 0 ? m->vals[v].data : NULL;
  return d && d->data && loom_dtype_eq(d->info.dtype, t) ? d : NULL;
}

/* A weight of t's type and shape, named name, its data to be written. */
static int new_weight(importer *m, const loom_onnx_tensor *like, const char *name,
                      loom_onnx_tensor **out) {
  loom_onnx_tensor *t = loom_arena_alloc(m->a, sizeof *t);
  if (!t || !name)
    return -1;
  *t = *like;
  t->name = name;
  t->data = loom_arena_alloc(m->a, t->bytes + 8);
  if (!t->data)
    return -1;
  *out = t;
  int v = import_add_weight(m, name, t);
  if (v >= 0)
    m->vals[v].onnx = NULL;
  return v;
}

loom_status onnx_fold_bn(importer *m, onnx_node *n, int index) {
  const Onnx__GraphProto *g = m->graph;
  const Onnx__NodeProto *p = n->proto;
  if (!m->opts.is_bn_folded || strcmp(p->op_type, "Conv") || p->n_input < 2 ||
      p->n_output < 1)
    return LOOM_OK;
  int input;
  int k = only_reader(g, index, p->output[0], &input);
  const Onnx__NodeProto *bn = k >= 0 ? g->node[k] : NULL;
  if (!bn || strcmp(bn->op_type, "BatchNormalization") || input != 0 ||
      bn->n_input != 5 || bn->n_output < 1 || (bn->domain && *bn->domain))
    return LOOM_OK;
  for (size_t i = 1; i < bn->n_output; i++)
    if (*bn->output[i])
      return LOOM_OK;
  onnx_node b = {0};
  b.proto = bn;
  if (node_attr_int(&b, "training_mode", 0) != 0)
    return LOOM_OK;
  const loom_onnx_tensor *w = n->vals[1] >= 0 ? m->vals[n->vals[1]].data : NULL;
  if (!w || !w->data || w->info.ndim < 1)
    return LOOM_OK;
  loom_dtype t = w->info.dtype;
  int64_t K = w->info.shape[0];
  if (!loom_dtype_is_float(t) || t.lanes != 1)
    return LOOM_OK;
  const loom_onnx_tensor *bias = p->n_input > 2 && *p->input[2]
                                     ? constant(m, p->input[2], t)
                                     : NULL, *q[4];
  if (p->n_input > 2 && *p->input[2] && !bias)
    return LOOM_OK;
  for (int i = 0; i < 4; i++) {
    q[i] = constant(m, bn->input[i + 1], t);
    if (!q[i] || q[i]->info.ndim != 1 || q[i]->info.shape[0] != K)
      return LOOM_OK;
  }
  if (bias && (bias->info.ndim != 1 || bias->info.shape[0] != K))
    return LOOM_OK;
  double eps = node_attr_float(&b, "epsilon", 1e-5);
  loom_onnx_tensor *nw, *nb;
  int wv = new_weight(m, w, loom_arena_printf(m->a, "%s_folded", p->input[1]), &nw);
  if (wv < 0)
    return LOOM_NOMEM;
  loom_onnx_tensor like = *q[1];
  int bv = new_weight(m, &like, loom_arena_printf(m->a, "%s_folded", bn->input[2]), &nb);
  int *vals = loom_arena_alloc(m->a, 3 * sizeof *vals);
  if (bv < 0 || !vals)
    return LOOM_NOMEM;
  int64_t per = onnx_numel(&w->info) / K;
  for (int64_t c = 0; c < K; c++) {
    double s = onnx_tensor_get(q[0], c) / sqrt(onnx_tensor_get(q[3], c) + eps);
    for (int64_t i = 0; i < per; i++)
      onnx_tensor_put(nw, c * per + i, onnx_tensor_get(w, c * per + i) * s);
    double b0 = bias ? onnx_tensor_get(bias, c) : 0;
    onnx_tensor_put(nb, c, (b0 - onnx_tensor_get(q[2], c)) * s + onnx_tensor_get(q[1], c));
  }
  vals[0] = n->vals[0];
  vals[1] = wv;
  vals[2] = bv;
  n->vals = vals;
  n->n_in = 3;
  n->output = bn->output[0];
  m->is_folded[k] = true;
  return LOOM_OK;
}
