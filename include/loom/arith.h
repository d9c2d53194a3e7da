/* Integer arithmetic on TensorIR expressions: interval bounds under variable
 * ranges, a rule-table simplifier, and a sound prover built on the two.
 * Integer reasoning assumes signed arithmetic does not overflow, as TVM's
 * arith module does; unsigned and float expressions are only folded. */
#ifndef LOOM_ARITH_H
#define LOOM_ARITH_H

#include "loom/ir.h"

/* Variable ranges and per-rule fire counts. Owns its memory; not shared
 * between threads. */
typedef struct loom_arith_ctx loom_arith_ctx;

/* A closed interval [min, max]; meaningless unless is_bounded. */
typedef struct loom_arith_interval {
  int64_t min, max;
  bool is_bounded;
} loom_arith_interval;

typedef enum {
  LOOM_ARITH_UNKNOWN = 0,
  LOOM_ARITH_TRUE,  /* holds for every value in the ranges */
  LOOM_ARITH_FALSE, /* fails for every value in the ranges */
} loom_arith_truth;

/* NULL when out of memory. */
LOOM_API LOOM_GIVE loom_arith_ctx *loom_arith_ctx_new(void);
LOOM_API void loom_arith_ctx_free(LOOM_TAKE loom_arith_ctx *ctx);

/* Declares min <= v <= max (inclusive), replacing an earlier range for v.
 * v is borrowed and compared by identity. Fails with d when min > max or
 * when out of memory. */
LOOM_API loom_status loom_arith_bind(loom_arith_ctx *ctx,
                                     LOOM_KEEP const loom_var *v, int64_t min,
                                     int64_t max, loom_diag *d);

/* A sound interval for an integer expression: every value e takes, for
 * variables inside their ranges (unbound integer variables range over their
 * dtype), lies in it. Unbounded when e is not an integer expression, an
 * operation is not understood, or int64 interval arithmetic overflows. */
LOOM_API loom_arith_interval loom_arith_bound(const loom_arith_ctx *ctx,
                                              const loom_expr *e);

/* Returns an expression equal to e for every value in the ranges, with the
 * same dtype, built in a and sharing the unchanged subtrees of e (e itself
 * when nothing applies). NULL when out of memory. Counts each rule that fires
 * in ctx. */
LOOM_API loom_expr *loom_arith_simplify(loom_arena *a, loom_arith_ctx *ctx,
                                        LOOM_KEEP loom_expr *e);

/* Decides a boolean condition over the ranges. Sound: TRUE and FALSE are
 * answered only when proven; UNKNOWN otherwise (also when out of memory). */
LOOM_API loom_arith_truth loom_arith_can_prove(loom_arith_ctx *ctx,
                                               const loom_expr *cond);

/* An integer expression's residue: every value it takes is coef * k + base
 * for some integer k (coef 0: it is base; coef 1: nothing is known). Holds
 * whatever its variables are (src/arith/modular.c). */
typedef struct loom_arith_modular {
  int64_t coef, base; /* 0 <= base < coef when coef > 0 */
} loom_arith_modular;
LOOM_API loom_arith_modular loom_arith_modular_of(const loom_expr *e);

/* The simplifier's rules, by index, and how often each fired in ctx. */
LOOM_API int loom_arith_rule_count(void);
LOOM_API const char *loom_arith_rule_name(int i);
LOOM_API long loom_arith_rule_fires(const loom_arith_ctx *ctx, int i);

/* ---- integer sets (intset.c, region.c) -------------------------------------
 * The values an expression takes while some loop variables run over their
 * ranges, as a symbolic interval in the variables that stay fixed: what
 * bound inference, compute-at and cache-read/write ask ("the part of A the
 * block under these loops touches, as a function of the loops outside"). */

/* Every value lies in [min, min + extent - 1] and differs from min by a
 * multiple of stride (>= 1). min and extent are integer expressions over
 * the variables that were not relaxed. is_unbounded: nothing is known (min
 * and extent are NULL); is_empty: provably no value. Sound: an answer never
 * leaves out a value the expression takes. */
typedef struct loom_arith_intset {
  loom_expr *min, *extent;
  int64_t stride;
  bool is_unbounded;
  bool is_empty;
} loom_arith_intset;

/* A variable to relax over [range.min, range.min + range.extent). The range
 * may mention variables relaxed by other entries (triangular loops). */
typedef struct loom_arith_relax {
  const loom_var *var;
  loom_range range;
} loom_arith_relax;

/* The set of values of e as the n_relax variables run over their ranges;
 * other variables stay as they are, within their ctx ranges. Built in a.
 * Fails only when out of memory. */
LOOM_API loom_status loom_arith_intset_eval(loom_arena *a, loom_arith_ctx *ctx,
                                            LOOM_KEEP loom_expr *e,
                                            const loom_arith_relax *relax,
                                            int n_relax,
                                            loom_arith_intset *out);
/* A set holding both (the hull), and one holding their common values. */
LOOM_API loom_status loom_arith_intset_union(loom_arena *a, loom_arith_ctx *ctx,
                                             const loom_arith_intset *x,
                                             const loom_arith_intset *y,
                                             loom_arith_intset *out);
LOOM_API loom_status loom_arith_intset_intersect(loom_arena *a,
                                                 loom_arith_ctx *ctx,
                                                 const loom_arith_intset *x,
                                                 const loom_arith_intset *y,
                                                 loom_arith_intset *out);

/* The region r touches as the relaxed variables run over their ranges
 * (each dimension the hull of its ranges). A dimension that cannot be
 * bounded covers the buffer's whole extent and, when is_whole is not NULL,
 * is_whole[dim] says so (r->n_ranges entries). out->ranges is new in a. */
LOOM_API loom_status loom_arith_region_relax(loom_arena *a, loom_arith_ctx *ctx,
                                             const loom_buffer_region *r,
                                             const loom_arith_relax *relax,
                                             int n_relax,
                                             loom_buffer_region *out,
                                             bool *is_whole);
/* The region of buffer that the block realized by realize declares it
 * reads (or writes, when is_write), with the block's iterators replaced by
 * their bindings and the loops in relax relaxed: for relax = the loops
 * between a loop L and the block, the part of the buffer one iteration of
 * L touches, as a function of the loops outside. Several regions of the
 * buffer are joined (hull). *is_found is false when the block declares
 * none. is_whole as for loom_arith_region_relax. Fails with d when realize
 * is not a block. */
LOOM_API loom_status loom_arith_block_region(
    loom_arena *a, loom_arith_ctx *ctx, const loom_stmt *realize,
    const loom_buffer *buffer, bool is_write, const loom_arith_relax *relax,
    int n_relax, loom_buffer_region *out, bool *is_whole, bool *is_found,
    loom_diag *d);
/* The hull of two regions of the same buffer; fails with d otherwise. */
LOOM_API loom_status loom_arith_region_union(loom_arena *a, loom_arith_ctx *ctx,
                                             const loom_buffer_region *x,
                                             const loom_buffer_region *y,
                                             loom_buffer_region *out,
                                             loom_diag *d);
/* The common part of two regions of the same buffer; *is_empty when they
 * provably share no element (a dimension where they do not meet then has
 * extent 0). */
LOOM_API loom_status loom_arith_region_intersect(loom_arena *a,
                                                 loom_arith_ctx *ctx,
                                                 const loom_buffer_region *x,
                                                 const loom_buffer_region *y,
                                                 loom_buffer_region *out,
                                                 bool *is_empty, loom_diag *d);

/* ---- affine iterator maps (itermap.c) -------------------------------------
 * Block bindings as sums of split iterators, in the manner of TVM's
 * DetectIterMap: each binding is base + sum(split * scale), where a split
 * is floormod(floordiv(mark, lower_factor), extent) and a mark is a loop
 * variable (less its min) or a fused sum of other splits (i*8 + j). Every
 * extent, factor and scale is a constant. */

typedef struct loom_iter_mark loom_iter_mark;

typedef struct loom_iter_split {
  const loom_iter_mark *source;
  int64_t lower_factor, extent, scale;
} loom_iter_split;

typedef struct loom_iter_sum {
  loom_iter_split *splits;
  int n_splits;
  int64_t base;
  /* Added to base: terms in variables that are not among the loops (an
   * outer block's iterators, parameters), which the map treats as
   * constants. NULL: none. */
  loom_expr *symbolic_base;
} loom_iter_sum;

/* An iterator over [0, extent): var - var_min for a loop variable, or the
 * value of fused (a sum with base 0 whose splits are a mixed radix, the
 * smallest scale 1) when var is NULL. */
struct loom_iter_mark {
  const loom_var *var;
  int64_t var_min;
  const loom_iter_sum *fused;
  int64_t extent;
};

typedef enum {
  /* Every point of the loop domain gives a different tuple of binding
   * values, and every loop part is used: the loops and the bindings are in
   * one-to-one correspondence. */
  LOOM_ITER_MAP_BIJECTIVE,
  /* No part of a loop is used twice, so the bindings reach every tuple of
   * their extents; some loop part may go unused. */
  LOOM_ITER_MAP_SURJECTIVE,
  /* Only the structured form; nothing is checked about coverage. */
  LOOM_ITER_MAP_NO_CHECK,
} loom_iter_map_level;

typedef struct loom_iter_map {
  loom_iter_sum *sums; /* one per binding; one split at most, except with
                          LOOM_ITER_MAP_NO_CHECK, which keeps sums unfused */
  int n_sums;
} loom_iter_map;

/* Detects the iterator map of bindings over the loops in iters, whose
 * ranges must have constant min and extent. predicate (NULL: none; else a
 * conjunction of bounds like i * 8 + j < 100, as a split that does not
 * divide leaves in T.where) restricts the loop domain: the bounded loop or
 * fusion then ranges over [0, bound) and must be read whole by a binding.
 * On success every sum equals its binding at every point of the domain and
 * the map meets level. Fails with d saying which binding breaks what (not
 * affine, a split that does not divide, a loop part used twice, a loop
 * left unused, ...). */
LOOM_API loom_status loom_arith_iter_map_detect(
    loom_arena *a, loom_expr *const *bindings, int n,
    const loom_arith_relax *iters, int n_iters, const loom_expr *predicate,
    loom_iter_map_level level, loom_iter_map *out, loom_diag *d);

/* The same with every loop of extent 1 a term of the map, not its
 * constant: TVM's detection with simplify_trivial_iterators off, as a
 * primitive told to preserve unit iters detects. */
LOOM_API loom_status loom_arith_iter_map_detect_units(
    loom_arena *a, loom_expr *const *bindings, int n,
    const loom_arith_relax *iters, int n_iters, const loom_expr *predicate,
    loom_iter_map_level level, loom_iter_map *out, loom_diag *d);

/* The expression of s over the loop variables, in dtype t. NULL when out
 * of memory. */
LOOM_API loom_expr *
loom_arith_iter_sum_expr(loom_arena *a, const loom_iter_sum *s, loom_dtype t);
/* The same in TVM's normal form (IterMapToExprNormalizer), the form TVM's
 * schedule primitives give bindings: terms largest scale first, a split
 * as source % (lower_factor * extent) // lower_factor. */
LOOM_API loom_expr *
loom_arith_iter_sum_normal(loom_arena *a, const loom_iter_sum *s, loom_dtype t);

/* One binding divided with respect to a set of inner loops (for blockize
 * and tensorize): binding == outer * inner_extent + inner, where outer uses
 * only the other loops and ranges over [0, outer_extent), and inner uses only
 * the inner loops and ranges over [0, inner_extent) (plus the binding's
 * constant offset when there is no outer part). */
typedef struct loom_iter_division {
  loom_expr *outer, *inner;
  int64_t outer_extent, inner_extent;
} loom_iter_division;

/* Divides every binding (out has n entries). The bindings must form a
 * surjective iterator map (under predicate, as for detection). A binding
 * that is a whole loop or fusion the predicate bounds goes whole to one
 * side, and its bound becomes part of *outer_pred or *inner_pred (NULL:
 * true); with outer_pred NULL such a binding fails. Fails with d when a
 * binding mixes the two sets (an outer loop part below an inner one, as in
 * j*4 + i with j inner). */
LOOM_API loom_status loom_arith_iter_map_subspace_divide(
    loom_arena *a, loom_expr *const *bindings, int n,
    const loom_arith_relax *iters, int n_iters, const loom_expr *predicate,
    const loom_var *const *inner_vars, int n_inner, loom_iter_division *out,
    loom_expr **outer_pred, loom_expr **inner_pred, loom_diag *d);
/* The same with every loop of extent 1 a term of the map (TVM's division
 * when unit iters are preserved). */
LOOM_API loom_status loom_arith_iter_map_subspace_divide_units(
    loom_arena *a, loom_expr *const *bindings, int n,
    const loom_arith_relax *iters, int n_iters, const loom_expr *predicate,
    const loom_var *const *inner_vars, int n_inner, loom_iter_division *out,
    loom_expr **outer_pred, loom_expr **inner_pred, loom_diag *d);

/* ---- dependence analysis (depend*.c) --------------------------------------
 * Exact memory dependences between the statement instances of a function:
 * every buffer store (inside blocks, with block iterators replaced by their
 * bindings) is a statement over its enclosing loops, its loads are its
 * reads, and if conditions, block predicates and reduction inits restrict
 * its instances. Affine accesses and conditions are represented exactly
 * (Presburger sets); what is not affine is over-approximated (an index that
 * is not affine may touch any element of its dimension; a condition that is
 * not affine is assumed true), so the analysis never answers "independent"
 * wrongly, and says when an answer rests on such an assumption. */

typedef struct loom_arith_deps loom_arith_deps;

typedef enum {
  LOOM_DEP_RAW, /* a write, then a read of the same element */
  LOOM_DEP_WAR, /* a read, then a write */
  LOOM_DEP_WAW, /* two writes */
} loom_dep_kind;

/* Two statement instances that touch the same element, the first before
 * the second, that forbid what was asked. */
typedef struct loom_dep_witness {
  loom_dep_kind kind;
  const loom_buffer *buffer;
  loom_loc src_loc, dst_loc; /* the statements of the two accesses */
  int64_t distance;          /* of the loop asked about: dst - src iteration */
  bool is_exact;             /* false: it may be an artefact of an assumption */
  /* In TVMScript terms, e.g. "B[i + 1] written at 13:13 is read as B[i] at
   * 13:13 by iteration i_ + 1 (i_ = 0, then i_ = 1)"; owned by the deps. */
  const char *text;
} loom_dep_witness;

/* Analyses f (borrowed; it must outlive the result). Fails with d only when
 * out of memory or when the analysis itself breaks; programs it cannot
 * model exactly still get a (conservative) analysis. */
LOOM_API loom_status loom_arith_deps_new(const loom_func *f,
                                         LOOM_GIVE loom_arith_deps **out,
                                         loom_diag *d);
LOOM_API void loom_arith_deps_free(LOOM_TAKE loom_arith_deps *deps);

/* Does the loop whose variable is loop carry a dependence: do two different
 * iterations of it (in the same iteration of the loops outside) touch the
 * same element, one of them writing? When *is_carried, w says which (when w
 * is not NULL). A loop that carries none may run in parallel or be
 * vectorized. Fails with d when loop is not a loop of the function. */
LOOM_API loom_status loom_arith_deps_loop_carried(loom_arith_deps *deps,
                                                  const loom_var *loop,
                                                  bool *is_carried,
                                                  loom_dep_witness *w,
                                                  loom_diag *d);

/* May the loops outer and inner (inner nested in outer, every statement
 * under outer also under inner) swap places without reversing a
 * dependence? When not, w is a dependence the swap would reverse. */
LOOM_API loom_status loom_arith_deps_can_interchange(
    loom_arith_deps *deps, const loom_var *outer, const loom_var *inner,
    bool *is_legal, loom_dep_witness *w, loom_diag *d);

/* Are the instances of block b (its body, init and the blocks nested in
 * it) free of dependences on each other: does no instance touch an element
 * another writes (the in-place update B[i] = B[i] + A[i] is; a prefix sum
 * is not)? Buffers the block allocates are its instances' own. */
LOOM_API loom_status loom_arith_deps_block_independent(loom_arith_deps *deps,
                                                       const loom_block *b,
                                                       bool *is_independent,
                                                       loom_dep_witness *w,
                                                       loom_diag *d);

/* Why the analysis had to assume something (one line per assumption, in
 * TVMScript terms); empty when the function was modelled exactly. Owned by
 * the deps. */
LOOM_API const char *loom_arith_deps_assumptions(const loom_arith_deps *deps);

#endif
