/* The dlight pass over one function: normalized, inlined, then offered the
 * rules in order; the first that takes it schedules it. */
#include "tune/dlight/dlight_impl.h"

/* As dlight orders its rules: the specific ones first, Fallback last. */
static const loom_dlight_rule *const default_rules[] = {
    &dlight_rule_matmul,
    &dlight_rule_general_reduction,
    &dlight_rule_reduction,
    &dlight_rule_fallback,
};

const loom_dlight_rule *const *loom_tune_dlight_rules(int *n) {
  *n = (int)(sizeof default_rules / sizeof *default_rules);
  return default_rules;
}

/* A module of the one function f, in a. */
static loom_module *module_of(loom_arena *a, const loom_func *f) {
  loom_module *m = loom_ir_module(a);
  if (!m || !(m->funcs = loom_arena_alloc(a, sizeof *m->funcs)))
    return NULL;
  m->funcs[0] = (loom_func *)f;
  m->n_funcs = 1;
  return m;
}

/* Matmul on *s prepared as a product (dlight_gemm_prepare), kept when it
 * is one and Matmul takes it. */
static loom_status product_form(loom_sched **s, const loom_target *t, bool *is_taken,
                                loom_buf *explain) {
  *is_taken = false;
  loom_sched *c = loom_sched_copy(*s);
  if (!c)
    return LOOM_NOMEM;
  loom_diag why;
  loom_diag_init(&why);
  bool is_product = false;
  loom_status st = dlight_gemm_prepare(&c, &is_product, &why);
  loom_diag_free(&why);
  loom_diag_init(&why);
  if (st == LOOM_OK && is_product)
    st = dlight_rule_matmul.apply(&c, t, &why);
  if (st == LOOM_ERROR && explain)
    loom_buf_printf(explain, "Matmul: does not apply to it as a product: %s\n",
                    why.msg ? why.msg : "no reason given");
  if (st == LOOM_OK && is_product) {
    if (explain)
      loom_buf_printf(explain, "Matmul: schedules it as a product (its operands "
                               "reindexed into A[i, k], B[j, k] and C[i, j])\n");
    loom_sched_free(*s);
    *s = c;
    *is_taken = true;
  } else {
    loom_sched_free(c);
  }
  loom_diag_free(&why);
  return st == LOOM_ERROR ? LOOM_OK : st;
}

loom_status dlight_schedule(loom_sched **s, const loom_target *t,
                            const loom_dlight_rule *const *rules, int n_rules,
                            const char **rule, loom_buf *explain) {
  *rule = NULL;
  for (int i = 0; i < n_rules; i++)
    if (rules[i] == &dlight_rule_matmul) {
      bool is_taken;
      TRY(product_form(s, t, &is_taken, explain));
      if (is_taken) {
        *rule = dlight_rule_matmul.name;
        return LOOM_OK;
      }
    }
  TRY(dlight_inline_all(s));
  for (int i = 0; i < n_rules; i++) {
    loom_sched *c = loom_sched_copy(*s);
    if (!c)
      return LOOM_NOMEM;
    loom_diag why;
    loom_diag_init(&why);
    loom_status st = rules[i]->apply(&c, t, &why);
    if (st == LOOM_OK) {
      if (explain)
        loom_buf_printf(explain, "%s: schedules it\n", rules[i]->name);
      *rule = rules[i]->name;
      loom_sched_free(*s);
      *s = c;
    } else if (explain && st == LOOM_ERROR) {
      loom_buf_printf(explain, "%s: does not apply: %s\n", rules[i]->name,
                      why.msg ? why.msg : "no reason given");
    }
    loom_diag_free(&why);
    if (st != LOOM_OK)
      loom_sched_free(c);
    if (st != LOOM_ERROR)
      return st;
  }
  if (explain)
    loom_buf_printf(explain, "no rule takes it: left as it is\n");
  return LOOM_OK;
}

/* The blocks with a claimed loop (bound, or a library's) anywhere above
 * them. */
typedef struct bound_blocks {
  const char *names[SPACE_MAX_BLOCKS];
  int n, depth;
} bound_blocks;

static loom_visit enter(void *ctx, loom_stmt *s) {
  bound_blocks *B = ctx;
  B->depth += dlight_is_claimed(s);
  if (s->kind == LOOM_STMT_BLOCK_REALIZE && B->depth > 0 && B->n < SPACE_MAX_BLOCKS)
    B->names[B->n++] = s->u.realize.block->name;
  return LOOM_VISIT_GO;
}

static loom_visit leave(void *ctx, loom_stmt *s) {
  ((bound_blocks *)ctx)->depth -= dlight_is_claimed(s);
  return LOOM_VISIT_GO;
}

/* A function that binds threads in part, or gives nests to a library: its
 * bound and given nests stay as they are, and the other blocks get
 * Fallback's binding, which would otherwise run in a kernel of one thread
 * (a 2048-cubed product in one thread runs for minutes). None of them:
 * left as it is. */
static loom_status bind_the_rest(loom_arena *a, const loom_func *f, const loom_target *t,
                                 loom_sched **sched, const loom_func **out,
                                 const char **rule, loom_buf *explain) {
  loom_module *m = module_of(a, f);
  loom_sched *s = m ? loom_sched_new(m, 0) : NULL;
  if (!s)
    return LOOM_NOMEM;
  bound_blocks B = {.n = 0};
  loom_ir_visitor v = {.stmt_pre = enter, .stmt_post = leave, .ctx = &B};
  loom_ir_visit_stmt(&v, f->body);
  int n_bound;
  loom_status st = dlight_bind_others(&s, t, B.names, B.n, &n_bound);
  if (st != LOOM_OK || n_bound == 0) {
    loom_sched_free(s);
    if (explain && st == LOOM_OK)
      loom_buf_printf(explain, "scheduled already (it binds threads): left as it is\n");
    return st;
  }
  if (explain)
    loom_buf_printf(explain, "binds threads in part: Fallback binds the %d block%s "
                             "under no bound loop\n", n_bound, n_bound == 1 ? "" : "s");
  if (rule)
    *rule = dlight_rule_fallback.name;
  *sched = s;
  *out = loom_sched_module(s)->funcs[0];
  return LOOM_OK;
}

loom_status loom_tune_dlight(loom_arena *a, const loom_func *f, const loom_target *t,
                             const loom_dlight_rule *const *rules, int n_rules,
                             loom_sched **sched, const loom_func **out,
                             const char **rule, loom_buf *explain, loom_diag *d) {
  (void)d;
  *sched = NULL;
  *out = f;
  if (rule)
    *rule = NULL;
  if (!rules)
    rules = loom_tune_dlight_rules(&n_rules);
  if (loom_ir_attr_get(f->attrs, f->n_attrs, "tir.is_scheduled")) {
    if (explain)
      loom_buf_printf(explain, "scheduled already (marked tir.is_scheduled): left as it is\n");
    return LOOM_OK;
  }
  if (dlight_binds_threads(f->body))
    return bind_the_rest(a, f, t, sched, out, rule, explain);
  const loom_func *nf = loom_tune_normalized(a, f);
  loom_module *m = nf ? module_of(a, nf) : NULL;
  loom_sched *s = m ? loom_sched_new(m, 0) : NULL;
  if (!s)
    return LOOM_NOMEM;
  const char *taken;
  loom_status st = dlight_schedule(&s, t, rules, n_rules, &taken, explain);
  if (st != LOOM_OK || !taken) {
    loom_sched_free(s);
    return st;
  }
  if (rule)
    *rule = taken;
  *sched = s;
  *out = loom_sched_module(s)->funcs[0];
  return LOOM_OK;
}
