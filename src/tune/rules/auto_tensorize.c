/* AutoTensorize (only with the target's -tensorize=1), in the manner of
 * MetaSchedule's MultiLevelTilingWithIntrin: a block whose innermost loops
 * can be split to the loop nest of a tensor intrinsic's description (same
 * iter kinds, extents that divide) gets a space of its own: those loops are
 * split to the intrinsic's extents and moved innermost, the loops outside
 * are tiled (spatial ones in two levels by sample_perfect_tile, reductions
 * after them: S S R), and the inner nest is tensorized. tensorize itself
 * decides whether the body matches; when it refuses, no space is made. The
 * block also keeps its untensorized schedule, after the tensorized ones, for
 * the rules that follow. */
#include "tune/space_impl.h"

#include <string.h>

#define MAX_INTRIN_LOOPS 8

/* The loop nest of an intrinsic's description: extents and the kind of the
 * iter each loop binds, outermost first. */
typedef struct intrin_shape {
  const char *name;
  int64_t ext[MAX_INTRIN_LOOPS];
  loom_iter_kind kind[MAX_INTRIN_LOOPS];
  int n;
} intrin_shape;

static bool walk_shape(const loom_stmt *s, intrin_shape *out) {
  const loom_var *vars[MAX_INTRIN_LOOPS];
  out->n = 0;
  while (s && s->kind == LOOM_STMT_FOR) {
    if (out->n == MAX_INTRIN_LOOPS ||
        !loom_ir_is_const_int(s->u.loop.extent, &out->ext[out->n]))
      return false;
    vars[out->n++] = s->u.loop.var;
    s = s->u.loop.body;
  }
  if (!s || s->kind != LOOM_STMT_BLOCK_REALIZE || out->n == 0)
    return false;
  const loom_block *b = s->u.realize.block;
  for (int j = 0; j < out->n; j++) {
    bool found = false;
    for (int i = 0; i < b->n_iter_vars && !found; i++) {
      const loom_expr *v = s->u.realize.iter_values[i];
      if (v->kind == LOOM_EXPR_VAR && v->u.var == vars[j]) {
        out->kind[j] = b->iter_vars[i].kind;
        found = true;
      }
    }
    if (!found)
      return false;
  }
  return true;
}

/* False when the description is not a plain loop nest around one block
 * bound loop by loop (nothing to split the block's loops to). */
static bool read_shape(const loom_sched_intrin *t, intrin_shape *out) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  bool ok = a && loom_script_read(t->desc, strlen(t->desc), t->name, a, &m,
                                  &d) == LOOM_OK &&
            m->n_funcs == 1 && m->funcs[0]->body &&
            m->funcs[0]->body->kind == LOOM_STMT_BLOCK_REALIZE &&
            walk_shape(m->funcs[0]->body->u.realize.block->body, out);
  out->name = t->name;
  loom_diag_free(&d);
  loom_arena_free(a);
  return ok;
}

/* The block's innermost loops have the shape's kinds and extents that the
 * shape's divide. */
static bool fits(const space_block *sb, const intrin_shape *sh) {
  if (sb->n_loops < sh->n)
    return false;
  for (int j = 0; j < sh->n; j++) {
    const loom_stmt *l = sb->loops[sb->n_loops - sh->n + j];
    const loom_iter_var *iv = space_iter_of_loop(sb, l->u.loop.var);
    int64_t e;
    if (!iv || iv->kind != sh->kind[j] ||
        !loom_ir_is_const_int(l->u.loop.extent, &e) || e % sh->ext[j])
      return false;
  }
  return true;
}


/* Splits, tiles, reorders and tensorizes on t. */
static loom_status tensorize_block(const space_ctx *x, loom_sched *t,
                                   const space_block *sb, loom_sched_rv block,
                                   const intrin_shape *sh, loom_diag *d) {
  const loom_sched_rv *lp, *parts;
  int n;
  TRY(loom_sched_get_loops(t, block, &lp, &n, d));
  if (n != sb->n_loops || n > SPACE_MAX_LOOPS)
    return loom_diag_error(d, (loom_loc){0}, "unexpected loop nest");
  loom_sched_rv loops[SPACE_MAX_LOOPS];
  memcpy(loops, lp, (size_t)n * sizeof *loops);
  /* The loops outside the intrinsic (with the outer parts of the split
   * ones, in place) and the intrinsic's own. */
  loom_sched_rv outer[SPACE_MAX_LOOPS], inner[MAX_INTRIN_LOOPS];
  bool is_spatial[SPACE_MAX_LOOPS];
  int n_outer = 0;
  for (int i = 0; i < n; i++) {
    const loom_iter_var *iv = space_iter_of_loop(sb, sb->loops[i]->u.loop.var);
    bool sp = iv && iv->kind == LOOM_ITER_SPATIAL;
    int j = i - (n - sh->n);
    int64_t e;
    loom_ir_is_const_int(sb->loops[i]->u.loop.extent, &e);
    if (j < 0 || e > sh->ext[j]) {
      loom_sched_rv l = loops[i];
      if (j >= 0) {
        loom_tval f[2] = {loom_tval_none(), loom_tval_int(sh->ext[j])};
        TRY(loom_sched_split(t, loops[i], f, 2, true, false, &parts, d));
        l = parts[0];
        inner[j] = parts[1];
      }
      is_spatial[n_outer] = sp;
      outer[n_outer++] = l;
    } else {
      inner[j] = loops[i];
    }
  }
  /* S S R: two sampled levels of the spatial loops, then the reductions. */
  loom_sched_rv order[2 * SPACE_MAX_LOOPS + MAX_INTRIN_LOOPS];
  loom_sched_rv level1[SPACE_MAX_LOOPS], reds[SPACE_MAX_LOOPS];
  int n_order = 0, n_level1 = 0, n_reds = 0;
  for (int i = 0; i < n_outer; i++) {
    if (!is_spatial[i]) {
      reds[n_reds++] = outer[i];
      continue;
    }
    const loom_sched_rv *v;
    TRY(loom_sched_sample_perfect_tile(
        t, outer[i], 2, x->target->max_innermost_factor, &v, d));
    loom_tval f[2] = {loom_tval_rv(v[0]), loom_tval_rv(v[1])};
    TRY(loom_sched_split(t, outer[i], f, 2, true, false, &parts, d));
    order[n_order++] = parts[0];
    level1[n_level1++] = parts[1];
  }
  for (int i = 0; i < n_level1; i++)
    order[n_order++] = level1[i];
  for (int i = 0; i < n_reds; i++)
    order[n_order++] = reds[i];
  for (int j = 0; j < sh->n; j++)
    order[n_order++] = inner[j];
  TRY(loom_sched_reorder(t, order, n_order, d));
  return loom_sched_tensorize(t, inner[0], sh->name, true, d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!x->target->tensorize || !f || !space_find_block(f, name, &sb) ||
      !space_is_open_nest(&sb))
    return space_list_push(out, s);
  const loom_intrin_set *set = loom_sched_intrins(s);
  loom_status st = LOOM_OK;
  for (int i = 0; st == LOOM_OK && i < loom_sched_intrin_count(set); i++) {
    intrin_shape sh;
    const loom_sched_intrin *in = loom_sched_intrin_at(set, i);
    /* The tensor-core intrinsics are the GPU's; their fragments never
     * match a CPU block's buffers. */
    bool is_gpu = !strncmp(in->name, "wmma_", 5);
    if ((is_gpu && x->target->kind == LOOM_TARGET_CPU) || !read_shape(in, &sh) ||
        !fits(&sb, &sh))
      continue;
    loom_sched *t = loom_sched_copy(s);
    if (!t) {
      st = LOOM_NOMEM;
      break;
    }
    loom_diag d;
    loom_diag_init(&d);
    st = tensorize_block(x, t, &sb, rv, &sh, &d);
    loom_diag_free(&d);
    if (st == LOOM_OK) {
      st = space_list_push(out, t);
    } else {
      loom_sched_free(t);
      if (st != LOOM_NOMEM)
        st = LOOM_OK;
    }
  }
  if (st != LOOM_OK) {
    loom_sched_free(s);
    return st;
  }
  return space_list_push(out, s);
}

const space_rule space_rule_auto_tensorize = {"AutoTensorize", apply};
