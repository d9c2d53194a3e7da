/* Statements of the interpreter: compiled once into nodes, then run. Loops
 * run serially; a block realize binds its iter vars (sharing the slot of a
 * plain variable binding), checks the predicate and the domains, makes its
 * buffers and match_buffer views, and runs init on the first reduction step;
 * stores are bounds-checked. */
#include "interp/interp_impl.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t wrap_to(loom_dtype t, uint64_t u) {
  if (t.code == LOOM_DT_INT && t.bits == 64)
    return u;
  if (t.code == LOOM_DT_INT && t.bits == 32)
    return ((u & 0xffffffffu) ^ 0x80000000u) - 0x80000000u;
  return norm_int(t, u).u;
}

static loom_status run_kid(const snode *k, frame *fr) {
  return k ? k->run(k, fr) : LOOM_OK;
}

/* ---- running ------------------------------------------------------------- */

static loom_status exec_error(const snode *n, frame *fr) {
  fr->loc = n->loc;
  return run_error(fr, "%s", n->error);
}

static loom_status exec_for(const snode *n, frame *fr) {
  fr->loc = n->loc;
  int64_t lo, ext;
  TRY(eval_int(n->exprs[0], fr, &lo));
  TRY(eval_int(n->exprs[1], fr, &ext));
  ilane *v = &fr->sv[n->slot];
  loom_dtype t = n->s->u.loop.var->dtype;
  t.lanes = 1;
  const snode *body = n->kids[0];
  for (int64_t i = 0; i < ext; i++) {
    v->u = wrap_to(t, (uint64_t)lo + (uint64_t)i);
    TRY(run_kid(body, fr));
  }
  return LOOM_OK;
}

/* A binding outside its iter var's domain is a broken schedule (TVM's
 * block semantics promise every instance lies in the domain), so it is
 * reported rather than run. Checked only once the predicate holds: padded
 * instances that T.where filters out may lie outside. */
static loom_status check_domains(const snode *n, frame *fr) {
  const loom_block *b = n->s->u.realize.block;
  for (int i = 0; i < n->n_checked; i++) {
    int k = n->checked[i];
    int64_t lo, ext;
    if (n->dom_lo) {
      lo = n->dom_lo[k];
      ext = n->dom_n[k];
    } else {
      TRY(eval_int(n->dom_min[k], fr, &lo));
      TRY(eval_int(n->dom_ext[k], fr, &ext));
    }
    int64_t x;
    if (n->iter_check[k] == ITER_CHECK_NEVER)
      continue;
    if (n->iter_check[k] == ITER_CHECK_ALWAYS) {
      x = lane_i64(fr->sv[n->iter_slot[k]]);
    } else {
      const ival *v = &fr->vars[n->iter_slot[k]];
      if (v->t.lanes != 1 || loom_dtype_is_float(v->t))
        continue;
      x = lane_i64(v->l[0]);
    }
    if (x < lo || x - lo >= ext)
      return run_error(fr, "block '%s': iter var %s = %lld lies outside "
                       "its domain [%lld, %lld)", b->name,
                       b->iter_vars[k].var->name, (long long)x, (long long)lo,
                       (long long)(lo + ext));
  }
  return LOOM_OK;
}

/* The init runs on the first step of every reduction: when each REDUCE iter
 * var is at the start of its domain. */
static loom_status is_first_step(const snode *n, frame *fr, bool *out) {
  *out = true;
  for (int i = 0; i < n->n_reduce; i++) {
    int k = n->reduce[i];
    int64_t lo;
    if (n->dom_lo)
      lo = n->dom_lo[k];
    else
      TRY(eval_int(n->dom_min[k], fr, &lo));
    int slot = n->iter_slot[k];
    ilane x = n->iter_check[k] == ITER_CHECK_BY_TYPE ? fr->vars[slot].l[0]
                                                    : fr->sv[slot];
    if (lane_i64(x) != lo)
      *out = false;
  }
  return LOOM_OK;
}

/* Makes the views of n's sites, runs body and init as the block says, and
 * frees the views again. */
static loom_status run_block(const snode *n, frame *fr) {
  TRY(check_domains(n, fr));
  loom_status st = LOOM_OK;
  int pushed = 0;
  while (pushed < n->n_layouts && st == LOOM_OK) {
    st = push_site(fr, n->layouts[pushed]);
    if (st == LOOM_OK)
      pushed++;
  }
  if (st == LOOM_OK && n->init) {
    bool is_first;
    st = is_first_step(n, fr, &is_first);
    if (st == LOOM_OK && is_first)
      st = run_kid(n->init, fr);
  }
  if (st == LOOM_OK)
    st = run_kid(n->body, fr);
  while (pushed > 0)
    pop_view(fr, n->layouts[--pushed]->slot);
  return st;
}

/* A realize whose iter vars share their values' slots, lie in their
 * domains by construction, and whose block makes no buffers: only the init
 * test is left. */
static inline loom_status run_plain(const snode *n, frame *fr) {
  fr->loc = n->loc;
  if (n->init) {
    bool is_first = true;
    for (int i = 0; i < n->n_reduce; i++) {
      int k = n->reduce[i];
      is_first &= (int64_t)fr->sv[n->iter_slot[k]].u == n->dom_lo[k];
    }
    if (is_first)
      TRY(n->init->run(n->init, fr));
  }
  return run_kid(n->body, fr);
}

static loom_status exec_plain_realize(const snode *n, frame *fr) {
  return run_plain(n, fr);
}

/* A loop whose body is a plain realize, the shape every loop nest over a
 * block has: the realize runs inline. */
static loom_status exec_for_plain(const snode *n, frame *fr) {
  fr->loc = n->loc;
  int64_t lo, ext;
  TRY(eval_int(n->exprs[0], fr, &lo));
  TRY(eval_int(n->exprs[1], fr, &ext));
  ilane *v = &fr->sv[n->slot];
  loom_dtype t = n->s->u.loop.var->dtype;
  t.lanes = 1;
  const snode *body = n->kids[0];
  for (int64_t i = 0; i < ext; i++) {
    v->u = wrap_to(t, (uint64_t)lo + (uint64_t)i);
    TRY(run_plain(body, fr));
  }
  return LOOM_OK;
}

static loom_status exec_realize(const snode *n, frame *fr) {
  fr->loc = n->loc;
  for (int i = 0; i < n->n_copied; i++) {
    int k = n->copied[i];
    const enode *e = n->exprs[k];
    if (e->scalar)
      TRY(get_scalar(e, fr, &fr->sv[n->iter_slot[k]]));
    else
      TRY(e->eval(e, fr, &fr->vars[n->iter_slot[k]]));
  }
  if (n->predicate) {
    int64_t pred;
    TRY(eval_int(n->predicate, fr, &pred));
    if (!pred)
      return LOOM_OK;
  }
  return run_block(n, fr);
}

/* A store of one lane at scalar indices (at most 8). */
static loom_status exec_scalar_store(const snode *n, frame *fr) {
  fr->loc = n->loc;
  const enode *value = n->exprs[0];
  ilane x;
  TRY(get_scalar(value, fr, &x));
  const view *v = &fr->views[n->slot];
  uint64_t uf = (uint64_t)v->offset;
  int m = n->n_exprs - 1;
  for (int k = 0; k < m; k++) {
    ilane i;
    TRY(get_scalar(n->exprs[k + 1], fr, &i));
    if (i.u >= (uint64_t)v->shape[k])
      return access_error((const enode *const *)n->exprs + 1, m, fr, v, true);
    uf += i.u * (uint64_t)v->strides[k];
  }
  int64_t f = (int64_t)uf;
  if (f < 0 || f > v->max_flat)
    return access_error((const enode *const *)n->exprs + 1, m, fr, v, true);
  loom_dtype t = v->buf->dtype;
  t.lanes = 1;
  if (n->is_cast)
    x = cast_lane(value->t, t, x);
  store_one(t, v->data, f, x);
  return LOOM_OK;
}

/* A store of one lane at indices that are scalar variables. */
static loom_status exec_store_vars(const snode *n, frame *fr) {
  fr->loc = n->loc;
  const enode *value = n->exprs[0];
  ilane x;
  TRY(get_scalar(value, fr, &x));
  const view *v = &fr->views[n->slot];
  uint64_t uf = (uint64_t)v->offset;
  int m = n->n_exprs - 1;
  bool is_in = true;
  if (m == 2) { /* the commonest case, without the loop */
    uint64_t i = fr->sv[n->index_slots[0]].u, j = fr->sv[n->index_slots[1]].u;
    is_in = i < (uint64_t)v->shape[0] && j < (uint64_t)v->shape[1];
    uf += i * (uint64_t)v->strides[0] + j * (uint64_t)v->strides[1];
  }
  for (int k = 0; m != 2 && k < m && is_in; k++) {
    uint64_t i = fr->sv[n->index_slots[k]].u;
    is_in = i < (uint64_t)v->shape[k];
    uf += i * (uint64_t)v->strides[k];
  }
  int64_t f = (int64_t)uf;
  if (!is_in || f < 0 || f > v->max_flat)
    return access_error((const enode *const *)n->exprs + 1, m, fr, v, true);
  if (n->is_cast)
    x = cast_lane(value->t, n->elem_t, x);
  store_one(n->elem_t, v->data, f, x);
  return LOOM_OK;
}

static loom_status exec_store(const snode *n, frame *fr) {
  fr->loc = n->loc;
  const view *v = &fr->views[n->slot];
  int m = n->n_exprs - 1;
  ival *val = malloc(sizeof *val);
  int64_t *idx = calloc((size_t)(m ? m : 1), sizeof *idx);
  loom_status st = val && idx ? LOOM_OK : LOOM_NOMEM;
  if (st == LOOM_OK)
    st = n->exprs[0]->eval(n->exprs[0], fr, val);
  ival iv;
  int lanes = st == LOOM_OK ? val->t.lanes : 1;
  for (int k = 0; k < m && st == LOOM_OK; k++) {
    st = n->exprs[k + 1]->eval(n->exprs[k + 1], fr, &iv);
    if (st == LOOM_OK && iv.t.lanes != 1 && lanes != iv.t.lanes && lanes != 1)
      st = run_error(fr, "store of %d lanes at a %d-lane index", lanes,
                     iv.t.lanes);
    if (st == LOOM_OK && iv.t.lanes > lanes)
      lanes = iv.t.lanes;
  }
  /* Indices are evaluated again per lane: they are pure, and this keeps
   * one index vector of m entries rather than lanes x m. */
  loom_dtype t = v->buf->dtype;
  t.lanes = 1;
  for (int l = 0; l < lanes && st == LOOM_OK; l++) {
    for (int k = 0; k < m && st == LOOM_OK; k++) {
      st = n->exprs[k + 1]->eval(n->exprs[k + 1], fr, &iv);
      if (st == LOOM_OK)
        idx[k] = lane_i64(iv.l[iv.t.lanes == 1 ? 0 : l]);
    }
    int64_t flat;
    if (st == LOOM_OK)
      st = flat_index(fr, v, idx, true, &flat);
    if (st == LOOM_OK) {
      loom_dtype vt = val->t;
      vt.lanes = 1;
      ilane x = val->l[val->t.lanes == 1 ? 0 : l];
      store_elem(t, v->data, flat, loom_dtype_eq(vt, t) ? x : cast_lane(vt, t, x));
    }
  }
  free(val);
  free(idx);
  return st;
}

static loom_status exec_if(const snode *n, frame *fr) {
  fr->loc = n->loc;
  int64_t c;
  TRY(eval_int(n->exprs[0], fr, &c));
  return run_kid(n->kids[c ? 0 : 1], fr);
}

static loom_status exec_seq(const snode *n, frame *fr) {
  for (int k = 0; k < n->n_kids; k++)
    TRY(run_kid(n->kids[k], fr));
  return LOOM_OK;
}

static loom_status exec_evaluate(const snode *n, frame *fr) {
  fr->loc = n->loc;
  ival v;
  return n->exprs[0]->eval(n->exprs[0], fr, &v);
}

static loom_status exec_let(const snode *n, frame *fr) {
  fr->loc = n->loc;
  const enode *e = n->exprs[0];
  if (e->scalar)
    TRY(get_scalar(e, fr, &fr->sv[n->slot]));
  else
    TRY(e->eval(e, fr, &fr->vars[n->slot]));
  return run_kid(n->kids[0], fr);
}

static loom_status exec_buffer(const snode *n, frame *fr) {
  fr->loc = n->loc;
  TRY(push_site(fr, n->layouts[0]));
  loom_status st = run_kid(n->kids[0], fr);
  pop_view(fr, n->layouts[0]->slot);
  return st;
}

static loom_status exec_attr(const snode *n, frame *fr) {
  fr->loc = n->loc;
  return run_kid(n->kids[0], fr);
}

static loom_status exec_assert(const snode *n, frame *fr) {
  fr->loc = n->loc;
  int64_t c;
  TRY(eval_int(n->exprs[0], fr, &c));
  if (!c) {
    const loom_expr *m = n->s->u.assert_.message;
    return run_error(fr, "assertion failed: %s",
                     m && m->kind == LOOM_EXPR_STR ? m->u.str : "(no message)");
  }
  return run_kid(n->kids[0], fr);
}

/* ---- compiling ----------------------------------------------------------- */

snode *new_stmt(compiler *c, const loom_stmt *s, const loom_loc *loc,
                int n_kids, int n_exprs) {
  snode *n = cnew(c, sizeof *n);
  if (!n)
    return NULL;
  n->s = s;
  n->loc = loc;
  n->slot = -1;
  n->n_kids = n_kids;
  n->n_exprs = n_exprs;
  if (n_kids > 0)
    n->kids = cnew(c, (size_t)n_kids * sizeof *n->kids);
  if (n_exprs > 0)
    n->exprs = cnew(c, (size_t)n_exprs * sizeof *n->exprs);
  return c->is_nomem ? NULL : n;
}

snode *error_stmt(compiler *c, const loom_stmt *s, const loom_loc *loc,
                  const char *msg) {
  snode *n = msg ? new_stmt(c, s, loc, 0, 0) : NULL;
  if (!n) {
    c->is_nomem = true;
    return NULL;
  }
  n->run = exec_error;
  n->error = msg;
  return n;
}

/* Compiles e into n->exprs[k]; false when out of memory. */
static bool expr_at(compiler *c, snode *n, int k, const loom_expr *e,
                    int depth) {
  n->exprs[k] = compile_expr(c, e, depth);
  return n->exprs[k] != NULL;
}

/* Compiles s into n->kids[k] (NULL stays NULL); false when out of memory. */
static bool stmt_at(compiler *c, snode *n, int k, const loom_stmt *s,
                    int depth) {
  if (!s)
    return true;
  n->kids[k] = compile_stmt(c, s, n->loc, depth);
  return n->kids[k] != NULL;
}

/* An int constant whose value eval_int would read as x. */
static bool is_const_int(const enode *n, int64_t *x) {
  if (n->e->kind != LOOM_EXPR_INT || !n->scalar || n->t.code != LOOM_DT_INT)
    return false;
  ilane v;
  if (n->scalar(n, NULL, &v) != LOOM_OK) /* a constant never fails */
    return false;
  *x = lane_i64(v);
  return true;
}

/* Records the values loop variable v takes when its bounds are constants
 * and never wrap, so iter vars bound to it may skip their domain checks. */
static void set_loop_range(compiler *c, const snode *n, loom_dtype t) {
  int64_t lo, ext, last;
  if (c->is_nomem || !is_const_int(n->exprs[0], &lo) ||
      !is_const_int(n->exprs[1], &ext) || t.code != LOOM_DT_INT ||
      (t.bits != 32 && t.bits != 64))
    return;
  if (ext <= 0)
    ext = 0;
  if (__builtin_add_overflow(lo, ext > 0 ? ext - 1 : 0, &last))
    return;
  if (t.bits == 32 && (lo < INT32_MIN || last > INT32_MAX))
    return;
  scope_var *v = &c->vars[c->n_vars - 1];
  v->has_range = true;
  v->lo = lo;
  v->hi = lo + ext;
}

static snode *compile_for(compiler *c, const loom_stmt *s, const loom_loc *loc,
                          int depth) {
  snode *n = new_stmt(c, s, loc, 1, 2);
  if (!n || !expr_at(c, n, 0, s->u.loop.min, depth + 1) ||
      !expr_at(c, n, 1, s->u.loop.extent, depth + 1))
    return NULL;
  int mark = c->n_vars, slot_mark = c->n_var_slots;
  loom_dtype t = s->u.loop.var->dtype;
  t.lanes = 1;
  n->slot = scope_bind(c, s->u.loop.var, -1, true, t);
  set_loop_range(c, n, t);
  bool is_ok = stmt_at(c, n, 0, s->u.loop.body, depth + 1);
  scope_pop(c, mark, slot_mark, c->n_views);
  n->run = exec_for;
  if (is_ok && n->kids[0] && n->kids[0]->run == exec_plain_realize)
    n->run = exec_for_plain;
  return is_ok ? n : NULL;
}

/* Binds the iter vars to the values compiled into n->exprs: a value that is
 * a plain scalar variable shares that variable's slot. */
static bool bind_iter_vars(compiler *c, snode *n, const loom_block *b) {
  size_t m = (size_t)(b->n_iter_vars ? b->n_iter_vars : 1);
  n->iter_slot = cnew(c, m * sizeof *n->iter_slot);
  n->copied = cnew(c, m * sizeof *n->copied);
  n->iter_check = cnew(c, m * sizeof *n->iter_check);
  n->reduce = cnew(c, m * sizeof *n->reduce);
  n->checked = cnew(c, m * sizeof *n->checked);
  if (c->is_nomem)
    return false;
  for (int k = 0; k < b->n_iter_vars; k++) {
    const enode *e = n->exprs[k];
    bool is_alias = e->leaf == LEAF_VAR;
    if (!is_alias)
      n->copied[n->n_copied++] = k;
    if (b->iter_vars[k].kind == LOOM_ITER_REDUCE)
      n->reduce[n->n_reduce++] = k;
    n->iter_check[k] = !e->scalar ? ITER_CHECK_BY_TYPE
                       : loom_dtype_is_float(e->t) ? ITER_CHECK_NEVER
                       : ITER_CHECK_ALWAYS;
    n->iter_slot[k] = scope_bind(c, b->iter_vars[k].var, is_alias ? e->slot : -1,
                                 e->scalar != NULL, e->t);
  }
  return !c->is_nomem;
}

/* Compiles the domains; when all are int constants they are kept as
 * numbers. */
static bool compile_domains(compiler *c, snode *n, const loom_block *b,
                            int depth) {
  int m = b->n_iter_vars;
  size_t sz = (size_t)(m ? m : 1);
  n->dom_min = cnew(c, sz * sizeof *n->dom_min);
  n->dom_ext = cnew(c, sz * sizeof *n->dom_ext);
  int64_t *lo = cnew(c, sz * sizeof *lo), *ext = cnew(c, sz * sizeof *ext);
  bool is_const = true;
  for (int k = 0; k < m && !c->is_nomem; k++) {
    n->dom_min[k] = compile_expr(c, b->iter_vars[k].dom.min, depth);
    if (!n->dom_min[k])
      break;
    n->dom_ext[k] = compile_expr(c, b->iter_vars[k].dom.extent, depth);
    if (!n->dom_ext[k])
      break;
    is_const = is_const && is_const_int(n->dom_min[k], &lo[k]) &&
               is_const_int(n->dom_ext[k], &ext[k]);
  }
  if (c->is_nomem)
    return false;
  if (is_const) {
    n->dom_lo = lo;
    n->dom_n = ext;
  }
  return true;
}

/* The range [lo, hi) of the loop variable an iter var is bound to. */
typedef struct loop_range {
  bool is_known;
  int64_t lo, hi;
} loop_range;

/* An iter var bound to a loop variable whose every value lies in the
 * constant domain needs no check. */
static void skip_proven_checks(snode *n, const loom_block *b,
                               const loop_range *ranges) {
  for (int k = 0; n->dom_lo && k < b->n_iter_vars; k++) {
    const loop_range *v = &ranges[k];
    int64_t end;
    if (v->is_known && (v->hi <= v->lo ||
                        (!__builtin_add_overflow(n->dom_lo[k], n->dom_n[k], &end) &&
                         v->lo >= n->dom_lo[k] && v->hi <= end)))
      n->iter_check[k] = ITER_CHECK_NEVER;
  }
  /* Only constant domains can be skipped: others are evaluated, and may
   * fail, whatever the value. */
  for (int k = 0; k < b->n_iter_vars; k++)
    if (!n->dom_lo || n->iter_check[k] != ITER_CHECK_NEVER)
      n->checked[n->n_checked++] = k;
}

static bool is_plain(const snode *n) {
  if (n->n_copied || n->predicate || n->n_checked || n->n_layouts || !n->dom_lo)
    return false;
  for (int i = 0; i < n->n_reduce; i++)
    if (n->iter_check[n->reduce[i]] == ITER_CHECK_BY_TYPE)
      return false;
  return true;
}

static snode *compile_realize(compiler *c, const loom_stmt *s,
                              const loom_loc *loc, int depth) {
  const loom_block *b = s->u.realize.block;
  if (s->u.realize.n_iter_values != b->n_iter_vars)
    return error_stmt(c, s, loc, loom_arena_printf(c->arena, "block '%s' has "
                      "%d iter vars but %d bindings", b->name, b->n_iter_vars,
                      s->u.realize.n_iter_values));
  int m = b->n_iter_vars;
  snode *n = new_stmt(c, s, loc, 0, m);
  if (!n)
    return NULL;
  for (int k = 0; k < m; k++)
    if (!expr_at(c, n, k, s->u.realize.iter_values[k], depth + 1))
      return NULL;
  int mark = c->n_vars, slot_mark = c->n_var_slots, view_mark = c->n_views;
  /* Copies, not pointers into the scope: binding the iter vars may move it. */
  loop_range *ranges = cnew(c, (size_t)(m ? m : 1) * sizeof *ranges);
  for (int k = 0; ranges && k < m; k++)
    if (n->exprs[k]->leaf == LEAF_VAR) {
      const scope_var *v = scope_find_var(c, n->exprs[k]->e->u.var);
      if (v && v->has_range)
        ranges[k] = (loop_range){true, v->lo, v->hi};
    }
  bool is_ok = ranges && bind_iter_vars(c, n, b);
  if (is_ok && s->u.realize.predicate) {
    n->predicate = compile_expr(c, s->u.realize.predicate, depth + 1);
    is_ok = n->predicate != NULL;
  }
  is_ok = is_ok && compile_domains(c, n, b, depth + 1);
  if (is_ok)
    skip_proven_checks(n, b, ranges);
  n->n_layouts = b->n_alloc_buffers + b->n_match_buffers;
  n->layouts = cnew(c, (size_t)(n->n_layouts + 1) * sizeof *n->layouts);
  for (int k = 0; k < b->n_alloc_buffers && is_ok && !c->is_nomem; k++) {
    n->layouts[k] = compile_layout(c, SITE_ALLOC, b->alloc_buffers[k], NULL,
                                   depth + 1);
    is_ok = n->layouts[k] != NULL;
  }
  for (int k = 0; k < b->n_match_buffers && is_ok && !c->is_nomem; k++) {
    const loom_match_buffer *mb = &b->match_buffers[k];
    n->layouts[b->n_alloc_buffers + k] =
        compile_layout(c, SITE_MATCH, mb->buffer, &mb->source, depth + 1);
    is_ok = n->layouts[b->n_alloc_buffers + k] != NULL;
  }
  if (is_ok && !c->is_nomem && b->init) {
    n->init = compile_stmt(c, b->init, loc, depth + 1);
    is_ok = n->init != NULL;
  }
  if (is_ok && !c->is_nomem && b->body) {
    n->body = compile_stmt(c, b->body, loc, depth + 1);
    is_ok = n->body != NULL;
  }
  scope_pop(c, mark, slot_mark, view_mark);
  n->run = exec_realize;
  if (is_ok && is_plain(n))
    n->run = exec_plain_realize;
  return is_ok && !c->is_nomem ? n : NULL;
}

static snode *compile_store(compiler *c, const loom_stmt *s,
                            const loom_loc *loc, int depth) {
  const loom_buffer *b = s->u.store.buffer;
  int slot = scope_find_view(c, b);
  if (slot < 0)
    return error_stmt(c, s, loc, loom_arena_printf(c->arena, "buffer '%s' has "
                      "no storage here", b->name));
  int m = s->u.store.n_indices;
  if (m != b->ndim)
    return error_stmt(c, s, loc, loom_arena_printf(c->arena, "%d indices into "
                      "%d-d buffer '%s'", m, b->ndim, b->name));
  snode *n = new_stmt(c, s, loc, 0, m + 1);
  if (!n || !expr_at(c, n, 0, s->u.store.value, depth + 1))
    return NULL;
  bool is_scalar = n->exprs[0]->scalar && m <= 8;
  for (int k = 0; k < m; k++) {
    if (!expr_at(c, n, k + 1, s->u.store.indices[k], depth + 1))
      return NULL;
    is_scalar &= n->exprs[k + 1]->scalar != NULL;
  }
  n->slot = slot;
  loom_dtype t = b->dtype;
  t.lanes = 1;
  n->is_cast = !loom_dtype_eq(n->exprs[0]->t, t);
  n->elem_t = t;
  n->run = is_scalar ? exec_scalar_store : exec_store;
  if (is_scalar && (n->index_slots = variable_slots(c, n->exprs + 1, m)))
    n->run = exec_store_vars;
  return n;
}

static snode *compile_let_stmt(compiler *c, const loom_stmt *s,
                               const loom_loc *loc, int depth) {
  snode *n = new_stmt(c, s, loc, 1, 1);
  if (!n || !expr_at(c, n, 0, s->u.let.value, depth + 1))
    return NULL;
  int mark = c->n_vars, slot_mark = c->n_var_slots;
  const enode *v = n->exprs[0];
  n->slot = scope_bind(c, s->u.let.var, -1, v->scalar != NULL, v->t);
  bool is_ok = stmt_at(c, n, 0, s->u.let.body, depth + 1);
  scope_pop(c, mark, slot_mark, c->n_views);
  n->run = exec_let;
  return is_ok ? n : NULL;
}

static snode *compile_buffer(compiler *c, const loom_stmt *s,
                             const loom_loc *loc, int depth) {
  snode *n = new_stmt(c, s, loc, 1, 0);
  if (!n)
    return NULL;
  int mark = c->n_vars, slot_mark = c->n_var_slots, view_mark = c->n_views;
  n->n_layouts = 1;
  n->layouts = cnew(c, sizeof *n->layouts);
  if (n->layouts)
    n->layouts[0] = compile_layout(c, s->kind == LOOM_STMT_ALLOCATE ? SITE_ALLOC
                                   : SITE_ALIAS, s->u.alloc.buffer, NULL,
                                   depth + 1);
  bool is_ok = n->layouts && n->layouts[0] &&
               stmt_at(c, n, 0, s->u.alloc.body, depth + 1);
  scope_pop(c, mark, slot_mark, view_mark);
  n->run = exec_buffer;
  return is_ok ? n : NULL;
}

static snode *compile_kind(compiler *c, const loom_stmt *s,
                           const loom_loc *loc, int depth) {
  snode *n;
  switch (s->kind) {
  case LOOM_STMT_FOR: return compile_for(c, s, loc, depth);
  case LOOM_STMT_BLOCK_REALIZE: return compile_realize(c, s, loc, depth);
  case LOOM_STMT_STORE: return compile_store(c, s, loc, depth);
  case LOOM_STMT_LET: return compile_let_stmt(c, s, loc, depth);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return compile_buffer(c, s, loc, depth);
  case LOOM_STMT_IF:
    n = new_stmt(c, s, loc, 2, 1);
    if (!n || !expr_at(c, n, 0, s->u.if_.cond, depth + 1) ||
        !stmt_at(c, n, 0, s->u.if_.then_case, depth + 1) ||
        !stmt_at(c, n, 1, s->u.if_.else_case, depth + 1))
      return NULL;
    n->run = exec_if;
    return n;
  case LOOM_STMT_SEQ:
    n = new_stmt(c, s, loc, s->u.seq.n_stmts, 0);
    for (int k = 0; n && k < s->u.seq.n_stmts; k++)
      if (!stmt_at(c, n, k, s->u.seq.stmts[k], depth + 1))
        return NULL;
    if (n)
      n->run = exec_seq;
    return n;
  case LOOM_STMT_EVALUATE:
    if (is_wmma_call(s->u.evaluate.value))
      return compile_wmma(c, s, loc, depth);
    n = new_stmt(c, s, loc, 0, 1);
    if (!n || !expr_at(c, n, 0, s->u.evaluate.value, depth + 1))
      return NULL;
    n->run = exec_evaluate;
    return n;
  case LOOM_STMT_ATTR:
    n = new_stmt(c, s, loc, 1, 0);
    if (!n || !stmt_at(c, n, 0, s->u.attr.body, depth + 1))
      return NULL;
    n->run = exec_attr;
    return n;
  case LOOM_STMT_ASSERT:
    n = new_stmt(c, s, loc, 1, 1);
    if (!n || !expr_at(c, n, 0, s->u.assert_.cond, depth + 1) ||
        !stmt_at(c, n, 0, s->u.assert_.body, depth + 1))
      return NULL;
    n->run = exec_assert;
    return n;
  case LOOM_STMT_COUNT_: break;
  }
  return error_stmt(c, s, loc, loom_arena_printf(c->arena, "cannot run a %s",
                    loom_stmt_kind_name(s->kind)));
}

snode *compile_stmt(compiler *c, const loom_stmt *s, const loom_loc *loc,
                    int depth) {
  /* The depth error is reported where the enclosing statement is. */
  if (depth >= INTERP_MAX_DEPTH)
    return error_stmt(c, s, loc, loom_arena_printf(c->arena, "program nested "
                      "too deeply (limit is %d)", INTERP_MAX_DEPTH));
  if (s->loc.line > 0)
    loc = &s->loc;
  else if (s->kind == LOOM_STMT_BLOCK_REALIZE &&
           s->u.realize.block->loc.line > 0)
    loc = &s->u.realize.block->loc;
  return compile_kind(c, s, loc, depth);
}
