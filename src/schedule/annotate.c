/* annotate and unannotate: set or remove one annotation of a loop or a
 * block. Values are what TVM's annotations hold: strings, numbers, lists
 * and dicts of them. */
#include "schedule/sched_impl.h"

#include <string.h>

static loom_value *to_value(sched_call *c, loom_arena *a, const loom_tval *t) {
  loom_value *v;
  switch (t->kind) {
  case LOOM_TV_STR:
    return loom_ir_value_str(a, t->s);
  case LOOM_TV_INT:
    return loom_ir_value_expr(
        a, loom_ir_int(a, t->i == (int32_t)t->i ? LOOM_INT32 : LOOM_INT64,
                       t->i));
  case LOOM_TV_BOOL:
    return loom_ir_value_expr(a, loom_ir_int(a, LOOM_BOOL, t->i));
  case LOOM_TV_FLOAT:
    return loom_ir_value_expr(a, loom_ir_float(a, LOOM_FLOAT32, t->f));
  case LOOM_TV_RV:
    return loom_ir_value_expr(
        a, loom_ir_int(a, LOOM_INT32, loom_sched_rv_value(c->s, (int)t->i)));
  case LOOM_TV_LIST:
  case LOOM_TV_DICT:
    v = loom_arena_alloc(a, sizeof *v);
    if (!v)
      return NULL;
    v->kind = t->kind == LOOM_TV_LIST ? LOOM_VALUE_LIST : LOOM_VALUE_DICT;
    v->n_items = t->n;
    v->items = loom_arena_alloc(a, (size_t)(t->n ? t->n : 1) * sizeof *v->items);
    if (!v->items)
      return NULL;
    if (t->kind == LOOM_TV_DICT) {
      v->keys = loom_arena_alloc(a, (size_t)(t->n ? t->n : 1) * sizeof *v->keys);
      if (!v->keys)
        return NULL;
    }
    for (int i = 0; i < t->n; i++) {
      if (!(v->items[i] = to_value(c, a, &t->items[i])))
        return NULL;
      if (t->kind == LOOM_TV_DICT && !(v->keys[i] = loom_arena_strdup(a, t->keys[i])))
        return NULL;
    }
    return v;
  default:
    v = loom_arena_alloc(a, sizeof *v);
    if (v)
      v->kind = LOOM_VALUE_NONE;
    return v;
  }
}

/* A copy of attrs with key set to value (value NULL removes it). */
static loom_attr *with_attr(loom_arena *a, const loom_attr *attrs, int n,
                            const char *key, loom_value *value, int *n_out) {
  loom_attr *out = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *out);
  if (!out)
    return NULL;
  int k = 0;
  bool replaced = false;
  for (int i = 0; i < n; i++) {
    if (!strcmp(attrs[i].key, key)) {
      if (value && !replaced)
        out[k++] = (loom_attr){attrs[i].key, value};
      replaced = true;
      continue;
    }
    out[k++] = attrs[i];
  }
  if (value && !replaced) {
    out[k].key = loom_arena_strdup(a, key);
    out[k++].value = value;
    if (!out[k - 1].key)
      return NULL;
  }
  *n_out = k;
  return out;
}

static loom_status change(sched_call *c, loom_value *value) {
  loom_arena *a = sched_arena(c->s);
  if (c->n_attrs < 1 || c->attrs[0].kind != LOOM_TV_STR)
    return sched_fail(c, "the annotation key must be a string");
  const char *key = c->attrs[0].s;
  sched_path p = {0};
  bool is_loop;
  TRY(sched_input_target(c, 0, &p, &is_loop));
  loom_stmt *s = p.stmts[p.n - 1];
  loom_status st = LOOM_OK;
  const loom_attr *attrs = is_loop ? s->u.loop.annotations
                                   : s->u.realize.block->annotations;
  int n = is_loop ? s->u.loop.n_annotations : s->u.realize.block->n_annotations;
  if (!value && !loom_ir_attr_get(attrs, n, key)) {
    st = sched_fail(c, "%s '%s' has no annotation '%s'",
                    is_loop ? "loop" : "block", sched_stmt_name(s), key);
    goto out;
  }
  int n_new = 0;
  loom_attr *na = with_attr(a, attrs, n, key, value, &n_new);
  loom_stmt *ns = loom_arena_alloc(a, sizeof *ns);
  loom_block *nb = is_loop ? NULL : loom_arena_alloc(a, sizeof *nb);
  if (!na || !ns || (!is_loop && !nb)) {
    st = sched_nomem(c);
    goto out;
  }
  *ns = *s;
  if (is_loop) {
    ns->u.loop.annotations = n_new ? na : NULL;
    ns->u.loop.n_annotations = n_new;
  } else {
    *nb = *s->u.realize.block;
    nb->annotations = n_new ? na : NULL;
    nb->n_annotations = n_new;
    ns->u.realize.block = nb;
  }
  c->mod = sched_replace(a, c->mod, &p, p.n - 1, ns);
  if (!c->mod)
    st = sched_nomem(c);
out:
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_annotate(sched_call *c) {
  if (c->n_inputs < 2)
    return sched_fail(c, "missing the annotation value");
  loom_value *v = to_value(c, sched_arena(c->s), &c->inputs[1]);
  if (!v)
    return sched_nomem(c);
  return change(c, v);
}

loom_status sched_apply_unannotate(sched_call *c) { return change(c, NULL); }
