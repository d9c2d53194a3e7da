/* compute_at / reverse_compute_at: move a producer (consumer) block under a
 * loop that holds its consumers (producers), with fresh loops `ax<k>` that
 * cover exactly the part of its output (input) those blocks need in one
 * iteration of the loop. The part is found by relaxing their regions over
 * the loops between them and the loop; where it is wider than the buffer or
 * the block's iteration domain, a predicate keeps the block inside. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_ITERS 64

bool sched_list_push(sched_stmt_list *l, loom_stmt *s) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    loom_stmt **items = realloc(l->items, (size_t)cap * sizeof *items);
    if (!items)
      return false;
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = s;
  return true;
}

/* The direct children of s, a sequence's items without a copy. */
int sched_kids_of(loom_stmt *s, loom_stmt ***out, loom_stmt *buf[4]) {
  if (s->kind == LOOM_STMT_SEQ) {
    *out = s->u.seq.stmts;
    return s->u.seq.n_stmts;
  }
  *out = buf;
  return sched_children(s, buf, 4);
}

/* Each block realize is taken and not entered. */
static loom_visit take_block(void *ctx, loom_stmt *s) {
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  return sched_list_push(ctx, s) ? LOOM_VISIT_SKIP : LOOM_VISIT_STOP;
}

/* The block realizes under s that no other block under s encloses. */
bool sched_collect_blocks(loom_stmt *s, sched_stmt_list *out) {
  loom_ir_visitor v = {.stmt_pre = take_block, .ctx = out};
  return loom_ir_visit_stmt(&v, s);
}

typedef struct under {
  const loom_stmt *target;
  loom_stmt **loops;
  int *n_loops;
} under;

/* Stops at the target; blocks other than the target are not entered; loops
 * on the way are pushed, and popped on the way back. */
static loom_visit under_pre(void *ctx, loom_stmt *s) {
  under *u = ctx;
  if (s == u->target)
    return LOOM_VISIT_STOP;
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_SKIP;
  if (s->kind == LOOM_STMT_FOR && *u->n_loops < SCHED_MAX_DEPTH)
    u->loops[(*u->n_loops)++] = s;
  return LOOM_VISIT_GO;
}

static loom_visit under_post(void *ctx, loom_stmt *s) {
  under *u = ctx;
  if (*u->n_loops > 0 && u->loops[*u->n_loops - 1] == s)
    (*u->n_loops)--;
  return LOOM_VISIT_GO;
}

/* True when target lies under s (or is s); the loops on the way are pushed
 * onto loops (up to SCHED_MAX_DEPTH), outer first. */
bool sched_find_under(loom_stmt *s, const loom_stmt *target,
                       loom_stmt **loops, int *n_loops) {
  under u = {target, loops, n_loops};
  loom_ir_visitor v = {.stmt_pre = under_pre, .stmt_post = under_post,
                       .ctx = &u};
  return !loom_ir_visit_stmt(&v, s);
}

static bool touches(const loom_buffer_region *r, int n, const loom_buffer *b) {
  for (int i = 0; i < n; i++)
    if (r[i].buffer == b)
      return true;
  return false;
}

static bool regions_share(const loom_buffer_region *a, int na,
                          const loom_buffer_region *b, int nb) {
  for (int i = 0; i < na; i++)
    if (touches(b, nb, a[i].buffer))
      return true;
  return false;
}

/* The domain found for one block iter: [min, max] (inclusive), and the
 * bound [lo, hi] it must stay inside. */
typedef struct iter_dom {
  loom_expr *min, *max;
  loom_expr *lo, *hi;
} iter_dom;

typedef struct mover {
  loom_arena *a;
  loom_arith_ctx *ctx;
  loom_diag *d;
  const sched_path *q; /* the loop and its ancestors */
  bool nomem;
} mover;

static loom_expr *bin(mover *m, loom_expr_kind k, loom_expr *x, loom_expr *y) {
  loom_expr *e = loom_ir_binary(m->a, k, x, y);
  if (!e)
    m->nomem = true;
  return e;
}

/* Simplified, and a constant where the ranges pin it to one value (a unit
 * loop outside stands for its only value, as TVM's analyzer has it). */
static loom_expr *simp(mover *m, loom_expr *e) {
  /* TVM's analyzer binds a loop of extent one to its value: the loop's
   * variable disappears from the sums it enters. */
  loom_var *units[64];
  loom_expr *values[64];
  int n = 0;
  for (int i = 0; e && i < m->q->n && n < 64; i++) {
    const loom_stmt *s = m->q->stmts[i];
    int64_t ext;
    if (s->kind == LOOM_STMT_FOR && loom_ir_is_const_int(s->u.loop.extent, &ext) &&
        ext == 1 && loom_ir_expr_uses(e, s->u.loop.var)) {
      units[n] = s->u.loop.var;
      values[n++] = s->u.loop.min;
    }
  }
  if (n > 0 && !(e = loom_ir_substitute_expr(m->a, e, units, values, n))) {
    m->nomem = true;
    return NULL;
  }
  loom_expr *r = e ? loom_arith_simplify(m->a, m->ctx, e) : NULL;
  if (!r) {
    m->nomem = true;
    return NULL;
  }
  if (r->kind != LOOM_EXPR_INT && loom_dtype_is_int(r->dtype)) {
    loom_arith_interval iv = loom_arith_bound(m->ctx, r);
    if (iv.is_bounded && iv.min == iv.max) {
      r = loom_ir_int(m->a, r->dtype, iv.min);
      if (!r)
        m->nomem = true;
    }
  }
  return r;
}

static loom_expr *konst(mover *m, loom_dtype t, int64_t v) {
  loom_expr *e = loom_ir_int(m->a, t, v);
  if (!e)
    m->nomem = true;
  return e;
}

/* The least (or greatest) value of l // n or l % n, for a loop l of the
 * path over range(c * n) (n, a shape variable, is positive). NULL when x is
 * not such a digit. */
static loom_expr *symbolic_digit_end(mover *m, loom_expr *x, bool upper) {
  loom_expr *n = x->u.bin.b, *l = x->u.bin.a;
  if (x->kind == LOOM_EXPR_FLOORMOD)
    return upper ? bin(m, LOOM_EXPR_SUB, n, konst(m, x->dtype, 1))
                 : konst(m, x->dtype, 0);
  if (l->kind != LOOM_EXPR_VAR)
    return NULL;
  for (int i = 0; i < m->q->n; i++) {
    const loom_stmt *s = m->q->stmts[i];
    int64_t z;
    if (s->kind != LOOM_STMT_FOR || s->u.loop.var != l->u.var)
      continue;
    loom_expr *e = s->u.loop.extent;
    if (!loom_ir_is_const_int(s->u.loop.min, &z) || z != 0)
      return NULL;
    if (!upper)
      return konst(m, x->dtype, 0);
    if (e->kind != LOOM_EXPR_MUL)
      return NULL;
    loom_expr *other = loom_ir_same_expr(e->u.bin.a, n)   ? e->u.bin.b
                       : loom_ir_same_expr(e->u.bin.b, n) ? e->u.bin.a
                                                        : NULL;
    return other ? bin(m, LOOM_EXPR_SUB, other, konst(m, x->dtype, 1)) : NULL;
  }
  return NULL;
}

static bool proves(mover *m, loom_expr_kind k, loom_expr *x, loom_expr *y) {
  loom_expr *c = bin(m, k, x, y);
  if (!c)
    return false;
  if (loom_arith_can_prove(m->ctx, c) == LOOM_ARITH_TRUE)
    return true;
  /* The context knows constant loop ranges only: a loop variable with a
   * symbolic range is tried at the end of its range that matters, and so
   * are the digits `l // n`, `l % n` of a loop over range(c * n). */
  if (k != LOOM_EXPR_LE && k != LOOM_EXPR_GE)
    return false;
  if ((x->kind == LOOM_EXPR_FLOORDIV || x->kind == LOOM_EXPR_FLOORMOD) &&
      !loom_ir_is_const_int(x->u.bin.b, NULL)) {
    loom_expr *end = symbolic_digit_end(m, x, k == LOOM_EXPR_LE);
    c = end ? bin(m, k, end, y) : NULL;
    return c && loom_arith_can_prove(m->ctx, c) == LOOM_ARITH_TRUE;
  }
  if (x->kind != LOOM_EXPR_VAR)
    return false;
  for (int i = 0; i < m->q->n; i++) {
    const loom_stmt *l = m->q->stmts[i];
    if (l->kind != LOOM_STMT_FOR || l->u.loop.var != x->u.var)
      continue;
    loom_expr *end = l->u.loop.min;
    if (k == LOOM_EXPR_LE)
      end = bin(m, LOOM_EXPR_SUB, bin(m, LOOM_EXPR_ADD, end, l->u.loop.extent),
                konst(m, x->dtype, 1));
    c = bin(m, k, end, y);
    return c && loom_arith_can_prove(m->ctx, c) == LOOM_ARITH_TRUE;
  }
  return false;
}

/* The lower (or upper) end of two: the provable one, else T.min/T.max. */
static loom_expr *pick(mover *m, loom_expr *x, loom_expr *y, bool lower) {
  if (!x)
    return y;
  if (proves(m, LOOM_EXPR_LE, x, y))
    return lower ? x : y;
  if (proves(m, LOOM_EXPR_LE, y, x))
    return lower ? y : x;
  return simp(m, bin(m, lower ? LOOM_EXPR_MIN : LOOM_EXPR_MAX, x, y));
}

static loom_expr *last_of(mover *m, const loom_range *r) {
  loom_expr *one = konst(m, r->extent->dtype, 1);
  return simp(m, bin(m, LOOM_EXPR_SUB, bin(m, LOOM_EXPR_ADD, r->min, r->extent),
                     one));
}

/* Whether e is v * s, v * s + c or v * s - c with a constant s > 1 and c
 * free of v; gives s and c (NULL for none). */
static bool scaled_of(const loom_expr *e, const loom_var *v, int64_t *s,
                      loom_expr **c, bool *minus) {
  const loom_expr *x = e;
  *c = NULL;
  *minus = false;
  if (e->kind == LOOM_EXPR_ADD || e->kind == LOOM_EXPR_SUB) {
    bool left = sched_expr_uses(e->u.bin.a, v), right = sched_expr_uses(e->u.bin.b, v);
    if (left == right || (right && e->kind == LOOM_EXPR_SUB))
      return false;
    x = left ? e->u.bin.a : e->u.bin.b;
    *c = left ? e->u.bin.b : e->u.bin.a;
    *minus = e->kind == LOOM_EXPR_SUB;
  }
  if (x->kind != LOOM_EXPR_MUL)
    return false;
  const loom_expr *y = x->u.bin.a, *k = x->u.bin.b;
  if (y->kind == LOOM_EXPR_INT)
    y = x->u.bin.b, k = x->u.bin.a;
  return y->kind == LOOM_EXPR_VAR && y->u.var == v &&
         loom_ir_is_const_int(k, s) && *s > 1;
}

/* Folds one buffer's provided and required regions into the iter domains:
 * a dimension the block provides at a single iter v gives v the required
 * range, kept inside the buffer's extent; one it provides from v * s + c
 * (a tile, `B[v * 16:v * 16 + 16]`) gives v the tiles that hold the
 * required range, as TVM solves it. */
static void update_doms(mover *m, const loom_block *b,
                        const loom_buffer_region *prov,
                        const loom_buffer_region *req, iter_dom *doms) {
  const loom_buffer *buf = prov->buffer;
  for (int i = 0; i < prov->n_ranges && i < req->n_ranges && i < buf->ndim;
       i++) {
    int64_t ext, s;
    loom_expr *pm = prov->ranges[i].min, *c;
    bool minus;
    int k = -1, uses = 0;
    for (int j = 0; j < b->n_iter_vars; j++)
      if (sched_expr_uses(pm, b->iter_vars[j].var)) {
        k = j;
        uses++;
      }
    if (uses != 1 || !loom_ir_is_const_int(prov->ranges[i].extent, &ext))
      continue;
    bool scaled = scaled_of(pm, b->iter_vars[k].var, &s, &c, &minus);
    if (ext != 1 && !scaled)
      continue;
    loom_expr *rmin = simp(m, req->ranges[i].min);
    loom_expr *rmax = last_of(m, &req->ranges[i]);
    loom_expr *zero = konst(m, buf->shape[i]->dtype, 0);
    loom_expr *top = simp(m, bin(m, LOOM_EXPR_SUB, buf->shape[i],
                                 konst(m, buf->shape[i]->dtype, 1)));
    if (!rmin || !rmax || !zero || !top)
      return;
    if (scaled) {
      /* v in [(rmin - c) // s, (rmax - c) // s] */
      loom_expr *x[4] = {rmin, rmax, zero, top};
      for (int j = 0; j < 4; j++) {
        if (c)
          x[j] = bin(m, minus ? LOOM_EXPR_ADD : LOOM_EXPR_SUB, x[j], c);
        x[j] = simp(m, bin(m, LOOM_EXPR_FLOORDIV, x[j],
                           konst(m, x[j] ? x[j]->dtype : pm->dtype, s)));
      }
      if (m->nomem)
        return;
      rmin = x[0], rmax = x[1], zero = x[2], top = x[3];
    } else if (pm->kind != LOOM_EXPR_VAR) {
      /* v + c gives v in [rmin - c, rmax - c]; c - v gives [c - rmax,
       * c - rmin]; other forms keep the full domain. The buffer's bound
       * maps the same way. */
      loom_var *v = b->iter_vars[k].var;
      loom_expr *ref = loom_ir_ref(m->a, v);
      loom_expr *up = simp(m, bin(m, LOOM_EXPR_SUB, pm, ref));
      loom_expr *down = simp(m, bin(m, LOOM_EXPR_ADD, pm, ref));
      if (!up || !down)
        return;
      loom_expr *x[4] = {rmin, rmax, zero, top};
      if (!sched_expr_uses(up, v)) {
        for (int j = 0; j < 4; j++)
          x[j] = simp(m, bin(m, LOOM_EXPR_SUB, x[j], up));
      } else if (!sched_expr_uses(down, v)) {
        loom_expr *y[4];
        for (int j = 0; j < 4; j++)
          y[j] = simp(m, bin(m, LOOM_EXPR_SUB, down, x[j ^ 1]));
        memcpy(x, y, sizeof x);
      } else
        continue;
      if (m->nomem)
        return;
      rmin = x[0], rmax = x[1], zero = x[2], top = x[3];
    }
    doms[k].min = pick(m, doms[k].min, rmin, true);
    doms[k].max = pick(m, doms[k].max, rmax, false);
    doms[k].lo = doms[k].lo ? pick(m, doms[k].lo, zero, false) : zero;
    doms[k].hi = doms[k].hi ? pick(m, doms[k].hi, top, true) : top;
  }
}

/* The digit of v a provided index is: v // s, v // s % r or v % r; the
 * scale s (1 for v % r). False for anything else. */
static bool digit_of(const loom_expr *e, const loom_var *v, int64_t *s) {
  int64_t k;
  if (e->kind == LOOM_EXPR_FLOORMOD && loom_ir_is_const_int(e->u.bin.b, &k))
    e = e->u.bin.a;
  if (e->kind == LOOM_EXPR_VAR && e->u.var == v) {
    *s = 1;
    return true;
  }
  if (e->kind == LOOM_EXPR_FLOORDIV && loom_ir_is_const_int(e->u.bin.b, s) &&
      *s > 0 && e->u.bin.a->kind == LOOM_EXPR_VAR && e->u.bin.a->u.var == v)
    return true;
  return false;
}

/* An iter spread over several dimensions as digits of a mixed radix
 * (`temp[v // 16, v % 16]`): when every digit but the last is required at
 * one point, v runs over the last digit's range at those points. */
static void radix_doms(mover *m, const loom_block *b,
                       const loom_buffer_region *prov,
                       const loom_buffer_region *req, iter_dom *doms) {
  for (int k = 0; k < b->n_iter_vars; k++) {
    const loom_var *v = b->iter_vars[k].var;
    loom_expr *base = NULL, *inner_min = NULL, *inner_max = NULL;
    int n_digits = 0;
    bool ok = true;
    int64_t last_s = 0;
    for (int i = 0; ok && i < prov->n_ranges && i < req->n_ranges; i++) {
      loom_expr *pm = prov->ranges[i].min;
      int64_t s, ext;
      if (!sched_expr_uses(pm, v))
        continue;
      if (!digit_of(pm, v, &s) ||
          !loom_ir_is_const_int(prov->ranges[i].extent, &ext) || ext != 1 ||
          (n_digits && s >= last_s)) {
        ok = false;
        break;
      }
      n_digits++;
      last_s = s;
      loom_expr *rmin = simp(m, req->ranges[i].min);
      loom_expr *scaled = simp(m, bin(m, LOOM_EXPR_MUL, rmin,
                                      konst(m, rmin ? rmin->dtype : v->dtype, s)));
      if (!scaled)
        return;
      if (s == 1) {
        inner_min = rmin;
        inner_max = last_of(m, &req->ranges[i]);
      } else {
        int64_t e;
        if (!loom_ir_is_const_int(req->ranges[i].extent, &e) || e != 1)
          ok = false;
        base = base ? simp(m, bin(m, LOOM_EXPR_ADD, base, scaled)) : scaled;
      }
    }
    if (!ok || n_digits < 2 || last_s != 1 || !base || !inner_min ||
        !inner_max || doms[k].min)
      continue;
    doms[k].min = simp(m, bin(m, LOOM_EXPR_ADD, base, inner_min));
    doms[k].max = simp(m, bin(m, LOOM_EXPR_ADD, base, inner_max));
  }
}

/* The block's regions of buf (writes or reads), joined. */
static bool provided_region(mover *m, const loom_block *b, bool writes,
                            const loom_buffer *buf, loom_buffer_region *out) {
  const loom_buffer_region *r = writes ? b->writes : b->reads;
  int n = writes ? b->n_writes : b->n_reads;
  bool found = false;
  for (int i = 0; i < n; i++) {
    if (r[i].buffer != buf)
      continue;
    if (!found)
      *out = r[i];
    else if (loom_arith_region_union(m->a, m->ctx, out, &r[i], out, m->d) !=
             LOOM_OK)
      return false;
    found = true;
  }
  return found;
}

static loom_expr *conjoin(mover *m, loom_expr *p, loom_expr *q) {
  if (!q)
    return p;
  return p ? bin(m, LOOM_EXPR_AND, p, q) : q;
}

/* val >= lo (or val < hi + 1), unless provable, in TVM's printed form:
 * the constant moved to the other side (`1 <= h * 8 + ax0`, `i + ax0 < 16`). */
static loom_expr *bound_check(mover *m, loom_expr *val, loom_expr *bound,
                              bool upper) {
  loom_expr *lim = upper ? simp(m, bin(m, LOOM_EXPR_ADD, bound,
                                       konst(m, bound->dtype, 1)))
                         : bound;
  loom_expr *c = bin(m, upper ? LOOM_EXPR_LT : LOOM_EXPR_GE, val, lim);
  if (!c || loom_arith_can_prove(m->ctx, c) == LOOM_ARITH_TRUE)
    return NULL;
  return c;
}

static bool has_conjunct(const loom_expr *p, const loom_expr *x) {
  if (p->kind == LOOM_EXPR_AND && (has_conjunct(p->u.bin.a, x) || has_conjunct(p->u.bin.b, x)))
    return true;
  return loom_ir_same_expr(p, x);
}

/* Rewrites each comparison x >= y / x < y of a conjunction as
 * k <= e / e < k, where x - y = e - k in expanded linear form, leaving
 * out a conjunct said before. */
static loom_expr *canonical_pred(mover *m, loom_expr *p) {
  if (p->kind == LOOM_EXPR_AND) {
    loom_expr *x = canonical_pred(m, p->u.bin.a);
    loom_expr *y = canonical_pred(m, p->u.bin.b);
    if (x && y && has_conjunct(x, y))
      return x; /* the block's own predicate, where the bounds say it too */
    return x && y ? bin(m, LOOM_EXPR_AND, x, y) : NULL;
  }
  if (p->kind != LOOM_EXPR_GE && p->kind != LOOM_EXPR_LT)
    return p;
  loom_expr *d = sched_normalize(m->a, m->ctx,
                                 bin(m, LOOM_EXPR_SUB, p->u.bin.a, p->u.bin.b));
  if (!d) {
    m->nomem = true;
    return NULL;
  }
  int64_t k = 0, t;
  loom_expr *e = d;
  if ((d->kind == LOOM_EXPR_ADD || d->kind == LOOM_EXPR_SUB) &&
      loom_ir_is_const_int(d->u.bin.b, &t)) {
    k = d->kind == LOOM_EXPR_ADD ? -t : t;
    e = d->u.bin.a;
  }
  loom_expr *kc = konst(m, e->dtype, k);
  if (p->kind == LOOM_EXPR_GE)
    return bin(m, LOOM_EXPR_LE, kc, e);
  /* i * 8 + j < 120 is i < 15 for j over [0, 8), as TVM simplifies it. */
  loom_expr *lt = bin(m, LOOM_EXPR_LT, e, kc);
  loom_expr *r = lt ? loom_arith_simplify(m->a, m->ctx, lt) : NULL;
  if (!r) {
    m->nomem = true;
    return NULL;
  }
  return r->kind == LOOM_EXPR_LT ? r : lt;
}

typedef struct rebuild {
  mover *m;
  const loom_stmt *leaf;   /* removed */
  const loom_stmt *loop;   /* gets the new nest */
  loom_stmt *new_loop;
} rebuild;

static loom_stmt *rebuild_stmt(rebuild *r, loom_stmt *s) {
  if (s == r->loop)
    return r->new_loop;
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    return s;
  loom_arena *a = r->m->a;
  if (s->kind == LOOM_STMT_SEQ) {
    int n = s->u.seq.n_stmts, k = 0;
    bool changed = false;
    loom_stmt **items = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *items);
    if (!items) {
      r->m->nomem = true;
      return s;
    }
    for (int i = 0; i < n; i++) {
      loom_stmt *x = s->u.seq.stmts[i];
      if (x == r->leaf) {
        changed = true;
        continue;
      }
      loom_stmt *y = rebuild_stmt(r, x);
      changed |= y != x;
      items[k++] = y;
    }
    if (!changed)
      return s;
    if (k == 1)
      return items[0];
    loom_stmt *c = loom_arena_alloc(a, sizeof *c);
    if (!c) {
      r->m->nomem = true;
      return s;
    }
    *c = *s;
    c->u.seq.stmts = items;
    c->u.seq.n_stmts = k;
    return c;
  }
  loom_stmt *kids[4];
  int n = sched_children(s, kids, 4);
  loom_stmt *cur = s;
  for (int i = 0; i < n && cur; i++) {
    loom_stmt *y = rebuild_stmt(r, kids[i]);
    if (y != kids[i])
      cur = sched_with_child(a, cur, kids[i], y);
  }
  if (!cur) {
    r->m->nomem = true;
    return s;
  }
  return cur;
}

/* Whole bindings in a predicate, each replaced by its iter's new value. */
typedef struct binding_swap {
  loom_expr *from[MAX_ITERS];
  loom_expr *to[MAX_ITERS];
  int n;
} binding_swap;

static loom_expr *swap_binding(void *ctx, loom_expr *e) {
  const binding_swap *bs = ctx;
  for (int i = 0; i < bs->n; i++)
    if (loom_ir_same_expr(e, bs->from[i]))
      return bs->to[i];
  return NULL;
}

static loom_status compute_at(sched_call *c, bool is_ca) {
  /* A location sampled by sample_compute_location may be a mark: the root
   * leaves the block where it is, inlining inlines it (as TVM does). */
  int mark = sched_input_mark(c, 1);
  if (mark == -1) {
    sched_path p = {0};
    loom_status st = sched_input_block(c, 0, &p);
    sched_path_free(&p);
    return st;
  }
  if (mark == -2)
    return is_ca ? sched_apply_compute_inline(c)
                 : sched_apply_reverse_compute_inline(c);
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0}, q = {0};
  sched_stmt_list blocks = {0};
  loom_arith_ctx *ctx = NULL;
  TRY(sched_input_block(c, 0, &p));
  loom_status st = sched_input_loop(c, 1, &q);
  if (st != LOOM_OK)
    goto out;
  bool preserve = c->n_attrs > 0 &&
                  (c->attrs[0].kind == LOOM_TV_BOOL ||
                   c->attrs[0].kind == LOOM_TV_INT) &&
                  c->attrs[0].i;
  int64_t index = sched_attr_int(c, 1, -1);
  int ri = p.n - 1;
  loom_stmt *realize = p.stmts[ri];
  const loom_block *b = realize->u.realize.block;
  loom_stmt *loop = q.stmts[q.n - 1];
  const loom_func *f = c->mod->funcs[p.func];
  int sc = sched_scope_index(&p, ri);
  if (sc < 0) {
    st = sched_fail(c, "block '%s' is the root block", b->name);
    goto out;
  }
  int lsc = sched_scope_index(&q, q.n - 1);
  bool encloses = false;
  for (int i = 0; i < ri; i++)
    encloses |= p.stmts[i] == loop;
  if (q.func != p.func || lsc < 0 || q.stmts[lsc] != p.stmts[sc] ||
      encloses) {
    st = sched_fail(c, "block '%s' and loop '%s' are not under the same "
                       "scope, or the loop encloses the block",
                    b->name, sched_stmt_name(loop));
    goto out;
  }
  if (!sched_is_complete(b) && !(b->init && sched_is_reduction(&p, ri))) {
    st = sched_fail(c, "block '%s' is neither a complete block nor a "
                       "reduction block",
                    b->name);
    goto out;
  }
  if (b->n_iter_vars > MAX_ITERS) {
    st = sched_fail(c, "block '%s' has too many iters", b->name);
    goto out;
  }
  if (!sched_collect_blocks(p.stmts[sc]->u.realize.block->body, &blocks)) {
    st = sched_nomem(c);
    goto out;
  }
  int at = -1;
  for (int i = 0; i < blocks.n; i++)
    if (blocks.items[i] == realize)
      at = i;
  for (int i = 0; i < blocks.n; i++) {
    const loom_block *o = blocks.items[i]->u.realize.block;
    for (int w = 0; i != at && w < b->n_writes; w++)
      if (touches(o->writes, o->n_writes, b->writes[w].buffer)) {
        st = sched_fail(c, "block '%s' is not complete: block '%s' also "
                           "writes '%s' (it must be the only writer of its "
                           "outputs)",
                        b->name, o->name, b->writes[w].buffer->name);
        goto out;
      }
  }
  if (is_ca)
    for (int w = 0; w < b->n_writes; w++)
      if (sched_is_param_buffer(f, b->writes[w].buffer)) {
        st = sched_fail(c, "block '%s' is an output block: it writes '%s', "
                           "a parameter of the function",
                        b->name, b->writes[w].buffer->name);
        goto out;
      }

  /* Where the nest goes: after every producer, before every consumer in
   * the loop's body; the required side must lie wholly under the loop. */
  loom_stmt *body_buf[4], **body;
  int n_body = sched_kids_of(loop->u.loop.body, &body, body_buf);
  if (loop->u.loop.body->kind != LOOM_STMT_SEQ) {
    body_buf[0] = loop->u.loop.body;
    body = body_buf;
    n_body = 1;
  }
  int first_under = blocks.n, last_under = -1;
  for (int i = 0; i < blocks.n; i++) {
    loom_stmt *loops[SCHED_MAX_DEPTH];
    int nl = 0;
    if (sched_find_under(loop->u.loop.body, blocks.items[i], loops, &nl)) {
      if (first_under == blocks.n)
        first_under = i;
      last_under = i;
    }
  }
  int last_prod = -1, first_cons = n_body, missing = 0;
  const char *missing_name = NULL;
  for (int i = 0; i < blocks.n; i++) {
    const loom_block *o = blocks.items[i]->u.realize.block;
    bool is_prod =
        i < at && regions_share(o->writes, o->n_writes, b->reads, b->n_reads);
    bool is_cons =
        i > at && regions_share(b->writes, b->n_writes, o->reads, o->n_reads);
    if (!is_prod && !is_cons)
      continue;
    int pos = -1;
    for (int j = 0; j < n_body && pos < 0; j++) {
      loom_stmt *loops[SCHED_MAX_DEPTH];
      int nl = 0;
      if (sched_find_under(body[j], blocks.items[i], loops, &nl))
        pos = j;
    }
    if (pos < 0) {
      if (is_ca ? is_cons : is_prod) {
        missing++;
        missing_name = o->name;
      } else if (is_ca ? i > first_under : i < last_under) {
        /* The block would move across a producer (consumer) outside the
         * loop. */
        st = sched_fail(c, "block '%s' would move across its %s '%s'",
                        b->name, is_ca ? "producer" : "consumer", o->name);
        goto out;
      }
      continue;
    }
    if (is_prod && pos > last_prod)
      last_prod = pos;
    if (is_cons && pos < first_cons)
      first_cons = pos;
  }
  if (missing) {
    st = sched_fail(c, "every %s of block '%s' must be under loop '%s', but "
                       "%d is not ('%s')",
                    is_ca ? "consumer" : "producer", b->name,
                    sched_stmt_name(loop), missing, missing_name);
    goto out;
  }
  if (last_prod >= first_cons) {
    st = sched_fail(c, "loop '%s' holds a consumer of block '%s' before one "
                       "of its producers",
                    sched_stmt_name(loop), b->name);
    goto out;
  }
  int pos;
  if (index == -1)
    pos = first_cons;
  else if (index == -2)
    pos = last_prod + 1;
  else if (index >= last_prod + 1 && index <= first_cons)
    pos = (int)index;
  else {
    st = sched_fail(c, "index %lld is not -1, -2 or in [%d, %d] for loop "
                       "'%s'",
                    (long long)index, last_prod + 1, first_cons,
                    sched_stmt_name(loop));
    goto out;
  }
  /* The leaf to remove: the block with the loops that hold only it. */
  int h = ri;
  while (h - 1 > sc && p.stmts[h - 1]->kind == LOOM_STMT_FOR)
    h--;
  if (h - 1 == sc || p.stmts[h - 1]->kind != LOOM_STMT_SEQ) {
    st = sched_fail(c, "block '%s' is the only leaf of its scope", b->name);
    goto out;
  }

  /* The region each required block under the loop needs in one iteration
   * of it, against what one instance of the block provides. */
  ctx = sched_arith_for_path(&q, q.n);
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  mover m = {a, ctx, c->d, &q, false};
  iter_dom doms[MAX_ITERS];
  memset(doms, 0, sizeof doms);
  const loom_buffer_region *prov = is_ca ? b->writes : b->reads;
  int n_prov = is_ca ? b->n_writes : b->n_reads;
  for (int w = 0; w < n_prov && !m.nomem; w++) {
    loom_buffer *buf = prov[w].buffer;
    bool seen = false;
    for (int k = 0; k < w; k++)
      seen |= prov[k].buffer == buf;
    if (seen)
      continue;
    loom_buffer_region req = {0};
    bool have_req = false;
    for (int i = 0; i < blocks.n; i++) {
      const loom_block *o = blocks.items[i]->u.realize.block;
      bool wanted = is_ca ? i > at && touches(o->reads, o->n_reads, buf)
                          : i < at && touches(o->writes, o->n_writes, buf);
      if (!wanted)
        continue;
      loom_stmt *loops[SCHED_MAX_DEPTH];
      int nl = 0;
      if (!sched_find_under(loop->u.loop.body, blocks.items[i], loops, &nl))
        continue;
      loom_arith_relax relax[2 * SCHED_MAX_DEPTH];
      for (int k = 0; k < nl; k++)
        relax[k] = (loom_arith_relax){loops[k]->u.loop.var,
                                      {loops[k]->u.loop.min,
                                       loops[k]->u.loop.extent}};
      /* Threads outside the loop share a buffer of a wider scope: the part
       * one thread needs is what all of them need. */
      for (int k = 0; is_ca && k < q.n && nl < 2 * SCHED_MAX_DEPTH; k++) {
        loom_stmt *l = q.stmts[k];
        if (l->kind == LOOM_STMT_FOR &&
            l->u.loop.kind == LOOM_FOR_THREAD_BINDING &&
            loom_ir_scope_is_shared_by(buf->scope, l->u.loop.thread))
          relax[nl++] = (loom_arith_relax){l->u.loop.var,
                                           {l->u.loop.min, l->u.loop.extent}};
      }
      loom_buffer_region one;
      bool found = false;
      st = loom_arith_block_region(a, ctx, blocks.items[i], buf, !is_ca,
                                   relax, nl, &one, NULL, &found, c->d);
      if (st == LOOM_OK && found) {
        if (have_req)
          st = loom_arith_region_union(a, ctx, &req, &one, &req, c->d);
        else
          req = one;
        have_req = true;
      }
      if (st != LOOM_OK)
        goto out;
    }
    loom_buffer_region pr;
    if (!have_req)
      continue;
    if (!provided_region(&m, b, is_ca, buf, &pr)) {
      st = LOOM_ERROR;
      goto out;
    }
    radix_doms(&m, b, &pr, &req, doms);
    update_doms(&m, b, &pr, &req, doms);
  }

  /* The new nest: one loop per iter (unit ones only when preserved). */
  loom_expr *vals[MAX_ITERS];
  loom_var *vars[MAX_ITERS];
  loom_expr *exts[MAX_ITERS];
  int n_vars = 0;
  loom_expr *pred = NULL;
  for (int k = 0; k < b->n_iter_vars && !m.nomem; k++) {
    const loom_iter_var *iv = &b->iter_vars[k];
    iter_dom *dm = &doms[k];
    loom_expr *imin = simp(&m, iv->dom.min);
    loom_expr *imax = last_of(&m, &iv->dom);
    if (m.nomem)
      break;
    dm->lo = dm->lo ? pick(&m, dm->lo, imin, false) : imin;
    dm->hi = dm->hi ? pick(&m, dm->hi, imax, true) : imax;
    bool need_lo = false, need_hi = false;
    if (!dm->min) {
      dm->min = dm->lo;
      dm->max = dm->hi;
    } else {
      bool lo_in = proves(&m, LOOM_EXPR_GE, dm->min, dm->lo);
      bool hi_in = proves(&m, LOOM_EXPR_LE, dm->max, dm->hi);
      if (!(lo_in && hi_in) && proves(&m, LOOM_EXPR_GE, dm->lo, dm->min) &&
          proves(&m, LOOM_EXPR_LE, dm->hi, dm->max)) {
        dm->min = dm->lo;
        dm->max = dm->hi;
      } else {
        need_lo = !lo_in;
        need_hi = !hi_in;
      }
    }
    loom_dtype t = iv->var->dtype;
    loom_expr *ext = simp(&m, bin(&m, LOOM_EXPR_ADD,
                                  bin(&m, LOOM_EXPR_SUB, dm->max, dm->min),
                                  konst(&m, dm->max->dtype, 1)));
    if (!ext)
      break;
    int64_t e;
    bool is_const = loom_ir_is_const_int(ext, &e);
    if (is_const && e <= 0) {
      st = sched_fail(c, "block '%s' would run an empty range of iter '%s'",
                      b->name, iv->var->name);
      goto out;
    }
    if (preserve || !is_const || e != 1) {
      char name[32];
      snprintf(name, sizeof name, "ax%d", n_vars);
      loom_var *v = loom_ir_var(a, name, t);
      if (!v) {
        m.nomem = true;
        break;
      }
      if (is_const)
        loom_arith_bind(ctx, v, 0, e - 1, c->d);
      exts[n_vars] = ext;
      vars[n_vars++] = v;
      int64_t z;
      vals[k] = loom_ir_ref(a, v);
      if (!loom_ir_is_const_int(dm->min, &z) || z != 0)
        vals[k] = bin(&m, LOOM_EXPR_ADD, dm->min, vals[k]);
    } else
      vals[k] = dm->min;
    if (!vals[k]) {
      m.nomem = true;
      break;
    }
    if (need_lo)
      pred = conjoin(&m, pred, bound_check(&m, vals[k], dm->lo, false));
    if (need_hi)
      pred = conjoin(&m, pred, bound_check(&m, vals[k], dm->hi, true));
  }
  /* The block's own predicate (a reverse_compute_inline leaves one) moves
   * with it, over the new loops: each loop it names must be the whole
   * binding of an iter, or stand in a whole binding (a split that does not
   * divide leaves `i * 8 + j < 120` for the binding i * 8 + j), which
   * becomes the iter's new value. */
  const loom_stmt *orr = p.stmts[p.n - 1];
  if (!m.nomem && sched_has_predicate(orr)) {
    const loom_var *lv[MAX_ITERS];
    loom_expr *nv[MAX_ITERS];
    int nl = 0;
    binding_swap bs = {.n = 0};
    for (int k = 0; k < b->n_iter_vars && k < orr->u.realize.n_iter_values; k++) {
      loom_expr *bv = orr->u.realize.iter_values[k];
      if (bv->kind == LOOM_EXPR_VAR)
        lv[nl] = bv->u.var, nv[nl++] = vals[k];
      else
        bs.from[bs.n] = bv, bs.to[bs.n++] = vals[k];
    }
    loom_expr *opred = loom_ir_rewrite_expr(a, orr->u.realize.predicate, swap_binding, &bs);
    if (!opred) {
      st = sched_nomem(c);
      goto out;
    }
    for (int k = sched_scope_index(&p, p.n - 1) + 1; k < p.n - 1; k++) {
      const loom_stmt *l = p.stmts[k];
      bool mapped = false;
      for (int i = 0; i < nl; i++)
        mapped |= lv[i] == l->u.loop.var;
      if (l->kind == LOOM_STMT_FOR && !mapped && sched_expr_uses(opred, l->u.loop.var)) {
        st = sched_fail(c, "the predicate of block '%s' uses loop '%s', "
                           "which is not the binding of one of its iters",
                        b->name, l->u.loop.var->name);
        goto out;
      }
    }
    sched_map lm = {.vars = lv, .values = nv, .n = nl};
    /* Over the new loops it may hold everywhere (`ax0 < 120` for ax0 over
     * [0, 120)): then it goes. */
    loom_expr *own = sched_subst_expr(a, opred, &lm);
    loom_expr *sown = own ? loom_arith_simplify(a, ctx, own) : NULL;
    int64_t t;
    if (!sown)
      m.nomem = true;
    else if (!loom_ir_is_const_int(sown, &t) || !t)
      pred = pred ? conjoin(&m, pred, own) : own;
  }
  if (pred && !m.nomem) {
    /* Unit loops stand for 0 in the predicate. */
    const loom_var *unit[MAX_ITERS];
    loom_expr *zeros[MAX_ITERS];
    int nu = 0;
    for (int k = 0; k < n_vars; k++) {
      int64_t e;
      if (loom_ir_is_const_int(exts[k], &e) && e == 1) {
        unit[nu] = vars[k];
        zeros[nu++] = konst(&m, vars[k]->dtype, 0);
      }
    }
    sched_map zm = {.vars = unit, .values = zeros, .n = nu};
    if (nu && !m.nomem && !(pred = sched_subst_expr(a, pred, &zm)))
      m.nomem = true;
    if (pred && !m.nomem)
      pred = canonical_pred(&m, pred);
  }
  if (m.nomem) {
    st = sched_nomem(c);
    goto out;
  }
  /* An instance that no loop above pins down runs again in every
   * iteration of that loop: harmless for a block that overwrites what it
   * writes, wrong for a reduction (its init starts over) or an update of
   * what it reads. */
  bool accumulates = b->init != NULL;
  for (int w = 0; w < b->n_writes; w++)
    accumulates |= sched_block_updates(b, b->writes[w].buffer);
  for (int k = sched_scope_index(&q, q.n - 1) + 1; accumulates && k < q.n; k++) {
    const loom_stmt *l = q.stmts[k];
    int64_t e;
    if (l->kind != LOOM_STMT_FOR ||
        (loom_ir_is_const_int(l->u.loop.extent, &e) && e <= 1))
      continue;
    bool pinned = pred && sched_expr_uses(pred, l->u.loop.var);
    for (int i = 0; i < b->n_iter_vars && !pinned; i++)
      pinned = sched_expr_uses(vals[i], l->u.loop.var);
    for (int i = 0; i < n_vars && !pinned; i++)
      pinned = sched_expr_uses(exts[i], l->u.loop.var);
    if (!pinned) {
      st = sched_fail(c, "block '%s' accumulates into what it writes, but "
                         "its instances under loop '%s' would not depend on "
                         "loop '%s' and run again in each of its iterations",
                      b->name, loop->u.loop.var->name, l->u.loop.var->name);
      goto out;
    }
  }
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  loom_expr **iv_vals =
      loom_arena_alloc(a, (size_t)(b->n_iter_vars + 1) * sizeof *iv_vals);
  if (!nr || !iv_vals) {
    st = sched_nomem(c);
    goto out;
  }
  memcpy(iv_vals, vals, (size_t)b->n_iter_vars * sizeof *iv_vals);
  *nr = *realize;
  nr->u.realize.iter_values = iv_vals;
  nr->u.realize.n_iter_values = b->n_iter_vars;
  nr->u.realize.predicate = pred;
  loom_stmt *nest = nr;
  for (int k = n_vars - 1; k >= 0 && nest; k--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_FOR, realize->loc);
    loom_expr *zero = loom_ir_int(a, vars[k]->dtype, 0);
    if (!l || !zero) {
      nest = NULL;
      break;
    }
    l->u.loop.var = vars[k];
    l->u.loop.min = zero;
    l->u.loop.extent = exts[k];
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.body = nest;
    nest = l;
  }
  loom_stmt **items =
      loom_arena_alloc(a, (size_t)(n_body + 1) * sizeof *items);
  loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, loop->loc);
  loom_stmt *nl = loom_arena_alloc(a, sizeof *nl);
  if (!nest || !items || !seq || !nl) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0, k = 0; i <= n_body; i++)
    items[i] = i == pos ? nest : body[k++];
  seq->u.seq.stmts = items;
  seq->u.seq.n_stmts = n_body + 1;
  *nl = *loop;
  nl->u.loop.body = seq;
  rebuild r = {&m, p.stmts[h], loop, nl};
  loom_stmt *nb = rebuild_stmt(&r, p.stmts[sc + 1]);
  if (m.nomem || !(c->mod = sched_replace(a, c->mod, &p, sc + 1, nb)))
    st = sched_nomem(c);
out:
  loom_arith_ctx_free(ctx);
  free(blocks.items);
  sched_path_free(&p);
  sched_path_free(&q);
  return st;
}

loom_status sched_apply_compute_at(sched_call *c) { return compute_at(c, true); }

loom_status sched_apply_reverse_compute_at(sched_call *c) {
  return compute_at(c, false);
}
