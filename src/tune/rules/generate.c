/* The design space: MetaSchedule's PostOrderApply over the target's rule
 * list ("llvm" or "cuda"), after the caller's rules. Each rule in turn visits every block of
 * every schedule made so far, root first and consumers before producers,
 * and may branch a schedule into several; the traces of the schedules left
 * at the end are the spaces. */
#include "tune/space_impl.h"

#include <stdlib.h>
#include <string.h>

/* MetaSchedule's DefaultLLVM order. ApplyCustomRule is the caller's rules,
 * run before these (apply_custom); InlineConstantScalars has no
 * counterpart (constant scalars are inlined by AutoInline). */
static const space_rule *const llvm_rules[] = {
    &space_rule_auto_inline,
    &space_rule_add_rfactor,
    &space_rule_auto_tensorize, /* only with the target's -tensorize=1 */
    &space_rule_multi_level_tiling,
    &space_rule_parallel_vectorize_unroll,
    &space_rule_random_compute_location,
};

/* MetaSchedule's DefaultCUDA order (InlineConstantScalars, again, is
 * AutoInline's; AutoInline reads the target for its GPU settings). */
static const space_rule *const cuda_rules[] = {
    &space_rule_multi_level_tiling_gpu,
    &space_rule_auto_inline,
    &space_rule_cross_thread_reduction,
    &space_rule_parallel_vectorize_unroll,
    &space_rule_auto_bind,
};

#define COUNT(a) (int)(sizeof a / sizeof *a)

/* Branching multiplies: a function with n tiled blocks has 3^n spaces.
 * Past this many, the later branches are dropped (the first ones, which
 * the rules order from the plainest, are kept). */
#define MAX_SPACES 243

/* The blocks the caller's rules claimed, by name. */
typedef struct claims {
  const char *names[SPACE_MAX_BLOCKS];
  int n;
} claims;

static bool is_claimed(const claims *c, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->names[i], name))
      return true;
  return false;
}

/* Whether the rules may touch the block: it still exists and no user has
 * claimed it, by a rule of theirs or with the `schedule_rule` annotation. */
static bool is_open(const loom_sched *s, const char *name, const claims *c) {
  const loom_func *f = space_func(s);
  space_block sb;
  if (is_claimed(c, name) || !f || !space_find_block(f, name, &sb))
    return false;
  return !space_has_ann(sb.block->annotations, sb.block->n_annotations,
                        SPACE_ANN_USER_RULE);
}

/* A caller's rule for a block takes it by name or by the value of its
 * `schedule_rule` annotation. */
static bool takes(const loom_space_rule *r, const loom_sched *s,
                  const char *name) {
  const loom_func *f = space_func(s);
  space_block sb;
  if (!f || !space_find_block(f, name, &sb))
    return false;
  if (!strcmp(r->block, name))
    return true;
  const loom_value *v = loom_ir_attr_get(
      sb.block->annotations, sb.block->n_annotations, SPACE_ANN_USER_RULE);
  return v && v->kind == LOOM_VALUE_STR && !strcmp(v->str, r->block);
}

/* A caller's rule, on every schedule so far, each block in turn; a schedule
 * it refuses for a block stays as it was. */
static loom_status apply_custom(const loom_space_rule *r, loom_loc at,
                                const char *const *names,
                                const loom_sched_rv *rvs, int n_names,
                                space_list *states, claims *c, loom_diag *d) {
  bool any = false;
  for (int b = n_names - 1; b >= 0; b--) {
    bool hit = false;
    for (int i = 0; i < states->n; i++) {
      loom_sched *s = states->items[i];
      if (r->block ? is_claimed(c, names[b]) || !takes(r, s, names[b])
                   : !is_open(s, names[b], c))
        continue;
      loom_sched *t = loom_sched_copy(s);
      if (!t)
        return LOOM_NOMEM;
      loom_diag mine;
      loom_diag_init(&mine);
      loom_status st = r->apply(r->ctx, t, names[b], rvs[b], r->block ? d : &mine);
      loom_diag_free(&mine);
      if (st == LOOM_OK) {
        loom_sched_free(s);
        states->items[i] = t;
        hit = true;
        continue;
      }
      loom_sched_free(t);
      if (st == LOOM_NOMEM || r->block) {
        if (st != LOOM_NOMEM && !d->has_error)
          loom_diag_error(d, (loom_loc){0}, "the rule refused it");
        if (st != LOOM_NOMEM)
          loom_diag_note(d, (loom_loc){0}, "in the rule given for block '%s'",
                         names[b]);
        return st;
      }
    }
    if (hit && r->block && c->n < SPACE_MAX_BLOCKS)
      c->names[c->n++] = names[b];
    any |= hit;
  }
  if (r->block && !any)
    return loom_diag_error(d, at,
                           "no block is named '%s' or annotated "
                           "schedule_rule=\"%s\" for the rule given for it",
                           r->block, r->block);
  return LOOM_OK;
}

static loom_status apply_rule(const space_ctx *x, const space_rule *r,
                              const char *const *names,
                              const loom_sched_rv *rvs, int n_names,
                              const claims *c, space_list *states) {
  for (int b = n_names - 1; b >= 0; b--) {
    space_list next = {0};
    loom_status st = LOOM_OK;
    for (int i = 0; i < states->n; i++) {
      loom_sched *s = states->items[i];
      states->items[i] = NULL;
      if (st != LOOM_OK)
        loom_sched_free(s);
      else if (!is_open(s, names[b], c))
        st = space_list_push(&next, s);
      else
        st = r->apply(x, s, names[b], rvs[b], &next);
    }
    space_list_free(states);
    while (next.n > MAX_SPACES)
      loom_sched_free(next.items[--next.n]);
    *states = next;
    if (st != LOOM_OK)
      return st;
  }
  return LOOM_OK;
}

/* Copies a schedule's trace, simplified, into arena a. */
static loom_status keep_trace(loom_sched *s, loom_arena *a, loom_trace *out) {
  loom_trace t = loom_sched_trace(s), simple;
  TRY(loom_trace_simplify(&t, a, &simple));
  return space_trace_copy(&simple, a, out);
}

bool space_is_gpu(const loom_target *t) {
  return t && t->kind == LOOM_TARGET_CUDA;
}

loom_status loom_space_apply_script(void *ctx, loom_sched *s,
                                    const char *block, loom_sched_rv rv,
                                    loom_diag *d) {
  (void)block;
  (void)rv;
  const loom_space_script *sc = ctx;
  return loom_sched_run_script(s, sc->text, sc->len, sc->file, d);
}

loom_status loom_space_generate(const loom_module *m, const loom_target *t,
                                loom_arena *a, loom_trace **spaces,
                                int *n_spaces, loom_diag *d) {
  return loom_space_generate_with(m, t, NULL, 0, a, spaces, n_spaces, d);
}

loom_status loom_space_generate_with(const loom_module *m,
                                     const loom_target *t,
                                     const loom_space_rule *rules, int n_rules,
                                     loom_arena *a, loom_trace **spaces,
                                     int *n_spaces, loom_diag *d) {
  *spaces = NULL;
  *n_spaces = 0;
  loom_loc nowhere = {0};
  if (t && t->kind != LOOM_TARGET_CPU && !space_is_gpu(t))
    return loom_diag_error(d, nowhere,
                           "the design space rules are for cpu and cuda "
                           "targets, not %s (give the space as a schedule "
                           "script)",
                           loom_target_kind_name(t->kind));
  if (!m || m->n_funcs != 1)
    return loom_diag_error(d, nowhere,
                           "the design space needs a module of one function, "
                           "not %d",
                           m ? m->n_funcs : 0);
  const loom_func *f = m->funcs[0];
  const char *names[SPACE_MAX_BLOCKS];
  int n_names = space_block_names(f, names, SPACE_MAX_BLOCKS);
  if (n_names == SPACE_MAX_BLOCKS)
    return loom_diag_error(d, f->loc, "too many blocks (limit is %d)",
                           SPACE_MAX_BLOCKS - 1);
  space_ctx x = {.target = t, .func = f->name};
  space_list states = {0};
  loom_sched_rv rvs[SPACE_MAX_BLOCKS];
  loom_status st = space_list_push(&states, loom_sched_new(m, 0));
  for (int i = 0; st == LOOM_OK && i < n_names; i++)
    st = space_get_block(states.items[0], f->name, names[i], &rvs[i], d);
  claims c = {.n = 0};
  for (int r = 0; st == LOOM_OK && r < n_rules; r++)
    st = apply_custom(&rules[r], f->loc, names, rvs, n_names, &states, &c, d);
  const space_rule *const *list = space_is_gpu(t) ? cuda_rules : llvm_rules;
  int n_list = space_is_gpu(t) ? COUNT(cuda_rules) : COUNT(llvm_rules);
  for (int r = 0; st == LOOM_OK && r < n_list; r++)
    st = apply_rule(&x, list[r], names, rvs, n_names, &c, &states);
  loom_trace *out = NULL;
  if (st == LOOM_OK) {
    out = loom_arena_alloc(a, (size_t)(states.n ? states.n : 1) * sizeof *out);
    if (!out)
      st = LOOM_NOMEM;
  }
  for (int i = 0; st == LOOM_OK && i < states.n; i++)
    st = keep_trace(states.items[i], a, &out[i]);
  if (st == LOOM_OK) {
    *spaces = out;
    *n_spaces = states.n;
  } else if (st == LOOM_NOMEM) {
    loom_diag_error(d, nowhere, "out of memory while generating the design "
                                "space");
  }
  space_list_free(&states);
  return st;
}
