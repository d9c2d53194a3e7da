/* Inside dlight: the rules and the steps they share. */
#ifndef LOOM_DLIGHT_IMPL_H
#define LOOM_DLIGHT_IMPL_H

#include "loom/tune.h"
#include "tune/space_impl.h"

extern const loom_dlight_rule dlight_rule_matmul;
extern const loom_dlight_rule dlight_rule_general_reduction;
extern const loom_dlight_rule dlight_rule_reduction;
extern const loom_dlight_rule dlight_rule_fallback;

/* Fails why with "block 'NAME' WHAT": the block is not one the rule takes. */
loom_status dlight_not_taken(loom_diag *why, const char *name, const char *what);

/* dlight's try_inline: every block compute-inlined, else reverse-inlined
 * into its producer, where the primitives allow it, until neither applies:
 * fewer kernels, no intermediate buffer between elementwise steps. */
loom_status dlight_inline_all(loom_sched **s);

/* Fallback's step for the block named name: its loops ordered spatial,
 * reduce, other; the spatial ones fused, split by t's threads per block,
 * bound to blockIdx.x and threadIdx.x. LOOM_ERROR (why says what) when the
 * block's loops do not hold it alone, bind threads already, or it has no
 * spatial loop. */
loom_status dlight_bind_spatial(loom_sched *s, const char *name, const loom_target *t,
                                loom_diag *why);

/* A rule's step on one block of s; LOOM_ERROR (why) when it does not fit. */
typedef loom_status (*dlight_step)(loom_sched *s, const char *name, const loom_target *t,
                                   loom_diag *why);

/* Offers step each block names[0..n) of *s not yet marked in is_taken, each
 * on a copy of *s that is kept, and the block marked, when the step
 * succeeds: a step refused half-way leaves nothing behind. *n_taken counts
 * the blocks marked now; first (NULL: none) gets the first refusal. */
loom_status dlight_each_block(loom_sched **s, const loom_target *t, dlight_step step,
                              char *const *names, int n, bool *is_taken, int *n_taken,
                              loom_diag *first);

/* dlight_bind_spatial on every block whose name is not in skip (n_skip of
 * them), by dlight_each_block; *n_bound counts the blocks bound. */
loom_status dlight_bind_others(loom_sched **s, const loom_target *t,
                               const char *const *skip, int n_skip, int *n_bound);

/* The names of the blocks of s's function, in post order, copied: a step
 * that replaces the schedule frees the IR they came from. Returns the
 * count, -1 when out of memory; free them with dlight_names_free. */
int dlight_block_names(loom_sched *s, char **out, int max);
void dlight_names_free(char **names, int n);

/* The Matmul rule's block: C[m, n] += A[m, k] * B[k, n], its inputs'
 * widest element, and whether each input's last index is the one that runs
 * along its rows of a tile (A's k, B's j: coalesced loads). */
typedef struct dlight_matmul_shape {
  int64_t m, n, k;
  int bits;
  bool a_k_last, b_j_last;
} dlight_matmul_shape;

/* Matmul with its tiling held to config (NULL: dlight's own table). */
loom_status dlight_matmul_apply(loom_sched **s, const loom_target *t,
                                const loom_matmul_config *config, loom_diag *why);
/* The first block of s's function that Matmul matches, before any tiling:
 * false when there is none (after dlight's inlining, as the rule sees it). */
bool dlight_matmul_shape_of(loom_sched *s, dlight_matmul_shape *out);

/* *s as Matmul tiles it (gemm_form.c): when its one reduction is a
 * product in other index spaces (a convolution), made a plain matmul
 * (*is_product then; why says why not otherwise), its input's copy the
 * im2col matrix; then inlined (dlight_inline_all: the padding before a
 * convolution goes into the copy of its input, not into the product, whose
 * copy would then read outside the padded tensor); then the copies laid
 * out so that Matmul inlines them into its tiles. */
loom_status dlight_gemm_prepare(loom_sched **s, bool *is_product, loom_diag *why);

/* The instruction kind (compute_inline, reverse_compute_inline,
 * transform_block_layout...) with attrs on the block named name of *s,
 * tried on a copy that replaces *s when it applies; *is_done is set then.
 * Fails only when out of memory. */
loom_status dlight_try_step(loom_sched **s, loom_inst_kind kind, const char *name,
                           const loom_tval *attrs, int n_attrs, bool *is_done);

/* dlight's pass on a schedule of one function: inlining, then the first of
 * rules that takes it; *rule gets its name, or NULL when none does (then *s
 * holds the inlining alone). explain as loom_tune_dlight's. */
loom_status dlight_schedule(loom_sched **s, const loom_target *t,
                            const loom_dlight_rule *const *rules, int n_rules,
                            const char **rule, loom_buf *explain);

/* A block's loops in the order a rule wants them: those binding spatial
 * iters, then reduce iters, then the others, each kind in program order. */
typedef struct dlight_nest {
  int order[SPACE_MAX_LOOPS]; /* indices into the block's loops */
  int n_loops, n_spatial, n_reduce;
  int64_t spatial_extent, reduce_extent; /* products; -1: not constant */
} dlight_nest;

void dlight_nest_of(const space_block *sb, dlight_nest *out);
/* Reorders the loops of the block named name into nest's order; ordered
 * gets their random variables in that order. */
loom_status dlight_nest_reorder(loom_sched *s, const char *name, const dlight_nest *nest,
                                loom_sched_rv *ordered, loom_diag *why);

/* At most this many threads share one row of a reduction, further capped
 * by the target's threads per block: with 256, a 1024-element row is four
 * loads a thread and several blocks stay resident per SM. */
#define DLIGHT_ROW_THREADS 256

/* The threads that split rows of the given extents (n of them): the
 * largest power of two up to the cap that divides them all, when that is a
 * warp or more; else the largest that fits the shortest row, a warp or
 * more, its last steps predicated; 0 when rows are shorter than a warp. */
int64_t dlight_row_threads(const loom_target *t, const int64_t *extents, int n);

/* Whether loop s is scheduled already: bound to a thread axis, or
 * computed by a library (the dispatch pass's "loom.library" mark, a call
 * between the kernels on cuda). */
bool dlight_is_claimed(const loom_stmt *s);

/* Whether some loop of s is claimed (dlight_is_claimed). */
bool dlight_binds_threads(const loom_stmt *s);

#endif
