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

/* TVM's UnboundBlockFinder: the blocks under s, not looking inside a block
 * nor under a loop that has both a blockIdx and a threadIdx loop at or
 * above it. */
static void find_unbound(finder *fd, const loom_stmt *s, int depth) {
  if (!s || depth > 400)
    return;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE:
    if (fd->n < SPACE_MAX_BLOCKS)
      fd->names[fd->n++] = s->u.realize.block->name;
    return;
  case LOOM_STMT_FOR: {
    const char *tag = s->u.loop.kind == LOOM_FOR_THREAD_BINDING ? s->u.loop.thread
                                                             : NULL;
    int *count = !tag                            ? NULL
                 : has_prefix(tag, "blockIdx.")  ? &fd->n_block_idx
                 : has_prefix(tag, "threadIdx.") ? &fd->n_thread_idx
                                                 : NULL;
    if (count)
      (*count)++;
    if (fd->n_block_idx == 0 || fd->n_thread_idx == 0)
      find_unbound(fd, s->u.loop.body, depth + 1);
    if (count)
      (*count)--;
    return;
  }
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      find_unbound(fd, s->u.seq.stmts[i], depth + 1);
    return;
  case LOOM_STMT_IF:
    find_unbound(fd, s->u.if_.then_case, depth + 1);
    find_unbound(fd, s->u.if_.else_case, depth + 1);
    return;
  case LOOM_STMT_LET: find_unbound(fd, s->u.let.body, depth + 1); return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: find_unbound(fd, s->u.alloc.body, depth + 1); return;
  case LOOM_STMT_ATTR: find_unbound(fd, s->u.attr.body, depth + 1); return;
  case LOOM_STMT_ASSERT: find_unbound(fd, s->u.assert_.body, depth + 1); return;
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return;
  }
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
  find_unbound(&fd, f->body->u.realize.block->body, 0);
  for (int i = 0; i < fd.n; i++) {
    loom_sched_rv b;
    TRY(space_get_block(s, f->name, fd.names[i], &b, d));
    TRY(space_bind_block_threads(s, b, SPACE_MAX_THREADBLOCKS, max_threads, NULL, 0,
                                 d));
  }
  return LOOM_OK;
}
