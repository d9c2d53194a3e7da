/* The lowering pipeline: passes from a module to a module, run in order.
 * Loom's own passes work function by function: allocations placed and
 * compacted while blocks still say what they touch, then blocks and buffers
 * ("flatten"), then vectors ("scalarize"). */
#include "lower/lower_impl.h"

#include <string.h>

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

static loom_status flatten(loom_arena *a, const loom_func *f,
                           bool keep_allocations, loom_stmt **out,
                           loom_diag *d) {
  loom_stmt *body = f->body;
  lower_compactions C = {0};
  loom_status st = LOOM_OK;
  if (!keep_allocations)
    st = plan_buffers(a, f, &body, &C);
  if (st == LOOM_OK)
    st = lower_blocks(a, f, body, &C, out, d);
  lower_compactions_free(&C);
  return st;
}

/* A function pass: the new body of f, or the reason it has none. */
typedef loom_status (*func_pass)(loom_arena *a, const loom_func *f,
                                 const void *ctx, loom_stmt **out,
                                 loom_diag *d);

static loom_status flatten_pass(loom_arena *a, const loom_func *f,
                                const void *ctx, loom_stmt **out,
                                loom_diag *d) {
  return flatten(a, f, ctx != NULL, out, d);
}

static loom_status scalarize_pass(loom_arena *a, const loom_func *f,
                                  const void *ctx, loom_stmt **out,
                                  loom_diag *d) {
  (void)ctx;
  return lower_scalarize(a, f->body, out, d);
}

/* f with body, in a. */
static loom_func *with_body(loom_arena *a, const loom_func *f,
                            loom_stmt *body) {
  loom_func *g = loom_arena_dup(a, f, sizeof *f);
  if (g)
    g->body = body;
  return g;
}

/* Runs a function pass on every function of in. */
static loom_status each_func(loom_arena *a, const loom_module *in,
                             func_pass pass, const void *ctx,
                             loom_module **out, loom_diag *d) {
  loom_module *m = loom_arena_dup(a, in, sizeof *in);
  loom_func **fs = loom_arena_alloc(a, (size_t)(in->n_funcs + 1) * sizeof *fs);
  if (!m || !fs)
    return LOOM_NOMEM;
  for (int i = 0; i < in->n_funcs; i++) {
    loom_stmt *body;
    TRY(pass(a, in->funcs[i], ctx, &body, d));
    if (!(fs[i] = with_body(a, in->funcs[i], body)))
      return LOOM_NOMEM;
  }
  m->funcs = fs;
  *out = m;
  return LOOM_OK;
}

static loom_status run_flatten(const void *ctx, loom_arena *a,
                               const loom_module *in, loom_module **out,
                               loom_diag *d) {
  return each_func(a, in, flatten_pass, ctx, out, d);
}

static loom_status run_scalarize(const void *ctx, loom_arena *a,
                                 const loom_module *in, loom_module **out,
                                 loom_diag *d) {
  return each_func(a, in, scalarize_pass, ctx, out, d);
}

/* flatten-in-place's context is any non-NULL pointer: keep allocations. */
static const bool keep = true;

static const loom_lower_pass passes[] = {
    {"flatten", run_flatten, NULL},
    {"flatten-in-place", run_flatten, &keep},
    {"scalarize", run_scalarize, NULL},
};

const loom_lower_pass *loom_lower_pass_named(const char *name) {
  for (size_t i = 0; i < sizeof passes / sizeof *passes; i++)
    if (!strcmp(passes[i].name, name))
      return &passes[i];
  return NULL;
}

loom_status loom_lower_module(loom_arena *a, const loom_module *m,
                              const loom_lower_pass *const *list, int n,
                              loom_module **out, loom_diag *d) {
  const loom_module *cur = m;
  for (int i = 0; i < n; i++) {
    loom_module *next;
    TRY(list[i]->run(list[i]->ctx, a, cur, &next, d));
    cur = next;
  }
  *out = (loom_module *)cur;
  return LOOM_OK;
}

loom_status loom_lower_func_with(loom_arena *a, const loom_func *f,
                                 const loom_lower_options *opts,
                                 LOOM_GIVE loom_func **out, loom_diag *d) {
  const loom_lower_pass *list[2] = {
      &passes[opts && opts->keep_allocations ? 1 : 0], &passes[2]};
  loom_func *fs[1] = {(loom_func *)f};
  loom_module one = {.funcs = fs, .n_funcs = 1};
  loom_module *lm;
  TRY(loom_lower_module(a, &one, list, 2, &lm, d));
  *out = lm->funcs[0];
  return LOOM_OK;
}

loom_status loom_lower_func(loom_arena *a, const loom_func *f,
                            LOOM_GIVE loom_func **out, loom_diag *d) {
  return loom_lower_func_with(a, f, NULL, out, d);
}
