/* Buffer declarations: the arguments of T.Buffer, T.match_buffer and the
 * allocations, TVM's defaults left out, and the variables a declaration
 * defines (data pointer, offset, and in a signature its shape variables). */
#include "script/print.h"

#include <stdlib.h>
#include <string.h>

/* Appends the variables of e that are not in scope to out, each once, in the
 * order they are printed. */
static void undefined_vars(printer *p, const loom_expr *e, pr_vec *out) {
  if (!e)
    return;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
    return;
  case LOOM_EXPR_VAR: {
    if (!e->u.var || pr_lookup(p, e->u.var))
      return;
    const loom_var *const *seen = out->items;
    for (int i = 0; i < out->n; i++)
      if (seen[i] == e->u.var)
        return;
    pr_vec_push(p, out, &e->u.var, sizeof e->u.var);
    return;
  }
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    undefined_vars(p, e->u.unary.a, out);
    return;
  case LOOM_EXPR_SELECT:
    undefined_vars(p, e->u.select.cond, out);
    undefined_vars(p, e->u.select.t, out);
    undefined_vars(p, e->u.select.f, out);
    return;
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      undefined_vars(p, e->u.load.indices[i], out);
    return;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      undefined_vars(p, e->u.call.args[i], out);
    return;
  case LOOM_EXPR_LET:
    undefined_vars(p, e->u.let.value, out);
    return;
  case LOOM_EXPR_RAMP:
    undefined_vars(p, e->u.ramp.base, out);
    undefined_vars(p, e->u.ramp.stride, out);
    return;
  case LOOM_EXPR_BROADCAST:
    undefined_vars(p, e->u.broadcast.value, out);
    return;
  default:
    undefined_vars(p, e->u.bin.a, out);
    undefined_vars(p, e->u.bin.b, out);
    return;
  }
}

static bool is_scalar_param(const loom_func *f, const loom_var *v) {
  for (int i = 0; f && i < f->n_params; i++)
    if (!f->params[i].buffer && f->params[i].var == v)
      return true;
  return false;
}

/* A shape, stride or offset entry. In a signature, an entry that names
 * variables not yet in scope is written as a string ("n"): TVM 0.27 defines
 * a variable where a parameter's shape first names it. */
static void dim(printer *p, const loom_expr *e, pr_buf_form form,
                bool is_shape, pr_vec *sig_vars) {
  pr_vec fresh = {0};
  if (form == PR_BUF_PARAM)
    undefined_vars(p, e, &fresh);
  if (fresh.n == 0) {
    pr_expr(p, e);
    return;
  }
  if (p->use_typevars && is_shape && e->kind == LOOM_EXPR_VAR &&
      !is_scalar_param(p->func, e->u.var)) {
    const char *name = pr_define(p, e->u.var, e->u.var->name);
    const char *kept = p->keep ? loom_arena_strdup(p->keep, name) : NULL;
    if (!kept || !p->typevars)
      p->has_failed = true;
    else
      pr_vec_push(p, p->typevars, &kept, sizeof kept);
    pr_puts(p, name);
    free(fresh.items);
    return;
  }
  const loom_var *const *vs = fresh.items;
  for (int i = 0; i < fresh.n; i++) {
    pr_define(p, vs[i], vs[i]->name);
    if (sig_vars && !is_scalar_param(p->func, vs[i]))
      pr_vec_push(p, sig_vars, &vs[i], sizeof vs[i]);
  }
  loom_buf text, *saved = p->out;
  loom_buf_init(&text);
  p->out = &text;
  pr_expr(p, e);
  p->out = saved;
  pr_quoted(p->out, text.data ? text.data : "");
  if (text.has_failed)
    p->has_failed = true;
  loom_buf_free(&text);
  free(fresh.items);
}

static void dims(printer *p, loom_expr *const *xs, int n, pr_buf_form form,
                 bool is_shape, pr_vec *sig_vars) {
  pr_puts(p, "(");
  for (int i = 0; i < n; i++) {
    if (i)
      pr_puts(p, ", ");
    dim(p, xs[i], form, is_shape, sig_vars);
  }
  pr_puts(p, n == 1 ? ",)" : ")");
}

/* Defines v as printing "<buffer>.<field>" when it is not in scope yet;
 * returns whether it did. */
static bool define_through(printer *p, const loom_var *v, const char *buffer,
                           const char *field) {
  if (!v || pr_lookup(p, v))
    return false;
  const char *t = p->arena ? loom_arena_printf(p->arena, "%s.%s", buffer, field)
                           : NULL;
  pr_define_inline(p, v, t);
  return true;
}

/* TVM's default offset is a zero of the shape's index type; a zero of
 * another type is printed, as TVM prints it. */
static bool is_default_offset(const loom_buffer *b, const loom_expr *off) {
  loom_dtype index = b->ndim > 0 && b->shape[0] ? b->shape[0]->dtype : LOOM_INT32;
  return off->kind == LOOM_EXPR_INT && off->u.int_value == 0 &&
         loom_dtype_eq(off->dtype, index);
}

bool pr_wants_typevars(printer *p, const loom_func *f) {
  pr_vec known = {0}, fresh = {0};
  int count = 0;
  bool all_bare = true;
  for (int i = 0; i < f->n_params && !p->has_failed; i++) {
    const loom_param *prm = &f->params[i];
    if (!prm->buffer) {
      if (prm->var)
        pr_vec_push(p, &known, &prm->var, sizeof prm->var);
      continue;
    }
    for (int k = 0; k < prm->buffer->ndim; k++) {
      const loom_expr *e = prm->buffer->shape[k];
      fresh.n = 0;
      undefined_vars(p, e, &fresh);
      const loom_var *const *vs = fresh.items;
      int n_new = 0;
      for (int j = 0; j < fresh.n; j++) {
        const loom_var *const *kn = known.items;
        bool seen = false;
        for (int m = 0; m < known.n && !seen; m++)
          seen = kn[m] == vs[j];
        if (seen)
          continue;
        n_new++;
        pr_vec_push(p, &known, &vs[j], sizeof vs[j]);
        count += !is_scalar_param(f, vs[j]);
        if (!loom_dtype_eq(vs[j]->dtype, LOOM_INT64))
          all_bare = false; /* TVM reads a TypeVar back as int64 */
      }
      if (n_new && e->kind != LOOM_EXPR_VAR)
        all_bare = false;
    }
  }
  free(known.items);
  free(fresh.items);
  return count >= 2 && all_bare;
}

void pr_buffer_args(printer *p, const loom_buffer *b, pr_buf_form form,
                    pr_vec *sig_vars) {
  char t[LOOM_DTYPE_STRLEN];
  const char *name = pr_lookup(p, b);
  if (!name)
    name = "?";
  dims(p, b->shape, b->ndim, form, true, sig_vars);
  if (form == PR_BUF_PARAM || !loom_dtype_eq(b->dtype, LOOM_FLOAT32))
    pr_printf(p, ", \"%s\"", loom_dtype_str(b->dtype, t));
  if (b->data) {
    if (form == PR_BUF_DECL && !pr_lookup(p, b->data))
      pr_printf(p, ", data=%s", pr_var(p, b->data));
    else if (!define_through(p, b->data, name, "data"))
      pr_printf(p, ", data=%s", pr_var(p, b->data));
  }
  if (b->n_strides > 0) {
    pr_puts(p, ", strides=");
    dims(p, b->strides, b->n_strides, form, false, sig_vars);
  }
  bool needs_factor = false;
  const loom_expr *off = b->elem_offset;
  if (off && off->kind == LOOM_EXPR_VAR &&
      define_through(p, off->u.var, name, "elem_offset")) {
    needs_factor = true;
  } else if (off && !is_default_offset(b, off)) {
    pr_puts(p, ", elem_offset=");
    dim(p, off, form, false, sig_vars);
  }
  if (b->scope && *b->scope && strcmp(b->scope, "global")) {
    pr_puts(p, ", scope=");
    pr_quoted(p->out, b->scope);
  }
  if (b->align && b->align != 64)
    pr_printf(p, ", align=%d", b->align);
  int factor = b->offset_factor ? b->offset_factor : 1;
  if (needs_factor || factor != 1)
    pr_printf(p, ", offset_factor=%d", factor);
  if (b->is_auto_broadcast)
    pr_puts(p, ", buffer_type=\"auto\"");
  if (b->n_axis_separators > 0) {
    pr_puts(p, ", axis_separators=[");
    for (int i = 0; i < b->n_axis_separators; i++)
      pr_printf(p, i ? ", %d" : "%d", b->axis_separators[i]);
    pr_puts(p, "]");
  }
}

void pr_free_buffer_decl(printer *p, const loom_buffer *b, const char *name) {
  loom_buf line, *saved = p->out;
  loom_buf_init(&line);
  p->out = &line;
  pr_indent(p, p->decl_indent);
  pr_printf(p, "%s = T.Buffer(", name);
  int mark = pr_mark(p);
  pr_buffer_args(p, b, PR_BUF_ALLOC, NULL);
  /* What the declaration defines (B.data) lives as long as the buffer. */
  const pr_def *defs = p->defs.items;
  for (int i = mark; i < p->defs.n; i++)
    pr_vec_push(p, &p->frees, &defs[i], sizeof defs[i]);
  pr_release(p, mark);
  pr_puts(p, ")\n");
  p->out = saved;
  if (line.has_failed)
    p->has_failed = true;
  if (line.data && p->decls)
    loom_buf_puts(p->decls, line.data);
  loom_buf_free(&line);
}
