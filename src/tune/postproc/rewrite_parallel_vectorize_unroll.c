/* RewriteParallelVectorizeUnroll: turns the root block's
 * meta_schedule.parallel / vectorize / unroll_* marks into loops. For each
 * block directly under the root: the outermost spatial loops are fused and
 * parallelized while their extent stays within the parallel limit (the
 * loop that passes it is still taken, as in TVM), the innermost loop is
 * vectorized when it is spatial, within the vector limit and contiguous in
 * every buffer the block accesses, and the first loop of a block that is
 * not spatial gets pragma_auto_unroll_max_step / pragma_unroll_explicit.
 * Elementwise updates in place are parallelized and vectorized too: no
 * iteration reads what another writes. */
#include "tune/space_impl.h"

#include <string.h>

typedef struct marks {
  int64_t parallel, vectorize, unroll;
  bool has_parallel, has_vectorize, has_explicit, has_implicit;
} marks;

static bool int_ann(const loom_block *b, const char *key, int64_t *v) {
  const loom_value *x = loom_ir_attr_get(b->annotations, b->n_annotations, key);
  return x && x->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(x->expr, v);
}

static bool iters_spatial_under(const loom_stmt *s, const loom_var *v,
                                int depth);

/* A loop is spatial when every block iter bound through it, in every
 * block under it, is spatial (TVM's GetLoopIterType). */
static bool is_spatial_loop(const loom_stmt *loop) {
  return iters_spatial_under(loop->u.loop.body, loop->u.loop.var, 0);
}

static bool iters_spatial_under(const loom_stmt *s, const loom_var *v,
                                int depth) {
  if (!s || depth > 400)
    return true;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    for (int i = 0; i < s->u.realize.n_iter_values; i++)
      if (b->iter_vars[i].kind != LOOM_ITER_SPATIAL &&
          loom_ir_expr_uses(s->u.realize.iter_values[i], v))
        return false;
    return iters_spatial_under(b->init, v, depth + 1) &&
           iters_spatial_under(b->body, v, depth + 1);
  }
  case LOOM_STMT_FOR: return iters_spatial_under(s->u.loop.body, v, depth + 1);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (!iters_spatial_under(s->u.seq.stmts[i], v, depth + 1))
        return false;
    return true;
  case LOOM_STMT_IF:
    return iters_spatial_under(s->u.if_.then_case, v, depth + 1) &&
           iters_spatial_under(s->u.if_.else_case, v, depth + 1);
  case LOOM_STMT_LET: return iters_spatial_under(s->u.let.body, v, depth + 1);
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: return true;
  }
  return true;
}

static bool is_plain(const loom_stmt *loop, int64_t *extent) {
  int64_t min;
  return loop->u.loop.kind == LOOM_FOR_SERIAL && !loop->u.loop.n_annotations &&
         loom_ir_is_const_int(loop->u.loop.min, &min) && min == 0 &&
         loom_ir_is_const_int(loop->u.loop.extent, extent) && *extent > 0;
}

/* The statement right under sb's loop k: the next loop or the block. */
static bool is_chain(const space_block *sb, int k) {
  const loom_stmt *next =
      k + 1 < sb->n_loops ? sb->loops[k + 1] : sb->realize;
  return sb->loops[k]->u.loop.body == next;
}

/* e is a multiple of m: a constant one, a product with one, or a sum of
 * them. */
static bool is_multiple(const loom_expr *e, int64_t m) {
  int64_t c;
  if (loom_ir_is_const_int(e, &c))
    return c % m == 0;
  if (e->kind == LOOM_EXPR_MUL)
    return is_multiple(e->u.bin.a, m) || is_multiple(e->u.bin.b, m);
  if (e->kind == LOOM_EXPR_ADD || e->kind == LOOM_EXPR_SUB)
    return is_multiple(e->u.bin.a, m) && is_multiple(e->u.bin.b, m);
  return false;
}

/* e is v plus multiples of m: v's m steps start at a multiple of m. */
static bool is_aligned(const loom_expr *e, const loom_var *v, int64_t m) {
  if (e->kind == LOOM_EXPR_VAR)
    return e->u.var == v;
  if (e->kind == LOOM_EXPR_ADD)
    return (is_aligned(e->u.bin.a, v, m) && is_multiple(e->u.bin.b, m)) ||
           (is_aligned(e->u.bin.b, v, m) && is_multiple(e->u.bin.a, m));
  return e->kind == LOOM_EXPR_SUB && is_aligned(e->u.bin.a, v, m) &&
         is_multiple(e->u.bin.b, m);
}

/* iv // c or iv % c (kind) with c a multiple of the loop's steps. */
static bool is_packed(const loom_expr *e, loom_expr_kind kind, const loom_var *iv,
                      int64_t steps) {
  int64_t c;
  return steps > 0 && e->kind == kind && e->u.bin.a->kind == LOOM_EXPR_VAR &&
         e->u.bin.a->u.var == iv && loom_ir_is_const_int(e->u.bin.b, &c) && c > 0 &&
         c % steps == 0;
}

/* Contiguous: the iter moving with the loop indexes only the last
 * dimension of every region the block reads or writes, at iter plus an
 * offset. A packed layout counts too (B_global[vj // 16, vk, vj % 16]):
 * when the loop's steps of the iter are aligned (steps > 0), iv // c stays
 * put and iv % c moves by one. */
static bool region_contiguous(const loom_buffer_region *r, int n,
                              const loom_var *iv, int64_t steps) {
  for (int i = 0; i < n; i++) {
    int nd = r[i].n_ranges;
    for (int k = 0; k < nd; k++) {
      const loom_expr *m = r[i].ranges[k].min;
      if (!loom_ir_expr_uses(m, iv) && !loom_ir_expr_uses(r[i].ranges[k].extent, iv))
        continue;
      if (is_packed(m, LOOM_EXPR_FLOORDIV, iv, steps))
        continue;
      if (k != nd - 1)
        return false;
      if (!space_is_unit_in(m, iv) && !is_packed(m, LOOM_EXPR_FLOORMOD, iv, steps))
        return false;
    }
  }
  return true;
}

static bool is_contiguous(const space_block *sb, const loom_stmt *loop) {
  const loom_var *iv = space_unit_iter(sb, loop->u.loop.var);
  if (!iv)
    return false;
  const loom_block *b = sb->block;
  int at = space_iter_index(b, iv);
  int64_t steps;
  if (!loom_ir_is_const_int(loop->u.loop.extent, &steps) || steps < 1 ||
      !is_aligned(sb->realize->u.realize.iter_values[at], loop->u.loop.var, steps))
    steps = 0;
  return region_contiguous(b->reads, b->n_reads, iv, steps) &&
         region_contiguous(b->writes, b->n_writes, iv, steps);
}

static loom_status rewrite_block(loom_sched *s, loom_sched_rv brv,
                                 const marks *mk, loom_diag *d) {
  const loom_block *blk = loom_sched_rv_block(s, brv);
  space_block sb;
  if (!blk || !space_find_block(space_func(s), blk->name, &sb))
    return LOOM_OK;
  const loom_sched_rv *lp;
  int n;
  TRY(loom_sched_get_loops(s, brv, &lp, &n, d));
  if (n == 0 || n != sb.n_loops)
    return LOOM_OK;
  loom_sched_rv loops[SPACE_MAX_LOOPS];
  memcpy(loops, lp, (size_t)n * sizeof *loops);
  int n_par = 0, n_vec = 0;
  int64_t ext, prod = 1;
  bool is_legal = space_is_parallelizable(sb.block);
  for (int i = 0; is_legal && mk->has_parallel && i < n; i++) {
    const loom_stmt *l = sb.loops[i];
    if (!is_spatial_loop(l) || !is_plain(l, &ext))
      break;
    n_par++;
    prod *= ext;
    if (prod > mk->parallel || !is_chain(&sb, i))
      break;
  }
  /* A loop the block's own properties allow may still carry a dependence
   * of another block under it (a producer computed at it that writes
   * overlapping regions each iteration): parallelize the loops before the
   * first that may not run in parallel. Each loop of the band carrying
   * none is the same as their fusion carrying none. */
  for (int i = 0; i < n_par; i++)
    if (!loom_sched_loop_is_parallel(s, loops[i])) {
      n_par = i;
      prod = 1;
      for (int j = 0; j < i; j++)
        prod *= is_plain(sb.loops[j], &ext) ? ext : 1;
      break;
    }
  if (prod == 1)
    n_par = 0;
  const loom_stmt *inner = sb.loops[n - 1];
  if (is_legal && mk->has_vectorize && is_spatial_loop(inner) && is_plain(inner, &ext) &&
      ext > 1 && ext <= mk->vectorize && inner->u.loop.body == sb.realize &&
      is_contiguous(&sb, inner))
    n_vec = 1;
  if (n_par > n - n_vec)
    n_par = n - n_vec;
  loom_sched_rv first = loops[0];
  if (n_par > 0) {
    loom_sched_rv fused;
    TRY(loom_sched_fuse(s, loops, n_par, true, &fused, d));
    TRY(loom_sched_for_kind(s, LOOM_INST_PARALLEL, fused, d));
    first = fused;
  }
  if (n_vec > 0) {
    loom_sched_rv fused;
    TRY(loom_sched_fuse(s, &loops[n - 1], 1, true, &fused, d));
    TRY(loom_sched_for_kind(s, LOOM_INST_VECTORIZE, fused, d));
    if (n == 1)
      first = fused;
  }
  if ((mk->has_explicit || mk->has_implicit) && mk->unroll > 0 &&
      !space_is_spatial(sb.block)) {
    TRY(space_annotate(s, first, "pragma_auto_unroll_max_step",
                       loom_tval_int(mk->unroll), d));
    TRY(space_annotate(s, first, "pragma_unroll_explicit",
                       loom_tval_int(mk->has_explicit), d));
  }
  return LOOM_OK;
}

loom_status space_rewrite_parallel_vectorize_unroll(loom_sched *s,
                                                    loom_diag *d) {
  const loom_func *f = space_func(s);
  if (!f || !f->body || f->body->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_OK;
  const loom_block *root = f->body->u.realize.block;
  marks mk = {0};
  mk.has_parallel = int_ann(root, SPACE_ANN_PARALLEL, &mk.parallel);
  mk.has_vectorize = int_ann(root, SPACE_ANN_VECTORIZE, &mk.vectorize);
  mk.has_explicit = int_ann(root, SPACE_ANN_UNROLL_EXPLICIT, &mk.unroll);
  if (!mk.has_explicit)
    mk.has_implicit = int_ann(root, SPACE_ANN_UNROLL_IMPLICIT, &mk.unroll);
  if (!mk.has_parallel && !mk.has_vectorize && !mk.has_explicit &&
      !mk.has_implicit)
    return LOOM_OK;
  loom_sched_rv r;
  TRY(space_get_block(s, f->name, root->name, &r, d));
  static const char *const keys[] = {SPACE_ANN_PARALLEL, SPACE_ANN_VECTORIZE,
                                     SPACE_ANN_UNROLL_EXPLICIT,
                                     SPACE_ANN_UNROLL_IMPLICIT};
  for (int i = 0; i < 4; i++)
    if (space_has_ann(root->annotations, root->n_annotations, keys[i]))
      TRY(space_unannotate(s, r, keys[i], d));
  loom_tval in = loom_tval_rv(r);
  const loom_sched_rv *kids;
  int n_kids;
  TRY(space_apply(s, LOOM_INST_GET_CHILD_BLOCKS, &in, 1, NULL, 0, &kids,
                  &n_kids, d));
  loom_sched_rv blocks[SPACE_MAX_BLOCKS];
  if (n_kids > SPACE_MAX_BLOCKS)
    n_kids = SPACE_MAX_BLOCKS;
  memcpy(blocks, kids, (size_t)n_kids * sizeof *blocks);
  for (int i = 0; i < n_kids; i++)
    TRY(rewrite_block(s, blocks[i], &mk, d));
  return LOOM_OK;
}
