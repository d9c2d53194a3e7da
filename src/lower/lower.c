/* The lowering pipeline: allocations placed and compacted while blocks
 * still say what they touch, then blocks and buffers, then vectors. */
#include "lower/lower_impl.h"

/* Places and compacts the allocations of f's body into *body and C. */
static loom_status plan_buffers(loom_arena *a, const loom_func *f,
                                loom_stmt **body, lower_compactions *C) {
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!ctx)
    return LOOM_NOMEM;
  loom_status st = lower_bind_ranges(ctx, f->body, 0);
  if (st == LOOM_OK)
    st = lower_place(a, ctx, body);
  if (st == LOOM_OK)
    st = lower_compact(a, ctx, *body, C);
  loom_arith_ctx_free(ctx);
  return st;
}

loom_status loom_lower_func_with(loom_arena *a, const loom_func *f,
                                 const loom_lower_options *opts,
                                 LOOM_GIVE loom_func **out, loom_diag *d) {
  loom_stmt *body = f->body;
  lower_compactions C = {0};
  loom_status st = LOOM_OK;
  if (!opts || !opts->keep_allocations)
    st = plan_buffers(a, f, &body, &C);
  if (st == LOOM_OK)
    st = lower_blocks(a, f, body, &C, &body, d);
  lower_compactions_free(&C);
  TRY(st);
  TRY(lower_scalarize(a, body, &body, d));
  loom_func *lf = loom_arena_dup(a, f, sizeof *f);
  if (!lf)
    return LOOM_NOMEM;
  lf->body = body;
  *out = lf;
  return LOOM_OK;
}

loom_status loom_lower_func(loom_arena *a, const loom_func *f,
                            LOOM_GIVE loom_func **out, loom_diag *d) {
  return loom_lower_func_with(a, f, NULL, out, d);
}
