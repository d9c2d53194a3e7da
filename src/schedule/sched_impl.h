/* The schedule module's private interface: the schedule state, how blocks and
 * loops are found again after each rewrite, the rewrite helpers every
 * primitive shares, and the apply functions the instruction table names. */
#ifndef LOOM_SCHED_IMPL_H
#define LOOM_SCHED_IMPL_H

#include "loom/arith.h"
#include "loom/schedule.h"

#include <stdlib.h>

/* Arenas are shared between a schedule and its copies: a copy allocates in a
 * fresh arena and keeps its parent's alive through a counted chain. */
typedef struct sched_pool {
  int refs;
  loom_arena *arena;
  struct sched_pool *parent;
} sched_pool;

/* What a random variable stands for. A block is found again by its name in
 * its function, a loop by its loop variable (rewrites keep both). */
typedef struct sched_rv {
  loom_rv_kind kind;
  int func;
  const char *block;
  loom_var *loop;
  int64_t value;
  int nth; /* a block: which of the blocks of that name, in program order */
} sched_rv;

struct loom_sched {
  sched_pool *pool;
  const loom_module *mod;
  sched_rv *rvs;
  int n_rvs, cap_rvs;
  loom_inst **insts;
  int n_insts, cap_insts;
  loom_rng rng;
  const loom_intrin_set *intrins; /* tensor intrinsics beyond the built-ins */
};

loom_arena *sched_arena(loom_sched *s);

/* A growable list of statements (heap). */
typedef struct sched_stmt_list {
  loom_stmt **items;
  int n, cap;
} sched_stmt_list;
bool sched_list_push(sched_stmt_list *l, loom_stmt *s);

/* ---- paths: a statement and its ancestors, from the function body down ---- */

typedef struct sched_path {
  int func;
  loom_stmt **stmts; /* stmts[0] is the function body, stmts[n-1] the target */
  int n, cap;
} sched_path;

void sched_path_free(sched_path *p);
bool sched_path_push(sched_path *p, loom_stmt *s);
/* Calls fn with the path to each block realize under p's last statement
 * that no other block there encloses; stops at the first failure. */
loom_status sched_each_child_block(sched_path *p,
                                   loom_status (*fn)(const sched_path *q,
                                                     void *arg),
                                   void *arg);
/* Finds the BLOCK_REALIZE of the block named `name` (the first in program
 * order) or the FOR of loop variable v in function f. Returns false when
 * absent (or out of memory, which leaves p->n == 0 as well). */
bool sched_find_block(const loom_func *f, const char *name, sched_path *p);
bool sched_find_loop(const loom_func *f, const loom_var *v, sched_path *p);
/* The same for the nth (from 0) block named `name` in program order: blocks
 * may share a name (cache_inplace's two stages). */
bool sched_find_block_nth(const loom_func *f, const char *name, int nth,
                          sched_path *p);
/* How many blocks named `name` function f holds. */
int sched_count_blocks(const loom_func *f, const char *name);

/* A copy of parent with child old replaced by new (new NULL removes old from
 * a sequence). NULL when out of memory or old is not a child. */
loom_stmt *sched_with_child(loom_arena *a, const loom_stmt *parent,
                            const loom_stmt *old, loom_stmt *new_child);
/* The module with path->stmts[depth] replaced by s_new and every ancestor
 * rebuilt; unchanged subtrees are shared. NULL when out of memory. */
const loom_module *sched_replace(loom_arena *a, const loom_module *m,
                                 const sched_path *p, int depth,
                                 loom_stmt *s_new);

/* The innermost block realize strictly above path index depth (the scope),
 * as an index into p, or -1 when there is none. */
int sched_scope_index(const sched_path *p, int depth);
/* The direct child statements of a statement: a loop's body, a block's init
 * and body, a sequence's items, ... Returns the count, up to max. */
int sched_children(const loom_stmt *s, loom_stmt **out, int max);

/* The direct children of s (a sequence's items, not copied); buf holds
 * the others. */
int sched_kids_of(loom_stmt *s, loom_stmt ***out, loom_stmt *buf[4]);
/* The block realizes under s that no other block under s encloses. */
bool sched_collect_blocks(loom_stmt *s, sched_stmt_list *out);
/* True when target lies under s (or is s); the loops on the way (up to
 * SCHED_MAX_DEPTH) are pushed onto loops, outer first. */
#define SCHED_MAX_DEPTH 256
bool sched_find_under(loom_stmt *s, const loom_stmt *target, loom_stmt **loops,
                      int *n_loops);
/* Whether a primitive may be given the name as a storage scope: one of the
 * ir's table, written out (not ""). */
static inline bool sched_is_storage_scope(const char *s) {
  return s && *s && loom_ir_scope_kind(s) != LOOM_SCOPE_NONE;
}

/* ---- substitution ----------------------------------------------------------- */

typedef struct sched_map sched_map;
struct sched_map {
  const loom_var **vars;
  loom_expr **values;
  int n;
  /* Optional hooks: a load (with its indices already substituted) may be
   * replaced, and a block (old, and as substituted) may be finished, e.g.
   * with its access regions inferred again. */
  loom_expr *(*on_load)(const sched_map *m, loom_arena *a, loom_expr *load);
  loom_block *(*on_block)(const sched_map *m, loom_arena *a,
                          const loom_block *old, loom_block *b);
  /* A statement, as substituted, may be replaced (after its children). */
  loom_stmt *(*on_stmt)(const sched_map *m, loom_arena *a, loom_stmt *s);
  void *ctx;
};

loom_expr *sched_subst_expr(loom_arena *a, loom_expr *e, const sched_map *m);
/* Hooks that make every access of old an access of nb at the one point
 * idx[0..n) (reindex.c, shared with reindex_cache.c): loads and stores as
 * on_load / on_stmt with ctx a sched_swap, and regions of old as that
 * point. */
typedef struct sched_swap {
  const loom_buffer *old;
  loom_buffer *nb;
  loom_expr **idx;
  int n;
} sched_swap;
loom_expr *sched_swap_load(const sched_map *m, loom_arena *a, loom_expr *load);
loom_stmt *sched_swap_store(const sched_map *m, loom_arena *a, loom_stmt *s);
loom_buffer_region *sched_swap_regions(loom_arena *a, const loom_buffer_region *r,
                                       int n, const sched_swap *w);
/* Where a copy stage goes (stage_place.c), as TVM's CacheLocDetector puts
 * it: in the innermost sequence that holds the writer before one of the
 * related blocks, right before the item that holds that block. loc is the
 * innermost loop around that sequence (NULL: the scope), at the statement
 * the stage goes into at pos: the sequence, or the body when the stage
 * goes at the scope's level. False when no related block follows the
 * writer. */
typedef struct sched_place {
  loom_stmt *at;
  int pos;
  loom_stmt *loc;
} sched_place;
bool sched_place_stage(loom_stmt *body, const loom_stmt *writer,
                       loom_stmt *const *related, int n_related,
                       sched_place *out);
/* body with olds[i] replaced by news[i] and stage put at place at; NULL
 * when out of memory. */
loom_stmt *sched_insert_stage(loom_arena *a, loom_stmt *body,
                              const sched_place *at, loom_stmt *stage,
                              loom_stmt *const *olds, loom_stmt *const *news,
                              int n);
/* A buffer of buf's type (dtype, scope, alignment, offset, strides where
 * the shape is buf's) named name, of the given shape: the copy reindex and
 * reindex_cache_* allocate, as TVM copies the buffer's type for it. */
loom_buffer *sched_reshaped_copy(loom_arena *a, const loom_buffer *buf,
                                 const char *name, loom_expr **shape, int ndim);
/* Substitutes through a statement, its nested blocks' bindings, predicates,
 * iter var domains, regions and bodies (loom_ir_mutate_stmt with m's
 * variables and hooks). Returns s itself when nothing changed. */
loom_stmt *sched_subst_stmt(loom_arena *a, loom_stmt *s, const sched_map *m);
/* True when e mentions v. */
bool sched_expr_uses(const loom_expr *e, const loom_var *v);

/* s with every access index and block region bound simplified under ctx
 * (simplify_access.c). NULL when out of memory. */
loom_stmt *sched_simplify_accesses(loom_arena *a, loom_arith_ctx *ctx,
                                   loom_stmt *s);
/* The same as TVM simplifies the accesses of a block it has transformed:
 * each index tuple, and the mins of each region, as one iterator map over
 * iters[0..n) (constant ranges), in the map's normal form; a tuple that is
 * not a map is left as it is. Region extents are simplified under ctx. */
loom_stmt *sched_simplify_accesses_by_map(loom_arena *a, loom_arith_ctx *ctx, loom_stmt *s,
                                          const loom_arith_relax *iters, int n);

/* An arithmetic context with every loop of p[0..depth) bound to its range
 * when min and extent are constants. NULL when out of memory. */
loom_arith_ctx *sched_arith_for_path(const sched_path *p, int depth);

/* Gives nb, a buffer made from old with another shape, the default offset
 * of old's index type written out when the shapes' types differ: TVM keeps
 * the offset's type, and prints `elem_offset=0` then. False when out of
 * memory. */
bool sched_keep_offset_type(loom_arena *a, const loom_buffer *old, loom_buffer *nb);

/* Whether realize r has a predicate other than a constant true. */
bool sched_has_predicate(const loom_stmt *r);
/* The conjuncts of pred that use none of vars; NULL when none is left (or
 * memory runs out: *oom). */
loom_expr *sched_conjuncts_without(loom_arena *a, loom_expr *pred,
                                   const loom_var *const *vars, int n, bool *oom);

/* The largest value sched_arith_bind_range gives a loop of symbolic
 * extent: a bound it reaches says the loop's extent is not a constant. */
#define SCHED_SYMBOLIC_MAX (INT32_MAX - 1)

/* Binds a loop's range in ctx: [min, min + extent) for constants; for a
 * symbolic extent from a constant min >= 0, [min, SCHED_SYMBOLIC_MAX]. */
void sched_arith_bind_loop(loom_arith_ctx *ctx, const loom_stmt *loop);
void sched_arith_bind_range(loom_arith_ctx *ctx, const loom_var *v,
                            const loom_expr *min, const loom_expr *extent);

/* Simplifies e under ctx, then expands sums of products into the linear form
 * TVM prints (normalize.c). NULL when out of memory. */
loom_expr *sched_normalize(loom_arena *a, loom_arith_ctx *ctx, loom_expr *e);

/* A copy of b (a block of f) with its read and write regions inferred again
 * from the buffers visible outside it, `gone` left out (inline.c). NULL when
 * out of memory or the regions cannot be inferred. */
loom_block *sched_infer_regions(loom_arena *a, const loom_func *f,
                                loom_block *b, const loom_buffer *gone);

/* ---- block properties (analysis.c) ------------------------------------------ */

/* Why a block is not what a primitive needs, for messages; NULL when it is. */
const char *sched_affine_problem(const sched_path *p, int realize_index);
/* The same, with only the loops p[lo, realize_index) as iterators; other
 * variables count as constants. */
const char *sched_affine_problem_below(const sched_path *p, int realize_index,
                                       int lo);
bool sched_is_complete(const loom_block *b);
bool sched_is_reduction(const sched_path *p, int realize_index);
/* Why the scope realized at p->stmts[si] is not a stage pipeline (a block
 * reads a part of a buffer that the scope's writers of it do not write),
 * formatted into why; NULL when it is (pipeline.c). */
const char *sched_stage_pipeline_problem(const sched_path *p, int si,
                                         char *why, size_t n_why);

/* Whether block b declares a read, a write, of buf. */
bool sched_block_reads(const loom_block *b, const loom_buffer *buf);
bool sched_block_writes(const loom_block *b, const loom_buffer *buf);
/* Whether block b both reads and writes buf (an in-place update such as
 * B[i] = B[i] + A[i]). */
bool sched_block_updates(const loom_block *b, const loom_buffer *buf);
/* Whether b is one of f's parameters, whose values outlive f. */
bool sched_is_param_buffer(const loom_func *f, const loom_buffer *b);
/* Whether block scope allocates b; a block of the scope that writes a
 * buffer it does not is an output block of the scope (TVM's
 * IsOutputBlock): what it writes is read after the scope too. */
bool sched_scope_allocates(const loom_block *scope, const loom_buffer *b);
/* Why the instances of the block realized at p->stmts[ri] may not be every
 * point of its iters' domain (a predicate, an if, a triangular loop), for
 * a rewrite that visits the whole domain; NULL when they are. why may
 * hold the message. */
const char *sched_cover_problem(const sched_path *p, int ri, char *why,
                                size_t n_why);

/* ---- legality from dependences (legal_deps.c) ------------------------------ */

typedef enum {
  SCHED_DEPS_LEGAL,
  SCHED_DEPS_ILLEGAL, /* refused, with the dependence reported at the call */
  SCHED_DEPS_UNKNOWN, /* the analysis failed; nothing reported */
} sched_deps_answer;

typedef struct sched_call sched_call;

/* May the iterations of loop (a loop of function func of c->mod) run in any
 * order: does it carry no dependence? `what` names the primitive in the
 * refusal ("parallelize"). */
sched_deps_answer sched_deps_loop_free(sched_call *c, int func,
                                       const loom_stmt *loop, const char *what);
/* May the perfectly nested chain old[0..n) (outermost first) become
 * perm[0..n) without reversing a dependence? */
sched_deps_answer sched_deps_permute(sched_call *c, int func,
                                     loom_stmt *const *old,
                                     loom_stmt *const *perm, int n);

/* ---- instruction application ------------------------------------------------ */

struct sched_call {
  loom_sched *s;
  loom_inst_kind kind;
  const loom_tval *inputs;
  int n_inputs;
  const loom_tval *attrs;
  int n_attrs;
  loom_tval decision;       /* in: NONE to sample; out: what was decided */
  /* A given decision that does not fit (made for another loop extent or
   * other candidates) is repaired rather than refused: the tuner's replays
   * of mutated traces (LOOM_REPLAY_REPAIR). */
  bool repairs_decision;
  loom_tval own_attrs[4];   /* attrs an apply completes (a default resolved) */
  /* A block the apply renamed: block RVs naming it follow the new name. */
  int rename_func;
  const char *rename_from, *rename_to;
  loom_loc loc;
  loom_diag *d;
  const loom_module *mod;   /* out: the rewritten module (starts as s->mod) */
  sched_rv *outs;           /* out: the output RVs, heap */
  int n_outs, cap_outs;
};

typedef loom_status (*sched_apply_fn)(sched_call *c);

/* loom_sched_apply of the instruction in: its kind, inputs (RVs of s),
 * attrs, decision and location; its outputs are ignored. With
 * repairs_decision a stale decision is repaired, not refused. */
loom_status sched_apply_inst(loom_sched *s, const loom_inst *in,
                             bool repairs_decision, const loom_sched_rv **outs,
                             int *n_outs, loom_diag *d);

/* Reports a refusal at the call's location, prefixed by the method name. */
loom_status sched_fail(sched_call *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
loom_status sched_nomem(sched_call *c);
loom_status sched_push_out(sched_call *c, sched_rv rv);

/* Input resolution with diagnostics at the call. */
loom_status sched_input_loop(sched_call *c, int i, sched_path *p);
loom_status sched_input_block(sched_call *c, int i, sched_path *p);
/* The compute-location mark a loop input stands for: -1 the root, -2
 * inlining (sample_compute_location's outputs); 0 for a real loop. */
int sched_input_mark(sched_call *c, int i);
/* Whether an instruction of kind would apply, on c's module, to the random
 * variables in (not in the schedule's table) with attrs: a trial that
 * changes nothing but leaves garbage in the arena. */
bool sched_would_apply(sched_call *c, loom_inst_kind kind, const sched_rv *in,
                       int n_in, const loom_tval *attrs, int n_attrs);
/* A block or loop input: *is_loop tells which was found. */
loom_status sched_input_target(sched_call *c, int i, sched_path *p,
                               bool *is_loop);
/* An integer input: an INT or an EXPR RV's value; NONE gives *is_none. */
loom_status sched_input_int(sched_call *c, int i, int64_t *v, bool *is_none);
/* Attribute i when it is an integer (a string); dflt when it is absent or
 * of another kind. */
int64_t sched_attr_int(const sched_call *c, int i, int64_t dflt);
const char *sched_attr_str(const sched_call *c, int i, const char *dflt);
/* Would parallel or vectorize (kind) be allowed on the loop p ends at:
 * the block-property check, then the dependence analysis (for_kind.c).
 * Reports the refusal at the call; changes nothing. */
loom_status sched_check_for_kind(sched_call *c, sched_path *p,
                                 loom_inst_kind kind);
/* The buffer named by attrs i and i + 1 (index, then 0 for the block's
 * reads or 1 for its writes), or a refusal (layout.c). */
loom_status sched_pick_buffer(sched_call *c, const loom_block *b, int i,
                              loom_buffer **out, bool *is_write);

/* The name of a block realize's block, or of a loop's variable, for messages. */
const char *sched_stmt_name(const loom_stmt *s);

#define X(id, json, json_alias, method, method_alias, out, is_list, spec,      \
          is_pure, apply)                                                       \
  loom_status apply(sched_call *c);
#include "loom/schedule_insts.def"
#undef X

/* ---- the instruction table --------------------------------------------------- */

typedef struct sched_kind_info {
  const char *json, *json_alias, *method, *method_alias;
  char out_kind;
  bool is_list;
  const char *spec;
  bool is_pure;
  sched_apply_fn apply;
} sched_kind_info;

extern const sched_kind_info sched_kinds[LOOM_INST_COUNT_];

/* One parameter of a signature. */
typedef struct sched_param {
  char name[40];
  char type;        /* L B R F V s i b t I P d */
  bool is_varargs;
  bool is_input;
  const char *dflt; /* NULL: required */
  size_t dflt_len;
} sched_param;

#define SCHED_MAX_PARAMS 8
/* Splits a signature into parameters; returns their count. */
int sched_parse_spec(const char *spec, sched_param *out);

/* ---- values ------------------------------------------------------------------- */

bool sched_tval_equal(const loom_tval *a, const loom_tval *b);
/* A deep copy into arena a, with RV ids mapped through map when not NULL
 * (map[old] = new). NULL items when out of memory. */
loom_status sched_tval_copy(loom_arena *a, const loom_tval *v,
                            const loom_sched_rv *map, int n_map,
                            loom_tval *out);

/* ---- tensor intrinsics (intrin.c) ------------------------------------------- */

/* The description (or, with is_impl, the implementation) of t read into a:
 * one prim func whose body is a root block realize and whose parameters
 * are buffers. */
loom_status sched_intrin_read(const loom_sched_intrin *t, bool is_impl,
                              loom_arena *a, const loom_func **out,
                              loom_diag *d);
/* Both texts read and agree on their parameters. */
loom_status sched_intrin_check(const loom_sched_intrin *t, loom_diag *d);
/* The tensor-core intrinsics (intrin_wmma.c). */
extern const loom_sched_intrin sched_intrins_wmma[];
extern const int sched_n_intrins_wmma;

#endif
