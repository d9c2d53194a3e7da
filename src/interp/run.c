/* Entry points of the interpreter: compile a function (scopes of variables
 * and views mapped to frame slots), bind the parameters and run it; and the
 * allocation of argument arrays from the parameters' shapes. */
#include "interp/interp_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- compiler scopes ----------------------------------------------------- */

void *cnew(compiler *c, size_t size) {
  void *p = loom_arena_alloc(c->arena, size);
  if (!p)
    c->is_nomem = true;
  return p;
}

int scope_bind(compiler *c, const loom_var *v, int slot, bool is_scalar,
               loom_dtype t) {
  if (c->n_vars == c->cap_vars) {
    int cap = c->cap_vars ? c->cap_vars * 2 : 16;
    scope_var *p = realloc(c->vars, (size_t)cap * sizeof *p);
    if (!p) {
      c->is_nomem = true;
      return 0;
    }
    c->vars = p;
    c->cap_vars = cap;
  }
  if (slot < 0) {
    slot = c->n_var_slots++;
    if (c->n_var_slots > c->max_var_slots)
      c->max_var_slots = c->n_var_slots;
  }
  t.lanes = 1;
  c->vars[c->n_vars++] = (scope_var){v, slot, is_scalar, t, false, 0, 0};
  return slot;
}

const scope_var *scope_find_var(const compiler *c, const loom_var *v) {
  for (int i = c->n_vars - 1; i >= 0; i--)
    if (c->vars[i].var == v)
      return &c->vars[i];
  return NULL;
}

int scope_find_view(const compiler *c, const loom_buffer *b) {
  for (int i = c->n_views - 1; i >= 0; i--)
    if (c->views[i].buf == b)
      return c->views[i].slot;
  return -1;
}

int scope_find_data(const compiler *c, const loom_var *data) {
  for (int i = c->n_views - 1; i >= 0; i--)
    if (c->views[i].buf->data == data)
      return c->views[i].slot;
  return -1;
}

int scope_add_view(compiler *c, const loom_buffer *b) {
  if (c->n_views == c->cap_views) {
    int cap = c->cap_views ? c->cap_views * 2 : 8;
    scope_view *p = realloc(c->views, (size_t)cap * sizeof *p);
    if (!p) {
      c->is_nomem = true;
      return 0;
    }
    c->views = p;
    c->cap_views = cap;
  }
  /* A view's slot is its depth in the scope: views nest like the stack the
   * running program would keep. */
  int slot = c->n_views;
  c->views[c->n_views++] = (scope_view){b, slot};
  if (c->n_views > c->max_view_slots)
    c->max_view_slots = c->n_views;
  return slot;
}

void scope_pop(compiler *c, int n_vars, int n_var_slots, int n_views) {
  c->n_vars = n_vars;
  c->n_var_slots = n_var_slots;
  c->n_views = n_views;
}

static void compiler_init(compiler *c) {
  memset(c, 0, sizeof *c);
  c->arena = loom_arena_new();
  c->is_nomem = c->arena == NULL;
}

static void compiler_done(compiler *c) {
  free(c->vars);
  free(c->views);
  loom_arena_free(c->arena);
}

/* ---- running ------------------------------------------------------------- */

loom_status run_error(frame *fr, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  loom_status s = loom_diag_verror(fr->d, *fr->loc, fmt, ap);
  va_end(ap);
  return s;
}

static loom_status nomem(loom_diag *d, loom_loc loc, loom_status st) {
  if (st == LOOM_NOMEM && !d->has_error)
    loom_diag_error(d, loc, "out of memory in the interpreter");
  return st;
}

/* Binds every scalar parameter of f to a slot; their values come later. */
static int *compile_scalars(compiler *c, const loom_func *f) {
  int *slots = cnew(c, (size_t)(f->n_params + 1) * sizeof *slots);
  for (int i = 0; slots && i < f->n_params; i++)
    if (!f->params[i].buffer)
      slots[i] = scope_bind(c, f->params[i].var, -1, true,
                            f->params[i].var->dtype);
  return c->is_nomem ? NULL : slots;
}

/* Gives every scalar parameter its value from scalar_args. */
static loom_status bind_scalars(frame *fr, const loom_func *f, const int *slots,
                                const int64_t *scalar_args) {
  for (int i = 0; i < f->n_params; i++) {
    const loom_param *p = &f->params[i];
    if (p->buffer)
      continue;
    if (!scalar_args)
      return run_error(fr, "scalar parameter '%s' needs a value", p->var->name);
    loom_dtype t = p->var->dtype;
    t.lanes = 1;
    if (loom_dtype_is_float(t))
      fr->sv[slots[i]] = norm_float(t, (double)scalar_args[i]);
    else
      fr->sv[slots[i]] = norm_int(t, (uint64_t)scalar_args[i]);
  }
  return LOOM_OK;
}

static loom_status frame_init(frame *fr, const compiler *c, const loom_func *f,
                              loom_diag *d) {
  memset(fr, 0, sizeof *fr);
  fr->d = d;
  fr->loc = &f->loc;
  fr->sv = calloc((size_t)c->max_var_slots + 1, sizeof *fr->sv);
  fr->vars = calloc((size_t)c->max_var_slots + 1, sizeof *fr->vars);
  fr->views = calloc((size_t)c->max_view_slots + 1, sizeof *fr->views);
  return fr->sv && fr->vars && fr->views ? LOOM_OK : LOOM_NOMEM;
}

static void frame_done(frame *fr) {
  free(fr->sv);
  free(fr->vars);
  free(fr->views);
}

/* The compiled function: scalar parameter slots, parameter views, body. */
typedef struct program {
  int *scalar_slots;
  layout **params;
  snode *body;
} program;

static bool compile_func(compiler *c, const loom_func *f, program *p) {
  p->scalar_slots = compile_scalars(c, f);
  p->params = cnew(c, (size_t)(f->n_params + 1) * sizeof *p->params);
  for (int i = 0; i < f->n_params && !c->is_nomem; i++)
    if (f->params[i].buffer)
      p->params[i] = compile_layout(c, SITE_PARAM, f->params[i].buffer, NULL, 0);
  if (!c->is_nomem && f->body)
    p->body = compile_stmt(c, f->body, &f->loc, 0);
  return !c->is_nomem;
}

/* Makes the view of each buffer parameter over its array. */
static loom_status bind_arrays(frame *fr, const loom_func *f, const program *p,
                               loom_interp_array **args) {
  for (int i = 0; i < f->n_params; i++) {
    const loom_buffer *b = f->params[i].buffer;
    if (!b)
      continue;
    loom_interp_array *a = args[i];
    if (!a || a->ndim != b->ndim)
      return run_error(fr, "argument for buffer '%s' is missing or has rank "
                       "%d, expected %d", b->name, a ? a->ndim : -1, b->ndim);
    const layout *l = p->params[i];
    TRY(push_view(fr, l, a->data, a->n_elems * elem_bytes(a->dtype), false,
                  NULL, 0));
    const view *v = &fr->views[l->slot];
    for (int k = 0; k < b->ndim; k++)
      if (v->shape[k] != a->shape[k])
        return run_error(fr, "argument for buffer '%s' has extent %lld in "
                         "dimension %d, expected %lld", b->name,
                         (long long)a->shape[k], k, (long long)v->shape[k]);
  }
  return LOOM_OK;
}

loom_status loom_interp_run(const loom_func *f, loom_interp_array **args,
                            const int64_t *scalar_args, loom_diag *d) {
  compiler c;
  compiler_init(&c);
  program p = {0};
  frame fr;
  loom_status st = LOOM_NOMEM;
  if (!c.is_nomem && compile_func(&c, f, &p))
    st = frame_init(&fr, &c, f, d);
  else
    memset(&fr, 0, sizeof fr);
  if (st == LOOM_OK)
    st = bind_scalars(&fr, f, p.scalar_slots, scalar_args);
  if (st == LOOM_OK)
    st = bind_arrays(&fr, f, &p, args);
  if (st == LOOM_OK && p.body)
    st = p.body->run(p.body, &fr);
  st = nomem(d, fr.loc ? *fr.loc : f->loc, st);
  frame_done(&fr);
  compiler_done(&c);
  return st;
}

void loom_interp_free_args(const loom_func *f, loom_interp_array **arrays) {
  for (int i = 0; i < f->n_params; i++) {
    loom_interp_array_free(arrays[i]);
    arrays[i] = NULL;
  }
}

/* The shape of each buffer parameter, compiled; a dimension that is a
 * variable nobody gives a value is an error node. */
static enode ***compile_shapes(compiler *c, const loom_func *f) {
  enode ***shapes = cnew(c, (size_t)(f->n_params + 1) * sizeof *shapes);
  for (int i = 0; shapes && i < f->n_params && !c->is_nomem; i++) {
    const loom_buffer *b = f->params[i].buffer;
    if (!b)
      continue;
    shapes[i] = cnew(c, (size_t)(b->ndim + 1) * sizeof *shapes[i]);
    for (int k = 0; shapes[i] && k < b->ndim && !c->is_nomem; k++)
      shapes[i][k] = compile_expr(c, b->shape[k], 0);
  }
  return c->is_nomem ? NULL : shapes;
}

static loom_status alloc_one(frame *fr, const loom_buffer *b, enode **shape,
                             const compiler *c, loom_interp_array **out) {
  int64_t *dims = calloc((size_t)(b->ndim ? b->ndim : 1), sizeof *dims);
  if (!dims)
    return LOOM_NOMEM;
  loom_status st = LOOM_OK;
  for (int k = 0; k < b->ndim && st == LOOM_OK; k++) {
    const loom_expr *e = b->shape[k];
    if (e->kind == LOOM_EXPR_VAR && !scope_find_var(c, e->u.var))
      st = run_error(fr, "symbolic shape %s of buffer '%s' needs a value "
                     "(give it as a scalar parameter)", e->u.var->name, b->name);
    else
      st = eval_int(shape[k], fr, &dims[k]);
  }
  if (st == LOOM_OK) {
    *out = loom_interp_array_new(b->dtype, dims, b->ndim);
    if (!*out)
      st = run_error(fr, "cannot allocate buffer '%s' of that size", b->name);
  }
  free(dims);
  return st;
}

loom_status loom_interp_alloc_args(const loom_func *f,
                                   const int64_t *scalar_args,
                                   loom_interp_array **arrays, loom_diag *d) {
  for (int i = 0; i < f->n_params; i++)
    arrays[i] = NULL;
  compiler c;
  compiler_init(&c);
  int *slots = c.is_nomem ? NULL : compile_scalars(&c, f);
  enode ***shapes = slots ? compile_shapes(&c, f) : NULL;
  frame fr;
  loom_status st = shapes ? frame_init(&fr, &c, f, d) : LOOM_NOMEM;
  if (!shapes)
    memset(&fr, 0, sizeof fr);
  if (st == LOOM_OK)
    st = bind_scalars(&fr, f, slots, scalar_args);
  for (int i = 0; i < f->n_params && st == LOOM_OK; i++)
    if (f->params[i].buffer)
      st = alloc_one(&fr, f->params[i].buffer, shapes[i], &c, &arrays[i]);
  st = nomem(d, f->loc, st);
  frame_done(&fr);
  compiler_done(&c);
  if (st != LOOM_OK)
    loom_interp_free_args(f, arrays);
  return st;
}
