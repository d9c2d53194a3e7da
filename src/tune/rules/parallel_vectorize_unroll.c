/* ParallelizeVectorizeUnroll: marks the root block with how far the
 * postprocessor may parallelize (cores x the target's max_jobs_per_core),
 * vectorize (its max_vectorize_extent lanes) and
 * unroll (a depth sampled uniformly from 0, 16, 64, 512, for functions that
 * are not purely spatial); functions of less work than the target's
 * min_parallel_work get no parallel loop. The loops themselves change in
 * postprocessing; what this rule changes, in functions with the work for a
 * parallel loop, is an innermost spatial loop too long to vectorize, split
 * in two by a sampled factor so that its inner part can be vectorized and
 * its outer part parallelized. On a GPU (MetaSchedule's DefaultCUDA: no
 * jobs per core, no vector limit) only the unroll depth is marked, drawn
 * from 0, 16, 32, ..., 1024: the threads are the parallelism. */
#include "tune/space_impl.h"

#include <string.h>

static const int64_t cpu_steps[] = {0, 16, 64, 512};
static const int64_t gpu_steps[] = {0, 16, 32, 64, 128, 256, 512, 1024};
#define COUNT(a) (int)(sizeof a / sizeof *a)

/* The iterations of the blocks under s, each block instance counted once
 * (both branches of an if; a loop of unknown extent counts as plenty),
 * at least up to cap. */
static int64_t work(const loom_stmt *s, int64_t times, int64_t cap, int depth) {
  if (!s || depth > 400 || times >= cap)
    return times;
  int64_t ext, sum = 0;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    if (!loom_ir_is_const_int(s->u.loop.extent, &ext))
      return cap;
    if (ext > 0 && times > cap / ext)
      return cap; /* the product would only pass the cap */
    return ext > 0 ? work(s->u.loop.body, times * ext, cap, depth + 1) : 0;
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    sum = depth > 0 ? times : 0; /* the root is no work of its own */
    sum += work(b->init, times, cap, depth + 1);
    return sum + work(b->body, times, cap, depth + 1);
  }
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts && sum < cap; i++)
      sum += work(s->u.seq.stmts[i], times, cap, depth + 1);
    return sum;
  case LOOM_STMT_IF:
    return work(s->u.if_.then_case, times, cap, depth + 1) +
           work(s->u.if_.else_case, times, cap, depth + 1);
  case LOOM_STMT_LET: return work(s->u.let.body, times, cap, depth + 1);
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: return 0;
  }
  return 0;
}

/* The innermost loop of a block directly under the root, when it is worth
 * splitting for vectorization: serial, from 0, of constant extent past the
 * vector limit, right around the block, bound to a spatial iter alone, in
 * a block the postprocessor may vectorize. */
static bool is_long_inner_loop(const space_block *sb, int64_t max_lanes) {
  if (sb->n_loops == 0 || sb->realize->u.realize.predicate ||
      !space_is_parallelizable(sb->block) || sb->block->init)
    return false;
  const loom_stmt *l = sb->loops[sb->n_loops - 1];
  int64_t min, ext;
  if (l->u.loop.kind != LOOM_FOR_SERIAL || l->u.loop.n_annotations ||
      l->u.loop.body != sb->realize ||
      !loom_ir_is_const_int(l->u.loop.min, &min) || min != 0 ||
      !loom_ir_is_const_int(l->u.loop.extent, &ext) || ext <= max_lanes)
    return false;
  const loom_stmt *r = sb->realize;
  int hits = 0;
  for (int i = 0; i < r->u.realize.n_iter_values; i++)
    if (loom_ir_expr_uses(r->u.realize.iter_values[i], l->u.loop.var))
      hits += sb->block->iter_vars[i].kind == LOOM_ITER_SPATIAL ? 1 : 2;
  return hits == 1;
}

/* Splits the long innermost loops of the root's child blocks in two, the
 * inner factor sampled (at most the vector limit). */
static loom_status split_long_loops(const space_ctx *x, loom_sched *s, loom_diag *d) {
  const loom_func *f = space_func(s);
  const loom_stmt *kids[SPACE_MAX_BLOCKS];
  int n = f && f->body ? space_child_blocks(f->body, kids, SPACE_MAX_BLOCKS) : 0;
  const char *names[SPACE_MAX_BLOCKS];
  for (int i = 0; i < n; i++)
    names[i] = kids[i]->u.realize.block->name;
  for (int i = 0; i < n; i++) {
    space_block sb;
    if (!space_find_block(space_func(s), names[i], &sb) || !is_long_inner_loop(&sb, x->target->max_vectorize_extent))
      continue;
    loom_sched_rv b;
    const loom_sched_rv *lp, *v, *parts;
    int n_lp;
    TRY(space_get_block(s, x->func, names[i], &b, d));
    TRY(loom_sched_get_loops(s, b, &lp, &n_lp, d));
    if (n_lp != sb.n_loops)
      continue;
    loom_sched_rv inner = lp[n_lp - 1];
    TRY(loom_sched_sample_perfect_tile(s, inner, 2,
                                       x->target->max_vectorize_extent, &v, d));
    loom_tval factors[2] = {loom_tval_rv(v[0]), loom_tval_rv(v[1])};
    TRY(loom_sched_split(s, inner, factors, 2, true, false, &parts, d));
  }
  return LOOM_OK;
}

/* Marks the root with an unroll depth drawn uniformly from steps. */
static loom_status mark_unroll(loom_sched *s, loom_sched_rv root,
                               const int64_t *steps, int n, loom_diag *d) {
  loom_sched_rv v;
  TRY(space_sample_uniform(s, steps, n, &v, d));
  return space_annotate(s, root, SPACE_ANN_UNROLL_EXPLICIT, loom_tval_rv(v), d);
}

static loom_status annotate(const space_ctx *x, loom_sched *s,
                            loom_sched_rv root, loom_diag *d) {
  if (space_is_gpu(x->target))
    return space_func_is_spatial(space_func(s))
               ? LOOM_OK
               : mark_unroll(s, root, gpu_steps, COUNT(gpu_steps), d);
  int64_t jobs = (int64_t)(x->target->cpu.cores > 0 ? x->target->cpu.cores : 1) *
                 x->target->max_jobs_per_core;
  const loom_func *f = space_func(s);
  int64_t cap = x->target->min_parallel_work;
  bool has_work = f && (cap <= 0 || work(f->body, 1, cap, 0) >= cap);
  if (has_work)
    TRY(space_annotate(s, root, SPACE_ANN_PARALLEL, loom_tval_int(jobs), d));
  TRY(space_annotate(s, root, SPACE_ANN_VECTORIZE,
                     loom_tval_int(x->target->max_vectorize_extent), d));
  /* Below the work limit the loops stay whole: the C compiler vectorizes
   * a plain loop of 100 elements itself, and splits whose inner factor
   * does not fit the vector (25 of 100) measured slower than it. */
  if (has_work)
    TRY(split_long_loops(x, s, d));
  if (space_func_is_spatial(space_func(s)))
    return LOOM_OK;
  return mark_unroll(s, root, cpu_steps, COUNT(cpu_steps), d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!f || !space_find_block(f, name, &sb) || sb.scope)
    return space_list_push(out, s);
  return space_try(x, s, rv, annotate, out);
}

const space_rule space_rule_parallel_vectorize_unroll = {
    "ParallelizeVectorizeUnroll", apply};
