/* TensorIR: dtypes, expressions, statements, buffers, blocks, prim funcs and
 * modules; structural equality, hashing and the well-formedness check.
 *
 * Nodes live in arenas and are immutable once shared: whoever creates a node
 * fills it in completely, then hands it out, and nobody writes to it again.
 * A transformation builds new nodes and points at every unchanged subtree.
 * Variables and buffers are compared by identity (pointer) inside one
 * program; structural equality maps them by the place that defines them. */
#ifndef LOOM_IR_H
#define LOOM_IR_H

#include "loom/base.h"
#include <stdbool.h>

/* ---- dtypes --------------------------------------------------------------- */

typedef enum {
  LOOM_DT_INT,
  LOOM_DT_UINT,
  LOOM_DT_FLOAT,
  LOOM_DT_BFLOAT,
  LOOM_DT_BOOL,   /* bits = 1 */
  LOOM_DT_HANDLE, /* bits = 64; an opaque pointer */
  LOOM_DT_VOID,   /* bits = 0; result of calls made for effect */
} loom_dtype_code;

typedef struct loom_dtype {
  uint8_t code;   /* loom_dtype_code */
  uint8_t bits;
  uint16_t lanes; /* 1 for scalars; float32x8 has 8 */
} loom_dtype;

#define LOOM_DTYPE(c, b, l) ((loom_dtype){(uint8_t)(c), (uint8_t)(b), (uint16_t)(l)})
#define LOOM_BOOL LOOM_DTYPE(LOOM_DT_BOOL, 1, 1)
#define LOOM_INT32 LOOM_DTYPE(LOOM_DT_INT, 32, 1)
#define LOOM_INT64 LOOM_DTYPE(LOOM_DT_INT, 64, 1)
#define LOOM_FLOAT32 LOOM_DTYPE(LOOM_DT_FLOAT, 32, 1)
#define LOOM_HANDLE LOOM_DTYPE(LOOM_DT_HANDLE, 64, 1)
#define LOOM_VOID LOOM_DTYPE(LOOM_DT_VOID, 0, 1)

/* Longest name loom_dtype_str can produce, with its NUL. */
#define LOOM_DTYPE_STRLEN 24

/* Parses "float32", "int8", "bool", "float32x8", "handle", "void". Returns 1 on
 * success, 0 for an unknown name. */
LOOM_API int loom_dtype_parse(const char *s, size_t n, loom_dtype *out);
/* Writes the canonical name ("float32x8") into buf. Returns buf. */
LOOM_API char *loom_dtype_str(loom_dtype t, char buf[LOOM_DTYPE_STRLEN]);
LOOM_API bool loom_dtype_eq(loom_dtype a, loom_dtype b);
LOOM_API bool loom_dtype_is_int(loom_dtype t);   /* int or uint */
LOOM_API bool loom_dtype_is_float(loom_dtype t); /* float or bfloat */
LOOM_API loom_dtype loom_dtype_with_lanes(loom_dtype t, int lanes);

/* ---- node kinds (tables in the .def files) ------------------------------- */

typedef enum {
#define X(name, spelling, cls) LOOM_EXPR_##name,
#include "loom/ir_exprs.def"
#undef X
  LOOM_EXPR_COUNT_
} loom_expr_kind;

typedef enum {
#define X(name, script, arity, rule) LOOM_OP_##name,
#include "loom/ir_intrinsics.def"
#undef X
  LOOM_OP_COUNT_
} loom_op;

typedef enum {
#define X(name, what) LOOM_STMT_##name,
#include "loom/ir_stmts.def"
#undef X
  LOOM_STMT_COUNT_
} loom_stmt_kind;

typedef enum {
  LOOM_RESULT_SAME,
  LOOM_RESULT_BOOL,
  LOOM_RESULT_ARG1,
  LOOM_RESULT_GIVEN,
} loom_result_rule;

typedef struct loom_op_info {
  const char *name; /* the script name after "T." */
  int arity;        /* -1: variadic */
  loom_result_rule result;
} loom_op_info;

extern LOOM_API const loom_op_info loom_op_table[LOOM_OP_COUNT_];
/* Finds an intrinsic by script name; returns -1 when there is none. */
LOOM_API int loom_op_lookup(const char *name, size_t n);
/* Is op one of the warp's wmma operations (fill, load, store, mma), which
 * the 32 lanes of a warp make together on fragment buffers? */
LOOM_API bool loom_op_is_wmma(loom_op op);
LOOM_API const char *loom_expr_kind_name(loom_expr_kind k);
LOOM_API const char *loom_stmt_kind_name(loom_stmt_kind k);

/* ---- nodes ---------------------------------------------------------------- */

typedef struct loom_var loom_var;
typedef struct loom_expr loom_expr;
typedef struct loom_stmt loom_stmt;
typedef struct loom_buffer loom_buffer;
typedef struct loom_block loom_block;
typedef struct loom_func loom_func;
typedef struct loom_module loom_module;
typedef struct loom_value loom_value;

/* A variable: loop variables, block iter vars, let variables, scalar
 * parameters, buffer data pointers, symbolic shapes. For handles, `elem` and
 * `scope` give the pointee (T.handle("float32", "global")); elem.code is
 * LOOM_DT_VOID when the pointee is unknown. */
struct loom_var {
  const char *name;
  loom_dtype dtype;
  loom_dtype elem;
  const char *scope; /* NULL: none given */
};

struct loom_expr {
  loom_expr_kind kind;
  loom_dtype dtype;
  union {
    int64_t int_value; /* INT (bool too); uint64 values are stored bitwise */
    double float_value;
    const char *str;
    loom_var *var;
    struct { loom_expr *a, *b; } bin;           /* BINARY class */
    struct { loom_expr *a; } unary;             /* NOT, CAST */
    struct { loom_expr *cond, *t, *f; } select;
    struct { loom_buffer *buffer; loom_expr **indices; int n_indices; } load;
    struct { loom_op op; loom_expr **args; int n_args; } call;
    struct { loom_var *var; loom_expr *value, *body; } let;
    struct { loom_expr *base, *stride; int lanes; } ramp;
    struct { loom_expr *value; int lanes; } broadcast;
  } u;
};

/* Annotation and attribute values: what TVM allows in T.func_attr,
 * T.block_attr and loop annotations. Numbers and bools are constant
 * expressions (EXPR). */
typedef enum {
  LOOM_VALUE_NONE,
  LOOM_VALUE_EXPR,
  LOOM_VALUE_STR,
  LOOM_VALUE_LIST,
  LOOM_VALUE_DICT,
} loom_value_kind;

struct loom_value {
  loom_value_kind kind;
  loom_expr *expr;    /* EXPR */
  const char *str;    /* STR */
  loom_value **items; /* LIST items; DICT values */
  const char **keys;  /* DICT keys, n_items of them */
  int n_items;
};

typedef struct loom_attr {
  const char *key;
  loom_value *value;
} loom_attr;

typedef struct loom_range {
  loom_expr *min, *extent;
} loom_range;

/* data_alignment and offset_factor of 0 mean TVM's defaults (64 and 1). */
struct loom_buffer {
  const char *name;
  loom_var *data;        /* the pointer variable (A.data) */
  loom_dtype dtype;
  loom_expr **shape;
  int ndim;
  loom_expr **strides;   /* NULL or ndim of them */
  int n_strides;
  loom_expr *elem_offset; /* NULL: 0; a fresh var when offset_factor is set */
  const char *scope;      /* "global", "shared", "local", ... never NULL */
  int align;
  int offset_factor;
  int *axis_separators;
  int n_axis_separators;
  bool is_auto_broadcast; /* buffer_type="auto" */
};

typedef struct loom_buffer_region {
  loom_buffer *buffer;
  loom_range *ranges; /* buffer->ndim of them */
  int n_ranges;
} loom_buffer_region;

typedef struct loom_match_buffer {
  loom_buffer *buffer;       /* the view the block body uses */
  loom_buffer_region source; /* the region of an outer buffer it views */
} loom_match_buffer;

typedef enum {
  LOOM_ITER_SPATIAL, /* "S" */
  LOOM_ITER_REDUCE,  /* "R" */
  LOOM_ITER_SCAN,    /* ordered */
  LOOM_ITER_OPAQUE,
} loom_iter_kind;

typedef struct loom_iter_var {
  loom_var *var;
  loom_range dom;
  loom_iter_kind kind;
} loom_iter_var;

struct loom_block {
  const char *name;
  loom_iter_var *iter_vars;
  int n_iter_vars;
  loom_buffer_region *reads;
  int n_reads;
  loom_buffer_region *writes;
  int n_writes;
  loom_stmt *init; /* NULL: no T.init() */
  loom_stmt *body;
  loom_buffer **alloc_buffers;
  int n_alloc_buffers;
  loom_match_buffer *match_buffers;
  int n_match_buffers;
  loom_attr *annotations;
  int n_annotations;
  loom_loc loc;
};

typedef enum {
  LOOM_FOR_SERIAL,
  LOOM_FOR_PARALLEL,
  LOOM_FOR_VECTORIZED,
  LOOM_FOR_UNROLLED,
  LOOM_FOR_THREAD_BINDING,
} loom_for_kind;

struct loom_stmt {
  loom_stmt_kind kind;
  loom_loc loc; /* where the script wrote it; line 0 when made by a pass */
  union {
    struct {
      loom_var *var;
      loom_expr *min, *extent;
      loom_for_kind kind;
      const char *thread; /* "threadIdx.x" for THREAD_BINDING, else NULL */
      loom_attr *annotations;
      int n_annotations;
      loom_stmt *body;
    } loop;
    struct {
      loom_expr **iter_values; /* one per block iter var */
      int n_iter_values;
      loom_expr *predicate;    /* NULL: true */
      loom_block *block;
    } realize;
    struct {
      loom_buffer *buffer;
      loom_expr *value;
      loom_expr **indices;
      int n_indices;
    } store;
    struct { loom_expr *cond; loom_stmt *then_case, *else_case; } if_;
    struct { loom_stmt **stmts; int n_stmts; } seq;
    struct { loom_expr *value; } evaluate;
    struct { loom_var *var; loom_expr *value; loom_stmt *body; } let;
    struct { loom_buffer *buffer; loom_stmt *body; } alloc; /* ALLOCATE, DECL_BUFFER */
    struct {
      loom_value *node; /* what the attribute is about: an expr or a string */
      const char *key;
      loom_expr *value;
      loom_stmt *body;
    } attr;
    struct { loom_expr *cond, *message; loom_stmt *body; } assert_;
  } u;
};

/* A parameter is a scalar variable, or a handle bound to a buffer
 * (`A: T.Buffer(...)`, or `a: T.handle` with `A = T.match_buffer(a, ...)`). */
typedef struct loom_param {
  loom_var *var;
  loom_buffer *buffer; /* NULL for a scalar parameter */
} loom_param;

struct loom_func {
  const char *name;
  loom_param *params;
  int n_params;
  loom_attr *attrs;   /* T.func_attr; includes "global_symbol" unless private */
  int n_attrs;
  loom_stmt *body;    /* a root BLOCK_REALIZE when the body holds blocks */
  loom_dtype ret_type;
  loom_loc loc;
};

/* ---- graph functions ---------------------------------------------------------
 * A network: tensors flowing through calls of the module's prim funcs, as
 * TVM prints a Relax function once its operators are TensorIR
 * (`@R.function def main(...)`, each step `lv = R.call_tir(cls.f, (x, w),
 * out_sinfo=R.Tensor((1, 128), dtype="float32"))`). Shapes are constants. A
 * prim func called this way takes the call's arguments and then its result,
 * in that order (destination passing). */
typedef struct loom_tensor_info {
  loom_dtype dtype;
  int64_t *shape;
  int ndim;
} loom_tensor_info;

typedef struct loom_graph_value {
  const char *name;
  loom_tensor_info info;
} loom_graph_value;

typedef struct loom_graph_call {
  const char *func; /* the prim func of the module called */
  int *args;        /* values, in order */
  int n_args;
  int out;          /* the value it defines */
  loom_loc loc;     /* where the script wrote it; line 0 when made by a pass */
} loom_graph_call;

typedef struct loom_graph {
  const char *name;
  /* The parameters first, then the value call k defines at n_params + k. */
  loom_graph_value *values;
  int n_values;
  int n_params;
  loom_graph_call *calls;   /* in order: each reads values defined before it */
  int n_calls;
  int *outputs;             /* values returned (several: a tuple) */
  int n_outputs;
  loom_loc loc;
} loom_graph;

struct loom_module {
  loom_func **funcs;
  int n_funcs;
  loom_graph **graphs; /* graph functions, printed after the prim funcs */
  int n_graphs;
  loom_attr *attrs;
  int n_attrs;
  bool is_ir_module;  /* written as @I.ir_module rather than a lone prim_func */
};

/* ---- constructors ----------------------------------------------------------
 * Each returns a new node in arena a, or NULL when the allocation fails or an
 * operand is NULL. Operand dtypes are the caller's business: binary nodes take
 * the dtype of `a` (bool for comparisons and logic); the verifier checks. */
LOOM_API loom_var *loom_ir_var(loom_arena *a, const char *name, loom_dtype t);
LOOM_API loom_expr *loom_ir_int(loom_arena *a, loom_dtype t, int64_t v);
LOOM_API loom_expr *loom_ir_float(loom_arena *a, loom_dtype t, double v);
LOOM_API loom_expr *loom_ir_str(loom_arena *a, const char *s);
LOOM_API loom_expr *loom_ir_ref(loom_arena *a, loom_var *v);
LOOM_API loom_expr *loom_ir_binary(loom_arena *a, loom_expr_kind k,
                                   loom_expr *x, loom_expr *y);
LOOM_API loom_expr *loom_ir_not(loom_arena *a, loom_expr *x);
LOOM_API loom_expr *loom_ir_cast(loom_arena *a, loom_dtype t, loom_expr *x);
LOOM_API loom_expr *loom_ir_select(loom_arena *a, loom_expr *c, loom_expr *t,
                                   loom_expr *f);
LOOM_API loom_expr *loom_ir_load(loom_arena *a, loom_buffer *b,
                                 loom_expr **indices, int n);
LOOM_API loom_expr *loom_ir_call(loom_arena *a, loom_dtype t, loom_op op,
                                 loom_expr **args, int n);
LOOM_API loom_expr *loom_ir_let(loom_arena *a, loom_var *v, loom_expr *value,
                                loom_expr *body);
LOOM_API loom_expr *loom_ir_ramp(loom_arena *a, loom_expr *base,
                                 loom_expr *stride, int lanes);
LOOM_API loom_expr *loom_ir_broadcast(loom_arena *a, loom_expr *value,
                                      int lanes);

/* Zeroed nodes for the caller to fill before sharing. */
LOOM_API loom_stmt *loom_ir_stmt(loom_arena *a, loom_stmt_kind k, loom_loc loc);
LOOM_API loom_block *loom_ir_block(loom_arena *a, const char *name);
/* A buffer with a data var named after it, scope "global", no strides. */
LOOM_API loom_buffer *loom_ir_buffer(loom_arena *a, const char *name,
                                     loom_dtype t, loom_expr **shape, int ndim);
LOOM_API loom_func *loom_ir_func(loom_arena *a, const char *name);
LOOM_API loom_module *loom_ir_module(loom_arena *a);
LOOM_API loom_value *loom_ir_value_expr(loom_arena *a, loom_expr *e);
LOOM_API loom_value *loom_ir_value_str(loom_arena *a, const char *s);

/* Finds an attribute by key; NULL when absent. */
LOOM_API const loom_value *loom_ir_attr_get(const loom_attr *attrs, int n,
                                            const char *key);
/* Does f list parameter i in its "layout_free_buffers" (a buffer that holds
 * the same data on every call: a model's weights)? */
LOOM_API bool loom_ir_func_is_layout_free(const loom_func *f, int i);
/* True when e is an INT constant; stores its value in *v when v is not NULL. */
LOOM_API bool loom_ir_is_const_int(const loom_expr *e, int64_t *v);
LOOM_API const loom_func *loom_ir_module_find(const loom_module *m,
                                              const char *name);
/* A shallow copy of f named "main" without its global_symbol attribute: the
 * form in which functions that differ only in name hash and compare equal
 * (tuning workloads). NULL when out of memory. */
LOOM_API loom_func *loom_ir_func_anonymous(loom_arena *a, const loom_func *f);

/* The same tree, variables and buffers compared by identity (not modulo
 * renaming); false also for trees nested deeper than 800 levels. */
LOOM_API bool loom_ir_same_expr(const loom_expr *a, const loom_expr *b);

/* ---- visiting and rewriting (src/ir/visit.c, src/ir/mutate.c) -----------
 * One walk over statements and expressions for every pass that collects,
 * finds, counts or rebuilds, so that a new statement kind is taught to the
 * walk once (docs/ir.md). Children come in one fixed order, depth first:
 *
 *   FOR            min, extent, body
 *   BLOCK_REALIZE  iter_values, predicate, then the block: the domain (min,
 *                  extent) of each iter var, reads, writes (each range's
 *                  min and extent), alloc_buffers, match_buffers (the
 *                  source region's ranges, then the view), init, body
 *   STORE          value, indices
 *   IF             cond, then_case, else_case
 *   SEQ            stmts, in order
 *   EVALUATE       value
 *   LET            value, body
 *   ALLOCATE,
 *   DECL_BUFFER    buffer, body
 *   ATTR           value, body (not the node it is about, as in TVM)
 *   ASSERT         cond, message, body
 *
 * and an expression's operands: a, b of a binary; a of NOT and CAST; cond,
 * t, f of a select; a load's indices; a call's args; value, body of a let;
 * base, stride of a ramp; value of a broadcast. Absent children (no
 * predicate, init or else branch) are passed over. A buffer is a definition
 * shared, by identity, with every access to it: the buffers a statement
 * defines go to the visitor's buffer callback, and neither walk goes into a
 * buffer's shape, strides or offset (an allocation's extents), which a
 * caller that wants them visits itself; the mutator keeps buffers as they
 * are. Loop and block annotations are constants and are not walked. The
 * walks recurse: C stack depth is the tree's nesting depth. */

typedef enum {
  LOOM_VISIT_GO,   /* go on into the node's children */
  LOOM_VISIT_SKIP, /* pass over the node's children */
  LOOM_VISIT_STOP, /* end the whole walk */
} loom_visit;

/* A read-only walk. Each callback may be NULL. pre is called on a node
 * before its children, post after them (also when pre skipped them, so a
 * scope pushed in pre can be popped in post); post's SKIP is read as GO.
 * buffer is called on each buffer a statement defines, where the order
 * above places it (SKIP is read as GO). When expr_pre and expr_post are
 * both NULL, expressions are not walked at all. */
typedef struct loom_ir_visitor {
  loom_visit (*stmt_pre)(void *ctx, loom_stmt *s);
  loom_visit (*stmt_post)(void *ctx, loom_stmt *s);
  loom_visit (*expr_pre)(void *ctx, loom_expr *e);
  loom_visit (*expr_post)(void *ctx, loom_expr *e);
  loom_visit (*buffer)(void *ctx, loom_buffer *b);
  void *ctx;
} loom_ir_visitor;

/* Walk s (e) and everything under it; s may be NULL. Returns false when a
 * callback stopped the walk, true when it ran to the end. */
LOOM_API bool loom_ir_visit_stmt(const loom_ir_visitor *v, const loom_stmt *s);
LOOM_API bool loom_ir_visit_expr(const loom_ir_visitor *v, const loom_expr *e);

/* Called on each node of an expression, outermost first: returns the node's
 * replacement (used as is, not visited further), or NULL to go on into the
 * node's operands. */
typedef loom_expr *(*loom_ir_expr_hook)(void *ctx, loom_expr *e);

/* A rebuilding walk, in the order above. Every unchanged subtree is shared
 * (a tree in which nothing changes comes back as itself); changed nodes are
 * new nodes in the arena, never written in place. Each part may be NULL.
 *
 * - vars, values: each use of vars[i] becomes values[i] (not visited
 *   further); checked before expr_pre.
 * - expr_pre, stmt_pre: the node's replacement (used as is, not visited
 *   further), or NULL to go on into the node's children.
 * - expr_post, stmt_post: called on each node that pre did not replace,
 *   after its children, with the node as rebuilt (the original when nothing
 *   under it changed); return what to use in its place (the node itself to
 *   keep it), or NULL when out of memory.
 * - block_post: the same for a block, with the original block too.
 * - index: called on each expression of integer index arithmetic or a
 *   condition (a loop's min and extent, block bindings and predicate, iter
 *   var domains, region bounds, store and load indices, if and assertion
 *   conditions) after it was rebuilt, with the original; returns what to use
 *   (e.g. e simplified when e != old), or NULL when out of memory.
 * A pre callback that fails has no NULL to return: it records the failure
 * in its ctx, returns the node itself, and its caller checks ctx. */
typedef struct loom_ir_mutator {
  const loom_var *const *vars;
  loom_expr *const *values;
  int n_vars;
  loom_ir_expr_hook expr_pre;
  loom_expr *(*expr_post)(void *ctx, loom_expr *e);
  loom_expr *(*index)(void *ctx, const loom_expr *old, loom_expr *e);
  loom_stmt *(*stmt_pre)(void *ctx, loom_stmt *s);
  loom_stmt *(*stmt_post)(void *ctx, loom_stmt *s);
  loom_block *(*block_post)(void *ctx, const loom_block *old, loom_block *b);
  void *ctx;
} loom_ir_mutator;

/* s (e) rebuilt by m; NULL when s (e) is NULL or memory runs out. */
LOOM_API loom_stmt *loom_ir_mutate_stmt(loom_arena *a,
                                        const loom_ir_mutator *m,
                                        loom_stmt *s);
LOOM_API loom_expr *loom_ir_mutate_expr(loom_arena *a,
                                        const loom_ir_mutator *m,
                                        loom_expr *e);

/* Rebuilds e with hook's replacements, sharing every unchanged subtree (e
 * itself when nothing changes). NULL when out of memory. */
LOOM_API loom_expr *loom_ir_rewrite_expr(loom_arena *a, loom_expr *e,
                                         loom_ir_expr_hook hook, void *ctx);
/* Replaces each use of vars[i] by values[i]. */
LOOM_API loom_expr *loom_ir_substitute_expr(loom_arena *a, loom_expr *e,
                                            loom_var *const *vars,
                                            loom_expr *const *values, int n);
LOOM_API loom_stmt *loom_ir_substitute_stmt(loom_arena *a, loom_stmt *s,
                                            loom_var *const *vars,
                                            loom_expr *const *values, int n);
/* Does e (s, anywhere the walks above reach) read variable v? */
LOOM_API bool loom_ir_expr_uses(const loom_expr *e, const loom_var *v);
LOOM_API bool loom_ir_stmt_uses(const loom_stmt *s, const loom_var *v);
/* Does s hold a statement of kind k (s itself included)? */
LOOM_API bool loom_ir_stmt_has(const loom_stmt *s, loom_stmt_kind k);
/* Does s make a wmma call (loom_op_is_wmma)? */
LOOM_API bool loom_ir_stmt_has_wmma(const loom_stmt *s);
/* The loads of the buffer whose data pointer is data under s (a use of the
 * pointer itself counts as a load: a call may read through it) and the
 * stores to it, whatever buffer views the same pointer. */
typedef struct loom_ir_uses {
  int loads, stores;
} loom_ir_uses;
LOOM_API loom_ir_uses loom_ir_buffer_uses(const loom_stmt *s, const loom_var *data);

/* ---- structural equality and hashing ------------------------------------- */

/* Where two programs first differ: a path of field names from the function
 * down ("main.body.block(C).body.seq[1].store.value.b"), a description, and
 * the script locations of the two nodes when known. */
typedef struct loom_ir_diff {
  char *path;  /* heap; free with loom_ir_diff_free */
  char *what;  /* heap */
  loom_loc loc_a, loc_b;
} loom_ir_diff;

LOOM_API void loom_ir_diff_free(loom_ir_diff *d);

/* Equal up to consistent renaming of variables and buffers (alpha
 * equivalence): each definition site maps the two definitions to each other,
 * and every later use must agree with that map. Names are ignored, except
 * function names in a module and block names (which schedules refer to).
 * diff may be NULL. */
LOOM_API bool loom_ir_equal_module(const loom_module *a, const loom_module *b,
                                   loom_ir_diff *diff);
LOOM_API bool loom_ir_equal_func(const loom_func *a, const loom_func *b,
                                 loom_ir_diff *diff);
LOOM_API bool loom_ir_equal_expr(const loom_expr *a, const loom_expr *b);

/* A 64-bit hash consistent with loom_ir_equal_*: equal programs hash equal.
 * It depends on the IR alone (not on addresses, build or platform), so a
 * tuning database moves between machines. */
LOOM_API uint64_t loom_ir_hash_func(const loom_func *f);
LOOM_API uint64_t loom_ir_hash_module(const loom_module *m);
LOOM_API uint64_t loom_ir_hash_expr(const loom_expr *e);

/* ---- block access regions (src/ir/regions.c) ------------------------------ */

/* Fills in the reads (when want_reads) and the writes (when want_writes) of
 * block b the way TVM's script parser completes a block written without
 * T.reads / T.writes: every access to a buffer in `outer` (the buffers
 * visible outside the block) by the block's init and body, and by nested
 * blocks through their regions with their iter vars replaced by their
 * bindings, with indices that depend on loops inside the block relaxed over
 * the ranges those loops cover (interval arithmetic on affine forms; an
 * index that cannot be bounded covers the whole dimension). One region per
 * buffer, the hull of its accesses (T.min / T.max of bounds that do not
 * compare, as TVM writes them), in order of first access; accesses
 * through a match_buffer view count on the viewed region. A buffer that a
 * block with an init writes is not among its reads. Fails, with d located
 * at the block, when the body uses a visible buffer's data pointer directly
 * (other than through tvm_access_ptr), where no region can be inferred.
 * b must not be shared yet. */
LOOM_API loom_status loom_ir_infer_block_regions(loom_arena *a, loom_block *b,
                                                 bool want_reads,
                                                 bool want_writes,
                                                 loom_buffer *const *outer,
                                                 int n_outer, loom_diag *d);

/* The extent of the half-open range [lo, hi): hi itself when lo is 0; e
 * when hi is lo + e (so that a range printed as lo:lo + e reads back to the
 * same extent); else hi - lo: a constant when the two are affine forms
 * that differ by a constant, otherwise simplified as an affine form. NULL
 * when out of memory. */
LOOM_API loom_expr *loom_ir_range_extent(loom_arena *a, loom_expr *lo,
                                         loom_expr *hi);

/* ---- storage scopes (src/ir/scope.c) ------------------------------------------
 * Where a buffer lives, in TVM's storage ranks: global 0, shared 1, warp 2,
 * local 3, then the fragment and special scopes. One table says which texts
 * are scopes and how they rank. */
typedef enum {
  LOOM_SCOPE_GLOBAL,  /* "global", and no scope given */
  LOOM_SCOPE_SHARED,  /* "shared", "shared.dyn" */
  LOOM_SCOPE_WARP,    /* "warp" */
  LOOM_SCOPE_LOCAL,   /* "local" */
  LOOM_SCOPE_FRAGMENT, /* "wmma.matrix_a", "mma.*", "m.*", "texture", ... */
  LOOM_SCOPE_NONE,    /* not a storage scope */
} loom_scope_kind;

/* The kind of a scope's text (NULL and "" are global). A tag after a dot
 * ("shared.dyn", "global.texture") keeps the scope's kind. */
LOOM_API loom_scope_kind loom_ir_scope_kind(const char *scope);

/* A wmma fragment's part in a product D = A B + C, from its scope
 * ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"; NONE for any
 * other), and its rows and columns in an m x n x k product: A m x k, B
 * k x n, the accumulator m x n. */
typedef enum { LOOM_WMMA_NONE, LOOM_WMMA_A, LOOM_WMMA_B, LOOM_WMMA_ACC } loom_wmma_role;
LOOM_API loom_wmma_role loom_ir_scope_wmma(const char *scope);
LOOM_API void loom_ir_wmma_tile(loom_wmma_role r, int64_t m, int64_t n, int64_t k,
                                int64_t *rows, int64_t *cols);

/* Whether the threads of a thread-bound loop (its thread tag: "blockIdx.x",
 * "threadIdx.y", "vthread", ...) outside a computation share its buffer of
 * this scope, so that what one thread computes is what all of them need
 * (TVM's CanRelaxStorageUnderThread): shared memory under threadIdx and
 * vthread, warp memory under threadIdx.x. Global memory is never relaxed
 * so: each thread computes its own part; local memory is the thread's. */
LOOM_API bool loom_ir_scope_is_shared_by(const char *scope, const char *thread);

/* Whether a buffer of this scope may be allocated inside a loop bound to the
 * thread: not global memory (it lives outside every kernel, above blockIdx,
 * where TVM places it), nor memory the loop's threads share (above). */
LOOM_API bool loom_ir_scope_fits_inside(const char *scope, const char *thread);

/* ---- well-formedness ------------------------------------------------------- */

/* Checks the invariants every pass may rely on: every variable and buffer is
 * defined before use and defined once; index counts match buffer ranks;
 * operand dtypes agree; block bindings match iter vars; extents of loops and
 * shapes are integers. The first violation goes into d, located at the
 * offending statement's script location when it has one. */
LOOM_API loom_status loom_ir_verify_func(const loom_func *f, loom_diag *d);
LOOM_API loom_status loom_ir_verify_module(const loom_module *m, loom_diag *d);

/* ---- graph functions (src/ir/graph.c) -------------------------------------- */

LOOM_API const loom_graph *loom_ir_module_find_graph(const loom_module *m,
                                                     const char *name);
/* Each call names a prim func of m that takes its arguments and then its
 * result, buffers of the values' dtypes and constant shapes; values are
 * defined before they are read; something is returned. */
LOOM_API loom_status loom_ir_verify_graph(const loom_module *m, const loom_graph *g,
                                          loom_diag *d);
/* The same graph: values, calls and outputs in the same order, with the same
 * shapes and callees (value names aside). why gets the first difference. */
LOOM_API bool loom_ir_equal_graph(const loom_graph *a, const loom_graph *b, char *why,
                                  size_t n);
LOOM_API bool loom_ir_tensor_info_equal(const loom_tensor_info *a,
                                        const loom_tensor_info *b);
/* "float32(1, 128)", for messages. */
LOOM_API void loom_ir_tensor_info_str(const loom_tensor_info *t, char *buf, size_t n);

#endif
