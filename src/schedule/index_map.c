/* Index maps as lambdas: printing a lambda the way TVM's IndexMap prints
 * itself, and evaluating one into expressions. Only what index maps hold is
 * understood: parameters, integer literals, typed constants (T.int64(8)),
 * + - * // %, unary minus and the result tuple. */
#include "schedule/index_map.h"

#include <string.h>

/* ---- printing ------------------------------------------------------------------ */

static int prec_of(const py_expr *e) {
  switch (e->kind) {
  case PY_LAMBDA: return 0;
  case PY_BOOLOP: return e->u.bin.op == PY_OP_OR ? 1 : 2;
  case PY_UNARY: return e->u.unary.op == PY_OP_NOT ? 3 : 11;
  case PY_COMPARE: return 4;
  case PY_BINOP:
    switch (e->u.bin.op) {
    case PY_OP_BITOR: return 5;
    case PY_OP_BITXOR: return 6;
    case PY_OP_BITAND: return 7;
    case PY_OP_LSHIFT: case PY_OP_RSHIFT: return 8;
    case PY_OP_ADD: case PY_OP_SUB: return 9;
    case PY_OP_POW: return 12;
    default: return 10;
    }
  default: return 13;
  }
}

static bool put_expr(loom_buf *b, const py_expr *e, const char **why);

static bool put_operand(loom_buf *b, const py_expr *e, int prec, bool right,
                        const char **why) {
  int p = prec_of(e);
  bool paren = p < prec || (right && p == prec);
  if (paren)
    loom_buf_putc(b, '(');
  bool ok = put_expr(b, e, why);
  if (paren)
    loom_buf_putc(b, ')');
  return ok;
}

static bool put_expr(loom_buf *b, const py_expr *e, const char **why) {
  switch (e->kind) {
  case PY_NAME:
    loom_buf_puts(b, e->u.name);
    return true;
  case PY_INT:
    if (e->u.num.text)
      loom_buf_puts(b, e->u.num.text);
    else
      loom_buf_printf(b, "%lld", (long long)e->u.num.int_value);
    return true;
  case PY_FLOAT: {
    char buf[40];
    for (int p = 1; p <= 17; p++) {
      snprintf(buf, sizeof buf, "%.*g", p, e->u.float_value);
      if (strtod(buf, NULL) == e->u.float_value)
        break;
    }
    loom_buf_puts(b, buf);
    if (!strpbrk(buf, ".eEn"))
      loom_buf_puts(b, ".0");
    return true;
  }
  case PY_STR:
    loom_buf_printf(b, "\"%s\"", e->u.str);
    return true;
  case PY_NONE:
    loom_buf_puts(b, "None");
    return true;
  case PY_TRUE:
  case PY_FALSE:
    loom_buf_puts(b, e->kind == PY_TRUE ? "True" : "False");
    return true;
  case PY_ATTRIBUTE:
    if (!put_operand(b, e->u.attr.value, 13, false, why))
      return false;
    loom_buf_printf(b, ".%s", e->u.attr.name);
    return true;
  case PY_CALL:
    if (!put_operand(b, e->u.call.func, 13, false, why))
      return false;
    loom_buf_putc(b, '(');
    for (int i = 0; i < e->u.call.n_args; i++) {
      if (i)
        loom_buf_puts(b, ", ");
      if (!put_expr(b, e->u.call.args[i], why))
        return false;
    }
    for (int i = 0; i < e->u.call.n_kwargs; i++) {
      if (i || e->u.call.n_args)
        loom_buf_puts(b, ", ");
      loom_buf_printf(b, "%s=", e->u.call.kwargs[i].name ? e->u.call.kwargs[i].name : "");
      if (!put_expr(b, e->u.call.kwargs[i].value, why))
        return false;
    }
    loom_buf_putc(b, ')');
    return true;
  case PY_TUPLE:
  case PY_LIST: {
    bool is_list = e->kind == PY_LIST;
    loom_buf_putc(b, is_list ? '[' : '(');
    for (int i = 0; i < e->u.seq.n_items; i++) {
      if (!put_expr(b, e->u.seq.items[i], why))
        return false;
      if (i + 1 < e->u.seq.n_items)
        loom_buf_puts(b, ", ");
      else if (!is_list && e->u.seq.n_items == 1)
        loom_buf_putc(b, ',');
    }
    loom_buf_putc(b, is_list ? ']' : ')');
    return true;
  }
  case PY_BINOP:
  case PY_BOOLOP: {
    int p = prec_of(e);
    if (!put_operand(b, e->u.bin.a, p, false, why))
      return false;
    loom_buf_printf(b, " %s ", py_op_text(e->u.bin.op));
    return put_operand(b, e->u.bin.b, p, true, why);
  }
  case PY_UNARY:
    loom_buf_puts(b, py_op_text(e->u.unary.op));
    if (e->u.unary.op == PY_OP_NOT)
      loom_buf_putc(b, ' ');
    return put_operand(b, e->u.unary.a, prec_of(e), false, why);
  case PY_COMPARE:
    for (int i = 0; i <= e->u.compare.n_ops; i++) {
      if (i)
        loom_buf_printf(b, " %s ", py_op_text(e->u.compare.ops[i - 1]));
      if (!put_operand(b, e->u.compare.operands[i], 5, false, why))
        return false;
    }
    return true;
  default:
    *why = "an index map holds only arithmetic on its parameters";
    return false;
  }
}

const char *sched_lambda_text(loom_arena *a, const py_expr *lambda,
                              const char **why) {
  *why = NULL;
  if (lambda->kind != PY_LAMBDA) {
    *why = "an index map must be a lambda";
    return NULL;
  }
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_puts(&b, "lambda ");
  for (int i = 0; i < lambda->u.lambda.n_params; i++)
    loom_buf_printf(&b, "%s%s", i ? ", " : "", lambda->u.lambda.params[i]);
  loom_buf_puts(&b, ": ");
  const py_expr *body = lambda->u.lambda.body;
  bool ok = true;
  if (body->kind == PY_TUPLE) {
    /* TVM ends an index map's results with a comma. */
    loom_buf_putc(&b, '(');
    for (int i = 0; i < body->u.seq.n_items && ok; i++) {
      ok = put_expr(&b, body->u.seq.items[i], why);
      loom_buf_puts(&b, i + 1 < body->u.seq.n_items ? ", " : ",");
    }
    loom_buf_putc(&b, ')');
  } else if (body->kind == PY_LIST) {
    ok = put_expr(&b, body, why);
  } else {
    loom_buf_putc(&b, '(');
    ok = put_expr(&b, body, why);
    loom_buf_puts(&b, ",)");
  }
  const char *s = ok && !b.has_failed && b.data ? loom_arena_strdup(a, b.data)
                                                : NULL;
  loom_buf_free(&b);
  return s;
}

/* ---- evaluation ----------------------------------------------------------------- */

typedef struct evaluator {
  loom_arena *a;
  const py_expr *lambda;
  loom_var **params;
  loom_dtype t;
  char *why;
  size_t n_why;
} evaluator;

/* An expression, or an integer literal still without a dtype. */
typedef struct ival {
  loom_expr *e;
  bool is_literal;
  int64_t v;
} ival;

static bool bad(evaluator *ev, const char *msg) {
  snprintf(ev->why, ev->n_why, "%s", msg);
  return false;
}

static loom_expr *typed(evaluator *ev, const ival *x, loom_dtype t) {
  return x->is_literal ? loom_ir_int(ev->a, t, x->v) : x->e;
}

static bool eval(evaluator *ev, const py_expr *e, ival *out, int depth) {
  memset(out, 0, sizeof *out);
  if (depth > 64)
    return bad(ev, "index map nested too deeply");
  switch (e->kind) {
  case PY_NAME:
    for (int i = 0; i < ev->lambda->u.lambda.n_params; i++)
      if (!strcmp(ev->lambda->u.lambda.params[i], e->u.name)) {
        out->e = loom_ir_ref(ev->a, ev->params[i]);
        return out->e || bad(ev, "out of memory");
      }
    snprintf(ev->why, ev->n_why, "index map uses '%s', which is not one of "
             "its parameters", e->u.name);
    return false;
  case PY_INT:
    if (e->u.num.is_big)
      return bad(ev, "integer too large in index map");
    out->is_literal = true;
    out->v = e->u.num.int_value;
    return true;
  case PY_CALL: {
    const py_expr *f = e->u.call.func;
    loom_dtype t;
    if (f->kind == PY_ATTRIBUTE && f->u.attr.value->kind == PY_NAME &&
        !strcmp(f->u.attr.value->u.name, "T") && e->u.call.n_args == 1 &&
        loom_dtype_parse(f->u.attr.name, strlen(f->u.attr.name), &t)) {
      const py_expr *x = e->u.call.args[0];
      bool neg = x->kind == PY_UNARY && x->u.unary.op == PY_OP_NEG;
      if (neg)
        x = x->u.unary.a;
      if (x->kind == PY_INT && !x->u.num.is_big &&
          (t.code == LOOM_DT_INT || t.code == LOOM_DT_UINT))
        out->e = loom_ir_int(ev->a, t, neg ? -x->u.num.int_value
                                           : x->u.num.int_value);
      else if ((x->kind == PY_INT || x->kind == PY_FLOAT) &&
               (t.code == LOOM_DT_FLOAT || t.code == LOOM_DT_BFLOAT)) {
        double v = x->kind == PY_INT ? (double)x->u.num.int_value
                                     : x->u.float_value;
        out->e = loom_ir_float(ev->a, t, neg ? -v : v);
      } else
        return bad(ev, "a typed constant in an index map must hold a number");
      return out->e || bad(ev, "out of memory");
    }
    return bad(ev, "an index map calls only T.<dtype>(constant)");
  }
  case PY_UNARY: {
    if (e->u.unary.op != PY_OP_NEG)
      return bad(ev, "unsupported operator in index map");
    ival x;
    if (!eval(ev, e->u.unary.a, &x, depth + 1))
      return false;
    if (x.is_literal) {
      *out = x;
      out->v = -x.v;
      return true;
    }
    loom_expr *zero = loom_ir_int(ev->a, x.e->dtype, 0);
    out->e = loom_ir_binary(ev->a, LOOM_EXPR_SUB, zero, x.e);
    return out->e || bad(ev, "out of memory");
  }
  case PY_BINOP: {
    loom_expr_kind k;
    switch (e->u.bin.op) {
    case PY_OP_ADD: k = LOOM_EXPR_ADD; break;
    case PY_OP_SUB: k = LOOM_EXPR_SUB; break;
    case PY_OP_MUL: k = LOOM_EXPR_MUL; break;
    case PY_OP_FLOORDIV: k = LOOM_EXPR_FLOORDIV; break;
    case PY_OP_MOD: k = LOOM_EXPR_FLOORMOD; break;
    default: return bad(ev, "unsupported operator in index map");
    }
    ival x, y;
    if (!eval(ev, e->u.bin.a, &x, depth + 1) ||
        !eval(ev, e->u.bin.b, &y, depth + 1))
      return false;
    loom_dtype t = !x.is_literal ? x.e->dtype : !y.is_literal ? y.e->dtype
                                                              : ev->t;
    /* Parameters of two widths meet at the wider, as TVM promotes. */
    if (!x.is_literal && !y.is_literal && !loom_dtype_eq(x.e->dtype, y.e->dtype)) {
      t = x.e->dtype.bits >= y.e->dtype.bits ? x.e->dtype : y.e->dtype;
      if ((!loom_dtype_eq(x.e->dtype, t) && !(x.e = loom_ir_cast(ev->a, t, x.e))) ||
          (!loom_dtype_eq(y.e->dtype, t) && !(y.e = loom_ir_cast(ev->a, t, y.e))))
        return bad(ev, "out of memory");
    }
    out->e = loom_ir_binary(ev->a, k, typed(ev, &x, t), typed(ev, &y, t));
    return out->e || bad(ev, "out of memory");
  }
  default:
    return bad(ev, "an index map holds only arithmetic on its parameters");
  }
}

bool sched_index_map_parse(loom_arena *a, const char *text, loom_dtype t,
                           sched_index_map *out, char *why, size_t n_why) {
  return sched_index_map_parse_typed(a, text, t, NULL, 0, out, why, n_why);
}

bool sched_index_map_parse_typed(loom_arena *a, const char *text, loom_dtype t,
                                 const loom_dtype *param_types, int n_types,
                                 sched_index_map *out, char *why, size_t n_why) {
  memset(out, 0, sizeof *out);
  size_t n = strlen(text);
  char *src = loom_arena_alloc(a, n + 8);
  if (!src) {
    snprintf(why, n_why, "out of memory");
    return false;
  }
  memcpy(src, "m = ", 4);
  memcpy(src + 4, text, n);
  memcpy(src + 4 + n, "\n", 2);
  py_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = py_parse(src, n + 5, "index_map", a, &m, &d);
  if (st != LOOM_OK) {
    snprintf(why, n_why, "cannot read index map: %s", d.msg ? d.msg : "?");
    loom_diag_free(&d);
    return false;
  }
  loom_diag_free(&d);
  if (m->body.n_stmts != 1 || m->body.stmts[0]->kind != PY_S_ASSIGN ||
      m->body.stmts[0]->u.assign.value->kind != PY_LAMBDA) {
    snprintf(why, n_why, "an index map must be a lambda");
    return false;
  }
  const py_expr *lam = m->body.stmts[0]->u.assign.value;
  evaluator ev = {a, lam, NULL, t, why, n_why};
  int np = lam->u.lambda.n_params;
  out->params = loom_arena_alloc(a, (size_t)(np ? np : 1) * sizeof *out->params);
  if (!out->params) {
    snprintf(why, n_why, "out of memory");
    return false;
  }
  for (int i = 0; i < np; i++)
    if (!(out->params[i] = loom_ir_var(a, lam->u.lambda.params[i],
                                       i < n_types ? param_types[i] : t))) {
      snprintf(why, n_why, "out of memory");
      return false;
    }
  ev.params = out->params;
  out->n_params = np;
  const py_expr *body = lam->u.lambda.body;
  py_expr *const *items = &lam->u.lambda.body;
  int nr = 1;
  if (body->kind == PY_TUPLE) {
    items = body->u.seq.items;
    nr = body->u.seq.n_items;
  } else if (body->kind == PY_LIST) {
    /* Ranges [(begin, end), ...]: the results are begin0, end0, ... */
    int n_pairs = body->u.seq.n_items;
    py_expr **flat = loom_arena_alloc(a, (size_t)(2 * n_pairs + 1) * sizeof *flat);
    if (!flat) {
      snprintf(why, n_why, "out of memory");
      return false;
    }
    for (int i = 0; i < n_pairs; i++) {
      const py_expr *pr = body->u.seq.items[i];
      if (pr->kind != PY_TUPLE || pr->u.seq.n_items != 2) {
        snprintf(why, n_why, "each range must be a (begin, end) pair");
        return false;
      }
      flat[2 * i] = pr->u.seq.items[0];
      flat[2 * i + 1] = pr->u.seq.items[1];
    }
    items = flat;
    nr = 2 * n_pairs;
    out->is_ranges = true;
  }
  out->results = loom_arena_alloc(a, (size_t)(nr ? nr : 1) * sizeof *out->results);
  if (!out->results) {
    snprintf(why, n_why, "out of memory");
    return false;
  }
  for (int i = 0; i < nr; i++) {
    ival v;
    if (!eval(&ev, items[i], &v, 0))
      return false;
    if (!(out->results[i] = typed(&ev, &v, t))) {
      snprintf(why, n_why, "out of memory");
      return false;
    }
  }
  out->n_results = nr;
  return true;
}

bool sched_index_map_apply(loom_arena *a, const sched_index_map *m,
                           loom_expr *const *args, loom_expr **out) {
  for (int i = 0; i < m->n_results; i++)
    if (!(out[i] = loom_ir_substitute_expr(a, m->results[i], m->params, args,
                                           m->n_params)))
      return false;
  return true;
}
