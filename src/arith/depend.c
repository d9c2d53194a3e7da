/* Exact memory dependences with isl, and the questions schedules ask of
 * them: does a loop carry a dependence (parallel, vectorize), may two loops
 * swap (reorder), are a block's instances independent (in-place updates).
 * A dependence is a pair of instances, the first before the second in the
 * program's order (2d+1 schedule vectors compared lexicographically), that
 * touch the same element with at least one write. Witnesses come from the
 * lexicographically smallest such pair. */
#include "arith/depend.h"
#include "loom/script.h"

#include <isl/options.h>
#include <isl/point.h>
#include <isl/val.h>
#include <stdlib.h>
#include <string.h>

/* The statement's schedule vector [o0, i0, o1, i1, ..., on, 0, ...], with
 * the loops at depths swap_a and swap_b exchanged (none when they are -1). */
static isl_map *schedule(loom_arith_deps *deps, int id, int swap_a, int swap_b) {
  const dep_stmt *st = &deps->stmts[id];
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_printf(&b, "{ S%d[", id);
  for (int i = 0; i < st->n_loops; i++)
    loom_buf_printf(&b, "%si%d", i ? ", " : "", st->loops[i]);
  loom_buf_puts(&b, "] -> [");
  for (int i = 0; i <= deps->max_depth; i++) {
    if (i > 0)
      loom_buf_puts(&b, ", ");
    loom_buf_printf(&b, "%d", i <= st->n_loops ? st->ordinals[i] : 0);
    if (i == deps->max_depth)
      break;
    int at = i == swap_a ? swap_b : i == swap_b ? swap_a : i;
    if (at < st->n_loops)
      loom_buf_printf(&b, ", i%d", st->loops[at]);
    else
      loom_buf_puts(&b, ", 0");
  }
  loom_buf_puts(&b, "] }");
  isl_map *m = b.has_failed ? NULL : isl_map_read_from_str(deps->ctx, b.data);
  loom_buf_free(&b);
  if (!m)
    deps->has_failed = true;
  return m;
}

static void add_pair(loom_arith_deps *deps, int src, int dst) {
  dep_pair *p = dep_push((void **)&deps->pairs, &deps->n_pairs, &deps->cap_pairs,
                         sizeof *p);
  if (!p) {
    deps->has_failed = true;
    return;
  }
  *p = (dep_pair){src, dst, NULL};
}

/* Pair p's instances that touch the same element (owned by p). */
static isl_map *same_element(loom_arith_deps *deps, dep_pair *p) {
  if (!p->same) {
    const dep_access *a = &deps->accesses[p->src], *b = &deps->accesses[p->dst];
    p->same = isl_map_apply_range(isl_map_copy(a->map),
                                  isl_map_reverse(isl_map_copy(b->map)));
    if (!p->same)
      deps->has_failed = true;
  }
  return p->same;
}

loom_status loom_arith_deps_new(const loom_func *f, loom_arith_deps **out,
                                loom_diag *d) {
  *out = NULL;
  loom_arith_deps *deps = calloc(1, sizeof *deps);
  if (!deps)
    return LOOM_NOMEM;
  deps->f = f;
  deps->arena = loom_arena_new();
  deps->ctx = isl_ctx_alloc();
  loom_buf_init(&deps->assumptions);
  if (!deps->arena || !deps->ctx) {
    loom_arith_deps_free(deps);
    return LOOM_NOMEM;
  }
  /* Errors come back as NULL results; the library never prints. */
  isl_options_set_on_error(deps->ctx, ISL_ON_ERROR_CONTINUE);
  loom_status st = dep_build_model(deps, d);
  for (int i = 0; i < deps->n_stmts && st == LOOM_OK; i++)
    deps->stmts[i].schedule = schedule(deps, i, -1, -1);
  for (int i = 0; i < deps->n_accesses && st == LOOM_OK; i++)
    for (int j = 0; j < deps->n_accesses && !deps->has_failed; j++)
      if (deps->accesses[i].buffer_id == deps->accesses[j].buffer_id &&
          (deps->accesses[i].is_write || deps->accesses[j].is_write))
        add_pair(deps, i, j);
  if (st == LOOM_OK && deps->has_failed) {
    loom_loc nowhere = {0};
    loom_diag_error(d, nowhere, "dependence analysis of '%s' failed: out of "
                    "memory or a model the solver rejected",
                    f->name ? f->name : "?");
    st = LOOM_ERROR;
  }
  if (st != LOOM_OK) {
    loom_arith_deps_free(deps);
    return st;
  }
  *out = deps;
  return LOOM_OK;
}

void loom_arith_deps_free(loom_arith_deps *deps) {
  if (!deps)
    return;
  for (int i = 0; i < deps->n_pairs; i++)
    isl_map_free(deps->pairs[i].same);
  for (int i = 0; i < deps->n_accesses; i++)
    isl_map_free(deps->accesses[i].map);
  for (int i = 0; i < deps->n_stmts; i++) {
    isl_set_free(deps->stmts[i].domain);
    isl_map_free(deps->stmts[i].schedule);
  }
  free(deps->pairs);
  free(deps->accesses);
  free(deps->stmts);
  free(deps->loops);
  loom_buf_free(&deps->assumptions);
  if (deps->ctx)
    isl_ctx_free(deps->ctx);
  loom_arena_free(deps->arena);
  free(deps);
}

const char *loom_arith_deps_assumptions(const loom_arith_deps *deps) {
  return deps->assumptions.data ? deps->assumptions.data : "";
}

/* ---- witnesses -------------------------------------------------------------- */

static void print_access(const dep_access *a, loom_buf *b) {
  const loom_buffer *buf = a->written_buffer;
  loom_buf_puts(b, buf && buf->name ? buf->name : "?");
  if (a->n_indices == 0 && buf && buf->ndim > 0) {
    loom_buf_puts(b, "[...]"); /* through its pointer */
    return;
  }
  loom_buf_putc(b, '[');
  for (int i = 0; i < a->n_indices; i++) {
    if (i)
      loom_buf_puts(b, ", ");
    loom_script_print_expr(a->indices[i], b);
  }
  loom_buf_putc(b, ']');
}

static const char *loop_name(const loom_arith_deps *deps, int loop) {
  const loom_var *v = deps->loops[loop].var;
  return v && v->name ? v->name : "?";
}

static void print_point(const loom_arith_deps *deps, const dep_stmt *st,
                        const int64_t *xs, loom_buf *b) {
  if (st->n_loops == 0)
    loom_buf_puts(b, "its only instance");
  for (int i = 0; i < st->n_loops; i++)
    loom_buf_printf(b, "%s%s = %lld", i ? ", " : "", loop_name(deps, st->loops[i]),
                    (long long)xs[i]);
}

static int64_t coordinate(isl_point *p, int k, bool *has_failed) {
  isl_val *v = isl_point_get_coordinate_val(p, isl_dim_set, k);
  if (!v) {
    *has_failed = true;
    return 0;
  }
  int64_t r = isl_val_get_num_si(v);
  isl_val_free(v);
  return r;
}

/* Fills w from the smallest pair in rel (a subset of pair p's relation);
 * the distances of loops[0..n_loops) go into the text, the first into
 * w->distance. A negative loop id means: the first loop where the pair
 * differs. */
static bool fill_witness(loom_arith_deps *deps, const dep_pair *p, isl_map *rel,
                         int *loops, int n_loops, loom_dep_witness *w) {
  const dep_access *a = &deps->accesses[p->src], *b = &deps->accesses[p->dst];
  const dep_stmt *sa = &deps->stmts[a->stmt], *sb = &deps->stmts[b->stmt];
  isl_set *pairs = isl_map_wrap(isl_map_copy(rel));
  isl_point *pt = isl_set_sample_point(isl_set_lexmin(isl_set_copy(pairs)));
  if (!pt || isl_point_is_void(pt) == isl_bool_true) {
    isl_point_free(pt);
    pt = isl_set_sample_point(isl_set_copy(pairs));
  }
  isl_set_free(pairs);
  if (!pt || isl_point_is_void(pt) != isl_bool_false) {
    isl_point_free(pt);
    return false;
  }
  int n = sa->n_loops + sb->n_loops;
  int64_t *xs = calloc((size_t)n + 1, sizeof *xs);
  bool has_failed = !xs;
  for (int k = 0; k < n && xs; k++)
    xs[k] = coordinate(pt, k, &has_failed);
  isl_point_free(pt);
  if (has_failed) {
    free(xs);
    return false;
  }
  const int64_t *ys = xs + sa->n_loops;
  for (int i = 0; i < n_loops; i++) {
    if (loops[i] >= 0)
      continue;
    loops[i] = sa->n_loops > 0 ? sa->loops[0] : 0;
    for (int k = 0; k < sa->n_loops && k < sb->n_loops; k++)
      if (xs[k] != ys[k]) {
        loops[i] = sa->loops[k];
        break;
      }
  }
  loom_buf t, src, dst;
  loom_buf_init(&t);
  loom_buf_init(&src);
  loom_buf_init(&dst);
  print_access(a, &src);
  print_access(b, &dst);
  loom_buf_printf(&t, "%s %s at %d:%d is %s", src.data, a->is_write ? "written" : "read",
                  sa->loc.line, sa->loc.col,
                  b->is_write ? (a->is_write ? "overwritten" : "written") : "read");
  if (strcmp(src.data, dst.data) != 0)
    loom_buf_printf(&t, " as %s", dst.data);
  loom_buf_printf(&t, " at %d:%d by iteration ", sb->loc.line, sb->loc.col);
  int64_t first = 0;
  for (int i = 0; i < n_loops; i++) {
    const dep_loop *l = &deps->loops[loops[i]];
    int64_t dist = l->depth < sa->n_loops && l->depth < sb->n_loops
                       ? ys[l->depth] - xs[l->depth] : 0;
    if (i == 0)
      first = dist;
    loom_buf_printf(&t, "%s%s", i ? ", " : "", loop_name(deps, loops[i]));
    if (dist != 0)
      loom_buf_printf(&t, " %c %lld", dist > 0 ? '+' : '-',
                      (long long)(dist > 0 ? dist : -dist));
  }
  loom_buf_puts(&t, " (");
  print_point(deps, sa, xs, &t);
  loom_buf_puts(&t, ", then ");
  print_point(deps, sb, ys, &t);
  loom_buf_putc(&t, ')');
  const char *why = a->why ? a->why : b->why ? b->why : sa->why ? sa->why : sb->why;
  if (why)
    loom_buf_printf(&t, "; assumed: %s", why);
  free(xs);
  const char *text = t.has_failed ? NULL : loom_arena_strdup(deps->arena, t.data);
  loom_buf_free(&t);
  loom_buf_free(&src);
  loom_buf_free(&dst);
  if (!text)
    return false;
  *w = (loom_dep_witness){
      a->is_write && b->is_write ? LOOM_DEP_WAW : a->is_write ? LOOM_DEP_RAW : LOOM_DEP_WAR,
      a->buffer, sa->loc, sb->loc, first, why == NULL, text};
  return true;
}

/* ---- queries ----------------------------------------------------------------- */

static int find_loop(const loom_arith_deps *deps, const loom_var *v) {
  for (int i = 0; i < deps->n_loops; i++)
    if (deps->loops[i].var == v)
      return i;
  return -1;
}

static bool encloses(const dep_stmt *st, const dep_loop *l, int id) {
  return l->depth < st->n_loops && st->loops[l->depth] == id;
}

static loom_status no_loop(const loom_arith_deps *deps, const loom_var *v,
                           loom_diag *d) {
  loom_loc nowhere = {0};
  return loom_diag_error(d, nowhere, "'%s' is not a loop of function '%s'",
                         v && v->name ? v->name : "?",
                         deps->f->name ? deps->f->name : "?");
}

/* src instance -> dst instance pairs of pair p that also satisfy cond, a
 * constraint over x0.. (src loops) and y0.. (dst loops). */
static isl_map *restrict_pair(loom_arith_deps *deps, dep_pair *p,
                              const char *cond) {
  const dep_stmt *sa = &deps->stmts[deps->accesses[p->src].stmt];
  const dep_stmt *sb = &deps->stmts[deps->accesses[p->dst].stmt];
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_printf(&b, "{ S%d[", deps->accesses[p->src].stmt);
  for (int i = 0; i < sa->n_loops; i++)
    loom_buf_printf(&b, "%sx%d", i ? ", " : "", i);
  loom_buf_printf(&b, "] -> S%d[", deps->accesses[p->dst].stmt);
  for (int i = 0; i < sb->n_loops; i++)
    loom_buf_printf(&b, "%sy%d", i ? ", " : "", i);
  loom_buf_printf(&b, "] : %s }", cond);
  isl_map *c = b.has_failed ? NULL : isl_map_read_from_str(deps->ctx, b.data);
  loom_buf_free(&b);
  if (!c) {
    deps->has_failed = true;
    return NULL;
  }
  isl_map *same = same_element(deps, p);
  if (!same) {
    isl_map_free(c);
    return NULL;
  }
  return isl_map_intersect(isl_map_copy(same), c);
}

/* Tries each pair accepted by wants; the first (exact ones first) with a
 * non-empty restriction becomes the witness. */
typedef isl_map *restrict_fn(loom_arith_deps *deps, dep_pair *p, void *arg);

static loom_status search(loom_arith_deps *deps, restrict_fn *fn, void *arg,
                          int *loops, int n_loops, bool *is_found,
                          loom_dep_witness *w, loom_diag *d) {
  *is_found = false;
  for (int pass = 0; pass < 2 && !*is_found; pass++) {
    for (int i = 0; i < deps->n_pairs && !*is_found; i++) {
      dep_pair *p = &deps->pairs[i];
      const dep_access *a = &deps->accesses[p->src], *b = &deps->accesses[p->dst];
      bool is_exact = !a->why && !b->why && !deps->stmts[a->stmt].why &&
                      !deps->stmts[b->stmt].why;
      if (is_exact != (pass == 0))
        continue;
      isl_map *rel = fn(deps, p, arg);
      if (!rel)
        continue;
      isl_bool is_empty = isl_map_is_empty(rel);
      if (is_empty == isl_bool_false) {
        *is_found = true;
        loom_dep_witness tmp;
        if (!fill_witness(deps, p, rel, loops, n_loops, w ? w : &tmp))
          deps->has_failed = true;
      } else if (is_empty == isl_bool_error) {
        deps->has_failed = true;
      }
      isl_map_free(rel);
    }
  }
  if (deps->has_failed) {
    loom_loc nowhere = {0};
    return loom_diag_error(d, nowhere, "dependence query failed: out of memory "
                           "or the solver gave up");
  }
  return LOOM_OK;
}

/* Equal on the first `equal` loops, then x < y on the next (or, with
 * is_lex, lexicographically smaller on the first `equal` loops). */
static char *order_text(loom_arith_deps *deps, int equal, bool is_lex) {
  loom_buf b;
  loom_buf_init(&b);
  if (is_lex) {
    for (int k = 0; k < equal; k++) {
      loom_buf_puts(&b, k ? " or (" : "(");
      for (int i = 0; i < k; i++)
        loom_buf_printf(&b, "x%d = y%d and ", i, i);
      loom_buf_printf(&b, "x%d < y%d)", k, k);
    }
  } else {
    for (int i = 0; i < equal; i++)
      loom_buf_printf(&b, "x%d = y%d and ", i, i);
    loom_buf_printf(&b, "x%d < y%d", equal, equal);
  }
  char *r = b.has_failed ? NULL : loom_arena_strdup(deps->arena, b.data ? b.data : "");
  loom_buf_free(&b);
  return r;
}

typedef struct carried_arg {
  int loop;
  const char *cond;
} carried_arg;

static isl_map *carried_pairs(loom_arith_deps *deps, dep_pair *p, void *arg) {
  const carried_arg *c = arg;
  const dep_loop *l = &deps->loops[c->loop];
  if (!encloses(&deps->stmts[deps->accesses[p->src].stmt], l, c->loop) ||
      !encloses(&deps->stmts[deps->accesses[p->dst].stmt], l, c->loop))
    return NULL;
  return restrict_pair(deps, p, c->cond);
}

loom_status loom_arith_deps_loop_carried(loom_arith_deps *deps,
                                         const loom_var *loop, bool *is_carried,
                                         loom_dep_witness *w, loom_diag *d) {
  int id = find_loop(deps, loop);
  if (id < 0)
    return no_loop(deps, loop, d);
  carried_arg arg = {id, order_text(deps, deps->loops[id].depth, false)};
  if (!arg.cond)
    return LOOM_NOMEM;
  int loops[1] = {id};
  return search(deps, carried_pairs, &arg, loops, 1, is_carried, w, d);
}

typedef struct swap_arg {
  int outer, inner;
} swap_arg;

static isl_map *reversed_pairs(loom_arith_deps *deps, dep_pair *p, void *arg) {
  const swap_arg *s = arg;
  const dep_loop *lo = &deps->loops[s->outer], *li = &deps->loops[s->inner];
  int sa = deps->accesses[p->src].stmt, sb = deps->accesses[p->dst].stmt;
  if (!encloses(&deps->stmts[sa], lo, s->outer) ||
      !encloses(&deps->stmts[sb], lo, s->outer))
    return NULL;
  isl_map *before = isl_map_lex_lt_map(isl_map_copy(deps->stmts[sa].schedule),
                                       isl_map_copy(deps->stmts[sb].schedule));
  isl_map *after = isl_map_lex_ge_map(schedule(deps, sa, lo->depth, li->depth),
                                      schedule(deps, sb, lo->depth, li->depth));
  isl_map *same = same_element(deps, p);
  if (!before || !after || !same) {
    isl_map_free(before);
    isl_map_free(after);
    return NULL;
  }
  return isl_map_intersect(isl_map_intersect(isl_map_copy(same), before), after);
}

loom_status loom_arith_deps_can_interchange(loom_arith_deps *deps,
                                            const loom_var *outer,
                                            const loom_var *inner,
                                            bool *is_legal, loom_dep_witness *w,
                                            loom_diag *d) {
  int lo = find_loop(deps, outer), li = find_loop(deps, inner);
  if (lo < 0)
    return no_loop(deps, outer, d);
  if (li < 0)
    return no_loop(deps, inner, d);
  loom_loc nowhere = {0};
  for (int i = 0; i < deps->n_stmts; i++) {
    const dep_stmt *st = &deps->stmts[i];
    bool has_outer = encloses(st, &deps->loops[lo], lo);
    bool has_inner = encloses(st, &deps->loops[li], li);
    if (has_inner && !has_outer)
      return loom_diag_error(d, nowhere, "loop '%s' is not nested inside loop '%s'",
                             inner->name, outer->name);
    if (has_outer && !has_inner)
      return loom_diag_error(d, st->loc, "the statement at %d:%d is inside loop "
                             "'%s' but not inside loop '%s': the loops are not "
                             "perfectly nested", st->loc.line, st->loc.col,
                             outer->name, inner->name);
  }
  if (lo == li || deps->loops[li].depth <= deps->loops[lo].depth)
    return loom_diag_error(d, nowhere, "loop '%s' is not nested inside loop '%s'",
                           inner->name, outer->name);
  swap_arg arg = {lo, li};
  int loops[2] = {lo, li};
  bool is_reversed;
  TRY(search(deps, reversed_pairs, &arg, loops, 2, &is_reversed, w, d));
  *is_legal = !is_reversed;
  return LOOM_OK;
}

typedef struct block_arg {
  const loom_block *block;
} block_arg;

static isl_map *cross_instance_pairs(loom_arith_deps *deps, dep_pair *p,
                                     void *arg) {
  const block_arg *b = arg;
  const dep_stmt *sa = &deps->stmts[deps->accesses[p->src].stmt];
  const dep_stmt *sb = &deps->stmts[deps->accesses[p->dst].stmt];
  int depth = -1;
  for (int i = 0; i < sa->n_blocks; i++)
    if (sa->blocks[i] == b->block)
      depth = sa->block_depths[i];
  bool is_in_b = false;
  for (int i = 0; i < sb->n_blocks; i++)
    is_in_b |= sb->blocks[i] == b->block;
  if (depth <= 0 || !is_in_b)
    return NULL; /* outside the block, or a block with one instance */
  const char *cond = order_text(deps, depth, true);
  return cond ? restrict_pair(deps, p, cond) : NULL;
}

loom_status loom_arith_deps_block_independent(loom_arith_deps *deps,
                                              const loom_block *b,
                                              bool *is_independent,
                                              loom_dep_witness *w,
                                              loom_diag *d) {
  block_arg arg = {b};
  int loops[1] = {-1};
  bool is_found;
  TRY(search(deps, cross_instance_pairs, &arg, loops, 1, &is_found, w, d));
  *is_independent = !is_found;
  return LOOM_OK;
}
