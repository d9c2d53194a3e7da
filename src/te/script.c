/* The TE script reader: runs the Python subset TVM users write to define
 * operators (te.placeholder, te.var, te.reduce_axis, te.compute with lambdas,
 * te.sum / max / min with where=, te.if_then_else, math intrinsics,
 * te.create_prim_func) on top of the TE builder. Values are Python ints,
 * floats, strings, lists and the TE objects; diagnostics point at the
 * offending expression. */
#include "script/ast.h"
#include "te_impl.h"

#include <math.h>
#include <string.h>

#define SC_MAX_NAMES 4096
#define SC_MAX_ITEMS 64
#define SC_MAX_DEPTH 100

typedef enum {
  V_NONE, V_INT, V_FLOAT, V_STR, V_BOOL, V_EXPR, V_TENSOR, V_AXIS, V_LIST,
  V_LAMBDA, V_FUNC, V_NS, V_REDUCER,
} val_kind;

typedef struct val {
  val_kind kind;
  int64_t i;            /* INT, BOOL */
  double f;             /* FLOAT */
  const char *s;        /* STR; NS: "tvm", "te" or "tir" */
  loom_expr *e;         /* EXPR */
  loom_te_tensor *t;    /* TENSOR */
  loom_var *v;          /* AXIS */
  struct val *items;    /* LIST */
  int n;
  const py_expr *lambda; /* LAMBDA: a lambda expression, or */
  const py_stmt *def;    /* a def (assignments, then a return) */
  struct val *reducer;   /* REDUCER: fcombine and fidentity */
  loom_func *func;
} val;

typedef struct binding {
  const char *name;
  val v;
} binding;

typedef struct sc_ctx {
  loom_te *te;
  loom_arena *a;
  loom_diag *d;
  binding names[SC_MAX_NAMES];
  int n_names;
  loom_func *result;
  int depth;
  bool has_failed; /* set inside a compute callback */
} sc_ctx;

static loom_status eval(sc_ctx *c, const py_expr *e, val *out);

static loom_status err(sc_ctx *c, const py_expr *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static loom_status err(sc_ctx *c, const py_expr *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  loom_diag_verror(c->d, e->loc, fmt, ap);
  va_end(ap);
  return LOOM_ERROR;
}

/* A builder error recorded by the TE context, reported at e. */
static loom_status te_check(sc_ctx *c, const py_expr *e) {
  if (loom_te_error(c->te))
    return err(c, e, "%s", loom_te_error(c->te));
  if (loom_arena_status(c->a) != LOOM_OK)
    return LOOM_NOMEM;
  return LOOM_OK;
}

static loom_status bind(sc_ctx *c, const py_expr *at, const char *name,
                        val v) {
  if (c->n_names >= SC_MAX_NAMES)
    return err(c, at, "too many names (limit is %d)", SC_MAX_NAMES);
  c->names[c->n_names].name = name;
  c->names[c->n_names].v = v;
  c->n_names++;
  return LOOM_OK;
}

static const val *lookup(const sc_ctx *c, const char *name) {
  for (int i = c->n_names - 1; i >= 0; i--)
    if (!strcmp(c->names[i].name, name))
      return &c->names[i].v;
  return NULL;
}

static const char *kind_name(val_kind k) {
  static const char *const names[] = {"None", "int", "float", "str", "bool",
                                      "expression", "tensor", "reduce axis",
                                      "list", "function", "prim func",
                                      "module", "comm_reducer"};
  return names[k];
}

/* ---- conversions ---------------------------------------------------------- */

static loom_status to_expr(sc_ctx *c, const py_expr *at, const val *v,
                           loom_expr **out) {
  switch (v->kind) {
  case V_INT:
    if (v->i < INT32_MIN || v->i > INT32_MAX)
      return err(c, at, "integer %lld does not fit in int32", (long long)v->i);
    *out = loom_te_int(c->te, v->i);
    break;
  case V_FLOAT: *out = loom_te_const(c->te, LOOM_FLOAT32, v->f); break;
  case V_BOOL: *out = loom_ir_int(c->a, LOOM_BOOL, v->i); break;
  case V_EXPR: *out = v->e; break;
  case V_AXIS: *out = loom_te_ref(c->te, v->v); break;
  default:
    return err(c, at, "expected a number or an expression, not a %s",
               kind_name(v->kind));
  }
  return *out ? LOOM_OK : LOOM_NOMEM;
}

static loom_status to_int(sc_ctx *c, const py_expr *at, const val *v,
                          int64_t *out) {
  if (v->kind == V_INT) {
    *out = v->i;
    return LOOM_OK;
  }
  if (v->kind == V_EXPR && loom_ir_is_const_int(v->e, out))
    return LOOM_OK;
  return err(c, at, "expected an integer constant, not a %s",
             kind_name(v->kind));
}

static loom_status to_str(sc_ctx *c, const py_expr *at, const val *v,
                          const char **out) {
  if (v->kind != V_STR)
    return err(c, at, "expected a string, not a %s", kind_name(v->kind));
  *out = v->s;
  return LOOM_OK;
}

static loom_status to_dtype(sc_ctx *c, const py_expr *at, const val *v,
                            loom_dtype *out) {
  const char *s = NULL;
  TRY(to_str(c, at, v, &s));
  if (!loom_dtype_parse(s, strlen(s), out))
    return err(c, at, "unknown dtype \"%s\"; write for example \"float32\"", s);
  return LOOM_OK;
}

/* A value as a list: lists and tuples as they are, anything else alone. */
static void as_list(const val *v, const val **items, int *n) {
  if (v->kind == V_LIST) {
    *items = v->items;
    *n = v->n;
  } else {
    *items = v;
    *n = 1;
  }
}

static val expr_val(loom_expr *e) {
  val v = {0};
  v.kind = V_EXPR;
  v.e = e;
  return v;
}

static loom_status expr_out(sc_ctx *c, const py_expr *at, loom_expr *e,
                            val *out) {
  TRY(te_check(c, at));
  if (!e)
    return LOOM_NOMEM;
  *out = expr_val(e);
  return LOOM_OK;
}

/* ---- call arguments ---------------------------------------------------------
 * Positional and keyword arguments matched against a parameter list. */

#define MAX_PARAMS 8

typedef struct call_args {
  val v[MAX_PARAMS];
  const py_expr *at[MAX_PARAMS];
  bool is_given[MAX_PARAMS];
  val rest[SC_MAX_ITEMS]; /* positional arguments past the named ones */
  int n_rest;
} call_args;

static loom_status get_args(sc_ctx *c, const py_expr *call, const char *fn,
                            const char *const *params, int n_params,
                            bool takes_rest, call_args *out) {
  memset(out, 0, sizeof *out);
  int np = call->u.call.n_args;
  for (int i = 0; i < np; i++) {
    const py_expr *x = call->u.call.args[i];
    if (i < n_params) {
      TRY(eval(c, x, &out->v[i]));
      out->at[i] = x;
      out->is_given[i] = true;
    } else if (takes_rest && out->n_rest < SC_MAX_ITEMS) {
      TRY(eval(c, x, &out->rest[out->n_rest++]));
    } else {
      return err(c, x, "%s takes at most %d positional arguments", fn,
                 takes_rest ? SC_MAX_ITEMS : n_params);
    }
  }
  for (int i = 0; i < call->u.call.n_kwargs; i++) {
    const py_keyword *kw = &call->u.call.kwargs[i];
    int j = 0;
    while (j < n_params && (!kw->name || strcmp(params[j], kw->name)))
      j++;
    if (j == n_params) {
      loom_buf b;
      loom_buf_init(&b);
      for (int k = 0; k < n_params; k++)
        loom_buf_printf(&b, "%s%s=", k ? ", " : "", params[k]);
      loom_diag_error(c->d, kw->loc, "%s has no argument %s=; it takes %s",
                      fn, kw->name ? kw->name : "**", b.data ? b.data : "none");
      loom_buf_free(&b);
      return LOOM_ERROR;
    }
    if (out->is_given[j])
      return err(c, kw->value, "%s: argument %s given twice", fn, params[j]);
    TRY(eval(c, kw->value, &out->v[j]));
    out->at[j] = kw->value;
    out->is_given[j] = true;
  }
  return LOOM_OK;
}

static loom_status need(sc_ctx *c, const py_expr *call, const char *fn,
                        const call_args *a, int i, const char *param) {
  if (!a->is_given[i])
    return err(c, call, "%s needs its argument %s", fn, param);
  return LOOM_OK;
}

/* ---- TE functions -------------------------------------------------------- */

static loom_status shape_of(sc_ctx *c, const py_expr *at, const val *v,
                            loom_expr **shape, int *n) {
  const val *items;
  as_list(v, &items, n);
  if (*n > TE_MAX_RANK)
    return err(c, at, "a shape has at most %d dimensions", TE_MAX_RANK);
  for (int i = 0; i < *n; i++)
    TRY(to_expr(c, at, &items[i], &shape[i]));
  return LOOM_OK;
}

static loom_status fn_placeholder(sc_ctx *c, const py_expr *call, val *out) {
  static const char *const params[] = {"shape", "dtype", "name"};
  call_args a;
  TRY(get_args(c, call, "te.placeholder", params, 3, false, &a));
  TRY(need(c, call, "te.placeholder", &a, 0, "shape"));
  loom_expr *shape[TE_MAX_RANK];
  int n;
  TRY(shape_of(c, a.at[0], &a.v[0], shape, &n));
  loom_dtype t = LOOM_FLOAT32;
  const char *name = "placeholder";
  if (a.is_given[1])
    TRY(to_dtype(c, a.at[1], &a.v[1], &t));
  if (a.is_given[2])
    TRY(to_str(c, a.at[2], &a.v[2], &name));
  out->kind = V_TENSOR;
  out->t = loom_te_placeholder(c->te, name, shape, n, t);
  return te_check(c, call);
}

static loom_status fn_var(sc_ctx *c, const py_expr *call, val *out) {
  static const char *const params[] = {"name", "dtype"};
  call_args a;
  TRY(get_args(c, call, "te.var", params, 2, false, &a));
  const char *name = "v";
  if (a.is_given[0])
    TRY(to_str(c, a.at[0], &a.v[0], &name));
  if (a.is_given[1]) {
    loom_dtype t;
    TRY(to_dtype(c, a.at[1], &a.v[1], &t));
    if (!loom_dtype_eq(t, LOOM_INT32))
      return err(c, a.at[1], "te.var sizes are int32 here");
  }
  loom_var *v = loom_te_var(c->te, name);
  if (!v)
    return LOOM_NOMEM;
  *out = expr_val(loom_te_ref(c->te, v));
  return out->e ? LOOM_OK : LOOM_NOMEM;
}

static loom_status fn_reduce_axis(sc_ctx *c, const py_expr *call, val *out) {
  static const char *const params[] = {"dom", "name"};
  call_args a;
  TRY(get_args(c, call, "te.reduce_axis", params, 2, false, &a));
  TRY(need(c, call, "te.reduce_axis", &a, 0, "dom"));
  const val *items;
  int n;
  as_list(&a.v[0], &items, &n);
  if (n != 2)
    return err(c, a.at[0], "te.reduce_axis takes its range as (min, end)");
  /* The range is (min, end); the axis keeps min and end - min, as TVM's
   * Range(begin, end) does. */
  loom_expr *lo, *hi;
  TRY(to_expr(c, a.at[0], &items[0], &lo));
  TRY(to_expr(c, a.at[0], &items[1], &hi));
  loom_expr *ext = loom_te_sub(c->te, hi, lo);
  const char *name = "rv";
  if (a.is_given[1])
    TRY(to_str(c, a.at[1], &a.v[1], &name));
  out->kind = V_AXIS;
  out->v = loom_te_reduce_axis_range(c->te, lo, ext, name);
  return te_check(c, call);
}

/* ---- user functions ------------------------------------------------------
 * A lambda, or a def whose body is assignments ending in a return, called
 * with its parameters bound to values; the bindings end with the call. */

static int fn_n_params(const val *f) {
  return f->def ? f->def->u.func.n_args : f->lambda->u.lambda.n_params;
}

static const char *fn_param(const val *f, int i) {
  return f->def ? f->def->u.func.args[i].name : f->lambda->u.lambda.params[i];
}

static loom_status run_stmt(sc_ctx *c, const py_stmt *s);

static loom_status call_body(sc_ctx *c, const val *f, val *out) {
  if (!f->def)
    return eval(c, f->lambda->u.lambda.body, out);
  const py_block *b = &f->def->u.func.body;
  for (int i = 0; i < b->n_stmts; i++) {
    const py_stmt *s = b->stmts[i];
    if (s->kind == PY_S_RETURN) {
      if (!s->u.expr)
        return loom_diag_error(c->d, s->loc, "return needs a value here");
      return eval(c, s->u.expr, out);
    }
    if (s->kind != PY_S_ASSIGN && s->kind != PY_S_ANNASSIGN &&
        s->kind != PY_S_PASS && s->kind != PY_S_EXPR)
      return loom_diag_error(c->d, s->loc, "a function here holds assignments "
                                           "and a return; this statement is "
                                           "not supported");
    TRY(run_stmt(c, s));
  }
  return loom_diag_error(c->d, f->def->loc, "function '%s' never returns a "
                         "value", f->def->u.func.name);
}

static loom_status call_user(sc_ctx *c, const py_expr *at, const val *f,
                             const val *args, int n, val *out) {
  if (fn_n_params(f) != n)
    return err(c, at, "the function takes %d parameters but is given %d",
               fn_n_params(f), n);
  int mark = c->n_names;
  loom_status s = LOOM_OK;
  for (int i = 0; i < n && s == LOOM_OK; i++)
    s = bind(c, at, fn_param(f, i), args[i]);
  if (s == LOOM_OK)
    s = call_body(c, f, out);
  c->n_names = mark;
  return s;
}

typedef struct lambda_ctx {
  sc_ctx *c;
  const val *f;
  const py_expr *at;
} lambda_ctx;

/* Runs the function with its parameters bound to the indices. */
static loom_expr *run_lambda(loom_te *te, void *user, loom_expr *const *idx) {
  (void)te;
  lambda_ctx *l = user;
  sc_ctx *c = l->c;
  val args[TE_MAX_RANK], v;
  loom_expr *e = NULL;
  int n = fn_n_params(l->f);
  for (int i = 0; i < n; i++)
    args[i] = expr_val(idx[i]);
  if (call_user(c, l->at, l->f, args, n, &v) != LOOM_OK ||
      to_expr(c, l->at, &v, &e) != LOOM_OK) {
    c->has_failed = true;
    return NULL;
  }
  return e;
}

static loom_status fn_compute(sc_ctx *c, const py_expr *call, val *out) {
  static const char *const params[] = {"shape", "fcompute", "name", "tag",
                                       "attrs"};
  call_args a;
  TRY(get_args(c, call, "te.compute", params, 5, false, &a));
  TRY(need(c, call, "te.compute", &a, 0, "shape"));
  TRY(need(c, call, "te.compute", &a, 1, "fcompute"));
  loom_expr *shape[TE_MAX_RANK];
  int n;
  TRY(shape_of(c, a.at[0], &a.v[0], shape, &n));
  if (a.v[1].kind != V_LAMBDA)
    return err(c, a.at[1], "te.compute takes a lambda with one parameter per "
                           "dimension");
  const val *f = &a.v[1];
  if (fn_n_params(f) != n)
    return err(c, a.at[1], "the function takes %d parameters but the shape has "
                           "%d dimensions", fn_n_params(f), n);
  const char *names[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    names[i] = fn_param(f, i);
  const char *name = "compute";
  if (a.is_given[2])
    TRY(to_str(c, a.at[2], &a.v[2], &name));
  lambda_ctx l = {c, f, a.at[1]};
  c->has_failed = false;
  loom_te_tensor *t = loom_te_compute(c->te, name, shape, n, names,
                                      run_lambda, &l);
  if (c->has_failed)
    return LOOM_ERROR;
  TRY(te_check(c, call));
  if (a.is_given[4]) {
    const py_expr *d = a.at[4];
    if (d->kind != PY_DICT)
      return err(c, d, "attrs= takes a dict of names to ints or strings");
    for (int i = 0; i < d->u.dict.n_items; i++) {
      val k, v;
      const char *key = NULL;
      TRY(eval(c, d->u.dict.keys[i], &k));
      TRY(to_str(c, d->u.dict.keys[i], &k, &key));
      TRY(eval(c, d->u.dict.values[i], &v));
      if (!strcmp(key, "layout_free_placeholders")) {
        const val *items;
        int n_items;
        as_list(&v, &items, &n_items);
        for (int j = 0; j < n_items; j++) {
          if (items[j].kind != V_TENSOR)
            return err(c, d->u.dict.values[i], "layout_free_placeholders "
                       "takes a list of placeholders");
          loom_te_set_layout_free(c->te, t, items[j].t);
        }
        TRY(te_check(c, d->u.dict.values[i]));
        continue;
      }
      if (v.kind == V_STR)
        loom_te_set_attr_str(c->te, t, key, v.s);
      else {
        int64_t x;
        TRY(to_int(c, d->u.dict.values[i], &v, &x));
        loom_te_set_attr_int(c->te, t, key, x);
      }
    }
  }
  TRY(te_check(c, call));
  int n_out = loom_te_n_outputs(t);
  if (n_out == 1) {
    out->kind = V_TENSOR;
    out->t = t;
    return LOOM_OK;
  }
  /* A tuple reduction: the outputs, as TE's op.output(i). */
  out->kind = V_LIST;
  out->n = n_out;
  out->items = loom_arena_alloc(c->a, sizeof(val) * (size_t)n_out);
  if (!out->items)
    return LOOM_NOMEM;
  for (int i = 0; i < n_out; i++) {
    memset(&out->items[i], 0, sizeof(val));
    out->items[i].kind = V_TENSOR;
    out->items[i].t = loom_te_output(t, i);
  }
  return LOOM_OK;
}

/* te.sum / te.max / te.min: a reduction with axis=, or with two operands
 * and no axis the elementwise max / min (as TVM's comm_reducer). */
static loom_status fn_reduce(sc_ctx *c, const py_expr *call, loom_te_reducer r,
                             const char *fn, val *out) {
  static const char *const params[] = {"expr", "axis", "where", "init"};
  call_args a;
  TRY(get_args(c, call, fn, params, 4, false, &a));
  TRY(need(c, call, fn, &a, 0, "expr"));
  loom_expr *src;
  TRY(to_expr(c, a.at[0], &a.v[0], &src));
  if (a.is_given[3])
    return err(c, a.at[3], "%s: init= is not supported", fn);
  if (a.is_given[1] && a.v[1].kind != V_AXIS && a.v[1].kind != V_LIST) {
    if (r == LOOM_TE_SUM)
      return err(c, a.at[1], "te.sum takes axis= a reduce axis or a list");
    loom_expr *y;
    TRY(to_expr(c, a.at[1], &a.v[1], &y));
    return expr_out(c, call, loom_te_bin(c->te, r == LOOM_TE_MAX
                                                    ? LOOM_EXPR_MAX
                                                    : LOOM_EXPR_MIN,
                                         src, y),
                    out);
  }
  TRY(need(c, call, fn, &a, 1, "axis"));
  const val *items;
  int n;
  as_list(&a.v[1], &items, &n);
  loom_var *axes[SC_MAX_ITEMS];
  for (int i = 0; i < n; i++) {
    if (items[i].kind != V_AXIS)
      return err(c, a.at[1], "%s: axis= takes reduce axes (te.reduce_axis)",
                 fn);
    axes[i] = items[i].v;
  }
  loom_expr *where = NULL;
  if (a.is_given[2])
    TRY(to_expr(c, a.at[2], &a.v[2], &where));
  return expr_out(c, call, loom_te_reduce(c->te, r, src, axes, n, where), out);
}

/* te.comm_reducer(fcombine, fidentity, name): kept as its two functions
 * and applied when called (apply_reducer). */
static loom_status fn_comm_reducer(sc_ctx *c, const py_expr *call, val *out) {
  static const char *const params[] = {"fcombine", "fidentity", "name"};
  call_args a;
  TRY(get_args(c, call, "te.comm_reducer", params, 3, false, &a));
  TRY(need(c, call, "te.comm_reducer", &a, 0, "fcombine"));
  TRY(need(c, call, "te.comm_reducer", &a, 1, "fidentity"));
  for (int i = 0; i < 2; i++)
    if (a.v[i].kind != V_LAMBDA)
      return err(c, a.at[i], "te.comm_reducer takes functions (lambda or "
                             "def), not a %s", kind_name(a.v[i].kind));
  memset(out, 0, sizeof *out);
  out->kind = V_REDUCER;
  out->reducer = loom_arena_dup(c->a, a.v, sizeof(val) * 2);
  return out->reducer ? LOOM_OK : LOOM_NOMEM;
}

/* n expressions from a function's result: a tuple of n, or one when n is 1.
 * Plain numbers take the dtype of the value they stand for. */
static loom_status reducer_values(sc_ctx *c, const py_expr *at, const val *v,
                                  int n, loom_expr *const *src,
                                  loom_expr **out, const char *what) {
  const val *items;
  int m;
  as_list(v, &items, &m);
  if (m != n)
    return err(c, at, "the reducer's %s gives %d value%s for %d reduced",
               what, m, m == 1 ? "" : "s", n);
  for (int i = 0; i < n; i++) {
    if (items[i].kind == V_INT || items[i].kind == V_FLOAT)
      out[i] = loom_te_const(c->te, src[i]->dtype, items[i].kind == V_INT
                                                       ? (double)items[i].i
                                                       : items[i].f);
    else
      TRY(to_expr(c, at, &items[i], &out[i]));
    if (!out[i])
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}

/* A comm_reducer called as reducer(expr, axis=, where=): fcombine runs on
 * fresh variables of the sources' dtypes (tuples of them for several
 * values, as TE passes them) and fidentity on the dtype names. */
static loom_status apply_reducer(sc_ctx *c, const py_expr *call,
                                 const val *red, val *out) {
  static const char *const params[] = {"expr", "axis", "where", "init"};
  const char *fn = "comm_reducer";
  call_args a;
  TRY(get_args(c, call, fn, params, 4, false, &a));
  TRY(need(c, call, fn, &a, 0, "expr"));
  TRY(need(c, call, fn, &a, 1, "axis"));
  if (a.is_given[3])
    return err(c, a.at[3], "%s: init= is not supported", fn);
  const val *items;
  int n;
  as_list(&a.v[0], &items, &n);
  if (n > LOOM_TE_MAX_VALUES)
    return err(c, a.at[0], "a comm_reducer combines at most %d values",
               LOOM_TE_MAX_VALUES);
  loom_expr *src[LOOM_TE_MAX_VALUES], *res[LOOM_TE_MAX_VALUES],
      *ident[LOOM_TE_MAX_VALUES];
  loom_var *lhs[LOOM_TE_MAX_VALUES], *rhs[LOOM_TE_MAX_VALUES];
  val lv[LOOM_TE_MAX_VALUES], rv[LOOM_TE_MAX_VALUES], dt[LOOM_TE_MAX_VALUES];
  for (int i = 0; i < n; i++) {
    char buf[LOOM_DTYPE_STRLEN];
    TRY(to_expr(c, a.at[0], &items[i], &src[i]));
    lhs[i] = loom_ir_var(c->a, "x", src[i]->dtype);
    rhs[i] = loom_ir_var(c->a, "y", src[i]->dtype);
    memset(&dt[i], 0, sizeof dt[i]);
    dt[i].kind = V_STR;
    dt[i].s = loom_arena_strdup(c->a, loom_dtype_str(src[i]->dtype, buf));
    if (!lhs[i] || !rhs[i] || !dt[i].s)
      return LOOM_NOMEM;
    lv[i] = expr_val(loom_te_ref(c->te, lhs[i]));
    rv[i] = expr_val(loom_te_ref(c->te, rhs[i]));
  }
  val x = lv[0], y = rv[0], v;
  if (n > 1) {
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    x.kind = y.kind = V_LIST;
    x.n = y.n = n;
    x.items = lv;
    y.items = rv;
  }
  val xy[2] = {x, y};
  TRY(call_user(c, call, &red->reducer[0], xy, 2, &v));
  TRY(reducer_values(c, call, &v, n, src, res, "fcombine"));
  TRY(call_user(c, call, &red->reducer[1], dt, n, &v));
  TRY(reducer_values(c, call, &v, n, src, ident, "fidentity"));
  const val *ax;
  int na;
  as_list(&a.v[1], &ax, &na);
  loom_var *axes[SC_MAX_ITEMS];
  for (int i = 0; i < na && i < SC_MAX_ITEMS; i++) {
    if (ax[i].kind != V_AXIS)
      return err(c, a.at[1], "%s: axis= takes reduce axes (te.reduce_axis)",
                 fn);
    axes[i] = ax[i].v;
  }
  loom_expr *where = NULL;
  if (a.is_given[2])
    TRY(to_expr(c, a.at[2], &a.v[2], &where));
  loom_te_comm_reducer r = {n, lhs, rhs, res, ident};
  return expr_out(c, call,
                  loom_te_comm_reduce(c->te, &r, src, axes, na, where), out);
}

static loom_status fn_create_prim_func(sc_ctx *c, const py_expr *call,
                                       val *out) {
  static const char *const params[] = {"ops"};
  call_args a;
  TRY(get_args(c, call, "te.create_prim_func", params, 1, false, &a));
  TRY(need(c, call, "te.create_prim_func", &a, 0, "ops"));
  const val *items;
  int n;
  as_list(&a.v[0], &items, &n);
  loom_te_tensor *ts[SC_MAX_ITEMS];
  for (int i = 0; i < n; i++) {
    if (items[i].kind != V_TENSOR)
      return err(c, a.at[0], "te.create_prim_func takes a list of tensors; "
                             "item %d is a %s", i, kind_name(items[i].kind));
    ts[i] = items[i].t;
  }
  loom_func *f;
  loom_status s = loom_te_create_prim_func(c->te, ts, n, &f, c->d);
  if (s != LOOM_OK) {
    if (c->d->has_error && !c->d->loc.line)
      c->d->loc = call->loc;
    return s;
  }
  c->result = f;
  out->kind = V_FUNC;
  out->func = f;
  return LOOM_OK;
}

/* ---- topi ------------------------------------------------------------------ */

/* A script value as a topi argument. */
static loom_status topi_arg(sc_ctx *c, const py_expr *at, const val *v,
                            te_arg *out) {
  out->kind = TE_ARG_NONE;
  out->loc = at->loc;
  switch (v->kind) {
  case V_NONE: return LOOM_OK;
  case V_TENSOR:
    out->kind = TE_ARG_TENSOR;
    out->tensors[0] = v->t;
    out->n = 1;
    return LOOM_OK;
  case V_INT:
  case V_BOOL:
    out->kind = v->kind == V_INT ? TE_ARG_INTS : TE_ARG_BOOL;
    out->ints[0] = v->i;
    out->n = 1;
    return LOOM_OK;
  case V_FLOAT:
    out->kind = TE_ARG_FLOAT;
    out->f = v->f;
    return LOOM_OK;
  case V_STR:
    out->kind = TE_ARG_STR;
    out->s = v->s;
    return LOOM_OK;
  case V_EXPR:
    if (loom_ir_is_const_int(v->e, &out->ints[0])) {
      out->kind = TE_ARG_INTS;
      out->n = 1;
      return LOOM_OK;
    }
    break;
  case V_LIST:
    if (v->n > TE_ARG_MAX_ITEMS)
      return err(c, at, "a list of at most %d items is expected here",
                 TE_ARG_MAX_ITEMS);
    out->n = v->n;
    out->is_list = true;
    out->kind = v->n && v->items[0].kind == V_TENSOR ? TE_ARG_TENSORS
                                                     : TE_ARG_INTS;
    for (int i = 0; i < v->n; i++) {
      const val *x = &v->items[i];
      if (out->kind == TE_ARG_TENSORS && x->kind == V_TENSOR)
        out->tensors[i] = x->t;
      else if (out->kind == TE_ARG_INTS && x->kind == V_INT)
        out->ints[i] = x->i;
      else if (!(out->kind == TE_ARG_INTS && x->kind == V_EXPR &&
                 loom_ir_is_const_int(x->e, &out->ints[i])))
        return err(c, at, "a list of tensors or of integers is expected "
                          "here");
    }
    return LOOM_OK;
  default:
    break;
  }
  return err(c, at, "a %s cannot be passed to a topi function",
             kind_name(v->kind));
}

/* topi.NAME(...): an operator of the library on the script's tensors. */
static loom_status fn_topi(sc_ctx *c, const py_expr *call, const char *ns,
                           const char *m, val *out) {
  int np = call->u.call.n_args, nk = call->u.call.n_kwargs;
  if (np + nk > SC_MAX_ITEMS)
    return err(c, call, "too many arguments (limit is %d)", SC_MAX_ITEMS);
  te_arg *args = loom_arena_alloc(c->a, sizeof *args * (size_t)(np + nk + 1));
  if (!args)
    return LOOM_NOMEM;
  for (int i = 0; i < np + nk; i++) {
    const py_expr *x = i < np ? call->u.call.args[i]
                              : call->u.call.kwargs[i - np].value;
    val v;
    memset(&args[i], 0, sizeof args[i]);
    if (i >= np && !call->u.call.kwargs[i - np].name)
      return err(c, call, "**kwargs are not supported here");
    args[i].name = i < np ? NULL : call->u.call.kwargs[i - np].name;
    TRY(eval(c, x, &v));
    TRY(topi_arg(c, x, &v, &args[i]));
  }
  const char *name = strcmp(ns, "topi")
                         ? loom_arena_printf(c->a, "%s.%s", ns + 5, m)
                         : m;
  if (!name)
    return LOOM_NOMEM;
  loom_te_tensor *t = NULL;
  loom_status s = te_topi_call(c->te, name, args, np + nk, &t, c->d);
  if (s != LOOM_OK) {
    if (c->d->has_error && !c->d->loc.line)
      c->d->loc = call->loc;
    return s;
  }
  memset(out, 0, sizeof *out);
  out->kind = V_TENSOR;
  out->t = t;
  return te_check(c, call);
}

/* Intrinsics and helpers of te / tir, by name. */
static loom_status fn_misc(sc_ctx *c, const py_expr *call, const char *name,
                           val *out) {
  int na = call->u.call.n_args;
  val v[SC_MAX_ITEMS];
  loom_expr *e[SC_MAX_ITEMS];
  if (na > SC_MAX_ITEMS)
    return err(c, call, "too many arguments (limit is %d)", SC_MAX_ITEMS);
  if (call->u.call.n_kwargs && strcmp(name, "const"))
    return err(c, call, "%s takes no keyword arguments here", name);
  for (int i = 0; i < na; i++)
    TRY(eval(c, call->u.call.args[i], &v[i]));
  if (!strcmp(name, "const") || !strcmp(name, "Cast")) {
    /* tir.const(value, dtype) and tir.Cast(dtype, value) */
    bool is_cast = name[0] == 'C';
    val dv = {0};
    const py_expr *dat = call;
    if (na == 2) {
      dv = v[is_cast ? 0 : 1];
      dat = call->u.call.args[is_cast ? 0 : 1];
    } else if (!is_cast && na == 1 && call->u.call.n_kwargs == 1 &&
               call->u.call.kwargs[0].name &&
               !strcmp(call->u.call.kwargs[0].name, "dtype")) {
      TRY(eval(c, call->u.call.kwargs[0].value, &dv));
      dat = call->u.call.kwargs[0].value;
    } else if (!(na == 1 && !is_cast)) {
      return err(c, call, is_cast ? "tir.Cast takes (dtype, value)"
                                  : "tir.const takes (value, dtype)");
    }
    loom_dtype t = LOOM_INT32;
    const val *x = &v[is_cast && na == 2 ? 1 : 0];
    if (dv.kind != V_NONE)
      TRY(to_dtype(c, dat, &dv, &t));
    else if (x->kind == V_FLOAT)
      t = LOOM_FLOAT32;
    if (!is_cast && (x->kind == V_INT || x->kind == V_FLOAT))
      return expr_out(c, call, loom_te_const(c->te, t, x->kind == V_INT
                                                           ? (double)x->i
                                                           : x->f),
                      out);
    loom_expr *xe;
    TRY(to_expr(c, call, x, &xe));
    return expr_out(c, call, loom_te_cast(c->te, t, xe), out);
  }
  if (!strcmp(name, "max_value") || !strcmp(name, "min_value")) {
    loom_dtype t;
    if (na != 1)
      return err(c, call, "%s takes a dtype", name);
    TRY(to_dtype(c, call->u.call.args[0], &v[0], &t));
    return expr_out(c, call, name[1] == 'a' ? loom_te_max_value(c->te, t)
                                            : loom_te_min_value(c->te, t),
                    out);
  }
  for (int i = 0; i < na; i++)
    TRY(to_expr(c, call->u.call.args[i], &v[i], &e[i]));
  if (!strcmp(name, "all") || !strcmp(name, "any")) {
    if (na == 0)
      return err(c, call, "%s needs at least one condition", name);
    loom_expr *x = e[0];
    for (int i = 1; i < na; i++)
      x = loom_te_bin(c->te, name[1] == 'l' ? LOOM_EXPR_AND : LOOM_EXPR_OR, x,
                      e[i]);
    return expr_out(c, call, x, out);
  }
  static const struct {
    const char *name;
    loom_expr_kind k;
  } bins[] = {{"floordiv", LOOM_EXPR_FLOORDIV}, {"floormod", LOOM_EXPR_FLOORMOD},
              {"truncdiv", LOOM_EXPR_DIV},      {"truncmod", LOOM_EXPR_MOD},
              {"indexdiv", LOOM_EXPR_FLOORDIV}, {"indexmod", LOOM_EXPR_FLOORMOD},
              {"div", LOOM_EXPR_DIV}};
  for (size_t i = 0; i < sizeof bins / sizeof *bins; i++)
    if (!strcmp(name, bins[i].name)) {
      if (na != 2)
        return err(c, call, "%s takes two operands", name);
      return expr_out(c, call, loom_te_bin(c->te, bins[i].k, e[0], e[1]), out);
    }
  if (!strcmp(name, "if_then_else") || !strcmp(name, "Select")) {
    if (na != 3)
      return err(c, call, "%s takes (condition, then, else)", name);
    return expr_out(c, call,
                    name[0] == 'i' ? loom_te_if_then_else(c->te, e[0], e[1], e[2])
                                   : loom_te_select(c->te, e[0], e[1], e[2]),
                    out);
  }
  const char *op_name = !strcmp(name, "abs") ? "fabs"
                        : !strcmp(name, "power") ? "pow"
                                                 : name;
  int op = loom_op_lookup(op_name, strlen(op_name));
  if (op < 0)
    return err(c, call, "unknown function '%s'", name);
  return expr_out(c, call, loom_te_call(c->te, (loom_op)op, e, na), out);
}

static loom_status eval_call(sc_ctx *c, const py_expr *call, val *out) {
  const py_expr *f = call->u.call.func;
  if (f->kind == PY_ATTRIBUTE) {
    const char *m = f->u.attr.name;
    /* x.astype("float16") */
    if (!strcmp(m, "astype")) {
      val x, dv;
      loom_dtype t;
      loom_expr *xe;
      if (call->u.call.n_args != 1)
        return err(c, call, "astype takes a dtype");
      TRY(eval(c, f->u.attr.value, &x));
      TRY(eval(c, call->u.call.args[0], &dv));
      TRY(to_dtype(c, call->u.call.args[0], &dv, &t));
      TRY(to_expr(c, f->u.attr.value, &x, &xe));
      return expr_out(c, call, loom_te_cast(c->te, t, xe), out);
    }
    val ns;
    TRY(eval(c, f->u.attr.value, &ns));
    if (ns.kind != V_NS)
      return err(c, f, "'%s' is not a function of a %s", m,
                 kind_name(ns.kind));
    if (!strncmp(ns.s, "topi", 4))
      return fn_topi(c, call, ns.s, m, out);
    if (!strcmp(m, "placeholder")) return fn_placeholder(c, call, out);
    if (!strcmp(m, "var") || !strcmp(m, "size_var") || !strcmp(m, "Var"))
      return fn_var(c, call, out);
    if (!strcmp(m, "reduce_axis")) return fn_reduce_axis(c, call, out);
    if (!strcmp(m, "compute")) return fn_compute(c, call, out);
    if (!strcmp(m, "sum")) return fn_reduce(c, call, LOOM_TE_SUM, "te.sum", out);
    if (!strcmp(m, "max")) return fn_reduce(c, call, LOOM_TE_MAX, "te.max", out);
    if (!strcmp(m, "min")) return fn_reduce(c, call, LOOM_TE_MIN, "te.min", out);
    if (!strcmp(m, "create_prim_func"))
      return fn_create_prim_func(c, call, out);
    if (!strcmp(m, "comm_reducer"))
      return fn_comm_reducer(c, call, out);
    return fn_misc(c, call, m, out);
  }
  if (f->kind == PY_NAME && !strcmp(f->u.name, "range"))
    return err(c, call, "loops are not part of a TE script; use te.compute");
  if (f->kind == PY_NAME) {
    const val *fv = lookup(c, f->u.name);
    if (fv && fv->kind == V_REDUCER)
      return apply_reducer(c, call, fv, out);
    if (fv && fv->kind == V_LAMBDA) {
      val args[SC_MAX_ITEMS];
      int n = call->u.call.n_args;
      if (n > SC_MAX_ITEMS || call->u.call.n_kwargs)
        return err(c, call, "a function here takes at most %d positional "
                   "arguments", SC_MAX_ITEMS);
      for (int i = 0; i < n; i++)
        TRY(eval(c, call->u.call.args[i], &args[i]));
      return call_user(c, call, fv, args, n, out);
    }
  }
  return err(c, call, "only te.* and tir.* functions can be called here");
}

/* ---- operators ----------------------------------------------------------------- */

static bool is_num(const val *v) { return v->kind == V_INT || v->kind == V_FLOAT; }

static int64_t py_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Python arithmetic on two plain numbers; 0 when it does not apply. */
static int num_binop(py_op op, const val *x, const val *y, val *out) {
  if (x->kind == V_INT && y->kind == V_INT) {
    int64_t a = x->i, b = y->i;
    out->kind = V_INT;
    /* Out of int64 or a division by zero falls through to the expression
     * path, which reports it as too large or leaves it to the program. */
    switch (op) {
    case PY_OP_ADD: return !__builtin_add_overflow(a, b, &out->i);
    case PY_OP_SUB: return !__builtin_sub_overflow(a, b, &out->i);
    case PY_OP_MUL: return !__builtin_mul_overflow(a, b, &out->i);
    case PY_OP_FLOORDIV:
      if (!b || (a == INT64_MIN && b == -1)) return 0;
      out->i = py_floordiv(a, b);
      return 1;
    case PY_OP_MOD:
      if (!b || (a == INT64_MIN && b == -1)) return 0;
      out->i = a - py_floordiv(a, b) * b;
      return 1;
    default: break;
    }
  }
  if (!is_num(x) || !is_num(y))
    return 0;
  double a = x->kind == V_INT ? (double)x->i : x->f;
  double b = y->kind == V_INT ? (double)y->i : y->f;
  out->kind = V_FLOAT;
  switch (op) {
  case PY_OP_ADD: out->f = a + b; return 1;
  case PY_OP_SUB: out->f = a - b; return 1;
  case PY_OP_MUL: out->f = a * b; return 1;
  case PY_OP_DIV: out->f = a / b; return b != 0;
  case PY_OP_POW: out->f = pow(a, b); return 1;
  default: return 0;
  }
}

static loom_status binop(sc_ctx *c, const py_expr *e, py_op op, const val *x,
                         const val *y, val *out) {
  if (num_binop(op, x, y, out))
    return LOOM_OK;
  loom_expr *a, *b;
  TRY(to_expr(c, e, x, &a));
  TRY(to_expr(c, e, y, &b));
  /* A Python float meeting an integer expression makes a float32 one. */
  if (x->kind == V_FLOAT && loom_dtype_is_int(b->dtype))
    b = loom_te_cast(c->te, LOOM_FLOAT32, b);
  if (y->kind == V_FLOAT && loom_dtype_is_int(a->dtype))
    a = loom_te_cast(c->te, LOOM_FLOAT32, a);
  loom_expr_kind k;
  switch (op) {
  case PY_OP_ADD: k = LOOM_EXPR_ADD; break;
  case PY_OP_SUB: k = LOOM_EXPR_SUB; break;
  case PY_OP_MUL: k = LOOM_EXPR_MUL; break;
  case PY_OP_DIV: k = LOOM_EXPR_DIV; break;
  case PY_OP_FLOORDIV: k = LOOM_EXPR_FLOORDIV; break;
  case PY_OP_MOD: k = LOOM_EXPR_FLOORMOD; break;
  case PY_OP_AND: k = LOOM_EXPR_AND; break;
  case PY_OP_OR: k = LOOM_EXPR_OR; break;
  case PY_OP_LT: k = LOOM_EXPR_LT; break;
  case PY_OP_LE: k = LOOM_EXPR_LE; break;
  case PY_OP_GT: k = LOOM_EXPR_GT; break;
  case PY_OP_GE: k = LOOM_EXPR_GE; break;
  case PY_OP_EQ: k = LOOM_EXPR_EQ; break;
  case PY_OP_NE: k = LOOM_EXPR_NE; break;
  case PY_OP_POW: {
    loom_expr *args[2] = {a, b};
    if (!loom_dtype_eq(a->dtype, b->dtype))
      args[1] = loom_te_cast(c->te, a->dtype, b);
    return expr_out(c, e, loom_te_call(c->te, LOOM_OP_POW, args, 2), out);
  }
  default:
    return err(c, e, "operator '%s' is not supported on expressions",
               py_op_text(op));
  }
  return expr_out(c, e, loom_te_bin(c->te, k, a, b), out);
}

static loom_status eval_compare(sc_ctx *c, const py_expr *e, val *out) {
  val prev, acc = {0};
  TRY(eval(c, e->u.compare.operands[0], &prev));
  for (int i = 0; i < e->u.compare.n_ops; i++) {
    val next, one;
    TRY(eval(c, e->u.compare.operands[i + 1], &next));
    TRY(binop(c, e, e->u.compare.ops[i], &prev, &next, &one));
    if (i == 0)
      acc = one;
    else
      TRY(binop(c, e, PY_OP_AND, &acc, &one, &acc));
    prev = next;
  }
  *out = acc;
  return LOOM_OK;
}

static loom_status eval_subscript(sc_ctx *c, const py_expr *e, val *out) {
  val base, index;
  TRY(eval(c, e->u.sub.value, &base));
  TRY(eval(c, e->u.sub.index, &index));
  const val *items;
  int n;
  as_list(&index, &items, &n);
  if (base.kind == V_TENSOR) {
    loom_expr *idx[TE_MAX_RANK];
    if (n > TE_MAX_RANK)
      return err(c, e, "too many indices");
    for (int i = 0; i < n; i++)
      TRY(to_expr(c, e->u.sub.index, &items[i], &idx[i]));
    return expr_out(c, e, loom_te_at(c->te, base.t, idx, n), out);
  }
  if (base.kind == V_LIST) {
    int64_t i;
    TRY(to_int(c, e->u.sub.index, &index, &i));
    if (i < 0)
      i += base.n;
    if (i < 0 || i >= base.n)
      return err(c, e->u.sub.index, "index %lld is out of range for a list "
                 "of %d", (long long)i, base.n);
    *out = base.items[i];
    return LOOM_OK;
  }
  return err(c, e, "a %s cannot be indexed", kind_name(base.kind));
}

static loom_status eval_attribute(sc_ctx *c, const py_expr *e, val *out) {
  val base;
  TRY(eval(c, e->u.attr.value, &base));
  const char *m = e->u.attr.name;
  memset(out, 0, sizeof *out);
  if (base.kind == V_NS && (!strcmp(m, "te") || !strcmp(m, "tir") ||
                            !strcmp(m, "topi"))) {
    out->kind = V_NS;
    out->s = m;
    return LOOM_OK;
  }
  if (base.kind == V_NS && !strcmp(base.s, "topi") &&
      (!strcmp(m, "nn") || !strcmp(m, "image"))) {
    out->kind = V_NS;
    out->s = !strcmp(m, "nn") ? "topi.nn" : "topi.image";
    return LOOM_OK;
  }
  if (base.kind == V_TENSOR && !strcmp(m, "shape")) {
    int n = loom_te_ndim(base.t);
    out->kind = V_LIST;
    out->n = n;
    out->items = loom_arena_alloc(c->a, sizeof(val) * (size_t)(n + 1));
    if (!out->items)
      return LOOM_NOMEM;
    for (int i = 0; i < n; i++) {
      loom_expr *d = loom_te_dim(base.t, i);
      int64_t v;
      if (loom_ir_is_const_int(d, &v)) {
        out->items[i].kind = V_INT;
        out->items[i].i = v;
      } else {
        out->items[i] = expr_val(d);
      }
    }
    return LOOM_OK;
  }
  if (base.kind == V_TENSOR && !strcmp(m, "dtype")) {
    char buf[LOOM_DTYPE_STRLEN];
    out->kind = V_STR;
    out->s = loom_arena_strdup(c->a, loom_dtype_str(loom_te_dtype(base.t), buf));
    return out->s ? LOOM_OK : LOOM_NOMEM;
  }
  if (base.kind == V_TENSOR && !strcmp(m, "ndim")) {
    out->kind = V_INT;
    out->i = loom_te_ndim(base.t);
    return LOOM_OK;
  }
  if (base.kind == V_AXIS && !strcmp(m, "var")) {
    *out = base;
    return LOOM_OK;
  }
  if (base.kind == V_NS)
    return err(c, e, "'%s.%s' is not a value; call it", base.s, m);
  return err(c, e, "a %s has no attribute '%s'", kind_name(base.kind), m);
}

static loom_status eval_list(sc_ctx *c, const py_expr *e, val *out) {
  int n = e->u.seq.n_items;
  memset(out, 0, sizeof *out);
  out->kind = V_LIST;
  out->n = n;
  out->items = loom_arena_alloc(c->a, sizeof(val) * (size_t)(n + 1));
  if (!out->items)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++)
    TRY(eval(c, e->u.seq.items[i], &out->items[i]));
  return LOOM_OK;
}

static loom_status eval_inner(sc_ctx *c, const py_expr *e, val *out) {
  memset(out, 0, sizeof *out);
  switch (e->kind) {
  case PY_INT:
    if (e->u.num.is_big)
      return err(c, e, "integer literal %s is too large", e->u.num.text);
    out->kind = V_INT;
    out->i = e->u.num.int_value;
    return LOOM_OK;
  case PY_FLOAT:
    out->kind = V_FLOAT;
    out->f = e->u.float_value;
    return LOOM_OK;
  case PY_STR:
    out->kind = V_STR;
    out->s = e->u.str;
    return LOOM_OK;
  case PY_TRUE:
  case PY_FALSE:
    out->kind = V_BOOL;
    out->i = e->kind == PY_TRUE;
    return LOOM_OK;
  case PY_NONE:
  case PY_DICT: /* read where used (attrs=) */
    return LOOM_OK;
  case PY_NAME: {
    const val *v = lookup(c, e->u.name);
    if (!v)
      return err(c, e, "name '%s' is not defined", e->u.name);
    *out = *v;
    return LOOM_OK;
  }
  case PY_TUPLE:
  case PY_LIST:
    return eval_list(c, e, out);
  case PY_LAMBDA:
    out->kind = V_LAMBDA;
    out->lambda = e;
    return LOOM_OK;
  case PY_CALL:
    return eval_call(c, e, out);
  case PY_SUBSCRIPT:
    return eval_subscript(c, e, out);
  case PY_ATTRIBUTE:
    return eval_attribute(c, e, out);
  case PY_COMPARE:
    return eval_compare(c, e, out);
  case PY_BINOP:
  case PY_BOOLOP: {
    val x, y;
    TRY(eval(c, e->u.bin.a, &x));
    TRY(eval(c, e->u.bin.b, &y));
    return binop(c, e, e->u.bin.op, &x, &y, out);
  }
  case PY_UNARY: {
    val x;
    TRY(eval(c, e->u.unary.a, &x));
    if (e->u.unary.op == PY_OP_POS)
      return *out = x, LOOM_OK;
    if (e->u.unary.op == PY_OP_NEG && x.kind == V_INT && x.i != INT64_MIN)
      return out->kind = V_INT, out->i = -x.i, LOOM_OK;
    if (e->u.unary.op == PY_OP_NEG && x.kind == V_FLOAT)
      return out->kind = V_FLOAT, out->f = -x.f, LOOM_OK;
    loom_expr *a;
    TRY(to_expr(c, e, &x, &a));
    if (e->u.unary.op == PY_OP_NEG)
      return expr_out(c, e, loom_te_sub(c->te, loom_te_const(c->te, a->dtype, 0),
                                        a),
                      out);
    if (e->u.unary.op == PY_OP_NOT)
      return expr_out(c, e, loom_ir_not(c->a, a), out);
    return err(c, e, "operator '~' is not supported");
  }
  case PY_IFEXP: {
    val cond;
    TRY(eval(c, e->u.ifexp.cond, &cond));
    if (cond.kind != V_BOOL && cond.kind != V_INT)
      return err(c, e, "a conditional expression needs a Python condition; "
                       "use te.if_then_else for expressions");
    return eval(c, cond.i ? e->u.ifexp.t : e->u.ifexp.f, out);
  }
  default:
    return err(c, e, "this expression is not part of a TE script");
  }
}

static loom_status eval(sc_ctx *c, const py_expr *e, val *out) {
  if (!e)
    return LOOM_NOMEM;
  if (c->depth >= SC_MAX_DEPTH)
    return err(c, e, "expression nested too deeply (limit is %d)",
               SC_MAX_DEPTH);
  c->depth++;
  loom_status s = eval_inner(c, e, out);
  c->depth--;
  return s;
}

/* ---- statements ---------------------------------------------------------------- */

static loom_status assign(sc_ctx *c, const py_expr *target, const val *v) {
  if (target->kind == PY_NAME)
    return bind(c, target, target->u.name, *v);
  if (target->kind == PY_TUPLE || target->kind == PY_LIST) {
    if (v->kind != V_LIST || v->n != target->u.seq.n_items)
      return err(c, target, "cannot unpack a %s into %d names",
                 kind_name(v->kind), target->u.seq.n_items);
    for (int i = 0; i < v->n; i++)
      TRY(assign(c, target->u.seq.items[i], &v->items[i]));
    return LOOM_OK;
  }
  return err(c, target, "only names can be assigned here");
}

static loom_status run_stmt(sc_ctx *c, const py_stmt *s) {
  val v;
  switch (s->kind) {
  case PY_S_IMPORT:
  case PY_S_PASS:
    return LOOM_OK;
  case PY_S_EXPR:
    return eval(c, s->u.expr, &v);
  case PY_S_ASSIGN:
    TRY(eval(c, s->u.assign.value, &v));
    return assign(c, s->u.assign.target, &v);
  case PY_S_ANNASSIGN:
    if (!s->u.ann.value)
      return LOOM_OK;
    TRY(eval(c, s->u.ann.value, &v));
    return assign(c, s->u.ann.target, &v);
  case PY_S_FUNCDEF:
    if (s->n_decorators)
      return loom_diag_error(c->d, s->loc, "decorated functions are not part "
                                           "of a TE script");
    for (int i = 0; i < s->u.func.n_args; i++)
      if (s->u.func.args[i].default_value || !s->u.func.args[i].name)
        return loom_diag_error(c->d, s->u.func.args[i].loc,
                               "function parameters here are plain names");
    memset(&v, 0, sizeof v);
    v.kind = V_LAMBDA;
    v.def = s;
    if (c->n_names >= SC_MAX_NAMES)
      return loom_diag_error(c->d, s->loc, "too many names (limit is %d)",
                             SC_MAX_NAMES);
    c->names[c->n_names].name = s->u.func.name;
    c->names[c->n_names++].v = v;
    return LOOM_OK;
  default:
    return loom_diag_error(c->d, s->loc,
                           "a TE script holds imports, assignments and calls; "
                           "this statement is not supported");
  }
}

loom_status loom_te_read_script(const char *text, size_t len, const char *file,
                                loom_arena *a, loom_func **out, loom_diag *d) {
  loom_diag_set_source(d, text, len);
  py_module *m;
  TRY(py_parse(text, len, file, a, &m, d));
  sc_ctx *c = loom_arena_alloc(a, sizeof *c);
  loom_te *te = loom_te_new(a);
  if (!c || !te)
    return LOOM_NOMEM;
  c->te = te;
  c->a = a;
  c->d = d;
  static const char *const modules[] = {"tvm", "te", "tir", "topi"};
  for (int i = 0; i < 4; i++) {
    val ns = {0};
    ns.kind = V_NS;
    ns.s = modules[i];
    c->names[c->n_names].name = modules[i];
    c->names[c->n_names++].v = ns;
  }
  for (int i = 0; i < m->body.n_stmts; i++) {
    loom_status s = run_stmt(c, m->body.stmts[i]);
    if (s == LOOM_NOMEM || loom_arena_status(a) != LOOM_OK) {
      loom_diag_error(d, (loom_loc){0}, "out of memory");
      return LOOM_NOMEM;
    }
    TRY(s);
  }
  if (!c->result)
    return loom_diag_error(d, (loom_loc){file, 1, 1},
                           "the script never calls te.create_prim_func");
  *out = c->result;
  return LOOM_OK;
}
