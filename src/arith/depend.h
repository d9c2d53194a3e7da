/* Private to the dependence analysis: the polyhedral model of a function
 * (statements over their loops, accesses, schedules, as isl objects) that
 * depend_model.c builds and depend.c queries. isl stays inside src/arith. */
#ifndef LOOM_ARITH_DEPEND_H
#define LOOM_ARITH_DEPEND_H

#include "loom/arith.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/set.h>

typedef struct dep_loop {
  const loom_var *var;
  int depth; /* loops around it */
} dep_loop;

typedef struct dep_stmt {
  int *loops; /* ids into deps->loops, outermost first */
  int n_loops;
  int *ordinals; /* textual position at each depth, n_loops + 1 of them */
  const loom_block **blocks; /* enclosing blocks, outermost first */
  int *block_depths;         /* loops around each of them */
  int n_blocks;
  loom_loc loc;
  const char *why; /* a condition it had to drop, or NULL */
  isl_set *domain;
  isl_map *schedule; /* instance -> 2d+1 vector in program order */
} dep_stmt;

typedef struct dep_access {
  int stmt;
  const loom_buffer *buffer; /* after resolving match_buffer views */
  int buffer_id;
  bool is_write;
  loom_expr **indices; /* as written, for messages */
  int n_indices;
  const loom_buffer *written_buffer; /* the buffer named in the program */
  const char *why; /* why it is over-approximated, or NULL */
  isl_map *map;    /* statement instance -> element, on its domain */
} dep_access;

/* Two accesses to one buffer, at least one a write. Each query adds the
 * order it needs (which also says which instance runs first), so no full
 * program order is built: a lexicographic order over deep nests is a union
 * of many pieces and makes every later question slow. */
typedef struct dep_pair {
  int src, dst; /* accesses; the query's order puts src first */
  isl_map *same; /* src instance -> dst instance touching the same element;
                    made on first use */
} dep_pair;

struct loom_arith_deps {
  isl_ctx *ctx;
  loom_arena *arena;
  const loom_func *f;
  dep_loop *loops;
  int n_loops, cap_loops;
  dep_stmt *stmts;
  int n_stmts, cap_stmts;
  dep_access *accesses;
  int n_accesses, cap_accesses;
  dep_pair *pairs;
  int n_pairs, cap_pairs;
  int max_depth;
  loom_buf assumptions;
  bool has_failed; /* out of memory or isl failed */
};

/* depend_model.c: fills loops, statements and accesses from deps->f. */
loom_status dep_build_model(loom_arith_deps *deps, loom_diag *d);
/* Grows an array by one zeroed element; NULL when out of memory. */
void *dep_push(void **items, int *n, int *cap, size_t size);

#endif
