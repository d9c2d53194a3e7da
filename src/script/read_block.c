/* Blocks of TVMScript: `with T.block("name"):` and its header (iter vars
 * from T.axis.*, T.where, T.reads, T.writes, T.block_attr, block buffers),
 * `with T.init():`, and the block realize that binds the iter vars. Regions
 * left out are inferred once the function is complete (read.c). */
#include "script/read.h"

#include <string.h>

static const char *block_name(const rd_ctx *c) {
  return c->block && c->block->block ? c->block->block->name : "";
}

/* Header forms go directly in the block, before its body statements. */
static loom_status in_header(rd_ctx *c, loom_loc loc, const char *what) {
  if (!c->block || c->stmt_depth != c->block->body_depth)
    return rd_error(c, loc, "%s belongs directly inside a block", what);
  if (c->block->has_body)
    return rd_error(c, loc,
                    "%s must come before the body statements of block '%s'",
                    what, block_name(c));
  return LOOM_OK;
}

/* ---- iter vars ----------------------------------------------------------- */

/* A binding is computed outside the block: it may not read the block's
 * own iter vars (TVM's rule, and structural equality maps them only after
 * the bindings). */
static loom_status check_binding(rd_ctx *c, loom_loc loc, const char *name,
                                 const loom_expr *binding) {
  for (int i = 0; i < c->block->iter_vars.n; i++) {
    const loom_var *v = RD_AT(c->block->iter_vars, loom_iter_var, i).var;
    if (loom_ir_expr_uses(binding, v))
      return rd_error(c, loc,
                      "the binding of iter var '%s' reads iter var '%s' of the same "
                      "block; a binding may use loop variables and variables from "
                      "outside the block",
                      name, v->name);
  }
  return LOOM_OK;
}

static loom_status push_iter(rd_ctx *c, const char *name, loom_dtype t,
                             loom_expr *min, loom_expr *extent,
                             loom_iter_kind kind, loom_expr *binding) {
  loom_var *v = loom_ir_var(c->a, name, t);
  loom_iter_var *iv =
      rd_vec_push(c, &c->block->iter_vars, sizeof(loom_iter_var));
  if (!v || !iv)
    return LOOM_NOMEM;
  iv->var = v;
  iv->dom.min = min;
  iv->dom.extent = extent;
  iv->kind = kind;
  if (!(binding = rd_cast(c, t, binding)))
    return LOOM_NOMEM;
  TRY(rd_vec_push_ptr(c, &c->block->iter_values, binding));
  return rd_define_var(c, v->name, v);
}

static const struct {
  const char *name;
  loom_iter_kind kind;
} axis_kinds[] = {
    {"axis.spatial", LOOM_ITER_SPATIAL}, {"axis.S", LOOM_ITER_SPATIAL},
    {"axis.reduce", LOOM_ITER_REDUCE},   {"axis.R", LOOM_ITER_REDUCE},
    {"axis.scan", LOOM_ITER_SCAN},       {"axis.opaque", LOOM_ITER_OPAQUE},
};

/* The domain of T.axis.*: an extent, or a (min, max) pair. Literals take
 * the binding's dtype so that an int64 loop gets an int64 axis. */
static loom_status axis_dom(rd_ctx *c, const py_expr *dom,
                            const loom_dtype *hint, loom_expr **min,
                            loom_expr **extent) {
  if (dom->kind == PY_TUPLE || dom->kind == PY_LIST) {
    if (dom->u.seq.n_items != 2 || !dom->u.seq.items[0] || !dom->u.seq.items[1])
      return rd_error(c, dom->loc, "an axis domain is an extent or (min, max)");
    rd_val lo, hi;
    TRY(rd_eval(c, dom->u.seq.items[0], &lo));
    TRY(rd_eval(c, dom->u.seq.items[1], &hi));
    const loom_dtype *t = hi.kind == RV_IR   ? &hi.e->dtype
                          : lo.kind == RV_IR ? &lo.e->dtype
                                             : hint;
    loom_expr *x, *y;
    TRY(rd_materialize(c, &lo, t, &x));
    TRY(rd_materialize(c, &hi, t, &y));
    if (!loom_dtype_is_int(x->dtype) || !loom_dtype_eq(x->dtype, y->dtype))
      return rd_error(c, dom->loc,
                      "an axis domain needs two integers of one dtype");
    *min = x;
    return (*extent = loom_ir_range_extent(c->a, x, y)) ? LOOM_OK : LOOM_NOMEM;
  }
  TRY(rd_int_expr(c, dom, hint, extent));
  *min = loom_ir_int(c->a, (*extent)->dtype, 0);
  return *min ? LOOM_OK : LOOM_NOMEM;
}

static loom_status axis_one(rd_ctx *c, const py_stmt *s, const py_expr *target,
                            const py_expr *call, const char *fn,
                            loom_iter_kind kind) {
  static const char *const params[] = {"dom", "binding", "dtype"};
  char what[64];
  py_expr *a[3];
  snprintf(what, sizeof what, "T.%s", fn);
  if (!target || target->kind != PY_NAME || !target->u.name)
    return rd_error(c, target ? target->loc : s->loc,
                    "%s defines one iter var; assign it to one name", what);
  TRY(rd_bind_args(c, call, what, params, 3, a));
  TRY(rd_require(c, call, what, a[0], "dom"));
  TRY(rd_require(c, call, what, a[1], "binding"));
  loom_dtype t = LOOM_INT32;
  bool has_dtype = a[2] != NULL;
  if (has_dtype)
    TRY(rd_dtype_arg(c, a[2], &t));
  rd_val bind;
  TRY(rd_eval(c, a[1], &bind));
  const loom_dtype *hint =
      bind.kind == RV_IR && loom_dtype_is_int(bind.e->dtype) ? &bind.e->dtype
      : has_dtype                                            ? &t
                                                             : NULL;
  loom_expr *min = NULL, *extent = NULL, *binding = NULL;
  TRY(axis_dom(c, a[0], hint, &min, &extent));
  int64_t n;
  if (loom_ir_is_const_int(extent, &n) && n <= 0)
    return rd_error(c, a[0]->loc,
                    "the domain of iter var '%s' is empty (extent %lld)",
                    target->u.name, (long long)n);
  /* TVM's rule: the widest of the domain's dtypes and the dtype argument. */
  loom_dtype vt = extent->dtype;
  if (min->dtype.bits > vt.bits)
    vt = min->dtype;
  if (has_dtype && t.bits > vt.bits)
    vt = loom_dtype_with_lanes(LOOM_DTYPE(vt.code, t.bits, 1), 1);
  TRY(rd_materialize(c, &bind, &vt, &binding));
  char b[LOOM_DTYPE_STRLEN];
  if (!loom_dtype_is_int(binding->dtype))
    return rd_error(c, a[1]->loc,
                    "an iter var binding must be an integer, got %s",
                    loom_dtype_str(binding->dtype, b));
  TRY(check_binding(c, a[1]->loc, target->u.name, binding));
  return push_iter(c, target->u.name, vt, min, extent, kind, binding);
}

static const rd_loop *find_loop(const rd_ctx *c, const loom_var *v) {
  for (int i = c->loops.n - 1; i >= 0; i--)
    if (RD_AT(c->loops, rd_loop, i).var == v)
      return &RD_AT(c->loops, rd_loop, i);
  return NULL;
}

static loom_status axis_remap(rd_ctx *c, const py_stmt *s,
                              const py_expr *target, const py_expr *call) {
  static const char *const params[] = {"kinds", "bindings", "dtype"};
  py_expr *a[3];
  TRY(rd_bind_args(c, call, "T.axis.remap", params, 3, a));
  TRY(rd_require(c, call, "T.axis.remap", a[0], "kinds"));
  TRY(rd_require(c, call, "T.axis.remap", a[1], "bindings"));
  const char *kinds;
  TRY(rd_str_arg(c, a[0], "the kinds of T.axis.remap (a string like \"SSR\")",
                 &kinds));
  int nk = (int)strlen(kinds);
  for (int i = 0; i < nk; i++)
    if (kinds[i] != 'S' && kinds[i] != 'R')
      return rd_error(c, a[0]->loc,
                      "T.axis.remap kind '%c' (position %d of \"%s\") is not "
                      "'S' (spatial) or 'R' (reduce)",
                      kinds[i], i + 1, kinds);
  py_expr *const *binds = &a[1];
  int nb = 1;
  if (a[1]->kind == PY_LIST || a[1]->kind == PY_TUPLE) {
    binds = a[1]->u.seq.items;
    nb = a[1]->u.seq.n_items;
  }
  if (nb != nk)
    return rd_error(c, a[1]->loc,
                    "T.axis.remap(\"%s\", ...) defines %d iter var%s but is "
                    "given %d binding%s",
                    kinds, nk, nk == 1 ? "" : "s", nb, nb == 1 ? "" : "s");
  py_expr *const *names = NULL; /* NULL: the target is one name */
  int nt = 1;
  if (target->kind == PY_TUPLE || target->kind == PY_LIST) {
    names = target->u.seq.items;
    nt = target->u.seq.n_items;
  }
  if (nt != nk)
    return rd_error(c, target->loc,
                    "%d name%s on the left, but T.axis.remap(\"%s\", ...) "
                    "defines %d iter var%s",
                    nt, nt == 1 ? "" : "s", kinds, nk, nk == 1 ? "" : "s");
  /* All bindings are read before any name is bound, as in Python. */
  const rd_loop **loops =
      loom_arena_alloc(c->a, sizeof(rd_loop *) * (size_t)(nk + 1));
  if (!loops)
    return LOOM_NOMEM;
  for (int i = 0; i < nk; i++) {
    const py_expr *ni = names ? names[i] : target;
    if (!ni || ni->kind != PY_NAME || !ni->u.name)
      return rd_error(c, ni ? ni->loc : target->loc,
                      "an iter var must be a plain name");
    for (int j = 0; j < i; j++)
      if (!strcmp(names[j]->u.name, ni->u.name))
        return rd_error(c, ni->loc,
                        "iter var '%s' is bound twice by one T.axis.remap; the first "
                        "binding would be lost (give each iter var its own name)",
                        ni->u.name);
    if (!binds[i])
      return rd_error(c, a[1]->loc, "missing binding");
    loom_expr *x;
    TRY(rd_expr(c, binds[i], NULL, &x));
    if (x->kind != LOOM_EXPR_VAR || !(loops[i] = find_loop(c, x->u.var)))
      return rd_error(
          c, binds[i]->loc,
          "T.axis.remap binds loop variables; this is not one "
          "(use T.axis.spatial(extent, binding) for an expression)");
  }
  for (int i = 0; i < nk; i++) {
    const rd_loop *l = loops[i];
    loom_expr *binding = loom_ir_ref(c->a, l->var);
    if (!binding)
      return LOOM_NOMEM;
    TRY(push_iter(c, (names ? names[i] : target)->u.name, l->var->dtype, l->min,
                  l->extent,
                  kinds[i] == 'S' ? LOOM_ITER_SPATIAL : LOOM_ITER_REDUCE,
                  binding));
  }
  (void)s;
  return LOOM_OK;
}

loom_status rd_axis_assign(rd_ctx *c, const py_stmt *s, const py_expr *target,
                           const py_expr *call, const char *name) {
  char what[64];
  snprintf(what, sizeof what, "T.%s", name);
  TRY(in_header(c, call->loc, what));
  if (!strcmp(name, "axis.remap"))
    return axis_remap(c, s, target, call);
  for (size_t i = 0; i < sizeof axis_kinds / sizeof *axis_kinds; i++)
    if (!strcmp(axis_kinds[i].name, name))
      return axis_one(c, s, target, call, name, axis_kinds[i].kind);
  return rd_error(c, call->loc,
                  "T.%s is not a TVMScript function; the axis kinds are "
                  "spatial, reduce, scan, opaque and remap",
                  name);
}

/* ---- header statements --------------------------------------------------- */

static loom_status regions(rd_ctx *c, const py_expr *call, const char *what,
                           loom_buffer_region **out, int *n) {
  if (call->u.call.n_kwargs)
    return rd_error(c, call->u.call.kwargs[0].loc,
                    "%s takes buffer regions, not keywords", what);
  py_expr *const *items = call->u.call.args;
  int k = call->u.call.n_args;
  if (k == 1 && items[0] &&
      (items[0]->kind == PY_LIST || items[0]->kind == PY_TUPLE)) {
    k = items[0]->u.seq.n_items;
    items = items[0]->u.seq.items;
  }
  loom_buffer_region *rs =
      k ? loom_arena_alloc(c->a, sizeof(loom_buffer_region) * (size_t)k) : NULL;
  if (k && !rs)
    return LOOM_NOMEM;
  for (int i = 0; i < k; i++) {
    if (!items[i])
      return rd_error(c, call->loc, "missing region");
    TRY(rd_region(c, items[i], &rs[i]));
  }
  *out = rs;
  *n = k;
  return LOOM_OK;
}

static loom_status reads_writes(rd_ctx *c, const py_expr *call, bool is_reads) {
  rd_block *b = c->block;
  const char *what = is_reads ? "T.reads" : "T.writes";
  if (is_reads ? b->has_reads : b->has_writes)
    return rd_error(c, call->loc, "%s is given twice in block '%s'", what,
                    block_name(c));
  if (is_reads) {
    b->has_reads = true;
    return regions(c, call, what, &b->block->reads, &b->block->n_reads);
  }
  b->has_writes = true;
  return regions(c, call, what, &b->block->writes, &b->block->n_writes);
}

static loom_status where(rd_ctx *c, const py_expr *call) {
  rd_block *b = c->block;
  if (b->has_where)
    return rd_error(c, call->loc, "T.where is given twice in block '%s'",
                    block_name(c));
  if (call->u.call.n_args != 1 || call->u.call.n_kwargs ||
      !call->u.call.args[0])
    return rd_error(c, call->loc, "T.where takes one condition");
  b->has_where = true;
  loom_expr *p;
  TRY(rd_bool_expr(c, call->u.call.args[0], &p));
  int64_t v;
  b->predicate = loom_ir_is_const_int(p, &v) && v == 1 ? NULL : p;
  return LOOM_OK;
}

static loom_status block_attr(rd_ctx *c, const py_expr *call, const char *fn) {
  char what[64];
  snprintf(what, sizeof what, "T.%s", fn);
  if (call->u.call.n_args != 1 || call->u.call.n_kwargs ||
      !call->u.call.args[0])
    return rd_error(c, call->loc, "%s takes one dict", what);
  return rd_attr_dict(c, call->u.call.args[0], what, &c->block->annotations);
}

loom_status rd_block_header_call(rd_ctx *c, const py_stmt *s,
                                 const py_expr *call, const char *name,
                                 bool *handled) {
  char what[64];
  (void)s;
  bool is_attr_dict = !strcmp(name, "attr") && call->u.call.n_args == 1 &&
                      call->u.call.n_kwargs == 0 && call->u.call.args[0] &&
                      call->u.call.args[0]->kind == PY_DICT;
  *handled = !strcmp(name, "reads") || !strcmp(name, "writes") ||
             !strcmp(name, "where") || !strcmp(name, "block_attr") ||
             !strcmp(name, "sblock_attr") || is_attr_dict;
  if (!*handled)
    return LOOM_OK;
  snprintf(what, sizeof what, "T.%s", name);
  TRY(in_header(c, call->loc, what));
  if (!strcmp(name, "reads") || !strcmp(name, "writes"))
    return reads_writes(c, call, !strcmp(name, "reads"));
  if (!strcmp(name, "where"))
    return where(c, call);
  return block_attr(c, call, name);
}

/* ---- block buffers ------------------------------------------------------- */

loom_status rd_block_alloc(rd_ctx *c, loom_buffer *b) {
  return rd_vec_push_ptr(c, c->block ? &c->block->allocs : &c->root_allocs, b);
}

loom_status rd_block_match(rd_ctx *c, const py_stmt *s, loom_buffer *b,
                           const loom_buffer_region *source) {
  TRY(in_header(c, s->loc, "T.match_buffer"));
  loom_match_buffer *m =
      rd_vec_push(c, &c->block->matches, sizeof(loom_match_buffer));
  if (!m)
    return LOOM_NOMEM;
  m->buffer = b;
  m->source = *source;
  return LOOM_OK;
}

loom_status rd_init_with(rd_ctx *c, const py_stmt *s, const py_block *body) {
  if (!c->block || c->stmt_depth != c->block->body_depth)
    return rd_error(c, s->loc, "T.init() belongs directly inside a block");
  if (c->block->has_init)
    return rd_error(c, s->loc, "block '%s' has two T.init() sections",
                    block_name(c));
  c->block->has_init = true;
  return rd_body(c, body, &c->block->block->init);
}

/* ---- the block itself ---------------------------------------------------- */

/* The buffers visible outside the block, which its regions may name. */
static loom_status outer_buffers(rd_ctx *c, int mark, rd_pending *p) {
  rd_vec v = {0};
  for (int i = 0; i < mark && i < c->syms.n; i++) {
    const rd_sym *s = &RD_AT(c->syms, rd_sym, i);
    if (s->kind != SYM_BUFFER)
      continue;
    bool seen = false;
    for (int j = 0; j < v.n && !seen; j++)
      seen = RD_AT(v, loom_buffer *, j) == s->buffer;
    if (!seen)
      TRY(rd_vec_push_ptr(c, &v, s->buffer));
  }
  p->outer = v.items;
  p->n_outer = v.n;
  return LOOM_OK;
}

static loom_status finish(rd_ctx *c, rd_block *f, const py_stmt *s,
                          loom_stmt **out) {
  loom_block *b = f->block;
  b->iter_vars = f->iter_vars.items;
  b->n_iter_vars = f->iter_vars.n;
  b->alloc_buffers = f->allocs.items;
  b->n_alloc_buffers = f->allocs.n;
  b->match_buffers = f->matches.items;
  b->n_match_buffers = f->matches.n;
  b->annotations = f->annotations.items;
  b->n_annotations = f->annotations.n;
  rd_sort_attrs(b->annotations, b->n_annotations);
  b->loc = s->loc;
  loom_stmt *r = loom_ir_stmt(c->a, LOOM_STMT_BLOCK_REALIZE, s->loc);
  if (!r)
    return LOOM_NOMEM;
  r->u.realize.iter_values = f->iter_values.items;
  r->u.realize.n_iter_values = f->iter_values.n;
  r->u.realize.predicate = f->predicate;
  r->u.realize.block = b;
  if (!f->has_reads || !f->has_writes) {
    rd_pending *p = rd_vec_push(c, &c->pending, sizeof(rd_pending));
    if (!p)
      return LOOM_NOMEM;
    p->block = b;
    p->want_reads = !f->has_reads;
    p->want_writes = !f->has_writes;
    TRY(outer_buffers(c, f->scope_mark, p));
  }
  *out = r;
  return LOOM_OK;
}

loom_status rd_block_with(rd_ctx *c, const py_stmt *s, const py_expr *call,
                          const py_block *body, loom_stmt **out) {
  static const char *const params[] = {"name", "no_realize"};
  py_expr *a[2];
  TRY(rd_bind_args(c, call, "T.block", params, 2, a));
  const char *name = "";
  if (a[0])
    TRY(rd_str_arg(c, a[0], "the block name", &name));
  if (a[1])
    return rd_error(c, a[1]->loc, "T.block(no_realize=...) is not supported");
  rd_block f = {0};
  if (!(f.block = loom_ir_block(c->a, name)))
    return LOOM_NOMEM;
  f.parent = c->block;
  f.body_depth = c->stmt_depth + 1;
  f.scope_mark = c->syms.n;
  c->block = &f;
  loom_status st = rd_body(c, body, &f.block->body);
  c->block = f.parent;
  TRY(st);
  return finish(c, &f, s, out);
}
