/* Private to src/arith: the context layout, the simplifier's walk state, and
 * the linear form (sum of coefficient * atom + constant) the rules share. */
#ifndef LOOM_ARITH_IMPL_H
#define LOOM_ARITH_IMPL_H

#include "loom/arith.h"

enum {
#define X(id, name, kind, fn) ARITH_RULE_##id,
#include "arith/rules.def"
#undef X
  ARITH_RULE_COUNT_
};

/* Recursion through operands stops this deep: bounds become unbounded and
 * the simplifier leaves deeper subtrees as they are. Left-nested sums are
 * walked iteratively and do not count against it. */
#define ARITH_MAX_DEPTH 512

typedef struct arith_range {
  const loom_var *var;
  int64_t min, max;
} arith_range;

struct loom_arith_ctx {
  arith_range *ranges;
  int n_ranges, cap_ranges;
  long fires[ARITH_RULE_COUNT_];
};

/* ---- bound.c ---- */
loom_arith_interval arith_bound(const loom_arith_ctx *ctx, const loom_expr *e,
                                int depth);
loom_arith_interval arith_unbounded(void);
/* The values dtype t can hold, unbounded where int64 cannot hold them all. */
loom_arith_interval arith_dtype_range(loom_dtype t);

/* ---- helpers shared by the rules ---- */
int64_t arith_gcd64(int64_t a, int64_t b); /* of the magnitudes; 0 when both are */
bool arith_is_signed_int(loom_dtype t); /* scalar intN: linear rules apply */
bool arith_fits(loom_dtype t, int64_t v);
/* Structural equality with variables compared by identity (the IR's
 * loom_ir_equal_expr pairs free variables, which is wrong here). */
bool arith_same_expr(const loom_expr *a, const loom_expr *b, int depth);

/* ---- simplify.c: the walk ---- */
typedef struct arith_simp {
  loom_arena *arena;
  loom_arith_ctx *ctx;
  int depth;
} arith_simp;

loom_expr *arith_simp_expr(arith_simp *s, loom_expr *e);
/* e with each operand simplified (e itself when none changed). */
loom_expr *arith_simp_children(arith_simp *s, loom_expr *e);

/* ---- fold.c ---- */
/* Folds op k on integer constants of operand dtype t; false when the result
 * must stay unfolded (division by zero, signed overflow). */
bool arith_fold_int(loom_expr_kind k, loom_dtype t, int64_t x, int64_t y,
                    int64_t *out);
loom_expr *rule_fold_binary(arith_simp *s, loom_expr *e);
loom_expr *rule_cast(arith_simp *s, loom_expr *e);

/* ---- linear.c ---- */
typedef struct arith_term {
  loom_expr *atom;
  int64_t coef;
} arith_term;

typedef struct arith_linear {
  loom_dtype dtype;
  arith_term *terms;
  int n_terms, cap_terms;
  int64_t constant;
  int cost;          /* nodes of the input: ops, constants, atom uses */
  bool is_changed;   /* an atom simplified to something new */
  bool has_failed;   /* overflow or out of memory: the form is unusable */
  /* The input's atoms are simplified already: take them as they are. Set by
   * every rule that sees simplified operands, or simplifying each atom again
   * at every level of a nest would cost exponential time. */
  bool is_simplified;
} arith_linear;

void arith_linear_init(arith_linear *l, loom_dtype t);
void arith_linear_free(arith_linear *l);
/* Adds scale * e, simplifying the atoms it finds. */
void arith_linear_add(arith_simp *s, arith_linear *l, loom_expr *e,
                      int64_t scale);
void arith_linear_add_term(arith_linear *l, loom_expr *atom, int64_t coef);
void arith_linear_add_const(arith_linear *l, int64_t c);
/* The expression for l; NULL when out of memory or a coefficient does not
 * fit the dtype (check l->has_failed to tell). Stores its cost in *cost. */
loom_expr *arith_linear_build(arith_simp *s, arith_linear *l, int *cost);
loom_arith_interval arith_linear_bound(const arith_simp *s,
                                       const arith_linear *l);
loom_expr *rule_linear(arith_simp *s, loom_expr *e);

/* ---- simplify.c: structural rules ---- */
loom_expr *rule_trunc_to_floor(arith_simp *s, loom_expr *e);
loom_expr *rule_floordiv_nested(arith_simp *s, loom_expr *e);
loom_expr *rule_floordiv_gcd(arith_simp *s, loom_expr *e);
loom_expr *rule_floor_linear(arith_simp *s, loom_expr *e);
loom_expr *rule_floor_scaled(arith_simp *s, loom_expr *e);
loom_expr *rule_cmp_scaled(arith_simp *s, loom_expr *e);
loom_expr *rule_minmax_bound(arith_simp *s, loom_expr *e);
loom_expr *rule_cmp_bound(arith_simp *s, loom_expr *e);
loom_expr *rule_logic(arith_simp *s, loom_expr *e);
loom_expr *rule_not(arith_simp *s, loom_expr *e);
loom_expr *rule_select(arith_simp *s, loom_expr *e);

#endif
