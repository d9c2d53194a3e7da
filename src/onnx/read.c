/* Reading a model: the file unpacked with protobuf-c, its graph walked in
 * node order. Each node becomes one call of a prim func built for it; the
 * same function (equal up to renaming) is made once and called again.
 * Inputs that are not initializers are the graph's first parameters; the
 * initializers and Constant nodes a call reads as an argument are the
 * weights, the parameters after them. */
#include "import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Arena arrays that double when full; the old copy stays in the arena. */
static bool grow(importer *m, void **p, int *cap, int n, size_t elem) {
  if (n < *cap)
    return true;
  int c = *cap ? 2 * *cap : 16;
  void *q = loom_arena_alloc(m->a, elem * (size_t)c);
  if (!q)
    return false;
  if (n)
    memcpy(q, *p, elem * (size_t)n);
  *p = q;
  *cap = c;
  return true;
}

int import_find(const importer *m, const char *name) {
  for (int i = m->n_vals - 1; i >= 0; i--)
    if (m->vals[i].onnx && !strcmp(m->vals[i].onnx, name))
      return i;
  return -1;
}

int import_add_val(importer *m, const char *name, loom_tensor_info info,
                   val_kind kind) {
  if (!grow(m, (void **)&m->vals, &m->cap_vals, m->n_vals, sizeof *m->vals))
    return -1;
  ival *v = &m->vals[m->n_vals];
  memset(v, 0, sizeof *v);
  v->name = v->onnx = loom_arena_strdup(m->a, name);
  v->info = info;
  v->kind = kind;
  v->other = -1;
  return v->name ? m->n_vals++ : -1;
}

/* The type the model's t is read as: float32 as the options' float_dtype
 * where that is set. */
static loom_dtype model_dtype(const importer *m, loom_dtype t) {
  bool is_f32 = t.code == LOOM_DT_FLOAT && t.bits == 32;
  return is_f32 && m->opts.float_dtype.bits ? m->opts.float_dtype : t;
}

int import_add_weight(importer *m, const char *name, const loom_onnx_tensor *t) {
  loom_dtype dt = model_dtype(m, t->info.dtype);
  if (!loom_dtype_eq(dt, t->info.dtype) && onnx_tensor_retype(m->a, t, dt, &t) != LOOM_OK)
    return -1;
  int i = import_add_val(m, name, t->info, VAL_WEIGHT);
  if (i >= 0)
    m->vals[i].data = t;
  return i;
}

/* ---- the model's inputs ---------------------------------------------------- */

static bool is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
      return true;
  return false;
}

/* A static tensor type: the element type and every extent known. */
static loom_status value_info(importer *m, const Onnx__ValueInfoProto *v,
                              const char *what, loom_tensor_info *out,
                              loom_diag *d) {
  const Onnx__TypeProto *tp = v->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return loom_diag_error(d, (loom_loc){0},
                           "%s '%s' is not a tensor; only tensors are "
                           "supported", what, v->name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (!onnx_dtype(tt->elem_type, &out->dtype))
    return loom_diag_error(d, (loom_loc){0},
                           "%s '%s' has element type %s, which is not "
                           "supported", what, v->name,
                           onnx_dtype_name(tt->elem_type));
  out->dtype = model_dtype(m, out->dtype);
  if (!tt->shape)
    return loom_diag_error(d, (loom_loc){0},
                           "%s '%s' has no shape; static shapes are required",
                           what, v->name);
  out->ndim = (int)tt->shape->n_dim;
  if (out->ndim > ONNX_MAX_RANK)
    return loom_diag_error(d, (loom_loc){0},
                           "%s '%s' has rank %d (limit is %d)", what, v->name,
                           out->ndim, ONNX_MAX_RANK);
  out->shape = loom_arena_alloc(m->a, sizeof(int64_t) * (size_t)(out->ndim + 1));
  if (!out->shape)
    return LOOM_NOMEM;
  for (int i = 0; i < out->ndim; i++) {
    const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[i];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
      int k = 0;
      while (k < m->opts.n_dims && strcmp(m->opts.dim_names[k], dim->dim_param))
        k++;
      if (k == m->opts.n_dims)
        return loom_diag_error(d, (loom_loc){0},
                               "%s '%s' has dimension %d '%s', which is not a "
                               "constant; static shapes are required: give it a "
                               "value (loom model: --dim %s=N)", what, v->name, i,
                               dim->dim_param, dim->dim_param);
      out->shape[i] = m->opts.dim_values[k];
      continue;
    }
    if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      return loom_diag_error(d, (loom_loc){0},
                             "%s '%s' has dimension %d of no known extent; "
                             "static shapes are required", what, v->name, i);
    if (dim->dim_value < 1)
      return loom_diag_error(d, (loom_loc){0},
                             "%s '%s' has dimension %d of extent %lld; "
                             "tensors of no elements are not supported", what,
                             v->name, i, (long long)dim->dim_value);
    out->shape[i] = dim->dim_value;
  }
  return LOOM_OK;
}

static loom_status read_inputs(importer *m, const Onnx__GraphProto *g) {
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *v = g->input[i];
    if (is_initializer(g, v->name))
      continue;
    loom_tensor_info info;
    TRY(value_info(m, v, "input", &info, m->d));
    if (import_add_val(m, v->name, info, VAL_INPUT) < 0)
      return LOOM_NOMEM;
  }
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *p = g->initializer[i];
    loom_onnx_tensor *t = loom_arena_alloc(m->a, sizeof *t);
    if (!t)
      return LOOM_NOMEM;
    char *what = loom_arena_printf(m->a, "initializer '%s'", p->name);
    TRY(onnx_tensor_from_proto(p, m->a, what ? what : "initializer", t, m->d));
    if (import_add_weight(m, p->name, t) < 0)
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}

/* ---- nodes ------------------------------------------------------------------- */

static const char *node_label(importer *m, const Onnx__NodeProto *p, int i) {
  const char *s = p->name && *p->name
                      ? loom_arena_printf(m->a, "node '%s' (%s)", p->name,
                                          p->op_type)
                      : loom_arena_printf(m->a, "node #%d (%s)", i, p->op_type);
  return s ? s : "node";
}

static loom_status unsupported_op(importer *m, const char *where) {
  loom_buf b;
  loom_buf_init(&b);
  const char *const *ops = loom_onnx_operators();
  for (int i = 0; ops[i]; i++)
    loom_buf_printf(&b, "%s%s", i ? ", " : "", ops[i]);
  loom_diag_error(m->d, (loom_loc){0},
                  "%s: operator not supported; supported: %s", where,
                  b.data ? b.data : "");
  loom_buf_free(&b);
  return LOOM_ERROR;
}

/* Every attribute set must be one the operator's row takes. */
static loom_status check_attrs(importer *m, const onnx_op *op,
                               const Onnx__NodeProto *p, const char *where) {
  for (size_t i = 0; i < p->n_attribute; i++) {
    const char *name = p->attribute[i]->name;
    size_t len = strlen(name);
    bool is_known = false;
    for (const char *s = op->attrs; *s && !is_known;) {
      const char *e = strchr(s, ' ');
      size_t k = e ? (size_t)(e - s) : strlen(s);
      is_known = k == len && !strncmp(s, name, len);
      s += k + (e ? 1 : 0);
    }
    if (is_known)
      continue;
    loom_buf b;
    loom_buf_init(&b);
    for (const char *s = op->attrs; *s; s++)
      loom_buf_puts(&b, *s == ' ' ? ", " : (char[]){*s, 0});
    loom_diag_error(m->d, (loom_loc){0}, "%s: attribute '%s' is not supported%s%s",
                    where, name, b.data ? "; it takes: " : "",
                    b.data ? b.data : "");
    loom_buf_free(&b);
    return LOOM_ERROR;
  }
  return LOOM_OK;
}

/* A Constant node's tensor, from whichever attribute holds it. */
static loom_status constant_tensor(importer *m, onnx_node *n,
                                   loom_onnx_tensor *t) {
  const Onnx__AttributeProto *at = NULL;
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    at = n->proto->attribute[i];
  if (!at || n->proto->n_attribute != 1)
    return node_error(n, "a Constant takes exactly one attribute");
  if (!strcmp(at->name, "value")) {
    if (!at->t)
      return node_error(n, "value holds no tensor");
    return onnx_tensor_from_proto(at->t, m->a, n->where, t, m->d);
  }
  bool is_float = !strncmp(at->name, "value_float", 11);
  bool is_list = at->name[strlen(at->name) - 1] == 's';
  size_t count = is_list ? (is_float ? at->n_floats : at->n_ints) : 1;
  memset(t, 0, sizeof *t);
  t->info.dtype = is_float ? LOOM_FLOAT32 : LOOM_INT64;
  t->info.ndim = is_list ? 1 : 0;
  t->info.shape = loom_arena_alloc(m->a, sizeof(int64_t));
  t->bytes = count * (is_float ? 4 : 8);
  t->data = loom_arena_alloc(m->a, t->bytes + 8);
  if (!t->info.shape || !t->data)
    return LOOM_NOMEM;
  t->info.shape[0] = (int64_t)count;
  for (size_t i = 0; i < count; i++) {
    if (is_float)
      ((float *)t->data)[i] = is_list ? at->floats[i] : at->f;
    else
      ((int64_t *)t->data)[i] = is_list ? at->ints[i] : at->i;
  }
  return LOOM_OK;
}

/* A new int64 weight holding n's result: count values, a vector, or a
 * scalar where rank is 0. */
static loom_status int64_weight(importer *m, onnx_node *n, const int64_t *v, int64_t count,
                                int rank) {
  loom_onnx_tensor *t = loom_arena_alloc(m->a, sizeof *t);
  int64_t *shape = loom_arena_alloc(m->a, sizeof *shape);
  int64_t *data = loom_arena_alloc(m->a, sizeof *data * (size_t)count);
  if (!t || !shape || !data)
    return LOOM_NOMEM;
  memcpy(data, v, sizeof *data * (size_t)count);
  *shape = count;
  *t = (loom_onnx_tensor){.name = loom_arena_strdup(m->a, n->proto->output[0]),
                          .info = {LOOM_INT64, shape, rank},
                          .data = data,
                          .bytes = sizeof *data * (size_t)count};
  return import_add_weight(m, n->proto->output[0], t) < 0 ? LOOM_NOMEM : LOOM_OK;
}

/* Shape and Size make no call: shapes are static, so their results are
 * constants: Shape's an int64 vector of the input's extents from start to
 * end (negative ones count from the end, both clamped), as the model has
 * them (NCHW where the importer stores the value channels-last); Size's
 * an int64 scalar, the number of elements. */
static loom_status shape_tensor(importer *m, onnx_node *n, bool is_size) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  if (is_size) {
    int64_t size = onnx_numel(a);
    return int64_weight(m, n, &size, 1, 0);
  }
  int64_t dims[ONNX_MAX_RANK];
  bool is_nhwc = n->vals[0] >= 0 && m->vals[n->vals[0]].is_nhwc && a->ndim == 4;
  for (int i = 0; i < a->ndim; i++)
    dims[i] = is_nhwc ? a->shape[(int[]){0, 3, 1, 2}[i]] : a->shape[i];
  int64_t rank = a->ndim, lo = node_attr_int(n, "start", 0), hi = node_attr_int(n, "end", rank);
  lo = lo < 0 ? lo + rank : lo;
  hi = hi < 0 ? hi + rank : hi;
  lo = lo < 0 ? 0 : lo > rank ? rank : lo;
  hi = hi < lo ? lo : hi > rank ? rank : hi;
  if (hi == lo)
    return node_error(n, "start and end leave no extents; tensors of no elements are not "
                      "supported");
  return int64_weight(m, n, dims + lo, hi - lo, 1);
}

/* The result's type, read back from the prim func's last parameter. */
static loom_status result_info(importer *m, const loom_func *f,
                               loom_tensor_info *out) {
  const loom_buffer *b = f->params[f->n_params - 1].buffer;
  out->dtype = b->dtype;
  out->ndim = b->ndim;
  out->shape = loom_arena_alloc(m->a, sizeof(int64_t) * (size_t)(b->ndim + 1));
  if (!out->shape)
    return LOOM_NOMEM;
  for (int i = 0; i < b->ndim; i++)
    if (!loom_ir_is_const_int(b->shape[i], &out->shape[i]))
      return loom_diag_error(m->d, (loom_loc){0},
                             "a result has a shape that is not constant "
                             "(internal)");
  return LOOM_OK;
}

/* f under the name `name`, its global_symbol too. */
static loom_func *renamed(importer *m, const loom_func *f, const char *name) {
  loom_func *g = loom_arena_alloc(m->a, sizeof *g);
  loom_attr *attrs = loom_arena_alloc(m->a, sizeof *attrs * (size_t)(f->n_attrs + 1));
  if (!g || !attrs)
    return NULL;
  *g = *f;
  g->name = name;
  g->attrs = attrs;
  for (int i = 0; i < f->n_attrs; i++) {
    attrs[i] = f->attrs[i];
    if (!strcmp(attrs[i].key, "global_symbol"))
      attrs[i].value = loom_ir_value_str(m->a, name);
  }
  return g;
}

/* The module's name for f: an equal function's when one was made before,
 * else the operator's base name with a counter (conv2d, conv2d1, ...), as
 * TVM names the functions legalization makes. */
static const char *intern_func(importer *m, loom_func *f, const char *base) {
  loom_func *anon = loom_ir_func_anonymous(m->a, f);
  if (!anon)
    return NULL;
  uint64_t h = loom_ir_hash_func(anon);
  int same_base = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    ifunc *g = &m->funcs[i];
    if (g->hash == h && loom_ir_equal_func(g->built, anon, NULL))
      return g->named->name;
    same_base += !strcmp(g->base, base);
  }
  const char *name = same_base ? loom_arena_printf(m->a, "%s%d", base, same_base)
                               : base;
  if (!name || !grow(m, (void **)&m->funcs, &m->cap_funcs, m->n_funcs,
                     sizeof *m->funcs))
    return NULL;
  ifunc *g = &m->funcs[m->n_funcs];
  g->built = anon;
  g->hash = h;
  g->base = base;
  g->named = renamed(m, f, name);
  if (!g->named)
    return NULL;
  m->n_funcs++;
  return name;
}

loom_status import_call(importer *m, onnx_node *n, const char *base,
                        loom_te_tensor *y, const char *name, int *out) {
  loom_te_tensor **params = loom_arena_alloc(m->a, sizeof *params * (size_t)(n->n_in + 1));
  int *args = loom_arena_alloc(m->a, sizeof *args * (size_t)(n->n_in + 1));
  if (!params || !args)
    return LOOM_NOMEM;
  int k = 0;
  for (int i = 0; i < n->n_in; i++)
    if (n->args[i]) {
      params[k] = n->args[i];
      args[k++] = n->vals[i];
    }
  params[k] = y;
  loom_func *f;
  loom_diag d;
  loom_diag_init(&d);
  loom_status s = loom_te_create_prim_func(n->te, params, k + 1, &f, &d);
  if (s == LOOM_ERROR)
    node_error(n, "%s", d.msg ? d.msg : "building the prim func failed");
  loom_diag_free(&d);
  TRY(s);
  loom_tensor_info info;
  TRY(result_info(m, f, &info));
  const char *fname = intern_func(m, f, base);
  if (!fname || !grow(m, (void **)&m->calls, &m->cap_calls, m->n_calls,
                      sizeof *m->calls))
    return LOOM_NOMEM;
  *out = import_add_val(m, name, info, VAL_CALL);
  if (*out < 0)
    return LOOM_NOMEM;
  for (int i = 0; i < k; i++)
    m->vals[args[i]].is_used = true;
  m->calls[m->n_calls++] = (icall){fname, args, k, *out};
  return LOOM_OK;
}

static loom_status build_call(importer *m, const onnx_op *op, onnx_node *n,
                              bool is_nhwc) {
  loom_te_tensor *y = NULL;
  TRY(op->build(n, &y));
  if (!y || loom_te_error(n->te))
    return node_error(n, "%s", loom_te_error(n->te) ? loom_te_error(n->te)
                                                    : "no result (internal)");
  int out;
  TRY(import_call(m, n, op->func, y, n->output, &out));
  m->vals[out].is_nhwc = is_nhwc;
  return LOOM_OK;
}

/* The values the node's inputs name; -1 for one left out. */
static loom_status find_inputs(importer *m, onnx_node *n) {
  const Onnx__NodeProto *p = n->proto;
  n->n_in = (int)p->n_input;
  n->vals = loom_arena_alloc(m->a, sizeof *n->vals * (p->n_input + 1));
  if (!n->vals)
    return LOOM_NOMEM;
  for (size_t i = 0; i < p->n_input; i++) {
    n->vals[i] = -1;
    if (!*p->input[i])
      continue; /* an optional input left out */
    n->vals[i] = import_find(m, p->input[i]);
    if (n->vals[i] < 0)
      return node_error(n, "input '%s' is not defined before the node",
                        p->input[i]);
  }
  return LOOM_OK;
}

/* The node's inputs as the builder sees them: their types, and the data of
 * those known at import. */
static loom_status bind_inputs(importer *m, onnx_node *n) {
  n->in = loom_arena_alloc(m->a, sizeof *n->in * (size_t)(n->n_in + 1));
  n->data = loom_arena_alloc(m->a, sizeof *n->data * (size_t)(n->n_in + 1));
  n->args = loom_arena_alloc(m->a, sizeof *n->args * (size_t)(n->n_in + 1));
  if (!n->in || !n->data || !n->args)
    return LOOM_NOMEM;
  for (int i = 0; i < n->n_in; i++)
    if (n->vals[i] >= 0) {
      n->in[i] = &m->vals[n->vals[i]].info;
      n->data[i] = m->vals[n->vals[i]].data;
    }
  return LOOM_OK;
}

static loom_status read_node(importer *m, const Onnx__NodeProto *p, int index) {
  onnx_node n = {0};
  n.proto = p;
  n.where = node_label(m, p, index);
  n.opset = m->opset;
  n.is_f32_accumulated = m->opts.is_f32_accumulated;
  n.arena = m->a;
  n.d = m->d;
  if (p->domain && *p->domain && strcmp(p->domain, "ai.onnx"))
    return node_error(&n, "operator domain '%s' is not supported; only "
                      "ONNX's own operators are", p->domain);
  const onnx_op *op = onnx_op_find(p->op_type);
  if (!op)
    return unsupported_op(m, n.where);
  TRY(check_attrs(m, op, p, n.where));
  for (size_t i = 1; i < p->n_output; i++)
    if (*p->output[i])
      return node_error(&n, "output %zu ('%s') is not supported; only the "
                        "first output is", i, p->output[i]);
  if (p->n_output < 1 || !*p->output[0])
    return node_error(&n, "the node has no output");
  if (!strcmp(p->op_type, "Constant")) {
    loom_onnx_tensor *t = loom_arena_alloc(m->a, sizeof *t);
    if (!t)
      return LOOM_NOMEM;
    TRY(constant_tensor(m, &n, t));
    t->name = loom_arena_strdup(m->a, p->output[0]);
    return import_add_weight(m, p->output[0], t) < 0 ? LOOM_NOMEM : LOOM_OK;
  }
  bool is_nhwc;
  n.output = p->output[0];
  TRY(find_inputs(m, &n));
  if (!strcmp(p->op_type, "Shape") || !strcmp(p->op_type, "Size")) {
    TRY(bind_inputs(m, &n));
    return shape_tensor(m, &n, p->op_type[1] == 'i');
  }
  TRY(onnx_fold_bn(m, &n, index));
  TRY(onnx_layout_inputs(m, &n, op, &is_nhwc));
  TRY(bind_inputs(m, &n));
  n.te = loom_te_new(m->a);
  if (!n.te)
    return LOOM_NOMEM;
  return build_call(m, op, &n, is_nhwc);
}

/* ---- the graph ----------------------------------------------------------------- */

/* The graph's outputs, each checked against the type the model declares
 * where it declares a static one (a difference is the importer's bug). */
static loom_status read_outputs(importer *m, const Onnx__GraphProto *g,
                                int *outs) {
  for (size_t i = 0; i < g->n_output; i++) {
    const Onnx__ValueInfoProto *v = g->output[i];
    int k = import_find(m, v->name);
    if (k < 0)
      return loom_diag_error(m->d, (loom_loc){0},
                             "output '%s' is not defined by the graph",
                             v->name);
    int model;
    TRY(onnx_layout_model(m, k, &model));
    if (model != k) { /* the graph returns the model's name */
      m->vals[model].name = m->vals[k].name;
      m->vals[k].name = loom_arena_printf(m->a, "%s_nhwc", m->vals[model].name);
      if (!m->vals[k].name)
        return LOOM_NOMEM;
      k = model;
    }
    loom_diag d;
    loom_diag_init(&d);
    loom_tensor_info declared;
    loom_status s = value_info(m, v, "output", &declared, &d);
    loom_diag_free(&d);
    if (s == LOOM_NOMEM)
      return s;
    if (s == LOOM_OK && !loom_ir_tensor_info_equal(&declared, &m->vals[k].info)) {
      char want[256], got[256];
      loom_ir_tensor_info_str(&declared, want, sizeof want);
      loom_ir_tensor_info_str(&m->vals[k].info, got, sizeof got);
      return loom_diag_error(m->d, (loom_loc){0},
                             "output '%s': the model declares %s but the "
                             "importer computes %s (internal)",
                             v->name, want, got);
    }
    m->vals[k].is_used = true;
    outs[i] = k;
  }
  return LOOM_OK;
}

/* Numbers the values the graph keeps: inputs, the weights in use, then
 * the calls' results. */
static loom_status make_graph(importer *m, const int *outs, int n_outs,
                              loom_onnx_model *out) {
  loom_graph *g = loom_arena_alloc(m->a, sizeof *g);
  if (!g)
    return LOOM_NOMEM;
  g->name = "main";
  g->loc = (loom_loc){m->path, 0, 0};
  g->values = loom_arena_alloc(m->a, sizeof *g->values * (size_t)(m->n_vals + 1));
  out->weights = loom_arena_alloc(m->a, sizeof *out->weights * (size_t)(m->n_vals + 1));
  if (!g->values || !out->weights)
    return LOOM_NOMEM;
  static const val_kind order[] = {VAL_INPUT, VAL_WEIGHT, VAL_CALL};
  for (int o = 0; o < 3; o++)
    for (int i = 0; i < m->n_vals; i++) {
      ival *v = &m->vals[i];
      if (v->kind != order[o] || (v->kind == VAL_WEIGHT && !v->is_used))
        continue;
      v->index = g->n_values;
      g->values[g->n_values++] = (loom_graph_value){v->name, v->info};
      if (v->kind == VAL_INPUT)
        out->n_inputs++;
      if (v->kind == VAL_WEIGHT) {
        out->weights[out->n_weights] = *v->data;
        out->weights[out->n_weights++].name = v->name;
      }
      if (v->kind != VAL_CALL)
        g->n_params++;
    }
  g->calls = loom_arena_alloc(m->a, sizeof *g->calls * (size_t)(m->n_calls + 1));
  g->outputs = loom_arena_alloc(m->a, sizeof *g->outputs * (size_t)(n_outs + 1));
  if (!g->calls || !g->outputs)
    return LOOM_NOMEM;
  for (int i = 0; i < m->n_calls; i++) {
    icall *c = &m->calls[i];
    for (int k = 0; k < c->n_args; k++)
      c->args[k] = m->vals[c->args[k]].index;
    g->calls[i] = (loom_graph_call){c->func, c->args, c->n_args,
                                    m->vals[c->out].index, (loom_loc){0}};
  }
  g->n_calls = m->n_calls;
  for (int i = 0; i < n_outs; i++)
    g->outputs[i] = m->vals[outs[i]].index;
  g->n_outputs = n_outs;
  loom_module *mod = loom_ir_module(m->a);
  if (!mod)
    return LOOM_NOMEM;
  mod->funcs = loom_arena_alloc(m->a, sizeof *mod->funcs * (size_t)(m->n_funcs + 1));
  mod->graphs = loom_arena_alloc(m->a, sizeof *mod->graphs);
  if (!mod->funcs || !mod->graphs)
    return LOOM_NOMEM;
  for (int i = 0; i < m->n_funcs; i++)
    mod->funcs[i] = m->funcs[i].named;
  mod->n_funcs = m->n_funcs;
  mod->graphs[0] = g;
  mod->n_graphs = 1;
  mod->is_ir_module = true;
  out->module = mod;
  out->graph = g;
  return LOOM_OK;
}

/* The opset of ONNX's default domain; 1 when the model names none. */
static int64_t default_opset(const Onnx__ModelProto *mp) {
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const char *dom = mp->opset_import[i]->domain;
    if (!dom || !*dom || !strcmp(dom, "ai.onnx"))
      return mp->opset_import[i]->version;
  }
  return 1;
}

static loom_status read_graph(importer *m, const Onnx__GraphProto *g,
                              loom_onnx_model *out) {
  if (g->n_sparse_initializer)
    return loom_diag_error(m->d, (loom_loc){0},
                           "sparse initializers are not supported");
  TRY(read_inputs(m, g));
  m->graph = g;
  m->is_folded = loom_arena_alloc(m->a, g->n_node + 1);
  if (!m->is_folded)
    return LOOM_NOMEM;
  memset(m->is_folded, 0, g->n_node + 1);
  for (size_t i = 0; i < g->n_node; i++)
    if (!m->is_folded[i])
      TRY(read_node(m, g->node[i], (int)i));
  int *outs = loom_arena_alloc(m->a, sizeof *outs * (g->n_output + 1));
  if (!outs)
    return LOOM_NOMEM;
  TRY(read_outputs(m, g, outs));
  return make_graph(m, outs, (int)g->n_output, out);
}

loom_status loom_onnx_read(const char *path, loom_arena *a,
                           loom_onnx_model *out, loom_diag *d) {
  return loom_onnx_read_with(path, a, NULL, out, d);
}

loom_status loom_onnx_read_with(const char *path, loom_arena *a,
                                const loom_onnx_options *o,
                                loom_onnx_model *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  char *text;
  size_t len;
  TRY(loom_read_file(path, &text, &len, d));
  Onnx__ModelProto *mp =
      onnx__model_proto__unpack(NULL, len, (const uint8_t *)text);
  free(text);
  if (!mp || !mp->graph) {
    if (mp)
      onnx__model_proto__free_unpacked(mp, NULL);
    return loom_diag_error(d, (loom_loc){path, 0, 0},
                           "not an ONNX model (no ModelProto with a graph)");
  }
  importer m = {0};
  m.path = loom_arena_strdup(a, path);
  m.a = a;
  m.d = d;
  m.opset = default_opset(mp);
  if (o)
    m.opts = *o;
  out->opset = m.opset;
  loom_status s = m.path ? read_graph(&m, mp->graph, out) : LOOM_NOMEM;
  onnx__model_proto__free_unpacked(mp, NULL);
  if (s == LOOM_OK)
    s = loom_arena_status(a);
  if (s == LOOM_ERROR && !d->loc.file)
    d->loc.file = path;
  if (s != LOOM_OK)
    memset(out, 0, sizeof *out);
  return s;
}
