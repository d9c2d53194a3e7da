/* Fallback, the last rule: every block whose loops hold it alone gets its
 * spatial loops fused, split by the target's threads per block and bound to
 * blockIdx.x and threadIdx.x. A reduction then runs serially in each
 * thread: correct, not fast. A block the steps do not fit (loops shared
 * with other blocks, conditions in its nest, a step refused) is left as it
 * is, and the GPU lowering runs it in a kernel of one thread. */
#include "tune/dlight/dlight_impl.h"

#include <stdlib.h>
#include <string.h>

static loom_visit find_bound(void *ctx, loom_stmt *s) {
  (void)ctx;
  return s->kind == LOOM_STMT_FOR && s->u.loop.kind == LOOM_FOR_THREAD_BINDING
             ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

bool dlight_binds_threads(const loom_stmt *s) {
  loom_ir_visitor v = {.stmt_pre = find_bound};
  return !loom_ir_visit_stmt(&v, (loom_stmt *)s);
}

int dlight_block_names(loom_sched *s, char **out, int max) {
  const char *names[SPACE_MAX_BLOCKS];
  int n = space_block_names(space_func(s), names, max < SPACE_MAX_BLOCKS ? max : SPACE_MAX_BLOCKS);
  for (int i = 0; i < n; i++)
    if (!(out[i] = strdup(names[i]))) {
      dlight_names_free(out, i);
      return -1;
    }
  return n;
}

void dlight_names_free(char **names, int n) {
  for (int i = 0; i < n; i++)
    free(names[i]);
}

static loom_visit count_block(void *ctx, loom_stmt *s) {
  *(int *)ctx += s->kind == LOOM_STMT_BLOCK_REALIZE;
  return s->kind == LOOM_STMT_BLOCK_REALIZE ? LOOM_VISIT_SKIP : LOOM_VISIT_GO;
}

static loom_status not_fit(loom_diag *why, const char *name, const char *what) {
  return loom_diag_error(why, (loom_loc){0}, "block '%s' %s", name, what);
}

loom_status dlight_bind_spatial(loom_sched *s, const char *name, const loom_target *t,
                                loom_diag *why) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!space_find_block(f, name, &sb) || !sb.scope ||
      sb.scope->u.realize.block->body == NULL)
    return not_fit(why, name, "is not a block under the function's root");
  if (sb.n_loops == 0)
    return not_fit(why, name, "has no loop");
  if (sb.is_nested_oddly)
    return not_fit(why, name, "sits under a condition or a let between its loops");
  int n_blocks = 0;
  loom_ir_visitor v = {.stmt_pre = count_block, .ctx = &n_blocks};
  loom_ir_visit_stmt(&v, (loom_stmt *)sb.loops[0]);
  if (n_blocks != 1)
    return not_fit(why, name, "shares its loops with other blocks");
  if (dlight_binds_threads(sb.loops[0]))
    return not_fit(why, name, "binds threads already");
  dlight_nest nest;
  dlight_nest_of(&sb, &nest);
  if (nest.n_spatial == 0)
    return not_fit(why, name, "has no spatial loop to spread over threads");
  loom_sched_rv ordered[SPACE_MAX_LOOPS];
  TRY(dlight_nest_reorder(s, name, &nest, ordered, why));
  loom_sched_rv fused = ordered[0];
  if (nest.n_spatial > 1)
    TRY(loom_sched_fuse(s, ordered, nest.n_spatial, true, &fused, why));
  int64_t threads = t->gpu.max_threads_per_block > 0 ? t->gpu.max_threads_per_block : 1024;
  if (nest.spatial_extent >= 0 && nest.spatial_extent < threads)
    threads = nest.spatial_extent > 0 ? nest.spatial_extent : 1;
  loom_tval factors[2] = {loom_tval_none(), loom_tval_int(threads)};
  const loom_sched_rv *halves;
  TRY(loom_sched_split(s, fused, factors, 2, true, false, &halves, why));
  loom_sched_rv outer = halves[0], inner = halves[1];
  TRY(loom_sched_bind(s, outer, "blockIdx.x", why));
  return loom_sched_bind(s, inner, "threadIdx.x", why);
}

loom_status dlight_bind_others(loom_sched **s, const loom_target *t,
                               const char *const *skip, int n_skip, int *n_bound) {
  char *names[SPACE_MAX_BLOCKS];
  int n = dlight_block_names(*s, names, SPACE_MAX_BLOCKS);
  if (n < 0)
    return LOOM_NOMEM;
  *n_bound = 0;
  loom_status st = LOOM_OK;
  for (int i = 0; i < n && st != LOOM_NOMEM; i++) {
    bool is_skipped = false;
    for (int k = 0; k < n_skip; k++)
      is_skipped |= !strcmp(names[i], skip[k]);
    if (is_skipped)
      continue;
    loom_sched *c = loom_sched_copy(*s);
    if (!c) {
      st = LOOM_NOMEM;
      break;
    }
    loom_diag why;
    loom_diag_init(&why);
    st = dlight_bind_spatial(c, names[i], t, &why);
    loom_diag_free(&why);
    loom_sched_free(st == LOOM_OK ? *s : c);
    if (st == LOOM_OK) {
      *s = c;
      (*n_bound)++;
    }
  }
  dlight_names_free(names, n);
  return st == LOOM_NOMEM ? st : LOOM_OK;
}

static loom_status fallback(loom_sched **s, const loom_target *t, loom_diag *why) {
  int n_bound;
  TRY(dlight_bind_others(s, t, NULL, 0, &n_bound));
  if (n_bound > 0)
    return LOOM_OK;
  return loom_diag_error(why, (loom_loc){0},
                         "no block has loops of its own with a spatial one to spread "
                         "over threads");
}

const loom_dlight_rule dlight_rule_fallback = {"Fallback", fallback};
