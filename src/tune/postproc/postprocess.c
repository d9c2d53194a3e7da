/* The postprocessors in MetaSchedule's order, after an enter_postproc
 * mark. On a CPU: DisallowDynamicLoop, RewriteParallelVectorizeUnroll,
 * RewriteReductionBlock, and a final check that the candidate verifies,
 * lowers and prints as C (RewriteLayout has no counterpart yet). On cuda:
 * DisallowDynamicLoop, RewriteCooperativeFetch, RewriteUnboundBlock,
 * RewriteParallelVectorizeUnroll, RewriteReductionBlock, and VerifyGPUCode:
 * the candidate lowers for the GPU within its limits (threads, shared
 * memory) and prints as CUDA C. */
#include "loom/lower.h"
#include "loom/tune.h"
#include "tune/space_impl.h"

#include <stdint.h>
#include <string.h>

static bool has_dynamic_loop(const loom_stmt *s, const char **name,
                             int depth) {
  if (!s || depth > 400)
    return false;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    if (!loom_ir_is_const_int(s->u.loop.extent, NULL)) {
      *name = s->u.loop.var->name;
      return true;
    }
    return has_dynamic_loop(s->u.loop.body, name, depth + 1);
  case LOOM_STMT_BLOCK_REALIZE:
    return has_dynamic_loop(s->u.realize.block->init, name, depth + 1) ||
           has_dynamic_loop(s->u.realize.block->body, name, depth + 1);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (has_dynamic_loop(s->u.seq.stmts[i], name, depth + 1))
        return true;
    return false;
  case LOOM_STMT_IF:
    return has_dynamic_loop(s->u.if_.then_case, name, depth + 1) ||
           has_dynamic_loop(s->u.if_.else_case, name, depth + 1);
  case LOOM_STMT_LET: return has_dynamic_loop(s->u.let.body, name, depth + 1);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    return has_dynamic_loop(s->u.alloc.body, name, depth + 1);
  case LOOM_STMT_ATTR: return has_dynamic_loop(s->u.attr.body, name, depth + 1);
  case LOOM_STMT_ASSERT:
    return has_dynamic_loop(s->u.assert_.body, name, depth + 1);
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return false;
  }
  return false;
}

loom_status space_disallow_dynamic_loop(loom_sched *s, loom_diag *d) {
  const loom_func *f = space_func(s);
  const char *name = NULL;
  if (f && has_dynamic_loop(f->body, &name, 0))
    return loom_diag_error(d, (loom_loc){0},
                           "DisallowDynamicLoop: loop '%s' has an extent that "
                           "is not a constant",
                           name);
  return LOOM_OK;
}

/* VerifyGPUCode's first check: a block marked with the thread counts it
 * keeps within (MultiLevelTiling's, from a warp to the block limit) runs
 * under that many threads, the threadIdx loops above it multiplied. */
static loom_status verify_thread_extents(const loom_sched *s, loom_diag *d) {
  const loom_func *f = space_func(s);
  const char *names[SPACE_MAX_BLOCKS];
  int n = f ? space_block_names(f, names, SPACE_MAX_BLOCKS) : 0;
  for (int i = 0; i < n; i++) {
    space_block sb;
    if (!space_find_block(f, names[i], &sb))
      continue;
    const loom_block *b = sb.block;
    const loom_value *lo = loom_ir_attr_get(b->annotations, b->n_annotations, SPACE_ANN_THREAD_LOW);
    const loom_value *hi = loom_ir_attr_get(b->annotations, b->n_annotations, SPACE_ANN_THREAD_HIGH);
    int64_t low = 0, high = INT64_MAX, threads = 1, ext;
    if (!lo && !hi)
      continue;
    if (lo && lo->kind == LOOM_VALUE_EXPR)
      loom_ir_is_const_int(lo->expr, &low);
    if (hi && hi->kind == LOOM_VALUE_EXPR)
      loom_ir_is_const_int(hi->expr, &high);
    for (int k = 0; k < sb.n_loops; k++) {
      const loom_stmt *l = sb.loops[k];
      if (l->u.loop.kind != LOOM_FOR_THREAD_BINDING || !l->u.loop.thread ||
          strncmp(l->u.loop.thread, "threadIdx.", 10))
        continue;
      if (!loom_ir_is_const_int(l->u.loop.extent, &ext))
        return loom_diag_error(d, (loom_loc){0},
                               "VerifyGPUCode: block '%s' runs under a thread "
                               "loop of extent that is not a constant",
                               b->name);
      threads *= ext;
    }
    if (threads < low || threads > high)
      return loom_diag_error(d, (loom_loc){0},
                             "VerifyGPUCode: block '%s' runs on %lld threads; "
                             "its tiling asks for %lld to %lld",
                             b->name, (long long)threads, (long long)low,
                             (long long)high);
  }
  return LOOM_OK;
}

loom_status space_verify(loom_sched *s, const loom_target *t, loom_diag *d) {
  const loom_module *m = loom_sched_module(s);
  TRY(loom_ir_verify_module(m, d));
  if (space_is_gpu(t))
    TRY(verify_thread_extents(s, d));
  return loom_tune_check(t, m, d);
}

loom_status loom_space_postprocess(loom_sched *s, const loom_target *t,
                                   loom_diag *d) {
  TRY(loom_sched_apply(s, LOOM_INST_ENTER_POSTPROC, NULL, 0, NULL, 0,
                       loom_tval_none(), (loom_loc){0}, NULL, NULL, d));
  TRY(space_disallow_dynamic_loop(s, d));
  if (space_is_gpu(t)) {
    TRY(space_rewrite_cooperative_fetch(s, d));
    TRY(space_rewrite_unbound_block(s, t, d));
  }
  TRY(space_rewrite_parallel_vectorize_unroll(s, d));
  TRY(space_rewrite_reduction_block(s, d));
  return space_verify(s, t, d);
}

loom_trace loom_space_strip_postproc(const loom_trace *t) {
  loom_trace out = *t;
  for (int i = 0; i < t->n_insts; i++)
    if (t->insts[i]->kind == LOOM_INST_ENTER_POSTPROC) {
      out.n_insts = i;
      break;
    }
  return out;
}
