/* The schedule DSL: a schedule holds an IRModule being transformed, the random
 * variables that name its blocks, loops and sampled values, the trace of the
 * instructions applied so far and a seedable generator. Every primitive is an
 * IRModule -> IRModule rewrite that shares unchanged subtrees; copying a
 * schedule shares the IR and copies only its small tables.
 *
 * Instructions are described once, in include/loom/schedule_insts.def: their
 * names in TVM's JSON and in schedule scripts, their inputs, attributes and
 * decision. */
#ifndef LOOM_SCHEDULE_H
#define LOOM_SCHEDULE_H

#include "loom/ir.h"
#include "loom/script.h"

typedef struct loom_sched loom_sched;

/* A random variable: an index into its schedule's table. -1 is "none" (an
 * output a trace dropped, printed as `_`). */
typedef int loom_sched_rv;

typedef enum {
  LOOM_RV_BLOCK, /* printed b<k> */
  LOOM_RV_LOOP,  /* printed l<k> */
  LOOM_RV_EXPR,  /* printed v<k>: a sampled integer */
} loom_rv_kind;

/* ---- trace values -----------------------------------------------------------
 * The inputs, attributes and decisions of instructions: what TVM's JSON
 * records can hold. */
typedef enum {
  LOOM_TV_NONE,
  LOOM_TV_BOOL,  /* i */
  LOOM_TV_INT,   /* i */
  LOOM_TV_FLOAT, /* f */
  LOOM_TV_STR,   /* s */
  LOOM_TV_RV,    /* i: a random variable */
  LOOM_TV_LIST,  /* items */
  LOOM_TV_DICT,  /* keys, items */
} loom_tval_kind;

typedef struct loom_tval {
  loom_tval_kind kind;
  int n;             /* LIST, DICT */
  int64_t i;
  double f;
  const char *s;
  struct loom_tval *items;
  const char **keys;
} loom_tval;

LOOM_API loom_tval loom_tval_none(void);
LOOM_API loom_tval loom_tval_int(int64_t v);
LOOM_API loom_tval loom_tval_bool(bool v);
LOOM_API loom_tval loom_tval_str(const char *s);
LOOM_API loom_tval loom_tval_rv(loom_sched_rv rv);

/* ---- instruction kinds ------------------------------------------------------ */

typedef enum {
#define X(id, json, json_alias, method, method_alias, out, is_list, spec,      \
          is_pure, apply)                                                       \
  LOOM_INST_##id,
#include "loom/schedule_insts.def"
#undef X
  LOOM_INST_COUNT_
} loom_inst_kind;

/* Finds a kind by its JSON name or script method (either spelling); -1 when
 * there is none. */
LOOM_API int loom_inst_kind_by_json(const char *name);
LOOM_API int loom_inst_kind_by_method(const char *name);
LOOM_API const char *loom_inst_kind_method(loom_inst_kind k,
                                           loom_dialect dialect);

/* One applied instruction. RV inputs and outputs are indices into the
 * table of the schedule (or trace) that holds it. */
typedef struct loom_inst {
  loom_inst_kind kind;
  loom_tval *inputs;
  int n_inputs;
  loom_tval *attrs;
  int n_attrs;
  loom_sched_rv *outputs; /* -1: dropped */
  int n_outputs;
  loom_tval decision;     /* NONE when the kind has none or it is undecided */
  loom_loc loc;           /* the script line it came from; line 0 if none */
} loom_inst;

/* A trace: instructions in order over n_rvs random variables. */
typedef struct loom_trace {
  loom_inst *const *insts;
  int n_insts;
  int n_rvs;
} loom_trace;

/* ---- schedules -------------------------------------------------------------- */

/* A schedule of m (borrowed: it must outlive the schedule and every copy).
 * NULL when out of memory. */
LOOM_API LOOM_GIVE loom_sched *loom_sched_new(LOOM_KEEP const loom_module *m,
                                              uint64_t seed);
/* A copy that shares the IR and the trace's instructions; its generator is
 * forked from s's (s's stream advances). NULL when out of memory. */
LOOM_API LOOM_GIVE loom_sched *loom_sched_copy(loom_sched *s);
LOOM_API void loom_sched_free(LOOM_TAKE loom_sched *s);

LOOM_API const loom_module *loom_sched_module(const loom_sched *s);
LOOM_API loom_trace loom_sched_trace(const loom_sched *s);
LOOM_API loom_rng *loom_sched_rng(loom_sched *s);
LOOM_API loom_rv_kind loom_sched_rv_kind(const loom_sched *s, loom_sched_rv rv);
/* The value of an EXPR random variable. */
LOOM_API int64_t loom_sched_rv_value(const loom_sched *s, loom_sched_rv rv);
/* The loop variable of a LOOP random variable (NULL for other kinds). */
LOOM_API const loom_var *loom_sched_rv_loop(const loom_sched *s,
                                            loom_sched_rv rv);
/* The block a BLOCK random variable names, NULL when it no longer exists. */
LOOM_API const loom_block *loom_sched_rv_block(const loom_sched *s,
                                               loom_sched_rv rv);

/* Applies one instruction: inputs and attrs as loom_inst holds them (RVs of
 * s); decision NONE samples, and a given decision must fit the instruction
 * (as LOOM_REPLAY_CHECK describes below). On success the instruction joins the trace and
 * *outs / *n_outs (either may be NULL) give its outputs, valid while s lives.
 * On refusal s is unchanged and d names the block or loop and the property
 * that fails, located at loc. */
LOOM_API loom_status loom_sched_apply(loom_sched *s, loom_inst_kind kind,
                                      const loom_tval *inputs, int n_inputs,
                                      const loom_tval *attrs, int n_attrs,
                                      loom_tval decision, loom_loc loc,
                                      const loom_sched_rv **outs, int *n_outs,
                                      loom_diag *d);

/* Convenience wrappers over loom_sched_apply for C callers. */
LOOM_API loom_status loom_sched_get_block(loom_sched *s, const char *name,
                                          const char *func_name,
                                          loom_sched_rv *out, loom_diag *d);
LOOM_API loom_status loom_sched_get_loops(loom_sched *s, loom_sched_rv block,
                                          const loom_sched_rv **loops, int *n,
                                          loom_diag *d);
/* factors: INT, NONE or an EXPR RV each. */
LOOM_API loom_status loom_sched_split(loom_sched *s, loom_sched_rv loop,
                                      const loom_tval *factors, int n_factors,
                                      bool preserve_unit_iters,
                                      bool disable_predication,
                                      const loom_sched_rv **outs, loom_diag *d);
LOOM_API loom_status loom_sched_fuse(loom_sched *s, const loom_sched_rv *loops,
                                     int n, bool preserve_unit_iters,
                                     loom_sched_rv *out, loom_diag *d);
LOOM_API loom_status loom_sched_reorder(loom_sched *s,
                                        const loom_sched_rv *loops, int n,
                                        loom_diag *d);
/* kind: LOOM_INST_PARALLEL, _VECTORIZE or _UNROLL. */
LOOM_API loom_status loom_sched_for_kind(loom_sched *s, loom_inst_kind kind,
                                         loom_sched_rv loop, loom_diag *d);
LOOM_API loom_status loom_sched_bind(loom_sched *s, loom_sched_rv loop,
                                     const char *thread_axis, loom_diag *d);
/* ---- legality queries ---------------------------------------------------------
 * For design-space rules that adapt to irregular blocks: may this loop run
 * in parallel (be vectorized) now? The same test the primitive makes (the
 * block-property check, then the exact dependence analysis for blocks that
 * are neither complete nor reduction blocks); s is not changed. */

/* kind: LOOM_INST_PARALLEL, _VECTORIZE or _UNROLL (always allowed). LOOM_OK
 * when the primitive would be allowed; otherwise LOOM_ERROR with why holding
 * the refusal the primitive would give ("cannot parallelize loop 'i_': it
 * carries a dependence of distance 1: ..."). */
LOOM_API loom_status loom_sched_can_for_kind(loom_sched *s, loom_inst_kind kind,
                                             loom_sched_rv loop,
                                             loom_diag *why);
/* The same for parallel, as a yes or no. */
LOOM_API bool loom_sched_loop_is_parallel(loom_sched *s, loom_sched_rv loop);

LOOM_API loom_status loom_sched_sample_perfect_tile(loom_sched *s,
                                                    loom_sched_rv loop, int n,
                                                    int max_innermost_factor,
                                                    const loom_sched_rv **outs,
                                                    loom_diag *d);

/* ---- scripts and traces ----------------------------------------------------- */

/* Runs a schedule script (Python subset: `x = sch.method(...)` lines, names
 * bound to earlier outputs or literal values) on s, statement by statement.
 * Errors are located at the script: unknown methods, bad or missing
 * arguments, undefined variables, and refused steps. */
LOOM_API loom_status loom_sched_run_script(loom_sched *s, const char *text,
                                           size_t len, const char *file,
                                           loom_diag *d);

/* Prints as TVM's Trace.as_python: one `sch.*` call per line, outputs named
 * b/l/v<k> with k counting every output. */
LOOM_API void loom_trace_print_py(const loom_trace *t, loom_dialect dialect,
                                  loom_buf *out);
/* Prints TVM's JSON record: [[[kind, inputs, attrs, outputs], ...],
 * [[inst_index, decision], ...]] on one line. */
LOOM_API void loom_trace_print_json(const loom_trace *t, loom_dialect dialect,
                                    loom_buf *out);
/* Reads the JSON form into a trace in arena a. */
LOOM_API loom_status loom_trace_read_json(const char *text, size_t len,
                                          const char *file, loom_arena *a,
                                          loom_trace *out, loom_diag *d);
/* What a replay does with the recorded decisions of sampling steps. */
typedef enum {
  /* Drop them: every sampling step draws anew from the schedule's
   * generator. */
  LOOM_REPLAY_RESAMPLE,
  /* Keep them, and refuse one that does not fit its instruction (a tile
   * whose factors do not multiply to the loop's extent, a factor that is
   * not positive, an innermost factor above max_innermost_factor, an index
   * past the candidates, a location that is not one) at the instruction's
   * location, as loom_sched_apply and scripts do: for traces that come
   * from the user or a database. */
  LOOM_REPLAY_CHECK,
  /* Keep them, and repair a stale one: a tile made for another extent
   * (from the innermost factor out, one that does not divide what is left
   * becomes what is left; the outermost takes the remainder), a compute
   * location that is no longer a candidate (the nearest one before it).
   * For a tuner replaying a mutated trace, where one changed decision
   * changes the loops that later decisions were made for. */
  LOOM_REPLAY_REPAIR,
} loom_replay_mode;

/* Replays t on s (usually fresh), its decisions treated as mode says. */
LOOM_API loom_status loom_trace_apply(const loom_trace *t, loom_sched *s,
                                      loom_replay_mode mode, loom_diag *d);
/* The trace without pure instructions whose outputs nothing uses (backward
 * dead-code elimination), in arena a. */
LOOM_API loom_status loom_trace_simplify(const loom_trace *t, loom_arena *a,
                                         loom_trace *out);

/* ---- tensor intrinsics --------------------------------------------------------
 * What tensorize maps a block onto: a description prim func (a loop nest
 * around one block, under a root block whose reads and writes cover the
 * parameters) and an implementation prim func over the same buffer
 * parameters (pairwise the same dtype and shape; T.match_buffer with
 * offset_factor, strides or elem_offset, as TVM writes them), kept as
 * TVMScript text. The built-in CPU intrinsics are always there:
 *   loom_f32_dot_16       C[0] += A[k] * B[k] over k < 16 (A, B: (16,); C: (1,))
 *   loom_f32_gemm_4x16x4  C[i, j] += A[i, k] * B[k, j] over a 4x16x4 tile
 * and so are CUDA's warp matrix operations on 16x16x16 tiles, named as TVM
 * names them (docs/gpu.md): wmma_load_16x16x16_f16_{a,b,b_trans}_shared,
 * wmma_fill_16x16x16_f32, wmma_sync_16x16x16_f16f16f32{,_trans} and
 * wmma_store_16x16x16_f32_{global,shared}.
 * Others are registered in a set the caller owns and attaches to
 * schedules; nothing global changes. */
typedef struct loom_sched_intrin {
  const char *name;
  const char *desc; /* TVMScript of the description */
  const char *impl; /* TVMScript of the implementation */
} loom_sched_intrin;

typedef struct loom_intrin_set loom_intrin_set;

/* An empty set; NULL when out of memory. */
LOOM_API LOOM_GIVE loom_intrin_set *loom_sched_intrins_new(void);
LOOM_API void loom_sched_intrins_free(LOOM_TAKE loom_intrin_set *set);
/* Adds an intrinsic (the texts are copied). Refused, with d saying why, when
 * the name is taken (built-ins included), a text does not read as one prim
 * func with a root block and buffer parameters, or the two disagree on their
 * parameters. */
LOOM_API loom_status loom_sched_intrin_register(loom_intrin_set *set,
                                                const char *name,
                                                const char *desc_text,
                                                const char *impl_text,
                                                loom_diag *d);
/* By name among the built-ins and then set's (set may be NULL); NULL when
 * there is none. */
LOOM_API const loom_sched_intrin *
loom_sched_intrin_get(const loom_intrin_set *set, const char *name);
/* All of them, built-ins first: indices 0 .. count - 1. */
LOOM_API int loom_sched_intrin_count(const loom_intrin_set *set);
LOOM_API const loom_sched_intrin *
loom_sched_intrin_at(const loom_intrin_set *set, int i);
/* Makes set's intrinsics (borrowed: it must outlive s and its copies)
 * visible to tensorize on s and on copies made from it afterwards. */
LOOM_API void loom_sched_set_intrins(loom_sched *s,
                                     LOOM_KEEP const loom_intrin_set *set);
LOOM_API const loom_intrin_set *loom_sched_intrins(const loom_sched *s);

/* tensorize(block_or_loop, tensor_intrin, preserve_unit_iters): a loop is
 * first blockized; the block's body must match the intrinsic's description
 * modulo the offsets of its buffer regions, and is replaced by the
 * implementation, whose buffers become match_buffer views of those regions. */
LOOM_API loom_status loom_sched_tensorize(loom_sched *s,
                                          loom_sched_rv block_or_loop,
                                          const char *intrin,
                                          bool preserve_unit_iters,
                                          loom_diag *d);

#endif
