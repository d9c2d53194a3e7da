/* The Python-subset syntax tree, and the parser that makes it, shared by
 * the three readers of Python text: TVMScript (src/script), schedule
 * scripts and index maps (src/schedule/script.c, index_map.h) and TE
 * scripts (src/te/script.c). Not part of the public API: those three are its
 * only users outside src/script. The parser knows nothing of TVM; each
 * reader gives the tree its meaning. */
#ifndef LOOM_SCRIPT_AST_H
#define LOOM_SCRIPT_AST_H

#include "loom/base.h"
#include <stdbool.h>

typedef struct py_expr py_expr;
typedef struct py_stmt py_stmt;

typedef enum {
  PY_NAME,      /* u.name */
  PY_ATTRIBUTE, /* u.attr.value . u.attr.name */
  PY_CALL,      /* u.call */
  PY_SUBSCRIPT, /* u.sub.value [ u.sub.index ]; a, b inside [] is a TUPLE */
  PY_TUPLE,     /* u.seq; also the parenthesised (a, b) and (a,) */
  PY_LIST,      /* u.seq */
  PY_DICT,      /* u.dict */
  PY_INT,       /* u.int_value; is_big when it does not fit in int64 */
  PY_FLOAT,     /* u.float_value */
  PY_STR,       /* u.str (escapes decoded) */
  PY_TRUE,
  PY_FALSE,
  PY_NONE,
  PY_BINOP,     /* u.bin: + - * / // % ** << >> & | ^ @ */
  PY_UNARY,     /* u.unary: - + ~ not */
  PY_BOOLOP,    /* u.bin with op "and" / "or" (left-nested chain) */
  PY_COMPARE,   /* u.compare: a < b <= c ... */
  PY_IFEXP,     /* u.ifexp: t if cond else f */
  PY_LAMBDA,    /* u.lambda */
  PY_SLICE,     /* u.slice: lo:hi:step inside a subscript, any part NULL */
} py_expr_kind;

typedef enum {
  PY_OP_ADD, PY_OP_SUB, PY_OP_MUL, PY_OP_DIV, PY_OP_FLOORDIV, PY_OP_MOD,
  PY_OP_POW, PY_OP_LSHIFT, PY_OP_RSHIFT, PY_OP_BITAND, PY_OP_BITOR,
  PY_OP_BITXOR, PY_OP_MATMUL,
  PY_OP_AND, PY_OP_OR,                      /* BOOLOP */
  PY_OP_NEG, PY_OP_POS, PY_OP_INVERT, PY_OP_NOT, /* UNARY */
  PY_OP_LT, PY_OP_LE, PY_OP_GT, PY_OP_GE, PY_OP_EQ, PY_OP_NE,
  PY_OP_IN, PY_OP_NOT_IN, PY_OP_IS, PY_OP_IS_NOT, /* COMPARE */
} py_op;

typedef struct py_keyword {
  const char *name; /* NULL for **kwargs (rejected by builders) */
  py_expr *value;
  loom_loc loc;
} py_keyword;

struct py_expr {
  py_expr_kind kind;
  loom_loc loc; /* first character of the expression */
  union {
    const char *name;
    struct { py_expr *value; const char *name; loom_loc name_loc; } attr;
    struct {
      py_expr *func;
      py_expr **args; int n_args;
      py_keyword *kwargs; int n_kwargs;
    } call;
    struct { py_expr *value; py_expr *index; } sub;
    struct { py_expr **items; int n_items; } seq;
    struct { py_expr **keys; py_expr **values; int n_items; } dict;
    struct { int64_t int_value; bool is_big; const char *text; } num;
    double float_value;
    const char *str;
    struct { py_op op; py_expr *a, *b; } bin;
    struct { py_op op; py_expr *a; } unary;
    struct { py_expr **operands; py_op *ops; int n_ops; } compare; /* n_ops + 1 operands */
    struct { py_expr *cond, *t, *f; } ifexp;
    struct { const char **params; int n_params; py_expr *body; } lambda;
    struct { py_expr *lo, *hi, *step; } slice;
  } u;
};

typedef enum {
  PY_S_EXPR,      /* u.expr: an expression statement */
  PY_S_ASSIGN,    /* u.assign: targets = value (one target; may be a tuple) */
  PY_S_ANNASSIGN, /* u.ann: target: annotation [= value] */
  PY_S_AUGASSIGN, /* u.aug: target op= value */
  PY_S_FOR,       /* u.for_: for target in iter: body [else is rejected] */
  PY_S_WHILE,     /* u.while_ */
  PY_S_IF,        /* u.if_: elif chains are nested IFs in orelse */
  PY_S_WITH,      /* u.with: with item [as target], ...: body */
  PY_S_FUNCDEF,   /* u.func */
  PY_S_CLASSDEF,  /* u.cls */
  PY_S_RETURN,    /* u.expr, may be NULL */
  PY_S_PASS,
  PY_S_BREAK,
  PY_S_CONTINUE,
  PY_S_IMPORT,    /* import / from ... import ...: kept only for its location */
  PY_S_ASSERT,    /* u.assert_ */
} py_stmt_kind;

typedef struct py_block {
  py_stmt **stmts;
  int n_stmts;
} py_block;

typedef struct py_arg {
  const char *name;
  py_expr *annotation; /* NULL when absent */
  py_expr *default_value;
  loom_loc loc;
} py_arg;

typedef struct py_with_item {
  py_expr *context;
  py_expr *target; /* NULL when there is no `as` */
} py_with_item;

struct py_stmt {
  py_stmt_kind kind;
  loom_loc loc;
  /* Decorators of a FUNCDEF or CLASSDEF, outermost first. */
  py_expr **decorators;
  int n_decorators;
  union {
    py_expr *expr;
    struct { py_expr *target; py_expr *value; } assign;
    struct { py_expr *target; py_expr *annotation; py_expr *value; } ann;
    struct { py_expr *target; py_op op; py_expr *value; } aug;
    struct { py_expr *target; py_expr *iter; py_block body; } for_;
    struct { py_expr *cond; py_block body; } while_;
    struct { py_expr *cond; py_block body, orelse; } if_;
    struct { py_with_item *items; int n_items; py_block body; } with;
    struct {
      const char *name;
      py_arg *args; int n_args;
      py_expr *returns;
      py_block body;
    } func;
    struct { const char *name; py_expr **bases; int n_bases; py_block body; } cls;
    struct { py_expr *cond, *msg; } assert_;
  } u;
};

typedef struct py_module {
  py_block body;
  /* Comment lines that begin with "# from tvm" or "# import tvm" at the top of
   * the file, in order, for a printer that wants to echo them. */
  const char **header_comments;
  int n_header_comments;
} py_module;

/* Parses Python-subset text. `file` is used in locations. Nodes go into arena
 * a. Errors: lexical (bad characters, unterminated strings, inconsistent
 * indentation, tabs mixed with spaces), syntactic (with what was expected),
 * nesting deeper than LOOM_SCRIPT_MAX_DEPTH. Never reads past len; never
 * recurses without a depth check. */
loom_status py_parse(const char *text, size_t len, const char *file,
                     loom_arena *a, py_module **out, loom_diag *d);

/* Name of an operator as written in Python ("+", "//", "not", ...). */
const char *py_op_text(py_op op);
/* Whether e is the dotted name (a chain of attributes on a name) name,
 * "tvm.tir.Schedule" say. */
bool py_is_dotted(const py_expr *e, const char *name);

#endif
