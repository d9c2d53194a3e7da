/* merge: loops at the same depth below a common sequence, each heading a
 * chain of only-child loops from that sequence down, with equal extents
 * level by level, become one nest of merged loops `<name>_m` whose
 * innermost body runs the given loops' bodies one after another. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_MERGE 16
#define MAX_DEPTH 32

loom_status sched_apply_merge(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  int n = c->n_inputs;
  if (n < 2 || n > MAX_MERGE)
    return sched_fail(c, "%d loops given (need 2 to %d)", n, MAX_MERGE);
  sched_path paths[MAX_MERGE];
  memset(paths, 0, sizeof paths);
  loom_status st = LOOM_OK;
  for (int i = 0; i < n && st == LOOM_OK; i++)
    st = sched_input_loop(c, i, &paths[i]);
  if (st != LOOM_OK)
    goto out;
  /* The lowest common ancestor: the longest shared prefix of the paths. */
  int lca = -1;
  for (int d = 0;; d++) {
    bool same = true;
    for (int i = 0; i < n && same; i++)
      same = paths[i].func == paths[0].func && d < paths[i].n - 1 &&
             paths[i].stmts[d] == paths[0].stmts[d];
    if (!same)
      break;
    lca = d;
  }
  const loom_stmt *target0 = paths[0].stmts[paths[0].n - 1];
  if (lca < 0 || paths[0].stmts[lca]->kind != LOOM_STMT_SEQ) {
    st = sched_fail(c, "loops '%s' and '%s' do not lie in different "
                       "statements of one sequence",
                    sched_stmt_name(target0),
                    sched_stmt_name(paths[1].stmts[paths[1].n - 1]));
    goto out;
  }
  int depth = paths[0].n - 1 - lca;
  if (depth > MAX_DEPTH) {
    st = sched_fail(c, "too deep");
    goto out;
  }
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    const sched_path *p = &paths[i];
    const char *name = sched_stmt_name(p->stmts[p->n - 1]);
    if (p->n - 1 - lca != depth) {
      st = sched_fail(c, "loops '%s' and '%s' are at different depths below "
                         "their common ancestor",
                      sched_stmt_name(target0), name);
      break;
    }
    for (int j = 0; j < i; j++)
      if (paths[j].stmts[lca + 1] == p->stmts[lca + 1])
        st = sched_fail(c, "loops '%s' and '%s' are in the same loop nest",
                        sched_stmt_name(paths[j].stmts[paths[j].n - 1]), name);
    for (int d = lca + 1; d < p->n && st == LOOM_OK; d++) {
      const loom_stmt *l = p->stmts[d];
      int64_t mn;
      if (l->kind != LOOM_STMT_FOR)
        st = sched_fail(c, "a %s lies between loop '%s' and the sequence "
                           "that holds its nest",
                        loom_stmt_kind_name(l->kind), name);
      else if (l->u.loop.n_annotations ||
               l->u.loop.kind == LOOM_FOR_THREAD_BINDING)
        st = sched_fail(c, "loop '%s' has an annotation or a thread binding",
                        sched_stmt_name(l));
      else if (!loom_ir_is_const_int(l->u.loop.min, &mn) || mn != 0)
        st = sched_fail(c, "loop '%s' does not start at 0", sched_stmt_name(l));
      else if (d + 1 < p->n && l->u.loop.body != p->stmts[d + 1])
        st = sched_fail(c, "loop '%s' is not the only child of loop '%s'",
                        sched_stmt_name(p->stmts[d + 1]), sched_stmt_name(l));
      else if (!loom_ir_same_expr(l->u.loop.extent,
                                   paths[0].stmts[d]->u.loop.extent))
        st = sched_fail(c, "loops '%s' and '%s' have different extents",
                        sched_stmt_name(paths[0].stmts[d]), sched_stmt_name(l));
    }
  }
  if (st != LOOM_OK)
    goto out;

  /* Merged variables, then every body with its chain's variables replaced. */
  loom_var *mv[MAX_DEPTH];
  for (int d = 0; d < depth; d++) {
    const loom_stmt *l = paths[0].stmts[lca + 1 + d];
    char name[160];
    snprintf(name, sizeof name, "%s_m", l->u.loop.var->name);
    if (!(mv[d] = loom_ir_var(a, name, l->u.loop.var->dtype))) {
      st = sched_nomem(c);
      goto out;
    }
  }
  loom_stmt **bodies = loom_arena_alloc(a, (size_t)n * sizeof *bodies);
  if (!bodies) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < n; i++) {
    const loom_var *old[MAX_DEPTH];
    loom_expr *vals[MAX_DEPTH];
    for (int d = 0; d < depth; d++) {
      old[d] = paths[i].stmts[lca + 1 + d]->u.loop.var;
      vals[d] = loom_ir_ref(a, mv[d]);
    }
    sched_map m = {.vars = old, .values = vals, .n = depth};
    bodies[i] = sched_subst_stmt(a, paths[i].stmts[paths[i].n - 1]->u.loop.body,
                                 &m);
    if (!bodies[i]) {
      st = sched_nomem(c);
      goto out;
    }
  }
  loom_stmt *cur = loom_ir_stmt(a, LOOM_STMT_SEQ, target0->loc);
  if (!cur) {
    st = sched_nomem(c);
    goto out;
  }
  cur->u.seq.stmts = bodies;
  cur->u.seq.n_stmts = n;
  for (int d = depth - 1; d >= 0 && cur; d--) {
    loom_stmt *l = loom_arena_alloc(a, sizeof *l);
    if (l) {
      *l = *paths[0].stmts[lca + 1 + d];
      l->u.loop.var = mv[d];
      l->u.loop.body = cur;
    }
    cur = l;
  }
  /* The merged nest takes the place of the first nest; the others go. */
  const loom_stmt *seq = paths[0].stmts[lca];
  int k = 0;
  loom_stmt **items =
      loom_arena_alloc(a, (size_t)seq->u.seq.n_stmts * sizeof *items);
  loom_stmt *ns = loom_arena_alloc(a, sizeof *ns);
  if (!cur || !items || !ns) {
    st = sched_nomem(c);
    goto out;
  }
  bool placed = false;
  for (int j = 0; j < seq->u.seq.n_stmts; j++) {
    loom_stmt *item = seq->u.seq.stmts[j];
    bool is_nest = false;
    for (int i = 0; i < n; i++)
      is_nest |= paths[i].stmts[lca + 1] == item;
    if (!is_nest)
      items[k++] = item;
    else if (!placed) {
      items[k++] = cur;
      placed = true;
    }
  }
  *ns = *seq;
  ns->u.seq.stmts = items;
  ns->u.seq.n_stmts = k;
  loom_stmt *repl = k == 1 ? items[0] : ns;
  c->mod = sched_replace(a, c->mod, &paths[0], lca, repl);
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_LOOP, .func = paths[0].func,
                                    .loop = mv[depth - 1]});
out:
  for (int i = 0; i < n; i++)
    sched_path_free(&paths[i]);
  return st;
}
