/* Statements of TVMScript: bodies, loops, stores, if/else, lets, asserts,
 * evaluations, attribute scopes and buffer declarations. A let, an assert
 * or a statement-level buffer binds the rest of its sequence, so a body is
 * built as a stack of open binders, closed innermost first at its end. */
#include "script/read.h"

#include <string.h>

static loom_status stmt(rd_ctx *c, const py_stmt *s, loom_stmt **out,
                        loom_stmt **binder);

static loom_stmt **binder_body(loom_stmt *b) {
  switch (b->kind) {
  case LOOM_STMT_LET: return &b->u.let.body;
  case LOOM_STMT_ASSERT: return &b->u.assert_.body;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return &b->u.alloc.body;
  case LOOM_STMT_FOR: /* not a binder: its body is not the rest of a list */
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_STORE:
  case LOOM_STMT_IF:
  case LOOM_STMT_SEQ:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_COUNT_: break;
  }
  return NULL;
}

/* A statement list as one statement; an empty list is T.evaluate(0), as in
 * TVM. */
static loom_status seq_of(rd_ctx *c, rd_vec *stmts, loom_loc loc,
                          loom_stmt **out) {
  if (stmts->n == 1) {
    *out = RD_AT(*stmts, loom_stmt *, 0);
    return LOOM_OK;
  }
  if (stmts->n == 0) {
    loom_stmt *s = loom_ir_stmt(c->a, LOOM_STMT_EVALUATE, loc);
    if (!s || !(s->u.evaluate.value = loom_ir_int(c->a, LOOM_INT32, 0)))
      return LOOM_NOMEM;
    *out = s;
    return LOOM_OK;
  }
  loom_stmt *s = loom_ir_stmt(c->a, LOOM_STMT_SEQ, loc);
  if (!s)
    return LOOM_NOMEM;
  s->u.seq.stmts = stmts->items;
  s->u.seq.n_stmts = stmts->n;
  *out = s;
  return LOOM_OK;
}

typedef struct body_frame {
  loom_stmt *binder; /* NULL for the body itself */
  rd_vec stmts;      /* loom_stmt * */
} body_frame;

static loom_status body_in_scope(rd_ctx *c, const py_block *body,
                                 loom_stmt **out) {
  rd_vec frames = {0};
  body_frame *f = rd_vec_push(c, &frames, sizeof(body_frame));
  loom_loc loc = {c->file, 0, 0};
  if (!f)
    return LOOM_NOMEM;
  if (body->n_stmts > 0 && body->stmts && body->stmts[0])
    loc = body->stmts[0]->loc;
  for (int i = 0; i < body->n_stmts; i++) {
    const py_stmt *ps = body->stmts ? body->stmts[i] : NULL;
    if (!ps)
      return rd_error(c, loc, "missing statement");
    loom_stmt *s = NULL, *binder = NULL;
    TRY(stmt(c, ps, &s, &binder));
    if ((s || binder) && c->block && c->stmt_depth == c->block->body_depth)
      c->block->has_body = true;
    f = &RD_AT(frames, body_frame, frames.n - 1);
    if (s)
      TRY(rd_vec_push_ptr(c, &f->stmts, s));
    if (binder) {
      TRY(rd_vec_push_ptr(c, &f->stmts, binder));
      if (!(f = rd_vec_push(c, &frames, sizeof(body_frame))))
        return LOOM_NOMEM;
      f->binder = binder;
    }
  }
  for (int k = frames.n - 1; k > 0; k--) {
    f = &RD_AT(frames, body_frame, k);
    TRY(seq_of(c, &f->stmts, f->binder->loc, binder_body(f->binder)));
  }
  return seq_of(c, &RD_AT(frames, body_frame, 0).stmts, loc, out);
}

loom_status rd_body(rd_ctx *c, const py_block *body, loom_stmt **out) {
  loom_loc loc = {c->file, 0, 0};
  if (body->n_stmts > 0 && body->stmts && body->stmts[0])
    loc = body->stmts[0]->loc;
  if (c->stmt_depth >= LOOM_SCRIPT_MAX_DEPTH)
    return rd_error(c, loc, "statements nested too deeply (limit is %d)",
                    LOOM_SCRIPT_MAX_DEPTH);
  c->stmt_depth++;
  int mark = rd_scope_open(c);
  loom_status st = body_in_scope(c, body, out);
  rd_scope_close(c, mark);
  c->stmt_depth--;
  return st;
}

static const char *name_of(const py_expr *e) {
  return e && e->kind == PY_NAME ? e->u.name : NULL;
}

/* ---- loops --------------------------------------------------------------- */

typedef struct loop_spec {
  loom_expr *min, *extent;
  loom_for_kind kind;
  const char *thread;
  rd_vec annotations; /* loom_attr */
  loom_loc loc;
} loop_spec;

/* min and extent of a loop from its start and stop; a literal bound takes
 * the other's dtype, and the extent is stop - start simplified. */
static loom_status bounds(rd_ctx *c, const py_expr *start, const py_expr *stop,
                          loop_spec *ls) {
  rd_val lo, hi;
  if (stop) {
    TRY(rd_eval(c, start, &lo));
    TRY(rd_eval(c, stop, &hi));
  } else {
    TRY(rd_eval(c, start, &hi));
    lo.kind = RV_INT;
    lo.i = 0;
    lo.loc = start->loc;
  }
  const loom_dtype *t = hi.kind == RV_IR   ? &hi.e->dtype
                        : lo.kind == RV_IR ? &lo.e->dtype
                                           : NULL;
  loom_expr *x, *y;
  TRY(rd_materialize(c, &lo, t, &x));
  TRY(rd_materialize(c, &hi, t, &y));
  char bx[LOOM_DTYPE_STRLEN], by[LOOM_DTYPE_STRLEN];
  if (!loom_dtype_is_int(x->dtype) || x->dtype.lanes != 1)
    return rd_error(c, lo.loc, "a loop bound must be an integer, got %s",
                    loom_dtype_str(x->dtype, bx));
  if (!loom_dtype_is_int(y->dtype) || y->dtype.lanes != 1)
    return rd_error(c, hi.loc, "a loop bound must be an integer, got %s",
                    loom_dtype_str(y->dtype, by));
  if (!loom_dtype_eq(x->dtype, y->dtype)) {
    if (x->kind == LOOM_EXPR_INT)
      x = rd_cast(c, y->dtype, x);
    else if (y->kind == LOOM_EXPR_INT)
      y = rd_cast(c, x->dtype, y);
    else
      return rd_error(c, ls->loc,
                      "loop bounds have different dtypes: %s and %s; convert "
                      "one with T.Cast",
                      loom_dtype_str(x->dtype, bx),
                      loom_dtype_str(y->dtype, by));
    if (!x || !y)
      return LOOM_NOMEM;
  }
  ls->min = x;
  if (!(ls->extent = loom_ir_range_extent(c->a, x, y)))
    return LOOM_NOMEM;
  int64_t n;
  if (loom_ir_is_const_int(ls->extent, &n) && n <= 0)
    return rd_error(c, stop ? stop->loc : start->loc,
                    "a loop must run at least once; its extent is %lld",
                    (long long)n);
  return LOOM_OK;
}

static loom_status loop_annotations(rd_ctx *c, const py_expr *e,
                                    loop_spec *ls) {
  if (!e || e->kind == PY_NONE)
    return LOOM_OK;
  return rd_attr_dict(c, e, "annotations", &ls->annotations);
}

static const struct {
  const char *name;
  loom_for_kind kind;
} loop_kinds[] = {
    {"serial", LOOM_FOR_SERIAL},
    {"parallel", LOOM_FOR_PARALLEL},
    {"vectorized", LOOM_FOR_VECTORIZED},
    {"unroll", LOOM_FOR_UNROLLED},
    {"thread_binding", LOOM_FOR_THREAD_BINDING},
};

static loom_status range_loop(rd_ctx *c, const py_expr *call, loop_spec *ls) {
  static const char *const params[] = {"start", "stop", "step", "annotations"};
  py_expr *a[4];
  TRY(rd_bind_args(c, call, "range", params, 4, a));
  TRY(rd_require(c, call, "range", a[0], "stop"));
  if (a[2]) {
    int64_t step;
    TRY(rd_const_int(c, a[2], "the step of range", &step));
    if (step != 1)
      return rd_error(c, a[2]->loc,
                      "TensorIR loops have step 1; got a step of %lld",
                      (long long)step);
  }
  TRY(bounds(c, a[0], a[1], ls));
  return loop_annotations(c, a[3], ls);
}

static loom_status kind_loop(rd_ctx *c, const py_expr *call, const char *name,
                             loom_for_kind kind, loop_spec *ls) {
  static const char *const params[] = {"start", "stop", "annotations", "step"};
  static const char *const tb_params[] = {"start", "stop", "thread",
                                          "annotations"};
  char what[64];
  py_expr *a[4];
  snprintf(what, sizeof what, "T.%s", name);
  bool tb = kind == LOOM_FOR_THREAD_BINDING;
  TRY(rd_bind_args(c, call, what, tb ? tb_params : params, 4, a));
  TRY(rd_require(c, call, what, a[0], "start"));
  ls->kind = kind;
  py_expr *stop = a[1], *ann = tb ? a[3] : a[2];
  if (!tb && a[3]) {
    int64_t step;
    TRY(rd_const_int(c, a[3], "the step", &step));
    if (step != 1)
      return rd_error(c, a[3]->loc,
                      "TensorIR loops have step 1; got a step of %lld",
                      (long long)step);
  }
  if (tb) {
    py_expr *thread = a[2];
    if (!thread && stop && stop->kind == PY_STR) {
      thread = stop; /* T.thread_binding(8, "threadIdx.x") */
      stop = NULL;
    }
    if (!thread)
      return rd_error(c, call->loc,
                      "T.thread_binding needs thread=\"threadIdx.x\" or "
                      "another thread name");
    TRY(rd_str_arg(c, thread, "thread", &ls->thread));
  }
  TRY(bounds(c, a[0], stop, ls));
  return loop_annotations(c, ann, ls);
}

/* Reads the iterator of a for statement into one loop_spec per target. */
static loom_status loop_specs(rd_ctx *c, const py_expr *iter, int n_targets,
                              loop_spec *ls) {
  char buf[96];
  const char *name = NULL;
  if (iter->kind == PY_CALL)
    name = rd_t_name(iter->u.call.func, buf, sizeof buf);
  const py_expr *f = iter->kind == PY_CALL ? iter->u.call.func : NULL;
  if (name && !strcmp(name, "grid")) {
    if (iter->u.call.n_kwargs)
      return rd_error(c, iter->u.call.kwargs[0].loc,
                      "T.grid takes no keyword arguments");
    if (iter->u.call.n_args != n_targets)
      return rd_error(c, iter->loc,
                      "T.grid has %d extent%s but the loop names %d variable%s",
                      iter->u.call.n_args, iter->u.call.n_args == 1 ? "" : "s",
                      n_targets, n_targets == 1 ? "" : "s");
    for (int i = 0; i < n_targets; i++) {
      if (!iter->u.call.args[i])
        return rd_error(c, iter->loc, "missing extent");
      ls[i].loc = iter->u.call.args[i]->loc;
      TRY(bounds(c, iter->u.call.args[i], NULL, &ls[i]));
    }
    return LOOM_OK;
  }
  if (iter->kind == PY_CALL && n_targets != 1)
    return rd_error(c, iter->loc,
                    "a loop over one range names one variable; use T.grid "
                    "for a nest of %d loops",
                    n_targets);
  ls->loc = iter->loc;
  if (f && f->kind == PY_NAME && f->u.name && !strcmp(f->u.name, "range") &&
      !rd_lookup(c, "range"))
    return range_loop(c, iter, ls);
  for (size_t k = 0; name && k < sizeof loop_kinds / sizeof *loop_kinds; k++)
    if (!strcmp(loop_kinds[k].name, name))
      return kind_loop(c, iter, name, loop_kinds[k].kind, ls);
  return rd_error(c, iter->loc,
                  "a for loop iterates over range(...), T.serial, T.parallel, "
                  "T.vectorized, T.unroll, T.thread_binding or T.grid");
}

static loom_status for_stmt(rd_ctx *c, const py_stmt *s, loom_stmt **out) {
  const py_expr *target = s->u.for_.target, *iter = s->u.for_.iter;
  if (!target || !iter)
    return rd_error(c, s->loc, "malformed for statement");
  py_expr *const *items = NULL; /* NULL: the target is one name */
  int n = 1;
  if (target->kind == PY_TUPLE) {
    items = target->u.seq.items;
    n = target->u.seq.n_items;
  }
  if (n < 1)
    return rd_error(c, target->loc, "a for loop needs a variable");
  const char **names = loom_arena_alloc(c->a, sizeof(char *) * (size_t)n);
  if (!names)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++) {
    const py_expr *t = items ? items[i] : target;
    if (!(names[i] = name_of(t)))
      return rd_error(c, t ? t->loc : target->loc,
                      "a loop variable must be a plain name");
  }
  loop_spec *ls = loom_arena_alloc(c->a, sizeof(loop_spec) * (size_t)n);
  if (!ls)
    return LOOM_NOMEM;
  TRY(loop_specs(c, iter, n, ls));
  int mark = rd_scope_open(c), loops_mark = c->loops.n;
  loom_stmt **loops = loom_arena_alloc(c->a, sizeof(loom_stmt *) * (size_t)n);
  if (!loops)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++) {
    loom_var *v = loom_ir_var(c->a, names[i], ls[i].extent->dtype);
    loom_stmt *l = loom_ir_stmt(c->a, LOOM_STMT_FOR, s->loc);
    rd_loop *fr = rd_vec_push(c, &c->loops, sizeof(rd_loop));
    if (!v || !l || !fr)
      return LOOM_NOMEM;
    fr->var = v;
    fr->min = ls[i].min;
    fr->extent = ls[i].extent;
    l->u.loop.var = v;
    l->u.loop.min = ls[i].min;
    l->u.loop.extent = ls[i].extent;
    l->u.loop.kind = ls[i].kind;
    l->u.loop.thread = ls[i].thread;
    l->u.loop.annotations = ls[i].annotations.items;
    l->u.loop.n_annotations = ls[i].annotations.n;
    rd_sort_attrs(l->u.loop.annotations, l->u.loop.n_annotations);
    loops[i] = l;
    TRY(rd_define_var(c, v->name, v));
  }
  loom_status st = rd_body(c, &s->u.for_.body, &loops[n - 1]->u.loop.body);
  rd_scope_close(c, mark);
  c->loops.n = loops_mark;
  TRY(st);
  for (int i = n - 1; i > 0; i--)
    loops[i - 1]->u.loop.body = loops[i];
  *out = loops[0];
  return LOOM_OK;
}

/* ---- stores and lets ----------------------------------------------------- */

/* The value of A[...] = v: a literal takes the buffer's dtype (with the
 * lanes of a vector index); another dtype is converted, as TVM does. */
static loom_status store_value(rd_ctx *c, loom_buffer *b, loom_expr **idx,
                               int n, const rd_val *v, loom_expr **out) {
  loom_dtype t = b->dtype;
  if (n > 0 && idx[n - 1]->dtype.lanes > 1)
    t = loom_dtype_with_lanes(b->dtype, idx[n - 1]->dtype.lanes);
  if (v->kind != RV_IR) {
    if (v->kind == RV_FLOAT && !loom_dtype_is_float(t)) {
      loom_expr *f;
      TRY(rd_materialize(c, v, NULL, &f));
      return (*out = rd_cast(c, t, f)) ? LOOM_OK : LOOM_NOMEM;
    }
    return rd_materialize(c, v, &t, out);
  }
  char bt[LOOM_DTYPE_STRLEN], bv[LOOM_DTYPE_STRLEN];
  if (v->e->dtype.code == LOOM_DT_HANDLE || v->e->dtype.code == LOOM_DT_VOID ||
      (v->e->dtype.lanes != t.lanes && v->e->dtype.lanes != 1))
    return rd_error(c, v->loc, "cannot store a %s value into %s buffer '%s'",
                    loom_dtype_str(v->e->dtype, bv), loom_dtype_str(t, bt),
                    b->name);
  return (*out = rd_cast(c, t, v->e)) ? LOOM_OK : LOOM_NOMEM;
}

static loom_status store(rd_ctx *c, const py_stmt *s, const py_expr *target,
                         const rd_val *value, loom_stmt **out) {
  loom_buffer *b;
  const py_expr *bn = target->u.sub.value;
  if (bn && bn->kind == PY_NAME && bn->u.name && !rd_lookup(c, bn->u.name))
    return rd_error(c, bn->loc, "store to unknown buffer '%s'", bn->u.name);
  TRY(rd_buffer_ref(c, bn, &b));
  loom_expr **idx;
  int n;
  TRY(rd_indices(c, target, b, &idx, &n));
  loom_stmt *st = loom_ir_stmt(c->a, LOOM_STMT_STORE, s->loc);
  if (!st)
    return LOOM_NOMEM;
  TRY(store_value(c, b, idx, n, value, &st->u.store.value));
  st->u.store.buffer = b;
  st->u.store.indices = idx;
  st->u.store.n_indices = n;
  *out = st;
  return LOOM_OK;
}

/* A let: the name is bound after its value is read, for the rest of the
 * sequence. */
static loom_status let(rd_ctx *c, const py_stmt *s, const char *name,
                       loom_dtype t, loom_expr *value, loom_stmt **binder) {
  loom_var *v = loom_ir_var(c->a, name, t);
  loom_stmt *st = loom_ir_stmt(c->a, LOOM_STMT_LET, s->loc);
  if (!v || !st)
    return LOOM_NOMEM;
  st->u.let.var = v;
  st->u.let.value = value;
  TRY(rd_define_var(c, v->name, v));
  *binder = st;
  return LOOM_OK;
}

static loom_status ann_assign(rd_ctx *c, const py_stmt *s, loom_stmt **binder) {
  const char *name = name_of(s->u.ann.target);
  if (!name)
    return rd_error(c, s->loc, "an annotated assignment must name a variable");
  if (!s->u.ann.annotation)
    return rd_error(c, s->loc, "missing annotation");
  if (!s->u.ann.value)
    return rd_error(c, s->loc, "let '%s' needs a value, as in %s: T.int32 = 0",
                    name, name);
  loom_dtype t, elem;
  const char *scope;
  TRY(rd_annotation_dtype(c, s->u.ann.annotation, &t, &elem, &scope));
  loom_expr *value;
  TRY(rd_expr(c, s->u.ann.value, &t, &value));
  char bt[LOOM_DTYPE_STRLEN], bv[LOOM_DTYPE_STRLEN];
  if (!loom_dtype_eq(value->dtype, t)) {
    if (value->kind == LOOM_EXPR_INT || value->kind == LOOM_EXPR_FLOAT)
      value = rd_cast(c, t, value);
    else
      return rd_error(c, s->u.ann.value->loc,
                      "let '%s' is declared %s but its value is %s", name,
                      loom_dtype_str(t, bt), loom_dtype_str(value->dtype, bv));
    if (!value)
      return LOOM_NOMEM;
  }
  TRY(let(c, s, name, t, value, binder));
  (*binder)->u.let.var->elem = elem;
  (*binder)->u.let.var->scope = scope;
  return LOOM_OK;
}

/* ---- buffers declared by assignment -------------------------------------- */

static loom_status buffer_stmt(rd_ctx *c, const py_stmt *s, loom_stmt_kind k,
                               loom_buffer *b, loom_stmt **binder) {
  loom_stmt *st = loom_ir_stmt(c->a, k, s->loc);
  if (!st)
    return LOOM_NOMEM;
  st->u.alloc.buffer = b;
  *binder = st;
  return LOOM_OK;
}

static bool has_kwarg(const py_expr *call, const char *name) {
  for (int i = 0; i < call->u.call.n_kwargs; i++)
    if (call->u.call.kwargs[i].name &&
        !strcmp(call->u.call.kwargs[i].name, name))
      return true;
  return false;
}

/* A = T.match_buffer(a, ...) at function level binds handle parameter a. */
static loom_status match_param(rd_ctx *c, const py_stmt *s, const char *name,
                               const py_expr *call) {
  const py_expr *h = call->u.call.n_args > 0 ? call->u.call.args[0] : NULL;
  for (int i = 0; !h && i < call->u.call.n_kwargs; i++)
    if (call->u.call.kwargs[i].name &&
        !strcmp(call->u.call.kwargs[i].name, "param"))
      h = call->u.call.kwargs[i].value;
  if (!h)
    return rd_error(c, call->loc, "T.match_buffer needs the handle it matches");
  if (h->kind == PY_SUBSCRIPT)
    return rd_error(c, h->loc,
                    "T.match_buffer of a region belongs inside a block");
  const char *hn = name_of(h);
  const rd_sym *sym = hn ? rd_lookup(c, hn) : NULL;
  loom_param *p = NULL;
  for (int i = 0; sym && sym->kind == SYM_VAR && i < c->params.n; i++)
    if (RD_AT(c->params, loom_param, i).var == sym->var)
      p = &RD_AT(c->params, loom_param, i);
  if (!p || p->var->dtype.code != LOOM_DT_HANDLE)
    return rd_error(c, h->loc,
                    "T.match_buffer at function level takes a T.handle "
                    "parameter");
  if (p->buffer)
    return rd_error(c, h->loc, "parameter '%s' is already bound to buffer '%s'",
                    hn, p->buffer->name);
  loom_buffer *b;
  TRY(rd_buffer_decl(c, call, BUF_MATCH, name, NULL, &b));
  p->buffer = b;
  (void)s;
  return rd_define_buffer(c, b->name, b);
}

static loom_status match_block(rd_ctx *c, const py_stmt *s, const char *name,
                               const py_expr *call) {
  const py_expr *src = call->u.call.n_args > 0 ? call->u.call.args[0] : NULL;
  if (!src)
    return rd_error(c, call->loc, "T.match_buffer needs the region it matches");
  loom_buffer_region region;
  TRY(rd_region(c, src, &region));
  loom_buffer *b;
  TRY(rd_buffer_decl(c, call, BUF_MATCH, name, &region, &b));
  TRY(rd_block_match(c, s, b, &region));
  return rd_define_buffer(c, b->name, b);
}

/* name = T.<fn>(...) for the declaration forms; *handled is false for any
 * other call. */
static loom_status decl_assign(rd_ctx *c, const py_stmt *s, const char *name,
                               const py_expr *call, const char *fn,
                               bool *handled, loom_stmt **binder) {
  loom_buffer *b;
  loom_dtype t;
  *handled = true;
  if (!strcmp(fn, "match_buffer")) {
    if (!c->block)
      return match_param(c, s, name, call);
    return match_block(c, s, name, call);
  }
  if (!strcmp(fn, "sblock_alloc_buffer") ||
      (!strcmp(fn, "alloc_buffer") && !c->func_is_tirx)) {
    TRY(rd_buffer_decl(c, call, BUF_BLOCK_ALLOC, name, NULL, &b));
    TRY(rd_block_alloc(c, b));
    return rd_define_buffer(c, b->name, b);
  }
  if (!strcmp(fn, "alloc_buffer") || !strcmp(fn, "decl_buffer") ||
      !strcmp(fn, "Buffer")) {
    bool is_alias = has_kwarg(call, "data") ||
                    (strcmp(fn, "alloc_buffer") && call->u.call.n_args > 2);
    if (!strcmp(fn, "Buffer") && !is_alias)
      return rd_error(c, call->loc,
                      "T.Buffer in a body declares a view of existing data and "
                      "needs data=...; allocate with T.alloc_buffer or "
                      "T.decl_buffer");
    rd_buf_form form = !strcmp(fn, "alloc_buffer") ? BUF_STMT_ALLOC
                       : !strcmp(fn, "Buffer")     ? BUF_PARAM
                                                   : BUF_DECL;
    TRY(rd_buffer_decl(c, call, form, name, NULL, &b));
    TRY(buffer_stmt(c, s, is_alias ? LOOM_STMT_DECL_BUFFER : LOOM_STMT_ALLOCATE,
                    b, binder));
    return rd_define_buffer(c, b->name, b);
  }
  if (loom_dtype_parse(fn, strlen(fn), &t) && call->u.call.n_args == 0 &&
      call->u.call.n_kwargs == 0) {
    /* x = T.int32(). TVM prints this for a variable that a buffer shape
     * in the signature already names ("n"): that is the same variable. */
    const rd_sym *prev = rd_lookup(c, name);
    if (prev && prev->kind == SYM_VAR && loom_dtype_eq(prev->var->dtype, t))
      return LOOM_OK;
    loom_var *v = loom_ir_var(c->a, name, t);
    if (!v)
      return LOOM_NOMEM;
    return rd_define_var(c, v->name, v);
  }
  *handled = false;
  return LOOM_OK;
}

/* N, M = T.int32(), T.int32(): symbolic variables, as TVM prints those a
 * function's shapes use. */
static loom_status symbols_assign(rd_ctx *c, const py_stmt *s,
                                  const py_expr *target, const py_expr *value,
                                  loom_stmt **binder) {
  for (int i = 0; i < target->u.seq.n_items; i++) {
    const char *name = name_of(target->u.seq.items[i]);
    const py_expr *v = value->u.seq.items[i];
    char buf[96];
    const char *fn = v->kind == PY_CALL ? rd_t_name(v->u.call.func, buf, sizeof buf)
                                        : NULL;
    loom_dtype t;
    if (!name || !fn || !loom_dtype_parse(fn, strlen(fn), &t) ||
        v->u.call.n_args || v->u.call.n_kwargs)
      return rd_error(c, v->loc, "a tuple assignment declares symbolic "
                                 "variables: each value must be T.<dtype>()");
    bool handled;
    TRY(decl_assign(c, s, name, v, fn, &handled, binder));
  }
  return LOOM_OK;
}

static loom_status assign(rd_ctx *c, const py_stmt *s, loom_stmt **out,
                          loom_stmt **binder) {
  const py_expr *target = s->u.assign.target, *value = s->u.assign.value;
  if (!target || !value)
    return rd_error(c, s->loc, "malformed assignment");
  char buf[96];
  const char *fn = value->kind == PY_CALL
                       ? rd_t_name(value->u.call.func, buf, sizeof buf)
                       : NULL;
  if (fn && !strncmp(fn, "axis.", 5))
    return rd_axis_assign(c, s, target, value, fn);
  if (target->kind == PY_SUBSCRIPT) {
    rd_val v;
    TRY(rd_eval(c, value, &v));
    return store(c, s, target, &v, out);
  }
  if (target->kind == PY_TUPLE && value->kind == PY_TUPLE &&
      target->u.seq.n_items == value->u.seq.n_items)
    return symbols_assign(c, s, target, value, binder);
  const char *name = name_of(target);
  if (!name)
    return rd_error(c, target->loc,
                    target->kind == PY_TUPLE
                        ? "a tuple on the left is only for T.axis.remap and "
                          "symbolic variables (N, M = T.int32(), T.int32())"
                        : "cannot assign to this");
  if (fn) {
    bool handled;
    TRY(decl_assign(c, s, name, value, fn, &handled, binder));
    if (handled)
      return LOOM_OK;
  }
  loom_expr *e;
  TRY(rd_expr(c, value, NULL, &e));
  if (e->dtype.code == LOOM_DT_VOID)
    return rd_error(c, value->loc, "'%s' cannot hold a void value", name);
  return let(c, s, name, e->dtype, e, binder);
}

static loom_status aug_assign(rd_ctx *c, const py_stmt *s, loom_stmt **out,
                              loom_stmt **binder) {
  const py_expr *target = s->u.aug.target;
  if (!target || !s->u.aug.value)
    return rd_error(c, s->loc, "malformed assignment");
  /* a op= b is a = a op b: read a as an expression, then build the op. */
  py_expr *bin = loom_arena_alloc(c->a, sizeof(py_expr));
  if (!bin)
    return LOOM_NOMEM;
  bin->kind = PY_BINOP;
  bin->loc = target->loc;
  bin->u.bin.op = s->u.aug.op;
  bin->u.bin.a = (py_expr *)target;
  bin->u.bin.b = s->u.aug.value;
  rd_val v;
  TRY(rd_eval(c, bin, &v));
  if (target->kind == PY_SUBSCRIPT)
    return store(c, s, target, &v, out);
  const char *name = name_of(target);
  if (!name)
    return rd_error(c, target->loc, "cannot assign to this");
  loom_expr *e;
  TRY(rd_materialize(c, &v, NULL, &e));
  return let(c, s, name, e->dtype, e, binder);
}

/* ---- other statements ---------------------------------------------------- */

static loom_status evaluate(rd_ctx *c, const py_stmt *s, const py_expr *e,
                            loom_stmt **out) {
  loom_stmt *st = loom_ir_stmt(c->a, LOOM_STMT_EVALUATE, s->loc);
  if (!st)
    return LOOM_NOMEM;
  TRY(rd_expr(c, e, NULL, &st->u.evaluate.value));
  *out = st;
  return LOOM_OK;
}

static loom_status func_attr(rd_ctx *c, const py_stmt *s, const py_expr *call) {
  if (c->block || c->stmt_depth != 1)
    return rd_error(c, s->loc,
                    "T.func_attr belongs at the top of the function body");
  if (c->has_func_attr)
    return rd_error(c, s->loc, "T.func_attr is given twice");
  if (call->u.call.n_args != 1 || call->u.call.n_kwargs)
    return rd_error(c, call->loc, "T.func_attr takes one dict");
  c->has_func_attr = true;
  return rd_attr_dict(c, call->u.call.args[0], "T.func_attr", &c->attrs);
}

static loom_status expr_stmt(rd_ctx *c, const py_stmt *s, loom_stmt **out) {
  const py_expr *e = s->u.expr;
  if (!e)
    return rd_error(c, s->loc, "missing expression");
  if (e->kind == PY_STR)
    return LOOM_OK; /* a docstring */
  char buf[96];
  const char *fn =
      e->kind == PY_CALL ? rd_t_name(e->u.call.func, buf, sizeof buf) : NULL;
  if (!fn)
    return evaluate(c, s, e, out);
  if (!strcmp(fn, "func_attr"))
    return func_attr(c, s, e);
  if (!strcmp(fn, "evaluate")) {
    if (e->u.call.n_args != 1 || e->u.call.n_kwargs || !e->u.call.args[0])
      return rd_error(c, e->loc, "T.evaluate takes one expression");
    return evaluate(c, s, e->u.call.args[0], out);
  }
  bool handled;
  TRY(rd_block_header_call(c, s, e, fn, &handled));
  if (handled)
    return LOOM_OK;
  if (!strncmp(fn, "axis.", 5) || !strcmp(fn, "match_buffer") ||
      !strcmp(fn, "alloc_buffer") || !strcmp(fn, "sblock_alloc_buffer") ||
      !strcmp(fn, "decl_buffer") || !strcmp(fn, "Buffer"))
    return rd_error(c, e->loc, "the result of T.%s must be assigned to a name",
                    fn);
  if (!strcmp(fn, "block") || !strcmp(fn, "sblock") || !strcmp(fn, "init") ||
      !strcmp(fn, "attr"))
    return rd_error(c, e->loc, "T.%s opens a scope; write 'with T.%s(...):'",
                    fn, fn);
  return evaluate(c, s, e, out);
}

static loom_status if_stmt(rd_ctx *c, const py_stmt *s, loom_stmt **out) {
  loom_stmt *st = loom_ir_stmt(c->a, LOOM_STMT_IF, s->loc);
  if (!st)
    return LOOM_NOMEM;
  if (!s->u.if_.cond)
    return rd_error(c, s->loc, "malformed if statement");
  TRY(rd_bool_expr(c, s->u.if_.cond, &st->u.if_.cond));
  TRY(rd_body(c, &s->u.if_.body, &st->u.if_.then_case));
  if (s->u.if_.orelse.n_stmts > 0)
    TRY(rd_body(c, &s->u.if_.orelse, &st->u.if_.else_case));
  *out = st;
  return LOOM_OK;
}

static loom_status attr_with(rd_ctx *c, const py_stmt *s, const py_expr *call,
                             const py_block *body, loom_stmt **out) {
  static const char *const params[] = {"node", "attr_key", "value"};
  py_expr *a[3];
  TRY(rd_bind_args(c, call, "T.attr", params, 3, a));
  for (int i = 0; i < 3; i++)
    TRY(rd_require(c, call, "T.attr", a[i], params[i]));
  loom_stmt *st = loom_ir_stmt(c->a, LOOM_STMT_ATTR, s->loc);
  if (!st)
    return LOOM_NOMEM;
  if (a[0]->kind == PY_STR) {
    if (!(st->u.attr.node =
              loom_ir_value_str(c->a, a[0]->u.str ? a[0]->u.str : "")))
      return LOOM_NOMEM;
  } else {
    loom_expr *n;
    TRY(rd_expr(c, a[0], NULL, &n));
    if (!(st->u.attr.node = loom_ir_value_expr(c->a, n)))
      return LOOM_NOMEM;
  }
  const char *key;
  TRY(rd_str_arg(c, a[1], "the attribute key", &key));
  if (!(st->u.attr.key = rd_attr_key(c, key)))
    return LOOM_NOMEM;
  if (a[2]->kind == PY_STR) {
    if (!(st->u.attr.value = loom_ir_str(c->a, a[2]->u.str ? a[2]->u.str : "")))
      return LOOM_NOMEM;
  } else {
    TRY(rd_expr(c, a[2], NULL, &st->u.attr.value));
  }
  TRY(rd_body(c, body, &st->u.attr.body));
  *out = st;
  return LOOM_OK;
}

static loom_status with_stmt(rd_ctx *c, const py_stmt *s, loom_stmt **out) {
  if (s->u.with.n_items != 1 || !s->u.with.items || !s->u.with.items[0].context)
    return rd_error(c, s->loc, "write one context per with statement");
  const py_with_item *item = &s->u.with.items[0];
  const py_expr *ctx = item->context;
  char buf[96];
  const char *fn = ctx->kind == PY_CALL
                       ? rd_t_name(ctx->u.call.func, buf, sizeof buf)
                       : NULL;
  if (!fn)
    return rd_error(c, ctx->loc,
                    "a with statement takes T.block(...), T.init() or "
                    "T.attr(...)");
  if (item->target)
    return rd_error(c, item->target->loc,
                    "'with T.%s(...) as ...' is not supported", fn);
  if (!strcmp(fn, "block") || !strcmp(fn, "sblock"))
    return rd_block_with(c, s, ctx, &s->u.with.body, out);
  if (!strcmp(fn, "init"))
    return rd_init_with(c, s, &s->u.with.body);
  if (!strcmp(fn, "attr"))
    return attr_with(c, s, ctx, &s->u.with.body, out);
  return rd_error(c, ctx->loc, "T.%s cannot open a with statement", fn);
}

static loom_status assert_stmt(rd_ctx *c, const py_stmt *s,
                               loom_stmt **binder) {
  loom_stmt *st = loom_ir_stmt(c->a, LOOM_STMT_ASSERT, s->loc);
  if (!st)
    return LOOM_NOMEM;
  if (!s->u.assert_.cond)
    return rd_error(c, s->loc, "malformed assert");
  TRY(rd_bool_expr(c, s->u.assert_.cond, &st->u.assert_.cond));
  const py_expr *m = s->u.assert_.msg;
  if (!m || m->kind == PY_STR) {
    if (!(st->u.assert_.message =
              loom_ir_str(c->a, m && m->u.str ? m->u.str : "")))
      return LOOM_NOMEM;
  } else {
    TRY(rd_expr(c, m, NULL, &st->u.assert_.message));
  }
  *binder = st;
  return LOOM_OK;
}

static loom_status stmt(rd_ctx *c, const py_stmt *s, loom_stmt **out,
                        loom_stmt **binder) {
  switch (s->kind) {
  case PY_S_EXPR: return expr_stmt(c, s, out);
  case PY_S_ASSIGN: return assign(c, s, out, binder);
  case PY_S_ANNASSIGN: return ann_assign(c, s, binder);
  case PY_S_AUGASSIGN: return aug_assign(c, s, out, binder);
  case PY_S_FOR: return for_stmt(c, s, out);
  case PY_S_IF: return if_stmt(c, s, out);
  case PY_S_WITH: return with_stmt(c, s, out);
  case PY_S_ASSERT: return assert_stmt(c, s, binder);
  case PY_S_PASS: return LOOM_OK;
  case PY_S_WHILE:
    return rd_error(c, s->loc,
                    "while loops are not supported; TensorIR "
                    "loops are for loops over a range");
  case PY_S_RETURN:
    return rd_error(c, s->loc, "return is not supported in a prim_func");
  case PY_S_BREAK:
  case PY_S_CONTINUE:
    return rd_error(c, s->loc, "%s is not supported in TensorIR",
                    s->kind == PY_S_BREAK ? "break" : "continue");
  case PY_S_FUNCDEF:
  case PY_S_CLASSDEF:
    return rd_error(c, s->loc, "a nested %s is not supported in a prim_func",
                    s->kind == PY_S_FUNCDEF ? "function" : "class");
  case PY_S_IMPORT:
    return rd_error(c, s->loc, "import belongs at the top of the file");
  }
  return rd_error(c, s->loc, "unsupported statement");
}
