/* Views of the interpreter: how a buffer's declaration becomes storage plus
 * a strided layout (parameters, fresh allocations, aliases of another
 * buffer's data, match_buffer regions), and the bounds check of an access. */
#include "interp/interp_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- compiling ----------------------------------------------------------- */

/* A layout field that may be a variable nobody defined (a buffer's fresh
 * elem_offset or stride variables): such a variable is bound to the default
 * when the view is made, so code that reads it sees the value the layout
 * used. Returns the slot it is bound to, or -1 with *node compiled. */
static int compile_field(compiler *c, const loom_expr *e, enode **node,
                         int depth) {
  if (e->kind == LOOM_EXPR_VAR && !scope_find_var(c, e->u.var)) {
    loom_dtype t = e->u.var->dtype;
    t.lanes = 1;
    return scope_bind(c, e->u.var, -1, true, t);
  }
  *node = compile_expr(c, e, depth);
  return -1;
}

static bool compile_region(compiler *c, layout *l,
                           const loom_buffer_region *r, int depth) {
  l->n_ranges = r->n_ranges;
  size_t n = (size_t)(r->n_ranges ? r->n_ranges : 1);
  l->lo = cnew(c, n * sizeof *l->lo);
  l->ext = cnew(c, n * sizeof *l->ext);
  for (int k = 0; k < r->n_ranges && !c->is_nomem; k++) {
    l->lo[k] = compile_expr(c, r->ranges[k].min, depth);
    if (l->lo[k])
      l->ext[k] = compile_expr(c, r->ranges[k].extent, depth);
  }
  return !c->is_nomem;
}

layout *compile_layout(compiler *c, site_kind kind, const loom_buffer *b,
                       const loom_buffer_region *region, int depth) {
  layout *l = cnew(c, sizeof *l);
  if (!l)
    return NULL;
  l->kind = kind;
  l->buf = b;
  l->source = -1;
  l->offset_bind = -1;
  if (kind == SITE_ALIAS && (l->source = scope_find_data(c, b->data)) < 0)
    l->error = loom_arena_printf(c->arena, "buffer '%s' is declared over data "
                                 "the interpreter does not know", b->name);
  if (kind == SITE_MATCH && (l->source = scope_find_view(c, region->buffer)) < 0)
    l->error = loom_arena_printf(c->arena, "buffer '%s' has no storage here",
                                 region->buffer->name);
  if (l->error)
    return l; /* the view is never made */
  if (kind == SITE_MATCH && !compile_region(c, l, region, depth))
    return NULL;
  size_t n = (size_t)(b->ndim ? b->ndim : 1);
  l->shape = cnew(c, n * sizeof *l->shape);
  l->stride = cnew(c, n * sizeof *l->stride);
  l->stride_bind = cnew(c, n * sizeof *l->stride_bind);
  l->shape_v = cnew(c, n * sizeof *l->shape_v);
  l->strides_v = cnew(c, n * sizeof *l->strides_v);
  for (int k = 0; k < b->ndim && !c->is_nomem; k++)
    l->shape[k] = compile_expr(c, b->shape[k], depth);
  for (int k = b->ndim - 1; k >= 0 && !c->is_nomem; k--) {
    l->stride_bind[k] = -1;
    if (b->n_strides == b->ndim)
      l->stride_bind[k] = compile_field(c, b->strides[k], &l->stride[k], depth);
  }
  if (b->elem_offset && !c->is_nomem)
    l->offset_bind = compile_field(c, b->elem_offset, &l->offset, depth);
  if (c->is_nomem)
    return NULL;
  l->slot = scope_add_view(c, b);
  return c->is_nomem ? NULL : l;
}

/* ---- running ------------------------------------------------------------- */

static void bind_default(frame *fr, int slot, const loom_expr *e,
                         int64_t dflt) {
  loom_dtype t = e->u.var->dtype;
  t.lanes = 1;
  fr->sv[slot] = norm_int(t, (uint64_t)dflt);
}

/* Fills the layout of the view from l's declaration. */
static loom_status lay_out(frame *fr, const layout *l, view *v,
                           const int64_t *given, int64_t base) {
  const loom_buffer *b = l->buf;
  v->buf = b;
  v->ndim = b->ndim;
  v->shape = l->shape_v;
  v->strides = l->strides_v;
  for (int k = 0; k < b->ndim; k++) {
    TRY(eval_int(l->shape[k], fr, &v->shape[k]));
    if (v->shape[k] < 0)
      return run_error(fr, "buffer '%s' has negative extent %lld", b->name,
                       (long long)v->shape[k]);
  }
  uint64_t stride = 1; /* wraps rather than overflows on absurd shapes */
  for (int k = b->ndim - 1; k >= 0; k--) {
    int64_t dflt = given ? given[k] : (int64_t)stride;
    if (l->stride_bind[k] >= 0) {
      bind_default(fr, l->stride_bind[k], b->strides[k], dflt);
      v->strides[k] = dflt;
    } else if (l->stride[k]) {
      TRY(eval_int(l->stride[k], fr, &v->strides[k]));
    } else {
      v->strides[k] = dflt;
    }
    stride *= (uint64_t)(v->shape[k] ? v->shape[k] : 1);
  }
  v->offset = base;
  if (l->offset_bind >= 0)
    bind_default(fr, l->offset_bind, b->elem_offset, base);
  else if (l->offset)
    TRY(eval_int(l->offset, fr, &v->offset));
  return LOOM_OK;
}

loom_status push_view(frame *fr, const layout *l, unsigned char *data,
                      int64_t nbytes, bool owns_data, const int64_t *given,
                      int64_t base) {
  view v = {0};
  v.data = data;
  v.nbytes = nbytes;
  v.owns_data = owns_data;
  int eb = elem_bytes(l->buf->dtype);
  v.max_flat = (nbytes - eb) / eb;
  loom_status st = lay_out(fr, l, &v, given, base);
  if (st != LOOM_OK) {
    if (owns_data)
      free(data);
    return st;
  }
  fr->views[l->slot] = v;
  return LOOM_OK;
}

void pop_view(frame *fr, int slot) {
  view *v = &fr->views[slot];
  if (v->owns_data)
    free(v->data);
  v->data = NULL;
  v->owns_data = false;
}

/* Fresh zero-filled storage for l's buffer, sized by its shape. */
static loom_status push_alloc(frame *fr, const layout *l) {
  const loom_buffer *b = l->buf;
  int64_t n = 1;
  for (int k = 0; k < b->ndim; k++) {
    int64_t e;
    TRY(eval_int(l->shape[k], fr, &e));
    if (e < 0 || (e > 0 && n > ((int64_t)1 << 40) / e))
      return run_error(fr, "cannot allocate buffer '%s' of that size", b->name);
    n *= e;
  }
  int eb = elem_bytes(b->dtype);
  unsigned char *data = calloc((size_t)(n ? n : 1), (size_t)eb);
  if (!data)
    return LOOM_NOMEM;
  return push_view(fr, l, data, n * eb, true, NULL, 0);
}

/* A match_buffer view: the source's storage, offset at the region's corner,
 * the source's strides for the trailing dimensions. */
static loom_status push_match(frame *fr, const layout *l) {
  const view *src = &fr->views[l->source];
  int64_t offset = src->offset;
  for (int k = 0; k < l->n_ranges && k < src->ndim; k++) {
    int64_t lo, ext;
    TRY(eval_int(l->lo[k], fr, &lo));
    TRY(eval_int(l->ext[k], fr, &ext));
    if (lo < 0 || ext < 0 || lo + ext > src->shape[k])
      return run_error(fr, "match_buffer '%s' views %s[%lld:%lld] outside "
                       "its shape (extent %lld)", l->buf->name, src->buf->name,
                       (long long)lo, (long long)(lo + ext),
                       (long long)src->shape[k]);
    offset = (int64_t)((uint64_t)offset + (uint64_t)lo * (uint64_t)src->strides[k]);
  }
  int nd = l->buf->ndim;
  if (nd > src->ndim)
    return run_error(fr, "match_buffer '%s' has more dimensions than '%s'",
                     l->buf->name, src->buf->name);
  return push_view(fr, l, src->data, src->nbytes, false,
                   src->strides + (src->ndim - nd), offset);
}

loom_status push_site(frame *fr, const layout *l) {
  if (l->error)
    return run_error(fr, "%s", l->error);
  switch (l->kind) {
  case SITE_ALLOC: return push_alloc(fr, l);
  case SITE_MATCH: return push_match(fr, l);
  case SITE_ALIAS: {
    const view *src = &fr->views[l->source];
    return push_view(fr, l, src->data, src->nbytes, false, NULL, 0);
  }
  default: return run_error(fr, "buffer '%s' has no storage here", l->buf->name);
  }
}

loom_status flat_index(frame *fr, const view *v, const int64_t *idx,
                       bool is_store, int64_t *flat) {
  bool is_in = true;
  /* Wrapping arithmetic: absurd strides must give an error, not UB; the
   * storage check below catches any wrapped result. */
  uint64_t uf = (uint64_t)v->offset;
  for (int k = 0; k < v->ndim; k++) {
    if (idx[k] < 0 || idx[k] >= v->shape[k])
      is_in = false;
    uf += (uint64_t)idx[k] * (uint64_t)v->strides[k];
  }
  int64_t f = (int64_t)uf;
  if (is_in && (f < 0 || f > v->max_flat))
    is_in = false;
  if (is_in) {
    *flat = f;
    return LOOM_OK;
  }
  loom_buf m;
  loom_buf_init(&m);
  loom_buf_printf(&m, "out-of-bounds %s %s[", is_store ? "store to" : "load from",
                  v->buf->name);
  for (int k = 0; k < v->ndim; k++)
    loom_buf_printf(&m, "%s%lld", k ? ", " : "", (long long)idx[k]);
  loom_buf_puts(&m, "] (shape (");
  for (int k = 0; k < v->ndim; k++)
    loom_buf_printf(&m, "%s%lld", k ? ", " : "", (long long)v->shape[k]);
  loom_buf_puts(&m, v->ndim == 1 ? ",))" : "))");
  bool is_shape_ok = true;
  for (int k = 0; k < v->ndim; k++)
    if (idx[k] < 0 || idx[k] >= v->shape[k])
      is_shape_ok = false;
  if (is_shape_ok)
    loom_buf_puts(&m, ": the element lies outside the buffer's storage");
  loom_status st = run_error(fr, "%s", m.data ? m.data : "out-of-bounds access");
  loom_buf_free(&m);
  return st;
}
