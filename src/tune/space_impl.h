/* Inside the design space: the schedule rules' interface, what they know of
 * a block (its loops, scope and properties), and the helpers the rules and
 * postprocessors share to record instructions. */
#ifndef LOOM_SPACE_IMPL_H
#define LOOM_SPACE_IMPL_H

#include "loom/space.h"

/* The annotation that hands a block to the user: every rule leaves a block
 * carrying it alone (MetaSchedule's `schedule_rule`). */
#define SPACE_ANN_USER_RULE "schedule_rule"
#define SPACE_ANN_TILING "meta_schedule.tiling_structure"
#define SPACE_ANN_PARALLEL "meta_schedule.parallel"
#define SPACE_ANN_VECTORIZE "meta_schedule.vectorize"
#define SPACE_ANN_UNROLL_EXPLICIT "meta_schedule.unroll_explicit"
#define SPACE_ANN_UNROLL_IMPLICIT "meta_schedule.unroll_implicit"
#define SPACE_ANN_INLINE_RULE "meta_schedule.inline_rule"
/* GPU marks: the thread counts a tiled block keeps within, and the vector
 * length of a shared copy's cooperative fetch. */
#define SPACE_ANN_THREAD_LOW "meta_schedule.thread_extent_low_inclusive"
#define SPACE_ANN_THREAD_HIGH "meta_schedule.thread_extent_high_inclusive"
#define SPACE_ANN_COOPERATIVE_FETCH "meta_schedule.cooperative_fetch"
/* Set by AddRFactor on the block that adds up the partial sums: its
 * producer, the rfactor block, is placed with it. */
#define SPACE_ANN_COMPUTE_PRODUCER "meta_schedule.random_compute_producer"

#define SPACE_MAX_LOOPS 64
#define SPACE_MAX_BLOCKS 256

/* ---- schedules in flight ------------------------------------------------------ */

typedef struct space_list {
  loom_sched **items;
  int n, cap;
} space_list;

/* Takes s; on failure frees it. */
loom_status space_list_push(space_list *l, LOOM_TAKE loom_sched *s);
void space_list_free(space_list *l);

/* ---- schedule rules (src/tune/rules/) --------------------------------------------- */

typedef struct space_ctx {
  const loom_target *target;
  const char *func;   /* the function's name, for get_block */
} space_ctx;

/* A rule applied to the block named `block` of s, which the random
 * variable rv of s names (PostOrderApply gets every block once, up front,
 * as TVM does): it takes s and appends
 * to out the schedules it makes of it (s itself, unchanged, when the rule
 * does not apply). A step the schedule refuses makes the rule not apply;
 * only running out of memory is an error. */
typedef struct space_rule {
  const char *name;
  loom_status (*apply)(const space_ctx *x, LOOM_TAKE loom_sched *s,
                       const char *block, loom_sched_rv rv, space_list *out);
} space_rule;

extern const space_rule space_rule_auto_inline;
extern const space_rule space_rule_add_rfactor;
extern const space_rule space_rule_multi_level_tiling;
extern const space_rule space_rule_parallel_vectorize_unroll;
extern const space_rule space_rule_random_compute_location;
extern const space_rule space_rule_auto_tensorize;
/* The cuda rules (MetaSchedule's DefaultCUDA). */
extern const space_rule space_rule_multi_level_tiling_gpu;
extern const space_rule space_rule_cross_thread_reduction;
extern const space_rule space_rule_auto_bind;

/* Whether the rules and postprocessors work for a GPU. */
bool space_is_gpu(const loom_target *t);
/* TVM's GetLoopIterType: spatial when the blocks under the loop bind it
 * to spatial iters only (or not at all), reduce when to reduction iters
 * only, opaque when to both or to another kind. */
loom_iter_kind space_loop_iter_kind(const loom_stmt *loop);
/* Binds the block's outer loops to blockIdx.x and threadIdx.x, recording
 * each step on s. With thread_extents the thread count is sampled among
 * them (AutoBind); without, it is the fused extent up to max_threads
 * (RewriteUnboundBlock). The root, a block the GPU tiling took, and a
 * block bound to both already are left alone; a block bound to threadIdx
 * alone gets its outer spatial loops before the thread loop fused and
 * bound to blockIdx.x. A block with no leading spatial loop gets a unit
 * loop to bind. A step the schedule refuses is returned as an error. */
#define SPACE_MAX_THREADBLOCKS 256 /* AutoBind's and RewriteUnboundBlock's */
loom_status space_bind_block_threads(loom_sched *s, loom_sched_rv block,
                                     int64_t max_threadblocks, int64_t max_threads,
                                     const int64_t *thread_extents, int n_extents,
                                     loom_diag *d);

/* ---- what a rule knows of a block (rules/block_info.c) ---------------------------- */

typedef struct space_block {
  const loom_func *f;
  const loom_stmt *realize;
  const loom_block *block;
  const loom_stmt *scope;  /* the enclosing block's realize; NULL for the root */
  const loom_stmt *loops[SPACE_MAX_LOOPS]; /* between scope and block, outer first */
  int n_loops;
  bool is_nested_oddly;    /* an IF, LET or other non-loop on the way */
} space_block;

/* Finds the block named name in f (the first in program order). */
bool space_find_block(const loom_func *f, const char *name, space_block *out);
/* The names of f's blocks in post order (children before their parent),
 * up to max; returns the count. */
int space_block_names(const loom_func *f, const char **out, int max);
/* The blocks directly under a scope's body (no block between), up to max. */
int space_child_blocks(const loom_stmt *scope, const loom_stmt **out, int max);
/* The blocks of the same scope after b that read what b writes. */
int space_consumers(const space_block *b, const loom_stmt **out, int max);

bool space_is_spatial(const loom_block *b);   /* every iter S */
/* What parallel and vectorize accept of a block under the loop: a complete
 * block (spatial, reading none of what it writes), a block with an init (a
 * reduction; the primitive checks the rest), or an elementwise update in
 * place (spatial, every buffer it writes read exactly where it is written,
 * so no iteration reads what another writes). */
bool space_is_parallelizable(const loom_block *b);
bool space_has_ann(const loom_attr *a, int n, const char *key);
/* The bindings are distinct loop variables of sb's loops, each iter bound
 * to one loop, one loop per iter (TVM's trivial binding), and sb's loops
 * are a perfect nest of constant extent. */
bool space_is_trivial_nest(const space_block *sb);
/* A block the tiling rules may take: under a scope, a trivial nest, not
 * tiled yet, every iter spatial or reduce. */
bool space_is_open_nest(const space_block *sb);
/* The index of iter var v among b's, or -1. */
int space_iter_index(const loom_block *b, const loom_var *v);
/* The iter var bound to loop var v, or NULL. */
const loom_iter_var *space_iter_of_loop(const space_block *sb,
                                        const loom_var *v);
/* e is v, or v plus or minus terms free of v: it moves by one when v
 * does. */
bool space_is_unit_in(const loom_expr *e, const loom_var *v);
/* The iter var of sb whose binding moves by one with loop var v; NULL when
 * none does, or v enters the bindings otherwise. */
const loom_var *space_unit_iter(const space_block *sb, const loom_var *v);
/* Every block of f is spatial (TVM's IsSpatialPrimFunc). */
bool space_func_is_spatial(const loom_func *f);
/* Some range of region r uses v. */
bool space_region_uses(const loom_buffer_region *r, const loom_var *v);
/* TVM's NeedsMultiLevelTiling: one write, reads of distinct buffers with
 * constant extents, a reduction over a trivially bound perfect nest, and
 * reuse (some spatial iter indexes none of some read). */
bool space_needs_tiling(const space_block *sb);
/* The products of the extents of sb's loops bound to spatial iters and of
 * the rest (its loops are a trivially bound perfect nest of constant
 * extents), past INT64_MAX saturated. */
void space_loop_extents(const space_block *sb, int64_t *space, int64_t *reduce);
/* TVM's IsWriteCache: one write of single points at iter vars, and every
 * read of single points at some of those vars (or constants), each var at
 * most once and in the write's order (injective and ordered): a copy, or
 * an elementwise epilogue such as bias + ReLU. */
bool space_is_write_cache(const loom_block *b);

/* ---- recording helpers (rules/record.c) --------------------------------------------- */

loom_status space_get_block(loom_sched *s, const char *func, const char *name,
                            loom_sched_rv *out, loom_diag *d);
loom_status space_annotate(loom_sched *s, loom_sched_rv rv, const char *key,
                           loom_tval value, loom_diag *d);
loom_status space_unannotate(loom_sched *s, loom_sched_rv rv, const char *key,
                             loom_diag *d);
/* One instruction with no attrs and no decision. */
loom_status space_apply(loom_sched *s, loom_inst_kind kind,
                        const loom_tval *in, int n_in, const loom_tval *attrs,
                        int n_attrs, const loom_sched_rv **outs, int *n_outs,
                        loom_diag *d);
/* Runs step on a copy of s and hands on the copy when every instruction
 * applied, s when one was refused (s is taken either way). */
typedef loom_status (*space_step)(const space_ctx *x, loom_sched *t,
                                  loom_sched_rv block, loom_diag *d);
loom_status space_try(const space_ctx *x, LOOM_TAKE loom_sched *s,
                      loom_sched_rv block, space_step step, space_list *out);
/* Tiling levels at most (the GPU's "SSSRRSRS" has 8). */
#define SPACE_MAX_LEVELS 8
/* MultiLevelTiling's first step (rules/tile_levels.c): block (sb, its
 * loops outer first) marked with structure, then every loop bound to an
 * iter split by sample_perfect_tile into one tile per level of its kind
 * ('S' spatial, else reduction) and the tiles reordered level by level;
 * tiles[l][0..n_tiles[l]) are level l's loops, outer first (n_tiles zero
 * on entry). When packed is not NULL, that iter's innermost tile is fixed
 * to lanes, the other levels sampled. */
loom_status space_tile_levels(const space_ctx *x, loom_sched *t, const space_block *sb,
                              loom_sched_rv block, const char *structure,
                              loom_sched_rv (*tiles)[SPACE_MAX_LOOPS], int *n_tiles,
                              const loom_var *packed, int64_t lanes, loom_diag *d);
/* The block's only consumer when it is a write cache (MultiLevelTiling
 * moves it instead of writing a cache), as a random variable of t; -1
 * when there is none such. */
loom_status space_write_cache_consumer(loom_sched *t, const space_block *sb,
                                       loom_sched_rv block, loom_sched_rv *out,
                                       loom_diag *d);
/* sample_categorical over values, each with probability 1/n. */
#define SPACE_MAX_CHOICES 16
loom_status space_sample_uniform(loom_sched *s, const int64_t *values, int n,
                                 loom_sched_rv *out, loom_diag *d);
/* reverse_compute_at(block, loop, preserve_unit_loops=True, index=-1). */
loom_status space_reverse_compute_at(loom_sched *s, loom_sched_rv block,
                                     loom_sched_rv loop, loom_diag *d);
/* A deep copy of t in arena a, so that it outlives its schedule. */
loom_status space_trace_copy(const loom_trace *t, loom_arena *a,
                             loom_trace *out);
/* The function a schedule works on (its module's first). */
const loom_func *space_func(const loom_sched *s);

/* ---- postprocessors (src/tune/postproc/) -------------------------------------------- */

loom_status space_disallow_dynamic_loop(loom_sched *s, loom_diag *d);
loom_status space_rewrite_parallel_vectorize_unroll(loom_sched *s,
                                                    loom_diag *d);
loom_status space_rewrite_reduction_block(loom_sched *s, loom_diag *d);
/* The GPU postprocessors: cache copies split among the threads (their
 * meta_schedule.cooperative_fetch marks made real), and blocks left
 * without threads bound to blockIdx.x / threadIdx.x. */
loom_status space_rewrite_cooperative_fetch(loom_sched *s, loom_diag *d);
loom_status space_rewrite_unbound_block(loom_sched *s, const loom_target *t,
                                        loom_diag *d);
loom_status space_verify(loom_sched *s, const loom_target *t, loom_diag *d);

#endif
