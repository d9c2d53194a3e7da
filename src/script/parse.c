/* The Python-subset parser: recursive descent over the lexer's tokens into
 * the tree of ast.h, with Python's precedence and the first error reported
 * with its location and what was expected there. */
#include "ast.h"
#include "lexer.h"

#include <limits.h>
#include <string.h>

typedef struct parser {
  lexer lx;
  token tok; /* the current token; never TK_ERROR (advance reports those) */
  loom_arena *a;
  loom_diag *d;
  int depth;       /* nested expressions and brackets being parsed */
  int block_depth; /* nested statement blocks */
  lexer *saved_lx; /* for rewinding a parenthesised-with trial; lazily made */
} parser;

static const char *const op_texts[] = {
    [PY_OP_ADD] = "+",       [PY_OP_SUB] = "-",     [PY_OP_MUL] = "*",
    [PY_OP_DIV] = "/",       [PY_OP_FLOORDIV] = "//", [PY_OP_MOD] = "%",
    [PY_OP_POW] = "**",      [PY_OP_LSHIFT] = "<<", [PY_OP_RSHIFT] = ">>",
    [PY_OP_BITAND] = "&",    [PY_OP_BITOR] = "|",   [PY_OP_BITXOR] = "^",
    [PY_OP_MATMUL] = "@",    [PY_OP_AND] = "and",   [PY_OP_OR] = "or",
    [PY_OP_NEG] = "-",       [PY_OP_POS] = "+",     [PY_OP_INVERT] = "~",
    [PY_OP_NOT] = "not",     [PY_OP_LT] = "<",      [PY_OP_LE] = "<=",
    [PY_OP_GT] = ">",        [PY_OP_GE] = ">=",     [PY_OP_EQ] = "==",
    [PY_OP_NE] = "!=",       [PY_OP_IN] = "in",     [PY_OP_NOT_IN] = "not in",
    [PY_OP_IS] = "is",       [PY_OP_IS_NOT] = "is not",
};

const char *py_op_text(py_op op) {
  if ((int)op < 0 || (size_t)op >= sizeof op_texts / sizeof op_texts[0] ||
      !op_texts[op])
    return "?";
  return op_texts[op];
}

/* ---- tokens and errors ------------------------------------------------------ */

static loom_status advance(parser *p) {
  lexer_next(&p->lx, &p->tok);
  if (p->tok.kind != TK_ERROR)
    return LOOM_OK;
  if (p->lx.error_status == LOOM_NOMEM)
    return LOOM_NOMEM;
  return loom_diag_error(p->d, p->lx.error_loc, "%s", p->lx.error_msg);
}

static bool at(const parser *p, tok_kind k) { return p->tok.kind == k; }

/* The current token as a message names it: "name 'x'", "')'", "newline". */
static const char *describe(const token *t, char *buf, size_t n) {
  int len = t->len > 40 ? 40 : (int)t->len;
  switch (t->kind) {
  case TK_NAME:
    snprintf(buf, n, "name '%.*s'", len, t->start);
    return buf;
  case TK_INT:
  case TK_FLOAT:
    snprintf(buf, n, "number '%.*s'", len, t->start);
    return buf;
  case TK_STRING:
    return "string literal";
  case TK_RESERVED:
    snprintf(buf, n, "keyword '%.*s'", len, t->start);
    return buf;
  default:
    return token_kind_text(t->kind);
  }
}

/* "expected WHAT, found <current token>" at the current token. Inside a
 * bracket opened on an earlier line, the likely cause is that bracket left
 * open, so a note points at it. */
static loom_status expected(parser *p, const char *what) {
  char buf[80];
  loom_status s = loom_diag_error(p->d, p->tok.loc, "expected %s, found %s",
                                  what, describe(&p->tok, buf, sizeof buf));
  if (p->lx.n_brackets > 0) {
    const bracket *b = &p->lx.brackets[p->lx.n_brackets - 1];
    if (b->loc.line < p->tok.loc.line)
      loom_diag_note(p->d, b->loc, "'%c' opened here is still open", b->ch);
  }
  return s;
}

/* Consumes a token of kind k or reports what was expected instead. */
static loom_status expect(parser *p, tok_kind k, const char *what) {
  if (!at(p, k))
    return expected(p, what);
  return advance(p);
}

static loom_status too_deep(parser *p) {
  return loom_diag_error(p->d, p->tok.loc, "nesting too deep (limit is %d)",
                         LOOM_SCRIPT_MAX_DEPTH);
}

/* Every recursion of the expression grammar passes here, so no input can
 * recurse further than LOOM_SCRIPT_MAX_DEPTH levels; callers decrement. */
static loom_status enter(parser *p) {
  if (p->depth >= LOOM_SCRIPT_MAX_DEPTH)
    return too_deep(p);
  p->depth++;
  return LOOM_OK;
}

/* ---- allocation ------------------------------------------------------------ */

/* A growable array in the arena. Doubling keeps appends linear; the old
 * copies stay in the arena, at most as much again as the final arrays. */
typedef struct vec {
  void *items;
  int n, cap;
} vec;

static loom_status vec_push(parser *p, vec *v, const void *item, size_t size) {
  if (v->n == v->cap) {
    if (v->cap > INT_MAX / 2)
      return loom_diag_error(p->d, p->tok.loc, "too many items in one list");
    int cap = v->cap ? v->cap * 2 : 4;
    void *items = loom_arena_alloc(p->a, (size_t)cap * size);
    if (!items)
      return LOOM_NOMEM;
    if (v->n)
      memcpy(items, v->items, (size_t)v->n * size);
    v->items = items;
    v->cap = cap;
  }
  memcpy((char *)v->items + (size_t)v->n * size, item, size);
  v->n++;
  return LOOM_OK;
}

static loom_status push_expr(parser *p, vec *v, py_expr *e) {
  return vec_push(p, v, &e, sizeof e);
}

static loom_status new_expr(parser *p, py_expr_kind kind, loom_loc loc,
                            py_expr **out) {
  py_expr *e = loom_arena_alloc(p->a, sizeof *e);
  if (!e)
    return LOOM_NOMEM;
  e->kind = kind;
  e->loc = loc;
  *out = e;
  return LOOM_OK;
}

static loom_status new_stmt(parser *p, py_stmt_kind kind, loom_loc loc,
                            py_stmt **out) {
  py_stmt *s = loom_arena_alloc(p->a, sizeof *s);
  if (!s)
    return LOOM_NOMEM;
  s->kind = kind;
  s->loc = loc;
  *out = s;
  return LOOM_OK;
}

/* A node with two operands, located at its first character: that of a, or
 * of the parenthesis before a, which `start` gives. */
static loom_status new_binary(parser *p, py_expr_kind kind, py_op op,
                              loom_loc start, py_expr *a, py_expr *b,
                              py_expr **out) {
  TRY(new_expr(p, kind, start, out));
  (*out)->u.bin.op = op;
  (*out)->u.bin.a = a;
  (*out)->u.bin.b = b;
  return LOOM_OK;
}

/* Copies the current NAME token's text into the arena. */
static loom_status take_name(parser *p, const char **out) {
  char *s = loom_arena_strndup(p->a, p->tok.start, p->tok.len);
  if (!s)
    return LOOM_NOMEM;
  *out = s;
  return LOOM_OK;
}

/* ---- expressions ------------------------------------------------------------ */

static loom_status parse_test(parser *p, py_expr **out);

/* parse_test one level down, counted against the depth limit. */
static loom_status parse_nested_test(parser *p, py_expr **out) {
  TRY(enter(p));
  TRY(parse_test(p, out));
  p->depth--;
  return LOOM_OK;
}

/* Tokens that can begin an expression (or that the expression parser turns
 * into a precise "not supported"), to tell a trailing comma from a list. */
static bool starts_expr(tok_kind k) {
  switch (k) {
  case TK_NAME: case TK_INT: case TK_FLOAT: case TK_STRING: case TK_NONE:
  case TK_TRUE: case TK_FALSE: case TK_LPAREN: case TK_LBRACKET:
  case TK_LBRACE: case TK_MINUS: case TK_PLUS: case TK_TILDE: case TK_NOT:
  case TK_LAMBDA: case TK_STAR: case TK_ELLIPSIS: case TK_RESERVED:
    return true;
  default:
    return false;
  }
}

static loom_status no_comprehension(parser *p) {
  if (at(p, TK_FOR))
    return loom_diag_error(p->d, p->tok.loc,
                           "comprehensions are not supported");
  return LOOM_OK;
}

/* Finishes a comma-separated list whose first item is parsed: items until
 * `close` (a trailing comma allowed), for tuples, lists and testlists. */
static loom_status parse_more_items(parser *p, vec *items, tok_kind close,
                                    const char *what) {
  while (at(p, TK_COMMA)) {
    TRY(advance(p));
    if (at(p, close) || !starts_expr(p->tok.kind))
      break;
    py_expr *e = NULL;
    TRY(parse_test(p, &e));
    TRY(no_comprehension(p));
    TRY(push_expr(p, items, e));
  }
  if (close != TK_EOF && !at(p, close))
    return expected(p, what);
  return LOOM_OK;
}

static loom_status make_seq(parser *p, py_expr_kind kind, loom_loc loc,
                            vec *items, py_expr **out) {
  TRY(new_expr(p, kind, loc, out));
  (*out)->u.seq.items = items->items;
  (*out)->u.seq.n_items = items->n;
  return LOOM_OK;
}

/* A STRING token and any that follow it: "a" "b" is "ab", as in Python. */
static loom_status parse_strings(parser *p, py_expr **out) {
  TRY(new_expr(p, PY_STR, p->tok.loc, out));
  const char *first = p->tok.str;
  size_t total = p->tok.str_len;
  TRY(advance(p));
  if (!at(p, TK_STRING)) {
    (*out)->u.str = first;
    return LOOM_OK;
  }
  vec pieces = {0};
  TRY(vec_push(p, &pieces, &(token){.str = first, .str_len = total},
               sizeof(token)));
  while (at(p, TK_STRING)) {
    if (p->tok.str_len > SIZE_MAX / 2 - total)
      return LOOM_NOMEM;
    total += p->tok.str_len;
    TRY(vec_push(p, &pieces, &p->tok, sizeof(token)));
    TRY(advance(p));
  }
  char *s = loom_arena_alloc(p->a, total + 1);
  if (!s)
    return LOOM_NOMEM;
  size_t k = 0;
  for (int i = 0; i < pieces.n; i++) {
    const token *t = (const token *)pieces.items + i;
    memcpy(s + k, t->str, t->str_len);
    k += t->str_len;
  }
  s[k] = '\0';
  (*out)->u.str = s;
  return LOOM_OK;
}

/* ( ... ): a parenthesised expression, a tuple, or the empty tuple. */
static loom_status parse_paren(parser *p, py_expr **out) {
  loom_loc loc = p->tok.loc;
  TRY(enter(p));
  TRY(advance(p));
  vec items = {0};
  if (!at(p, TK_RPAREN)) {
    py_expr *first = NULL;
    TRY(parse_test(p, &first));
    TRY(no_comprehension(p));
    if (!at(p, TK_COMMA)) {
      TRY(expect(p, TK_RPAREN, "',' or ')'"));
      p->depth--;
      *out = first;
      return LOOM_OK;
    }
    TRY(push_expr(p, &items, first));
    TRY(parse_more_items(p, &items, TK_RPAREN, "',' or ')' in a tuple"));
  }
  TRY(advance(p));
  p->depth--;
  return make_seq(p, PY_TUPLE, loc, &items, out);
}

static loom_status parse_list(parser *p, py_expr **out) {
  loom_loc loc = p->tok.loc;
  TRY(enter(p));
  TRY(advance(p));
  vec items = {0};
  if (!at(p, TK_RBRACKET)) {
    py_expr *first = NULL;
    TRY(parse_test(p, &first));
    TRY(no_comprehension(p));
    TRY(push_expr(p, &items, first));
    TRY(parse_more_items(p, &items, TK_RBRACKET, "',' or ']' in a list"));
  }
  TRY(advance(p));
  p->depth--;
  return make_seq(p, PY_LIST, loc, &items, out);
}

static loom_status parse_dict(parser *p, py_expr **out) {
  loom_loc loc = p->tok.loc;
  TRY(enter(p));
  TRY(advance(p));
  vec keys = {0}, values = {0};
  while (!at(p, TK_RBRACE)) {
    if (at(p, TK_POW))
      return loom_diag_error(p->d, p->tok.loc,
                             "dictionary unpacking ('**') is not supported");
    py_expr *key = NULL, *value = NULL;
    TRY(parse_test(p, &key));
    if (at(p, TK_COMMA) || at(p, TK_RBRACE))
      return loom_diag_error(p->d, key->loc, "set literals are not supported");
    TRY(no_comprehension(p));
    TRY(expect(p, TK_COLON, "':' after dictionary key"));
    TRY(parse_test(p, &value));
    TRY(no_comprehension(p));
    TRY(push_expr(p, &keys, key));
    TRY(push_expr(p, &values, value));
    if (!at(p, TK_COMMA)) {
      if (!at(p, TK_RBRACE))
        return expected(p, "',' or '}' in a dictionary");
      break;
    }
    TRY(advance(p));
  }
  TRY(advance(p));
  p->depth--;
  TRY(new_expr(p, PY_DICT, loc, out));
  (*out)->u.dict.keys = keys.items;
  (*out)->u.dict.values = values.items;
  (*out)->u.dict.n_items = keys.n;
  return LOOM_OK;
}

static loom_status parse_atom(parser *p, py_expr **out) {
  loom_loc loc = p->tok.loc;
  char buf[80];
  switch (p->tok.kind) {
  case TK_NAME:
    TRY(new_expr(p, PY_NAME, loc, out));
    TRY(take_name(p, &(*out)->u.name));
    return advance(p);
  case TK_INT:
    TRY(new_expr(p, PY_INT, loc, out));
    (*out)->u.num.int_value = p->tok.int_value;
    (*out)->u.num.is_big = p->tok.is_big;
    (*out)->u.num.text = p->tok.text;
    return advance(p);
  case TK_FLOAT:
    TRY(new_expr(p, PY_FLOAT, loc, out));
    (*out)->u.float_value = p->tok.float_value;
    return advance(p);
  case TK_STRING:
    return parse_strings(p, out);
  case TK_TRUE:
  case TK_FALSE:
  case TK_NONE:
    TRY(new_expr(p,
                 at(p, TK_TRUE) ? PY_TRUE : at(p, TK_FALSE) ? PY_FALSE : PY_NONE,
                 loc, out));
    return advance(p);
  case TK_LPAREN:
    return parse_paren(p, out);
  case TK_LBRACKET:
    return parse_list(p, out);
  case TK_LBRACE:
    return parse_dict(p, out);
  case TK_STAR:
    return loom_diag_error(p->d, loc,
                           "starred expressions ('*x') are not supported");
  case TK_ELLIPSIS:
    return loom_diag_error(p->d, loc, "'...' (Ellipsis) is not supported");
  case TK_RESERVED:
    return loom_diag_error(p->d, loc,
                           "'%.*s' is not supported in this Python subset",
                           (int)p->tok.len, p->tok.start);
  default:
    return loom_diag_error(p->d, loc, "expected an expression, found %s",
                           describe(&p->tok, buf, sizeof buf));
  }
}

/* ( args ) after a callee: positional arguments, then keyword arguments. */
static loom_status parse_call(parser *p, loom_loc start, py_expr *func,
                              py_expr **out) {
  TRY(enter(p));
  TRY(advance(p));
  vec args = {0}, kwargs = {0};
  while (!at(p, TK_RPAREN)) {
    if (at(p, TK_STAR) || at(p, TK_POW))
      return loom_diag_error(p->d, p->tok.loc,
                             "%s arguments are not supported",
                             at(p, TK_STAR) ? "*args" : "**kwargs");
    tok_kind first = p->tok.kind;
    py_expr *e = NULL;
    TRY(parse_test(p, &e));
    TRY(no_comprehension(p));
    if (at(p, TK_ASSIGN)) {
      /* Only a bare name may stand before '=': f(a=1), not f((a)=1). */
      if (first != TK_NAME || e->kind != PY_NAME)
        return loom_diag_error(p->d, e->loc,
                               "expected a parameter name before '=' in a "
                               "keyword argument");
      TRY(advance(p));
      py_keyword kw = {.name = e->u.name, .loc = e->loc};
      TRY(parse_test(p, &kw.value));
      TRY(no_comprehension(p));
      TRY(vec_push(p, &kwargs, &kw, sizeof kw));
    } else if (kwargs.n > 0) {
      return loom_diag_error(p->d, e->loc,
                             "positional argument follows keyword argument");
    } else {
      TRY(push_expr(p, &args, e));
    }
    if (!at(p, TK_COMMA)) {
      if (!at(p, TK_RPAREN))
        return expected(p, "',' or ')' in call arguments");
      break;
    }
    TRY(advance(p));
  }
  TRY(advance(p));
  p->depth--;
  TRY(new_expr(p, PY_CALL, start, out));
  (*out)->u.call.func = func;
  (*out)->u.call.args = args.items;
  (*out)->u.call.n_args = args.n;
  (*out)->u.call.kwargs = kwargs.items;
  (*out)->u.call.n_kwargs = kwargs.n;
  return LOOM_OK;
}

/* One subscript item: an expression or a slice lo:hi:step, parts optional. */
static loom_status parse_slice_item(parser *p, py_expr **out) {
  loom_loc start = p->tok.loc;
  py_expr *lo = NULL;
  if (!at(p, TK_COLON)) {
    TRY(parse_test(p, &lo));
    if (!at(p, TK_COLON)) {
      *out = lo;
      return LOOM_OK;
    }
  }
  TRY(new_expr(p, PY_SLICE, start, out));
  (*out)->u.slice.lo = lo;
  TRY(advance(p));
  if (!at(p, TK_COLON) && !at(p, TK_COMMA) && !at(p, TK_RBRACKET))
    TRY(parse_test(p, &(*out)->u.slice.hi));
  if (at(p, TK_COLON)) {
    TRY(advance(p));
    if (!at(p, TK_COMMA) && !at(p, TK_RBRACKET))
      TRY(parse_test(p, &(*out)->u.slice.step));
  }
  return LOOM_OK;
}

/* [ index ] after a value; A[i, j] and A[i,] index with a tuple. */
static loom_status parse_subscript(parser *p, loom_loc start, py_expr *value,
                                   py_expr **out) {
  TRY(enter(p));
  TRY(advance(p));
  vec items = {0};
  bool has_comma = false;
  loom_loc first_loc = p->tok.loc;
  for (;;) {
    py_expr *e = NULL;
    TRY(parse_slice_item(p, &e));
    TRY(push_expr(p, &items, e));
    if (!at(p, TK_COMMA))
      break;
    has_comma = true;
    TRY(advance(p));
    if (!starts_expr(p->tok.kind) && !at(p, TK_COLON))
      break;
  }
  if (!at(p, TK_RBRACKET))
    return expected(p, "',' or ']' in a subscript");
  TRY(advance(p));
  p->depth--;
  TRY(new_expr(p, PY_SUBSCRIPT, start, out));
  (*out)->u.sub.value = value;
  py_expr **first = items.items;
  if (!has_comma) {
    (*out)->u.sub.index = first[0];
    return LOOM_OK;
  }
  return make_seq(p, PY_TUPLE, first_loc, &items, &(*out)->u.sub.index);
}

/* An atom followed by attribute accesses, calls and subscripts. */
static loom_status parse_primary(parser *p, py_expr **out) {
  loom_loc start = p->tok.loc;
  py_expr *e = NULL;
  TRY(parse_atom(p, &e));
  for (;;) {
    if (at(p, TK_DOT)) {
      TRY(advance(p));
      if (!at(p, TK_NAME))
        return expected(p, "an attribute name after '.'");
      py_expr *attr = NULL;
      TRY(new_expr(p, PY_ATTRIBUTE, start, &attr));
      attr->u.attr.value = e;
      attr->u.attr.name_loc = p->tok.loc;
      TRY(take_name(p, &attr->u.attr.name));
      TRY(advance(p));
      e = attr;
    } else if (at(p, TK_LPAREN)) {
      TRY(parse_call(p, start, e, &e));
    } else if (at(p, TK_LBRACKET)) {
      TRY(parse_subscript(p, start, e, &e));
    } else {
      *out = e;
      return LOOM_OK;
    }
  }
}

static loom_status parse_factor(parser *p, py_expr **out);

/* primary ['**' factor]: right-associative, and tighter than a unary minus
 * on its left (-2**2 is -(2**2)) but not on its right (2**-1). */
static loom_status parse_power(parser *p, py_expr **out) {
  loom_loc start = p->tok.loc;
  py_expr *base = NULL;
  TRY(parse_primary(p, &base));
  if (!at(p, TK_POW)) {
    *out = base;
    return LOOM_OK;
  }
  TRY(advance(p));
  py_expr *exponent = NULL;
  TRY(enter(p));
  TRY(parse_factor(p, &exponent));
  p->depth--;
  return new_binary(p, PY_BINOP, PY_OP_POW, start, base, exponent, out);
}

static loom_status parse_factor(parser *p, py_expr **out) {
  py_op op = PY_OP_NEG;
  if (at(p, TK_MINUS))
    op = PY_OP_NEG;
  else if (at(p, TK_PLUS))
    op = PY_OP_POS;
  else if (at(p, TK_TILDE))
    op = PY_OP_INVERT;
  else
    return parse_power(p, out);
  TRY(new_expr(p, PY_UNARY, p->tok.loc, out));
  (*out)->u.unary.op = op;
  TRY(advance(p));
  TRY(enter(p));
  TRY(parse_factor(p, &(*out)->u.unary.a));
  p->depth--;
  return LOOM_OK;
}

/* Binary operators from | (loosest) to * / // % @ (tightest). */
static int binary_prec(tok_kind k, py_op *op) {
  switch (k) {
  case TK_PIPE: *op = PY_OP_BITOR; return 1;
  case TK_CARET: *op = PY_OP_BITXOR; return 2;
  case TK_AMP: *op = PY_OP_BITAND; return 3;
  case TK_LSHIFT: *op = PY_OP_LSHIFT; return 4;
  case TK_RSHIFT: *op = PY_OP_RSHIFT; return 4;
  case TK_PLUS: *op = PY_OP_ADD; return 5;
  case TK_MINUS: *op = PY_OP_SUB; return 5;
  case TK_STAR: *op = PY_OP_MUL; return 6;
  case TK_SLASH: *op = PY_OP_DIV; return 6;
  case TK_FLOORDIV: *op = PY_OP_FLOORDIV; return 6;
  case TK_PERCENT: *op = PY_OP_MOD; return 6;
  case TK_AT: *op = PY_OP_MATMUL; return 6;
  default: return 0;
  }
}

/* Precedence climbing over the left-associative binary operators. The
 * recursion is bounded by the six precedence levels. */
static loom_status parse_binary(parser *p, int min_prec, py_expr **out) {
  loom_loc start = p->tok.loc;
  py_expr *lhs = NULL;
  TRY(parse_factor(p, &lhs));
  for (;;) {
    py_op op = PY_OP_ADD;
    int prec = binary_prec(p->tok.kind, &op);
    if (prec == 0 || prec < min_prec)
      break;
    TRY(advance(p));
    py_expr *rhs = NULL;
    TRY(parse_binary(p, prec + 1, &rhs));
    TRY(new_binary(p, PY_BINOP, op, start, lhs, rhs, &lhs));
  }
  *out = lhs;
  return LOOM_OK;
}

/* The comparison operator at the current token, consumed; false if none. */
static loom_status parse_comp_op(parser *p, py_op *op, bool *found) {
  *found = true;
  switch (p->tok.kind) {
  case TK_LT: *op = PY_OP_LT; break;
  case TK_LE: *op = PY_OP_LE; break;
  case TK_GT: *op = PY_OP_GT; break;
  case TK_GE: *op = PY_OP_GE; break;
  case TK_EQEQ: *op = PY_OP_EQ; break;
  case TK_NE: *op = PY_OP_NE; break;
  case TK_IN: *op = PY_OP_IN; break;
  case TK_NOT:
    TRY(advance(p));
    if (!at(p, TK_IN))
      return expected(p, "'in' after 'not' in a comparison");
    *op = PY_OP_NOT_IN;
    break;
  case TK_IS:
    TRY(advance(p));
    *op = PY_OP_IS;
    if (!at(p, TK_NOT))
      return LOOM_OK;
    *op = PY_OP_IS_NOT;
    break;
  default:
    *found = false;
    return LOOM_OK;
  }
  return advance(p);
}

/* a < b <= c is one COMPARE with two operators, as in Python's ast. */
static loom_status parse_comparison(parser *p, py_expr **out) {
  loom_loc start = p->tok.loc;
  py_expr *first = NULL;
  TRY(parse_binary(p, 1, &first));
  vec operands = {0}, ops = {0};
  for (;;) {
    py_op op = PY_OP_LT;
    bool found;
    TRY(parse_comp_op(p, &op, &found));
    if (!found)
      break;
    if (operands.n == 0)
      TRY(push_expr(p, &operands, first));
    py_expr *rhs = NULL;
    TRY(parse_binary(p, 1, &rhs));
    TRY(push_expr(p, &operands, rhs));
    TRY(vec_push(p, &ops, &op, sizeof op));
  }
  if (ops.n == 0) {
    *out = first;
    return LOOM_OK;
  }
  TRY(new_expr(p, PY_COMPARE, start, out));
  (*out)->u.compare.operands = operands.items;
  (*out)->u.compare.ops = ops.items;
  (*out)->u.compare.n_ops = ops.n;
  return LOOM_OK;
}

static loom_status parse_not(parser *p, py_expr **out) {
  if (!at(p, TK_NOT))
    return parse_comparison(p, out);
  TRY(new_expr(p, PY_UNARY, p->tok.loc, out));
  (*out)->u.unary.op = PY_OP_NOT;
  TRY(advance(p));
  TRY(enter(p));
  TRY(parse_not(p, &(*out)->u.unary.a));
  p->depth--;
  return LOOM_OK;
}

static loom_status parse_and(parser *p, py_expr **out) {
  loom_loc start = p->tok.loc;
  TRY(parse_not(p, out));
  while (at(p, TK_AND)) {
    TRY(advance(p));
    py_expr *rhs = NULL;
    TRY(parse_not(p, &rhs));
    TRY(new_binary(p, PY_BOOLOP, PY_OP_AND, start, *out, rhs, out));
  }
  return LOOM_OK;
}

static loom_status parse_or(parser *p, py_expr **out) {
  loom_loc start = p->tok.loc;
  TRY(parse_and(p, out));
  while (at(p, TK_OR)) {
    TRY(advance(p));
    py_expr *rhs = NULL;
    TRY(parse_and(p, &rhs));
    TRY(new_binary(p, PY_BOOLOP, PY_OP_OR, start, *out, rhs, out));
  }
  return LOOM_OK;
}

static loom_status parse_lambda(parser *p, py_expr **out) {
  TRY(new_expr(p, PY_LAMBDA, p->tok.loc, out));
  TRY(advance(p));
  vec params = {0};
  while (!at(p, TK_COLON)) {
    if (at(p, TK_STAR) || at(p, TK_POW))
      return loom_diag_error(p->d, p->tok.loc,
                             "*args and **kwargs parameters are not supported");
    if (!at(p, TK_NAME))
      return expected(p, "a parameter name or ':' in lambda");
    const char *name;
    TRY(take_name(p, &name));
    TRY(vec_push(p, &params, &name, sizeof name));
    TRY(advance(p));
    if (at(p, TK_ASSIGN))
      return loom_diag_error(p->d, p->tok.loc,
                             "default values of lambda parameters are not "
                             "supported");
    if (!at(p, TK_COMMA)) {
      if (!at(p, TK_COLON))
        return expected(p, "',' or ':' after lambda parameter");
      break;
    }
    TRY(advance(p));
  }
  TRY(advance(p));
  (*out)->u.lambda.params = params.items;
  (*out)->u.lambda.n_params = params.n;
  return parse_nested_test(p, &(*out)->u.lambda.body);
}

/* test: lambda, or `t if cond else f`, or a boolean expression. */
static loom_status parse_test(parser *p, py_expr **out) {
  if (at(p, TK_LAMBDA))
    return parse_lambda(p, out);
  loom_loc start = p->tok.loc;
  py_expr *t = NULL;
  TRY(parse_or(p, &t));
  if (!at(p, TK_IF)) {
    *out = t;
    return LOOM_OK;
  }
  TRY(advance(p));
  TRY(new_expr(p, PY_IFEXP, start, out));
  (*out)->u.ifexp.t = t;
  TRY(parse_or(p, &(*out)->u.ifexp.cond));
  TRY(expect(p, TK_ELSE, "'else' in conditional expression"));
  return parse_nested_test(p, &(*out)->u.ifexp.f);
}

/* test, test, ...: a tuple without parentheses when there is a comma. */
static loom_status parse_testlist(parser *p, py_expr **out) {
  loom_loc start = p->tok.loc;
  py_expr *first = NULL;
  TRY(parse_test(p, &first));
  if (!at(p, TK_COMMA)) {
    *out = first;
    return LOOM_OK;
  }
  vec items = {0};
  TRY(push_expr(p, &items, first));
  TRY(parse_more_items(p, &items, TK_EOF, NULL));
  return make_seq(p, PY_TUPLE, start, &items, out);
}

/* Targets of `for` and `with ... as`: bitwise-or level expressions, so that
 * the `in` of a for loop is not read as a comparison. */
static loom_status parse_target_list(parser *p, bool allow_tuple,
                                     py_expr **out) {
  loom_loc start = p->tok.loc;
  py_expr *first = NULL;
  TRY(parse_binary(p, 1, &first));
  if (!allow_tuple || !at(p, TK_COMMA)) {
    *out = first;
    return LOOM_OK;
  }
  vec items = {0};
  TRY(push_expr(p, &items, first));
  while (at(p, TK_COMMA)) {
    TRY(advance(p));
    if (!starts_expr(p->tok.kind))
      break;
    py_expr *e = NULL;
    TRY(parse_binary(p, 1, &e));
    TRY(push_expr(p, &items, e));
  }
  return make_seq(p, PY_TUPLE, start, &items, out);
}

static const char *expr_kind_text(const py_expr *e) {
  switch (e->kind) {
  case PY_CALL: return "a function call";
  case PY_INT: case PY_FLOAT: case PY_STR: return "a literal";
  case PY_TRUE: return "True";
  case PY_FALSE: return "False";
  case PY_NONE: return "None";
  case PY_COMPARE: return "a comparison";
  case PY_IFEXP: return "a conditional expression";
  case PY_LAMBDA: return "a lambda";
  case PY_DICT: return "a dict literal";
  case PY_SLICE: return "a slice";
  default: return "an expression";
  }
}

/* Only names, attributes, subscripts and tuples or lists of them can be
 * assigned to. */
static loom_status check_target(parser *p, const py_expr *e, int depth) {
  if (depth > LOOM_SCRIPT_MAX_DEPTH)
    return loom_diag_error(p->d, e->loc, "nesting too deep (limit is %d)",
                           LOOM_SCRIPT_MAX_DEPTH);
  switch (e->kind) {
  case PY_NAME:
  case PY_ATTRIBUTE:
  case PY_SUBSCRIPT:
    return LOOM_OK;
  case PY_TUPLE:
  case PY_LIST:
    for (int i = 0; i < e->u.seq.n_items; i++)
      TRY(check_target(p, e->u.seq.items[i], depth + 1));
    if (e->u.seq.n_items == 0)
      return loom_diag_error(p->d, e->loc, "cannot assign to an empty %s",
                             e->kind == PY_TUPLE ? "tuple" : "list");
    return LOOM_OK;
  default:
    return loom_diag_error(p->d, e->loc, "cannot assign to %s",
                           expr_kind_text(e));
  }
}

/* ---- statements ------------------------------------------------------------- */

static loom_status parse_stmt(parser *p, vec *out);

static loom_status push_stmt(parser *p, vec *v, py_stmt *s) {
  return vec_push(p, v, &s, sizeof s);
}

static void set_block(py_block *b, const vec *v) {
  b->stmts = v->items;
  b->n_stmts = v->n;
}

static bool is_compound_start(tok_kind k) {
  return k == TK_DEF || k == TK_CLASS || k == TK_IF || k == TK_FOR ||
         k == TK_WHILE || k == TK_WITH || k == TK_AT || k == TK_ELIF ||
         k == TK_ELSE;
}

static bool is_aug_assign(tok_kind k, py_op *op) {
  switch (k) {
  case TK_PLUS_EQ: *op = PY_OP_ADD; return true;
  case TK_MINUS_EQ: *op = PY_OP_SUB; return true;
  case TK_STAR_EQ: *op = PY_OP_MUL; return true;
  case TK_SLASH_EQ: *op = PY_OP_DIV; return true;
  case TK_FLOORDIV_EQ: *op = PY_OP_FLOORDIV; return true;
  case TK_PERCENT_EQ: *op = PY_OP_MOD; return true;
  case TK_POW_EQ: *op = PY_OP_POW; return true;
  case TK_AT_EQ: *op = PY_OP_MATMUL; return true;
  case TK_AMP_EQ: *op = PY_OP_BITAND; return true;
  case TK_PIPE_EQ: *op = PY_OP_BITOR; return true;
  case TK_CARET_EQ: *op = PY_OP_BITXOR; return true;
  case TK_LSHIFT_EQ: *op = PY_OP_LSHIFT; return true;
  case TK_RSHIFT_EQ: *op = PY_OP_RSHIFT; return true;
  default: return false;
  }
}

/* An expression statement, or an assignment of one of its three kinds. */
static loom_status parse_expr_stmt(parser *p, py_stmt **out) {
  loom_loc start = p->tok.loc;
  py_expr *target = NULL;
  TRY(parse_testlist(p, &target));
  py_op op = PY_OP_ADD;
  if (at(p, TK_COLON)) {
    if (target->kind != PY_NAME && target->kind != PY_ATTRIBUTE &&
        target->kind != PY_SUBSCRIPT)
      return loom_diag_error(p->d, target->loc,
                             "only a single name, attribute or subscript can "
                             "be annotated, not %s",
                             target->kind == PY_TUPLE ? "a tuple"
                                                      : expr_kind_text(target));
    TRY(advance(p));
    TRY(new_stmt(p, PY_S_ANNASSIGN, start, out));
    (*out)->u.ann.target = target;
    TRY(parse_test(p, &(*out)->u.ann.annotation));
    if (at(p, TK_ASSIGN)) {
      TRY(advance(p));
      TRY(parse_testlist(p, &(*out)->u.ann.value));
    }
    return LOOM_OK;
  }
  if (at(p, TK_ASSIGN)) {
    TRY(check_target(p, target, 0));
    TRY(advance(p));
    TRY(new_stmt(p, PY_S_ASSIGN, start, out));
    (*out)->u.assign.target = target;
    TRY(parse_testlist(p, &(*out)->u.assign.value));
    if (at(p, TK_ASSIGN))
      return loom_diag_error(p->d, p->tok.loc,
                             "chained assignment 'a = b = c' is not "
                             "supported; assign each target separately");
    return LOOM_OK;
  }
  if (is_aug_assign(p->tok.kind, &op)) {
    if (target->kind != PY_NAME && target->kind != PY_ATTRIBUTE &&
        target->kind != PY_SUBSCRIPT)
      return loom_diag_error(p->d, target->loc,
                             "%s is an illegal target for augmented "
                             "assignment",
                             target->kind == PY_TUPLE ? "a tuple"
                             : target->kind == PY_LIST ? "a list"
                                                       : expr_kind_text(target));
    TRY(advance(p));
    TRY(new_stmt(p, PY_S_AUGASSIGN, start, out));
    (*out)->u.aug.target = target;
    (*out)->u.aug.op = op;
    return parse_testlist(p, &(*out)->u.aug.value);
  }
  if (at(p, TK_WALRUS))
    return loom_diag_error(p->d, p->tok.loc, "':=' is not supported");
  TRY(new_stmt(p, PY_S_EXPR, start, out));
  (*out)->u.expr = target;
  return LOOM_OK;
}

/* a.b.c, for import statements. */
static loom_status skip_dotted_name(parser *p, const char *what) {
  if (!at(p, TK_NAME))
    return expected(p, what);
  TRY(advance(p));
  while (at(p, TK_DOT)) {
    TRY(advance(p));
    if (!at(p, TK_NAME))
      return expected(p, "a name after '.'");
    TRY(advance(p));
  }
  return LOOM_OK;
}

static loom_status skip_as_name(parser *p) {
  if (!at(p, TK_AS))
    return LOOM_OK;
  TRY(advance(p));
  return expect(p, TK_NAME, "a name after 'as'");
}

/* import a.b [as c], ...  |  from [.]a.b import (x [as y], ...) | *
 * Checked for form only; the statement keeps nothing but its location. */
static loom_status parse_import(parser *p) {
  if (at(p, TK_IMPORT)) {
    TRY(advance(p));
    for (;;) {
      TRY(skip_dotted_name(p, "a module name after 'import'"));
      TRY(skip_as_name(p));
      if (!at(p, TK_COMMA))
        return LOOM_OK;
      TRY(advance(p));
    }
  }
  TRY(advance(p));
  bool has_dots = false;
  while (at(p, TK_DOT) || at(p, TK_ELLIPSIS)) {
    has_dots = true;
    TRY(advance(p));
  }
  if (!has_dots || at(p, TK_NAME))
    TRY(skip_dotted_name(p, "a module name after 'from'"));
  TRY(expect(p, TK_IMPORT, "'import' after the module name"));
  if (at(p, TK_STAR))
    return advance(p);
  bool has_paren = at(p, TK_LPAREN);
  if (has_paren)
    TRY(advance(p));
  for (;;) {
    TRY(expect(p, TK_NAME, "a name to import"));
    TRY(skip_as_name(p));
    if (!at(p, TK_COMMA))
      break;
    TRY(advance(p));
    if (has_paren && at(p, TK_RPAREN))
      break;
  }
  if (has_paren)
    TRY(expect(p, TK_RPAREN, "',' or ')' in the import list"));
  return LOOM_OK;
}

static loom_status parse_simple_stmt(parser *p, py_stmt **out) {
  loom_loc loc = p->tok.loc;
  switch (p->tok.kind) {
  case TK_PASS:
  case TK_BREAK:
  case TK_CONTINUE:
    TRY(new_stmt(p,
                 at(p, TK_PASS) ? PY_S_PASS
                 : at(p, TK_BREAK) ? PY_S_BREAK
                                   : PY_S_CONTINUE,
                 loc, out));
    return advance(p);
  case TK_RETURN:
    TRY(new_stmt(p, PY_S_RETURN, loc, out));
    TRY(advance(p));
    if (starts_expr(p->tok.kind))
      TRY(parse_testlist(p, &(*out)->u.expr));
    return LOOM_OK;
  case TK_IMPORT:
  case TK_FROM:
    TRY(new_stmt(p, PY_S_IMPORT, loc, out));
    return parse_import(p);
  case TK_ASSERT:
    TRY(new_stmt(p, PY_S_ASSERT, loc, out));
    TRY(advance(p));
    TRY(parse_test(p, &(*out)->u.assert_.cond));
    if (at(p, TK_COMMA)) {
      TRY(advance(p));
      TRY(parse_test(p, &(*out)->u.assert_.msg));
    }
    return LOOM_OK;
  default:
    if (is_compound_start(p->tok.kind)) {
      char buf[80];
      return loom_diag_error(p->d, loc,
                             "expected a simple statement, found %s; a "
                             "compound statement must start its own line",
                             describe(&p->tok, buf, sizeof buf));
    }
    return parse_expr_stmt(p, out);
  }
}

/* simple_stmt (';' simple_stmt)* [';'] NEWLINE */
static loom_status parse_simple_stmts(parser *p, vec *out) {
  for (;;) {
    py_stmt *s = NULL;
    TRY(parse_simple_stmt(p, &s));
    TRY(push_stmt(p, out, s));
    if (!at(p, TK_SEMI))
      break;
    TRY(advance(p));
    if (at(p, TK_NEWLINE))
      break;
  }
  return expect(p, TK_NEWLINE, "newline after statement");
}

/* The body after a compound statement's ':': an indented block, or simple
 * statements on the same line. `what` names the statement for messages. */
static loom_status parse_suite(parser *p, const char *what, loom_loc header,
                               py_block *out) {
  vec stmts = {0};
  if (!at(p, TK_NEWLINE)) {
    TRY(parse_simple_stmts(p, &stmts));
    set_block(out, &stmts);
    return LOOM_OK;
  }
  TRY(advance(p));
  if (!at(p, TK_INDENT)) {
    char buf[80];
    return loom_diag_error(p->d, p->tok.loc,
                           "expected an indented block after %s on line %d, "
                           "found %s",
                           what, header.line, describe(&p->tok, buf, sizeof buf));
  }
  if (p->block_depth >= LOOM_SCRIPT_MAX_DEPTH)
    return too_deep(p);
  p->block_depth++;
  TRY(advance(p));
  while (!at(p, TK_DEDENT) && !at(p, TK_EOF))
    TRY(parse_stmt(p, &stmts));
  if (at(p, TK_DEDENT))
    TRY(advance(p));
  p->block_depth--;
  set_block(out, &stmts);
  return LOOM_OK;
}

static loom_status reject_loop_else(parser *p, const char *loop) {
  if (at(p, TK_ELSE))
    return loom_diag_error(p->d, p->tok.loc,
                           "'else' after a %s loop is not supported", loop);
  return LOOM_OK;
}

static loom_status parse_for(parser *p, py_stmt **out) {
  TRY(new_stmt(p, PY_S_FOR, p->tok.loc, out));
  TRY(advance(p));
  TRY(parse_target_list(p, true, &(*out)->u.for_.target));
  TRY(check_target(p, (*out)->u.for_.target, 0));
  TRY(expect(p, TK_IN, "'in' after for-loop target"));
  TRY(parse_testlist(p, &(*out)->u.for_.iter));
  TRY(expect(p, TK_COLON, "':' after for-loop header"));
  TRY(parse_suite(p, "'for' statement", (*out)->loc, &(*out)->u.for_.body));
  return reject_loop_else(p, "for");
}

static loom_status parse_while(parser *p, py_stmt **out) {
  TRY(new_stmt(p, PY_S_WHILE, p->tok.loc, out));
  TRY(advance(p));
  TRY(parse_test(p, &(*out)->u.while_.cond));
  TRY(expect(p, TK_COLON, "':' after while condition"));
  TRY(parse_suite(p, "'while' statement", (*out)->loc,
                  &(*out)->u.while_.body));
  return reject_loop_else(p, "while");
}

/* if / elif / else. Each elif becomes an IF alone in its parent's orelse;
 * the chain is built in a loop so that a long one costs no stack. */
static loom_status parse_if(parser *p, py_stmt **out) {
  TRY(new_stmt(p, PY_S_IF, p->tok.loc, out));
  py_stmt *s = *out;
  for (;;) {
    bool is_elif = at(p, TK_ELIF);
    TRY(advance(p));
    TRY(parse_test(p, &s->u.if_.cond));
    TRY(expect(p, TK_COLON, is_elif ? "':' after elif condition"
                                    : "':' after if condition"));
    TRY(parse_suite(p, is_elif ? "'elif' statement" : "'if' statement",
                    s->loc, &s->u.if_.body));
    if (at(p, TK_ELSE)) {
      loom_loc loc = p->tok.loc;
      TRY(advance(p));
      TRY(expect(p, TK_COLON, "':' after 'else'"));
      return parse_suite(p, "'else' statement", loc, &s->u.if_.orelse);
    }
    if (!at(p, TK_ELIF))
      return LOOM_OK;
    py_stmt *elif = NULL;
    TRY(new_stmt(p, PY_S_IF, p->tok.loc, &elif));
    vec one = {0};
    TRY(push_stmt(p, &one, elif));
    set_block(&s->u.if_.orelse, &one);
    s = elif;
  }
}

/* item [as target]: the target is a single target, which may be a
 * parenthesised tuple or a list; an unparenthesised comma starts the next
 * item, as in Python. */
static loom_status parse_with_item(parser *p, vec *items) {
  py_with_item item = {0};
  TRY(parse_test(p, &item.context));
  if (at(p, TK_AS)) {
    TRY(advance(p));
    TRY(parse_target_list(p, false, &item.target));
    TRY(check_target(p, item.target, 0));
  }
  return vec_push(p, items, &item, sizeof item);
}

/* '(' item, ... [','] ')' followed by ':'. */
static loom_status parse_paren_with_items(parser *p, vec *items) {
  TRY(advance(p));
  do {
    TRY(parse_with_item(p, items));
    if (!at(p, TK_COMMA))
      break;
    TRY(advance(p));
  } while (!at(p, TK_RPAREN));
  TRY(expect(p, TK_RPAREN, "')'"));
  if (!at(p, TK_COLON))
    return LOOM_ERROR;
  return LOOM_OK;
}

/* Python 3.9's parenthesised items, `with (a as b, c):`, mean what they
 * mean without the parentheses. Whether '(' opens them or an expression
 * such as `(a + b).c` shows only at the token after ')', so the items are
 * tried first, quietly, and the lexer rewound when that fails. Items hold
 * no statements, so trials never nest and the cost stays linear. */
static loom_status try_paren_with_items(parser *p, vec *items, bool *is_ok) {
  /* 6 KB, so neither on the stack nor allocated anew for each statement. */
  if (!p->saved_lx && !(p->saved_lx = loom_arena_alloc(p->a, sizeof(lexer))))
    return LOOM_NOMEM;
  lexer *saved = p->saved_lx;
  *saved = p->lx;
  token saved_tok = p->tok;
  int saved_depth = p->depth;
  loom_diag quiet, *d = p->d;
  loom_diag_init(&quiet);
  p->d = &quiet;
  loom_status s = parse_paren_with_items(p, items);
  p->d = d;
  loom_diag_free(&quiet);
  if (s == LOOM_NOMEM)
    return s;
  *is_ok = s == LOOM_OK;
  if (!*is_ok) {
    p->lx = *saved;
    p->tok = saved_tok;
    p->depth = saved_depth;
    items->n = 0;
  }
  return LOOM_OK;
}

static loom_status parse_with(parser *p, py_stmt **out) {
  TRY(new_stmt(p, PY_S_WITH, p->tok.loc, out));
  TRY(advance(p));
  vec items = {0};
  bool is_done = false;
  if (at(p, TK_LPAREN))
    TRY(try_paren_with_items(p, &items, &is_done));
  while (!is_done) {
    TRY(parse_with_item(p, &items));
    if (!at(p, TK_COMMA))
      break;
    TRY(advance(p));
  }
  (*out)->u.with.items = items.items;
  (*out)->u.with.n_items = items.n;
  TRY(expect(p, TK_COLON, "':' after with-statement items"));
  return parse_suite(p, "'with' statement", (*out)->loc, &(*out)->u.with.body);
}

static loom_status parse_params(parser *p, vec *args) {
  bool has_default = false;
  while (!at(p, TK_RPAREN)) {
    if (at(p, TK_STAR) || at(p, TK_POW))
      return loom_diag_error(p->d, p->tok.loc,
                             "*args and **kwargs parameters are not supported");
    if (at(p, TK_SLASH))
      return loom_diag_error(p->d, p->tok.loc,
                             "positional-only parameters ('/') are not "
                             "supported");
    if (!at(p, TK_NAME))
      return expected(p, "a parameter name");
    py_arg arg = {.loc = p->tok.loc};
    TRY(take_name(p, &arg.name));
    TRY(advance(p));
    if (at(p, TK_COLON)) {
      TRY(advance(p));
      TRY(parse_test(p, &arg.annotation));
    }
    if (at(p, TK_ASSIGN)) {
      TRY(advance(p));
      TRY(parse_test(p, &arg.default_value));
      has_default = true;
    } else if (has_default) {
      return loom_diag_error(p->d, arg.loc,
                             "parameter '%s' without a default follows a "
                             "parameter with a default",
                             arg.name);
    }
    TRY(vec_push(p, args, &arg, sizeof arg));
    if (!at(p, TK_COMMA)) {
      if (!at(p, TK_RPAREN))
        return expected(p, "',' or ')' after parameter");
      break;
    }
    TRY(advance(p));
  }
  return advance(p);
}

static loom_status parse_def(parser *p, py_stmt **out) {
  TRY(new_stmt(p, PY_S_FUNCDEF, p->tok.loc, out));
  TRY(advance(p));
  if (!at(p, TK_NAME))
    return expected(p, "a function name after 'def'");
  TRY(take_name(p, &(*out)->u.func.name));
  TRY(advance(p));
  TRY(expect(p, TK_LPAREN, "'(' after the function name"));
  vec args = {0};
  TRY(parse_params(p, &args));
  (*out)->u.func.args = args.items;
  (*out)->u.func.n_args = args.n;
  if (at(p, TK_ARROW)) {
    TRY(advance(p));
    TRY(parse_test(p, &(*out)->u.func.returns));
  }
  TRY(expect(p, TK_COLON, "':' after function signature"));
  return parse_suite(p, "function definition", (*out)->loc,
                     &(*out)->u.func.body);
}

static loom_status parse_class(parser *p, py_stmt **out) {
  TRY(new_stmt(p, PY_S_CLASSDEF, p->tok.loc, out));
  TRY(advance(p));
  if (!at(p, TK_NAME))
    return expected(p, "a class name after 'class'");
  TRY(take_name(p, &(*out)->u.cls.name));
  TRY(advance(p));
  vec bases = {0};
  if (at(p, TK_LPAREN)) {
    TRY(advance(p));
    while (!at(p, TK_RPAREN)) {
      if (at(p, TK_STAR) || at(p, TK_POW))
        return loom_diag_error(p->d, p->tok.loc,
                               "unpacking in class bases is not supported");
      py_expr *base = NULL;
      TRY(parse_test(p, &base));
      if (at(p, TK_ASSIGN))
        return loom_diag_error(p->d, base->loc,
                               "keyword arguments in class bases are not "
                               "supported");
      TRY(push_expr(p, &bases, base));
      if (!at(p, TK_COMMA)) {
        if (!at(p, TK_RPAREN))
          return expected(p, "',' or ')' in class bases");
        break;
      }
      TRY(advance(p));
    }
    TRY(advance(p));
  }
  (*out)->u.cls.bases = bases.items;
  (*out)->u.cls.n_bases = bases.n;
  TRY(expect(p, TK_COLON, "':' after class header"));
  return parse_suite(p, "class definition", (*out)->loc, &(*out)->u.cls.body);
}

/* @decorator NEWLINE ... then the def or class they decorate. */
static loom_status parse_decorated(parser *p, py_stmt **out) {
  vec decorators = {0};
  while (at(p, TK_AT)) {
    TRY(advance(p));
    py_expr *e = NULL;
    TRY(parse_test(p, &e));
    TRY(push_expr(p, &decorators, e));
    TRY(expect(p, TK_NEWLINE, "newline after decorator"));
  }
  if (at(p, TK_DEF))
    TRY(parse_def(p, out));
  else if (at(p, TK_CLASS))
    TRY(parse_class(p, out));
  else
    return expected(p, "'def' or 'class' after decorator");
  (*out)->decorators = decorators.items;
  (*out)->n_decorators = decorators.n;
  return LOOM_OK;
}

/* One statement line (several for `a; b`) or one compound statement. */
static loom_status parse_stmt(parser *p, vec *out) {
  py_stmt *s = NULL;
  switch (p->tok.kind) {
  case TK_AT: TRY(parse_decorated(p, &s)); break;
  case TK_DEF: TRY(parse_def(p, &s)); break;
  case TK_CLASS: TRY(parse_class(p, &s)); break;
  case TK_IF: TRY(parse_if(p, &s)); break;
  case TK_FOR: TRY(parse_for(p, &s)); break;
  case TK_WHILE: TRY(parse_while(p, &s)); break;
  case TK_WITH: TRY(parse_with(p, &s)); break;
  case TK_INDENT:
    return loom_diag_error(p->d, p->tok.loc, "unexpected indent");
  case TK_ELIF:
  case TK_ELSE:
    return loom_diag_error(p->d, p->tok.loc,
                           "'%s' without a matching 'if' before it at this "
                           "indentation",
                           at(p, TK_ELIF) ? "elif" : "else");
  default:
    return parse_simple_stmts(p, out);
  }
  return push_stmt(p, out, s);
}

/* ---- the module -------------------------------------------------------------- */

static bool has_prefix(const char *s, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  return n >= k && memcmp(s, prefix, k) == 0;
}

/* The comment lines before the first statement that say how TVM imports its
 * script modules ("# from tvm.script import tir as T"), without the "# ". */
static loom_status read_header_comments(parser *p, const char *text,
                                        size_t len, py_module *m) {
  vec lines = {0};
  size_t i = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  while (i < len) {
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\f'))
      i++;
    size_t start = i;
    while (i < len && text[i] != '\n' && text[i] != '\r')
      i++;
    size_t n = i - start;
    if (i < len)
      i += text[i] == '\r' && i + 1 < len && text[i + 1] == '\n' ? 2 : 1;
    if (n == 0)
      continue;
    if (text[start] != '#')
      break;
    if (!has_prefix(text + start, n, "# from tvm") &&
        !has_prefix(text + start, n, "# import tvm"))
      continue;
    char *line = loom_arena_strndup(p->a, text + start + 2, n - 2);
    if (!line)
      return LOOM_NOMEM;
    TRY(vec_push(p, &lines, &line, sizeof line));
  }
  m->header_comments = lines.items;
  m->n_header_comments = lines.n;
  return LOOM_OK;
}

loom_status py_parse(const char *text, size_t len, const char *file,
                     loom_arena *a, py_module **out, loom_diag *d) {
  parser p;
  memset(&p, 0, sizeof p);
  p.a = a;
  p.d = d;
  if (!text)
    len = 0, text = "";
  lexer_init(&p.lx, text, len, file, a);
  py_module *m = loom_arena_alloc(a, sizeof *m);
  if (!m)
    return LOOM_NOMEM;
  TRY(read_header_comments(&p, text, len, m));
  TRY(advance(&p));
  vec stmts = {0};
  while (!at(&p, TK_EOF))
    TRY(parse_stmt(&p, &stmts));
  set_block(&m->body, &stmts);
  *out = m;
  return LOOM_OK;
}

bool py_is_dotted(const py_expr *e, const char *name) {
  size_t n = strlen(name);
  while (e && e->kind == PY_ATTRIBUTE && e->u.attr.name) {
    size_t k = strlen(e->u.attr.name);
    if (k + 1 > n || strncmp(name + n - k, e->u.attr.name, k) || name[n - k - 1] != '.')
      return false;
    n -= k + 1;
    e = e->u.attr.value;
  }
  return e && e->kind == PY_NAME && e->u.name && strlen(e->u.name) == n &&
         !strncmp(name, e->u.name, n);
}
