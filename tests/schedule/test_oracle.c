/* The interpreter as oracle: random traces of random primitives with random
 * (often illegal) arguments and random decisions, applied to the programs
 * in tests/schedule/cases/. Every step either is refused, leaving the
 * schedule as it was, or gives a module that verifies and computes the
 * same outputs as the unscheduled program on the same random inputs. The
 * trace then replays from its script form and from its JSON form to the
 * same module. LOOM_ORACLE_RUNS sets the number of traces (default 480: 40 per
 * program). Directed traces follow, which start with the primitives that
 * need a particular pair or shape of blocks (fuse_reduction_epilogue,
 * pad_einsum, cache_inplace, cache_index) on every block of every
 * program. */
#include "interp_compare.h"
#include "loom/interp.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"

#include <stdlib.h>

static const char *const cases[] = {"matmul", "softmax", "conv2d", "branches",
                                    "twin", "chain",
                                    /* long-tail kernels, normalized */
                                    "seed_prefix_sum", "seed_inplace",
                                    "seed_branches", "seed_loop_from_one",
                                    "longtail_mix", "argmax"};
#define N_CASES (int)(sizeof cases / sizeof *cases)

typedef struct program {
  char *text;
  loom_arena *arena;
  loom_module *m;
  const char *blocks[8];
  int n_blocks;
} program;

static void collect_blocks(const loom_stmt *s, program *p) {
  if (!s)
    return;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE:
    if (strcmp(s->u.realize.block->name, "root") && p->n_blocks < 8)
      p->blocks[p->n_blocks++] = s->u.realize.block->name;
    collect_blocks(s->u.realize.block->body, p);
    break;
  case LOOM_STMT_FOR:
    collect_blocks(s->u.loop.body, p);
    break;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      collect_blocks(s->u.seq.stmts[i], p);
    break;
  case LOOM_STMT_IF:
    collect_blocks(s->u.if_.then_case, p);
    collect_blocks(s->u.if_.else_case, p);
    break;
  default:
    break;
  }
}

static bool load(const char *root, const char *name, program *p) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/schedule/cases/%s.py", root, name);
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  memset(p, 0, sizeof *p);
  bool ok = loom_read_file(path, &p->text, &len, &d) == LOOM_OK;
  p->arena = loom_arena_new();
  ok = ok && loom_script_read(p->text, len, path, p->arena, &p->m, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "%s: %s\n", path, d.msg ? d.msg : "?");
  loom_diag_free(&d);
  if (ok)
    collect_blocks(p->m->funcs[0]->body, p);
  return ok;
}

static bool same_outputs(const loom_func *a, const loom_func *b,
                         uint64_t seed) {
  loom_interp_array *x[8] = {0}, *y[8] = {0};
  bool ok = a->n_params <= 8 && interp_run_random(a, seed, x) &&
            interp_run_random(b, seed, y);
  for (int i = 0; ok && i < a->n_params; i++) {
    char *why = NULL;
    if (x[i] && !loom_interp_compare(y[i], x[i], 1e-5, 1e-6, &why)) {
      fprintf(stderr, "output %d differs %s\n", i, why ? why : "");
      ok = false;
    }
    free(why);
  }
  loom_interp_free_args(a, x);
  loom_interp_free_args(b, y);
  return ok;
}

static bool touches(const loom_buffer_region *r, int n, const loom_buffer *b) {
  for (int i = 0; i < n; i++)
    if (r[i].buffer == b)
      return true;
  return false;
}

/* Whether e mentions v. */
static bool expr_uses(const loom_expr *e, const loom_var *v) {
  if (!e)
    return false;
  switch (e->kind) {
  case LOOM_EXPR_VAR:
    return e->u.var == v;
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
    return false;
  case LOOM_EXPR_ADD: case LOOM_EXPR_SUB: case LOOM_EXPR_MUL:
  case LOOM_EXPR_FLOORDIV: case LOOM_EXPR_FLOORMOD: case LOOM_EXPR_MIN:
  case LOOM_EXPR_MAX:
    return expr_uses(e->u.bin.a, v) || expr_uses(e->u.bin.b, v);
  default:
    return true; /* unsure: count it as used */
  }
}

/* Whether block `second` comes right after block `first` in the module as
 * it is now (blocks a step added, a cache stage say, count). */
static bool adjacent(const loom_sched *s, const char *first,
                     const char *second) {
  program now = {0};
  collect_blocks(loom_sched_module(s)->funcs[0]->body, &now);
  for (int i = 0; i + 1 < now.n_blocks; i++)
    if (!strcmp(now.blocks[i], first))
      return !strcmp(now.blocks[i + 1], second);
  return false;
}

/* Neither block writes a buffer the other accesses. */
static bool independent(const loom_block *x, const loom_block *y) {
  if (!x || !y)
    return false;
  for (int i = 0; i < x->n_writes; i++)
    if (touches(y->reads, y->n_reads, x->writes[i].buffer) ||
        touches(y->writes, y->n_writes, x->writes[i].buffer))
      return false;
  for (int i = 0; i < y->n_writes; i++)
    if (touches(x->reads, x->n_reads, y->writes[i].buffer))
      return false;
  return true;
}

/* How many iters the block named `name` under s has; 0 when absent. */
static int n_iters(const loom_stmt *s, const char *name) {
  if (!s)
    return 0;
  int n = 0;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE:
    if (!strcmp(s->u.realize.block->name, name))
      return s->u.realize.block->n_iter_vars;
    return n_iters(s->u.realize.block->body, name);
  case LOOM_STMT_FOR:
    return n_iters(s->u.loop.body, name);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts && !n; i++)
      n = n_iters(s->u.seq.stmts[i], name);
    return n;
  case LOOM_STMT_IF:
    n = n_iters(s->u.if_.then_case, name);
    return n ? n : n_iters(s->u.if_.else_case, name);
  default:
    return 0;
  }
}

/* One random step on a random block; refusals are fine. */
static void random_step(loom_sched *s, const program *p, loom_rng *r) {
  loom_diag d;
  loom_diag_init(&d);
  loom_sched_rv b;
  const loom_sched_rv *loops;
  int n_loops;
  int which = (int)loom_rng_below(r, (uint64_t)p->n_blocks);
  const char *name = p->blocks[which];
  if (loom_sched_get_block(s, name, NULL, &b, &d) != LOOM_OK ||
      loom_sched_get_loops(s, b, &loops, &n_loops, &d) != LOOM_OK ||
      n_loops == 0) {
    loom_diag_free(&d);
    return;
  }
  loom_sched_rv l[16];
  if (n_loops > 16)
    n_loops = 16;
  memcpy(l, loops, (size_t)n_loops * sizeof *l);
  loom_sched_rv pick = l[loom_rng_below(r, (uint64_t)n_loops)];
  const loom_sched_rv *outs;
  switch (loom_rng_below(r, 15)) {
  case 13: { /* compute_at / reverse_compute_at under another block's loop */
    loom_sched_rv b2;
    const loom_sched_rv *l2;
    int n2;
    const char *other = p->blocks[loom_rng_below(r, (uint64_t)p->n_blocks)];
    if (loom_sched_get_block(s, other, NULL, &b2, &d) == LOOM_OK &&
        loom_sched_get_loops(s, b2, &l2, &n2, &d) == LOOM_OK && n2 > 0) {
      loom_tval in[2] = {loom_tval_rv(b),
                         loom_tval_rv(l2[loom_rng_below(r, (uint64_t)n2)])};
      loom_tval attrs[2] = {loom_tval_bool(loom_rng_below(r, 2)),
                            loom_tval_int(loom_rng_below(r, 4) ? -1 : -2)};
      loom_loc nowhere = {0};
      loom_sched_apply(s, loom_rng_below(r, 2) ? LOOM_INST_COMPUTE_AT
                                               : LOOM_INST_REVERSE_COMPUTE_AT,
                       in, 2, attrs, 2, loom_tval_none(), nowhere, NULL, NULL,
                       &d);
    }
    break;
  }
  case 12: { /* buffer and iter changes that keep the semantics */
    loom_loc nowhere = {0};
    loom_tval in[2] = {loom_tval_rv(b), loom_tval_none()};
    int which_op = (int)loom_rng_below(r, 5);
    if (which_op >= 3) { /* cache_read / cache_write */
      static const char *const scopes[] = {"global", "local", "shared"};
      loom_tval attrs[2] = {loom_tval_int((int64_t)loom_rng_below(r, 2)),
                            loom_tval_str(scopes[loom_rng_below(r, 3)])};
      in[1] = (loom_tval){.kind = LOOM_TV_LIST};
      loom_sched_apply(s, which_op == 3 ? LOOM_INST_CACHE_READ
                                        : LOOM_INST_CACHE_WRITE,
                       in, 2, attrs, 2, loom_tval_none(), nowhere, NULL, NULL,
                       &d);
    } else if (which_op == 0) {
      loom_tval attrs[4] = {loom_tval_int(0),
                            loom_tval_int((int64_t)loom_rng_below(r, 3) - 1),
                            loom_tval_int(1 + (int64_t)loom_rng_below(r, 32)),
                            loom_tval_int((int64_t)loom_rng_below(r, 4))};
      loom_sched_apply(s, LOOM_INST_STORAGE_ALIGN, in, 1, attrs, 4,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
    } else if (which_op == 1) {
      loom_tval attrs[2] = {loom_tval_int(0), loom_tval_str("local")};
      loom_sched_apply(s, LOOM_INST_SET_SCOPE, in, 1, attrs, 2,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
    } else {
      const loom_block *blk = loom_sched_rv_block(s, b);
      int n = blk ? blk->n_iter_vars : 0;
      loom_tval perm[16];
      if (n > 16)
        break;
      for (int i = 0; i < n; i++)
        perm[i] = loom_tval_int(i);
      for (int i = n - 1; i > 0; i--) {
        int j = (int)loom_rng_below(r, (uint64_t)i + 1);
        loom_tval t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      in[1] = (loom_tval){.kind = LOOM_TV_LIST, .n = n, .items = perm};
      loom_sched_apply(s, LOOM_INST_REORDER_BLOCK_ITER_VAR, in, 2, NULL, 0,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
    }
    break;
  }
  case 11: { /* merge with the loop at the same depth of another block */
    loom_sched_rv b2;
    const loom_sched_rv *l2;
    int n2;
    /* The next block in program order, so that no statement moves across
     * another. */
    const char *other = which + 1 < p->n_blocks ? p->blocks[which + 1] : name;
    int depth = (int)loom_rng_below(r, (uint64_t)n_loops);
    /* merge, like TVM's, does not check dependences: draw only blocks
     * that share no written buffer. */
    if (loom_sched_get_block(s, other, NULL, &b2, &d) == LOOM_OK &&
        independent(loom_sched_rv_block(s, b), loom_sched_rv_block(s, b2)) &&
        adjacent(s, name, other) &&
        loom_sched_get_loops(s, b2, &l2, &n2, &d) == LOOM_OK && depth < n2) {
      loom_tval in[2] = {loom_tval_rv(l[depth]), loom_tval_rv(l2[depth])};
      loom_loc nowhere = {0};
      loom_sched_apply(s, LOOM_INST_MERGE, in, 2, NULL, 0, loom_tval_none(),
                       nowhere, NULL, NULL, &d);
    }
    break;
  }
  case 14: { /* a layout: split a buffer's first dimension, or fuse the
               * block's first two iters; or blockize */
    const loom_block *blk = loom_sched_rv_block(s, b);
    loom_loc nowhere = {0};
    char text[256];
    if (!blk)
      break;
    if (loom_rng_below(r, 4) == 0 && blk->n_iter_vars <= 8) {
      /* reindex_cache over the iters the region uses, in block order */
      bool w = loom_rng_below(r, 2);
      int nbuf = w ? blk->n_writes : blk->n_reads;
      if (nbuf == 0)
        break;
      int bi = (int)loom_rng_below(r, (uint64_t)nbuf);
      const loom_buffer_region *reg = w ? &blk->writes[bi] : &blk->reads[bi];
      int n = snprintf(text, sizeof text, "lambda ");
      for (int q = 0; q < blk->n_iter_vars; q++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%sp%d", q ? ", " : "",
                      q);
      n += snprintf(text + n, sizeof text - (size_t)n, ": (");
      int used = 0;
      for (int q = 0; q < blk->n_iter_vars; q++) {
        bool uses = false;
        for (int k = 0; k < reg->n_ranges; k++)
          uses |= expr_uses(reg->ranges[k].min, blk->iter_vars[q].var);
        if (uses) {
          n += snprintf(text + n, sizeof text - (size_t)n, "%sp%d",
                        used ? ", " : "", q);
          used++;
        }
      }
      snprintf(text + n, sizeof text - (size_t)n, ",)"); /* TVM's form */
      if (!used)
        break;
      loom_tval attrs[3] = {loom_tval_int(bi),
                            loom_tval_str(loom_rng_below(r, 2) ? "shared"
                                                               : "local"),
                            loom_tval_str(text)};
      loom_tval in = loom_tval_rv(b);
      loom_sched_apply(s, w ? LOOM_INST_REINDEX_CACHE_WRITE
                            : LOOM_INST_REINDEX_CACHE_READ,
                       &in, 1, attrs, 3, loom_tval_none(), nowhere, NULL, NULL,
                       &d);
      break;
    }
    if (loom_rng_below(r, 4) == 0) {
      bool w = loom_rng_below(r, 2);
      int nbuf = w ? blk->n_writes : blk->n_reads;
      loom_tval attrs[2] = {
          loom_tval_int((int64_t)loom_rng_below(r, (uint64_t)(nbuf ? nbuf : 1))),
          loom_tval_int(w)};
      loom_tval in = loom_tval_rv(b);
      loom_sched_apply(s, LOOM_INST_REINDEX, &in, 1, attrs, 2,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
      break;
    }
    if (loom_rng_below(r, 3) == 0) {
      loom_tval in = loom_tval_rv(pick);
      loom_tval keep = loom_tval_bool(loom_rng_below(r, 2));
      loom_sched_apply(s, LOOM_INST_BLOCKIZE, &in, 1, &keep, 1,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
      break;
    }
    if (loom_rng_below(r, 2) && blk->n_iter_vars >= 2) {
      int64_t e;
      if (!loom_ir_is_const_int(blk->iter_vars[1].dom.extent, &e))
        break;
      int n = snprintf(text, sizeof text, "lambda p0, p1");
      for (int k = 2; k < blk->n_iter_vars; k++)
        n += snprintf(text + n, sizeof text - (size_t)n, ", p%d", k);
      n += snprintf(text + n, sizeof text - (size_t)n, ": (p0 * %lld + p1,",
                    (long long)e);
      for (int k = 2; k < blk->n_iter_vars; k++)
        n += snprintf(text + n, sizeof text - (size_t)n, " p%d,", k);
      snprintf(text + n, sizeof text - (size_t)n, ")");
      loom_tval in = loom_tval_rv(b), map = loom_tval_str(text);
      loom_sched_apply(s, LOOM_INST_TRANSFORM_BLOCK_LAYOUT, &in, 1, &map, 1,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
      break;
    }
    bool is_read = loom_rng_below(r, 2);
    int nb = is_read ? blk->n_reads : blk->n_writes;
    if (nb == 0)
      break;
    int bi = (int)loom_rng_below(r, (uint64_t)nb);
    const loom_buffer *buf = is_read ? blk->reads[bi].buffer
                                     : blk->writes[bi].buffer;
    int64_t e0, k = 2 + (int64_t)loom_rng_below(r, 3);
    if (buf->ndim == 0 || !loom_ir_is_const_int(buf->shape[0], &e0))
      break;
    /* A parameter's new shape would change the signature the interpreter
     * compares; row-major splits keep the data, but not the rank. */
    const loom_func *fn = loom_sched_module(s)->funcs[0];
    bool is_param = false;
    for (int q = 0; q < fn->n_params; q++)
      is_param |= fn->params[q].buffer == buf;
    if (is_param)
      break;
    int n = snprintf(text, sizeof text, "lambda p0");
    for (int q = 1; q < buf->ndim; q++)
      n += snprintf(text + n, sizeof text - (size_t)n, ", p%d", q);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  ": (p0 // %lld, p0 %% %lld,", (long long)k, (long long)k);
    for (int q = 1; q < buf->ndim; q++)
      n += snprintf(text + n, sizeof text - (size_t)n, " p%d,", q);
    snprintf(text + n, sizeof text - (size_t)n, ")");
    loom_tval attrs[5] = {loom_tval_int(bi), loom_tval_int(!is_read),
                          loom_tval_str(text), loom_tval_none(),
                          loom_tval_bool(false)};
    loom_tval in = loom_tval_rv(b);
    loom_sched_apply(s, LOOM_INST_TRANSFORM_LAYOUT, &in, 1, attrs, 5,
                     loom_tval_none(), nowhere, NULL, NULL, &d);
    break;
  }
  case 10: {
    loom_tval in[2] = {loom_tval_rv(b), loom_tval_rv(pick)};
    loom_loc nowhere = {0};
    if (loom_rng_below(r, 2)) {
      loom_sched_apply(s, LOOM_INST_DECOMPOSE_REDUCTION, in, 2, NULL, 0,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
      break;
    }
    /* rfactor over a random loop, often after splitting it */
    if (loom_rng_below(r, 2)) {
      loom_tval f[2] = {loom_tval_none(),
                        loom_tval_int(2 + (int64_t)loom_rng_below(r, 3))};
      if (loom_sched_split(s, pick, f, 2, true, false, &outs, &d) == LOOM_OK)
        pick = outs[loom_rng_below(r, 2)];
    }
    loom_tval axis = loom_tval_int((int64_t)loom_rng_below(r, 5) - 2);
    in[0] = loom_tval_rv(pick);
    loom_sched_apply(s, LOOM_INST_RFACTOR, in, 1, &axis, 1, loom_tval_none(),
                     nowhere, NULL, NULL, &d);
    break;
  }
  case 9: {
    loom_tval in = loom_tval_rv(b);
    loom_loc nowhere = {0};
    loom_sched_apply(s, loom_rng_below(r, 2) ? LOOM_INST_COMPUTE_INLINE
                                            : LOOM_INST_REVERSE_COMPUTE_INLINE,
                     &in, 1, NULL, 0, loom_tval_none(), nowhere, NULL, NULL, &d);
    break;
  }
  case 0:
  case 1: { /* split with constants, maybe non-divisible, maybe a None */
    int n = 2 + (int)loom_rng_below(r, 2);
    loom_tval f[3];
    int none = (int)loom_rng_below(r, (uint64_t)n + 1);
    for (int i = 0; i < n; i++)
      f[i] = i == none ? loom_tval_none()
                       : loom_tval_int(1 + (int64_t)loom_rng_below(r, 5));
    loom_sched_split(s, pick, f, n, loom_rng_below(r, 2), false,
                     &outs, &d);
    break;
  }
  case 2: { /* sampled perfect tile, then split by it */
    int n = 2 + (int)loom_rng_below(r, 2);
    if (loom_sched_sample_perfect_tile(s, pick, n, 4, &outs, &d) == LOOM_OK) {
      loom_tval f[3];
      for (int i = 0; i < n; i++)
        f[i] = loom_tval_rv(outs[i]);
      loom_sched_split(s, pick, f, n, true, false, &outs, &d);
    }
    break;
  }
  case 3: { /* fuse a run of loops */
    int at = (int)loom_rng_below(r, (uint64_t)n_loops);
    int n = 1 + (int)loom_rng_below(r, (uint64_t)(n_loops - at));
    loom_sched_rv out;
    loom_sched_fuse(s, l + at, n, loom_rng_below(r, 2), &out, &d);
    break;
  }
  case 4:
  case 5: { /* reorder a random subset in a random order */
    loom_sched_rv sub[16];
    int n = 0;
    for (int i = 0; i < n_loops; i++)
      if (loom_rng_below(r, 2))
        sub[n++] = l[i];
    for (int i = n - 1; i > 0; i--) {
      int j = (int)loom_rng_below(r, (uint64_t)i + 1);
      loom_sched_rv t = sub[i];
      sub[i] = sub[j];
      sub[j] = t;
    }
    if (n)
      loom_sched_reorder(s, sub, n, &d);
    break;
  }
  case 6: {
    static const loom_inst_kind kinds[] = {LOOM_INST_PARALLEL,
                                           LOOM_INST_VECTORIZE,
                                           LOOM_INST_UNROLL};
    loom_sched_for_kind(s, kinds[loom_rng_below(r, 3)], pick, &d);
    break;
  }
  case 7:
    loom_sched_bind(s, pick, loom_rng_below(r, 2) ? "threadIdx.x" : "blockIdx.x",
                    &d);
    break;
  default: {
    loom_tval in[2] = {loom_tval_rv(pick), loom_tval_int(4)};
    loom_tval key = loom_tval_str("pragma_auto_unroll_max_step");
    loom_loc nowhere = {0};
    loom_sched_apply(s, LOOM_INST_ANNOTATE, in, 2, &key, 1, loom_tval_none(),
                     nowhere, NULL, NULL, &d);
    break;
  }
  }
  loom_diag_free(&d);
}

/* A tile for rolling_buffer: split a loop of another block (the consumer,
 * maybe) by a small factor, compute the block at the outer loop, roll its
 * buffer. Most draws are refused somewhere; a producer of windows (conv2d's
 * padding) rolls. */
static void random_rolling(loom_sched *s, const program *p, loom_rng *r,
                           const char *name) {
  loom_diag d;
  loom_diag_init(&d);
  loom_loc nowhere = {0};
  /* The next block in program order: the consumer, in a pipeline. */
  const char *other = NULL;
  for (int i = 0; i + 1 < p->n_blocks; i++)
    if (!strcmp(p->blocks[i], name))
      other = p->blocks[i + 1];
  loom_sched_rv b, b2;
  const loom_sched_rv *loops, *outs;
  int n_loops;
  if (other && loom_sched_get_block(s, name, NULL, &b, &d) == LOOM_OK &&
      loom_sched_get_block(s, other, NULL, &b2, &d) == LOOM_OK &&
      loom_sched_get_loops(s, b2, &loops, &n_loops, &d) == LOOM_OK &&
      n_loops > 0) {
    loom_tval f[2] = {loom_tval_none(),
                      loom_tval_int(2 + (int64_t)loom_rng_below(r, 3))};
    /* an outer loop: spatial, where windows overlap */
    loom_sched_rv l = loops[loom_rng_below(r, (uint64_t)(n_loops < 3 ? n_loops : 3))];
    if (loom_sched_split(s, l, f, 2, true, false, &outs, &d) == LOOM_OK) {
      loom_tval in[2] = {loom_tval_rv(b), loom_tval_rv(outs[0])};
      loom_tval attrs[2] = {loom_tval_bool(false), loom_tval_int(-1)};
      loom_tval idx = loom_tval_int(0);
      if (loom_sched_apply(s, LOOM_INST_COMPUTE_AT, in, 2, attrs, 2,
                           loom_tval_none(), nowhere, NULL, NULL,
                           &d) == LOOM_OK)
        loom_sched_apply(s, LOOM_INST_ROLLING_BUFFER, in, 1, &idx, 1,
                         loom_tval_none(), nowhere, NULL, NULL, &d);
    }
  }
  loom_diag_free(&d);
}

/* read_at or write_at of a random buffer of a random block at one of its
 * loops, in global, shared or local scope, or rolling_buffer of a random
 * block (applied where an earlier compute_at made overlapping tiles). Drawn after the other steps,
 * with its own generator, so that the traces drawn before stay as they
 * were. */
static void random_read_write_at(loom_sched *s, const program *p,
                                 loom_rng *r) {
  int times = (int)loom_rng_below(r, 3);
  for (int t = 0; t < times; t++) {
    static const char *const scopes[] = {"global", "shared", "local"};
    loom_diag d;
    loom_diag_init(&d);
    loom_sched_rv b;
    const loom_sched_rv *loops;
    int n_loops;
    const char *name = p->blocks[loom_rng_below(r, (uint64_t)p->n_blocks)];
    bool is_write = loom_rng_below(r, 2);
    if (loom_rng_below(r, 3) == 0) {
      random_rolling(s, p, r, name);
      loom_diag_free(&d);
      continue;
    }
    if (loom_sched_get_block(s, name, NULL, &b, &d) == LOOM_OK &&
        loom_sched_get_loops(s, b, &loops, &n_loops, &d) == LOOM_OK &&
        n_loops > 0) {
      const loom_block *blk = loom_sched_rv_block(s, b);
      int nbuf = is_write ? blk->n_writes : blk->n_reads;
      loom_tval in[2] = {loom_tval_rv(loops[loom_rng_below(r, (uint64_t)n_loops)]),
                         loom_tval_rv(b)};
      loom_tval attrs[2] = {
          loom_tval_int((int64_t)loom_rng_below(r, (uint64_t)(nbuf ? nbuf : 1))),
          loom_tval_str(scopes[loom_rng_below(r, 3)])};
      loom_loc nowhere = {0};
      loom_sched_apply(s, is_write ? LOOM_INST_WRITE_AT : LOOM_INST_READ_AT,
                       in, 2, attrs, 2, loom_tval_none(), nowhere, NULL, NULL,
                       &d);
    }
    loom_diag_free(&d);
  }
}

/* loop_partition of a random loop of a random block into up to three
 * given pieces, one of them maybe None. The partition blocks declare no
 * accesses, as TVM prints them, so primitives that place statements by
 * the regions of the blocks in a scope would misplace them afterwards:
 * it is drawn as a trace's last step (nested partitions included). */
static void random_partitions(loom_sched *s, const program *p, loom_rng *r) {
  int times = (int)loom_rng_below(r, 3);
  for (int t = 0; t < times; t++) {
    loom_diag d;
    loom_diag_init(&d);
    loom_sched_rv b;
    const loom_sched_rv *loops;
    int n_loops;
    const char *name = p->blocks[loom_rng_below(r, (uint64_t)p->n_blocks)];
    if (loom_sched_get_block(s, name, NULL, &b, &d) == LOOM_OK &&
        loom_sched_get_loops(s, b, &loops, &n_loops, &d) == LOOM_OK &&
        n_loops > 0) {
      loom_tval in[4] = {loom_tval_rv(loops[loom_rng_below(r, (uint64_t)n_loops)])};
      int n = 1 + (int)loom_rng_below(r, 3);
      int none_at = (int)loom_rng_below(r, (uint64_t)n + 1);
      for (int i = 0; i < n; i++)
        in[i + 1] = i == none_at
                        ? loom_tval_none()
                        : loom_tval_int(1 + (int64_t)loom_rng_below(r, 12));
      loom_tval keep = loom_tval_bool(true);
      loom_loc nowhere = {0};
      loom_sched_apply(s, LOOM_INST_LOOP_PARTITION, in, n + 1, &keep, 1,
                       loom_tval_none(), nowhere, NULL, NULL, &d);
    }
    loom_diag_free(&d);
  }
}

/* The trace printed and read back, both ways, rebuilds the same module. */
static bool replays(const loom_sched *s, const loom_module *m0) {
  loom_trace t = loom_sched_trace(s);
  loom_buf py, js;
  loom_buf_init(&py);
  loom_buf_init(&js);
  loom_trace_print_py(&t, LOOM_DIALECT_TIR, &py);
  loom_trace_print_json(&t, LOOM_DIALECT_TIR, &js);
  loom_diag d;
  loom_diag_init(&d);
  bool ok = true;
  loom_sched *a = loom_sched_new(m0, 9);
  loom_ir_diff diff = {0};
  if (loom_sched_run_script(a, py.data ? py.data : "", py.len, "trace.py", &d) !=
          LOOM_OK ||
      !loom_ir_equal_module(loom_sched_module(a), loom_sched_module(s), &diff)) {
    fprintf(stderr, "script replay failed: %s (%s: %s)\n%s",
            d.msg ? d.msg : "differs", diff.path ? diff.path : "",
            diff.what ? diff.what : "", py.data ? py.data : "");
    ok = false;
  }
  loom_ir_diff_free(&diff);
  loom_buf py2;
  loom_buf_init(&py2);
  loom_trace ta = loom_sched_trace(a);
  loom_trace_print_py(&ta, LOOM_DIALECT_TIR, &py2);
  ok = ok && py2.data && py.data && !strcmp(py.data, py2.data);
  loom_buf_free(&py2);
  loom_diag_free(&d);
  loom_diag_init(&d);
  loom_arena *arena = loom_arena_new();
  loom_trace tj;
  loom_sched *b = loom_sched_new(m0, 9);
  if (loom_trace_read_json(js.data ? js.data : "", js.len, "t.json", arena, &tj,
                           &d) != LOOM_OK ||
      loom_trace_apply(&tj, b, LOOM_REPLAY_CHECK, &d) != LOOM_OK ||
      !loom_ir_equal_module(loom_sched_module(b), loom_sched_module(s), NULL)) {
    fprintf(stderr, "JSON replay failed: %s\n%s", d.msg ? d.msg : "differs",
            js.data ? js.data : "");
    ok = false;
  }
  loom_diag_free(&d);
  loom_sched_free(a);
  loom_sched_free(b);
  loom_arena_free(arena);
  loom_buf_free(&py);
  loom_buf_free(&js);
  return ok;
}

/* The oracle's checks on one schedule of program p: it verifies, computes
 * what p computes, replays, and computes the same again with fresh
 * decisions. Returns whether the fresh-decision replay applied. */
static bool check_trace(const program *p, loom_sched *s, uint64_t seed,
                        const char *name) {
  bool resampled = false;
  loom_diag d;
  loom_diag_init(&d);
  bool verified = loom_ir_verify_module(loom_sched_module(s), &d) == LOOM_OK;
  if (!verified)
    fprintf(stderr, "run %llu: verify: %s\n", (unsigned long long)seed, d.msg);
  loom_diag_free(&d);
  CHECK(verified);
  bool same = verified && same_outputs(p->m->funcs[0],
                                       loom_sched_module(s)->funcs[0],
                                       seed * 7 + 1);
  CHECK(same);
  CHECK(replays(s, p->m));
  /* The same trace with fresh decisions: another point of the same design
   * space, which must compute the same when it applies. */
  loom_sched *f = loom_sched_new(p->m, seed + 1000003);
  loom_trace tf = loom_sched_trace(s);
  loom_diag_init(&d);
  if (loom_trace_apply(&tf, f, LOOM_REPLAY_RESAMPLE, &d) == LOOM_OK) {
    resampled = true;
    CHECK(same_outputs(p->m->funcs[0], loom_sched_module(f)->funcs[0],
                       seed * 7 + 2));
  }
  loom_diag_free(&d);
  loom_sched_free(f);
  if (!same || !verified) {
    loom_buf b;
    loom_buf_init(&b);
    loom_trace t = loom_sched_trace(s);
    loom_trace_print_py(&t, LOOM_DIALECT_TIR, &b);
    fprintf(stderr, "run %llu on %s, trace:\n%s", (unsigned long long)seed,
            name, b.data ? b.data : "");
    loom_buf_free(&b);
  }
  return resampled;
}

/* The primitives that need a particular pair or shape of blocks, tried on
 * every block (pair) of every program, each followed by random steps: a
 * random draw alone would seldom meet a bias epilogue. */
static void directed(const program *progs, const char *const *names, int n,
                     int *per_kind) {
  loom_rng r;
  loom_rng_seed(&r, 20261123);
  uint64_t seed = 5000000;
  for (int i = 0; i < n; i++) {
    const program *p = &progs[i];
    for (int t = 0; t < 4 * p->n_blocks; t++) {
      int k = t % p->n_blocks;
      loom_sched *s = loom_sched_new(p->m, seed);
      loom_diag d;
      loom_diag_init(&d);
      loom_sched_rv x, y;
      loom_loc nowhere = {0};
      if (k + 1 < p->n_blocks &&
          loom_sched_get_block(s, p->blocks[k], NULL, &x, &d) == LOOM_OK &&
          loom_sched_get_block(s, p->blocks[k + 1], NULL, &y, &d) == LOOM_OK) {
        loom_tval in[2] = {loom_tval_rv(x), loom_tval_rv(y)};
        loom_sched_apply(s, LOOM_INST_FUSE_REDUCTION_EPILOGUE, in, 2, NULL, 0,
                         loom_tval_none(), nowhere, NULL, NULL, &d);
      }
      int ni = n_iters(loom_sched_module(s)->funcs[0]->body, p->blocks[k]);
      if (ni > 0 && ni <= 8 &&
          loom_sched_get_block(s, p->blocks[k], NULL, &x, &d) == LOOM_OK) {
        loom_tval f[8], list = {.kind = LOOM_TV_LIST, .n = ni, .items = f};
        for (int j = 0; j < ni; j++)
          f[j] = loom_tval_int(1 + (int64_t)loom_rng_below(&r, 5));
        loom_tval in = loom_tval_rv(x);
        loom_sched_apply(s, LOOM_INST_PAD_EINSUM, &in, 1, &list, 1,
                         loom_tval_none(), nowhere, NULL, NULL, &d);
      }
      if (loom_rng_below(&r, 2) &&
          loom_sched_get_block(s, p->blocks[k], NULL, &x, &d) == LOOM_OK) {
        loom_tval in = loom_tval_rv(x);
        loom_tval attrs[2] = {loom_tval_int((int64_t)loom_rng_below(&r, 2)),
                              loom_tval_str("local")};
        loom_sched_apply(s, LOOM_INST_CACHE_INPLACE, &in, 1, attrs, 2,
                         loom_tval_none(), nowhere, NULL, NULL, &d);
      }
      if (loom_rng_below(&r, 2) &&
          loom_sched_get_block(s, p->blocks[k], NULL, &x, &d) == LOOM_OK) {
        loom_tval in = loom_tval_rv(x);
        loom_tval attrs[2] = {loom_tval_str("global"),
                              loom_tval_int(1 + (int64_t)loom_rng_below(&r, 3))};
        loom_sched_apply(s, LOOM_INST_CACHE_INDEX, &in, 1, attrs, 2,
                         loom_tval_none(), nowhere, NULL, NULL, &d);
      }
      loom_diag_free(&d);
      int steps = (int)loom_rng_below(&r, 4);
      for (int j = 0; j < steps; j++)
        random_step(s, p, &r);
      loom_trace tr = loom_sched_trace(s);
      for (int j = 0; j < tr.n_insts; j++)
        per_kind[tr.insts[j]->kind]++;
      if (tr.n_insts > 0) /* an empty trace prints as nothing */
        check_trace(p, s, seed++, names[i]);
      loom_sched_free(s);
    }
  }
}

/* ---- tensorize ------------------------------------------------------------------
 * Traces over tensorize_mix.py, whose blocks "dot" and "tile" match the
 * built-in intrinsics once split: random steps as above, mixed with
 * attempts to tensorize a random block's inner loops (split to the
 * intrinsic's extent first, or not), allowed or refused wherever the steps
 * before left the program. Checked as every trace is. */
static void try_tensorize(loom_sched *s, const program *p, loom_rng *r) {
  loom_diag d;
  loom_diag_init(&d);
  loom_sched_rv b;
  const loom_sched_rv *loops, *outs;
  int n;
  const char *name = p->blocks[loom_rng_below(r, (uint64_t)p->n_blocks)];
  bool is_dot = loom_rng_below(r, 2);
  if (loom_sched_get_block(s, name, NULL, &b, &d) == LOOM_OK &&
      loom_sched_get_loops(s, b, &loops, &n, &d) == LOOM_OK &&
      n >= (is_dot ? 1 : 3)) {
    loom_sched_rv at = loops[is_dot ? n - 1 : n - 3];
    if (loom_rng_below(r, 2)) {
      loom_tval f[2] = {loom_tval_none(), loom_tval_int(is_dot ? 16 : 4)};
      if (loom_sched_split(s, at, f, 2, true, false, &outs, &d) == LOOM_OK)
        at = outs[1];
    }
    loom_sched_tensorize(s, at,
                         is_dot ? "loom_f32_dot_16" : "loom_f32_gemm_4x16x4",
                         loom_rng_below(r, 2), &d);
  }
  loom_diag_free(&d);
}

static void tensorize_traces(const char *root, int runs) {
  program p;
  CHECK(load(root, "tensorize_mix", &p));
  if (!p.m)
    return;
  loom_rng r;
  loom_rng_seed(&r, 20261123);
  int n_tensorized = 0;
  for (int run_i = 0; run_i < runs; run_i++) {
    loom_sched *s = loom_sched_new(p.m, (uint64_t)run_i);
    int steps = 1 + (int)loom_rng_below(&r, 6);
    for (int k = 0; k < steps; k++) {
      if (loom_rng_below(&r, 3))
        try_tensorize(s, &p, &r);
      else
        random_step(s, &p, &r);
    }
    loom_trace tr = loom_sched_trace(s);
    for (int k = 0; k < tr.n_insts; k++)
      n_tensorized += tr.insts[k]->kind == LOOM_INST_TENSORIZE;
    check_trace(&p, s, (uint64_t)run_i, "tensorize_mix");
    loom_sched_free(s);
  }
  printf("oracle: %d traces over tensorize_mix, %d tensorized\n", runs,
         n_tensorized);
  /* Half the attempts split first; enough of them must match. */
  CHECK(runs < 20 || n_tensorized >= runs / 4);
  loom_arena_free(p.arena);
  free(p.text);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  const char *env = getenv("LOOM_ORACLE_RUNS");
#if defined(__SANITIZE_ADDRESS__)
  int runs = env ? atoi(env) : 110; /* the sanitizers make the interpreter slow */
#else
  int runs = env ? atoi(env) : 480;
#endif
  program progs[N_CASES];
  for (int i = 0; i < N_CASES; i++)
    CHECK(load(root, cases[i], &progs[i]));
  if (test_failures)
    return test_summary("schedule/oracle");
  loom_rng r;
  loom_rng_seed(&r, 20261126);
  int n_steps_total = 0;
  int per_kind[LOOM_INST_COUNT_] = {0};
  int n_resampled = 0;
  for (int run_i = 0; run_i < runs; run_i++) {
    const program *p = &progs[run_i % N_CASES];
    loom_sched *s = loom_sched_new(p->m, (uint64_t)run_i);
    int steps = 1 + (int)loom_rng_below(&r, 6);
    for (int k = 0; k < steps; k++)
      random_step(s, p, &r);
    loom_rng rp;
    loom_rng_seed(&rp, (uint64_t)run_i * 31 + 5);
    random_read_write_at(s, p, &rp);
    random_partitions(s, p, &rp);
    loom_trace tr = loom_sched_trace(s);
    n_steps_total += tr.n_insts;
    for (int k = 0; k < tr.n_insts; k++)
      per_kind[tr.insts[k]->kind]++;
    if (check_trace(p, s, (uint64_t)run_i, cases[run_i % N_CASES]))
      n_resampled++;
    loom_sched_free(s);
  }
  /* Then the directed traces, over the programs and one with a bias
   * epilogue. */
  static const char *const extra_names[] = {"matmul_bias"};
  program extra[1];
  CHECK(load(root, extra_names[0], &extra[0]));
  int per_directed[LOOM_INST_COUNT_] = {0};
  directed(progs, cases, N_CASES, per_directed);
  if (extra[0].m)
    directed(extra, extra_names, 1, per_directed);
  CHECK(per_directed[LOOM_INST_FUSE_REDUCTION_EPILOGUE] > 0);
  CHECK(per_directed[LOOM_INST_PAD_EINSUM] > 0);
  CHECK(per_directed[LOOM_INST_CACHE_INPLACE] > 0);
  CHECK(per_directed[LOOM_INST_CACHE_INDEX] > 0);
  printf("oracle, directed: fuse_reduction_epilogue %d pad_einsum %d "
         "cache_inplace %d cache_index %d\n",
         per_directed[LOOM_INST_FUSE_REDUCTION_EPILOGUE],
         per_directed[LOOM_INST_PAD_EINSUM],
         per_directed[LOOM_INST_CACHE_INPLACE],
         per_directed[LOOM_INST_CACHE_INDEX]);
  loom_arena_free(extra[0].arena);
  free(extra[0].text);
  printf("oracle: %d traces (%d replayed with fresh decisions), %d "
         "instructions applied:",
         runs, n_resampled, n_steps_total);
  for (int k = 0; k < LOOM_INST_COUNT_; k++)
    if (per_kind[k])
      printf(" %s %d", loom_inst_kind_method(k, LOOM_DIALECT_TIR), per_kind[k]);
  printf("\n");
  /* Every primitive the generator draws must have been applied somewhere
   * (in runs long enough for the rarer ones to come up). */
  CHECK(runs < 480 || (per_kind[LOOM_INST_SPLIT] && per_kind[LOOM_INST_FUSE] &&
        per_kind[LOOM_INST_REORDER] && per_kind[LOOM_INST_PARALLEL] &&
        per_kind[LOOM_INST_VECTORIZE] && per_kind[LOOM_INST_UNROLL] &&
        per_kind[LOOM_INST_BIND] && per_kind[LOOM_INST_ANNOTATE] &&
        per_kind[LOOM_INST_COMPUTE_INLINE] &&
        per_kind[LOOM_INST_REVERSE_COMPUTE_INLINE] &&
        per_kind[LOOM_INST_DECOMPOSE_REDUCTION] && per_kind[LOOM_INST_MERGE] &&
        per_kind[LOOM_INST_RFACTOR] &&
        per_kind[LOOM_INST_TRANSFORM_LAYOUT] && per_kind[LOOM_INST_BLOCKIZE] &&
        per_kind[LOOM_INST_REINDEX] &&
        per_kind[LOOM_INST_REINDEX_CACHE_READ] &&
        per_kind[LOOM_INST_REINDEX_CACHE_WRITE] &&
        per_kind[LOOM_INST_TRANSFORM_BLOCK_LAYOUT] &&
        per_kind[LOOM_INST_STORAGE_ALIGN] && per_kind[LOOM_INST_SET_SCOPE] &&
        per_kind[LOOM_INST_REORDER_BLOCK_ITER_VAR] &&
        per_kind[LOOM_INST_COMPUTE_AT] && per_kind[LOOM_INST_CACHE_READ] &&
        per_kind[LOOM_INST_CACHE_WRITE] &&
        per_kind[LOOM_INST_REVERSE_COMPUTE_AT] &&
        per_kind[LOOM_INST_SAMPLE_PERFECT_TILE] &&
        per_kind[LOOM_INST_LOOP_PARTITION] && per_kind[LOOM_INST_READ_AT] &&
        per_kind[LOOM_INST_WRITE_AT] && per_kind[LOOM_INST_ROLLING_BUFFER]));
  tensorize_traces(root, runs / 12 + 1);
  for (int i = 0; i < N_CASES; i++) {
    loom_arena_free(progs[i].arena);
    free(progs[i].text);
  }
  return test_summary("schedule/oracle");
}
