/* The pass table and the drivers: one pass, or all of them in order, over
 * every function of a module, each result checked by the verifier. */
#include "normalize/normalize_impl.h"

#include <string.h>

typedef struct pass_info {
  const char *name;
  norm_pass_fn run;
  const char *summary;
} pass_info;

static const pass_info passes[LOOM_NORMALIZE_COUNT_] = {
    [LOOM_NORMALIZE_WRAP_ROOT] = {"wrap-root", norm_wrap_root,
                                  "wrap statements outside any block in blocks"},
    [LOOM_NORMALIZE_LOOP_ZERO] = {"loop-zero", norm_loop_zero,
                                  "make every loop start at 0"},
    [LOOM_NORMALIZE_ITER_VARS] = {"iter-vars", norm_iter_vars,
                                  "give blocks that use loop variables iter vars"},
    [LOOM_NORMALIZE_REGIONS] = {"regions", norm_regions,
                                "infer every block's reads and writes again"},
};

const char *loom_normalize_pass_name(loom_normalize_pass p) {
  return (unsigned)p < LOOM_NORMALIZE_COUNT_ ? passes[p].name : "?";
}

const char *loom_normalize_pass_summary(loom_normalize_pass p) {
  return (unsigned)p < LOOM_NORMALIZE_COUNT_ ? passes[p].summary : "?";
}

int loom_normalize_pass_lookup(const char *name) {
  for (int i = 0; i < LOOM_NORMALIZE_COUNT_; i++)
    if (!strcmp(passes[i].name, name))
      return i;
  return -1;
}

loom_status loom_normalize_run(loom_arena *a, const loom_module *m,
                               loom_normalize_pass p, loom_module **out,
                               loom_diag *d) {
  loom_loc nowhere = {0};
  if ((unsigned)p >= LOOM_NORMALIZE_COUNT_)
    return loom_diag_error(d, nowhere, "no normalization pass %d", (int)p);
  loom_func **funcs = loom_arena_alloc(a, (size_t)(m->n_funcs + 1) * sizeof *funcs);
  if (!funcs)
    return LOOM_NOMEM;
  bool changed = false;
  for (int i = 0; i < m->n_funcs; i++) {
    TRY(passes[p].run(a, m->funcs[i], &funcs[i], d));
    changed |= funcs[i] != m->funcs[i];
  }
  if (!changed) {
    *out = (loom_module *)m;
    return LOOM_OK;
  }
  loom_module *r = loom_arena_dup(a, m, sizeof *m);
  if (!r)
    return LOOM_NOMEM;
  r->funcs = funcs;
  loom_status st = loom_ir_verify_module(r, d);
  if (st != LOOM_OK) {
    if (d->msg) {
      loom_diag_note(d, nowhere, "after normalization pass '%s'", passes[p].name);
    }
    return st;
  }
  *out = r;
  return LOOM_OK;
}

loom_status loom_normalize_module(loom_arena *a, const loom_module *m,
                                  loom_module **out, loom_diag *d) {
  loom_module *cur = (loom_module *)m;
  for (int p = 0; p < LOOM_NORMALIZE_COUNT_; p++)
    TRY(loom_normalize_run(a, cur, (loom_normalize_pass)p, &cur, d));
  *out = cur;
  return LOOM_OK;
}

loom_status loom_normalize_func(loom_arena *a, const loom_func *f,
                                const loom_func **out, loom_diag *d) {
  loom_func *one = (loom_func *)f;
  loom_module m = {.funcs = &one, .n_funcs = 1};
  loom_module *r;
  TRY(loom_normalize_module(a, &m, &r, d));
  *out = r->funcs[0];
  return LOOM_OK;
}
