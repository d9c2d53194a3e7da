/* Subtree rewrites over block realizes shared by the loop primitives.
 * Private to src/schedule. */
#ifndef LOOM_SCHED_REWRITE_H
#define LOOM_SCHED_REWRITE_H

#include "schedule/sched_impl.h"

/* The loops around a statement, outermost first, as TVM's iterator maps
 * take them; n_dependent counts those whose range uses another, which
 * makes the maps leave every binding as it is. */
typedef struct sched_loop_stack {
  const loom_var *loops[SCHED_MAX_DEPTH];
  int n, n_dependent;
} sched_loop_stack;

/* Pushes a loop of range [min, min + extent) onto s; false when full. */
bool sched_loop_push(sched_loop_stack *s, const loom_var *v, const loom_expr *min,
                     const loom_expr *extent);
/* The loops of p above its statement at depth, up to the block that holds
 * them (TVM's GetLoops), pushed onto s. */
void sched_loop_push_path(sched_loop_stack *s, const sched_path *p, int depth);

typedef struct realize_visitor realize_visitor;
struct realize_visitor {
  loom_stmt *(*fn)(realize_visitor *v, loom_stmt *realize);
  loom_arena *a;
  loom_arith_ctx *ctx;  /* loop ranges are bound here on the way down */
  bool descend_blocks;  /* also visit the realizes inside visited blocks */
  loom_var *const *vars;
  int n_vars;
  loom_expr *pred;
  const loom_expr *whole; /* split: the sum a whole binding may be */
  bool is_guarded;        /* split: the realize has a predicate already */
  bool keep_units;        /* a unit loop stays in a binding's iterator map */
  sched_loop_stack around; /* given, then the loops entered on the way down */
  bool has_failed; /* fn failed (out of memory) */
};

/* NULL when out of memory; s itself when nothing changed. */
loom_stmt *sched_visit_realizes(realize_visitor *v, loom_stmt *s);
/* r with the realizes in its block visited (an opaque block, which TVM's
 * rewrites pass through). NULL when out of memory. */
loom_stmt *sched_enter_realize(realize_visitor *v, loom_stmt *r);
/* Realize r with each binding e replaced by f(v, e) (e itself to keep it;
 * NULL when out of memory); r itself when nothing changed. */
loom_stmt *sched_map_bindings(realize_visitor *v, loom_stmt *r,
                              loom_expr *(*f)(realize_visitor *, loom_expr *));
/* Simplifies, under ctx plus the loops inside s (and around them, those of
 * around), the bindings of every block realize in s as TVM's iterator
 * maps do: to the normal form of
 * their map where they are one together (unit loops kept in it when
 * keep_units), as substituted where they are not. Where Loom's maps cannot
 * say (a loop of symbolic extent), each binding that mentions one of vars
 * (every one with n_vars < 0), or holds an operation on two constants left
 * by a substitution, is normalized on its own. */
loom_stmt *sched_simplify_bindings(loom_arena *a, loom_arith_ctx *ctx,
                                   const sched_loop_stack *around, loom_stmt *s,
                                   loom_var *const *vars, int n_vars, bool keep_units);
/* Whether the bindings of r form an iterator map over the loops v has
 * bound (true where Loom's maps cannot say: a loop of symbolic extent);
 * TVM rewrites bindings only then. */
bool sched_is_iter_map(realize_visitor *v, const loom_stmt *r);
/* Replaces, in the bindings of the realizes in s (through opaque blocks,
 * not into blocks with iters), every loop of extent one (under ctx plus the
 * loops inside s) by its value: what TVM's split and fuse do to every block
 * under them when unit iters are not preserved. */
loom_stmt *sched_drop_unit_iters(loom_arena *a, loom_arith_ctx *ctx,
                                 loom_stmt *s);
/* Conjoins pred to the predicate of the outermost realizes in s. */
loom_stmt *sched_append_predicate(loom_arena *a, loom_stmt *s,
                                  loom_expr *pred);

#endif
