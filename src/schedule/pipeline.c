/* The stage-pipeline property of a scope: every block in it that reads a
 * buffer another block of the scope writes reads only what those blocks
 * write (TVM's region cover). Primitives that split a block in two
 * (rfactor) rely on it. Regions are compared after relaxing every loop of
 * the scope and clipping to the buffer, and only where both sides are
 * constants: a scope is refused only when a read provably reaches past
 * what is written. */
#include "schedule/sched_impl.h"

#include <string.h>

/* The region of buf that block realize r reads or writes over all loops
 * between the scope body s and r; false when r declares none. */
static bool relaxed_region(loom_arena *a, loom_arith_ctx *ctx, loom_stmt *s,
                           const loom_stmt *r, const loom_buffer *buf,
                           bool is_write, loom_buffer_region *out) {
  loom_stmt *loops[SCHED_MAX_DEPTH];
  int nl = 0;
  if (!sched_find_under(s, r, loops, &nl))
    return false;
  loom_arith_relax relax[SCHED_MAX_DEPTH];
  for (int k = 0; k < nl; k++) {
    relax[k].var = loops[k]->u.loop.var;
    relax[k].range.min = loops[k]->u.loop.min;
    relax[k].range.extent = loops[k]->u.loop.extent;
  }
  bool found = false;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_arith_block_region(a, ctx, r, buf, is_write, relax, nl,
                                           out, NULL, &found, &d);
  loom_diag_free(&d);
  return st == LOOM_OK && found;
}

/* Whether dimension d of want provably reaches outside have. Both are
 * first clipped to the buffer, as TVM's region cover does: a read past the
 * buffer's edge (a padding block's guarded load) asks for nothing there. */
static bool reaches_outside(const loom_buffer_region *want,
                            const loom_buffer_region *have,
                            const loom_buffer *buf, int d) {
  int64_t wm, we, hm, he, shape;
  if (!loom_ir_is_const_int(want->ranges[d].min, &wm) ||
      !loom_ir_is_const_int(want->ranges[d].extent, &we) ||
      !loom_ir_is_const_int(have->ranges[d].min, &hm) ||
      !loom_ir_is_const_int(have->ranges[d].extent, &he))
    return false;
  int64_t wend = wm + we, hend = hm + he;
  if (d < buf->ndim && loom_ir_is_const_int(buf->shape[d], &shape)) {
    wm = wm < 0 ? 0 : wm;
    hm = hm < 0 ? 0 : hm;
    wend = wend > shape ? shape : wend;
    hend = hend > shape ? shape : hend;
  }
  if (wend <= wm)
    return false; /* all of it past the edge: it asks for nothing */
  return wm < hm || wend > hend;
}

const char *sched_stage_pipeline_problem(const sched_path *p, int si,
                                         char *why, size_t n_why) {
  loom_stmt *body = p->stmts[si]->u.realize.block->body;
  sched_stmt_list blocks = {0};
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  const char *problem = NULL;
  if (!a || !ctx || !sched_collect_blocks(body, &blocks)) {
    problem = "out of memory";
    goto out;
  }
  for (int j = 0; j < blocks.n && !problem; j++) {
    const loom_block *cons = blocks.items[j]->u.realize.block;
    for (int k = 0; k < cons->n_reads && !problem; k++) {
      loom_buffer *buf = cons->reads[k].buffer;
      loom_buffer_region have = {0}, want;
      bool any = false;
      for (int i = 0; i < blocks.n; i++) {
        loom_buffer_region w, u;
        if (i == j ||
            !sched_block_writes(blocks.items[i]->u.realize.block, buf) ||
            !relaxed_region(a, ctx, body, blocks.items[i], buf, true, &w))
          continue;
        loom_diag d;
        loom_diag_init(&d);
        if (!any)
          have = w;
        else if (loom_arith_region_union(a, ctx, &have, &w, &u, &d) == LOOM_OK)
          have = u;
        loom_diag_free(&d);
        any = true;
      }
      if (!any || !relaxed_region(a, ctx, body, blocks.items[j], buf, false,
                                  &want) ||
          want.n_ranges != have.n_ranges)
        continue;
      for (int d = 0; d < want.n_ranges && !problem; d++)
        if (reaches_outside(&want, &have, buf, d)) {
          snprintf(why, n_why,
                   "scope block '%s' is not a stage pipeline: block "
                   "'%s' reads a part of '%s' that no block of the scope "
                   "writes (dimension %d)",
                   sched_stmt_name(p->stmts[si]), cons->name, buf->name, d);
          problem = why;
        }
    }
  }
out:
  free(blocks.items);
  loom_arith_ctx_free(ctx);
  loom_arena_free(a);
  return problem;
}
