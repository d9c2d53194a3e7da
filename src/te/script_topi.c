/* topi calls inside TE scripts: each topi function the operator library
 * has a counterpart for maps its arguments (tensors, strides, paddings,
 * axes) onto the operator's KEY=VALUE settings, and the operator is built
 * on the script's tensors (loom_te_op_apply), so that a script mixes te.compute
 * stages and library operators, one block per stage. */
#include "te_impl.h"

#include <stdio.h>
#include <string.h>

#define TOPI_MAX_PARAMS 10
#define TOPI_MAX_SETTINGS 16
#define TOPI_MAX_INPUTS 4

typedef struct topi_fn topi_fn;

typedef struct topi_call {
  loom_te *te;
  const topi_fn *fn;
  const te_arg *p[TOPI_MAX_PARAMS]; /* by parameter; NULL when not given */
  const char *params[TOPI_MAX_PARAMS];
  int n_params;
  const char *op; /* the library operator */
  const char *settings[TOPI_MAX_SETTINGS];
  int n_settings;
  loom_te_tensor *inputs[TOPI_MAX_INPUTS];
  int n_inputs;
  loom_diag *d;
} topi_call;

struct topi_fn {
  const char *name;   /* after "topi." */
  const char *op;     /* library operator; NULL when the mapper picks it */
  const char *params; /* topi's parameters in order, comma-separated */
  loom_status (*map)(topi_call *c);
  const char *layout; /* convolutions: the data layout; NULL: a parameter */
};

/* topi.matmul is the plain product named T_matmul, its operand not marked
 * free to re-layout (nn.matmul's is). */
static void plain_matmul(loom_te_tensor *y) {
  y->op_name = "T_matmul";
  y->buffer->name = "T_matmul";
  y->n_layout_free = 0;
}

static loom_status fail(topi_call *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static loom_status fail(topi_call *c, const char *fmt, ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return loom_diag_error(c->d, (loom_loc){0}, "topi.%s: %s", c->fn->name, buf);
}

/* ---- arguments ----------------------------------------------------------- */

static const te_arg *arg(const topi_call *c, const char *name) {
  for (int i = 0; i < c->n_params; i++)
    if (!strcmp(c->params[i], name))
      return c->p[i];
  return NULL;
}

static bool is_none(const te_arg *a) { return !a || a->kind == TE_ARG_NONE; }

static loom_status tensor_arg(topi_call *c, const char *name,
                              loom_te_tensor **out) {
  const te_arg *a = arg(c, name);
  if (!a || a->kind != TE_ARG_TENSOR)
    return fail(c, "%s must be a tensor", name);
  *out = a->tensors[0];
  return LOOM_OK;
}

/* An integer argument; def when it is not given (or None). */
static loom_status int_arg(topi_call *c, const char *name, int64_t def,
                           int64_t *out) {
  const te_arg *a = arg(c, name);
  *out = def;
  if (is_none(a))
    return LOOM_OK;
  if (a->kind == TE_ARG_BOOL) {
    *out = a->ints[0];
    return LOOM_OK;
  }
  if (a->kind != TE_ARG_INTS || a->n != 1)
    return fail(c, "%s must be an integer", name);
  *out = a->ints[0];
  return LOOM_OK;
}

static loom_status bool_arg(topi_call *c, const char *name, bool def,
                            bool *out) {
  int64_t v;
  TRY(int_arg(c, name, def, &v));
  *out = v != 0;
  return LOOM_OK;
}

/* One or more integers (an int or a list), up to max. */
static loom_status ints_arg(topi_call *c, const char *name, int64_t *out,
                            int max, int *n) {
  const te_arg *a = arg(c, name);
  if (is_none(a) || a->kind != TE_ARG_INTS || a->n > max)
    return fail(c, "%s must be an integer or a list of at most %d", name, max);
  memcpy(out, a->ints, sizeof *out * (size_t)a->n);
  *n = a->n;
  return LOOM_OK;
}

/* ---- settings ---------------------------------------------------------------- */

static loom_status set(topi_call *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static loom_status set(topi_call *c, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (c->n_settings >= TOPI_MAX_SETTINGS)
    return fail(c, "too many settings (internal)");
  const char *s = loom_arena_strdup(loom_te_arena(c->te), buf);
  if (!s)
    return LOOM_NOMEM;
  c->settings[c->n_settings++] = s;
  return LOOM_OK;
}

static const char *join(topi_call *c, const int64_t *v, int n) {
  char buf[256];
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < n && at < sizeof buf; i++)
    at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%lld", i ? "," : "",
                           (long long)v[i]);
  return loom_arena_strdup(loom_te_arena(c->te), buf);
}

static loom_status input(topi_call *c, loom_te_tensor *t) {
  if (c->n_inputs >= TOPI_MAX_INPUTS)
    return fail(c, "too many tensors (internal)");
  c->inputs[c->n_inputs++] = t;
  return LOOM_OK;
}

/* The constant shape of t; the library builds from constant extents. */
static loom_status shape_of(topi_call *c, loom_te_tensor *t, int64_t *s,
                            int *n) {
  *n = loom_te_ndim(t);
  for (int i = 0; i < *n; i++)
    if (!loom_ir_is_const_int(loom_te_dim(t, i), &s[i]))
      return fail(c, "tensor '%s' has a symbolic extent; operators from the "
                  "library take constant shapes", loom_te_name(t));
  return LOOM_OK;
}

static loom_status set_shape(topi_call *c, const char *key, loom_te_tensor *t) {
  int64_t s[TE_MAX_RANK];
  int n;
  TRY(shape_of(c, t, s, &n));
  const char *v = join(c, s, n);
  return v ? set(c, "%s=%s", key, v) : LOOM_NOMEM;
}

static loom_status set_dtype(topi_call *c, const char *key, loom_dtype t) {
  char buf[LOOM_DTYPE_STRLEN];
  return set(c, "%s=%s", key, loom_dtype_str(t, buf));
}

/* out_dtype, where given, must be the input's: the library's other
 * operators compute in their input dtype. */
static loom_status same_out_dtype(topi_call *c, loom_dtype t) {
  const te_arg *a = arg(c, "out_dtype");
  loom_dtype o;
  if (is_none(a))
    return LOOM_OK;
  if (a->kind != TE_ARG_STR || !loom_dtype_parse(a->s, strlen(a->s), &o))
    return fail(c, "out_dtype must be a dtype name");
  if (!loom_dtype_eq(o, t))
    return fail(c, "out_dtype=%s differs from the input's dtype, which the "
                "library's operator computes in", a->s);
  return LOOM_OK;
}

/* out_dtype, where given, passed on: matmul and the convolutions compute
 * their products in it. */
static loom_status pass_out_dtype(topi_call *c) {
  const te_arg *od = arg(c, "out_dtype");
  if (is_none(od))
    return LOOM_OK;
  if (od->kind != TE_ARG_STR)
    return fail(c, "out_dtype must be a dtype name");
  return set(c, "out_dtype=%s", od->s);
}

/* ---- mappers --------------------------------------------------------------- */

static loom_status map_unary(topi_call *c) {
  loom_te_tensor *x = NULL;
  TRY(tensor_arg(c, c->params[0], &x));
  TRY(set_shape(c, "shape", x));
  TRY(set_dtype(c, "dtype", loom_te_dtype(x)));
  return input(c, x);
}

static loom_status map_cast(topi_call *c) {
  const te_arg *a = arg(c, "dtype");
  loom_dtype t;
  if (is_none(a) || a->kind != TE_ARG_STR ||
      !loom_dtype_parse(a->s, strlen(a->s), &t))
    return fail(c, "dtype must be a dtype name");
  TRY(map_unary(c));
  return set(c, "out_dtype=%s", a->s);
}

static loom_status map_binary(topi_call *c) {
  loom_te_tensor *a = NULL, *b = NULL;
  TRY(tensor_arg(c, "lhs", &a));
  TRY(tensor_arg(c, "rhs", &b));
  TRY(set_shape(c, "a_shape", a));
  TRY(set_shape(c, "b_shape", b));
  TRY(set_dtype(c, "dtype", loom_te_dtype(a)));
  TRY(input(c, a));
  return input(c, b);
}

/* matmul, nn.matmul, nn.dense and nn.batch_matmul: the sizes from the
 * shapes, the layout from the transposes. */
static loom_status map_matmul(topi_call *c) {
  bool is_batch = !strcmp(c->op, "batch_matmul"), is_dense = !strcmp(c->op, "dense");
  loom_te_tensor *a = NULL, *b = NULL;
  TRY(tensor_arg(c, c->params[0], &a));
  TRY(tensor_arg(c, c->params[1], &b));
  bool ta = false, tb = is_dense || is_batch;
  static const char *const ta_names[] = {"transp_a", "transpose_a"};
  static const char *const tb_names[] = {"transp_b", "transpose_b"};
  for (int i = 0; i < 2; i++) {
    if (arg(c, ta_names[i]))
      TRY(bool_arg(c, ta_names[i], ta, &ta));
    if (arg(c, tb_names[i]))
      TRY(bool_arg(c, tb_names[i], tb, &tb));
  }
  int64_t as[3], bs[3];
  int na, nb, o = is_batch;
  TRY(shape_of(c, a, as, &na));
  TRY(shape_of(c, b, bs, &nb));
  if (na != 2 + o || nb != 2 + o)
    return fail(c, "takes %d-D tensors", 2 + o);
  int64_t M = ta ? as[o + 1] : as[o], K = ta ? as[o] : as[o + 1];
  int64_t N = tb ? bs[o] : bs[o + 1], Kb = tb ? bs[o + 1] : bs[o];
  if (K != Kb || (is_batch && as[0] != bs[0]))
    return fail(c, "the shapes of '%s' and '%s' do not multiply",
                loom_te_name(a), loom_te_name(b));
  if (is_batch)
    TRY(set(c, "B=%lld", (long long)as[0]));
  TRY(set(c, "M=%lld", (long long)M));
  TRY(set(c, "N=%lld", (long long)N));
  TRY(set(c, "K=%lld", (long long)K));
  TRY(set_dtype(c, "dtype", loom_te_dtype(a)));
  if (is_dense) {
    if (!tb)
      return fail(c, "the weight is (N, K)");
    TRY(same_out_dtype(c, loom_te_dtype(a)));
  } else {
    TRY(set(c, "layout=%c%c", ta ? 'T' : 'N', tb ? 'T' : 'N'));
    TRY(pass_out_dtype(c));
  }
  TRY(input(c, a));
  TRY(input(c, b));
  const te_arg *bias = arg(c, "bias");
  if (!is_none(bias)) {
    if (is_dense || bias->kind != TE_ARG_TENSOR)
      return fail(c, "bias is supported as a tensor of N values by matmul");
    TRY(set(c, "bias=1"));
    TRY(input(c, bias->tensors[0]));
  }
  return LOOM_OK;
}

/* A convolution: N, C and the spatial extents from the data, K, the kernel
 * extents and the groups from the kernel, in the row's (or data_layout's)
 * layout; strides, padding and dilation as topi takes them. */
static loom_status map_conv(topi_call *c) {
  const char *layout = c->fn->layout;
  if (!layout) {
    const te_arg *l = arg(c, "data_layout");
    layout = is_none(l) ? "NCHW" : l->kind == TE_ARG_STR ? l->s : "";
  }
  bool is_cl = layout[1] != 'C';
  bool is_dw = !strcmp(c->op, "depthwise_conv2d");
  bool is_tr = !strcmp(c->op, "conv2d_transpose");
  int nsp = (int)strlen(layout) - 2;
  if (nsp < 1 || nsp > 3 || (is_cl && layout[nsp + 1] != 'C'))
    return fail(c, "layout %s is not supported", layout);
  loom_te_tensor *x = NULL, *w = NULL;
  TRY(tensor_arg(c, c->params[0], &x));
  TRY(tensor_arg(c, c->params[1], &w));
  int64_t xs[5], ws[5], r[3], st[3], dl[3], pad[6];
  int nx, nw, nst, ndl, npad;
  TRY(shape_of(c, x, xs, &nx));
  TRY(shape_of(c, w, ws, &nw));
  if (nx != nsp + 2 || nw != nsp + 2)
    return fail(c, "data and kernel are %d-D in layout %s", nsp + 2, layout);
  int64_t C = is_cl ? xs[nsp + 1] : xs[1], K, I;
  for (int i = 0; i < nsp; i++)
    r[i] = is_cl ? ws[i] : ws[2 + i];
  if (is_dw) {
    int64_t mult = is_cl ? ws[nsp + 1] : ws[1];
    if (mult != 1 || (is_cl ? ws[nsp] : ws[0]) != C)
      return fail(c, "the kernel must have C=%lld channels and multiplier 1",
                  (long long)C);
    K = C;
    I = 1;
  } else if (is_tr) {
    I = ws[0];
    K = ws[1];
  } else {
    I = is_cl ? ws[nsp] : ws[1];
    K = is_cl ? ws[nsp + 1] : ws[0];
  }
  int64_t groups = is_dw ? 1 : I > 0 && C % I == 0 ? C / I : 0;
  if (!groups || (is_tr && I != C))
    return fail(c, "the kernel's input channels (%lld) do not divide the "
                "data's (%lld)", (long long)I, (long long)C);
  if (arg(c, "groups")) {
    int64_t g;
    TRY(int_arg(c, "groups", groups, &g));
    if (g != groups)
      return fail(c, "groups=%lld does not match the shapes (%lld)",
                  (long long)g, (long long)groups);
  }
  const char *sk = arg(c, "strides") ? "strides" : "stride";
  TRY(ints_arg(c, sk, st, 3, &nst));
  const te_arg *pa = arg(c, "padding");
  if (pa && pa->kind == TE_ARG_STR && !strcmp(pa->s, "VALID")) {
    pad[0] = 0;
    npad = 1;
  } else {
    TRY(ints_arg(c, "padding", pad, 6, &npad));
  }
  if (arg(c, "dilation"))
    TRY(ints_arg(c, "dilation", dl, 3, &ndl));
  else
    dl[0] = 1, ndl = 1;
  if (arg(c, "output_padding")) {
    int64_t op[3];
    int nop;
    TRY(ints_arg(c, "output_padding", op, 3, &nop));
    for (int i = 0; i < nop; i++)
      if (op[i])
        return fail(c, "output_padding must be 0");
  }
  TRY(pass_out_dtype(c));
  static const char *const sp3[] = {"D", "H", "W"};
  const char *const *sp = nsp == 3 ? sp3 : sp3 + 1;
  TRY(set(c, "N=%lld", (long long)xs[0]));
  TRY(set(c, "C=%lld", (long long)C));
  for (int i = 0; i < nsp; i++)
    TRY(set(c, "%s=%lld", nsp == 1 ? "H" : sp[i],
            (long long)xs[(is_cl ? 1 : 2) + i]));
  if (!is_dw)
    TRY(set(c, "K=%lld", (long long)K));
  const char *rs = join(c, r, nsp), *ss = join(c, st, nst);
  const char *ps = join(c, pad, npad), *ds = join(c, dl, ndl);
  if (!rs || !ss || !ps || !ds)
    return LOOM_NOMEM;
  TRY(set(c, "R=%s", rs));
  TRY(set(c, "stride=%s", ss));
  TRY(set(c, "pad=%s", ps));
  TRY(set(c, "dilation=%s", ds));
  if (!is_dw && !is_tr)
    TRY(set(c, "groups=%lld", (long long)groups));
  TRY(set(c, "layout=%s", layout));
  TRY(set_dtype(c, "dtype", loom_te_dtype(x)));
  TRY(input(c, x));
  return input(c, w);
}

static loom_status map_softmax(topi_call *c) {
  int64_t axis;
  TRY(int_arg(c, "axis", -1, &axis));
  TRY(map_unary(c));
  return set(c, "axis=%lld", (long long)axis);
}

/* sum / max / min / prod over one axis or all (axis=None). */
static loom_status map_reduce(topi_call *c) {
  const te_arg *a = arg(c, "axis");
  bool keepdims;
  TRY(bool_arg(c, "keepdims", false, &keepdims));
  if (keepdims)
    return fail(c, "keepdims=True is supported by argmax and argmin only");
  TRY(map_unary(c));
  if (is_none(a))
    return set(c, "axis=all");
  if (a->kind != TE_ARG_INTS || a->n != 1)
    return fail(c, "axis must be None or one axis");
  return set(c, "axis=%lld", (long long)a->ints[0]);
}

static loom_status map_argreduce(topi_call *c) {
  const te_arg *a = arg(c, "axis");
  bool keepdims, last;
  TRY(bool_arg(c, "keepdims", false, &keepdims));
  TRY(bool_arg(c, "select_last_index", false, &last));
  if (last)
    return fail(c, "select_last_index=True is not supported");
  if (is_none(a) || a->kind != TE_ARG_INTS || a->n != 1)
    return fail(c, "axis must be one axis");
  TRY(map_unary(c));
  TRY(set(c, "axis=%lld", (long long)a->ints[0]));
  return set(c, "keepdims=%d", keepdims);
}

/* nn.pool2d with one window size, stride and padding for both dimensions,
 * NCHW, no dilation or ceil mode, average counting the padding. */
static loom_status map_pool2d(topi_call *c) {
  const te_arg *t = arg(c, "pool_type"), *l = arg(c, "layout");
  if (is_none(t) || t->kind != TE_ARG_STR ||
      (strcmp(t->s, "max") && strcmp(t->s, "avg")))
    return fail(c, "pool_type must be \"max\" or \"avg\"");
  if (!is_none(l) && (l->kind != TE_ARG_STR || strcmp(l->s, "NCHW")))
    return fail(c, "layout must be NCHW");
  bool ceil_mode, counts_pad;
  TRY(bool_arg(c, "ceil_mode", false, &ceil_mode));
  TRY(bool_arg(c, "count_include_pad", true, &counts_pad));
  if (ceil_mode || (!counts_pad && t->s[0] == 'a'))
    return fail(c, "ceil_mode=True and count_include_pad=False are not "
                "supported");
  static const char *const keys[] = {"kernel", "stride", "dilation",
                                     "padding"};
  int64_t v[4];
  for (int k = 0; k < 4; k++) {
    int64_t x[4];
    int n;
    TRY(ints_arg(c, keys[k], x, 4, &n));
    for (int i = 1; i < n; i++)
      if (x[i] != x[0])
        return fail(c, "%s must be the same in every dimension", keys[k]);
    v[k] = x[0];
  }
  if (v[2] != 1)
    return fail(c, "dilation must be 1");
  c->op = t->s[0] == 'm' ? "max_pool2d" : "avg_pool2d";
  TRY(map_unary(c));
  TRY(set(c, "kernel=%lld", (long long)v[0]));
  TRY(set(c, "stride=%lld", (long long)v[1]));
  return set(c, "pad=%lld", (long long)v[3]);
}

static loom_status map_global_pool(topi_call *c) {
  const te_arg *t = arg(c, "pool_type"), *l = arg(c, "layout");
  if (is_none(t) || t->kind != TE_ARG_STR || strcmp(t->s, "avg"))
    return fail(c, "pool_type must be \"avg\"");
  if (!is_none(l) && (l->kind != TE_ARG_STR || strcmp(l->s, "NCHW")))
    return fail(c, "layout must be NCHW");
  c->op = "global_avg_pool2d";
  return map_unary(c);
}

/* nn.layer_norm and nn.rms_norm over the last axis. */
static loom_status map_norm(topi_call *c) {
  loom_te_tensor *x = NULL, *g = NULL, *b = NULL;
  bool is_layer = !strcmp(c->op, "layer_norm");
  TRY(tensor_arg(c, "data", &x));
  TRY(tensor_arg(c, is_layer ? "gamma" : "weight", &g));
  if (is_layer)
    TRY(tensor_arg(c, "beta", &b));
  int64_t ax[4];
  int n, nd = loom_te_ndim(x);
  TRY(ints_arg(c, "axis", ax, 4, &n));
  if (n != 1 || (ax[0] != -1 && ax[0] != nd - 1))
    return fail(c, "axis must be the last one");
  const te_arg *e = arg(c, "epsilon");
  double eps = 1e-5;
  if (!is_none(e)) {
    if (e->kind != TE_ARG_FLOAT && e->kind != TE_ARG_INTS)
      return fail(c, "epsilon must be a number");
    eps = e->kind == TE_ARG_FLOAT ? e->f : (double)e->ints[0];
  }
  TRY(map_unary(c));
  TRY(set(c, "eps=%.17g", eps));
  TRY(input(c, g));
  return b ? input(c, b) : LOOM_OK;
}

static loom_status map_transpose(topi_call *c) {
  loom_te_tensor *x = NULL;
  TRY(tensor_arg(c, "a", &x));
  int n = loom_te_ndim(x), na = n;
  int64_t axes[TE_MAX_RANK];
  if (is_none(arg(c, "axes"))) {
    for (int i = 0; i < n; i++)
      axes[i] = n - 1 - i;
  } else {
    TRY(ints_arg(c, "axes", axes, TE_MAX_RANK, &na));
  }
  const char *s = join(c, axes, na);
  if (!s)
    return LOOM_NOMEM;
  TRY(map_unary(c));
  return set(c, "axes=%s", s);
}

static loom_status map_reshape(topi_call *c) {
  int64_t s[TE_MAX_RANK];
  int n;
  TRY(ints_arg(c, "newshape", s, TE_MAX_RANK, &n));
  const char *v = join(c, s, n);
  if (!v)
    return LOOM_NOMEM;
  TRY(map_unary(c));
  return set(c, "new_shape=%s", v);
}

static loom_status map_concatenate(topi_call *c) {
  const te_arg *a = arg(c, "a_tuple");
  if (is_none(a) || a->kind != TE_ARG_TENSORS || a->n != 2)
    return fail(c, "a_tuple must be two tensors");
  int64_t axis;
  TRY(int_arg(c, "axis", 0, &axis));
  TRY(set_shape(c, "a_shape", a->tensors[0]));
  TRY(set_shape(c, "b_shape", a->tensors[1]));
  TRY(set(c, "axis=%lld", (long long)axis));
  TRY(set_dtype(c, "dtype", loom_te_dtype(a->tensors[0])));
  TRY(input(c, a->tensors[0]));
  return input(c, a->tensors[1]);
}

/* nn.pad with the same padding before and after each dimension. */
static loom_status map_pad(topi_call *c) {
  loom_te_tensor *x = NULL;
  TRY(tensor_arg(c, "data", &x));
  int64_t b[TE_MAX_RANK], a[TE_MAX_RANK];
  int nb, na, n = loom_te_ndim(x);
  TRY(ints_arg(c, "pad_before", b, TE_MAX_RANK, &nb));
  if (is_none(arg(c, "pad_after"))) {
    memcpy(a, b, sizeof *a * (size_t)nb);
    na = nb;
  } else {
    TRY(ints_arg(c, "pad_after", a, TE_MAX_RANK, &na));
  }
  if (nb != n || na != n || memcmp(a, b, sizeof *a * (size_t)n))
    return fail(c, "pad_before and pad_after must give the same padding for "
                "each of the %d dimensions", n);
  const te_arg *v = arg(c, "pad_value");
  double value = 0;
  if (!is_none(v)) {
    if (v->kind != TE_ARG_FLOAT && v->kind != TE_ARG_INTS)
      return fail(c, "pad_value must be a number");
    value = v->kind == TE_ARG_FLOAT ? v->f : (double)v->ints[0];
  }
  const char *s = join(c, b, nb);
  if (!s)
    return LOOM_NOMEM;
  TRY(map_unary(c));
  TRY(set(c, "pad=%s", s));
  return set(c, "value=%.17g", value);
}

/* ---- the table --------------------------------------------------------- */

#define CONV_PARAMS "Input,Filter,stride,padding,dilation,out_dtype"

static const topi_fn fns[] = {
    {"nn.relu", "relu", "x", map_unary, NULL},
    {"sigmoid", "sigmoid", "x", map_unary, NULL},
    {"tanh", "tanh", "x", map_unary, NULL},
    {"exp", "exp", "x", map_unary, NULL},
    {"cast", "cast", "x,dtype", map_cast, NULL},
    {"add", "add", "lhs,rhs", map_binary, NULL},
    {"subtract", "subtract", "lhs,rhs", map_binary, NULL},
    {"multiply", "multiply", "lhs,rhs", map_binary, NULL},
    {"divide", "divide", "lhs,rhs", map_binary, NULL},
    {"maximum", "maximum", "lhs,rhs", map_binary, NULL},
    {"minimum", "minimum", "lhs,rhs", map_binary, NULL},
    {"matmul", "matmul", "a,b,transp_a,transp_b", map_matmul, NULL},
    {"nn.matmul", "matmul",
     "tensor_a,tensor_b,bias,out_dtype,transpose_a,transpose_b", map_matmul,
     NULL},
    {"nn.dense", "dense", "data,weight,bias,out_dtype", map_matmul, NULL},
    {"nn.batch_matmul", "batch_matmul",
     "x,y,oshape,out_dtype,transpose_a,transpose_b", map_matmul, NULL},
    {"nn.conv1d_ncw", "conv1d", "data,kernel,strides,padding,dilation,out_dtype",
     map_conv, "NCW"},
    {"nn.conv1d_nwc", "conv1d", "data,kernel,strides,padding,dilation,out_dtype",
     map_conv, "NWC"},
    {"nn.conv2d_nchw", "conv2d", CONV_PARAMS, map_conv, "NCHW"},
    {"nn.conv2d_nhwc", "conv2d", CONV_PARAMS, map_conv, "NHWC"},
    {"nn.group_conv2d_nchw", "conv2d",
     "Input,Filter,stride,padding,dilation,groups,out_dtype", map_conv, "NCHW"},
    {"nn.conv2d", "conv2d",
     "input,filter,strides,padding,dilation,data_layout,kernel_layout,"
     "out_dtype",
     map_conv, NULL},
    {"nn.conv3d_ncdhw", "conv3d",
     "Input,Filter,stride,padding,dilation,groups,out_dtype", map_conv,
     "NCDHW"},
    {"nn.conv3d_ndhwc", "conv3d",
     "Input,Filter,stride,padding,dilation,groups,out_dtype", map_conv,
     "NDHWC"},
    {"nn.depthwise_conv2d_nchw", "depthwise_conv2d", CONV_PARAMS, map_conv,
     "NCHW"},
    {"nn.depthwise_conv2d_nhwc", "depthwise_conv2d",
     "Input,Filter,stride,padding,dilation,kernel_layout,out_dtype", map_conv,
     "NHWC"},
    {"nn.conv2d_transpose_nchw", "conv2d_transpose",
     "Input,Filter,strides,padding,out_dtype,output_padding", map_conv,
     "NCHW"},
    {"nn.pool2d", NULL,
     "data,kernel,stride,dilation,padding,pool_type,ceil_mode,layout,"
     "count_include_pad",
     map_pool2d, NULL},
    {"nn.global_pool", NULL, "data,pool_type,layout", map_global_pool, NULL},
    {"sum", "sum", "data,axis,keepdims", map_reduce, NULL},
    {"max", "max", "data,axis,keepdims", map_reduce, NULL},
    {"min", "min", "data,axis,keepdims", map_reduce, NULL},
    {"prod", "prod", "data,axis,keepdims", map_reduce, NULL},
    {"argmax", "argmax", "data,axis,keepdims,select_last_index", map_argreduce,
     NULL},
    {"argmin", "argmin", "data,axis,keepdims,select_last_index", map_argreduce,
     NULL},
    {"nn.softmax", "softmax", "x,axis", map_softmax, NULL},
    {"nn.log_softmax", "log_softmax", "x,axis", map_softmax, NULL},
    {"nn.layer_norm", "layer_norm", "data,gamma,beta,axis,epsilon", map_norm,
     NULL},
    {"nn.rms_norm", "rms_norm", "data,weight,axis,epsilon", map_norm, NULL},
    {"transpose", "transpose", "a,axes", map_transpose, NULL},
    {"reshape", "reshape", "a,newshape", map_reshape, NULL},
    {"concatenate", "concatenate", "a_tuple,axis", map_concatenate, NULL},
    {"nn.pad", "pad", "data,pad_before,pad_after,pad_value", map_pad, NULL},
};

#define N_FNS (int)(sizeof fns / sizeof *fns)

static loom_status unknown(const char *name, loom_diag *d) {
  loom_buf b;
  loom_buf_init(&b);
  for (int i = 0; i < N_FNS; i++)
    loom_buf_printf(&b, "%s%s", i ? ", " : "", fns[i].name);
  loom_diag_error(d, (loom_loc){0},
                  "topi.%s has no counterpart in the operator library; the "
                  "topi functions known here are: %s",
                  name, b.data ? b.data : "");
  loom_buf_free(&b);
  return LOOM_ERROR;
}

/* Matches the arguments to the function's parameters, positional first. */
static loom_status bind_args(topi_call *c, const te_arg *args, int n) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", c->fn->params);
  for (char *p = buf, *comma; p && *p && c->n_params < TOPI_MAX_PARAMS;
       p = comma ? comma + 1 : NULL) {
    comma = strchr(p, ',');
    if (comma)
      *comma = 0;
    c->params[c->n_params] = loom_arena_strdup(loom_te_arena(c->te), p);
    if (!c->params[c->n_params++])
      return LOOM_NOMEM;
  }
  int pos = 0;
  for (int i = 0; i < n; i++) {
    int j = pos;
    if (args[i].name) {
      for (j = 0; j < c->n_params && strcmp(c->params[j], args[i].name); j++)
        ;
      if (j == c->n_params)
        return fail(c, "no parameter %s=; the parameters are %s",
                    args[i].name, c->fn->params);
    } else if (pos++ >= c->n_params) {
      return fail(c, "takes at most %d arguments (%s)", c->n_params,
                  c->fn->params);
    }
    if (c->p[j])
      return fail(c, "%s is given twice", c->params[j]);
    c->p[j] = &args[i];
  }
  return LOOM_OK;
}

loom_status te_topi_call(loom_te *te, const char *name, const te_arg *args,
                         int n, loom_te_tensor **out, loom_diag *d) {
  const topi_fn *fn = NULL;
  for (int i = 0; i < N_FNS && !fn; i++)
    if (!strcmp(fns[i].name, name))
      fn = &fns[i];
  if (!fn)
    return unknown(name, d);
  topi_call *c = loom_arena_alloc(loom_te_arena(te), sizeof *c);
  if (!c)
    return LOOM_NOMEM;
  memset(c, 0, sizeof *c);
  c->te = te;
  c->fn = fn;
  c->op = fn->op;
  c->d = d;
  TRY(bind_args(c, args, n));
  TRY(fn->map(c));
  const loom_te_op *op = loom_te_op_find(c->op);
  if (!op)
    return fail(c, "operator %s is missing (internal)", c->op);
  loom_status s = loom_te_op_apply(te, op, c->settings, c->n_settings,
                                   c->inputs, c->n_inputs, out, d);
  if (s == LOOM_OK && !strcmp(name, "matmul"))
    plain_matmul(*out);
  if (s == LOOM_ERROR && d->msg && strncmp(d->msg, "topi.", 5)) {
    /* Say which call the library's message is about. */
    char *m = loom_arena_printf(loom_te_arena(te), "topi.%s: %s", name,
                                d->msg);
    if (m) {
      loom_loc at = d->loc;
      const char *src = d->source;
      size_t len = d->source_len;
      loom_diag_free(d);
      loom_diag_init(d);
      loom_diag_set_source(d, src, len);
      loom_diag_error(d, at, "%s", m);
    }
  }
  return s;
}
