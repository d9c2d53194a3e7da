/* RewriteUnboundBlock (MetaSchedule's, at most 256 thread blocks): every
 * block under the root that no loop binds to both blockIdx and threadIdx
 * gets its outer spatial loops bound to blockIdx.x / threadIdx.x, as
 * AutoBind does but with a fixed thread count, the fused extent up to the
 * target's threads per block: a GPU kernel needs every block inside a
 * thread. The steps are recorded, after the enter_postproc mark. */
#include "tune/space_impl.h"

typedef struct finder {
  const char *names[SPACE_MAX_BLOCKS];
  int n;
  int n_block_idx, n_thread_idx; /* loops bound so above the statement */
} finder;

static bool has_prefix(const char *s, const char *prefix) {
  while (*prefix)
    if (*s++ != *prefix++)
      return false;
  return true;
}

/* The count of loops bound to blockIdx or threadIdx that s is, or NULL. */
static int *bound_count(finder *fd, const loom_stmt *s) {
  const char *tag = s->kind == LOOM_STMT_FOR && s->u.loop.kind == LOOM_FOR_THREAD_BINDING
                        ? s->u.loop.thread
                        : NULL;
  return !tag                            ? NULL
         : has_prefix(tag, "blockIdx.")  ? &fd->n_block_idx
         : has_prefix(tag, "threadIdx.") ? &fd->n_thread_idx
                                         : NULL;
}

/* TVM's UnboundBlockFinder: the blocks under a statement, not looking
 * inside a block nor under a loop that has both a blockIdx and a threadIdx
 * loop at or above it. */
static loom_visit enter(void *ctx, loom_stmt *s) {
  finder *fd = ctx;
  if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    if (fd->n < SPACE_MAX_BLOCKS)
      fd->names[fd->n++] = s->u.realize.block->name;
    return LOOM_VISIT_SKIP;
  }
  int *count = bound_count(fd, s);
  if (count)
    (*count)++;
  return fd->n_block_idx && fd->n_thread_idx ? LOOM_VISIT_SKIP : LOOM_VISIT_GO;
}

static loom_visit leave(void *ctx, loom_stmt *s) {
  int *count = bound_count(ctx, s);
  if (count)
    (*count)--;
  return LOOM_VISIT_GO;
}

loom_status space_rewrite_unbound_block(loom_sched *s, const loom_target *t,
                                        loom_diag *d) {
  const loom_func *f = space_func(s);
  if (!f || !f->body || f->body->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_OK;
  int64_t max_threads = t->gpu.max_threads_per_block;
  if (max_threads < 1)
    return loom_diag_error(d, (loom_loc){0},
                           "RewriteUnboundBlock: the target gives no maximum "
                           "of threads per block");
  /* The blocks are found once, up front, as TVM does: binding one does not
   * change which others are bound. */
  finder fd = {.n = 0};
  loom_ir_visitor v = {.stmt_pre = enter, .stmt_post = leave, .ctx = &fd};
  loom_ir_visit_stmt(&v, f->body->u.realize.block->body);
  for (int i = 0; i < fd.n; i++) {
    loom_sched_rv b;
    TRY(space_get_block(s, f->name, fd.names[i], &b, d));
    TRY(space_bind_block_threads(s, b, SPACE_MAX_THREADBLOCKS, max_threads, NULL, 0,
                                 d));
  }
  return LOOM_OK;
}
