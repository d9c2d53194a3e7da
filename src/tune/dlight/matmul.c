/* Matmul: C[i, j] += A[i, k] * B[k, j] (either input transposed), tiled
 * through shared memory. Each thread block computes a bm x bn tile of C with
 * (bm / tm) x (bn / tn) threads, each thread a tm x tn patch kept in
 * registers; k advances bk at a time, the two input slices of each step
 * fetched into shared memory by all the block's threads together. dlight's
 * own tiling is square (the table below, 16 x 16 threads); fast tuning
 * passes others (loom_matmul_config, policy.c). Other blocks (an epilogue)
 * get Fallback's step. Shapes no tile of the table divides are not taken
 * (Fallback takes them). */
#include "tune/dlight/dlight_impl.h"

#include <stdio.h>
#include <string.h>

/* 16 x 16 threads a block, as for SIMT cores since sm_70. */
#define THREADS 16

/* The tiles of C, largest first: 128 x 128 gives each thread 8 x 8 outputs
 * and 16 KiB of float32 in shared memory per k step of 16; the smaller ones
 * serve shapes 128 does not divide. */
static const int64_t tiles[] = {128, 64, 32, 16};
static const int64_t k_steps[] = {16, 8, 4};

/* The iter var a region's dimension k is, or NULL when it is not one. */
static const loom_var *dim_var(const loom_buffer_region *r, int k) {
  const loom_expr *e = r->ranges[k].min;
  int64_t ext;
  return e->kind == LOOM_EXPR_VAR && loom_ir_is_const_int(r->ranges[k].extent, &ext) &&
                 ext == 1
             ? e->u.var
             : NULL;
}

/* Whether region r is indexed by exactly the iter vars x and y, in either
 * order. */
static bool indexed_by(const loom_buffer_region *r, const loom_var *x, const loom_var *y) {
  if (r->n_ranges != 2)
    return false;
  const loom_var *a = dim_var(r, 0), *b = dim_var(r, 1);
  return a && b && ((a == x && b == y) || (a == y && b == x));
}

/* The index of the read of buffer name in block, a random variable of s. */
static int read_index(loom_sched *s, loom_sched_rv block, const char *name) {
  const loom_block *b = loom_sched_rv_block(s, block);
  for (int i = 0; b && i < b->n_reads; i++)
    if (!strcmp(b->reads[i].buffer->name, name))
      return i;
  return -1;
}

/* The matched block: its C, A and B, its loops as i, j, k, their extents,
 * the inputs' widest element, and the tiling chosen. */
typedef struct matmul {
  const char *a, *b, *out; /* the buffers' names */
  int loop_i, loop_j, loop_k; /* indices into the block's loops */
  dlight_matmul_shape shape;
  loom_matmul_config c;
} matmul;

static loom_status match(const char *name, const space_block *sb, matmul *mm,
                         loom_diag *why) {
  const loom_block *b = sb->block;
  if (!space_is_open_nest(sb) || !b->init || b->n_writes != 1 || b->n_iter_vars != 3)
    return dlight_not_taken(why, name, "is not a reduction over three loops of constant extent");
  const loom_buffer_region *c = &b->writes[0];
  const loom_var *vi = c->n_ranges == 2 ? dim_var(c, 0) : NULL;
  const loom_var *vj = c->n_ranges == 2 ? dim_var(c, 1) : NULL, *vk = NULL;
  int n_reduce = 0;
  for (int i = 0; i < 3; i++)
    if (b->iter_vars[i].kind == LOOM_ITER_REDUCE) {
      vk = b->iter_vars[i].var;
      n_reduce++;
    }
  if (!vi || !vj || !vk || n_reduce != 1 || vi == vj || vi == vk || vj == vk)
    return dlight_not_taken(why, name,
                            "does not write C[i, j] over two spatial iters with one reduce iter");
  mm->a = mm->b = NULL;
  mm->out = c->buffer->name;
  for (int r = 0; r < b->n_reads; r++) {
    const loom_buffer_region *reg = &b->reads[r];
    if (reg->buffer == c->buffer)
      continue;
    if (!mm->a && indexed_by(reg, vi, vk)) {
      mm->a = reg->buffer->name;
      mm->shape.a_k_last = dim_var(reg, 1) == vk;
    } else if (!mm->b && indexed_by(reg, vk, vj)) {
      mm->b = reg->buffer->name;
      mm->shape.b_j_last = dim_var(reg, 1) == vj;
    } else {
      return dlight_not_taken(why, name, "reads something other than A[i, k] and B[k, j]");
    }
  }
  if (!mm->a || !mm->b)
    return dlight_not_taken(why, name, "does not read both A[i, k] and B[k, j]");
  mm->loop_i = mm->loop_j = mm->loop_k = -1;
  int64_t ext[3];
  for (int l = 0; l < sb->n_loops; l++) {
    const loom_iter_var *iv = space_iter_of_loop(sb, sb->loops[l]->u.loop.var);
    int which = !iv ? -1 : iv->var == vi ? 0 : iv->var == vj ? 1 : iv->var == vk ? 2 : -1;
    if (which < 0 || !loom_ir_is_const_int(sb->loops[l]->u.loop.extent, &ext[which]))
      return dlight_not_taken(why, name, "has a loop that is not one of i, j, k");
    *(which == 0 ? &mm->loop_i : which == 1 ? &mm->loop_j : &mm->loop_k) = l;
  }
  mm->shape.bits = 0;
  for (int r = 0; r < b->n_reads; r++)
    if (b->reads[r].buffer != c->buffer && b->reads[r].buffer->dtype.bits > mm->shape.bits)
      mm->shape.bits = b->reads[r].buffer->dtype.bits;
  mm->shape.m = ext[0];
  mm->shape.n = ext[1];
  mm->shape.k = ext[2];
  return LOOM_OK;
}

/* dlight's own tiling: the largest square tile of the table that divides
 * both extents, 16 x 16 threads, the largest k step of the table that
 * divides k, else k's largest divisor below the table's first. */
static loom_status default_config(const char *name, const matmul *mm, loom_matmul_config *c,
                                  loom_diag *why) {
  int64_t tile = 0, k_step = 0;
  for (size_t i = 0; i < sizeof tiles / sizeof *tiles && !tile; i++)
    if (mm->shape.m % tiles[i] == 0 && mm->shape.n % tiles[i] == 0)
      tile = tiles[i];
  for (size_t i = 0; i < sizeof k_steps / sizeof *k_steps && !k_step; i++)
    if (mm->shape.k % k_steps[i] == 0)
      k_step = k_steps[i];
  /* An odd reduction (a 7x7 convolution of three channels: 147) steps by
   * its largest divisor up to the table's first step. */
  for (int64_t d = k_steps[0]; d > 1 && !k_step; d--)
    if (mm->shape.k % d == 0)
      k_step = d;
  if (!tile || !k_step)
    return loom_diag_error(why, (loom_loc){0},
                           "block '%s': no tile divides %lld x %lld x %lld (tiles of %lld "
                           "down to %lld, k steps down to 2)", name, (long long)mm->shape.m,
                           (long long)mm->shape.n, (long long)mm->shape.k, (long long)tiles[0],
                           (long long)tiles[sizeof tiles / sizeof *tiles - 1]);
  *c = (loom_matmul_config){.bm = tile, .bn = tile, .tm = tile / THREADS,
                            .tn = tile / THREADS, .bk = k_step};
  return LOOM_OK;
}

/* Whether configuration c fits the matched block and the target. */
static loom_status check_config(const char *name, const matmul *mm, const loom_matmul_config *c,
                                const loom_target *t, loom_diag *why) {
  if (c->bm <= 0 || c->bn <= 0 || c->tm <= 0 || c->tn <= 0 || c->bk <= 0 ||
      c->bm % c->tm || c->bn % c->tn || mm->shape.m % c->bm || mm->shape.n % c->bn ||
      mm->shape.k % c->bk)
    return dlight_not_taken(why, name, "is not divided by the configuration's tiles");
  if (t->gpu.shared_per_block > 0 &&
      (c->bm + c->bn) * c->bk * (mm->shape.bits / 8) > t->gpu.shared_per_block)
    return dlight_not_taken(why, name, "needs more shared memory per block than the target has");
  if (t->gpu.max_threads_per_block > 0 &&
      (c->bm / c->tm) * (c->bn / c->tn) > t->gpu.max_threads_per_block)
    return dlight_not_taken(why, name, "needs more threads per block than the target has");
  return LOOM_OK;
}

static loom_status split(loom_sched *s, loom_sched_rv loop, int64_t f1, int64_t f2,
                         int n, loom_sched_rv *out, loom_diag *why) {
  loom_tval factors[3] = {loom_tval_none(), loom_tval_int(f1), loom_tval_int(f2)};
  const loom_sched_rv *parts;
  TRY(loom_sched_split(s, loop, factors, n, true, false, &parts, why));
  for (int i = 0; i < n; i++)
    out[i] = parts[i];
  return LOOM_OK;
}

static loom_status split4(loom_sched *s, loom_sched_rv loop, int64_t f1, int64_t f2,
                          int64_t f3, loom_sched_rv *out, loom_diag *why) {
  loom_tval factors[4] = {loom_tval_none(), loom_tval_int(f1), loom_tval_int(f2),
                          loom_tval_int(f3)};
  const loom_sched_rv *parts;
  TRY(loom_sched_split(s, loop, factors, 4, true, false, &parts, why));
  memcpy(out, parts, 4 * sizeof *out);
  return LOOM_OK;
}

/* The block's read `index` cached in scope at loop `at`; its loops. */
static loom_status cache_at(loom_sched *s, loom_sched_rv block, int index, const char *scope,
                            loom_sched_rv at, loom_sched_rv *cache,
                            const loom_sched_rv **loops, int *n, loom_diag *why) {
  loom_tval in[2] = {loom_tval_rv(block), {.kind = LOOM_TV_LIST}};
  loom_tval attrs[2] = {loom_tval_int(index), loom_tval_str(scope)};
  const loom_sched_rv *out;
  TRY(space_apply(s, LOOM_INST_CACHE_READ, in, 2, attrs, 2, &out, NULL, why));
  *cache = out[0];
  loom_tval at_in[2] = {loom_tval_rv(*cache), loom_tval_rv(at)};
  loom_tval at_attrs[2] = {loom_tval_bool(false), loom_tval_int(-1)};
  TRY(space_apply(s, LOOM_INST_COMPUTE_AT, at_in, 2, at_attrs, 2, NULL, NULL, why));
  return loom_sched_get_loops(s, *cache, loops, n, why);
}

/* A shared copy of input name of the block, fetched at loop at by every
 * thread of the block (ty x tx of them): its two loops fused and spread
 * over the threads, vec elements at a time (a vectorized loop, which the
 * CUDA backend moves as one vector where it proves the alignment) when
 * vec > 1. The copy's block goes to *copy. */
static loom_status fetch(loom_sched *s, loom_sched_rv block, const char *block_name,
                         const char *name, loom_sched_rv at, int64_t ty, int64_t tx,
                         int64_t vec, loom_sched_rv *copy, loom_diag *why) {
  int index = read_index(s, block, name);
  if (index < 0)
    return dlight_not_taken(why, block_name, "lost a read on the way");
  const loom_sched_rv *loops;
  int n;
  TRY(cache_at(s, block, index, "shared", at, copy, &loops, &n, why));
  if (n < 2)
    return dlight_not_taken(why, block_name, "has a shared copy with fewer than two loops");
  loom_sched_rv inner[2] = {loops[n - 2], loops[n - 1]}, fused, parts[4];
  TRY(loom_sched_fuse(s, inner, 2, true, &fused, why));
  if (vec > 1) {
    TRY(split4(s, fused, ty, tx, vec, parts, why));
    TRY(loom_sched_for_kind(s, LOOM_INST_VECTORIZE, parts[3], why));
  } else {
    TRY(split(s, fused, ty, tx, 3, parts, why));
  }
  TRY(loom_sched_bind(s, parts[1], "threadIdx.y", why));
  return loom_sched_bind(s, parts[2], "threadIdx.x", why);
}

static loom_status tile(loom_sched *s, const char *name, const matmul *mm, loom_diag *why) {
  loom_sched_rv block;
  const loom_sched_rv *loops;
  int n_loops;
  TRY(loom_sched_get_block(s, name, NULL, &block, why));
  TRY(loom_sched_get_loops(s, block, &loops, &n_loops, why));
  loom_sched_rv i = loops[mm->loop_i], j = loops[mm->loop_j], k = loops[mm->loop_k];
  loom_sched_rv is[3], js[3], ks[2];
  const loom_matmul_config *c = &mm->c;
  TRY(split(s, i, c->bm / c->tm, c->tm, 3, is, why));
  TRY(split(s, j, c->bn / c->tn, c->tn, 3, js, why));
  TRY(split(s, k, c->bk, 0, 2, ks, why));
  loom_sched_rv order[8] = {is[0], js[0], is[1], js[1], ks[0], ks[1], is[2], js[2]};
  TRY(loom_sched_reorder(s, order, 8, why));
  TRY(loom_sched_bind(s, is[0], "blockIdx.y", why));
  TRY(loom_sched_bind(s, js[0], "blockIdx.x", why));
  TRY(loom_sched_bind(s, is[1], "threadIdx.y", why));
  TRY(loom_sched_bind(s, js[1], "threadIdx.x", why));
  /* The thread's patch of C accumulates in registers, written back once. */
  loom_tval in[2] = {loom_tval_rv(block), {.kind = LOOM_TV_LIST}};
  loom_tval attrs[2] = {loom_tval_int(0), loom_tval_str("local")};
  const loom_sched_rv *cache;
  TRY(space_apply(s, LOOM_INST_CACHE_WRITE, in, 2, attrs, 2, &cache, NULL, why));
  loom_tval at_in[2] = {loom_tval_rv(cache[0]), loom_tval_rv(js[1])};
  loom_tval at_attrs[2] = {loom_tval_bool(false), loom_tval_int(-1)};
  TRY(space_apply(s, LOOM_INST_REVERSE_COMPUTE_AT, at_in, 2, at_attrs, 2, NULL, NULL, why));
  loom_tval dr[2] = {loom_tval_rv(block), loom_tval_rv(ks[0])};
  TRY(space_apply(s, LOOM_INST_DECOMPOSE_REDUCTION, dr, 2, NULL, 0, NULL, NULL, why));
  /* One element a thread at a time: 16-byte vectors took the float32
   * 4096-cubed product from 3.67 ms to 4.91 ms on an H200. */
  int64_t ty = c->bm / c->tm, tx = c->bn / c->tn;
  loom_sched_rv copy;
  TRY(fetch(s, block, name, mm->a, ks[0], ty, tx, 1, &copy, why));
  TRY(fetch(s, block, name, mm->b, ks[0], ty, tx, 1, &copy, why));
  TRY(loom_sched_for_kind(s, LOOM_INST_UNROLL, ks[1], why));
  TRY(loom_sched_for_kind(s, LOOM_INST_UNROLL, is[2], why));
  return loom_sched_for_kind(s, LOOM_INST_UNROLL, js[2], why);
}

/* ---- tensor cores ------------------------------------------------------------
 * A float16 matmul into float32, A[i, k] and B[k, j] or B[j, k], on a GPU
 * with float16 tensor cores: bench/gpu/matmul_wmma.sched.py's schedule (or
 * matmul_wmma_nt.sched.py's). A 128 x 128 tile
 * of C per block of four warps (threadIdx.y), 64 x 64 per warp as 4 x 4
 * accumulator fragments (on an H200 1.24x faster than eight warps of
 * 64 x 32, at 217 registers a thread), k in steps of 64 through shared
 * memory (32 where K is not a multiple of 64) and 16 through A and B
 * fragments; the loops over fragments unrolled, so that every fragment
 * index is a constant and the fragments stay in registers. On an H200 the
 * float16 4096-cubed product takes 1.40 ms with scalar copies into
 * unpadded tiles, 1.16 ms with 16-byte copies, 0.58 ms with the rows
 * padded too, and 0.43 ms with k in steps of 64 (0.70 ms with eight warps
 * on 128 x 256 tiles instead). Where N is a multiple of 64 but not of 128
 * (a convolution's 64 output channels) the tile is 128 x 64, by two warps
 * of the same 64 x 64. */

static bool is_dtype(const loom_buffer *b, loom_dtype_code code, int bits) {
  return b && b->dtype.code == code && b->dtype.bits == bits && b->dtype.lanes == 1;
}

static const loom_buffer *read_buffer(const loom_block *b, const char *name) {
  for (int i = 0; i < b->n_reads; i++)
    if (!strcmp(b->reads[i].buffer->name, name))
      return b->reads[i].buffer;
  return NULL;
}

static bool fits_wmma(const space_block *sb, const matmul *mm, const loom_target *t) {
  const loom_block *b = sb->block;
  return (t->gpu.tensor_cores & LOOM_TC_F16) && mm->shape.a_k_last &&
         is_dtype(read_buffer(b, mm->a), LOOM_DT_FLOAT, 16) &&
         is_dtype(read_buffer(b, mm->b), LOOM_DT_FLOAT, 16) &&
         is_dtype(b->writes[0].buffer, LOOM_DT_FLOAT, 32) && mm->shape.m % 128 == 0 &&
         mm->shape.n % 64 == 0;
}

/* The block of s that writes buffer, its name copied into out; false when
 * none does (an operand that is a parameter). */
static bool writer_of(loom_sched *s, const char *buffer, char *out, size_t n) {
  const char *names[SPACE_MAX_BLOCKS];
  int count = space_block_names(space_func(s), names, SPACE_MAX_BLOCKS);
  for (int i = 0; i < count; i++) {
    space_block sb;
    if (space_find_block(space_func(s), names[i], &sb) && sb.block->n_writes == 1 &&
        !strcmp(sb.block->writes[0].buffer->name, buffer)) {
      snprintf(out, n, "%s", names[i]);
      return true;
    }
  }
  return false;
}

/* K made a multiple of 32 for the tensor cores: the product padded
 * (pad_einsum: zeros past K in copies of both operands, as TVM's dlight
 * pads a product to its tiles), the blocks that wrote A and B (a
 * convolution's im2col copy) inlined into those copies, so that the tiles
 * take them in as before, and mm matched again. A 7x7 convolution of
 * three channels (K = 147, a network's first) then sums 160. */
static loom_status pad_k(loom_sched **s, const char *name, matmul *mm, loom_diag *why) {
  if (mm->shape.k % 32 == 0)
    return LOOM_OK;
  char a_writer[256], b_writer[256];
  bool has_a = writer_of(*s, mm->a, a_writer, sizeof a_writer);
  bool has_b = writer_of(*s, mm->b, b_writer, sizeof b_writer);
  space_block sb;
  if (!space_find_block(space_func(*s), name, &sb) || sb.block->n_iter_vars != 3)
    return dlight_not_taken(why, name, "lost its block on the way");
  loom_tval pad[3];
  for (int i = 0; i < 3; i++)
    pad[i] = loom_tval_int(sb.block->iter_vars[i].kind == LOOM_ITER_REDUCE ? 32 : 1);
  loom_sched_rv block;
  TRY(loom_sched_get_block(*s, name, NULL, &block, why));
  loom_tval in = loom_tval_rv(block);
  loom_tval attr = {.kind = LOOM_TV_LIST, .n = 3, .items = pad};
  TRY(space_apply(*s, LOOM_INST_PAD_EINSUM, &in, 1, &attr, 1, NULL, NULL, why));
  bool is_done = false;
  if (has_a)
    TRY(dlight_try_step(s, LOOM_INST_COMPUTE_INLINE, a_writer, NULL, 0, &is_done));
  if (has_b)
    TRY(dlight_try_step(s, LOOM_INST_COMPUTE_INLINE, b_writer, NULL, 0, &is_done));
  if (!space_find_block(space_func(*s), name, &sb))
    return dlight_not_taken(why, name, "lost its block on the way");
  return match(name, &sb, mm, why);
}

static loom_status unroll_all(loom_sched *s, const loom_sched_rv *loops, int n, loom_diag *why) {
  for (int i = 0; i < n; i++)
    TRY(loom_sched_for_kind(s, LOOM_INST_UNROLL, loops[i], why));
  return LOOM_OK;
}

static loom_status pad_rows(loom_sched *s, loom_sched_rv copy, loom_diag *why) {
  loom_tval in = loom_tval_rv(copy);
  loom_tval attrs[4] = {loom_tval_int(0), loom_tval_int(0), loom_tval_int(32), loom_tval_int(8)};
  return space_apply(s, LOOM_INST_STORAGE_ALIGN, &in, 1, attrs, 4, NULL, NULL, why);
}

static loom_status tile_wmma(loom_sched *s, const char *name, const matmul *mm, loom_diag *why) {
  loom_sched_rv block, is[4], js[4], ks[4], w;
  const loom_sched_rv *loops;
  int n;
  TRY(loom_sched_get_block(s, name, NULL, &block, why));
  TRY(loom_sched_get_loops(s, block, &loops, &n, why));
  loom_sched_rv i = loops[mm->loop_i], j = loops[mm->loop_j], k = loops[mm->loop_k];
  int64_t j_warps = mm->shape.n % 128 == 0 ? 2 : 1, warps = 2 * j_warps;
  TRY(split4(s, i, 2, 4, 16, is, why));
  TRY(split4(s, j, j_warps, 4, 16, js, why));
  TRY(split(s, k, mm->shape.k % 64 == 0 ? 4 : 2, 16, 3, ks, why));
  loom_sched_rv order[11] = {is[0], js[0], is[1], js[1], ks[0], ks[1],
                             is[2], js[2], is[3], js[3], ks[2]};
  TRY(loom_sched_reorder(s, order, 11, why));
  TRY(loom_sched_bind(s, is[0], "blockIdx.y", why));
  TRY(loom_sched_bind(s, js[0], "blockIdx.x", why));
  loom_sched_rv warp[2] = {is[1], js[1]};
  TRY(loom_sched_fuse(s, warp, 2, true, &w, why));
  TRY(loom_sched_bind(s, w, "threadIdx.y", why));
  /* The warp's accumulators, stored a fragment at a time at its end. */
  loom_tval in[2] = {loom_tval_rv(block), {.kind = LOOM_TV_LIST}};
  loom_tval attrs[2] = {loom_tval_int(0), loom_tval_str("wmma.accumulator")};
  const loom_sched_rv *out;
  TRY(space_apply(s, LOOM_INST_CACHE_WRITE, in, 2, attrs, 2, &out, NULL, why));
  loom_sched_rv acc = out[0];
  loom_tval at_in[2] = {loom_tval_rv(acc), loom_tval_rv(w)};
  loom_tval at_attrs[2] = {loom_tval_bool(false), loom_tval_int(-1)};
  TRY(space_apply(s, LOOM_INST_REVERSE_COMPUTE_AT, at_in, 2, at_attrs, 2, NULL, NULL, why));
  TRY(loom_sched_get_loops(s, acc, &loops, &n, why));
  loom_sched_rv st[4], s0 = loops[n - 2], s1 = loops[n - 1];
  TRY(split(s, s0, 16, 0, 2, st, why));
  TRY(split(s, s1, 16, 0, 2, st + 2, why));
  loom_sched_rv st_order[4] = {st[0], st[2], st[1], st[3]};
  TRY(loom_sched_reorder(s, st_order, 4, why));
  loom_tval dr[2] = {loom_tval_rv(block), loom_tval_rv(ks[0])};
  TRY(space_apply(s, LOOM_INST_DECOMPOSE_REDUCTION, dr, 2, NULL, 0, &out, NULL, why));
  loom_sched_rv init = out[0];
  /* A and B tiles into shared memory, by all the block's threads, 16 bytes
   * at a time; each row padded by 8 halves (16 bytes) past a multiple of
   * 32, so that the fragment loads' rows fall in different banks. */
  loom_sched_rv cache;
  TRY(fetch(s, block, name, mm->a, ks[0], warps, 32, 8, &cache, why));
  TRY(pad_rows(s, cache, why));
  TRY(fetch(s, block, name, mm->b, ks[0], warps, 32, 8, &cache, why));
  TRY(pad_rows(s, cache, why));
  /* Fragments of A and B for each 16-deep step of k. */
  loom_sched_rv a_split[2], b_split[2];
  char a_shared[256], b_shared[256];
  snprintf(a_shared, sizeof a_shared, "%s_shared", mm->a);
  snprintf(b_shared, sizeof b_shared, "%s_shared", mm->b);
  int a_index = read_index(s, block, a_shared), b_index = read_index(s, block, b_shared);
  if (a_index < 0 || b_index < 0)
    return dlight_not_taken(why, name, "lost a shared read on the way");
  TRY(cache_at(s, block, a_index, "wmma.matrix_a", ks[1], &cache, &loops, &n, why));
  TRY(split(s, loops[n - 2], 16, 0, 2, a_split, why));
  TRY(cache_at(s, block, b_index, "wmma.matrix_b", ks[1], &cache, &loops, &n, why));
  /* B[k, j] tiles split along j; B[j, k] (matmul_wmma_nt.sched.py) loaded
   * column-major, along its rows. */
  bool is_nn = mm->shape.b_j_last;
  loom_sched_rv b0 = loops[n - 2];
  TRY(split(s, loops[n - (is_nn ? 1 : 2)], 16, 0, 2, b_split, why));
  loom_sched_rv b_order[3] = {b_split[0], b0, b_split[1]};
  if (is_nn)
    TRY(loom_sched_reorder(s, b_order, 3, why));
  TRY(loom_sched_get_loops(s, init, &loops, &n, why));
  loom_sched_rv fill = loops[n - 2], init_tiles[2] = {loops[n - 4], loops[n - 3]};
  TRY(loom_sched_tensorize(s, a_split[1], "wmma_load_16x16x16_f16_a_shared", true, why));
  TRY(loom_sched_tensorize(s, is_nn ? b0 : b_split[1],
                           is_nn ? "wmma_load_16x16x16_f16_b_shared"
                                 : "wmma_load_16x16x16_f16_b_trans_shared", true, why));
  TRY(loom_sched_tensorize(s, fill, "wmma_fill_16x16x16_f32", true, why));
  TRY(loom_sched_tensorize(s, is[3],
                           is_nn ? "wmma_sync_16x16x16_f16f16f32"
                                 : "wmma_sync_16x16x16_f16f16f32_trans", true, why));
  TRY(loom_sched_tensorize(s, st[1], "wmma_store_16x16x16_f32_global", true, why));
  loom_sched_rv unrolled[9] = {init_tiles[0], init_tiles[1], a_split[0], b_split[0], is[2],
                            js[2], ks[1], st[0], st[2]};
  return unroll_all(s, unrolled, 9, why);
}

/* The blocks that write A and B (a convolution's im2col copy, its
 * weights' copy) inlined into the tiles' shared copies, and the one that
 * reads C (C's copy back, an epilogue) into the write-back of each
 * thread's patch, where the primitives allow it: one kernel instead of
 * a pass over memory for each. */
static loom_status inline_operands(loom_sched **s, const char *name, const matmul *mm) {
  char *names[SPACE_MAX_BLOCKS];
  int n = dlight_block_names(*s, names, SPACE_MAX_BLOCKS);
  if (n < 0)
    return LOOM_NOMEM;
  loom_status st = LOOM_OK;
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    space_block sb;
    if (!strcmp(names[i], name) || !space_find_block(space_func(*s), names[i], &sb) ||
        !sb.scope || sb.block->n_writes != 1)
      continue;
    const char *out = sb.block->writes[0].buffer->name;
    /* A reader of C when the product writes the whole of C: inlined
     * there, it would leave the rest unwritten. */
    bool is_reader = false;
    for (int r = 0; r < sb.block->n_reads; r++) {
      const loom_buffer *c = sb.block->reads[r].buffer;
      int64_t rows, cols;
      is_reader |= !strcmp(c->name, mm->out) && c->ndim == 2 &&
                   loom_ir_is_const_int(c->shape[0], &rows) &&
                   loom_ir_is_const_int(c->shape[1], &cols) && rows == mm->shape.m &&
                   cols == mm->shape.n;
    }
    bool is_done = false;
    if (!strcmp(out, mm->a) || !strcmp(out, mm->b))
      st = dlight_try_step(s, LOOM_INST_COMPUTE_INLINE, names[i], NULL, 0, &is_done);
    else if (is_reader && strcmp(out, mm->out))
      st = dlight_try_step(s, LOOM_INST_REVERSE_COMPUTE_INLINE, names[i], NULL, 0, &is_done);
  }
  dlight_names_free(names, n);
  return st;
}

/* Tiles block name of *s on a copy, which replaces *s when every step
 * succeeds (a step refused half-way leaves nothing behind): with tensor
 * cores where they fit and may be used, else, or where refused, the SIMT
 * tiling. */
static loom_status take(loom_sched **s, const char *name, const space_block *sb,
                        const matmul *mm, const loom_target *t, bool may_wmma, loom_diag *d) {
  loom_status st = LOOM_ERROR;
  for (int pass = may_wmma && fits_wmma(sb, mm, t) ? 0 : 1; pass < 2; pass++) {
    loom_sched *c = loom_sched_copy(*s);
    if (!c)
      return LOOM_NOMEM;
    loom_diag tc;
    loom_diag_init(&tc);
    matmul padded = *mm;
    if (pass)
      st = tile(c, name, mm, d);
    else if ((st = pad_k(&c, name, &padded, &tc)) == LOOM_OK)
      st = tile_wmma(c, name, &padded, &tc);
    loom_diag_free(&tc);
    if (st == LOOM_OK)
      st = inline_operands(&c, name, pass ? mm : &padded);
    if (st == LOOM_OK) {
      loom_sched_free(*s);
      *s = c;
      return LOOM_OK;
    }
    loom_sched_free(c);
    if (st != LOOM_ERROR)
      return st;
  }
  return st;
}

loom_status dlight_matmul_apply(loom_sched **s, const loom_target *t,
                                const loom_matmul_config *config, loom_diag *why) {
  char *names[SPACE_MAX_BLOCKS];
  int n = dlight_block_names(*s, names, SPACE_MAX_BLOCKS);
  if (n < 0)
    return LOOM_NOMEM;
  loom_diag first;
  loom_diag_init(&first);
  loom_status st = LOOM_ERROR;
  int at = -1;
  bool is_first_reduction = false; /* the refusal told is a reduction's if any */
  for (int i = 0; i < n && st == LOOM_ERROR; i++) {
    space_block sb;
    matmul mm;
    loom_diag d;
    loom_diag_init(&d);
    bool is_found = space_find_block(space_func(*s), names[i], &sb);
    bool is_reduction = is_found && !space_is_spatial(sb.block);
    st = is_found ? match(names[i], &sb, &mm, &d) : LOOM_ERROR;
    if (st == LOOM_OK && config)
      mm.c = *config;
    else if (st == LOOM_OK)
      st = default_config(names[i], &mm, &mm.c, &d);
    if (st == LOOM_OK)
      st = check_config(names[i], &mm, &mm.c, t, &d);
    if (st == LOOM_OK)
      st = take(s, names[i], &sb, &mm, t, !config, &d);
    if (st == LOOM_ERROR && d.msg && (!first.has_error || (is_reduction && !is_first_reduction))) {
      loom_diag_free(&first);
      loom_diag_init(&first);
      loom_diag_error(&first, (loom_loc){0}, "%s", d.msg);
      is_first_reduction = is_reduction;
    }
    if (st == LOOM_OK)
      at = i;
    loom_diag_free(&d);
  }
  if (st == LOOM_OK) {
    int n_bound;
    const char *taken = names[at];
    st = dlight_bind_others(s, t, &taken, 1, &n_bound);
  } else if (st == LOOM_ERROR) {
    st = loom_diag_error(why, (loom_loc){0}, "%s", first.msg ? first.msg : "no block");
  }
  loom_diag_free(&first);
  dlight_names_free(names, n);
  return st;
}

bool dlight_matmul_shape_of(loom_sched *s, dlight_matmul_shape *out) {
  const char *names[SPACE_MAX_BLOCKS];
  int n = space_block_names(space_func(s), names, SPACE_MAX_BLOCKS);
  for (int i = 0; i < n; i++) {
    space_block sb;
    matmul mm;
    loom_diag d;
    loom_diag_init(&d);
    bool ok = space_find_block(space_func(s), names[i], &sb) &&
              match(names[i], &sb, &mm, &d) == LOOM_OK;
    loom_diag_free(&d);
    if (ok) {
      *out = mm.shape;
      return true;
    }
  }
  return false;
}

static loom_status matmul_rule(loom_sched **s, const loom_target *t, loom_diag *why) {
  return dlight_matmul_apply(s, t, NULL, why);
}

const loom_dlight_rule dlight_rule_matmul = {"Matmul", matmul_rule};
