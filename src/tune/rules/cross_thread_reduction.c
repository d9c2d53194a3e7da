/* CrossThreadReduction (MetaSchedule's, on GPUs): a reduction worth
 * spreading over threads gets its reduction loops fused and split by a
 * thread count drawn from 4, 8, ..., 512, the inner part bound to
 * threadIdx.x, so that the threads of a block add up one output together.
 * When its consumer can take it (TVM's GetComputeTargetLoopAndBlock), the
 * reduction is first computed at the consumer's outer spatial loop, its
 * output moved to shared memory, and the consumer's innermost loop bound
 * to the same threads: one kernel does both. The unchanged schedule comes
 * first, then the one reduced across threads. A reduction the GPU
 * lowering cannot make cross-thread (an update other than out = out op x:
 * argmax's pair, a layer norm's two sums in one block) is left alone. */
#include "loom/lower.h"
#include "tune/space_impl.h"

#include <string.h>

static const int64_t thread_extents[] = {4, 8, 16, 32, 64, 128, 256, 512};
#define N_EXTENTS (int)(sizeof thread_extents / sizeof *thread_extents)

static const loom_loc nowhere = {0};

/* TVM's NeedsRFactorOrCrossThreadReduction with a GPU's limits: a
 * reduction over a trivially bound perfect nest, not tiled. A block the
 * GPU tiling would take qualifies only while its reduction is longer than
 * its spatial part and that part fits in one thread block; any other
 * reduction qualifies once it reduces more than one element. */
static bool needs_cross_thread(const space_ctx *x, const space_block *sb) {
  const loom_block *b = sb->block;
  if (b->n_writes < 1 || !b->init || space_is_spatial(b) ||
      !space_is_open_nest(sb))
    return false;
  int64_t space, reduce;
  space_loop_extents(sb, &space, &reduce);
  if (space_needs_tiling(sb))
    return space < reduce && space <= x->target->gpu.max_threads_per_block;
  return reduce > 1;
}

/* Where the reduction goes when it can be fused with its consumer. */
typedef struct fusion {
  bool is_fusible;
  loom_sched_rv consumer;  /* the first consumer */
  loom_sched_rv at;        /* its loop the reduction is computed at */
  loom_sched_rv innermost; /* its innermost loop */
} fusion;

static bool find_named(const loom_sched *t, loom_sched_rv rv, space_block *sb) {
  const loom_block *b = loom_sched_rv_block(t, rv);
  return b && space_find_block(space_func(t), b->name, sb);
}

/* TVM's GetComputeTargetLoopAndBlock, recording what it asks the
 * schedule: a reduction with one output can be fused when its first
 * consumer is not worth tiling and, with several consumers, they share a
 * loop. It is computed at the consumer's loop of the same depth as its
 * last leading spatial loop (no deeper than the loop the consumers share). */
static loom_status find_fusion(loom_sched *t, loom_sched_rv block,
                               fusion *fu, loom_diag *d) {
  *fu = (fusion){false, -1, -1, -1};
  const loom_block *b = loom_sched_rv_block(t, block);
  if (!b || b->n_writes != 1)
    return LOOM_OK;
  loom_tval in = loom_tval_rv(block);
  const loom_sched_rv *outs;
  int n_cons;
  TRY(space_apply(t, LOOM_INST_GET_CONSUMERS, &in, 1, NULL, 0, &outs, &n_cons,
                  d));
  if (n_cons == 0)
    return LOOM_OK;
  loom_sched_rv first = outs[0];
  space_block csb, other;
  if (!find_named(t, first, &csb) || space_needs_tiling(&csb))
    return LOOM_OK;
  /* The loops all consumers share: a prefix of the first one's. */
  int n_shared = csb.n_loops;
  for (int c = 1; c < n_cons; c++) {
    if (!find_named(t, outs[c], &other) || other.scope != csb.scope)
      return LOOM_OK;
    int k = 0;
    while (k < n_shared && k < other.n_loops && other.loops[k] == csb.loops[k])
      k++;
    n_shared = k;
  }
  if (n_cons > 1 && n_shared == 0)
    return LOOM_OK;
  /* With one consumer the common ancestor is that block: no loop bounds
   * the depth. */
  int i_shared = n_cons > 1 ? n_shared - 1 : -1;
  const loom_sched_rv *lp;
  int n_tgt, n_own;
  TRY(loom_sched_get_loops(t, first, &lp, &n_tgt, d));
  if (n_tgt != csb.n_loops)
    return LOOM_OK;
  loom_sched_rv tgt_at[SPACE_MAX_LOOPS];
  memcpy(tgt_at, lp, (size_t)n_tgt * sizeof *tgt_at);
  TRY(loom_sched_get_loops(t, block, &lp, &n_own, d));
  space_block sb;
  if (!find_named(t, block, &sb) || sb.n_loops != n_own)
    return LOOM_OK;
  int n_min = n_own < n_tgt ? n_own : n_tgt, pos = n_min - 1;
  for (int i = 0; i < n_min; i++) {
    if (space_loop_iter_kind(sb.loops[i]) != LOOM_ITER_SPATIAL) {
      pos = i - 1;
      break;
    }
    if (i == i_shared) {
      pos = i;
      break;
    }
  }
  if (pos < 0)
    return LOOM_OK;
  *fu = (fusion){true, first, tgt_at[pos], tgt_at[n_tgt - 1]};
  return LOOM_OK;
}

/* Whether a loop of the consumer is bound to threadIdx (TVM's
 * InThreadScope, which reads its loops), and its loop bound to threadIdx.x
 * if any. */
static loom_status is_in_thread_scope(loom_sched *t, loom_sched_rv consumer,
                                      bool *out, const loom_stmt **tx,
                                      loom_diag *d) {
  const loom_sched_rv *lp;
  int n;
  TRY(loom_sched_get_loops(t, consumer, &lp, &n, d));
  space_block sb;
  *out = false;
  *tx = NULL;
  if (!find_named(t, consumer, &sb))
    return LOOM_OK;
  for (int i = 0; i < sb.n_loops; i++) {
    const loom_stmt *l = sb.loops[i];
    if (l->u.loop.kind != LOOM_FOR_THREAD_BINDING || !l->u.loop.thread ||
        strncmp(l->u.loop.thread, "threadIdx.", 10))
      continue;
    *out = true;
    if (!*tx && !strcmp(l->u.loop.thread, "threadIdx.x"))
      *tx = l;
  }
  return LOOM_OK;
}

/* The thread count of the consumer's threadIdx.x loop tx, for the
 * reduction to share (TVM's GetThreadIdxExtentFromTrace): the factor of
 * the split whose part a threadIdx.x binding of tx took, a random variable
 * when it was sampled; else tx's extent. TVM takes the first threadIdx.x
 * binding of the whole trace, which is tx's unless another kernel bound
 * threads first. */
static loom_status thread_extent_of(loom_sched *t, const loom_stmt *tx,
                                    loom_tval *out, loom_diag *d) {
  loom_trace tr = loom_sched_trace(t);
  for (int i = 0; tx && i < tr.n_insts; i++) {
    const loom_inst *bind = tr.insts[i];
    if (bind->kind != LOOM_INST_BIND || bind->n_inputs < 1 ||
        bind->n_attrs < 1 || bind->attrs[0].kind != LOOM_TV_STR ||
        strcmp(bind->attrs[0].s, "threadIdx.x") ||
        bind->inputs[0].kind != LOOM_TV_RV ||
        loom_sched_rv_loop(t, (loom_sched_rv)bind->inputs[0].i) != tx->u.loop.var)
      continue;
    for (int j = 0; j < i; j++) {
      const loom_inst *split = tr.insts[j];
      for (int k = 0; split->kind == LOOM_INST_SPLIT && k < split->n_outputs &&
                      1 + k < split->n_inputs;
           k++) {
        const loom_tval *f = &split->inputs[1 + k];
        if (split->outputs[k] == bind->inputs[0].i &&
            (f->kind == LOOM_TV_RV || f->kind == LOOM_TV_INT)) {
          *out = *f;
          return LOOM_OK;
        }
      }
    }
  }
  int64_t extent;
  if (tx && loom_ir_is_const_int(tx->u.loop.extent, &extent)) {
    *out = loom_tval_int(extent);
    return LOOM_OK;
  }
  return loom_diag_error(d, nowhere,
                         "the consumer's threads are not bound to threadIdx.x "
                         "with a known count to share");
}

/* TVM's ReorderAndFuseReductionLoops: the block's spatial loops first,
 * then its reduction loops fused into one. */
static loom_status fuse_reduction(loom_sched *t, loom_sched_rv block,
                                  loom_sched_rv *out, loom_diag *d) {
  const loom_sched_rv *lp;
  int n;
  TRY(loom_sched_get_loops(t, block, &lp, &n, d));
  space_block sb;
  if (!find_named(t, block, &sb) || sb.n_loops != n)
    return loom_diag_error(d, nowhere, "unexpected loop nest");
  loom_sched_rv order[SPACE_MAX_LOOPS], reduce[SPACE_MAX_LOOPS];
  int n_order = 0, n_reduce = 0;
  bool is_moved = false;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
      loom_iter_kind k = space_loop_iter_kind(sb.loops[i]);
      if (k != (pass == 0 ? LOOM_ITER_SPATIAL : LOOM_ITER_REDUCE))
        continue;
      is_moved |= n_order != i;
      order[n_order++] = lp[i];
      if (pass == 1)
        reduce[n_reduce++] = lp[i];
    }
  if (n_order != n || n_reduce == 0)
    return loom_diag_error(d, nowhere,
                           "block '%s': a loop is neither spatial nor a "
                           "reduction, or none reduces",
                           sb.block->name);
  if (is_moved)
    TRY(loom_sched_reorder(t, order, n, d));
  *out = reduce[0];
  if (n_reduce > 1)
    TRY(loom_sched_fuse(t, reduce, n_reduce, true, out, d));
  return LOOM_OK;
}

static loom_status split_bind(loom_sched *t, loom_sched_rv loop,
                              loom_tval threads, loom_sched_rv *outer,
                              loom_diag *d) {
  loom_tval f[2] = {loom_tval_none(), threads};
  const loom_sched_rv *parts;
  TRY(loom_sched_split(t, loop, f, 2, true, false, &parts, d));
  loom_sched_rv inner = parts[1];
  if (outer)
    *outer = parts[0];
  return loom_sched_bind(t, inner, "threadIdx.x", d);
}

static loom_status reduce_across_threads(loom_sched *t, loom_sched_rv block,
                                         loom_diag *d) {
  fusion fu;
  TRY(find_fusion(t, block, &fu, d));
  loom_sched_rv v;
  TRY(space_sample_uniform(t, thread_extents, N_EXTENTS, &v, d));
  loom_tval threads = loom_tval_rv(v);
  if (fu.is_fusible) {
    bool is_bound;
    const loom_stmt *tx;
    TRY(is_in_thread_scope(t, fu.consumer, &is_bound, &tx, d));
    if (!is_bound) {
      loom_sched_rv outer;
      TRY(split_bind(t, fu.innermost, threads, &outer, d));
      if (fu.innermost == fu.at)
        fu.at = outer;
    } else {
      TRY(thread_extent_of(t, tx, &threads, d));
    }
    loom_tval in[2] = {loom_tval_rv(block), loom_tval_rv(fu.at)};
    loom_tval at_attrs[2] = {loom_tval_bool(true), loom_tval_int(-1)};
    TRY(space_apply(t, LOOM_INST_COMPUTE_AT, in, 2, at_attrs, 2, NULL, NULL,
                    d));
    loom_tval scope_attrs[2] = {loom_tval_int(0), loom_tval_str("shared")};
    TRY(space_apply(t, LOOM_INST_SET_SCOPE, in, 1, scope_attrs, 2, NULL, NULL,
                    d));
  }
  loom_sched_rv fused;
  TRY(fuse_reduction(t, block, &fused, d));
  return split_bind(t, fused, threads, NULL, d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!space_is_gpu(x->target) || x->target->gpu.max_threads_per_block < 1 ||
      x->target->gpu.warp_size < 1 || !f || !space_find_block(f, name, &sb) ||
      !needs_cross_thread(x, &sb) || !loom_lower_gpu_can_reduce(sb.block))
    return space_list_push(out, s);
  loom_sched *t = loom_sched_copy(s);
  if (!t) {
    loom_sched_free(s);
    return LOOM_NOMEM;
  }
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = reduce_across_threads(t, rv, &d);
  loom_diag_free(&d);
  /* A step the schedule refused leaves the unchanged schedule alone. */
  if (st != LOOM_OK) {
    loom_sched_free(t);
    t = NULL;
  }
  if (st == LOOM_NOMEM) {
    loom_sched_free(s);
    return st;
  }
  st = space_list_push(out, s);
  if (st == LOOM_OK && t)
    return space_list_push(out, t);
  loom_sched_free(t);
  return st;
}

const space_rule space_rule_cross_thread_reduction = {"CrossThreadReduction",
                                                      apply};
