/* The CPU postprocessors in MetaSchedule's order, after an enter_postproc
 * mark: DisallowDynamicLoop, RewriteParallelVectorizeUnroll,
 * RewriteReductionBlock, and a final check that the candidate verifies,
 * lowers and prints as C. (RewriteLayout has no counterpart yet.) */
#include "loom/lower.h"
#include "loom/tune.h"
#include "tune/space_impl.h"

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

loom_status space_verify(loom_sched *s, const loom_target *t, loom_diag *d) {
  const loom_module *m = loom_sched_module(s);
  TRY(loom_ir_verify_module(m, d));
  return loom_tune_check(t, m, d);
}

loom_status loom_space_postprocess(loom_sched *s, const loom_target *t,
                                   loom_diag *d) {
  TRY(loom_sched_apply(s, LOOM_INST_ENTER_POSTPROC, NULL, 0, NULL, 0,
                       loom_tval_none(), (loom_loc){0}, NULL, NULL, d));
  TRY(space_disallow_dynamic_loop(s, d));
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
