/* The lowering pipeline: blocks and buffers first, then vectors. */
#include "lower/lower_impl.h"

loom_status loom_lower_func(loom_arena *a, const loom_func *f,
                            LOOM_GIVE loom_func **out, loom_diag *d) {
  loom_stmt *body;
  TRY(lower_blocks(a, f, &body, d));
  TRY(lower_scalarize(a, body, &body, d));
  loom_func *lf = loom_arena_dup(a, f, sizeof *f);
  if (!lf)
    return LOOM_NOMEM;
  lf->body = body;
  *out = lf;
  return LOOM_OK;
}
