/* reorder: permute loops of one chain. The given loops keep the positions
 * they occupy in the chain and take them in the order given; loops of the
 * chain that are not named stay where they are. Legal at once when every
 * block below is a complete or reduction block with affine bindings; for
 * any other block (a scan, an in-place update, a block without iter vars)
 * the dependence analysis decides whether the new order reverses a
 * dependence (legal_deps.c). */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_LOOPS 64

typedef struct reorder_check {
  sched_call *c;
  int top; /* path index of the outermost loop of the chain */
} reorder_check;

static loom_status check_block(const sched_path *q, void *arg) {
  reorder_check *k = arg;
  int ri = q->n - 1;
  const loom_block *b = q->stmts[ri]->u.realize.block;
  if (!sched_is_complete(b) && !sched_is_reduction(q, ri))
    return sched_fail(k->c, "block '%s' is neither a complete block nor a "
                            "reduction block",
                      b->name);
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].kind != LOOM_ITER_SPATIAL &&
        b->iter_vars[i].kind != LOOM_ITER_REDUCE)
      return sched_fail(k->c, "block '%s' has iter '%s' that is neither "
                              "spatial nor reduction",
                        b->name, b->iter_vars[i].var->name);
  const char *why = sched_affine_problem_below(q, ri, k->top);
  if (why)
    return sched_fail(k->c, "block '%s' must have an affine binding, but %s",
                      b->name, why);
  return LOOM_OK;
}

loom_status sched_apply_reorder(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  int n = c->n_inputs;
  if (n < 1 || n > MAX_LOOPS)
    return sched_fail(c, "%d loops given (need 1 to %d)", n, MAX_LOOPS);
  sched_path paths[MAX_LOOPS];
  memset(paths, 0, sizeof paths);
  loom_status st = LOOM_OK;
  int deep = 0;
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    st = sched_input_loop(c, i, &paths[i]);
    if (st == LOOM_OK && paths[i].n > paths[deep].n)
      deep = i;
  }
  loom_stmt *loops[MAX_LOOPS];
  int depth_of[MAX_LOOPS];
  sched_path *dp = &paths[deep];
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    loops[i] = paths[i].stmts[paths[i].n - 1];
    for (int j = 0; j < i; j++)
      if (loops[j] == loops[i])
        st = sched_fail(c, "loop '%s' is given twice", sched_stmt_name(loops[i]));
    if (st != LOOM_OK)
      break;
    if (paths[i].func != dp->func) {
      st = sched_fail(c, "loops '%s' and '%s' are in different functions",
                      sched_stmt_name(loops[i]),
                      sched_stmt_name(dp->stmts[dp->n - 1]));
      break;
    }
    depth_of[i] = paths[i].n - 1;
    if (dp->stmts[depth_of[i]] != loops[i]) {
      int si = sched_scope_index(&paths[i], paths[i].n - 1);
      int sd = sched_scope_index(dp, dp->n - 1);
      bool same_scope = si >= 0 && sd >= 0 &&
                        paths[i].stmts[si] == dp->stmts[sd];
      st = sched_fail(c, same_scope
                             ? "loops '%s' and '%s' are not in one chain: "
                               "neither encloses the other"
                             : "loops '%s' and '%s' are not in one chain: "
                               "they are not under the same block",
                      sched_stmt_name(loops[i]),
                      sched_stmt_name(dp->stmts[dp->n - 1]));
    }
  }
  if (st != LOOM_OK)
    goto out;
  int top = dp->n - 1;
  for (int i = 0; i < n; i++)
    if (depth_of[i] < top)
      top = depth_of[i];
  int bottom = dp->n - 1;
  for (int i = top; i < bottom; i++) {
    const loom_stmt *s = dp->stmts[i];
    if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
      st = sched_fail(c, "the loops are not in one chain: they are not under "
                         "the same block (block '%s' is between them)",
                      sched_stmt_name(s));
      goto out;
    }
    if (s->kind != LOOM_STMT_FOR || s->u.loop.body != dp->stmts[i + 1]) {
      st = sched_fail(c, "the loops are not in one chain: %s between loops "
                         "'%s' and '%s' has more than one child",
                      s->kind == LOOM_STMT_FOR ? "a loop" : loom_stmt_kind_name(s->kind),
                      sched_stmt_name(dp->stmts[top]),
                      sched_stmt_name(dp->stmts[bottom]));
      goto out;
    }
  }
  reorder_check k = {c, top};
  sched_path sub = {0};
  sub.func = dp->func;
  loom_diag property, *d = c->d;
  loom_diag_init(&property);
  c->d = &property;
  for (int i = 0; i < dp->n && st == LOOM_OK; i++)
    if (!sched_path_push(&sub, dp->stmts[i]))
      st = sched_nomem(c);
  if (st == LOOM_OK)
    st = sched_each_child_block(&sub, check_block, &k);
  c->d = d;
  sched_path_free(&sub);
  if (st == LOOM_NOMEM) {
    loom_diag_free(&property);
    st = sched_nomem(c);
    goto out;
  }
  bool needs_deps = st == LOOM_ERROR;
  st = LOOM_OK;

  /* The new chain: positions of the named loops, in depth order, filled by
   * the loops in the order given. */
  int m = bottom - top + 1;
  loom_stmt **chain = malloc((size_t)m * sizeof *chain);
  if (!chain) {
    loom_diag_free(&property);
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < m; i++)
    chain[i] = dp->stmts[top + i];
  int next = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      if (depth_of[j] == top + i) {
        chain[i] = loops[next++];
        break;
      }
  if (needs_deps) {
    sched_deps_answer r =
        sched_deps_permute(c, dp->func, dp->stmts + top, chain, m);
    if (r == SCHED_DEPS_UNKNOWN)
      loom_diag_error(d, property.loc, "%s", property.msg ? property.msg : "?");
    if (r != SCHED_DEPS_LEGAL)
      st = LOOM_ERROR;
  }
  loom_diag_free(&property);
  /* An outer loop's range may not use a loop that moves inside it. */
  for (int i = 0; i < m && st == LOOM_OK; i++)
    for (int j = i + 1; j < m; j++)
      if (sched_expr_uses(chain[i]->u.loop.extent, chain[j]->u.loop.var) ||
          sched_expr_uses(chain[i]->u.loop.min, chain[j]->u.loop.var)) {
        st = sched_fail(c, "the range of loop '%s' depends on loop '%s', "
                           "which would move inside it",
                        sched_stmt_name(chain[i]), sched_stmt_name(chain[j]));
        break;
      }
  loom_stmt *body = dp->stmts[bottom]->u.loop.body;
  for (int i = m - 1; i >= 0 && st == LOOM_OK && body; i--) {
    loom_stmt *l = loom_arena_alloc(a, sizeof *l);
    if (l) {
      *l = *chain[i];
      l->u.loop.body = body;
    }
    body = l;
  }
  free(chain);
  if (st == LOOM_OK) {
    c->mod = body ? sched_replace(a, c->mod, dp, top, body) : NULL;
    if (!c->mod)
      st = sched_nomem(c);
  }
out:
  for (int i = 0; i < n; i++)
    sched_path_free(&paths[i]);
  return st;
}
