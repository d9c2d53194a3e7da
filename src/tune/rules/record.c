/* Small helpers the rules and postprocessors use to record instructions,
 * and the list of schedules a rule hands on. */
#include "tune/space_impl.h"

#include <stdlib.h>

loom_status space_list_push(space_list *l, loom_sched *s) {
  if (!s)
    return LOOM_NOMEM;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    loom_sched **p = realloc(l->items, (size_t)cap * sizeof *p);
    if (!p) {
      loom_sched_free(s);
      return LOOM_NOMEM;
    }
    l->items = p;
    l->cap = cap;
  }
  l->items[l->n++] = s;
  return LOOM_OK;
}

void space_list_free(space_list *l) {
  for (int i = 0; i < l->n; i++)
    loom_sched_free(l->items[i]);
  free(l->items);
  *l = (space_list){0};
}

static const loom_loc nowhere = {0};

loom_status space_apply(loom_sched *s, loom_inst_kind kind,
                        const loom_tval *in, int n_in, const loom_tval *attrs,
                        int n_attrs, const loom_sched_rv **outs, int *n_outs,
                        loom_diag *d) {
  return loom_sched_apply(s, kind, in, n_in, attrs, n_attrs, loom_tval_none(),
                          nowhere, outs, n_outs, d);
}

loom_status space_get_block(loom_sched *s, const char *func, const char *name,
                            loom_sched_rv *out, loom_diag *d) {
  return loom_sched_get_block(s, name, func, out, d);
}

loom_status space_annotate(loom_sched *s, loom_sched_rv rv, const char *key,
                           loom_tval value, loom_diag *d) {
  loom_tval in[2] = {loom_tval_rv(rv), value};
  loom_tval attr = loom_tval_str(key);
  return space_apply(s, LOOM_INST_ANNOTATE, in, 2, &attr, 1, NULL, NULL, d);
}

loom_status space_unannotate(loom_sched *s, loom_sched_rv rv, const char *key,
                             loom_diag *d) {
  loom_tval in = loom_tval_rv(rv);
  loom_tval attr = loom_tval_str(key);
  return space_apply(s, LOOM_INST_UNANNOTATE, &in, 1, &attr, 1, NULL, NULL, d);
}

const loom_func *space_func(const loom_sched *s) {
  const loom_module *m = loom_sched_module(s);
  return m && m->n_funcs > 0 ? m->funcs[0] : NULL;
}

static bool copy_tval(loom_arena *a, const loom_tval *v, loom_tval *out) {
  *out = *v;
  if (v->s && !(out->s = loom_arena_strdup(a, v->s)))
    return false;
  if (v->kind != LOOM_TV_LIST && v->kind != LOOM_TV_DICT)
    return true;
  out->items = loom_arena_alloc(a, (size_t)(v->n ? v->n : 1) * sizeof *out->items);
  if (!out->items)
    return false;
  for (int i = 0; i < v->n; i++)
    if (!copy_tval(a, &v->items[i], &out->items[i]))
      return false;
  if (v->kind == LOOM_TV_DICT) {
    out->keys = loom_arena_alloc(a, (size_t)(v->n ? v->n : 1) * sizeof *out->keys);
    if (!out->keys)
      return false;
    for (int i = 0; i < v->n; i++)
      if (!(out->keys[i] = loom_arena_strdup(a, v->keys[i])))
        return false;
  }
  return true;
}

static loom_tval *copy_tvals(loom_arena *a, const loom_tval *v, int n) {
  loom_tval *out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  for (int i = 0; out && i < n; i++)
    if (!copy_tval(a, &v[i], &out[i]))
      return NULL;
  return out;
}

loom_status space_trace_copy(const loom_trace *t, loom_arena *a,
                             loom_trace *out) {
  loom_inst **insts =
      loom_arena_alloc(a, (size_t)(t->n_insts ? t->n_insts : 1) * sizeof *insts);
  if (!insts)
    return LOOM_NOMEM;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *in = t->insts[i];
    loom_inst *c = loom_arena_alloc(a, sizeof *c);
    if (!c)
      return LOOM_NOMEM;
    *c = *in;
    c->inputs = copy_tvals(a, in->inputs, in->n_inputs);
    c->attrs = copy_tvals(a, in->attrs, in->n_attrs);
    c->outputs = loom_arena_dup(a, in->outputs,
                                (size_t)in->n_outputs * sizeof *in->outputs);
    if (!c->inputs || !c->attrs || (in->n_outputs && !c->outputs) ||
        !copy_tval(a, &in->decision, &c->decision))
      return LOOM_NOMEM;
    c->loc = (loom_loc){0};
    insts[i] = c;
  }
  *out = (loom_trace){insts, t->n_insts, t->n_rvs};
  return LOOM_OK;
}

loom_status space_try(const space_ctx *x, loom_sched *s, loom_sched_rv block,
                      space_step step, space_list *out) {
  loom_sched *t = loom_sched_copy(s);
  if (!t) {
    loom_sched_free(s);
    return LOOM_NOMEM;
  }
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = step(x, t, block, &d);
  loom_diag_free(&d);
  if (st == LOOM_NOMEM) {
    loom_sched_free(t);
    loom_sched_free(s);
    return st;
  }
  if (st != LOOM_OK) {
    loom_sched_free(t);
    return space_list_push(out, s);
  }
  loom_sched_free(s);
  return space_list_push(out, t);
}

loom_status space_write_cache_consumer(loom_sched *t, const space_block *sb,
                                       loom_sched_rv block, loom_sched_rv *out,
                                       loom_diag *d) {
  *out = -1;
  const loom_stmt *cons[2];
  if (space_consumers(sb, cons, 2) != 1 ||
      !space_is_write_cache(cons[0]->u.realize.block))
    return LOOM_OK;
  loom_tval in = loom_tval_rv(block);
  const loom_sched_rv *c;
  int n;
  TRY(space_apply(t, LOOM_INST_GET_CONSUMERS, &in, 1, NULL, 0, &c, &n, d));
  if (n == 1)
    *out = c[0];
  return LOOM_OK;
}

loom_status space_reverse_compute_at(loom_sched *s, loom_sched_rv block,
                                     loom_sched_rv loop, loom_diag *d) {
  loom_tval at[2] = {loom_tval_rv(block), loom_tval_rv(loop)};
  loom_tval attrs[2] = {loom_tval_bool(true), loom_tval_int(-1)};
  return space_apply(s, LOOM_INST_REVERSE_COMPUTE_AT, at, 2, attrs, 2, NULL,
                     NULL, d);
}

loom_status space_sample_uniform(loom_sched *s, const int64_t *values, int n,
                                 loom_sched_rv *out, loom_diag *d) {
  loom_tval cand[SPACE_MAX_CHOICES], prob[SPACE_MAX_CHOICES];
  if (n < 1 || n > SPACE_MAX_CHOICES)
    return loom_diag_error(d, (loom_loc){0}, "%d choices to sample (1 to %d)", n,
                           SPACE_MAX_CHOICES);
  for (int i = 0; i < n; i++) {
    cand[i] = loom_tval_int(values[i]);
    prob[i] = (loom_tval){.kind = LOOM_TV_FLOAT, .f = 1.0 / n};
  }
  loom_tval attrs[2] = {{.kind = LOOM_TV_LIST, .n = n, .items = cand},
                        {.kind = LOOM_TV_LIST, .n = n, .items = prob}};
  const loom_sched_rv *v;
  TRY(space_apply(s, LOOM_INST_SAMPLE_CATEGORICAL, NULL, 0, attrs, 2, &v, NULL, d));
  *out = v[0];
  return LOOM_OK;
}
