/* decompose_reduction: split a reduction block's init out into its own block
 * `<name>_init`, under copies of the loops from the given loop down that do
 * not feed a reduction iter, placed just before that loop; the block itself
 * becomes `<name>_update`, reading what it writes. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_ITERS 64

/* Whether loop v feeds a spatial iter of r (the init nest keeps it, as
 * TVM keeps a loop the init's bindings use) or, with is_spatial false, a
 * reduction iter. */
static bool feeds(const loom_stmt *r, const loom_var *v, bool is_spatial) {
  const loom_block *b = r->u.realize.block;
  for (int i = 0; i < b->n_iter_vars && i < r->u.realize.n_iter_values; i++)
    if ((b->iter_vars[i].kind == LOOM_ITER_SPATIAL) == is_spatial &&
        sched_expr_uses(r->u.realize.iter_values[i], v))
      return true;
  return false;
}

static loom_buffer_region *copy_regions(loom_arena *a,
                                        const loom_buffer_region *r, int n,
                                        const sched_map *m) {
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    out[i] = r[i];
    out[i].ranges = loom_arena_alloc(
        a, (size_t)(r[i].n_ranges ? r[i].n_ranges : 1) * sizeof *out[i].ranges);
    if (!out[i].ranges)
      return NULL;
    for (int j = 0; j < r[i].n_ranges; j++) {
      out[i].ranges[j].min = sched_subst_expr(a, r[i].ranges[j].min, m);
      out[i].ranges[j].extent = sched_subst_expr(a, r[i].ranges[j].extent, m);
      if (!out[i].ranges[j].min || !out[i].ranges[j].extent)
        return NULL;
    }
  }
  return out;
}

loom_status sched_apply_decompose_reduction(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0}, q = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_status st = sched_input_loop(c, 1, &q);
  if (st != LOOM_OK)
    goto out;
  int ri = p.n - 1;
  loom_stmt *r = p.stmts[ri];
  const loom_block *b = r->u.realize.block;
  loom_stmt *loop = q.stmts[q.n - 1];
  int li = -1;
  for (int i = sched_scope_index(&p, ri) + 1; i < ri; i++)
    if (p.stmts[i] == loop)
      li = i;
  if (q.func != p.func || li < 0) {
    st = sched_fail(c, "loop '%s' does not enclose block '%s' in its scope",
                    sched_stmt_name(loop), b->name);
    goto out;
  }
  if (!b->init || !sched_is_reduction(&p, ri)) {
    st = sched_fail(c, "block '%s' is not a reduction block (an init, "
                       "spatial and reduction iters, an affine binding)",
                    b->name);
    goto out;
  }
  if (b->n_iter_vars > MAX_ITERS) {
    st = sched_fail(c, "block '%s' has too many iters", b->name);
    goto out;
  }
  for (int i = sched_scope_index(&p, ri) + 1; i < li; i++)
    if (p.stmts[i]->kind == LOOM_STMT_FOR &&
        feeds(r, p.stmts[i]->u.loop.var, false)) {
      st = sched_fail(c, "loop '%s' must be above every loop that feeds a "
                         "reduction iter of block '%s', but loop '%s' is "
                         "above it",
                      sched_stmt_name(loop), b->name,
                      sched_stmt_name(p.stmts[i]));
      goto out;
    }
  /* Statements beside the block under the loop (a sequence: the shared
   * copies a GPU tiling fetches at each reduction step) stay where they
   * are; the init nest goes before the loop. */
  for (int i = li; i < ri; i++)
    if (p.stmts[i]->kind != LOOM_STMT_FOR && p.stmts[i]->kind != LOOM_STMT_SEQ) {
      st = sched_fail(c, "only loops and sequences may lie between loop '%s' "
                         "and block '%s'",
                      sched_stmt_name(loop), b->name);
      goto out;
    }

  /* The init nest keeps the loops that feed spatial iters (one that feeds
   * a reduction iter too writes the same init more than once, all before
   * the first update). A loop it leaves out may bound nothing the init
   * needs. */
  for (int i = li; i < ri && st == LOOM_OK; i++) {
    if (p.stmts[i]->kind != LOOM_STMT_FOR)
      continue;
    const loom_var *v = p.stmts[i]->u.loop.var;
    if (!feeds(r, v, true) && sched_expr_uses(r->u.realize.predicate, v))
      st = sched_fail(c, "the predicate of block '%s' uses loop '%s', which "
                         "feeds no spatial iter, so the init nest leaves it out",
                      b->name, v->name);
  }
  if (st != LOOM_OK)
    goto out;
  /* Fresh loop and iter variables for the init block. */
  const loom_var *old_vars[2 * MAX_ITERS + 64];
  loom_expr *new_vals[2 * MAX_ITERS + 64];
  int nm = 0;
  loom_stmt *kept[64];
  loom_var *kept_vars[64];
  int n_kept = 0;
  for (int i = li; i < ri && st == LOOM_OK; i++) {
    loom_stmt *l = p.stmts[i];
    if (l->kind != LOOM_STMT_FOR || !feeds(r, l->u.loop.var, true))
      continue;
    if (n_kept == 64) {
      st = sched_fail(c, "too many loops");
      break;
    }
    char name[128];
    snprintf(name, sizeof name, "%s_init", l->u.loop.var->name);
    loom_var *v = loom_ir_var(a, name, l->u.loop.var->dtype);
    if (!v)
      st = sched_nomem(c);
    else {
      kept[n_kept] = l;
      kept_vars[n_kept++] = v;
      old_vars[nm] = l->u.loop.var;
      new_vals[nm++] = loom_ir_ref(a, v);
    }
  }
  if (st != LOOM_OK)
    goto out;
  sched_map loops_map = {.vars = old_vars, .values = new_vals, .n = nm};
  loom_block *ib = loom_ir_block(a, "");
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(b->n_iter_vars + 1) *
                                                 sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(b->n_iter_vars + 1) *
                                             sizeof *vals);
  if (!ib || !iters || !vals) {
    st = sched_nomem(c);
    goto out;
  }
  int ni = 0, first_iter = nm;
  for (int i = 0; i < b->n_iter_vars; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    if (iv->kind != LOOM_ITER_SPATIAL)
      continue;
    loom_var *v = loom_ir_var(a, iv->var->name, iv->var->dtype);
    vals[ni] = sched_subst_expr(a, r->u.realize.iter_values[i], &loops_map);
    if (!v || !vals[ni]) {
      st = sched_nomem(c);
      goto out;
    }
    iters[ni] = *iv;
    iters[ni++].var = v;
    old_vars[nm] = iv->var;
    new_vals[nm++] = loom_ir_ref(a, v);
  }
  sched_map iter_map = {.vars = old_vars + first_iter,
                        .values = new_vals + first_iter, .n = nm - first_iter};
  char name[256];
  snprintf(name, sizeof name, "%s_init", b->name);
  ib->name = loom_arena_strdup(a, name);
  ib->iter_vars = iters;
  ib->n_iter_vars = ni;
  ib->reads = NULL;
  ib->n_reads = 0;
  ib->writes = copy_regions(a, b->writes, b->n_writes, &iter_map);
  ib->n_writes = b->n_writes;
  ib->body = sched_subst_stmt(a, b->init, &iter_map);
  ib->annotations = b->annotations;
  ib->n_annotations = b->n_annotations;
  loom_stmt *ir = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  if (!ib->name || !ib->writes || !ib->body || !ir) {
    st = sched_nomem(c);
    goto out;
  }
  ir->u.realize.block = ib;
  ir->u.realize.iter_values = vals;
  ir->u.realize.n_iter_values = ni;
  if (r->u.realize.predicate &&
      !(ir->u.realize.predicate =
            sched_subst_expr(a, r->u.realize.predicate, &loops_map))) {
    st = sched_nomem(c);
    goto out;
  }
  loom_stmt *init_nest = ir;
  for (int i = n_kept - 1; i >= 0 && init_nest; i--) {
    loom_stmt *l = loom_arena_alloc(a, sizeof *l);
    if (l) {
      *l = *kept[i];
      l->u.loop.var = kept_vars[i];
      l->u.loop.min = sched_subst_expr(a, kept[i]->u.loop.min, &loops_map);
      l->u.loop.extent = sched_subst_expr(a, kept[i]->u.loop.extent, &loops_map);
      l->u.loop.body = init_nest;
      if (!l->u.loop.min || !l->u.loop.extent)
        l = NULL;
    }
    init_nest = l;
  }

  /* The update block: no init, renamed, reading what it writes first. */
  loom_block *ub = loom_arena_alloc(a, sizeof *ub);
  loom_stmt *ur = loom_arena_alloc(a, sizeof *ur);
  loom_buffer_region *reads = loom_arena_alloc(
      a, (size_t)(b->n_reads + b->n_writes + 1) * sizeof *reads);
  if (!ub || !ur || !reads || !init_nest) {
    st = sched_nomem(c);
    goto out;
  }
  *ub = *b;
  ub->init = NULL;
  snprintf(name, sizeof name, "%s_update", b->name);
  ub->name = loom_arena_strdup(a, name);
  int nr = 0;
  for (int i = 0; i < b->n_writes; i++)
    reads[nr++] = b->writes[i];
  for (int i = 0; i < b->n_reads; i++)
    reads[nr++] = b->reads[i];
  ub->reads = reads;
  ub->n_reads = nr;
  *ur = *r;
  ur->u.realize.block = ub;
  /* Rebuild from the block up to the loop, then put the init nest first. */
  loom_stmt *cur = ur;
  for (int i = ri; cur && i > li; i--)
    cur = sched_with_child(a, p.stmts[i - 1], p.stmts[i], cur);
  /* In a sequence the init nest becomes the loop's sibling; elsewhere the
   * two form a new sequence. */
  const loom_stmt *parent = p.stmts[li - 1];
  bool in_seq = parent->kind == LOOM_STMT_SEQ;
  int n_items = in_seq ? parent->u.seq.n_stmts + 1 : 2;
  loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, loop->loc);
  loom_stmt **items = loom_arena_alloc(a, (size_t)n_items * sizeof *items);
  if (!ub->name || !cur || !seq || !items) {
    st = sched_nomem(c);
    goto out;
  }
  if (in_seq) {
    *seq = *parent;
    int k = 0;
    for (int i = 0; i < parent->u.seq.n_stmts; i++) {
      if (parent->u.seq.stmts[i] == loop) {
        items[k++] = init_nest;
        items[k++] = cur;
      } else
        items[k++] = parent->u.seq.stmts[i];
    }
  } else {
    items[0] = init_nest;
    items[1] = cur;
  }
  seq->u.seq.stmts = items;
  seq->u.seq.n_stmts = n_items;
  c->mod = sched_replace(a, c->mod, &p, in_seq ? li - 1 : li, seq);
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  c->rename_func = p.func;
  c->rename_from = b->name;
  c->rename_to = ub->name;
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = p.func,
                                    .block = ib->name});
out:
  sched_path_free(&p);
  sched_path_free(&q);
  return st;
}
