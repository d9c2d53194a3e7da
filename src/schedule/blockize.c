/* blockize: wrap the subtree under a loop (or a run of sibling nests given
 * as blocks) in a new outer block. Each iter of a block inside is divided
 * into an outer part, over the loops outside the new block, and an inner
 * part, over the loops inside it (TVM's subspace division, for bindings
 * that are sums of loop variables times constants); the outer block reads
 * and writes what the blocks inside do, relaxed over their inner iters. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_ITERS 32
#define MAX_LOOPS 64
#define MAX_BLOCKS 16

typedef struct division {
  loom_expr *outer, *inner; /* over the outer and inner loops; NULL: 0 */
  loom_expr *outer_ext, *inner_ext; /* symbolic only in a trivial division */
} division;

static bool is_one(const loom_expr *e) {
  int64_t v;
  return loom_ir_is_const_int(e, &v) && v == 1;
}

typedef struct loop_set {
  const loom_stmt *loops[MAX_LOOPS];
  int n;
} loop_set;

static int loop_index(const loop_set *s, const loom_var *v) {
  for (int i = 0; i < s->n; i++)
    if (s->loops[i]->u.loop.var == v)
      return i;
  return -1;
}

/* A binding as sum(coef * loop) over the inner loops plus outer terms:
 * loops outside, and any other expression of them alone (a fused loop's
 * `f // 4 * 64` under a warp's threadIdx.y), each with its coefficient. */
#define MAX_OPAQUE 8
typedef struct linear {
  int64_t cin[MAX_LOOPS], cout[MAX_LOOPS];
  const loom_expr *opaque[MAX_OPAQUE];
  int64_t copaque[MAX_OPAQUE];
  int n_opaque;
} linear;

/* Whether e uses a variable that is a loop of s (is_in), or one that is
 * not (an outer block's iter); anything but arithmetic on variables and
 * constants counts as a use either way, so it is not divided. */
static bool uses_var(const loom_expr *e, const loop_set *s, bool is_in) {
  switch (e->kind) {
  case LOOM_EXPR_VAR: return (loop_index(s, e->u.var) >= 0) == is_in;
  case LOOM_EXPR_INT: return false;
  case LOOM_EXPR_ADD: case LOOM_EXPR_SUB: case LOOM_EXPR_MUL:
  case LOOM_EXPR_FLOORDIV: case LOOM_EXPR_FLOORMOD:
    return uses_var(e->u.bin.a, s, is_in) || uses_var(e->u.bin.b, s, is_in);
  default: return true;
  }
}

static bool uses_loop_of(const loom_expr *e, const loop_set *s) {
  return uses_var(e, s, true);
}

static bool terms(const loom_expr *e, const loop_set *in, const loop_set *out,
                  int64_t scale, linear *l) {
  int64_t k;
  switch (e->kind) {
  case LOOM_EXPR_VAR: {
    int i = loop_index(in, e->u.var);
    if (i >= 0) {
      l->cin[i] += scale;
      return true;
    }
    i = loop_index(out, e->u.var);
    if (i >= 0) {
      l->cout[i] += scale;
      return true;
    }
    return false;
  }
  case LOOM_EXPR_INT:
    return e->u.int_value == 0;
  case LOOM_EXPR_ADD:
    return terms(e->u.bin.a, in, out, scale, l) &&
           terms(e->u.bin.b, in, out, scale, l);
  case LOOM_EXPR_MUL:
    if (loom_ir_is_const_int(e->u.bin.b, &k))
      return terms(e->u.bin.a, in, out, scale * k, l);
    if (loom_ir_is_const_int(e->u.bin.a, &k))
      return terms(e->u.bin.b, in, out, scale * k, l);
    break;
  default:
    break;
  }
  if (uses_loop_of(e, in) || l->n_opaque == MAX_OPAQUE)
    return false;
  l->opaque[l->n_opaque] = e;
  l->copaque[l->n_opaque++] = scale;
  return true;
}

/* sum(coef[i] * loop i), larger coefficients first; NULL when empty. */
static loom_expr *rebuild(loom_arena *a, const loop_set *s, const int64_t *coef,
                          int64_t div, loom_dtype t, bool *oom) {
  loom_expr *e = NULL;
  bool done[MAX_LOOPS] = {false};
  for (;;) {
    int best = -1;
    for (int i = 0; i < s->n; i++)
      if (coef[i] && !done[i] && (best < 0 || coef[i] > coef[best]))
        best = i;
    if (best < 0)
      return e;
    done[best] = true;
    loom_expr *v = loom_ir_ref(a, s->loops[best]->u.loop.var);
    int64_t c = coef[best] / div;
    loom_expr *term = c == 1 ? v : loom_ir_binary(a, LOOM_EXPR_MUL, v,
                                                  loom_ir_int(a, t, c));
    e = e ? loom_ir_binary(a, LOOM_EXPR_ADD, e, term) : term;
    if (!e) {
      *oom = true;
      return NULL;
    }
  }
}

static bool is_unit_loop(const loom_stmt *loop) {
  int64_t e;
  return loom_ir_is_const_int(loop->u.loop.extent, &e) && e == 1;
}

/* Divides a binding over the inner loops in and the outer loops out.
 * Without preserve, a loop of extent 1 is its value 0, as TVM's division
 * leaves it out when unit iters are not preserved. */
static bool divide(loom_arena *a, const loom_expr *bind, int64_t dom,
                   const loop_set *in, const loop_set *out, bool preserve,
                   division *d, bool *oom) {
  linear l;
  memset(&l, 0, sizeof l);
  if (!terms(bind, in, out, 1, &l))
    return false;
  for (int i = 0; i < in->n && !preserve; i++)
    if (is_unit_loop(in->loops[i]))
      l.cin[i] = 0;
  for (int i = 0; i < out->n && !preserve; i++)
    if (is_unit_loop(out->loops[i]))
      l.cout[i] = 0;
  const int64_t *cin = l.cin, *cout = l.cout;
  /* The inner terms must be a mixed-radix number of their loops. */
  int64_t next = 1;
  bool used[MAX_LOOPS] = {false};
  for (;;) {
    int k = -1;
    for (int i = 0; i < in->n; i++)
      if (cin[i] == next && !used[i])
        k = i;
    if (k < 0)
      break;
    int64_t e;
    if (!loom_ir_is_const_int(in->loops[k]->u.loop.extent, &e) || e <= 0)
      return false;
    used[k] = true;
    next *= e;
  }
  for (int i = 0; i < in->n; i++)
    if (cin[i] && !used[i])
      return false;
  for (int i = 0; i < out->n; i++)
    if (cout[i] % next)
      return false;
  for (int i = 0; i < l.n_opaque; i++)
    if (l.copaque[i] % next)
      return false;
  /* The outer iter ranges over what the outer terms reach, as TVM's
   * division gives it: a binding need not reach its iter's whole domain
   * (`vi = i` with i over [0, 8) and vi over [0, 16) has one outer point).
   * Terms that are not plain loops from 0 reach what the domain says. */
  bool is_plain = l.n_opaque == 0;
  int64_t reach = 1;
  for (int i = 0; i < out->n && is_plain; i++) {
    int64_t e, mn;
    if (!cout[i])
      continue;
    is_plain = cout[i] > 0 && loom_ir_is_const_int(out->loops[i]->u.loop.extent, &e) &&
               loom_ir_is_const_int(out->loops[i]->u.loop.min, &mn) && mn == 0 && e > 0;
    reach += is_plain ? cout[i] / next * (e - 1) : 0;
  }
  if (!is_plain && dom % next)
    return false;
  loom_dtype t = bind->dtype;
  d->inner_ext = loom_ir_int(a, t, next);
  d->outer_ext = loom_ir_int(a, t, is_plain ? reach : dom / next);
  if (!d->inner_ext || !d->outer_ext) {
    *oom = true;
    return false;
  }
  d->inner = rebuild(a, in, cin, 1, t, oom);
  d->outer = rebuild(a, out, cout, next, t, oom);
  for (int i = 0; i < l.n_opaque && !*oom; i++) {
    int64_t c = l.copaque[i] / next;
    loom_expr *x = (loom_expr *)l.opaque[i];
    loom_expr *term = c == 1 ? x : loom_ir_binary(a, LOOM_EXPR_MUL, x, loom_ir_int(a, t, c));
    d->outer = !term ? NULL : d->outer ? loom_ir_binary(a, LOOM_EXPR_ADD, d->outer, term) : term;
    *oom = !d->outer;
  }
  return !*oom;
}

/* Every binding divided by the iterator maps (TVM's subspace division),
 * for bindings the linear division does not take (`f // 49` of a fused
 * loop inside) and for every binding under a predicate, whose bounds go to
 * *outer_pred and *inner_pred. NULL when the maps fail or memory runs out. */
static loom_iter_division *divide_by_maps(loom_arena *a, const loom_stmt *r,
                                          const loop_set *in,
                                          const loop_set *out, bool preserve,
                                          loom_expr **outer_pred,
                                          loom_expr **inner_pred) {
  int n = r->u.realize.n_iter_values;
  loom_arith_relax iters[2 * MAX_LOOPS];
  const loom_var *inner[MAX_LOOPS];
  int k = 0;
  for (int i = 0; i < out->n; i++)
    iters[k++] = (loom_arith_relax){out->loops[i]->u.loop.var,
                                    {out->loops[i]->u.loop.min,
                                     out->loops[i]->u.loop.extent}};
  for (int i = 0; i < in->n; i++) {
    iters[k++] = (loom_arith_relax){in->loops[i]->u.loop.var,
                                    {in->loops[i]->u.loop.min,
                                     in->loops[i]->u.loop.extent}};
    inner[i] = in->loops[i]->u.loop.var;
  }
  loom_iter_division *div = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *div);
  loom_diag d;
  loom_diag_init(&d);
  loom_expr *const *b = r->u.realize.iter_values;
  const loom_expr *p = r->u.realize.predicate;
  loom_status st = LOOM_ERROR;
  if (div && preserve) /* unit loops stay terms, as TVM's division keeps them */
    st = loom_arith_iter_map_subspace_divide_units(a, b, n, iters, k, p, inner, in->n, div,
                                                   outer_pred, inner_pred, &d);
  else if (div)
    st = loom_arith_iter_map_subspace_divide(a, b, n, iters, k, p, inner, in->n, div,
                                             outer_pred, inner_pred, &d);
  bool ok = st == LOOM_OK;
  loom_diag_free(&d);
  return ok ? div : NULL;
}

/* One block being blockized: its realize, its path, the loops inside the
 * new block above it, and its rebuilt form. */
typedef struct inner_block {
  sched_path p;
  int top;             /* index in p of the statement the outer block holds */
  loop_set in;
  loom_stmt *realize;  /* the rebuilt inner realize */
  loom_stmt *init;     /* the outer block's init, for a reduction */
  loom_expr *outer_pred; /* the bounds of the predicate on outer loops; NULL: none */
  loom_stmt *regions;  /* the realize whose regions the outer block relaxes */
  loom_var *inner_vars[MAX_ITERS];
  loom_expr *inner_ext[MAX_ITERS];
  int n_inner;
} inner_block;

typedef struct outer_iters {
  loom_iter_var iters[MAX_ITERS * MAX_BLOCKS];
  loom_expr *vals[MAX_ITERS * MAX_BLOCKS];
  int n;
} outer_iters;

static int find_outer(const outer_iters *o, const char *name) {
  for (int i = 0; i < o->n; i++)
    if (!strcmp(o->iters[i].var->name, name))
      return i;
  return -1;
}

static loom_status split_init(sched_call *c, inner_block *ib,
                              const outer_iters *o);

/* Bounds v by [0, extent) when the extent is known; a symbolic one leaves
 * v unbounded, which only keeps the simplifier from using its range. */
static void bind_iter(loom_arith_ctx *ctx, const loom_var *v,
                      const loom_expr *extent, loom_diag *d) {
  int64_t e;
  if (loom_ir_is_const_int(extent, &e))
    loom_arith_bind(ctx, v, 0, e - 1, d);
}

typedef struct flip_ctx {
  loom_arena *a;
  const loom_block *b;
} flip_ctx;

/* TVM simplifies every expression its substitution changes, and its
 * simplifier writes a >= b as b <= a and a > b as b < a: the comparisons
 * over the block's iters come out of blockize so. */
static loom_expr *flip_compare(void *ctx, loom_expr *e) {
  flip_ctx *f = ctx;
  if (e->kind != LOOM_EXPR_GE && e->kind != LOOM_EXPR_GT)
    return e;
  bool is_changed = false;
  for (int i = 0; i < f->b->n_iter_vars && !is_changed; i++)
    is_changed = loom_ir_expr_uses(e, f->b->iter_vars[i].var);
  if (!is_changed)
    return e;
  loom_expr *c = loom_arena_dup(f->a, e, sizeof *e);
  if (!c)
    return NULL;
  c->kind = e->kind == LOOM_EXPR_GE ? LOOM_EXPR_LE : LOOM_EXPR_LT;
  c->u.bin.a = e->u.bin.b;
  c->u.bin.b = e->u.bin.a;
  return c;
}

/* Rebuilds the block at ib->p as the inner block: inner iters, the old
 * iters replaced by outer * inner_extent + inner, simplified. Adds its
 * outer iters to o (shared by name across blocks), one for every iter, as
 * TVM does; without preserve, a unit outer iter is bound to 0 and is 0
 * inside. */
static loom_status make_inner(sched_call *c, inner_block *ib,
                              const loop_set *out, outer_iters *o,
                              bool preserve) {
  loom_arena *a = sched_arena(c->s);
  int ri = ib->p.n - 1;
  loom_stmt *r = ib->p.stmts[ri];
  const loom_block *b = r->u.realize.block;
  if (b->n_iter_vars > MAX_ITERS)
    return sched_fail(c, "block '%s' has too many iters", b->name);
  /* Under a predicate every binding goes by the iterator maps, which
   * split the predicate's bounds between the two blocks. */
  loom_expr *inner_pred = NULL;
  loom_iter_division *maps = NULL;
  bool has_pred = sched_has_predicate(r);
  if (has_pred &&
      !(maps = divide_by_maps(a, r, &ib->in, out, preserve, &ib->outer_pred, &inner_pred)))
    return sched_fail(c, "block '%s' has a predicate that does not divide into the loops "
                         "outside and inside the new block",
                      b->name);
  loom_iter_var *iters = loom_arena_alloc(
      a, (size_t)(b->n_iter_vars ? b->n_iter_vars : 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(
      a, (size_t)(b->n_iter_vars ? b->n_iter_vars : 1) * sizeof *vals);
  const loom_var *olds[MAX_ITERS];
  loom_expr *subs[MAX_ITERS];
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  loom_status st = LOOM_OK;
  if (!iters || !vals || !ctx) {
    st = sched_nomem(c);
    goto out;
  }
  int ni = 0;
  bool maps_tried = has_pred;
  for (int i = 0; i < b->n_iter_vars && st == LOOM_OK; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    int64_t dom, mn;
    division dv;
    bool oom = false;
    bool starts_at_0 = loom_ir_is_const_int(iv->dom.min, &mn) && mn == 0;
    /* Divisions that split a binding need a constant domain; a symbolic
     * one goes whole to one side or not at all. */
    bool ok = starts_at_0 && loom_ir_is_const_int(iv->dom.extent, &dom);
    /* TVM gives the inner iter the domain [0, extent) whatever the iter's
     * start, and so binds it outside its domain. */
    if (loom_ir_is_const_int(iv->dom.min, &mn) && mn != 0) {
      st = sched_fail(c, "iter '%s' of block '%s' does not start at 0; its inner iter "
                         "would be bound outside its domain",
                      iv->var->name, b->name);
      break;
    }
    bool divided = ok && !has_pred && divide(a, r->u.realize.iter_values[i], dom,
                                             &ib->in, out, preserve, &dv, &oom);
    if (ok && !divided && !oom) {
      if (!maps_tried)
        maps = divide_by_maps(a, r, &ib->in, out, preserve, NULL, NULL);
      maps_tried = true;
      /* An outer part that holds an outer block's iter reaches what the
       * domain says, as in the linear division: the loops alone would
       * give it too small an extent. */
      int64_t oext = maps ? maps[i].outer_extent : 0, iext = maps ? maps[i].inner_extent : 1;
      if (maps && maps[i].outer && uses_var(maps[i].outer, out, false))
        oext = dom % iext ? 0 : dom / iext;
      if (maps && oext > 0) {
        dv = (division){maps[i].outer, maps[i].inner, loom_ir_int(a, iv->var->dtype, oext),
                        loom_ir_int(a, iv->var->dtype, iext)};
        oom = !dv.outer_ext || !dv.inner_ext;
        divided = !oom;
      }
    }
    if (starts_at_0 && !divided && !oom && !maps) {
      /* TVM's trivial division: a binding over inner loops alone (or outer
       * ones alone) goes inside (outside) whole, whatever its form */
      loom_expr *e = r->u.realize.iter_values[i];
      bool in = uses_loop_of(e, &ib->in), outside = uses_loop_of(e, out);
      loom_expr *one = loom_ir_int(a, iv->var->dtype, 1);
      if (!(in && outside)) {
        dv = (division){outside ? e : NULL, in ? e : NULL,
                        in || !outside ? one : iv->dom.extent,
                        in ? iv->dom.extent : one};
        divided = one != NULL;
        oom = !one;
      }
    }
    if (!divided) {
      st = oom ? sched_nomem(c)
               : sched_fail(c, "the binding of iter '%s' of block '%s' does "
                               "not divide into loops outside and inside the "
                               "new block",
                            iv->var->name, b->name);
      break;
    }
    loom_dtype dt = iv->var->dtype;
    char name[256];
    loom_expr *outer_val = NULL, *inner_val = NULL;
    bool unit_outer = is_one(dv.outer_ext);
    { /* the outer iter, made once for blocks that share its name */
      snprintf(name, sizeof name, "%s_o", iv->var->name);
      int k = find_outer(o, name);
      if (k < 0) {
        if (o->n == MAX_ITERS * MAX_BLOCKS) {
          st = sched_fail(c, "too many iters");
          break;
        }
        k = o->n++;
        loom_var *v = loom_ir_var(a, name, dt);
        o->iters[k] = (loom_iter_var){v,
                                      {loom_ir_int(a, dt, 0), dv.outer_ext},
                                      iv->kind};
        o->vals[k] = dv.outer && (preserve || !unit_outer) ? dv.outer
                                                           : loom_ir_int(a, dt, 0);
        if (!v || !o->iters[k].dom.min || !o->iters[k].dom.extent ||
            !o->vals[k]) {
          st = sched_nomem(c);
          break;
        }
      } else {
        if (!loom_ir_same_expr(o->iters[k].dom.extent, dv.outer_ext)) {
          st = sched_fail(c, "iter '%s' has different outer extents in the "
                             "blocks given",
                          iv->var->name);
          break;
        }
      }
      /* TVM's substitution: a unit outer iter is left out beside an inner
       * one, and is 0 alone unless unit iters are preserved. */
      if (!unit_outer || (is_one(dv.inner_ext) && preserve))
        outer_val = loom_ir_ref(a, o->iters[k].var);
    }
    if (!is_one(dv.inner_ext)) {
      snprintf(name, sizeof name, "%s_i", iv->var->name);
      loom_var *v = loom_ir_var(a, name, dt);
      iters[ni] = (loom_iter_var){v,
                                  {loom_ir_int(a, dt, 0), dv.inner_ext},
                                  iv->kind};
      vals[ni] = dv.inner;
      if (!v || !iters[ni].dom.min || !iters[ni].dom.extent) {
        st = sched_nomem(c);
        break;
      }
      bind_iter(ctx, v, dv.inner_ext, c->d);
      ib->inner_vars[ni] = v;
      ib->inner_ext[ni] = dv.inner_ext;
      ni++;
      inner_val = loom_ir_ref(a, v);
    }
    loom_expr *e = NULL;
    if (outer_val)
      e = is_one(dv.inner_ext)
              ? outer_val
              : loom_ir_binary(a, LOOM_EXPR_MUL, outer_val, dv.inner_ext);
    if (inner_val)
      e = e ? loom_ir_binary(a, LOOM_EXPR_ADD, e, inner_val) : inner_val;
    if (!e)
      e = loom_ir_int(a, dt, 0);
    olds[i] = iv->var;
    subs[i] = e;
    if (!e)
      st = sched_nomem(c);
  }
  if (st != LOOM_OK)
    goto out;
  ib->n_inner = ni;
  for (int i = 0; i < b->n_iter_vars; i++)
    if (!(subs[i] = loom_arith_simplify(a, ctx, subs[i]))) {
      st = sched_nomem(c);
      goto out;
    }
  sched_map sm = {.vars = olds, .values = subs, .n = b->n_iter_vars};
  loom_stmt tmp = *r;
  loom_block bb = *b;
  flip_ctx fc = {a, b};
  loom_ir_mutator flip = {.expr_post = flip_compare, .ctx = &fc};
  if (!(bb.body = loom_ir_mutate_stmt(a, &flip, b->body)) ||
      (b->init && !(bb.init = loom_ir_mutate_stmt(a, &flip, b->init)))) {
    st = sched_nomem(c);
    goto out;
  }
  bb.iter_vars = iters;
  bb.n_iter_vars = ni;
  tmp.u.realize.block = &bb;
  tmp.u.realize.iter_values = vals;
  tmp.u.realize.n_iter_values = ni;
  tmp.u.realize.predicate = inner_pred;
  loom_stmt *sub = sched_subst_stmt(a, &tmp, &sm);
  sub = sub ? sched_simplify_accesses(a, ctx, sub) : NULL;
  loom_stmt *nr = sub ? loom_arena_alloc(a, sizeof *nr) : NULL;
  if (!nr) {
    st = sched_nomem(c);
    goto out;
  }
  *nr = *sub;
  ib->realize = ib->regions = nr;
  if (b->init)
    st = split_init(c, ib, o);
out:
  loom_arith_ctx_free(ctx);
  return st;
}

/* A reduction's init leaves the inner block for the outer one: a block
 * `<name>_init` over the spatial inner iters the init uses (`<iter>_init`),
 * under copies of the inner loops their bindings use (TVM's blockized
 * init). With reduction iters outside, the inner block reads what it
 * writes. */
static loom_status split_init(sched_call *c, inner_block *ib,
                              const outer_iters *o) {
  loom_arena *a = sched_arena(c->s);
  loom_stmt *r = ib->realize;
  const loom_block *b = r->u.realize.block;
  int n = b->n_iter_vars;
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *vals);
  const loom_var *olds[MAX_ITERS + MAX_LOOPS];
  loom_expr *news[MAX_ITERS + MAX_LOOPS];
  int nm = 0, ni = 0;
  if (!iters || !vals)
    return sched_nomem(c);
  for (int i = 0; i < n; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    if (iv->kind != LOOM_ITER_SPATIAL ||
        !loom_ir_stmt_uses(b->init, iv->var))
      continue;
    char name[256];
    snprintf(name, sizeof name, "%s_init", iv->var->name);
    loom_var *v = loom_ir_var(a, name, iv->var->dtype);
    if (!v || !(news[nm] = loom_ir_ref(a, v)))
      return sched_nomem(c);
    olds[nm++] = iv->var;
    iters[ni] = *iv;
    iters[ni].var = v;
    vals[ni++] = r->u.realize.iter_values[i];
  }
  /* The inner loops the kept bindings use, with fresh variables. */
  loom_stmt *loops[MAX_LOOPS];
  int nl = 0;
  for (int k = 0; k < ib->in.n; k++) {
    bool used = false;
    for (int i = 0; i < ni; i++)
      used |= sched_expr_uses(vals[i], ib->in.loops[k]->u.loop.var);
    if (!used)
      continue;
    loom_stmt *l = loom_arena_alloc(a, sizeof *l);
    loom_var *v = loom_ir_var(a, ib->in.loops[k]->u.loop.var->name,
                              ib->in.loops[k]->u.loop.var->dtype);
    if (!l || !v || !(news[nm] = loom_ir_ref(a, v)))
      return sched_nomem(c);
    *l = *ib->in.loops[k];
    l->u.loop.var = v;
    olds[nm++] = ib->in.loops[k]->u.loop.var;
    loops[nl++] = l;
  }
  sched_map sm = {.vars = olds, .values = news, .n = nm};
  loom_block *ib_block = loom_ir_block(a, "");
  loom_stmt *ir = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  char name[256];
  snprintf(name, sizeof name, "%s_init", b->name);
  if (!ib_block || !ir || !(ib_block->name = loom_arena_strdup(a, name)))
    return sched_nomem(c);
  ib_block->iter_vars = iters;
  ib_block->n_iter_vars = ni;
  loom_stmt tmp = *r;
  loom_block wb = *b;
  wb.body = b->init;
  wb.init = NULL;
  wb.reads = NULL;
  wb.n_reads = 0;
  tmp.u.realize.block = &wb;
  loom_stmt *sub = sched_subst_stmt(a, &tmp, &sm);
  if (!sub)
    return sched_nomem(c);
  ib_block->body = sub->u.realize.block->body;
  ib_block->writes = sub->u.realize.block->writes;
  ib_block->n_writes = sub->u.realize.block->n_writes;
  for (int i = 0; i < ni; i++)
    if (!(vals[i] = sched_subst_expr(a, vals[i], &sm)))
      return sched_nomem(c);
  /* The inner block's predicate, as TVM gives it to the init, less the
   * conjuncts over inner loops the init nest leaves out (TVM's result then
   * uses loops it does not define). */
  const loom_var *dropped[MAX_LOOPS];
  int nd = 0;
  for (int k = 0; k < ib->in.n; k++) {
    bool kept = false;
    for (int j = 0; j < nl; j++)
      kept |= olds[ni + j] == ib->in.loops[k]->u.loop.var;
    if (!kept)
      dropped[nd++] = ib->in.loops[k]->u.loop.var;
  }
  bool oom = false;
  loom_expr *pred = sched_conjuncts_without(a, r->u.realize.predicate, dropped, nd, &oom);
  if (oom || (pred && !(pred = sched_subst_expr(a, pred, &sm))))
    return sched_nomem(c);
  ir->u.realize.block = ib_block;
  ir->u.realize.iter_values = vals;
  ir->u.realize.n_iter_values = ni;
  ir->u.realize.predicate = pred;
  loom_stmt *cur = ir;
  for (int k = nl - 1; k >= 0; k--) {
    loops[k]->u.loop.body = cur;
    loops[k]->u.loop.min = sched_subst_expr(a, loops[k]->u.loop.min, &sm);
    loops[k]->u.loop.extent = sched_subst_expr(a, loops[k]->u.loop.extent, &sm);
    if (!loops[k]->u.loop.min || !loops[k]->u.loop.extent)
      return sched_nomem(c);
    cur = loops[k];
  }
  ib->init = cur;
  /* The inner block loses its init. */
  bool outer_reduce = false;
  for (int i = 0; i < o->n; i++)
    outer_reduce |= o->iters[i].kind == LOOM_ITER_REDUCE;
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  if (!nb || !nr)
    return sched_nomem(c);
  *nb = *b;
  nb->init = NULL;
  if (outer_reduce) {
    loom_buffer_region *reads = loom_arena_alloc(
        a, (size_t)(b->n_reads + b->n_writes + 1) * sizeof *reads);
    if (!reads)
      return sched_nomem(c);
    int k = 0;
    for (int i = 0; i < b->n_writes; i++)
      reads[k++] = b->writes[i];
    for (int i = 0; i < b->n_reads; i++)
      reads[k++] = b->reads[i];
    nb->reads = reads;
    nb->n_reads = k;
  }
  *nr = *r;
  nr->u.realize.block = nb;
  ib->realize = nr;
  return LOOM_OK;
}

/* The reads (or writes) of the inner blocks relaxed over their inner
 * iters, one hull per buffer in order of first appearance. */
static loom_status outer_regions(sched_call *c, inner_block *ibs, int n,
                                 bool writes, loom_buffer_region **out,
                                 int *n_out) {
  loom_arena *a = sched_arena(c->s);
  int cap = 0;
  for (int k = 0; k < n; k++) {
    const loom_block *b = ibs[k].regions->u.realize.block;
    cap += writes ? b->n_writes : b->n_reads;
  }
  loom_buffer_region *rs = loom_arena_alloc(a, (size_t)(cap ? cap : 1) * sizeof *rs);
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!rs || !ctx) {
    loom_arith_ctx_free(ctx);
    return sched_nomem(c);
  }
  int m = 0;
  loom_status st = LOOM_OK;
  for (int k = 0; k < n && st == LOOM_OK; k++) {
    const loom_block *b = ibs[k].regions->u.realize.block;
    const loom_buffer_region *src = writes ? b->writes : b->reads;
    int ns = writes ? b->n_writes : b->n_reads;
    /* The inner iters, and the inner loops for a body that uses them
     * directly. */
    loom_arith_relax relax[MAX_ITERS + MAX_LOOPS];
    int nx = 0;
    for (int i = 0; i < ibs[k].n_inner; i++, nx++) {
      relax[nx].var = ibs[k].inner_vars[i];
      relax[nx].range.min = loom_ir_int(a, ibs[k].inner_vars[i]->dtype, 0);
      relax[nx].range.extent = ibs[k].inner_ext[i];
    }
    for (int i = 0; i < ibs[k].in.n; i++, nx++) {
      relax[nx].var = ibs[k].in.loops[i]->u.loop.var;
      relax[nx].range.min = ibs[k].in.loops[i]->u.loop.min;
      relax[nx].range.extent = ibs[k].in.loops[i]->u.loop.extent;
    }
    for (int j = 0; j < ns && st == LOOM_OK; j++) {
      loom_buffer_region rr, u;
      if (loom_arith_region_relax(a, ctx, &src[j], relax, nx, &rr, NULL) !=
          LOOM_OK) {
        st = sched_nomem(c);
        break;
      }
      int at = -1;
      for (int q = 0; q < m; q++)
        if (rs[q].buffer == rr.buffer)
          at = q;
      if (at < 0)
        rs[m++] = rr;
      else if (loom_arith_region_union(a, ctx, &rs[at], &rr, &u, c->d) ==
               LOOM_OK)
        rs[at] = u;
      else
        st = LOOM_ERROR;
    }
  }
  loom_arith_ctx_free(ctx);
  *out = rs;
  *n_out = m;
  return st;
}

/* The path from p's last statement down to target, appended to p. */
static bool extend_path(sched_path *p, loom_stmt *target) {
  for (loom_stmt *cur = p->stmts[p->n - 1]; cur != target;) {
    loom_stmt *buf[4], **ch;
    int n = sched_kids_of(cur, &ch, buf);
    loom_stmt *next = NULL;
    for (int i = 0; i < n && !next; i++) {
      loom_stmt *ls[SCHED_MAX_DEPTH];
      int nl = 0;
      if (sched_find_under(ch[i], target, ls, &nl))
        next = ch[i];
    }
    if (!next || !sched_path_push(p, next))
      return false;
    cur = next;
  }
  return true;
}

/* The statement at ib->p.stmts[top] rebuilt with the inner realize. */
static loom_stmt *rebuild_down(loom_arena *a, const inner_block *ib) {
  loom_stmt *cur = ib->realize;
  for (int i = ib->p.n - 2; i >= ib->top && cur; i--)
    cur = sched_with_child(a, ib->p.stmts[i], ib->p.stmts[i + 1], cur);
  return cur;
}

static loom_stmt *outer_realize(sched_call *c, const char *name,
                                outer_iters *o, loom_stmt *body,
                                inner_block *ibs, int n) {
  loom_arena *a = sched_arena(c->s);
  loom_block *ob = loom_ir_block(a, name);
  loom_stmt *orl = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, body->loc);
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(o->n ? o->n : 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(o->n ? o->n : 1) * sizeof *vals);
  if (!ob || !orl || !iters || !vals)
    return NULL;
  memcpy(iters, o->iters, (size_t)o->n * sizeof *iters);
  memcpy(vals, o->vals, (size_t)o->n * sizeof *vals);
  ob->iter_vars = iters;
  ob->n_iter_vars = o->n;
  ob->body = body;
  ob->init = n == 1 ? ibs[0].init : NULL;
  if (outer_regions(c, ibs, n, false, &ob->reads, &ob->n_reads) != LOOM_OK ||
      outer_regions(c, ibs, n, true, &ob->writes, &ob->n_writes) != LOOM_OK)
    return NULL;
  /* Region bounds simplified, as TVM's relaxation leaves them: without
   * the outer iters' ranges (`co_o // 64 * 3` stays). */
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!ctx)
    return NULL;
  for (int pass = 0; pass < 2; pass++) {
    loom_buffer_region *rs = pass ? ob->writes : ob->reads;
    int nr = pass ? ob->n_writes : ob->n_reads;
    for (int i = 0; i < nr; i++)
      for (int d = 0; d < rs[i].n_ranges; d++) {
        rs[i].ranges[d].min = loom_arith_simplify(a, ctx, rs[i].ranges[d].min);
        rs[i].ranges[d].extent =
            loom_arith_simplify(a, ctx, rs[i].ranges[d].extent);
      }
  }
  loom_arith_ctx_free(ctx);
  orl->u.realize.block = ob;
  orl->u.realize.iter_values = vals;
  orl->u.realize.n_iter_values = o->n;
  orl->u.realize.predicate = n == 1 ? ibs[0].outer_pred : NULL;
  return orl;
}

static loom_status blockize_loop(sched_call *c, bool keep_unit) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  sched_stmt_list kids = {0};
  inner_block *ib = calloc(1, sizeof *ib);
  outer_iters *o = calloc(1, sizeof *o);
  loop_set *out = calloc(1, sizeof *out);
  loom_status st = LOOM_OK;
  if (!ib || !o || !out) {
    st = sched_nomem(c);
    goto done;
  }
  if ((st = sched_input_loop(c, 0, &p)) != LOOM_OK)
    goto done;
  int li = p.n - 1;
  loom_stmt *loop = p.stmts[li];
  if (!sched_collect_blocks(loop, &kids)) {
    st = sched_nomem(c);
    goto done;
  }
  if (kids.n != 1) {
    st = sched_fail(c, "loop '%s' must hold exactly one block; it holds %d",
                    loop->u.loop.var->name, kids.n);
    goto done;
  }
  ib->p.func = p.func;
  for (int i = 0; i < p.n; i++)
    if (!sched_path_push(&ib->p, p.stmts[i])) {
      st = sched_nomem(c);
      goto done;
    }
  if (!extend_path(&ib->p, kids.items[0])) {
    st = sched_nomem(c);
    goto done;
  }
  ib->top = li;
  for (int i = li; i < ib->p.n - 1; i++) {
    const loom_stmt *s = ib->p.stmts[i];
    if (s->kind != LOOM_STMT_FOR || s->u.loop.body != ib->p.stmts[i + 1]) {
      st = sched_fail(c, "the loops from '%s' down to block '%s' must each "
                         "hold only the next",
                      loop->u.loop.var->name,
                      kids.items[0]->u.realize.block->name);
      goto done;
    }
    if (ib->in.n == MAX_LOOPS) {
      st = sched_fail(c, "too many loops");
      goto done;
    }
    ib->in.loops[ib->in.n++] = s;
  }
  int si = sched_scope_index(&ib->p, li);
  for (int i = si + 1; i < li; i++)
    if (p.stmts[i]->kind == LOOM_STMT_FOR && out->n < MAX_LOOPS)
      out->loops[out->n++] = p.stmts[i];
  if ((st = make_inner(c, ib, out, o, keep_unit)) != LOOM_OK)
    goto done;
  loom_stmt *body = rebuild_down(a, ib);
  char name[256];
  snprintf(name, sizeof name, "%s_o", kids.items[0]->u.realize.block->name);
  loom_stmt *orl = body ? outer_realize(c, name, o, body, ib, 1) : NULL;
  if (!orl || !(c->mod = sched_replace(a, c->mod, &p, li, orl))) {
    st = c->d->msg ? LOOM_ERROR : sched_nomem(c);
    goto done;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = p.func,
                                    .block = orl->u.realize.block->name});
done:
  if (ib)
    sched_path_free(&ib->p);
  free(ib);
  free(o);
  free(out);
  free(kids.items);
  sched_path_free(&p);
  return st;
}

/* Blocks given as a list: their nests, consecutive items of one sequence,
 * go into one outer block `outer_<B>_<C>_` whose iters are the blocks'
 * iters by name, all outer parts (no loop lies between). */
static loom_status blockize_blocks(sched_call *c, const loom_tval *list,
                                   bool keep_unit) {
  loom_arena *a = sched_arena(c->s);
  int n = list->n;
  if (n < 1 || n > MAX_BLOCKS)
    return sched_fail(c, "give 1 to %d blocks", MAX_BLOCKS);
  inner_block *ibs = calloc((size_t)n, sizeof *ibs);
  outer_iters *o = calloc(1, sizeof *o);
  loop_set none = {0};
  loom_status st = LOOM_OK;
  if (!ibs || !o) {
    free(ibs);
    free(o);
    return sched_nomem(c);
  }
  for (int k = 0; k < n && st == LOOM_OK; k++) {
    sched_call sub = *c;
    sub.inputs = &list->items[k];
    sub.n_inputs = 1;
    st = sched_input_block(&sub, 0, &ibs[k].p);
  }
  if (st != LOOM_OK)
    goto done;
  /* The sequence that holds them all. */
  int lca = -1;
  for (int d = 0;; d++) {
    bool same = true;
    for (int k = 0; k < n && same; k++)
      same = ibs[k].p.func == ibs[0].p.func && d < ibs[k].p.n - 1 &&
             ibs[k].p.stmts[d] == ibs[0].p.stmts[d];
    if (!same)
      break;
    lca = d;
  }
  const loom_stmt *seq = lca >= 0 ? ibs[0].p.stmts[lca] : NULL;
  if (!seq || seq->kind != LOOM_STMT_SEQ) {
    st = sched_fail(c, "the blocks given must lie in different statements "
                       "of one sequence");
    goto done;
  }
  int lo = seq->u.seq.n_stmts, hi = -1;
  for (int k = 0; k < n; k++) {
    ibs[k].top = lca + 1;
    for (int i = 0; i < seq->u.seq.n_stmts; i++)
      if (seq->u.seq.stmts[i] == ibs[k].p.stmts[lca + 1]) {
        lo = i < lo ? i : lo;
        hi = i > hi ? i : hi;
      }
    for (int i = lca + 1; i < ibs[k].p.n - 1; i++)
      if (ibs[k].p.stmts[i]->kind == LOOM_STMT_FOR && ibs[k].in.n < MAX_LOOPS)
        ibs[k].in.loops[ibs[k].in.n++] = ibs[k].p.stmts[i];
  }
  /* Every block in the run must be one of those given. */
  for (int i = lo; i <= hi && st == LOOM_OK; i++) {
    sched_stmt_list bl = {0};
    if (!sched_collect_blocks(seq->u.seq.stmts[i], &bl)) {
      free(bl.items);
      st = sched_nomem(c);
      break;
    }
    for (int q = 0; q < bl.n && st == LOOM_OK; q++) {
      bool given = false;
      for (int k = 0; k < n; k++)
        given |= ibs[k].p.stmts[ibs[k].p.n - 1] == bl.items[q];
      if (!given)
        st = sched_fail(c, "block '%s' lies among the blocks given but is "
                           "not one of them",
                        bl.items[q]->u.realize.block->name);
    }
    free(bl.items);
  }
  for (int k = 0; k < n && st == LOOM_OK; k++)
    for (int q = 0; q < k && st == LOOM_OK; q++)
      if (ibs[q].p.stmts[lca + 1] == ibs[k].p.stmts[lca + 1])
        st = sched_fail(c, "blocks '%s' and '%s' share a loop nest",
                        ibs[q].p.stmts[ibs[q].p.n - 1]->u.realize.block->name,
                        ibs[k].p.stmts[ibs[k].p.n - 1]->u.realize.block->name);
  for (int k = 0; k < n && st == LOOM_OK; k++)
    if (ibs[k].p.stmts[ibs[k].p.n - 1]->u.realize.block->init)
      st = sched_fail(c, "block '%s' is a reduction block; blockize of a "
                         "list of blocks takes none",
                      ibs[k].p.stmts[ibs[k].p.n - 1]->u.realize.block->name);
  for (int k = 0; k < n && st == LOOM_OK; k++)
    st = make_inner(c, &ibs[k], &none, o, keep_unit);
  if (st != LOOM_OK)
    goto done;
  /* The run of items, each rebuilt with its inner block. */
  int cnt = hi - lo + 1;
  loom_stmt **items = loom_arena_alloc(a, (size_t)cnt * sizeof *items);
  loom_buf name;
  loom_buf_init(&name);
  loom_buf_puts(&name, "outer_");
  if (!items) {
    st = sched_nomem(c);
    goto done;
  }
  for (int i = lo; i <= hi; i++) {
    items[i - lo] = seq->u.seq.stmts[i];
    for (int k = 0; k < n; k++)
      if (ibs[k].p.stmts[lca + 1] == seq->u.seq.stmts[i])
        items[i - lo] = rebuild_down(a, &ibs[k]);
  }
  for (int k = 0; k < n; k++)
    loom_buf_printf(&name, "%s_",
                    ibs[k].p.stmts[ibs[k].p.n - 1]->u.realize.block->name);
  loom_stmt *body = NULL;
  if (cnt == 1)
    body = items[0];
  else if ((body = loom_ir_stmt(a, LOOM_STMT_SEQ, seq->loc))) {
    body->u.seq.stmts = items;
    body->u.seq.n_stmts = cnt;
  }
  loom_stmt *orl = body && name.data ? outer_realize(c, name.data, o, body, ibs, n)
                                     : NULL;
  loom_buf_free(&name);
  loom_stmt *ns = loom_arena_alloc(a, sizeof *ns);
  loom_stmt **all = loom_arena_alloc(
      a, (size_t)seq->u.seq.n_stmts * sizeof *all);
  if (!orl || !ns || !all) {
    st = c->d->msg ? LOOM_ERROR : sched_nomem(c);
    goto done;
  }
  int m = 0;
  for (int i = 0; i < seq->u.seq.n_stmts; i++)
    if (i < lo || i > hi)
      all[m++] = seq->u.seq.stmts[i];
    else if (i == lo)
      all[m++] = orl;
  *ns = *seq;
  ns->u.seq.stmts = all;
  ns->u.seq.n_stmts = m;
  if (!(c->mod = sched_replace(a, c->mod, &ibs[0].p, lca, m == 1 ? all[0] : ns))) {
    st = sched_nomem(c);
    goto done;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = ibs[0].p.func,
                                    .block = orl->u.realize.block->name});
done:
  for (int k = 0; k < n; k++)
    sched_path_free(&ibs[k].p);
  free(ibs);
  free(o);
  return st;
}

loom_status sched_apply_blockize(sched_call *c) {
  bool keep_unit = c->n_attrs < 1 || c->attrs[0].i != 0;
  if (c->n_inputs < 1)
    return sched_fail(c, "missing target");
  const loom_tval *t = &c->inputs[0];
  if (t->kind == LOOM_TV_LIST)
    return blockize_blocks(c, t, keep_unit);
  if (t->kind == LOOM_TV_RV &&
      loom_sched_rv_kind(c->s, (loom_sched_rv)t->i) == LOOM_RV_BLOCK) {
    loom_tval one = {.kind = LOOM_TV_LIST, .n = 1, .items = (loom_tval *)t};
    return blockize_blocks(c, &one, keep_unit);
  }
  return blockize_loop(c, keep_unit);
}
