/* The TVMScript builder's private interface: the state shared by the files
 * that turn the Python-subset tree (ast.h) into TensorIR: read.c (modules
 * and functions), read_stmt.c, read_block.c, read_buffer.c, read_expr.c,
 * read_call.c (T.* functions), read_value.c (attribute values) and the
 * plumbing in read_support.c. Nothing here is visible outside src/script. */
#ifndef LOOM_SCRIPT_READ_H
#define LOOM_SCRIPT_READ_H

#include "loom/script.h"
#include "script/ast.h"

#include <stdbool.h>

/* ---- growable arrays in the arena ----------------------------------------
 * Growing copies into a fresh arena block and abandons the old one; doubling
 * keeps the waste under the final size. */
typedef struct rd_vec {
  void *items;
  int n, cap;
} rd_vec;

/* ---- names --------------------------------------------------------------- */
typedef enum {
  SYM_VAR, /* loop and iter vars, lets, scalar and handle params, shape vars */
  SYM_BUFFER,
} rd_sym_kind;

typedef struct rd_sym {
  const char *name;
  rd_sym_kind kind;
  loom_var *var;
  loom_buffer *buffer;
} rd_sym;

/* An enclosing loop, for T.axis.remap's domains. */
typedef struct rd_loop {
  loom_var *var;
  loom_expr *min, *extent;
} rd_loop;

/* A block being built: the header statements fill these before the body. */
typedef struct rd_block {
  loom_block *block;
  rd_vec iter_vars;   /* loom_iter_var */
  rd_vec iter_values; /* loom_expr * */
  rd_vec allocs;      /* loom_buffer * */
  rd_vec matches;     /* loom_match_buffer */
  rd_vec annotations; /* loom_attr */
  loom_expr *predicate;
  bool has_reads, has_writes, has_init, has_where;
  bool has_body;  /* a body statement came: header forms are over */
  int body_depth; /* c->stmt_depth of statements directly in the block */
  int scope_mark; /* symbols below this are visible outside the block */
  struct rd_block *parent;
} rd_block;

/* A block whose T.reads or T.writes were left out: inferred when the
 * function is complete, because the root block rule decides whether the
 * outermost block gets them at all. */
typedef struct rd_pending {
  loom_block *block;
  bool want_reads, want_writes;
  loom_buffer **outer; /* the buffers visible outside the block */
  int n_outer;
} rd_pending;

typedef struct rd_ctx {
  loom_arena *a;
  loom_diag *d;
  const char *file;
  bool file_is_tirx; /* the file imports tirx */
  /* Names declared at the top of the file as n = TypeVar("n"): TVM prints
   * the symbolic shape variables of a module so. A buffer shape that names
   * one defines it, with the widest integer dtype of that shape. */
  rd_vec typevars; /* const char * */
  /* the function being built */
  bool func_is_tirx;  /* T.alloc_buffer is a statement-level allocation */
  rd_vec syms;        /* rd_sym, innermost last */
  rd_vec loops;       /* rd_loop, innermost last */
  rd_block *block;    /* innermost block, NULL at function level */
  int stmt_depth;     /* statement nesting, bounded */
  int expr_depth;     /* expression nesting, bounded */
  rd_vec root_allocs; /* loom_buffer *: buffers allocated at function level */
  rd_vec pending;     /* rd_pending */
  rd_vec params;      /* loom_param, in order */
  rd_vec attrs;       /* loom_attr from T.func_attr */
  bool has_func_attr;
  /* While reading an expression written inside a string (a shape given as
   * "n + 1"), errors point at the string. */
  const loom_loc *loc_override;
  /* Undefined names in buffer shapes define new vars (match_buffer), int32
   * unless the body declares the name as `n = T.int64()`: TVM prints a
   * signature's shape variable as a string and declares its dtype so. */
  bool define_unknown_names;
  rd_vec declared; /* rd_declared, from the function body's top level */
} rd_ctx;

typedef struct rd_declared {
  const char *name;
  loom_dtype dtype;
} rd_declared;

/* ---- read_support.c: errors, arrays, scopes, call arguments -----------------
 * Allocation failures return LOOM_NOMEM without a message; the entry point
 * adds one. */
loom_status rd_error(rd_ctx *c, loom_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends a zeroed element of size elem; NULL when out of memory. */
void *rd_vec_push(rd_ctx *c, rd_vec *v, size_t elem);
loom_status rd_vec_push_ptr(rd_ctx *c, rd_vec *v, void *p);
#define RD_AT(v, T, i) (((T *)(v).items)[i])

int rd_scope_open(rd_ctx *c);
void rd_scope_close(rd_ctx *c, int mark);
loom_status rd_define_var(rd_ctx *c, const char *name, loom_var *v);
loom_status rd_define_buffer(rd_ctx *c, const char *name, loom_buffer *b);
const rd_sym *rd_lookup(const rd_ctx *c, const char *name);

/* The name of a T.* function: "block" for T.block, "axis.remap" for
 * T.axis.remap; NULL when e is not of that form. */
const char *rd_t_name(const py_expr *e, char *buf, size_t size);
bool rd_is_t(const py_expr *e, const char *name);
/* Whether e is one of the dotted names (a.b.c) names[0..n). */
bool rd_is_dotted(const py_expr *e, const char *const *names, int n);
/* The number of elements of a static array, for rd_is_dotted's n. */
#define N_OF(a) (int)(sizeof a / sizeof *a)

/* Binds a call's positional and keyword arguments to named parameters:
 * out[i] gets the argument for params[i] or NULL. Reports unknown and
 * repeated keywords and surplus positional arguments. */
loom_status rd_bind_args(rd_ctx *c, const py_expr *call, const char *what,
                         const char *const *params, int n_params,
                         py_expr **out);
/* Reports a missing required argument. */
loom_status rd_require(rd_ctx *c, const py_expr *call, const char *what,
                       py_expr *arg, const char *param);

/* "float32" -> dtype, with a message that says what would be right. */
loom_status rd_parse_dtype(rd_ctx *c, loom_loc loc, const char *s,
                           loom_dtype *out);
/* A dtype given as a string or as T.float32. */
loom_status rd_dtype_arg(rd_ctx *c, const py_expr *e, loom_dtype *out);
loom_status rd_str_arg(rd_ctx *c, const py_expr *e, const char *what,
                       const char **out);
/* The dtype a type annotation names: T.int32, T.int32(), T.let[T.int32],
 * T.handle, T.handle("float32", "shared") (whose pointee and scope go to
 * elem and scope). */
loom_status rd_annotation_dtype(rd_ctx *c, const py_expr *ann, loom_dtype *t,
                                loom_dtype *elem, const char **scope);
/* Attribute keys are kept in the classic spelling: "tirx.x" -> "tir.x". */
const char *rd_attr_key(rd_ctx *c, const char *key);
/* Sorts attributes by key, the order TVM prints them in. */
void rd_sort_attrs(loom_attr *attrs, int n);

/* ---- read_expr.c: expressions -------------------------------------------- */

/* A value while reading: an IR expression, or a Python literal that takes
 * its dtype from where it is used. */
typedef enum { RV_IR, RV_INT, RV_FLOAT, RV_BOOL } rd_val_kind;

typedef struct rd_val {
  rd_val_kind kind;
  int64_t i;    /* RV_INT, RV_BOOL */
  double f;     /* RV_FLOAT */
  loom_expr *e; /* RV_IR */
  loom_loc loc; /* where it was written, for messages */
} rd_val;

loom_status rd_eval(rd_ctx *c, const py_expr *e, rd_val *out);
/* A call of a T.* function in an expression (read_call.c). */
loom_status rd_eval_call(rd_ctx *c, const py_expr *e, rd_val *out);
/* Wraps an IR expression as a value; LOOM_NOMEM for NULL. */
loom_status rd_ir_val(loom_expr *e, loom_loc loc, rd_val *out);
bool rd_int_fits(loom_dtype t, int64_t v);
/* The operands of a binary operator as IR, a literal taking the dtype of
 * the other side, then made to agree (rd_match_types). */
loom_status rd_operands(rd_ctx *c, loom_loc loc, const char *op,
                        const rd_val *a, const rd_val *b, loom_expr **x,
                        loom_expr **y);
/* Makes two IR operands agree: a scalar meets a vector by broadcast; two
 * numbers of one family and different widths meet at the wider when one
 * is a constant. Anything else is an error naming both dtypes. */
loom_status rd_match_types(rd_ctx *c, loom_loc loc, const char *op,
                           loom_expr **pa, loom_expr **pb);
/* A binary node of kind k from two values, at least one of them IR. */
loom_status rd_ir_binary(rd_ctx *c, loom_loc loc, loom_expr_kind k,
                         const rd_val *a, const rd_val *b, rd_val *out);
/* Two branches (of T.Select, if_then_else, x if c else y) that must agree,
 * a literal taking the other's dtype. */
loom_status rd_branches(rd_ctx *c, loom_loc loc, const char *what,
                        const py_expr *t, const py_expr *f, loom_expr **x,
                        loom_expr **y);
loom_status rd_need_bool(rd_ctx *c, loom_loc loc, const char *what,
                         const loom_expr *e);
/* An IR expression of the given dtype for a literal, or the expression
 * itself (not cast) for IR values. want may be NULL: int32/float32/bool. */
loom_status rd_materialize(rd_ctx *c, const rd_val *v, const loom_dtype *want,
                           loom_expr **out);
/* rd_eval then rd_materialize. */
loom_status rd_expr(rd_ctx *c, const py_expr *e, const loom_dtype *want,
                    loom_expr **out);
/* An integer expression (indices, extents, shapes). */
loom_status rd_int_expr(rd_ctx *c, const py_expr *e, const loom_dtype *want,
                        loom_expr **out);
/* A bool expression (conditions, predicates). */
loom_status rd_bool_expr(rd_ctx *c, const py_expr *e, loom_expr **out);
/* Converts v to dtype t as TVM's cast does: constants fold, others get a
 * Cast node. */
loom_expr *rd_cast(rd_ctx *c, loom_dtype t, loom_expr *v);
/* Reads a T.func_attr / T.block_attr / annotations value. */
loom_status rd_value(rd_ctx *c, const py_expr *e, loom_value **out);
/* Reads a dict of attributes into attrs (loom_attr). */
loom_status rd_attr_dict(rd_ctx *c, const py_expr *e, const char *what,
                         rd_vec *attrs);
/* A compile-time integer: a literal or an INT constant. */
loom_status rd_const_int(rd_ctx *c, const py_expr *e, const char *what,
                         int64_t *out);
/* Parses an expression written inside a string ("(n + 31) // 32"). */
loom_status rd_parse_string_expr(rd_ctx *c, const py_expr *str,
                                 const py_expr **out);

/* ---- read_buffer.c: buffers and regions ---------------------------------- */
typedef enum {
  BUF_PARAM,       /* A: T.Buffer(...) */
  BUF_MATCH,       /* T.match_buffer */
  BUF_BLOCK_ALLOC, /* T.alloc_buffer (classic) / T.sblock_alloc_buffer */
  BUF_STMT_ALLOC,  /* T.alloc_buffer (tirx) */
  BUF_DECL,        /* T.decl_buffer / T.Buffer in a body */
} rd_buf_form;

/* Builds the buffer a call declares. For BUF_MATCH, the first argument (the
 * handle or the region) is left to the caller, who passes the source region
 * (or NULL) so that a missing shape can come from it. */
loom_status rd_buffer_decl(rd_ctx *c, const py_expr *call, rd_buf_form form,
                           const char *name, const loom_buffer_region *source,
                           loom_buffer **out);
/* A buffer named by e (a bare name). */
loom_status rd_buffer_ref(rd_ctx *c, const py_expr *e, loom_buffer **out);
/* A[...] as a region (slices allowed), for T.reads/T.writes/match_buffer. */
loom_status rd_region(rd_ctx *c, const py_expr *e, loom_buffer_region *out);
/* The indices of A[...] (no slices) with the rank checked. */
loom_status rd_indices(rd_ctx *c, const py_expr *sub, loom_buffer *b,
                       loom_expr ***out, int *n);

/* ---- read_stmt.c: statements --------------------------------------------- */
/* Builds a body (a statement list) as one statement: a SEQ, the single
 * statement, or T.evaluate(0) when empty. */
loom_status rd_body(rd_ctx *c, const py_block *body, loom_stmt **out);

/* ---- read_block.c: blocks ------------------------------------------------ */
loom_status rd_block_with(rd_ctx *c, const py_stmt *s, const py_expr *call,
                          const py_block *body, loom_stmt **out);
loom_status rd_init_with(rd_ctx *c, const py_stmt *s, const py_block *body);
/* Statements that only belong in a block header; *handled is false when s
 * is not one of them. */
loom_status rd_block_header_call(rd_ctx *c, const py_stmt *s,
                                 const py_expr *call, const char *name,
                                 bool *handled);
/* vi = T.axis.*(...) and vi, vj = T.axis.remap(...). */
loom_status rd_axis_assign(rd_ctx *c, const py_stmt *s, const py_expr *target,
                           const py_expr *call, const char *name);
/* A buffer allocated by the enclosing block, or at function level. */
loom_status rd_block_alloc(rd_ctx *c, loom_buffer *b);
loom_status rd_block_match(rd_ctx *c, const py_stmt *s, loom_buffer *b,
                           const loom_buffer_region *source);

/* ---- read_graph.c: graph functions ---------------------------------------- */

/* Whether s is an @R.function definition. */
bool rd_is_graph_def(const py_stmt *s);
/* Reads it as a graph calling the prim funcs of m (the module's, all read
 * before the graphs), and checks it (loom_ir_verify_graph). */
loom_status rd_read_graph(rd_ctx *c, const py_stmt *s, const loom_module *m,
                          loom_graph **out);

#endif
