/* RandomComputeLocation: a block left untiled that feeds others is moved
 * under a loop of its consumer drawn by sample_compute_location (or
 * inlined, or left at the root), so the search tries the producer at every
 * depth where compute_at accepts it. A block AddRFactor marked brings its
 * producer, the rfactor block, along: the producer is found before the
 * block moves (an inlined block has none left to find) and placed after
 * it. */
#include "tune/space_impl.h"

static bool is_candidate(const space_block *sb) {
  const loom_block *b = sb->block;
  if (!sb->scope || sb->n_loops == 0)
    return false;
  /* The scope is the function's root block. */
  if (sb->f->body != sb->scope)
    return false;
  if (space_has_ann(b->annotations, b->n_annotations, SPACE_ANN_TILING))
    return false;
  const loom_stmt *only[2];
  if (space_child_blocks(sb->loops[0], only, 2) != 1)
    return false;
  const loom_stmt *cons[1];
  return space_consumers(sb, cons, 1) > 0;
}

static loom_status move(const space_ctx *x, loom_sched *t, loom_sched_rv b,
                        loom_diag *d) {
  (void)x;
  loom_tval in = loom_tval_rv(b);
  const loom_sched_rv *loc;
  TRY(space_apply(t, LOOM_INST_SAMPLE_COMPUTE_LOCATION, &in, 1, NULL, 0, &loc,
                  NULL, d));
  loom_tval at[2] = {loom_tval_rv(b), loom_tval_rv(loc[0])};
  loom_tval attrs[2] = {loom_tval_bool(true), loom_tval_int(-1)};
  return space_apply(t, LOOM_INST_COMPUTE_AT, at, 2, attrs, 2, NULL, NULL, d);
}

static loom_status move_with_producer(const space_ctx *x, loom_sched *t,
                                      loom_sched_rv b, loom_diag *d) {
  loom_tval in = loom_tval_rv(b);
  const loom_sched_rv *prod;
  int n;
  TRY(space_apply(t, LOOM_INST_GET_PRODUCERS, &in, 1, NULL, 0, &prod, &n, d));
  if (n != 1)
    return loom_diag_error(d, (loom_loc){0}, "%d producers, not one", n);
  loom_sched_rv p = prod[0];
  TRY(space_unannotate(t, b, SPACE_ANN_COMPUTE_PRODUCER, d));
  TRY(move(x, t, b, d));
  return move(x, t, p, d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!f || !space_find_block(f, name, &sb) || !is_candidate(&sb))
    return space_list_push(out, s);
  const loom_block *b = sb.block;
  bool marked = space_has_ann(b->annotations, b->n_annotations,
                              SPACE_ANN_COMPUTE_PRODUCER);
  return space_try(x, s, rv, marked ? move_with_producer : move, out);
}

const space_rule space_rule_random_compute_location = {"RandomComputeLocation",
                                                       apply};
