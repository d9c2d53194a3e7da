/* transform_layout and transform_block_layout: an index map rewrites a
 * buffer's layout (its shape and every access and region of it in the
 * function), or a block's iteration space (its iters, bindings and loops).
 * Maps are bijections here; padding maps are refused. */
#include "schedule/index_map.h"

#include <string.h>

#define MAX_DIMS 32

/* ---- the buffer argument ---------------------------------------------------- */

/* The buffer named by the attrs at i: its index among the block's reads
 * (kind 0) or writes (kind 1). */
loom_status sched_pick_buffer(sched_call *c, const loom_block *b, int i,
                              loom_buffer **out, bool *is_write) {
  if (c->n_attrs < i + 2 || c->attrs[i].kind != LOOM_TV_INT ||
      c->attrs[i + 1].kind != LOOM_TV_INT)
    return sched_fail(c, "buffer must be (\"read\" or \"write\", index)");
  int64_t k = c->attrs[i].i;
  bool w = c->attrs[i + 1].i != 0;
  int n = w ? b->n_writes : b->n_reads;
  if (k < 0 || k >= n)
    return sched_fail(c, "block '%s' %s %d buffer%s, so the index must be in "
                         "[0, %d), not %lld",
                      b->name, w ? "writes" : "reads", n, n == 1 ? "" : "s", n,
                      (long long)k);
  *out = w ? b->writes[k].buffer : b->reads[k].buffer;
  if (is_write)
    *is_write = w;
  return LOOM_OK;
}

/* ---- rewriting accesses ------------------------------------------------------ */

typedef struct relayout {
  loom_buffer *old, *new_buf;
  const sched_index_map *map;
  loom_arith_ctx *ctx;
  bool oom;
} relayout;

static loom_expr **map_indices(relayout *rl, loom_arena *a, loom_expr **idx) {
  int n = rl->map->n_results;
  loom_expr **out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out || !sched_index_map_apply(a, rl->map, idx, out)) {
    rl->oom = true;
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!(out[i] = loom_arith_simplify(a, rl->ctx, out[i]))) {
      rl->oom = true;
      return NULL;
    }
  return out;
}

static loom_expr *relayout_load(const sched_map *m, loom_arena *a,
                                loom_expr *load) {
  relayout *rl = m->ctx;
  if (load->u.load.buffer != rl->old)
    return load;
  loom_expr **idx = map_indices(rl, a, load->u.load.indices);
  loom_expr *n = idx ? loom_ir_load(a, rl->new_buf, idx, rl->map->n_results)
                     : NULL;
  if (n)
    n->dtype = load->dtype;
  return n;
}

static loom_stmt *relayout_store(const sched_map *m, loom_arena *a,
                                 loom_stmt *s) {
  relayout *rl = m->ctx;
  if (s->kind != LOOM_STMT_STORE || s->u.store.buffer != rl->old)
    return s;
  loom_stmt *n = loom_arena_alloc(a, sizeof *n);
  loom_expr **idx = map_indices(rl, a, s->u.store.indices);
  if (!n || !idx)
    return NULL;
  *n = *s;
  n->u.store.buffer = rl->new_buf;
  n->u.store.indices = idx;
  n->u.store.n_indices = rl->map->n_results;
  return n;
}

/* A region of the old buffer as a region of the new one: points map to
 * points; other regions to the bounds of the map over them (the whole
 * dimension where those are unknown). */
static bool map_region(relayout *rl, loom_arena *a, const loom_buffer_region *r,
                       loom_buffer_region *out) {
  int nd = r->n_ranges, nr = rl->map->n_results;
  out->buffer = rl->new_buf;
  out->n_ranges = nr;
  out->ranges = loom_arena_alloc(a, (size_t)(nr ? nr : 1) * sizeof *out->ranges);
  if (!out->ranges || nd > MAX_DIMS)
    return false;
  bool points = true;
  loom_expr *mins[MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    int64_t e;
    points &= loom_ir_is_const_int(r->ranges[d].extent, &e) && e == 1;
    mins[d] = r->ranges[d].min;
  }
  if (points) {
    loom_expr **idx = map_indices(rl, a, mins);
    if (!idx)
      return false;
    for (int i = 0; i < nr; i++) {
      out->ranges[i].min = idx[i];
      out->ranges[i].extent = loom_ir_int(a, idx[i]->dtype, 1);
      if (!out->ranges[i].extent)
        return false;
    }
    return true;
  }
  loom_arith_relax relax[MAX_DIMS];
  loom_expr *args[MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    loom_var *t = loom_ir_var(a, "t", r->ranges[d].min->dtype);
    if (!t || !(args[d] = loom_ir_ref(a, t)))
      return false;
    relax[d] = (loom_arith_relax){t, r->ranges[d]};
  }
  loom_expr *res[MAX_DIMS];
  if (nr > MAX_DIMS || !sched_index_map_apply(a, rl->map, args, res))
    return false;
  for (int i = 0; i < nr; i++) {
    loom_arith_intset set;
    if (loom_arith_intset_eval(a, rl->ctx, res[i], relax, nd, &set) != LOOM_OK)
      return false;
    if (set.is_unbounded || set.is_empty || !set.min || !set.extent) {
      out->ranges[i].min = loom_ir_int(a, rl->new_buf->shape[i]->dtype, 0);
      out->ranges[i].extent = rl->new_buf->shape[i];
    } else {
      out->ranges[i].min = loom_arith_simplify(a, rl->ctx, set.min);
      out->ranges[i].extent = loom_arith_simplify(a, rl->ctx, set.extent);
    }
    if (!out->ranges[i].min || !out->ranges[i].extent)
      return false;
  }
  return true;
}

static loom_buffer_region *map_regions(relayout *rl, loom_arena *a,
                                       const loom_buffer_region *rs, int n) {
  bool any = false;
  for (int i = 0; i < n; i++)
    any |= rs[i].buffer == rl->old;
  if (!any)
    return (loom_buffer_region *)rs;
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)n * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    out[i] = rs[i];
    if (rs[i].buffer == rl->old && !map_region(rl, a, &rs[i], &out[i]))
      return NULL;
  }
  return out;
}

static loom_block *relayout_block(const sched_map *m, loom_arena *a,
                                  const loom_block *old, loom_block *b) {
  relayout *rl = m->ctx;
  (void)old;
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *b;
  c->reads = map_regions(rl, a, b->reads, b->n_reads);
  c->writes = map_regions(rl, a, b->writes, b->n_writes);
  if ((b->n_reads && !c->reads) || (b->n_writes && !c->writes))
    return NULL;
  for (int i = 0; i < b->n_alloc_buffers; i++)
    if (b->alloc_buffers[i] == rl->old) {
      c->alloc_buffers = loom_arena_alloc(
          a, (size_t)b->n_alloc_buffers * sizeof *c->alloc_buffers);
      if (!c->alloc_buffers)
        return NULL;
      for (int k = 0; k < b->n_alloc_buffers; k++)
        c->alloc_buffers[k] =
            b->alloc_buffers[k] == rl->old ? rl->new_buf : b->alloc_buffers[k];
      break;
    }
  for (int i = 0; i < b->n_match_buffers; i++)
    if (b->match_buffers[i].source.buffer == rl->old) {
      loom_match_buffer *mb = loom_arena_alloc(
          a, (size_t)b->n_match_buffers * sizeof *mb);
      if (!mb)
        return NULL;
      for (int k = 0; k < b->n_match_buffers; k++) {
        mb[k] = b->match_buffers[k];
        if (mb[k].source.buffer == rl->old &&
            !map_region(rl, a, &b->match_buffers[k].source, &mb[k].source))
          return NULL;
      }
      c->match_buffers = mb;
      break;
    }
  return c;
}

/* ---- padding ----------------------------------------------------------------- */

/* One result of a map that splits a parameter: p, p // c, p % c or
 * p // c % d, as the parameter and the stride of its digit. */
static bool digit_of(const loom_expr *e, const sched_index_map *m, int *param,
                     int64_t *stride) {
  int64_t c = 1, d;
  if (e->kind == LOOM_EXPR_FLOORMOD && loom_ir_is_const_int(e->u.bin.b, &d))
    e = e->u.bin.a;
  if (e->kind == LOOM_EXPR_FLOORDIV && loom_ir_is_const_int(e->u.bin.b, &c))
    e = e->u.bin.a;
  if (e->kind != LOOM_EXPR_VAR || c <= 0)
    return false;
  for (int i = 0; i < m->n_params; i++)
    if (m->params[i] == e->u.var) {
      *param = i;
      *stride = c;
      return true;
    }
  return false;
}

/* The padding condition for parameter p = sum(digit * stride) >= n, in
 * TVM's form for two digits, a * c + b (b < c, a < A): a == A - 1 and
 * k <= b with k = n - (A - 1) * c. */
static loom_expr *pad_condition(loom_arena *a, loom_expr *const *digit,
                                const int64_t *stride, const int64_t *ext,
                                int nd, loom_expr *inverse, int64_t n) {
  loom_dtype t = inverse->dtype;
  if (nd == 2 && stride[1] == 1 && stride[0] == ext[1]) {
    int64_t k = n - (ext[0] - 1) * stride[0];
    if (k > 0 && k < ext[1])
      return loom_ir_binary(
          a, LOOM_EXPR_AND,
          loom_ir_binary(a, LOOM_EXPR_EQ, digit[0], loom_ir_int(a, t, ext[0] - 1)),
          loom_ir_binary(a, LOOM_EXPR_LE, loom_ir_int(a, t, k), digit[1]));
  }
  return loom_ir_binary(a, LOOM_EXPR_LE, loom_ir_int(a, t, n), inverse);
}

/* With a pad_value, the block that writes the buffer is rewritten to run
 * over the whole padded layout: its iters become those of the new shape
 * (`v_axis<k>` over loops `axis<k>`), and it stores the pad value where the
 * inverse of the map falls outside the old shape, TVM's way. Needed: a
 * one-dimensional buffer split by the map, the block its only writer,
 * bound trivially, storing it once at its iters. */
static loom_status pad_producer(sched_call *c, const sched_path *p0,
                                const loom_buffer *old, loom_buffer *nb,
                                const sched_index_map *map, int64_t pad) {
  loom_arena *a = sched_arena(c->s);
  const loom_block *b0 = p0->stmts[p0->n - 1]->u.realize.block;
  sched_path p = {0};
  loom_status st = LOOM_OK;
  (void)pad;
  if (!sched_find_block(c->mod->funcs[p0->func], b0->name, &p))
    return sched_nomem(c);
  p.func = p0->func;
  int ri = p.n - 1;
  loom_stmt *r = p.stmts[ri];
  const loom_block *b = r->u.realize.block;
  int64_t n_old;
  const loom_stmt *body = b->body;
  bool ok = old->ndim == 1 && loom_ir_is_const_int(old->shape[0], &n_old) &&
            b->n_iter_vars == 1 && !b->init && ri >= 1 &&
            b->n_writes == 1 && b->writes[0].buffer == nb &&
            body->kind == LOOM_STMT_STORE && body->u.store.buffer == nb &&
            p.stmts[ri - 1]->kind == LOOM_STMT_FOR &&
            p.stmts[ri - 1]->u.loop.body == r &&
            r->u.realize.iter_values[0]->kind == LOOM_EXPR_VAR &&
            r->u.realize.iter_values[0]->u.var == p.stmts[ri - 1]->u.loop.var &&
            !sched_has_predicate(r);
  int nr = map->n_results;
  int64_t stride[MAX_DIMS], ext[MAX_DIMS];
  for (int j = 0; ok && j < nr; j++) {
    int q;
    ok = digit_of(map->results[j], map, &q, &stride[j]) &&
         loom_ir_is_const_int(nb->shape[j], &ext[j]);
  }
  if (!ok) {
    st = sched_fail(c, "padding is supported only for a one-dimensional "
                       "buffer split by the map and written once by block "
                       "'%s', bound trivially",
                    b0->name);
    goto out;
  }
  /* New iters and loops, the inverse of the map, the pad condition. */
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)nr * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)nr * sizeof *vals);
  loom_expr **idx = loom_arena_alloc(a, (size_t)nr * sizeof *idx);
  loom_var *lv[MAX_DIMS];
  loom_expr *inverse = NULL;
  if (!iters || !vals || !idx) {
    st = sched_nomem(c);
    goto out;
  }
  loom_dtype dt = b->iter_vars[0].var->dtype;
  for (int j = 0; j < nr; j++) {
    char name[32];
    snprintf(name, sizeof name, "v_axis%d", j);
    loom_var *v = loom_ir_var(a, name, dt);
    snprintf(name, sizeof name, "axis%d", j);
    lv[j] = loom_ir_var(a, name, dt);
    loom_expr *zero = loom_ir_int(a, dt, 0), *e = loom_ir_int(a, dt, ext[j]);
    vals[j] = lv[j] ? loom_ir_ref(a, lv[j]) : NULL;
    idx[j] = v ? loom_ir_ref(a, v) : NULL;
    if (!v || !vals[j] || !zero || !e || !idx[j]) {
      st = sched_nomem(c);
      goto out;
    }
    iters[j] = (loom_iter_var){v, {zero, e}, LOOM_ITER_SPATIAL};
    loom_expr *term = stride[j] == 1
                          ? idx[j]
                          : loom_ir_binary(a, LOOM_EXPR_MUL, idx[j],
                                           loom_ir_int(a, dt, stride[j]));
    inverse = inverse ? loom_ir_binary(a, LOOM_EXPR_ADD, inverse, term) : term;
    if (!inverse) {
      st = sched_nomem(c);
      goto out;
    }
  }
  loom_expr *cond = pad_condition(a, idx, stride, ext, nr, inverse, n_old);
  sched_index_map pv;
  char why[256];
  if (!sched_index_map_parse(a, c->attrs[3].s, dt, &pv, why, sizeof why)) {
    st = sched_fail(c, "pad_value: %s", why);
    goto out;
  }
  loom_expr *padv[MAX_DIMS];
  if (pv.n_results != 1 || pv.n_params != nr) {
    st = sched_fail(c, "pad_value must take %d indices and give one value",
                    nr);
    goto out;
  }
  if (!cond || !sched_index_map_apply(a, &pv, idx, padv)) {
    st = sched_nomem(c);
    goto out;
  }
  const loom_var *olds[1] = {b->iter_vars[0].var};
  loom_expr *news[1] = {inverse};
  sched_map sm = {.vars = olds, .values = news, .n = 1};
  loom_expr *value = sched_subst_expr(a, body->u.store.value, &sm);
  loom_expr *args[3] = {cond, padv[0], value};
  loom_expr *sel = value ? loom_ir_call(a, body->u.store.value->dtype,
                                        LOOM_OP_IF_THEN_ELSE, args, 3)
                         : NULL;
  loom_stmt *store = loom_arena_alloc(a, sizeof *store);
  loom_block *nbk = loom_arena_alloc(a, sizeof *nbk);
  loom_stmt *nreal = loom_arena_alloc(a, sizeof *nreal);
  loom_buffer_region *w = loom_arena_alloc(a, sizeof *w);
  if (!sel || !store || !nbk || !nreal || !w) {
    st = sched_nomem(c);
    goto out;
  }
  *store = *body;
  store->u.store.value = sel;
  store->u.store.indices = idx;
  store->u.store.n_indices = nr;
  *nbk = *b;
  nbk->iter_vars = iters;
  nbk->n_iter_vars = nr;
  nbk->body = store;
  w->buffer = nb;
  w->n_ranges = nr;
  w->ranges = loom_arena_alloc(a, (size_t)nr * sizeof *w->ranges);
  if (!w->ranges) {
    st = sched_nomem(c);
    goto out;
  }
  for (int j = 0; j < nr; j++)
    w->ranges[j] = (loom_range){idx[j], loom_ir_int(a, dt, 1)};
  nbk->writes = w;
  /* Reads: what the old block read, at the inverse. */
  loom_stmt tmp = *r;
  loom_block rb = *b;
  rb.writes = NULL;
  rb.n_writes = 0;
  tmp.u.realize.block = &rb;
  loom_stmt *sub = sched_subst_stmt(a, &tmp, &sm);
  if (!sub) {
    st = sched_nomem(c);
    goto out;
  }
  nbk->reads = sub->u.realize.block->reads;
  *nreal = *r;
  nreal->u.realize.block = nbk;
  nreal->u.realize.iter_values = vals;
  nreal->u.realize.n_iter_values = nr;
  loom_stmt *cur = nreal;
  for (int j = nr - 1; j >= 0 && cur; j--) {
    loom_stmt *l = loom_arena_alloc(a, sizeof *l);
    if (!l) {
      cur = NULL;
      break;
    }
    *l = *p.stmts[ri - 1];
    l->u.loop.var = lv[j];
    l->u.loop.min = iters[j].dom.min;
    l->u.loop.extent = iters[j].dom.extent;
    l->u.loop.body = cur;
    cur = l;
  }
  if (!cur || !(c->mod = sched_replace(a, c->mod, &p, ri - 1, cur)))
    st = sched_nomem(c);
out:
  sched_path_free(&p);
  return st;
}

/* ---- transform_layout ---------------------------------------------------------- */

loom_status sched_apply_transform_layout(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  const loom_block *b = p.stmts[p.n - 1]->u.realize.block;
  loom_status st = LOOM_OK;
  loom_arith_ctx *ctx = NULL;
  loom_buffer *old = NULL;
  if (c->n_attrs < 3 || c->attrs[2].kind != LOOM_TV_STR) {
    st = sched_fail(c, "index_map must be a lambda");
    goto out;
  }
  if ((st = sched_pick_buffer(c, b, 0, &old, NULL)) != LOOM_OK)
    goto out;
  bool has_pad = c->n_attrs > 3 && c->attrs[3].kind == LOOM_TV_STR;
  loom_dtype it = old->ndim ? old->shape[0]->dtype : LOOM_INT32;
  sched_index_map map;
  char why[256];
  if (!sched_index_map_parse(a, c->attrs[2].s, it, &map, why, sizeof why)) {
    st = sched_fail(c, "%s", why);
    goto out;
  }
  if (map.is_ranges || map.n_params != old->ndim || map.n_results > MAX_DIMS) {
    st = sched_fail(c, "the index map takes %d indices, but buffer '%s' has "
                       "%d dimension(s)",
                    map.n_params, old->name, old->ndim);
    goto out;
  }
  /* The new shape: the range of each result over the old shape. */
  ctx = loom_arith_ctx_new();
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  int64_t old_size = 1, new_size = 1;
  for (int d = 0; d < old->ndim; d++) {
    int64_t e;
    if (!loom_ir_is_const_int(old->shape[d], &e) || e <= 0) {
      st = sched_fail(c, "buffer '%s' has a non-constant shape; Loom "
                         "transforms constant shapes only",
                      old->name);
      goto out;
    }
    loom_arith_bind(ctx, map.params[d], 0, e - 1, c->d);
    old_size *= e;
  }
  loom_expr **shape = loom_arena_alloc(
      a, (size_t)(map.n_results ? map.n_results : 1) * sizeof *shape);
  if (!shape) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < map.n_results; i++) {
    loom_arith_interval iv = loom_arith_bound(ctx, map.results[i]);
    if (!iv.is_bounded || iv.min != 0) {
      st = sched_fail(c, "result %d of the index map does not range from 0 "
                         "over the shape of buffer '%s'",
                      i, old->name);
      goto out;
    }
    new_size *= iv.max + 1;
    if (!(shape[i] = loom_ir_int(a, map.results[i]->dtype, iv.max + 1))) {
      st = sched_nomem(c);
      goto out;
    }
  }
  if (new_size != old_size && !has_pad) {
    st = sched_fail(c, "the index map is not a bijection of buffer '%s' "
                       "(%lld elements become %lld) and no pad_value is given",
                    old->name, (long long)old_size, (long long)new_size);
    goto out;
  }
  loom_buffer *nb = loom_arena_alloc(a, sizeof *nb);
  if (!nb) {
    st = sched_nomem(c);
    goto out;
  }
  *nb = *old;
  nb->shape = shape;
  nb->ndim = map.n_results;
  nb->strides = NULL;
  nb->n_strides = 0;
  nb->axis_separators = NULL;
  nb->n_axis_separators = 0;
  loom_arith_ctx_free(ctx);
  ctx = loom_arith_ctx_new();
  relayout rl = {old, nb, &map, ctx, false};
  sched_map m = {.on_load = relayout_load, .on_block = relayout_block,
                 .on_stmt = relayout_store, .ctx = &rl};
  const loom_func *f = c->mod->funcs[p.func];
  loom_stmt *body = ctx ? sched_subst_stmt(a, f->body, &m) : NULL;
  if (!body || rl.oom) {
    st = sched_nomem(c);
    goto out;
  }
  c->mod = sched_replace(a, c->mod, &p, 0, body);
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  /* A parameter's buffer changes in the signature too. */
  loom_func *nf = c->mod->funcs[p.func];
  for (int i = 0; i < nf->n_params; i++)
    if (nf->params[i].buffer == old) {
      loom_param *ps = loom_arena_alloc(a, (size_t)nf->n_params * sizeof *ps);
      if (!ps) {
        st = sched_nomem(c);
        goto out;
      }
      memcpy(ps, nf->params, (size_t)nf->n_params * sizeof *ps);
      ps[i].buffer = nb;
      nf->params = ps;
    }
  if (new_size != old_size)
    st = pad_producer(c, &p, old, nb, &map, new_size - old_size);
out:
  loom_arith_ctx_free(ctx);
  sched_path_free(&p);
  return st;
}

/* ---- transform_block_layout ------------------------------------------------------ */

/* e as sum(coef[k] * params[k]); false when it is not such a sum. */
static bool linear_terms(const loom_expr *e, const sched_index_map *m,
                         int64_t scale, int64_t *coef) {
  int64_t k;
  switch (e->kind) {
  case LOOM_EXPR_VAR:
    for (int i = 0; i < m->n_params; i++)
      if (m->params[i] == e->u.var) {
        coef[i] += scale;
        return true;
      }
    return false;
  case LOOM_EXPR_INT:
    return e->u.int_value == 0;
  case LOOM_EXPR_ADD:
    return linear_terms(e->u.bin.a, m, scale, coef) &&
           linear_terms(e->u.bin.b, m, scale, coef);
  case LOOM_EXPR_MUL:
    if (loom_ir_is_const_int(e->u.bin.b, &k))
      return linear_terms(e->u.bin.a, m, scale * k, coef);
    if (loom_ir_is_const_int(e->u.bin.a, &k))
      return linear_terms(e->u.bin.b, m, scale * k, coef);
    return false;
  default:
    return false;
  }
}

/* Whether the map's results are its parameters in some order, each once:
 * perm[j] is the parameter result j names. */
static bool permutation(const sched_index_map *m, int *perm) {
  bool seen[MAX_DIMS] = {false};
  if (m->n_results != m->n_params)
    return false;
  for (int j = 0; j < m->n_results; j++) {
    const loom_expr *e = m->results[j];
    perm[j] = -1;
    for (int q = 0; q < m->n_params; q++)
      if (e->kind == LOOM_EXPR_VAR && e->u.var == m->params[q] && !seen[q]) {
        perm[j] = q;
        seen[q] = true;
      }
    if (perm[j] < 0)
      return false;
  }
  return true;
}

/* The inverse of a map whose every result is a mixed-radix number of
 * parameters (`h * 112 + w` with w < 112): each parameter as an expression
 * of the results, (v % (c * e)) // c for coefficient c and extent e. A
 * parameter of extent 1 may appear nowhere (it is 0). */
static bool invert(loom_arena *a, const sched_index_map *m,
                   const int64_t *extent, loom_var *const *vs,
                   loom_expr **inv, char *why, size_t n_why) {
  int np = m->n_params;
  for (int k = 0; k < np; k++)
    inv[k] = NULL;
  for (int j = 0; j < m->n_results; j++) {
    int64_t coef[MAX_DIMS] = {0};
    if (!linear_terms(m->results[j], m, 1, coef)) {
      snprintf(why, n_why, "result %d of the index map is not a sum of "
               "parameters times constants", j);
      return false;
    }
    /* A result that is one parameter is its inverse, a unit one too: TVM
     * keeps such an iter a variable. */
    int only = -1, n_terms = 0;
    for (int q = 0; q < np; q++)
      if (coef[q]) {
        only = q;
        n_terms++;
      }
    if (n_terms == 1 && coef[only] == 1 && !inv[only]) {
      if (!(inv[only] = loom_ir_ref(a, vs[j])))
        return false;
      continue;
    }
    /* The terms, ordered by coefficient, must form a mixed radix. */
    int64_t next = 1;
    for (int used = 0;; used++) {
      int k = -1;
      for (int q = 0; q < np; q++)
        if (coef[q] == next && extent[q] > 1 && !inv[q])
          k = q;
      if (k < 0) {
        for (int q = 0; q < np; q++)
          if (coef[q] != 0 && extent[q] > 1 && !inv[q]) {
            snprintf(why, n_why, "the index map is not a bijection: "
                     "parameter '%s' does not fit result %d as a mixed-radix "
                     "digit", m->params[q]->name, j);
            return false;
          }
        break;
      }
      loom_dtype t = m->results[j]->dtype;
      loom_expr *v = loom_ir_ref(a, vs[j]);
      loom_expr *md = loom_ir_int(a, t, coef[k] * extent[k]);
      loom_expr *c = loom_ir_int(a, t, coef[k]);
      inv[k] = loom_ir_binary(
          a, LOOM_EXPR_FLOORDIV, loom_ir_binary(a, LOOM_EXPR_FLOORMOD, v, md), c);
      if (!inv[k])
        return false;
      next = coef[k] * extent[k];
    }
  }
  for (int k = 0; k < np; k++)
    if (!inv[k]) {
      if (extent[k] != 1) {
        snprintf(why, n_why, "the index map is not a bijection: it loses "
                 "parameter '%s'", m->params[k]->name);
        return false;
      }
      if (!(inv[k] = loom_ir_int(a, m->params[k]->dtype, 0)))
        return false;
    }
  return true;
}

loom_status sched_apply_transform_block_layout(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  int ri = p.n - 1;
  loom_stmt *r = p.stmts[ri];
  const loom_block *b = r->u.realize.block;
  loom_status st = LOOM_OK;
  loom_arith_ctx *ctx = NULL;
  int ni = b->n_iter_vars;
  char why[256];
  sched_index_map map;
  if (c->n_attrs < 1 || c->attrs[0].kind != LOOM_TV_STR) {
    st = sched_fail(c, "index_map must be a lambda");
    goto out;
  }
  if (ni == 0 || ni > MAX_DIMS || ri < ni) {
    st = sched_fail(c, "block '%s' has no iters to transform", b->name);
    goto out;
  }
  /* Trivial bindings: the ni loops right above, each the only child of the
   * one above, bound one to one. */
  if (sched_has_predicate(r)) {
    st = sched_fail(c, "block '%s' has a predicate; its bindings are not "
                       "trivial",
                    b->name);
    goto out;
  }
  /* As TVM checks it: iter i bound to the i-th loop, and no loop above
   * them in the scope. */
  for (int k = ri - ni - 1; k >= 0 && p.stmts[k]->kind != LOOM_STMT_BLOCK_REALIZE; k--)
    if (p.stmts[k]->kind == LOOM_STMT_FOR) {
      st = sched_fail(c, "block '%s' has %d iters but more loops around it in its scope; "
                         "the binding values must be the loops' variables, one each",
                      b->name, ni);
      goto out;
    }
  /* A symbolic extent (-1 here) is taken when the map permutes the iters:
   * the new iters then have the old ones' extents. */
  int64_t extent[MAX_DIMS];
  bool symbolic = false;
  for (int i = 0; i < ni; i++) {
    const loom_stmt *l = p.stmts[ri - ni + i];
    const loom_expr *v = r->u.realize.iter_values[i];
    bool found = l->kind == LOOM_STMT_FOR && v->kind == LOOM_EXPR_VAR &&
                 v->u.var == l->u.loop.var;
    int64_t mn;
    if (!loom_ir_is_const_int(b->iter_vars[i].dom.extent, &extent[i])) {
      extent[i] = -1;
      symbolic = true;
    }
    if (l->kind != LOOM_STMT_FOR || l->u.loop.body != p.stmts[ri - ni + i + 1] ||
        !found || !loom_ir_is_const_int(l->u.loop.min, &mn) || mn != 0 ||
        !loom_ir_is_const_int(b->iter_vars[i].dom.min, &mn) || mn != 0) {
      st = sched_fail(c, "block '%s' must be bound trivially: each iter to "
                         "its own loop from 0, in order, the loops nested "
                         "directly above it",
                      b->name);
      goto out;
    }
    /* The new loops run over the whole domain of the iters: the old ones
     * must have (not a triangular nest, whose extent is another loop's). */
    int64_t lext;
    if (extent[i] < 0 ? !loom_ir_same_expr(l->u.loop.extent, b->iter_vars[i].dom.extent)
                      : !loom_ir_is_const_int(l->u.loop.extent, &lext) || lext != extent[i]) {
      char points[32] = "domain";
      if (extent[i] >= 0)
        snprintf(points, sizeof points, "%lld points", (long long)extent[i]);
      st = sched_fail(c, "loop '%s' of block '%s' does not run over the %s "
                         "of iter '%s' (a triangular or irregular nest), but "
                         "the new loops would",
                      l->u.loop.var->name, b->name, points, b->iter_vars[i].var->name);
      goto out;
    }
  }
  loom_dtype types[MAX_DIMS];
  for (int i = 0; i < ni; i++)
    types[i] = b->iter_vars[i].var->dtype;
  if (!sched_index_map_parse_typed(a, c->attrs[0].s, types[0], types, ni, &map, why,
                                   sizeof why)) {
    st = sched_fail(c, "%s", why);
    goto out;
  }
  if (map.is_ranges || map.n_params != ni || map.n_results > MAX_DIMS ||
      map.n_results == 0) {
    st = sched_fail(c, "the index map takes %d indices, but block '%s' has "
                       "%d iters",
                    map.n_params, b->name, ni);
    goto out;
  }
  ctx = loom_arith_ctx_new();
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  int perm[MAX_DIMS];
  if (symbolic && !permutation(&map, perm)) {
    st = sched_fail(c, "block '%s' has an iter of symbolic extent; the index "
                       "map must then permute the iters",
                    b->name);
    goto out;
  }
  for (int i = 0; i < ni; i++)
    if (extent[i] >= 0)
      loom_arith_bind(ctx, map.params[i], 0, extent[i] - 1, c->d);
  int nr = map.n_results;
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)nr * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)nr * sizeof *vals);
  loom_var *vs[MAX_DIMS], *lv[MAX_DIMS];
  if (!iters || !vals) {
    st = sched_nomem(c);
    goto out;
  }
  for (int j = 0; j < nr; j++) {
    loom_arith_interval iv = {0};
    if (!symbolic)
      iv = loom_arith_bound(ctx, map.results[j]);
    if (!symbolic && (!iv.is_bounded || iv.min != 0)) {
      st = sched_fail(c, "result %d of the index map does not range from 0",
                      j);
      goto out;
    }
    /* The iter kind: that of every old iter the result uses. */
    int kind = -1;
    for (int i = 0; i < ni; i++)
      if (sched_expr_uses(map.results[j], map.params[i])) {
        if (kind >= 0 && kind != (int)b->iter_vars[i].kind) {
          st = sched_fail(c, "result %d of the index map mixes spatial and "
                             "reduction iters of block '%s'",
                          j, b->name);
          goto out;
        }
        kind = (int)b->iter_vars[i].kind;
      }
    char name[32];
    loom_dtype dt = map.results[j]->dtype;
    snprintf(name, sizeof name, "v%d", j);
    vs[j] = loom_ir_var(a, name, dt);
    snprintf(name, sizeof name, "ax%d", j);
    lv[j] = loom_ir_var(a, name, dt);
    loom_expr *ext = symbolic ? b->iter_vars[perm[j]].dom.extent
                              : loom_ir_int(a, dt, iv.max + 1);
    loom_expr *zero = loom_ir_int(a, dt, 0);
    vals[j] = lv[j] ? loom_ir_ref(a, lv[j]) : NULL;
    if (!vs[j] || !vals[j] || !ext || !zero) {
      st = sched_nomem(c);
      goto out;
    }
    iters[j] = (loom_iter_var){vs[j], {zero, ext},
                               kind < 0 ? LOOM_ITER_SPATIAL
                                        : (loom_iter_kind)kind};
  }
  loom_expr *inv[MAX_DIMS];
  for (int j = 0; symbolic && j < nr; j++)
    if (!(inv[perm[j]] = loom_ir_ref(a, vs[j]))) {
      st = sched_nomem(c);
      goto out;
    }
  if (!symbolic && !invert(a, &map, extent, vs, inv, why, sizeof why)) {
    st = why[0] ? sched_fail(c, "%s", why) : sched_nomem(c);
    goto out;
  }
  /* Old iters become the inverse, simplified over the new iters. */
  loom_arith_ctx_free(ctx);
  ctx = loom_arith_ctx_new();
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  /* A unit iter stays a variable in the block, as TVM leaves it: it is not
   * bound, which would fold it to 0. */
  for (int j = 0; j < nr; j++) {
    int64_t e = 0;
    loom_ir_is_const_int(iters[j].dom.extent, &e);
    if (e > 1)
      loom_arith_bind(ctx, vs[j], 0, e - 1, c->d);
  }
  const loom_var *olds[MAX_DIMS];
  for (int i = 0; i < ni; i++) {
    olds[i] = b->iter_vars[i].var;
    if (!(inv[i] = loom_arith_simplify(a, ctx, inv[i]))) {
      st = sched_nomem(c);
      goto out;
    }
  }
  sched_map sm = {.vars = olds, .values = inv, .n = ni};
  loom_stmt *nreal = loom_arena_alloc(a, sizeof *nreal);
  if (!nreal) {
    st = sched_nomem(c);
    goto out;
  }
  {
    /* Substitute through the block (regions, init, body), simplifying
     * every index under the new iters' ranges. */
    loom_stmt tmp = *r;
    loom_block bb = *b;
    bb.iter_vars = iters;
    bb.n_iter_vars = nr;
    tmp.u.realize.block = &bb;
    tmp.u.realize.iter_values = vals;
    tmp.u.realize.n_iter_values = nr;
    loom_stmt *sub = sched_subst_stmt(a, &tmp, &sm);
    if (!sub) {
      st = sched_nomem(c);
      goto out;
    }
    /* By iterator maps over the new iters where their extents are
     * constant; Loom's maps take no others. */
    loom_arith_relax rx[MAX_DIMS];
    for (int j = 0; j < nr; j++)
      rx[j] = (loom_arith_relax){vs[j], iters[j].dom};
    sub = symbolic ? sched_simplify_accesses(a, ctx, sub)
                   : sched_simplify_accesses_by_map(a, ctx, sub, rx, nr);
    if (!sub) {
      st = sched_nomem(c);
      goto out;
    }
    *nreal = *sub;
  }
  loom_stmt *cur = nreal;
  for (int j = nr - 1; j >= 0 && cur; j--) {
    loom_stmt *l = loom_arena_alloc(a, sizeof *l);
    if (!l) {
      cur = NULL;
      break;
    }
    *l = *p.stmts[ri - ni];
    l->u.loop.var = lv[j];
    l->u.loop.min = iters[j].dom.min;
    l->u.loop.extent = iters[j].dom.extent;
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.thread = NULL;
    l->u.loop.annotations = NULL;
    l->u.loop.n_annotations = 0;
    l->u.loop.body = cur;
    cur = l;
  }
  if (!cur || !(c->mod = sched_replace(a, c->mod, &p, ri - ni, cur)))
    st = sched_nomem(c);
out:
  loom_arith_ctx_free(ctx);
  sched_path_free(&p);
  return st;
}
