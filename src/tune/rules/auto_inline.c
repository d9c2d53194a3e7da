/* AutoInline: a pure spatial producer is inlined into its consumers. For
 * CPUs as MetaSchedule's llvm default: into_consumer on, into_producer
 * off, and its checks on functions that are not purely spatial (no
 * if_then_else, no exp, an injective and ordered store). For GPUs as its
 * cuda default: none of those checks, and a block that cannot go into its
 * consumers goes into its producer instead (reverse_compute_inline), so an
 * epilogue joins the kernel before it. */
#include "tune/space_impl.h"

#include <string.h>

static bool calls(const loom_expr *e, int op) {
  if (!e)
    return false;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR: return false;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return calls(e->u.unary.a, op);
  case LOOM_EXPR_SELECT:
    return calls(e->u.select.cond, op) || calls(e->u.select.t, op) ||
           calls(e->u.select.f, op);
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (calls(e->u.load.indices[i], op))
        return true;
    return false;
  case LOOM_EXPR_CALL:
    if ((int)e->u.call.op == op)
      return true;
    for (int i = 0; i < e->u.call.n_args; i++)
      if (calls(e->u.call.args[i], op))
        return true;
    return false;
  case LOOM_EXPR_LET: return calls(e->u.let.value, op) || calls(e->u.let.body, op);
  case LOOM_EXPR_RAMP: return calls(e->u.ramp.base, op) || calls(e->u.ramp.stride, op);
  case LOOM_EXPR_BROADCAST: return calls(e->u.broadcast.value, op);
  default: return calls(e->u.bin.a, op) || calls(e->u.bin.b, op);
  }
}

/* The store writes a distinct iter var at each index, in the iters' order
 * (TVM's injective and ordered checks, in their simplest form). */
static bool is_injective_ordered(const loom_block *b, const loom_stmt *store) {
  int last = -1;
  for (int i = 0; i < store->u.store.n_indices; i++) {
    const loom_expr *e = store->u.store.indices[i];
    if (e->kind != LOOM_EXPR_VAR)
      return false;
    int k = space_iter_index(b, e->u.var);
    if (k <= last)
      return false;
    last = k;
  }
  return true;
}

static bool should_inline(const space_block *sb, bool is_gpu) {
  const loom_block *b = sb->block;
  if (!sb->scope || b->n_writes != 1 || b->init || !space_is_spatial(b))
    return false;
  const loom_stmt *body = b->body;
  if (!body || body->kind != LOOM_STMT_STORE)
    return false;
  const loom_value *rule = loom_ir_attr_get(b->annotations, b->n_annotations,
                                            SPACE_ANN_INLINE_RULE);
  if (rule && rule->kind == LOOM_VALUE_STR && !strcmp(rule->str, "disable"))
    return false;
  const loom_stmt *cons[1];
  if (space_consumers(sb, cons, 1) == 0)
    return false;
  if (b->n_reads == 0) /* a constant tensor: always worth inlining */
    return true;
  if (is_gpu || space_func_is_spatial(sb->f))
    return true;
  int op_exp = loom_op_lookup("exp", 3);
  int op_ite = loom_op_lookup("if_then_else", 12);
  const loom_expr *v = body->u.store.value;
  return !calls(v, op_exp) && !calls(v, op_ite) &&
         is_injective_ordered(b, body);
}

/* A block the GPU rules put into its producer: one write, no init, every
 * iter spatial, a single store, and no `inline_rule = "disable"`; the
 * primitive checks the rest (one producer, complete, read once). */
static bool should_inline_up(const space_block *sb) {
  const loom_block *b = sb->block;
  const loom_value *rule = loom_ir_attr_get(b->annotations, b->n_annotations,
                                            SPACE_ANN_INLINE_RULE);
  return sb->scope && b->n_writes == 1 && !b->init && space_is_spatial(b) &&
         b->body && b->body->kind == LOOM_STMT_STORE &&
         !(rule && rule->kind == LOOM_VALUE_STR && !strcmp(rule->str, "disable"));
}

/* Applies kind (an inline) to rv; a refusal leaves s as it was. */
static loom_status try_inline(loom_sched *s, loom_inst_kind kind,
                              loom_sched_rv rv, bool *done) {
  loom_diag d;
  loom_diag_init(&d);
  loom_tval in = loom_tval_rv(rv);
  loom_status st = space_apply(s, kind, &in, 1, NULL, 0, NULL, NULL, &d);
  loom_diag_free(&d);
  *done = st == LOOM_OK;
  return st == LOOM_NOMEM ? st : LOOM_OK;
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  bool is_gpu = space_is_gpu(x->target), done = false;
  loom_status st = LOOM_OK;
  if (f && space_find_block(f, name, &sb) && should_inline(&sb, is_gpu))
    st = try_inline(s, LOOM_INST_COMPUTE_INLINE, rv, &done);
  if (st == LOOM_OK && !done && is_gpu && (f = space_func(s)) &&
      space_find_block(f, name, &sb) && should_inline_up(&sb))
    st = try_inline(s, LOOM_INST_REVERSE_COMPUTE_INLINE, rv, &done);
  if (st == LOOM_NOMEM) {
    loom_sched_free(s);
    return st;
  }
  return space_list_push(out, s);
}

const space_rule space_rule_auto_inline = {"AutoInline", apply};
