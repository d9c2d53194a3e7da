/* Floating-point operations of a function, as tuners report GFLOP/s: each
 * float add, subtract, multiply, divide, min, max and math call in a store's
 * value counts once per execution, executions being the product of the
 * constant extents of the loops around it (a block's init is not counted,
 * so a matmul of M x N x K is 2 M N K). */
#include "loom/tune.h"

static double expr_flops(const loom_expr *e) {
  if (!e)
    return 0;
  switch (e->kind) {
  case LOOM_EXPR_INT: case LOOM_EXPR_FLOAT: case LOOM_EXPR_STR: case LOOM_EXPR_VAR:
    return 0;
  case LOOM_EXPR_LOAD: {
    double n = 0;
    for (int i = 0; i < e->u.load.n_indices; i++)
      n += expr_flops(e->u.load.indices[i]);
    return n;
  }
  case LOOM_EXPR_CALL: {
    double n = loom_dtype_is_float(e->dtype) ? e->dtype.lanes : 0;
    for (int i = 0; i < e->u.call.n_args; i++)
      n += expr_flops(e->u.call.args[i]);
    return n;
  }
  case LOOM_EXPR_NOT: case LOOM_EXPR_CAST:
    return expr_flops(e->u.unary.a);
  case LOOM_EXPR_SELECT:
    return expr_flops(e->u.select.cond) + expr_flops(e->u.select.t) + expr_flops(e->u.select.f);
  case LOOM_EXPR_LET:
    return expr_flops(e->u.let.value) + expr_flops(e->u.let.body);
  case LOOM_EXPR_RAMP: case LOOM_EXPR_BROADCAST:
    return 0;
  default: {
    bool is_arith = e->kind == LOOM_EXPR_ADD || e->kind == LOOM_EXPR_SUB ||
                    e->kind == LOOM_EXPR_MUL || e->kind == LOOM_EXPR_DIV ||
                    e->kind == LOOM_EXPR_MIN || e->kind == LOOM_EXPR_MAX;
    double own = is_arith && loom_dtype_is_float(e->dtype) ? e->dtype.lanes : 0;
    return own + expr_flops(e->u.bin.a) + expr_flops(e->u.bin.b);
  }
  }
}

static double stmt_flops(const loom_stmt *s) {
  if (!s)
    return 0;
  int64_t n;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    return stmt_flops(s->u.loop.body) *
           (loom_ir_is_const_int(s->u.loop.extent, &n) && n > 0 ? (double)n : 1);
  case LOOM_STMT_BLOCK_REALIZE: return stmt_flops(s->u.realize.block->body);
  case LOOM_STMT_STORE: return expr_flops(s->u.store.value);
  case LOOM_STMT_IF:
    return stmt_flops(s->u.if_.then_case) + stmt_flops(s->u.if_.else_case);
  case LOOM_STMT_SEQ: {
    double t = 0;
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      t += stmt_flops(s->u.seq.stmts[i]);
    return t;
  }
  case LOOM_STMT_LET: return stmt_flops(s->u.let.body);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return stmt_flops(s->u.alloc.body);
  case LOOM_STMT_ATTR: return stmt_flops(s->u.attr.body);
  case LOOM_STMT_ASSERT: return stmt_flops(s->u.assert_.body);
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return 0;
  }
  return 0;
}

double loom_tune_flops(const loom_func *f) { return stmt_flops(f->body); }
