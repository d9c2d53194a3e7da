/* Buffers of TVMScript: the declaration calls (T.Buffer, T.match_buffer,
 * T.alloc_buffer, T.sblock_alloc_buffer, T.decl_buffer) with TVM's options,
 * and buffer regions (A[0:16, vi]) as T.reads, T.writes and match_buffer
 * sources write them. */
#include "script/read.h"

#include <string.h>

enum {
  A_SHAPE,
  A_DTYPE,
  A_DATA,
  A_STRIDES,
  A_ELEM_OFFSET,
  A_SCOPE,
  A_ALIGN,
  A_OFFSET_FACTOR,
  A_BUFFER_TYPE,
  A_AXIS_SEPARATORS,
  A_ANNOTATIONS,
  A_COUNT_
};

/* Parameter lists in TVM's positional order, each mapped to the slot it
 * fills; -1 marks match_buffer's first argument, which the caller reads. */
typedef struct form_params {
  const char *what;
  const char *names[12];
  int slots[12];
  int n;
} form_params;

static const form_params forms[] = {
    [BUF_PARAM] = {"T.Buffer",
                   {"shape", "dtype", "data", "strides", "elem_offset", "scope",
                    "align", "offset_factor", "buffer_type", "axis_separators"},
                   {A_SHAPE, A_DTYPE, A_DATA, A_STRIDES, A_ELEM_OFFSET, A_SCOPE,
                    A_ALIGN, A_OFFSET_FACTOR, A_BUFFER_TYPE, A_AXIS_SEPARATORS},
                   10},
    [BUF_MATCH] = {"T.match_buffer",
                   {"param", "shape", "dtype", "data", "strides", "elem_offset",
                    "scope", "align", "offset_factor", "buffer_type",
                    "axis_separators"},
                   {-1, A_SHAPE, A_DTYPE, A_DATA, A_STRIDES, A_ELEM_OFFSET,
                    A_SCOPE, A_ALIGN, A_OFFSET_FACTOR, A_BUFFER_TYPE,
                    A_AXIS_SEPARATORS},
                   11},
    [BUF_BLOCK_ALLOC] = {"T.alloc_buffer",
                         {"shape", "dtype", "data", "strides", "elem_offset",
                          "scope", "align", "offset_factor", "buffer_type",
                          "axis_separators"},
                         {A_SHAPE, A_DTYPE, A_DATA, A_STRIDES, A_ELEM_OFFSET,
                          A_SCOPE, A_ALIGN, A_OFFSET_FACTOR, A_BUFFER_TYPE,
                          A_AXIS_SEPARATORS},
                         10},
    [BUF_STMT_ALLOC] = {"T.alloc_buffer",
                        {"shape", "dtype", "scope", "annotations"},
                        {A_SHAPE, A_DTYPE, A_SCOPE, A_ANNOTATIONS},
                        4},
    [BUF_DECL] = {"T.decl_buffer",
                  {"shape", "dtype", "data", "strides", "elem_offset", "scope",
                   "align", "offset_factor", "buffer_type", "axis_separators"},
                  {A_SHAPE, A_DTYPE, A_DATA, A_STRIDES, A_ELEM_OFFSET, A_SCOPE,
                   A_ALIGN, A_OFFSET_FACTOR, A_BUFFER_TYPE, A_AXIS_SEPARATORS},
                  10},
};

/* One shape, stride or offset entry. A string holds an expression ("n",
 * "(n + 31) // 32 * 32") whose unknown names become new int32 variables,
 * as TVM's printer writes variables that a buffer defines. */
static loom_status dim_expr(rd_ctx *c, const py_expr *e, bool define_names,
                            loom_expr **out) {
  bool saved = c->define_unknown_names;
  const loom_loc *saved_loc = c->loc_override;
  loom_status st;
  if (e->kind == PY_STR) {
    const py_expr *parsed;
    TRY(rd_parse_string_expr(c, e, &parsed));
    c->define_unknown_names = true;
    c->loc_override = &e->loc;
    st = rd_int_expr(c, parsed, NULL, out);
  } else {
    c->define_unknown_names = define_names;
    st = rd_int_expr(c, e, NULL, out);
  }
  c->define_unknown_names = saved;
  c->loc_override = saved_loc;
  return st;
}

static bool is_new_typevar(const rd_ctx *c, const py_expr *e) {
  if (e->kind != PY_NAME || !e->u.name || rd_lookup(c, e->u.name))
    return false;
  for (int i = 0; i < c->typevars.n; i++)
    if (!strcmp(RD_AT(c->typevars, const char *, i), e->u.name))
      return true;
  return false;
}

static loom_status expr_list(rd_ctx *c, const py_expr *e, bool define_names,
                             const char *what, bool positive, loom_expr ***out,
                             int *n) {
  py_expr *const *items = NULL; /* NULL: e is the one entry */
  int k = 1;
  if (e->kind == PY_TUPLE || e->kind == PY_LIST) {
    items = e->u.seq.items;
    k = e->u.seq.n_items;
  }
  loom_expr **xs =
      k ? loom_arena_alloc(c->a, sizeof(loom_expr *) * (size_t)k) : NULL;
  if (k && !xs)
    return LOOM_NOMEM;
  for (int i = 0; i < k; i++) {
    const py_expr *it = items ? items[i] : e;
    if (!it)
      return rd_error(c, e->loc, "missing %s entry", what);
    if (positive && is_new_typevar(c, it))
      continue; /* defined below, once the earlier entries are read */
    TRY(dim_expr(c, it, define_names, &xs[i]));
    int64_t v;
    if (positive && loom_ir_is_const_int(xs[i], &v) && v <= 0)
      return rd_error(c, it->loc,
                      "%s must be positive, got %lld (dimension %d)", what,
                      (long long)v, i);
  }
  for (int i = 0; i < k; i++) {
    if (xs[i])
      continue;
    const py_expr *it = items ? items[i] : e;
    if (is_new_typevar(c, it)) { /* a previous entry may have defined it */
      /* TVM reads a TypeVar as an int64 variable (and prints only those
       * so; an int32 one is a string, "n"). */
      loom_var *v = loom_ir_var(c->a, it->u.name, LOOM_INT64);
      if (!v)
        return LOOM_NOMEM;
      TRY(rd_define_var(c, v->name, v));
    }
    TRY(dim_expr(c, it, define_names, &xs[i]));
  }
  *out = xs;
  *n = k;
  return LOOM_OK;
}

static loom_status int_option(rd_ctx *c, const py_expr *e, const char *what,
                              int *out) {
  int64_t v;
  TRY(rd_const_int(c, e, what, &v));
  if (v < -1 || v > (1 << 30))
    return rd_error(c, e->loc, "%s %lld is out of range", what, (long long)v);
  *out = (int)v;
  return LOOM_OK;
}

static loom_status axis_separators(rd_ctx *c, const py_expr *e,
                                   loom_buffer *b) {
  if (e->kind == PY_NONE)
    return LOOM_OK;
  if (e->kind != PY_LIST && e->kind != PY_TUPLE)
    return rd_error(c, e->loc, "axis_separators must be a list of integers");
  int n = e->u.seq.n_items;
  int *xs = n ? loom_arena_alloc(c->a, sizeof(int) * (size_t)n) : NULL;
  if (n && !xs)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++) {
    if (!e->u.seq.items[i])
      return rd_error(c, e->loc, "missing axis separator");
    TRY(int_option(c, e->u.seq.items[i], "an axis separator", &xs[i]));
    if (xs[i] < 0 || xs[i] > b->ndim)
      return rd_error(c, e->u.seq.items[i]->loc,
                      "axis separator %d is outside 0..%d", xs[i], b->ndim);
  }
  b->axis_separators = xs;
  b->n_axis_separators = n;
  return LOOM_OK;
}

static loom_status data_var(rd_ctx *c, const py_expr *e, loom_var **out) {
  loom_expr *x;
  TRY(rd_expr(c, e, NULL, &x));
  if (x->kind != LOOM_EXPR_VAR || x->dtype.code != LOOM_DT_HANDLE)
    return rd_error(c, e->loc,
                    "data= must be a pointer variable such as B.data or a "
                    "T.handle parameter");
  *out = x->u.var;
  return LOOM_OK;
}

static loom_status buffer_type(rd_ctx *c, const py_expr *e, loom_buffer *b) {
  const char *s;
  TRY(rd_str_arg(c, e, "buffer_type", &s));
  if (!strcmp(s, "auto"))
    b->is_auto_broadcast = true;
  else if (strcmp(s, "") && strcmp(s, "default"))
    return rd_error(c, e->loc,
                    "buffer_type must be \"default\" or \"auto\", got \"%s\"",
                    s);
  return LOOM_OK;
}

static loom_status shape_of(rd_ctx *c, const py_expr *call, rd_buf_form form,
                            py_expr *const *args,
                            const loom_buffer_region *source,
                            loom_expr ***shape, int *ndim) {
  const py_expr *e = args[A_SHAPE];
  if (e && e->kind != PY_NONE)
    return expr_list(c, e, form == BUF_MATCH, "a buffer shape", true, shape,
                     ndim);
  if (form == BUF_MATCH && source) {
    int n = source->n_ranges;
    loom_expr **xs =
        n ? loom_arena_alloc(c->a, sizeof(loom_expr *) * (size_t)n) : NULL;
    if (n && !xs)
      return LOOM_NOMEM;
    for (int i = 0; i < n; i++)
      xs[i] = source->ranges[i].extent;
    *shape = xs;
    *ndim = n;
    return LOOM_OK;
  }
  return rd_error(c, call->loc, "%s needs a shape", forms[form].what);
}

/* The fields a declaration sets besides shape and dtype. */
static loom_status options(rd_ctx *c, rd_buf_form form, py_expr *const *args,
                           loom_buffer *b) {
  const char *scope = "global";
  if (args[A_SCOPE] && args[A_SCOPE]->kind != PY_NONE)
    TRY(rd_str_arg(c, args[A_SCOPE], "scope", &scope));
  if (!*scope)
    scope = "global";
  b->scope = scope;
  if (args[A_DATA] && args[A_DATA]->kind != PY_NONE)
    TRY(data_var(c, args[A_DATA], &b->data));
  else
    b->data->scope = scope;
  if (args[A_STRIDES] && args[A_STRIDES]->kind != PY_NONE) {
    TRY(expr_list(c, args[A_STRIDES], true, "a stride", false, &b->strides,
                  &b->n_strides));
    if (b->n_strides != b->ndim)
      return rd_error(c, args[A_STRIDES]->loc,
                      "buffer '%s' has %d dimensions but %d strides", b->name,
                      b->ndim, b->n_strides);
  }
  int align = 0, offset_factor = 0;
  if (args[A_ALIGN])
    TRY(int_option(c, args[A_ALIGN], "align", &align));
  if (args[A_OFFSET_FACTOR])
    TRY(int_option(c, args[A_OFFSET_FACTOR], "offset_factor", &offset_factor));
  if (offset_factor < 0)
    return rd_error(c, args[A_OFFSET_FACTOR]->loc,
                    "offset_factor must not be negative");
  /* TVM stores 64 for a default alignment and 1 for a default offset
   * factor; 0 stands for both here, so the spelling does not matter. */
  b->align = align <= 0 || align == 64 ? 0 : align;
  b->offset_factor = offset_factor <= 1 ? 0 : offset_factor;
  loom_dtype index_t = b->ndim ? b->shape[0]->dtype : LOOM_INT32;
  if (args[A_ELEM_OFFSET] && args[A_ELEM_OFFSET]->kind != PY_NONE) {
    TRY(dim_expr(c, args[A_ELEM_OFFSET], form == BUF_MATCH, &b->elem_offset));
    /* An explicit zero of the index dtype is TVM's default offset. */
    int64_t v;
    if (loom_ir_is_const_int(b->elem_offset, &v) && v == 0 &&
        loom_dtype_eq(b->elem_offset->dtype, index_t))
      b->elem_offset = NULL;
  } else if (offset_factor) {
    loom_dtype t = index_t;
    const char *vn = loom_arena_printf(c->a, "%s_elem_offset", b->name);
    loom_var *v = vn ? loom_ir_var(c->a, vn, t) : NULL;
    if (!v || !(b->elem_offset = loom_ir_ref(c->a, v)))
      return LOOM_NOMEM;
  }
  if (args[A_BUFFER_TYPE])
    TRY(buffer_type(c, args[A_BUFFER_TYPE], b));
  if (args[A_AXIS_SEPARATORS])
    TRY(axis_separators(c, args[A_AXIS_SEPARATORS], b));
  if (args[A_ANNOTATIONS] && args[A_ANNOTATIONS]->kind != PY_NONE &&
      (args[A_ANNOTATIONS]->kind != PY_DICT ||
       args[A_ANNOTATIONS]->u.dict.n_items != 0))
    return rd_error(c, args[A_ANNOTATIONS]->loc,
                    "annotations on an allocation are not supported");
  return LOOM_OK;
}

loom_status rd_buffer_decl(rd_ctx *c, const py_expr *call, rd_buf_form form,
                           const char *name, const loom_buffer_region *source,
                           loom_buffer **out) {
  const form_params *fp = &forms[form];
  py_expr *bound[12];
  py_expr *args[A_COUNT_] = {0};
  TRY(rd_bind_args(c, call, fp->what, fp->names, fp->n, bound));
  for (int i = 0; i < fp->n; i++)
    if (fp->slots[i] >= 0)
      args[fp->slots[i]] = bound[i];
  loom_dtype dtype = LOOM_FLOAT32;
  if (args[A_DTYPE] && args[A_DTYPE]->kind != PY_NONE)
    TRY(rd_dtype_arg(c, args[A_DTYPE], &dtype));
  if (form == BUF_MATCH && source && !args[A_SHAPE])
    dtype = source->buffer->dtype;
  loom_expr **shape = NULL;
  int ndim = 0;
  TRY(shape_of(c, call, form, args, source, &shape, &ndim));
  loom_buffer *b = loom_ir_buffer(c->a, name, dtype, shape, ndim);
  if (!b)
    return LOOM_NOMEM;
  TRY(options(c, form, args, b));
  *out = b;
  return LOOM_OK;
}

/* ---- regions ------------------------------------------------------------- */

/* lo:hi in dimension i of b: a literal bound takes the other bound's dtype,
 * and a missing one is 0 or the extent of the dimension. */
static loom_status slice_range(rd_ctx *c, const py_expr *s, loom_buffer *b,
                               int i, loom_range *out) {
  if (s->u.slice.step) {
    int64_t step;
    TRY(rd_const_int(c, s->u.slice.step, "a slice step", &step));
    if (step != 1)
      return rd_error(c, s->u.slice.step->loc,
                      "a region slice has step 1, got %lld", (long long)step);
  }
  rd_val lo, hi;
  loom_expr *x, *y;
  if (s->u.slice.hi) {
    TRY(rd_eval(c, s->u.slice.hi, &hi));
  } else {
    hi.kind = RV_IR;
    hi.e = b->shape[i];
    hi.loc = s->loc;
  }
  if (s->u.slice.lo) {
    TRY(rd_eval(c, s->u.slice.lo, &lo));
  } else {
    lo.kind = RV_INT;
    lo.i = 0;
    lo.loc = s->loc;
  }
  const loom_dtype *t = hi.kind == RV_IR   ? &hi.e->dtype
                        : lo.kind == RV_IR ? &lo.e->dtype
                                           : NULL;
  TRY(rd_materialize(c, &lo, t, &x));
  TRY(rd_materialize(c, &hi, t, &y));
  char bx[LOOM_DTYPE_STRLEN], by[LOOM_DTYPE_STRLEN];
  if (!loom_dtype_is_int(x->dtype) || !loom_dtype_is_int(y->dtype))
    return rd_error(c, s->loc, "slice bounds must be integers");
  if (!loom_dtype_eq(x->dtype, y->dtype)) {
    if (x->kind == LOOM_EXPR_INT)
      x = rd_cast(c, y->dtype, x);
    else if (y->kind == LOOM_EXPR_INT)
      y = rd_cast(c, x->dtype, y);
    else
      return rd_error(
          c, s->loc, "slice bounds have different dtypes: %s and %s",
          loom_dtype_str(x->dtype, bx), loom_dtype_str(y->dtype, by));
    if (!x || !y)
      return LOOM_NOMEM;
  }
  out->min = x;
  out->extent = loom_ir_range_extent(c->a, x, y);
  return out->extent ? LOOM_OK : LOOM_NOMEM;
}

static loom_status full_region(rd_ctx *c, loom_buffer *b,
                               loom_buffer_region *out) {
  out->buffer = b;
  out->n_ranges = b->ndim;
  out->ranges =
      b->ndim ? loom_arena_alloc(c->a, sizeof(loom_range) * (size_t)b->ndim)
              : NULL;
  if (b->ndim && !out->ranges)
    return LOOM_NOMEM;
  for (int i = 0; i < b->ndim; i++) {
    out->ranges[i].min = loom_ir_int(c->a, b->shape[i]->dtype, 0);
    out->ranges[i].extent = b->shape[i];
    if (!out->ranges[i].min)
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}

loom_status rd_region(rd_ctx *c, const py_expr *e, loom_buffer_region *out) {
  loom_buffer *b;
  if (e->kind == PY_NAME) {
    TRY(rd_buffer_ref(c, e, &b));
    return full_region(c, b, out);
  }
  if (e->kind != PY_SUBSCRIPT)
    return rd_error(c, e->loc, "expected a buffer region such as A[vi, 0:16]");
  TRY(rd_buffer_ref(c, e->u.sub.value, &b));
  const py_expr *idx = e->u.sub.index;
  if (!idx)
    return rd_error(c, e->loc, "missing index");
  py_expr *const *items = NULL; /* NULL: idx is the one index */
  int k = 1;
  if (idx->kind == PY_TUPLE) {
    items = idx->u.seq.items;
    k = idx->u.seq.n_items;
  }
  if (k != b->ndim)
    return rd_error(c, idx->loc,
                    "buffer '%s' has %d dimension%s, indexed with %d", b->name,
                    b->ndim, b->ndim == 1 ? "" : "s", k);
  out->buffer = b;
  out->n_ranges = k;
  out->ranges =
      k ? loom_arena_alloc(c->a, sizeof(loom_range) * (size_t)k) : NULL;
  if (k && !out->ranges)
    return LOOM_NOMEM;
  for (int i = 0; i < k; i++) {
    const py_expr *ie = items ? items[i] : idx;
    if (!ie)
      return rd_error(c, idx->loc, "missing index");
    if (ie->kind == PY_SLICE) {
      TRY(slice_range(c, ie, b, i, &out->ranges[i]));
      continue;
    }
    loom_expr *x;
    TRY(rd_int_expr(c, ie, NULL, &x));
    out->ranges[i].min = x;
    if (!(out->ranges[i].extent = loom_ir_int(c->a, x->dtype, 1)))
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}
