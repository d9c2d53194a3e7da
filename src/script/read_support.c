/* The TVMScript builder's plumbing: located errors, arrays in the arena,
 * nested scopes of names, binding call arguments to parameter names, and
 * reading the small literal arguments (dtypes, strings) many forms take. */
#include "script/read.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

loom_status rd_error(rd_ctx *c, loom_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  loom_diag_verror(c->d, c->loc_override ? *c->loc_override : loc, fmt, ap);
  va_end(ap);
  return LOOM_ERROR;
}

void *rd_vec_push(rd_ctx *c, rd_vec *v, size_t elem) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void *items = loom_arena_alloc(c->a, elem * (size_t)cap);
    if (!items)
      return NULL;
    if (v->n)
      memcpy(items, v->items, elem * (size_t)v->n);
    v->items = items;
    v->cap = cap;
  }
  void *slot = (char *)v->items + elem * (size_t)v->n++;
  memset(slot, 0, elem);
  return slot;
}

loom_status rd_vec_push_ptr(rd_ctx *c, rd_vec *v, void *p) {
  void **slot = rd_vec_push(c, v, sizeof(void *));
  if (!slot)
    return LOOM_NOMEM;
  *slot = p;
  return LOOM_OK;
}

/* ---- scopes ---------------------------------------------------------------
 * One stack of names; a scope is a mark into it. Lookups scan from the top,
 * so an inner definition shadows an outer one, as in Python. */

int rd_scope_open(rd_ctx *c) { return c->syms.n; }

void rd_scope_close(rd_ctx *c, int mark) {
  if (mark >= 0 && mark <= c->syms.n)
    c->syms.n = mark;
}

static loom_status define(rd_ctx *c, const char *name, rd_sym_kind k,
                          loom_var *v, loom_buffer *b) {
  rd_sym *s = rd_vec_push(c, &c->syms, sizeof(rd_sym));
  if (!s)
    return LOOM_NOMEM;
  s->name = name;
  s->kind = k;
  s->var = v;
  s->buffer = b;
  return LOOM_OK;
}

loom_status rd_define_var(rd_ctx *c, const char *name, loom_var *v) {
  return define(c, name, SYM_VAR, v, NULL);
}

loom_status rd_define_buffer(rd_ctx *c, const char *name, loom_buffer *b) {
  return define(c, name, SYM_BUFFER, NULL, b);
}

const rd_sym *rd_lookup(const rd_ctx *c, const char *name) {
  for (int i = c->syms.n - 1; i >= 0; i--) {
    const rd_sym *s = &RD_AT(c->syms, rd_sym, i);
    if (!strcmp(s->name, name))
      return s;
  }
  return NULL;
}

/* ---- T.* names ----------------------------------------------------------- */

const char *rd_t_name(const py_expr *e, char *buf, size_t size) {
  if (!e || e->kind != PY_ATTRIBUTE || !e->u.attr.value || !e->u.attr.name)
    return NULL;
  const py_expr *v = e->u.attr.value;
  if (v->kind == PY_NAME && v->u.name && !strcmp(v->u.name, "T")) {
    snprintf(buf, size, "%s", e->u.attr.name);
    return buf;
  }
  /* T.axis.spatial and friends: one more level. */
  if (v->kind == PY_ATTRIBUTE && v->u.attr.value && v->u.attr.name &&
      v->u.attr.value->kind == PY_NAME && v->u.attr.value->u.name &&
      !strcmp(v->u.attr.value->u.name, "T")) {
    snprintf(buf, size, "%s.%s", v->u.attr.name, e->u.attr.name);
    return buf;
  }
  return NULL;
}

bool rd_is_dotted(const py_expr *e, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (py_is_dotted(e, names[i]))
      return true;
  return false;
}

bool rd_is_t(const py_expr *e, const char *name) {
  char buf[96];
  const char *n = rd_t_name(e, buf, sizeof buf);
  return n && !strcmp(n, name);
}

/* ---- call arguments ------------------------------------------------------ */

static void list_params(loom_buf *b, const char *const *params, int n) {
  for (int i = 0; i < n; i++)
    loom_buf_printf(b, "%s%s", i ? ", " : "", params[i]);
}

loom_status rd_bind_args(rd_ctx *c, const py_expr *call, const char *what,
                         const char *const *params, int n_params,
                         py_expr **out) {
  for (int i = 0; i < n_params; i++)
    out[i] = NULL;
  if (call->u.call.n_args > n_params) {
    const py_expr *extra = call->u.call.args[n_params];
    return rd_error(c, extra ? extra->loc : call->loc,
                    "%s takes at most %d positional argument%s, got %d", what,
                    n_params, n_params == 1 ? "" : "s", call->u.call.n_args);
  }
  for (int i = 0; i < call->u.call.n_args; i++)
    out[i] = call->u.call.args[i];
  for (int k = 0; k < call->u.call.n_kwargs; k++) {
    const py_keyword *kw = &call->u.call.kwargs[k];
    if (!kw->name)
      return rd_error(c, kw->loc, "%s does not take **kwargs", what);
    int i = 0;
    while (i < n_params && strcmp(params[i], kw->name))
      i++;
    if (i == n_params) {
      loom_buf b;
      loom_buf_init(&b);
      list_params(&b, params, n_params);
      loom_status st =
          rd_error(c, kw->loc, "%s has no argument '%s'; it takes %s", what,
                   kw->name, b.data ? b.data : "no arguments");
      loom_buf_free(&b);
      return st;
    }
    if (out[i])
      return rd_error(c, kw->loc, "%s got argument '%s' twice", what, kw->name);
    out[i] = kw->value;
  }
  return LOOM_OK;
}

loom_status rd_require(rd_ctx *c, const py_expr *call, const char *what,
                       py_expr *arg, const char *param) {
  if (arg)
    return LOOM_OK;
  return rd_error(c, call->loc, "%s needs its argument '%s'", what, param);
}

/* ---- dtypes and strings -------------------------------------------------- */

/* Suggests the valid spellings of a dtype family the name resembles. */
static const char *dtype_hint(const char *s) {
  if (!strncmp(s, "bfloat", 6))
    return "the bfloat type is bfloat16";
  if (!strncmp(s, "float", 5))
    return "float types are float16, float32 and float64";
  if (!strncmp(s, "uint", 4))
    return "uint types are uint8, uint16, uint32 and uint64";
  if (!strncmp(s, "int", 3))
    return "int types are int8, int16, int32 and int64";
  return "expected a dtype such as \"float32\", \"int32\" or \"bool\"";
}

loom_status rd_parse_dtype(rd_ctx *c, loom_loc loc, const char *s,
                           loom_dtype *out) {
  if (loom_dtype_parse(s, strlen(s), out))
    return LOOM_OK;
  return rd_error(c, loc, "unknown dtype '%s'; %s", s, dtype_hint(s));
}

loom_status rd_dtype_arg(rd_ctx *c, const py_expr *e, loom_dtype *out) {
  char buf[96];
  const char *n;
  if (e->kind == PY_STR && e->u.str)
    return rd_parse_dtype(c, e->loc, e->u.str, out);
  if ((n = rd_t_name(e, buf, sizeof buf)) != NULL) {
    if (loom_dtype_parse(n, strlen(n), out))
      return LOOM_OK;
    return rd_error(c, e->loc, "T.%s is not a dtype; %s", n, dtype_hint(n));
  }
  return rd_error(c, e->loc, "expected a dtype such as \"float32\" (a string)");
}

loom_status rd_str_arg(rd_ctx *c, const py_expr *e, const char *what,
                       const char **out) {
  if (e->kind != PY_STR || !e->u.str)
    return rd_error(c, e->loc, "%s must be a string", what);
  *out = e->u.str;
  return LOOM_OK;
}

/* The dtype an annotation names: T.int32, T.int32(), T.let[T.int32],
 * T.handle, T.handle("float32", "shared"). */
loom_status rd_annotation_dtype(rd_ctx *c, const py_expr *ann, loom_dtype *t,
                                loom_dtype *elem, const char **scope) {
  char buf[96];
  *elem = LOOM_VOID;
  *scope = NULL;
  if (ann->kind == PY_SUBSCRIPT && rd_is_t(ann->u.sub.value, "let") &&
      ann->u.sub.index)
    ann = ann->u.sub.index;
  const py_expr *call = NULL;
  if (ann->kind == PY_CALL) {
    call = ann;
    ann = ann->u.call.func;
  }
  const char *name = rd_t_name(ann, buf, sizeof buf);
  if (!name || !loom_dtype_parse(name, strlen(name), t))
    return rd_error(c, ann->loc,
                    "expected a type such as T.int32, T.float32 or T.handle");
  if (!call || (call->u.call.n_args == 0 && call->u.call.n_kwargs == 0))
    return LOOM_OK;
  if (t->code != LOOM_DT_HANDLE || call->u.call.n_kwargs ||
      call->u.call.n_args > 2)
    return rd_error(c, call->loc,
                    "only T.handle takes arguments in a type: "
                    "T.handle(\"float32\", \"global\")");
  TRY(rd_dtype_arg(c, call->u.call.args[0], elem));
  if (call->u.call.n_args == 2)
    TRY(rd_str_arg(c, call->u.call.args[1], "the storage scope", scope));
  return LOOM_OK;
}

const char *rd_attr_key(rd_ctx *c, const char *key) {
  if (strncmp(key, "tirx.", 5))
    return key;
  return loom_arena_printf(c->a, "tir.%s", key + 5);
}

/* Insertion sort keeps equal keys in their order; attribute lists are short. */
void rd_sort_attrs(loom_attr *attrs, int n) {
  for (int i = 1; i < n; i++) {
    loom_attr x = attrs[i];
    int j = i - 1;
    while (j >= 0 && strcmp(attrs[j].key, x.key) > 0) {
      attrs[j + 1] = attrs[j];
      j--;
    }
    attrs[j + 1] = x;
  }
}
