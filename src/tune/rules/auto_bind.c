/* AutoBind (MetaSchedule's, at most 256 thread blocks): a block not bound
 * to GPU threads yet gets its outer spatial loops fused and split in two,
 * the outer part bound to blockIdx.x and the inner to threadIdx.x, the
 * thread count drawn from 32, 64, ..., 1024 (those within the fused extent
 * and the target's threads per block). This is TVM's BindBlockThreadIdx,
 * which RewriteUnboundBlock runs too with a fixed thread count; it lives
 * here with the loop classification CrossThreadReduction shares. */
#include "tune/space_impl.h"

#include <string.h>

static const int64_t auto_bind_extents[] = {32, 64, 128, 256, 512, 1024};
#define N_EXTENTS (int)(sizeof auto_bind_extents / sizeof *auto_bind_extents)

static const loom_loc nowhere = {0};

typedef struct iter_uses {
  int n_spatial, n_reduce, n_other;
} iter_uses;

/* Counts the iters of the blocks right under s (not those nested inside
 * them) whose bindings use v. */
static void count_uses(const loom_stmt *s, const loom_var *v, iter_uses *u,
                       int depth) {
  if (!s || depth > 400)
    return;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    for (int i = 0; i < s->u.realize.n_iter_values && i < b->n_iter_vars; i++) {
      if (!loom_ir_expr_uses(s->u.realize.iter_values[i], v))
        continue;
      loom_iter_kind k = b->iter_vars[i].kind;
      int *n = k == LOOM_ITER_SPATIAL ? &u->n_spatial
               : k == LOOM_ITER_REDUCE ? &u->n_reduce
                                       : &u->n_other;
      (*n)++;
    }
    return;
  }
  case LOOM_STMT_FOR: count_uses(s->u.loop.body, v, u, depth + 1); return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      count_uses(s->u.seq.stmts[i], v, u, depth + 1);
    return;
  case LOOM_STMT_IF:
    count_uses(s->u.if_.then_case, v, u, depth + 1);
    count_uses(s->u.if_.else_case, v, u, depth + 1);
    return;
  case LOOM_STMT_LET: count_uses(s->u.let.body, v, u, depth + 1); return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: count_uses(s->u.alloc.body, v, u, depth + 1); return;
  case LOOM_STMT_ATTR: count_uses(s->u.attr.body, v, u, depth + 1); return;
  case LOOM_STMT_ASSERT: count_uses(s->u.assert_.body, v, u, depth + 1); return;
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return;
  }
}

/* TVM's GetLoopIterType: spatial when the blocks under the loop bind it
 * to spatial iters only (or not at all), reduce when to reduction iters
 * only, opaque when to both or to another kind. */
loom_iter_kind space_loop_iter_kind(const loom_stmt *loop) {
  iter_uses u = {0, 0, 0};
  count_uses(loop->u.loop.body, loop->u.loop.var, &u, 0);
  if (u.n_other || (u.n_spatial && u.n_reduce))
    return LOOM_ITER_OPAQUE;
  return u.n_reduce ? LOOM_ITER_REDUCE : LOOM_ITER_SPATIAL;
}

static bool is_bound_to(const loom_stmt *loop, const char *prefix) {
  return loop->u.loop.kind == LOOM_FOR_THREAD_BINDING && loop->u.loop.thread &&
         !strncmp(loop->u.loop.thread, prefix, strlen(prefix));
}

/* The loop's body is the next link of a chain fuse accepts: one loop or
 * block. TVM tests only for several statements; a loop whose body is an if
 * (or a let) makes its fuse fail, where this leaves the if inside. */
static bool is_chain_link(const loom_stmt *s) {
  if (s->kind == LOOM_STMT_SEQ && s->u.seq.n_stmts == 1)
    s = s->u.seq.stmts[0];
  return s->kind == LOOM_STMT_FOR || s->kind == LOOM_STMT_BLOCK_REALIZE;
}

/* The thread count of a loop of `extent` iterations (already at most the
 * threads per block): with no candidates, the extent itself; else one
 * candidate within it, sampled uniformly when there are several (TVM's
 * MakeFactorSampler: a lone candidate, or none, is a constant). */
static loom_status thread_factor(loom_sched *s, int64_t extent,
                                 const int64_t *extents, int n_extents,
                                 loom_tval *out, loom_diag *d) {
  int64_t cand[SPACE_MAX_CHOICES];
  int n = 0;
  for (int i = 0; extents && i < n_extents && n < SPACE_MAX_CHOICES; i++)
    if (extents[i] <= extent)
      cand[n++] = extents[i];
  if (n <= 1) {
    *out = loom_tval_int(n == 1 ? cand[0] : extent);
    return LOOM_OK;
  }
  loom_sched_rv v;
  TRY(space_sample_uniform(s, cand, n, &v, d));
  *out = loom_tval_rv(v);
  return LOOM_OK;
}

/* TVM's BindSpatialLoop: a loop that 256 blocks of the most threads cover
 * is split [None, threads]; a longer one [None, 256, max threads], its
 * first part moved innermost to run serially in each thread. */
static loom_status bind_spatial_loop(loom_sched *s, loom_sched_rv loop,
                                     int64_t extent, int64_t max_blocks,
                                     int64_t max_threads,
                                     const int64_t *extents, int n_extents,
                                     loom_diag *d) {
  const loom_sched_rv *parts;
  if (extent <= max_blocks * max_threads) {
    loom_tval f[2] = {loom_tval_none(), loom_tval_none()};
    TRY(thread_factor(s, extent < max_threads ? extent : max_threads, extents,
                      n_extents, &f[1], d));
    TRY(loom_sched_split(s, loop, f, 2, true, false, &parts, d));
    loom_sched_rv outer = parts[0], inner = parts[1];
    TRY(loom_sched_bind(s, outer, "blockIdx.x", d));
    return loom_sched_bind(s, inner, "threadIdx.x", d);
  }
  loom_tval f[3] = {loom_tval_none(), loom_tval_int(max_blocks),
                    loom_tval_int(max_threads)};
  TRY(loom_sched_split(s, loop, f, 3, true, false, &parts, d));
  loom_sched_rv order[3] = {parts[1], parts[2], parts[0]};
  TRY(loom_sched_reorder(s, order, 3, d));
  TRY(loom_sched_bind(s, order[0], "blockIdx.x", d));
  return loom_sched_bind(s, order[1], "threadIdx.x", d);
}

static int min2(int a, int b) { return a < b ? a : b; }

/* a * b, or INT64_MAX past it (an extent that is not a constant counts as
 * INT64_MAX). */
static int64_t mul_sat(int64_t a, int64_t b) {
  return b > 0 && a > INT64_MAX / b ? INT64_MAX : a * b;
}

/* Where a block stands (TVM's BindBlockThreadIdx scan of its loops): the
 * first loop bound to blockIdx and to threadIdx, the first loop past which
 * the nest stops being a serial chain, and the last of the leading spatial
 * loops (-1 when the outermost is not spatial). */
typedef struct nest_scan {
  int i_block, i_thread, i_multi_child, i_spatial;
} nest_scan;

static nest_scan scan_nest(const space_block *sb) {
  nest_scan ns = {-1, -1, -1, -1};
  for (int i = 0; i < sb->n_loops; i++) {
    const loom_stmt *l = sb->loops[i];
    if (ns.i_block < 0 && is_bound_to(l, "blockIdx."))
      ns.i_block = i;
    if (ns.i_thread < 0 && is_bound_to(l, "threadIdx."))
      ns.i_thread = i;
    if (ns.i_multi_child < 0 && l->u.loop.kind != LOOM_FOR_SERIAL)
      ns.i_multi_child = i;
    if (ns.i_multi_child < 0 && !is_chain_link(l->u.loop.body))
      ns.i_multi_child = i + 1;
    if (ns.i_spatial == i - 1 && space_loop_iter_kind(l) == LOOM_ITER_SPATIAL)
      ns.i_spatial = i;
  }
  if (ns.i_multi_child < 0)
    ns.i_multi_child = sb->n_loops;
  return ns;
}

/* Binds the block's outer loops to blockIdx.x and threadIdx.x, recording
 * each step on s. With thread_extents the thread count is sampled among
 * them (AutoBind); without, it is the fused extent up to max_threads
 * (RewriteUnboundBlock). The root, a block the GPU tiling took, and a
 * block bound to both already are left alone; a block bound to threadIdx
 * alone gets its outer spatial loops before the thread loop fused and
 * bound to blockIdx.x. A block with no leading spatial loop gets a unit
 * loop to bind. A step the schedule refuses is returned as an error. */
loom_status space_bind_block_threads(loom_sched *s, loom_sched_rv block,
                                     int64_t max_blocks, int64_t max_threads,
                                     const int64_t *thread_extents,
                                     int n_extents, loom_diag *d) {
  const loom_block *b = loom_sched_rv_block(s, block);
  const loom_func *f = space_func(s);
  space_block sb;
  if (!b || !f || !space_find_block(f, b->name, &sb) || !sb.scope ||
      space_has_ann(b->annotations, b->n_annotations, SPACE_ANN_TILING))
    return LOOM_OK;
  nest_scan ns = scan_nest(&sb);
  /* Bound to blockIdx alone, it runs once per block (in thread 0), which
   * the lowering handles; TVM stops there. */
  if (ns.i_block >= 0)
    return LOOM_OK;
  const loom_sched_rv *lp;
  int n;
  TRY(loom_sched_get_loops(s, block, &lp, &n, d));
  if (n != sb.n_loops || n + 1 > SPACE_MAX_LOOPS)
    return loom_diag_error(d, nowhere, "block '%s': unexpected loop nest",
                           b->name);
  /* loops[] and extent[] with a unit loop in front when one is added. */
  loom_sched_rv loops[SPACE_MAX_LOOPS];
  int64_t extent[SPACE_MAX_LOOPS];
  int at = 0;
  if (ns.i_spatial < 0) {
    loom_tval in = loom_tval_rv(n > 0 ? lp[0] : block);
    const loom_sched_rv *unit;
    TRY(space_apply(s, LOOM_INST_ADD_UNIT_LOOP, &in, 1, NULL, 0, &unit, NULL,
                    d));
    loops[at] = unit[0];
    extent[at++] = 1;
    ns.i_spatial = 0;
    ns.i_thread += ns.i_thread >= 0;
    ns.i_multi_child++;
  }
  for (int i = 0; i < n; i++, at++) {
    loops[at] = lp[i];
    if (!loom_ir_is_const_int(sb.loops[i]->u.loop.extent, &extent[at]))
      extent[at] = INT64_MAX;
  }
  int n_fuse = min2(ns.i_multi_child, ns.i_spatial + 1);
  if (ns.i_thread >= 0)
    n_fuse = min2(n_fuse, ns.i_thread);
  if (n_fuse < 1)
    return loom_diag_error(d, nowhere,
                           "block '%s': no serial spatial loop outside its "
                           "threads to bind to blockIdx",
                           b->name);
  if (ns.i_thread >= 0) {
    /* TVM reads the loops again here: the unit loop is among them. */
    TRY(loom_sched_get_loops(s, block, &lp, &n, d));
    loom_sched_rv fused;
    TRY(loom_sched_fuse(s, lp, n_fuse, true, &fused, d));
    return loom_sched_bind(s, fused, "blockIdx.x", d);
  }
  int64_t total = 1;
  for (int i = 0; i < n_fuse; i++)
    total = mul_sat(total, extent[i]);
  loom_sched_rv fused;
  TRY(loom_sched_fuse(s, loops, n_fuse, true, &fused, d));
  return bind_spatial_loop(s, fused, total, max_blocks, max_threads,
                           thread_extents, n_extents, d);
}

static loom_status bind(const space_ctx *x, loom_sched *t, loom_sched_rv block,
                        loom_diag *d) {
  return space_bind_block_threads(t, block, SPACE_MAX_THREADBLOCKS,
                                  x->target->gpu.max_threads_per_block,
                                  auto_bind_extents, N_EXTENTS, d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  (void)name;
  if (!space_is_gpu(x->target) || x->target->gpu.max_threads_per_block < 1)
    return space_list_push(out, s);
  return space_try(x, s, rv, bind, out);
}

const space_rule space_rule_auto_bind = {"AutoBind", apply};
