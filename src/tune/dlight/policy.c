/* Fast tuning's policy for the Matmul template, after Roller (OSDI '22):
 * every tiling of C into block tiles, thread patches and k steps that the
 * target can hold (shared memory, registers, threads) is given an estimated
 * time from a model of the memory system, and the best k are kept to be
 * built and timed. The model is only a ranking; the GPU has the last word.
 *
 * The estimate of one tiling is the slowest of three streams, plus half the
 * other two (they overlap it, but not wholly), divided by how well the grid
 * fills the machine, plus the latency of each step of k that the blocks
 * resident on a multiprocessor do not hide:
 *   global memory: each block reads its rows of A and columns of B for all
 *     of k, in 32-byte sectors (a tile row shorter than a sector still costs
 *     one), and writes its tile of C once;
 *   shared memory: each thread reads tm + tn elements per step of k for its
 *     tm x tn products (128 bytes a clock per multiprocessor);
 *   arithmetic: one fused multiply-add per product, 128 lanes a clock per
 *     multiprocessor (sm_80 and sm_90 SIMT cores);
 * a step's latency is that of a load from global memory (about 600 clocks);
 * and the fill is the share of the last wave's block slots in use, lowered
 * further when fewer than 16 warps a multiprocessor are resident to hide
 * memory latency. */
#include "tune/dlight/dlight_impl.h"

#include <stdlib.h>

#define SECTOR 32
#define SHARED_BYTES_PER_CLOCK 128
#define LANES 128
#define HIDING_WARPS 16
#define MAX_BLOCKS_PER_SM 32
#define STEP_CLOCKS 600
/* Of each block shape, at most this many k steps among the k kept, so
 * that the few measured span different shapes. */
#define SAME_SHAPE 2
/* Registers a thread needs beyond its patch and operands: addresses, loop
 * counters, the fetch's indices. */
#define REGS_OVERHEAD 32

static const int64_t block_tiles[] = {16, 32, 64, 128, 256};
static const int64_t patches[] = {1, 2, 4, 8};
static const int64_t k_steps[] = {4, 8, 16, 32, 64};
#define N_OF(a) (int)(sizeof a / sizeof *a)

/* Bytes moved to read rows of run contiguous elements of width bytes. */
static double sectors(double elems, int64_t run, int bytes) {
  int64_t row = run * bytes;
  int64_t cost = (row + SECTOR - 1) / SECTOR * SECTOR;
  return elems * bytes * (double)cost / (double)row;
}

static double estimate(const dlight_matmul_shape *sh, const loom_gpu_desc *g,
                       const loom_matmul_config *c) {
  int bytes = sh->bits / 8;
  int64_t threads = (c->bm / c->tm) * (c->bn / c->tn);
  int64_t regs = c->tm * c->tn + c->tm + c->tn + REGS_OVERHEAD;
  if (regs > g->regs_per_thread || threads * regs > g->regs_per_block)
    return -1;
  int64_t smem = (c->bm + c->bn) * c->bk * bytes;
  if (smem > g->shared_per_block)
    return -1;
  int64_t per_sm = MAX_BLOCKS_PER_SM;
  if (g->max_threads_per_sm / threads < per_sm)
    per_sm = g->max_threads_per_sm / threads;
  if (g->regs_per_sm / (threads * regs) < per_sm)
    per_sm = g->regs_per_sm / (threads * regs);
  if (g->shared_per_sm / smem < per_sm)
    per_sm = g->shared_per_sm / smem;
  if (per_sm < 1)
    return -1;
  double grid = (double)(sh->m / c->bm) * (double)(sh->n / c->bn);
  double slots = (double)per_sm * g->multiprocessors;
  double waves = (double)(int64_t)((grid + slots - 1) / slots);
  double fill = grid / (waves * slots);
  /* Warps on a multiprocessor that has work: a grid smaller than the
   * machine leaves fewer blocks on each. */
  double blocks = (double)(int64_t)((grid + g->multiprocessors - 1) / g->multiprocessors);
  double warps = (blocks < per_sm ? blocks : (double)per_sm) * (double)threads / g->warp_size;
  if (warps < HIDING_WARPS)
    fill *= warps / HIDING_WARPS;
  double a_run = sh->a_k_last ? c->bk : c->bm, b_run = sh->b_j_last ? c->bn : c->bk;
  double global = grid * (sectors((double)c->bm * sh->k, (int64_t)a_run, bytes) +
                          sectors((double)c->bn * sh->k, (int64_t)b_run, bytes)) +
                  (double)sh->m * sh->n * 4;
  double products = (double)sh->m * sh->n * sh->k;
  double clock = g->clock_mhz * 1e6;
  double t_global = global / (g->bandwidth_gbps * 1e9);
  double t_shared = products * (1.0 / c->tm + 1.0 / c->tn) * bytes /
                    (SHARED_BYTES_PER_CLOCK * clock * g->multiprocessors);
  double t_math = products / ((double)LANES * clock * g->multiprocessors);
  double t = t_global > t_shared ? t_global : t_shared;
  t = t > t_math ? t : t_math;
  t += 0.5 * (t_global + t_shared + t_math - t);
  /* The streams' times assume the whole machine busy, hence the fill; the
   * steps' latency is already a time per wave. */
  double latency = waves * (double)(sh->k / c->bk) * STEP_CLOCKS / clock / (double)per_sm;
  return (t / fill + latency) * 1e3;
}

static int by_estimate(const void *x, const void *y) {
  double a = ((const loom_matmul_config *)x)->est_ms;
  double b = ((const loom_matmul_config *)y)->est_ms;
  return a < b ? -1 : a > b;
}

/* Every tiling that divides the shape and fits g, estimated; NULL when out
 * of memory. */
static loom_matmul_config *tilings(const dlight_matmul_shape *sh, const loom_gpu_desc *g,
                                   int *n) {
  int cap = N_OF(block_tiles) * N_OF(block_tiles) * N_OF(patches) * N_OF(patches) *
            N_OF(k_steps);
  loom_matmul_config *all = malloc((size_t)cap * sizeof *all);
  *n = 0;
  for (int a = 0; all && a < N_OF(block_tiles); a++)
    for (int b = 0; b < N_OF(block_tiles); b++)
      for (int p = 0; p < N_OF(patches); p++)
        for (int q = 0; q < N_OF(patches); q++)
          for (int r = 0; r < N_OF(k_steps); r++) {
            loom_matmul_config c = {.bm = block_tiles[a], .bn = block_tiles[b],
                                    .tm = patches[p], .tn = patches[q], .bk = k_steps[r]};
            int64_t threads = (c.bm / c.tm) * (c.bn / c.tn);
            if (sh->m % c.bm || sh->n % c.bn || sh->k % c.bk || c.tm > c.bm ||
                c.tn > c.bn || threads % g->warp_size || threads > g->max_threads_per_block)
              continue;
            if ((c.est_ms = estimate(sh, g, &c)) > 0)
              all[(*n)++] = c;
          }
  return all;
}

static bool is_gpu(const loom_target *t) {
  const loom_gpu_desc *g = &t->gpu;
  return t->kind == LOOM_TARGET_CUDA && g->multiprocessors > 0 && g->warp_size > 0 &&
         g->max_threads_per_block > 0 && g->max_threads_per_sm > 0 && g->regs_per_sm > 0 &&
         g->regs_per_block > 0 && g->regs_per_thread > 0 && g->shared_per_block > 0 &&
         g->shared_per_sm > 0 && g->bandwidth_gbps > 0 && g->clock_mhz > 0;
}

/* A schedule of m's one function for t as Matmul tiles it
 * (dlight_gemm_prepare: a convolution made a product, then inlined): what
 * the policy reads the matmul's shape on and its candidates start from. */
static loom_status prepared(const loom_module *m, const loom_target *t, loom_sched **out,
                            loom_diag *d) {
  *out = NULL;
  if (!is_gpu(t))
    return loom_diag_error(d, (loom_loc){0},
                           "fast tuning needs a cuda target with its multiprocessors, "
                           "registers, shared memory, bandwidth and clock (cuda -arch=sm_90)");
  if (m->n_funcs != 1)
    return loom_diag_error(d, (loom_loc){0}, "fast tuning takes a module of one function");
  if (!(*out = loom_sched_new(m, 0)))
    return LOOM_NOMEM;
  loom_diag why;
  loom_diag_init(&why);
  bool is_product;
  loom_status st = dlight_gemm_prepare(out, &is_product, &why);
  loom_diag_free(&why);
  if (st != LOOM_OK) {
    loom_sched_free(*out);
    *out = NULL;
  }
  return st;
}

/* The policy's best k tilings of the matmul of s, inlined. */
static loom_status configs_of(loom_sched *s, const loom_target *t, int k,
                              loom_matmul_config *out, int *n) {
  *n = 0;
  dlight_matmul_shape sh;
  if (!dlight_matmul_shape_of(s, &sh) || sh.bits < 8)
    return LOOM_OK;
  int n_all;
  loom_matmul_config *all = tilings(&sh, &t->gpu, &n_all);
  if (!all)
    return LOOM_NOMEM;
  qsort(all, (size_t)n_all, sizeof *all, by_estimate);
  for (int i = 0; i < n_all && *n < k; i++) {
    int same = 0;
    for (int j = 0; j < *n; j++)
      same += out[j].bm == all[i].bm && out[j].bn == all[i].bn && out[j].tm == all[i].tm &&
              out[j].tn == all[i].tn;
    if (same < SAME_SHAPE)
      out[(*n)++] = all[i];
  }
  free(all);
  return LOOM_OK;
}

loom_status loom_tune_fast_configs(const loom_module *m, const loom_target *t, int k,
                                   loom_matmul_config *out, int *n, loom_diag *d) {
  *n = 0;
  loom_sched *s;
  TRY(prepared(m, t, &s, d));
  loom_status st = configs_of(s, t, k, out, n);
  loom_sched_free(s);
  return st;
}

/* dlight's schedule on a copy of base (prepared), its Matmul held to
 * config; NULL: dlight's rules as they are, on m as written. *out NULL
 * when it takes nothing. */
static loom_status schedule(const loom_module *m, loom_sched *base, const loom_target *t,
                            const loom_matmul_config *config, loom_sched **out) {
  loom_sched *s = config ? loom_sched_copy(base) : loom_sched_new(m, 0);
  if (!s)
    return LOOM_NOMEM;
  const char *rule = NULL;
  loom_status st;
  if (config) {
    loom_diag why;
    loom_diag_init(&why);
    st = dlight_matmul_apply(&s, t, config, &why);
    loom_diag_free(&why);
    rule = st == LOOM_OK ? "Matmul" : NULL;
  } else {
    int n_rules;
    const loom_dlight_rule *const *rules = loom_tune_dlight_rules(&n_rules);
    st = dlight_schedule(&s, t, rules, n_rules, &rule, NULL);
  }
  if (st == LOOM_OK && rule) {
    *out = s;
    return LOOM_OK;
  }
  loom_sched_free(s);
  *out = NULL;
  return st == LOOM_ERROR ? LOOM_OK : st;
}

loom_status loom_tune_fast_candidates(const loom_module *m, const loom_target *t, int k,
                                      loom_sched **out, int *n, loom_diag *d) {
  *n = 0;
  if (k < 1)
    return loom_diag_error(d, (loom_loc){0}, "fast tuning needs at least one candidate");
  loom_sched *base;
  TRY(prepared(m, t, &base, d));
  loom_matmul_config *configs = malloc((size_t)k * sizeof *configs);
  int n_configs;
  loom_status st = configs ? configs_of(base, t, k, configs, &n_configs) : LOOM_NOMEM;
  /* dlight's own schedule first: it is what the policy must beat. */
  loom_sched *s = NULL;
  if (st == LOOM_OK && (st = schedule(m, base, t, NULL, &s)) == LOOM_OK && s)
    out[(*n)++] = s;
  for (int i = 0; st == LOOM_OK && i < n_configs && *n < k; i++) {
    /* Skipped where it is dlight's own tiling, or Matmul refuses it. */
    if ((st = schedule(m, base, t, &configs[i], &s)) != LOOM_OK || !s)
      continue;
    bool is_known = false;
    for (int j = 0; j < *n && !is_known; j++)
      is_known = loom_ir_equal_func(loom_sched_module(out[j])->funcs[0],
                                    loom_sched_module(s)->funcs[0], NULL);
    if (is_known)
      loom_sched_free(s);
    else
      out[(*n)++] = s;
  }
  free(configs);
  loom_sched_free(base);
  if (st != LOOM_OK) {
    for (int i = 0; i < *n; i++)
      loom_sched_free(out[i]);
    *n = 0;
  }
  return st;
}
