/* Index maps, written as TVM prints them: `lambda i, j: (i // 16, j % 16,)`.
 * A trace keeps the lambda's text; applying it parses the text into
 * expressions over fresh parameter variables. Private to src/schedule. */
#ifndef LOOM_SCHED_INDEX_MAP_H
#define LOOM_SCHED_INDEX_MAP_H

#include "schedule/sched_impl.h"
#include "script/ast.h"

typedef struct sched_index_map {
  loom_var **params;
  int n_params;
  loom_expr **results;
  int n_results;
  bool is_ranges; /* written [(begin, end), ...]: results pair up */
} sched_index_map;

/* The canonical text of a lambda expression: parameters separated by
 * ", ", the results as a tuple with a trailing comma, operators spaced and
 * parenthesised as Python needs. NULL when out of memory, or when the
 * lambda holds something an index map cannot (*why says what). */
const char *sched_lambda_text(loom_arena *a, const py_expr *lambda,
                              const char **why);

/* Parses the text of a lambda into a map whose parameters have dtype t.
 * Integer literals take the dtype of the other operand; T.int64(n) and
 * friends give typed constants. Fails with a message in why. */
bool sched_index_map_parse(loom_arena *a, const char *text, loom_dtype t,
                           sched_index_map *out, char *why, size_t n_why);
/* The same with parameter i of dtype param_types[i] (i < n_types): a
 * block's iters, each with its own width. */
bool sched_index_map_parse_typed(loom_arena *a, const char *text, loom_dtype t,
                                 const loom_dtype *param_types, int n_types,
                                 sched_index_map *out, char *why, size_t n_why);

/* The results with the parameters replaced by args (n_params of them). */
bool sched_index_map_apply(loom_arena *a, const sched_index_map *m,
                           loom_expr *const *args, loom_expr **out);

#endif
