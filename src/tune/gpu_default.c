/* The default GPU schedule (dlight's Fallback): blocks inlined where they
 * can be, then every block under the root whose loops hold it alone gets
 * its loops ordered spatial, reduce, other;
 * the spatial loops fused and split by the target's threads per block; the
 * two halves bound to blockIdx.x and threadIdx.x. A reduction then runs
 * serially in each thread: correct, not fast. A block the steps do not fit
 * (loops shared with other blocks, a nest with conditions in it, a step
 * refused) is left as it is, and the GPU lowering runs it in a kernel of
 * one thread. */
#include "loom/tune.h"
#include "tune/space_impl.h"

#include <string.h>

#define MAX_BLOCKS 256

static loom_visit find_bound(void *ctx, loom_stmt *s) {
  (void)ctx;
  return s->kind == LOOM_STMT_FOR && s->u.loop.kind == LOOM_FOR_THREAD_BINDING
             ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

static loom_visit count_block(void *ctx, loom_stmt *s) {
  *(int *)ctx += s->kind == LOOM_STMT_BLOCK_REALIZE;
  return s->kind == LOOM_STMT_BLOCK_REALIZE ? LOOM_VISIT_SKIP : LOOM_VISIT_GO;
}

/* Binds the loops of the block named name in t; LOOM_ERROR (d says why)
 * when a step is refused or the block does not fit. */
static loom_status bind_block(loom_sched *t, const char *name, const loom_target *tg,
                              loom_diag *d) {
  space_block sb;
  const loom_func *f = space_func(t);
  if (!space_find_block(f, name, &sb) || sb.n_loops == 0 || sb.is_nested_oddly ||
      !sb.scope || sb.scope->u.realize.block->body == NULL)
    return LOOM_ERROR;
  int n_blocks = 0;
  loom_ir_visitor v = {.stmt_pre = count_block, .ctx = &n_blocks};
  loom_ir_visit_stmt(&v, sb.loops[0]);
  loom_ir_visitor bv = {.stmt_pre = find_bound};
  if (n_blocks != 1 || !loom_ir_visit_stmt(&bv, sb.loops[0]))
    return LOOM_ERROR;
  /* S loops first, then R, then the others, each in their order. */
  int order[SPACE_MAX_LOOPS], n = 0, n_spatial = 0;
  int64_t spatial_extent = 1;
  bool is_const = true;
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < sb.n_loops; i++) {
      const loom_iter_var *iv = space_iter_of_loop(&sb, sb.loops[i]->u.loop.var);
      int kind = !iv ? 2 : iv->kind == LOOM_ITER_SPATIAL ? 0 : iv->kind == LOOM_ITER_REDUCE ? 1 : 2;
      if (kind != pass)
        continue;
      order[n++] = i;
      if (pass == 0) {
        int64_t e;
        n_spatial++;
        if (loom_ir_is_const_int(sb.loops[i]->u.loop.extent, &e))
          spatial_extent *= e;
        else
          is_const = false;
      }
    }
  if (n_spatial == 0)
    return LOOM_ERROR;
  loom_sched_rv block;
  const loom_sched_rv *loops;
  int n_loops;
  TRY(loom_sched_get_block(t, name, NULL, &block, d));
  TRY(loom_sched_get_loops(t, block, &loops, &n_loops, d));
  if (n_loops != sb.n_loops)
    return LOOM_ERROR;
  loom_sched_rv ordered[SPACE_MAX_LOOPS];
  bool is_reordered = false;
  for (int i = 0; i < n; i++) {
    ordered[i] = loops[order[i]];
    is_reordered |= order[i] != i;
  }
  if (is_reordered)
    TRY(loom_sched_reorder(t, ordered, n, d));
  loom_sched_rv fused = ordered[0];
  if (n_spatial > 1)
    TRY(loom_sched_fuse(t, ordered, n_spatial, true, &fused, d));
  int64_t threads = tg->gpu.max_threads_per_block > 0 ? tg->gpu.max_threads_per_block : 1024;
  if (is_const && spatial_extent < threads)
    threads = spatial_extent > 0 ? spatial_extent : 1;
  loom_tval factors[2] = {loom_tval_none(), loom_tval_int(threads)};
  const loom_sched_rv *halves;
  TRY(loom_sched_split(t, fused, factors, 2, true, false, &halves, d));
  loom_sched_rv outer = halves[0], inner = halves[1];
  TRY(loom_sched_bind(t, outer, "blockIdx.x", d));
  return loom_sched_bind(t, inner, "threadIdx.x", d);
}

/* Applies kind (compute_inline, reverse_compute_inline) to the block
 * named name of *s, keeping the result when the primitive allows it. */
static loom_status try_one(loom_sched **s, loom_inst_kind kind, const char *name,
                           bool *is_done) {
  loom_sched *c = loom_sched_copy(*s);
  if (!c)
    return LOOM_NOMEM;
  loom_diag why;
  loom_diag_init(&why);
  loom_sched_rv block;
  bool ok = loom_sched_get_block(c, name, NULL, &block, &why) == LOOM_OK;
  loom_tval in = loom_tval_rv(block);
  ok = ok && space_apply(c, kind, &in, 1, NULL, 0, NULL, NULL, &why) == LOOM_OK;
  loom_diag_free(&why);
  loom_sched_free(ok ? *s : c);
  if (ok)
    *s = c;
  *is_done |= ok;
  return LOOM_OK;
}

/* dlight's try_inline: every block compute-inlined, else reverse-inlined
 * into its producer, where the primitive allows it, until neither applies:
 * fewer kernels, and no intermediate buffer between elementwise steps. */
static loom_status inline_all(loom_sched **s) {
  for (int round = 0; round < MAX_BLOCKS; round++) {
    const char *names[MAX_BLOCKS];
    int n = space_block_names(space_func(*s), names, MAX_BLOCKS);
    bool is_done = false;
    for (int i = 0; i < n; i++) {
      TRY(try_one(s, LOOM_INST_COMPUTE_INLINE, names[i], &is_done));
      if (!is_done)
        TRY(try_one(s, LOOM_INST_REVERSE_COMPUTE_INLINE, names[i], &is_done));
      if (is_done)
        break; /* the block names changed: list them again */
    }
    if (!is_done)
      return LOOM_OK;
  }
  return LOOM_OK;
}

loom_status loom_tune_gpu_default(loom_arena *a, const loom_func *f,
                                  const loom_target *t, loom_sched **sched,
                                  const loom_func **out, loom_diag *d) {
  (void)d;
  *sched = NULL;
  *out = f;
  loom_ir_visitor bv = {.stmt_pre = find_bound};
  if (!loom_ir_visit_stmt(&bv, f->body))
    return LOOM_OK; /* scheduled for a GPU already */
  const loom_func *nf = loom_tune_normalized(a, f);
  loom_module *m = loom_ir_module(a);
  if (!nf || !m || !(m->funcs = loom_arena_alloc(a, sizeof *m->funcs)))
    return LOOM_NOMEM;
  m->funcs[0] = (loom_func *)nf;
  m->n_funcs = 1;
  loom_sched *s = loom_sched_new(m, 0);
  if (!s)
    return LOOM_NOMEM;
  loom_status st = inline_all(&s);
  if (st != LOOM_OK) {
    loom_sched_free(s);
    return st;
  }
  const char *names[MAX_BLOCKS];
  int n = space_block_names(nf, names, MAX_BLOCKS);
  for (int i = 0; i < n; i++) {
    loom_sched *c = loom_sched_copy(s);
    if (!c) {
      loom_sched_free(s);
      return LOOM_NOMEM;
    }
    loom_diag why;
    loom_diag_init(&why);
    bool is_bound = bind_block(c, names[i], t, &why) == LOOM_OK;
    loom_diag_free(&why);
    loom_sched_free(is_bound ? s : c);
    if (is_bound)
      s = c;
  }
  *sched = s;
  *out = loom_sched_module(s)->funcs[0];
  return LOOM_OK;
}
