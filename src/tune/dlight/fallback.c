/* Fallback, the last rule: every block whose loops hold it alone gets its
 * spatial loops fused (those of constant extent, outermost), split by the
 * target's threads per block and bound to blockIdx.x and threadIdx.x, with
 * four unrolled steps a thread when the nest is large; loops shared by
 * several blocks are spread where they may run in parallel for all. A
 * reduction then runs serially in each thread: correct, not fast. A block
 * the steps do not fit (a condition in its nest, a step refused) is left as
 * it is, and the GPU lowering runs it in a kernel of one thread. */
#include "tune/dlight/dlight_impl.h"

#include <stdlib.h>
#include <string.h>

bool dlight_is_claimed(const loom_stmt *s) {
  return s->kind == LOOM_STMT_FOR &&
         (s->u.loop.kind == LOOM_FOR_THREAD_BINDING ||
          loom_ir_attr_get(s->u.loop.annotations, s->u.loop.n_annotations, "loom.library"));
}

static loom_visit find_bound(void *ctx, loom_stmt *s) {
  (void)ctx;
  return dlight_is_claimed(s) ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

bool dlight_binds_threads(const loom_stmt *s) {
  loom_ir_visitor v = {.stmt_pre = find_bound};
  return !loom_ir_visit_stmt(&v, (loom_stmt *)s);
}

int dlight_block_names(loom_sched *s, char **out, int max) {
  const char *names[SPACE_MAX_BLOCKS];
  int n = space_block_names(space_func(s), names, max < SPACE_MAX_BLOCKS ? max : SPACE_MAX_BLOCKS);
  for (int i = 0; i < n; i++)
    if (!(out[i] = strdup(names[i]))) {
      dlight_names_free(out, i);
      return -1;
    }
  return n;
}

void dlight_names_free(char **names, int n) {
  for (int i = 0; i < n; i++)
    free(names[i]);
}

static loom_visit count_block(void *ctx, loom_stmt *s) {
  *(int *)ctx += s->kind == LOOM_STMT_BLOCK_REALIZE;
  return s->kind == LOOM_STMT_BLOCK_REALIZE ? LOOM_VISIT_SKIP : LOOM_VISIT_GO;
}

loom_status dlight_not_taken(loom_diag *why, const char *name, const char *what) {
  return loom_diag_error(why, (loom_loc){0}, "block '%s' %s", name, what);
}

enum { UNROLLED_STEPS = 4, UNROLLED_THREADS = 256 };

static loom_status bind_unrolled(loom_sched *s, loom_sched_rv fused, loom_diag *why) {
  loom_tval factors[3] = {loom_tval_none(), loom_tval_int(UNROLLED_STEPS),
                          loom_tval_int(UNROLLED_THREADS)};
  const loom_sched_rv *parts;
  TRY(loom_sched_split(s, fused, factors, 3, true, false, &parts, why));
  loom_sched_rv outer = parts[0], step = parts[1], inner = parts[2];
  TRY(loom_sched_bind(s, outer, "blockIdx.x", why));
  TRY(loom_sched_bind(s, inner, "threadIdx.x", why));
  return loom_sched_for_kind(s, LOOM_INST_UNROLL, step, why);
}

/* As bind_unrolled, each step a vector of vec contiguous elements a
 * thread (which the CUDA backend loads and stores 16 bytes at a time). */
static loom_status bind_vectors(loom_sched *s, loom_sched_rv fused, int64_t vec,
                                loom_diag *why) {
  loom_tval factors[4] = {loom_tval_none(), loom_tval_int(UNROLLED_STEPS),
                          loom_tval_int(UNROLLED_THREADS), loom_tval_int(vec)};
  const loom_sched_rv *parts;
  TRY(loom_sched_split(s, fused, factors, 4, true, false, &parts, why));
  loom_sched_rv outer = parts[0], step = parts[1], inner = parts[2], lanes = parts[3];
  TRY(loom_sched_bind(s, outer, "blockIdx.x", why));
  TRY(loom_sched_bind(s, inner, "threadIdx.x", why));
  TRY(loom_sched_for_kind(s, LOOM_INST_UNROLL, step, why));
  return loom_sched_for_kind(s, LOOM_INST_VECTORIZE, lanes, why);
}

typedef struct lane_use {
  const loom_var *v;
  int bits;  /* the widest element accessed */
  bool ok;
} lane_use;

/* An access moves one element with v or not at all: v in no dimension but
 * the last, which is v itself or does not use it. */
static void note_access(lane_use *u, const loom_buffer *b, loom_expr *const *idx, int n) {
  u->bits = b->dtype.bits > u->bits ? b->dtype.bits : u->bits;
  u->ok = u->ok && n > 0 && b->dtype.lanes == 1 && b->dtype.code != LOOM_DT_BOOL &&
          b->dtype.bits >= 8;
  for (int k = 0; u->ok && k < n; k++) {
    bool is_v = idx[k]->kind == LOOM_EXPR_VAR && idx[k]->u.var == u->v;
    u->ok = k == n - 1 ? is_v || !loom_ir_expr_uses(idx[k], u->v)
                       : !loom_ir_expr_uses(idx[k], u->v);
  }
}

static loom_visit note_load(void *ctx, loom_expr *e) {
  if (e->kind == LOOM_EXPR_LOAD)
    note_access(ctx, e->u.load.buffer, e->u.load.indices, e->u.load.n_indices);
  return LOOM_VISIT_GO;
}

/* Elements a thread takes at a time from the innermost loop of a block
 * whose body is one store and whose every access moves one element with
 * that loop or not at all (elementwise, a row broadcast): 16 bytes of its
 * widest element, when the loop's extent holds whole vectors. 1 otherwise:
 * a transpose, say, whose loads would not be contiguous. */
static int64_t vector_lanes(const space_block *sb, const loom_stmt *inner) {
  const loom_stmt *r = sb->realize;
  const loom_stmt *body = sb->block->body;
  lane_use u = {NULL, 8, true};
  for (int i = 0; i < r->u.realize.n_iter_values && i < sb->block->n_iter_vars; i++) {
    const loom_expr *x = r->u.realize.iter_values[i];
    if (x->kind == LOOM_EXPR_VAR && x->u.var == inner->u.loop.var)
      u.v = sb->block->iter_vars[i].var;
  }
  int64_t extent;
  if (!u.v || sb->block->init || !body || body->kind != LOOM_STMT_STORE ||
      !loom_ir_is_const_int(inner->u.loop.extent, &extent))
    return 1;
  note_access(&u, body->u.store.buffer, body->u.store.indices, body->u.store.n_indices);
  loom_ir_visitor v = {.expr_pre = note_load, .ctx = &u};
  loom_ir_visit_expr(&v, body->u.store.value);
  int64_t lanes = 128 / u.bits;
  return u.ok && extent % lanes == 0 ? lanes : 1;
}

/* Spreads a fused spatial loop of the given extent (-1: not constant) over
 * blocks and threads, vec elements a thread at a time where they fit. */
static loom_status bind_fused(loom_sched *s, loom_sched_rv fused, int64_t extent,
                              int64_t vec, const loom_target *t, loom_diag *why) {
  /* A nest large enough to give every multiprocessor a few blocks of 256
   * threads, four elements each, gets that: four unrolled steps, each
   * coalesced across the block. One element a thread in blocks of 1024 spends
   * a third of the memory bandwidth on launching blocks (measured on an
   * H200: a float16 copy 0.80 ms, against 0.29 ms). */
  int sms = t->gpu.multiprocessors > 0 ? t->gpu.multiprocessors : 1;
  int64_t per_block = (int64_t)UNROLLED_STEPS * UNROLLED_THREADS;
  if (vec > 1 && extent >= per_block * vec * 4 * sms && extent % (per_block * vec) == 0)
    return bind_vectors(s, fused, vec, why);
  if (extent >= per_block * 4 * sms)
    return bind_unrolled(s, fused, why);
  int64_t threads = t->gpu.max_threads_per_block > 0 ? t->gpu.max_threads_per_block : 1024;
  if (extent >= 0 && extent < threads)
    threads = extent > 0 ? extent : 1;
  loom_tval factors[2] = {loom_tval_none(), loom_tval_int(threads)};
  const loom_sched_rv *halves;
  TRY(loom_sched_split(s, fused, factors, 2, true, false, &halves, why));
  loom_sched_rv outer = halves[0], inner = halves[1];
  TRY(loom_sched_bind(s, outer, "blockIdx.x", why));
  return loom_sched_bind(s, inner, "threadIdx.x", why);
}

/* A block whose loops hold other blocks too: the outer loops that nest
 * perfectly and may run in parallel for every block under them are fused and
 * spread, and each block keeps the loops below. */
static loom_status bind_shared(loom_sched *s, const char *name, const space_block *sb,
                               const loom_target *t, loom_diag *why) {
  loom_sched_rv block, shared[SPACE_MAX_LOOPS];
  const loom_sched_rv *loops;
  int n_loops, n = 0;
  TRY(loom_sched_get_block(s, name, NULL, &block, why));
  TRY(loom_sched_get_loops(s, block, &loops, &n_loops, why));
  int64_t extent = 1, e;
  while (n < n_loops && n < sb->n_loops &&
         (n == 0 || sb->loops[n - 1]->u.loop.body == sb->loops[n]) &&
         loom_sched_loop_is_parallel(s, loops[n])) {
    bool is_const = loom_ir_is_const_int(sb->loops[n]->u.loop.extent, &e);
    extent = extent >= 0 && is_const ? extent * e : -1;
    shared[n] = loops[n];
    n++;
  }
  if (n == 0)
    return dlight_not_taken(why, name,
                            "shares its loops with other blocks, and the outermost "
                            "may not run in parallel");
  loom_sched_rv fused = shared[0];
  if (n > 1)
    TRY(loom_sched_fuse(s, shared, n, true, &fused, why));
  return bind_fused(s, fused, extent, 1, t, why);
}

loom_status dlight_bind_spatial(loom_sched *s, const char *name, const loom_target *t,
                                loom_diag *why) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!space_find_block(f, name, &sb) || !sb.scope ||
      sb.scope->u.realize.block->body == NULL)
    return dlight_not_taken(why, name, "is not a block under the function's root");
  if (sb.n_loops == 0)
    return dlight_not_taken(why, name, "has no loop");
  if (dlight_binds_threads(sb.loops[0]))
    return dlight_not_taken(why, name, "binds threads already");
  int n_blocks = 0;
  loom_ir_visitor v = {.stmt_pre = count_block, .ctx = &n_blocks};
  loom_ir_visit_stmt(&v, (loom_stmt *)sb.loops[0]);
  if (n_blocks != 1)
    return bind_shared(s, name, &sb, t, why);
  if (sb.is_nested_oddly)
    return dlight_not_taken(why, name, "sits under a condition or a let between its loops");
  dlight_nest nest;
  dlight_nest_of(&sb, &nest);
  if (nest.n_spatial == 0)
    return dlight_not_taken(why, name, "has no spatial loop to spread over threads");
  loom_sched_rv ordered[SPACE_MAX_LOOPS];
  TRY(dlight_nest_reorder(s, name, &nest, ordered, why));
  /* The spatial loops up to the first whose extent is not constant (a
   * triangular nest's inner loop depends on an outer one, and fuse refuses
   * it): those go to threads, the rest stay in each thread. */
  int n_fused = 0;
  int64_t extent = 1, e;
  while (n_fused < nest.n_spatial &&
         loom_ir_is_const_int(sb.loops[nest.order[n_fused]]->u.loop.extent, &e)) {
    extent *= e;
    n_fused++;
  }
  if (n_fused == 0)
    return dlight_not_taken(why, name, "has no spatial loop of constant extent outermost");
  int64_t vec = n_fused == nest.n_loops ? vector_lanes(&sb, sb.loops[nest.order[n_fused - 1]]) : 1;
  loom_sched_rv fused = ordered[0];
  if (n_fused > 1)
    TRY(loom_sched_fuse(s, ordered, n_fused, true, &fused, why));
  return bind_fused(s, fused, extent, vec, t, why);
}

loom_status dlight_each_block(loom_sched **s, const loom_target *t, dlight_step step,
                              char *const *names, int n, bool *is_taken, int *n_taken,
                              loom_diag *first) {
  *n_taken = 0;
  for (int i = 0; i < n; i++) {
    if (is_taken[i])
      continue;
    loom_sched *c = loom_sched_copy(*s);
    if (!c)
      return LOOM_NOMEM;
    loom_diag why;
    loom_diag_init(&why);
    loom_status st = step(c, names[i], t, &why);
    if (st == LOOM_ERROR && first && !first->has_error)
      loom_diag_error(first, (loom_loc){0}, "%s", why.msg ? why.msg : "not taken");
    loom_diag_free(&why);
    loom_sched_free(st == LOOM_OK ? *s : c);
    if (st == LOOM_NOMEM)
      return st;
    if (st == LOOM_OK) {
      *s = c;
      is_taken[i] = true;
      (*n_taken)++;
    }
  }
  return LOOM_OK;
}

loom_status dlight_bind_others(loom_sched **s, const loom_target *t,
                               const char *const *skip, int n_skip, int *n_bound) {
  char *names[SPACE_MAX_BLOCKS];
  bool is_taken[SPACE_MAX_BLOCKS] = {false};
  int n = dlight_block_names(*s, names, SPACE_MAX_BLOCKS);
  if (n < 0)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n_skip; k++)
      is_taken[i] |= !strcmp(names[i], skip[k]);
  loom_status st = dlight_each_block(s, t, dlight_bind_spatial, names, n, is_taken, n_bound,
                                     NULL);
  dlight_names_free(names, n);
  return st;
}

static loom_status fallback(loom_sched **s, const loom_target *t, loom_diag *why) {
  int n_bound;
  TRY(dlight_bind_others(s, t, NULL, 0, &n_bound));
  if (n_bound > 0)
    return LOOM_OK;
  return loom_diag_error(why, (loom_loc){0},
                         "no block has loops of its own with a spatial one to spread "
                         "over threads");
}

const loom_dlight_rule dlight_rule_fallback = {"Fallback", fallback};
