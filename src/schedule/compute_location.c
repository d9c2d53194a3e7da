/* sample_compute_location: where a block may be computed, drawn uniformly
 * among the places compute_at accepts (TVM's CollectComputeLocation), and
 * enter_postproc, the mark that ends a design space's own instructions. */
#include "schedule/sched_impl.h"

#include <stdio.h>
#include <string.h>

#define MAX_LOCATIONS (SCHED_MAX_DEPTH + 2)

typedef struct locations {
  int64_t index[MAX_LOCATIONS]; /* -2 inline, -1 root, else the loop's index */
  loom_var *loop[MAX_LOCATIONS];
  int n;
} locations;

static void add(locations *l, int64_t index, loom_var *loop) {
  if (l->n < MAX_LOCATIONS) {
    l->index[l->n] = index;
    l->loop[l->n++] = loop;
  }
}

static bool reads_any(const loom_block *o, const loom_block *b) {
  for (int i = 0; i < b->n_writes; i++)
    for (int j = 0; j < o->n_reads; j++)
      if (b->writes[i].buffer == o->reads[j].buffer)
        return true;
  return false;
}

/* Whether a reduce (or other non-spatial) iter of block realize r is bound
 * through loop variable v. */
static bool is_reduce_loop(const loom_stmt *r, const loom_var *v) {
  const loom_block *b = r->u.realize.block;
  for (int i = 0; i < r->u.realize.n_iter_values; i++)
    if (b->iter_vars[i].kind != LOOM_ITER_SPATIAL &&
        sched_expr_uses(r->u.realize.iter_values[i], v))
      return true;
  return false;
}

/* The candidates, in TVM's order: inlining when compute_inline accepts the
 * block, the root, then the loops of the block's first consumer from the
 * outermost down to the innermost one that encloses every consumer,
 * stopping at a spatial loop under a reduce loop of the consumer, leaving
 * out trailing reduce loops, unit loops and the loops compute_at refuses
 * (TVM's CollectComputeLocation). */
static loom_status collect(sched_call *c, const sched_path *p, locations *l) {
  int ri = p->n - 1;
  loom_stmt *self = p->stmts[ri];
  sched_rv me = {.kind = LOOM_RV_BLOCK, .func = p->func,
                 .block = self->u.realize.block->name};
  if (sched_would_apply(c, LOOM_INST_COMPUTE_INLINE, &me, 1, NULL, 0))
    add(l, -2, NULL);
  add(l, -1, NULL);
  int sc = sched_scope_index(p, ri);
  if (sc < 0)
    return LOOM_OK;
  sched_stmt_list blocks = {0};
  if (!sched_collect_blocks(p->stmts[sc]->u.realize.block->body, &blocks))
    return sched_nomem(c);
  int at = -1, first = -1;
  for (int i = 0; i < blocks.n; i++)
    if (blocks.items[i] == self)
      at = i;
  for (int i = at + 1; at >= 0 && i < blocks.n && first < 0; i++)
    if (reads_any(blocks.items[i]->u.realize.block, self->u.realize.block))
      first = i;
  if (first < 0) {
    free(blocks.items);
    return LOOM_OK;
  }
  loom_stmt *loops[SCHED_MAX_DEPTH];
  int n_loops = 0;
  loom_stmt *scope_body = p->stmts[sc]->u.realize.block->body;
  if (!sched_find_under(scope_body, blocks.items[first], loops, &n_loops))
    n_loops = 0;
  int end = n_loops, last_spatial = -1;
  bool seen_reduce = false;
  for (int k = 0; k < n_loops; k++) {
    bool is_r = is_reduce_loop(blocks.items[first], loops[k]->u.loop.var);
    if (!is_r && seen_reduce) {
      end = k;
      break;
    }
    seen_reduce |= is_r;
    if (!is_r)
      last_spatial = k;
  }
  if (last_spatial + 1 < end)
    end = last_spatial + 1;
  loom_tval attrs[2] = {loom_tval_bool(true), loom_tval_int(-1)};
  for (int k = 0; k < end; k++) {
    bool holds_all = true;
    for (int i = first + 1; i < blocks.n && holds_all; i++) {
      loom_stmt *inner[SCHED_MAX_DEPTH];
      int ni = 0;
      if (reads_any(blocks.items[i]->u.realize.block, self->u.realize.block))
        holds_all = sched_find_under(loops[k], blocks.items[i], inner, &ni);
    }
    if (!holds_all)
      break;
    int64_t extent;
    if (loom_ir_is_const_int(loops[k]->u.loop.extent, &extent) && extent == 1)
      continue;
    sched_rv in[2] = {me, {.kind = LOOM_RV_LOOP, .func = p->func,
                           .loop = loops[k]->u.loop.var}};
    if (sched_would_apply(c, LOOM_INST_COMPUTE_AT, in, 2, attrs, 2))
      add(l, k, loops[k]->u.loop.var);
  }
  free(blocks.items);
  return LOOM_OK;
}

/* The candidates as a message lists them: "-1 (the root), 0 (loop 'i')",
 * cut short with "..." past the buffer's room. */
static const char *locations_text(const locations *l, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < l->n && at < size; i++) {
    const char *sep = i ? ", " : "";
    int k;
    if (l->index[i] == -2)
      k = snprintf(buf + at, size - at, "%s-2 (inline)", sep);
    else if (l->index[i] == -1)
      k = snprintf(buf + at, size - at, "%s-1 (the root)", sep);
    else
      k = snprintf(buf + at, size - at, "%s%lld (loop '%s')", sep,
                   (long long)l->index[i],
                   l->loop[i]->name ? l->loop[i]->name : "?");
    at += k > 0 ? (size_t)k : 0;
  }
  if (at >= size)
    memcpy(buf + size - 4, "...", 4);
  return buf;
}

/* Which candidate a decision names. One that is not a candidate is refused,
 * or, for the tuner, falls back to the one before it, or the root (TVM's
 * replay rule). */
static loom_status decided_location(sched_call *c, const sched_path *p,
                                    const locations *l, int *pick) {
  int64_t want = c->decision.i;
  int below = -1;
  *pick = -1;
  for (int i = 0; i < l->n; i++) {
    if (l->index[i] == want)
      *pick = i;
    if (l->index[i] < want)
      below = i;
  }
  if (*pick >= 0)
    return LOOM_OK;
  if (c->repairs_decision) {
    *pick = below >= 0 ? below : (l->index[0] == -1 ? 0 : 1);
    return LOOM_OK;
  }
  char text[300];
  return sched_fail(c, "the decision %lld is not a compute location of block "
                       "'%s': it must be one of %s",
                    (long long)want, sched_stmt_name(p->stmts[p->n - 1]),
                    locations_text(l, text, sizeof text));
}

loom_status sched_apply_sample_compute_location(sched_call *c) {
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  locations l = {.n = 0};
  loom_status st = collect(c, &p, &l);
  int pick = 0;
  if (st == LOOM_OK && c->decision.kind == LOOM_TV_INT) {
    st = decided_location(c, &p, &l, &pick);
  } else if (st == LOOM_OK && c->decision.kind == LOOM_TV_NONE) {
    pick = (int)loom_rng_below(&c->s->rng, (uint64_t)l.n);
  } else if (st == LOOM_OK) {
    st = sched_fail(c, "the decision must be an integer location");
  }
  if (st == LOOM_OK) {
    c->decision = loom_tval_int(l.index[pick]);
    st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_LOOP, .func = p.func,
                                      .loop = l.loop[pick],
                                      .value = l.index[pick]});
  }
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_enter_postproc(sched_call *c) {
  (void)c;
  return LOOM_OK;
}
