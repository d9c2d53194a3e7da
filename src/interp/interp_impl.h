/* Inside the interpreter: runtime values (a dtype plus up to 64 lanes) and
 * the numeric rules shared by the evaluator and the host arrays. */
#ifndef LOOM_INTERP_IMPL_H
#define LOOM_INTERP_IMPL_H

#include "loom/interp.h"

#include <math.h>
#include <string.h>

/* One lane. Integers and bools live in u as the two's-complement bit pattern
 * already wrapped to the dtype's width (signed types sign-extended), floats in
 * f already rounded to the dtype's precision. */
typedef union ilane {
  uint64_t u;
  double f;
} ilane;

typedef struct ival {
  loom_dtype t; /* t.lanes lanes are valid */
  ilane l[LOOM_INTERP_MAX_LANES];
} ival;

static inline int64_t lane_i64(ilane x) { return (int64_t)x.u; }

/* IEEE-style binary format with mbits mantissa and ebits exponent bits, by
 * hand: encodes with round to nearest even, overflow to inf, gradual
 * underflow, and decodes (every NaN to NAN). float16 and bfloat16 use it;
 * float32 uses C's conversions, which give the same bits. */
uint64_t encode_float(double x, int mbits, int ebits);
double decode_float(uint64_t bits, int mbits, int ebits);
/* Bytes one element of t takes in memory (bool: 1). */
int elem_bytes(loom_dtype t);
/* Wraps an integer to t's width or rounds a double to t's precision. */
ilane norm_int(loom_dtype t, uint64_t u);
ilane norm_float(loom_dtype t, double f);
/* The lane as a double (ints: signed or unsigned by dtype). */
double lane_as_double(loom_dtype t, ilane x);
bool lane_is_true(loom_dtype t, ilane x);
/* Converts a lane of type from to type to, as T.Cast does. */
ilane cast_lane(loom_dtype from, loom_dtype to, ilane x);
/* Raw storage bits of a lane and back (for memory and T.reinterpret). */
uint64_t lane_to_bits(loom_dtype t, ilane x);
ilane lane_from_bits(loom_dtype t, uint64_t bits);
/* Reads or writes element i of a byte array holding dtype t. */
ilane load_elem(loom_dtype t, const void *data, int64_t i);
void store_elem(loom_dtype t, void *data, int64_t i, ilane x);

/* The binary op k on one lane pair of operand type t (result type is bool for
 * comparisons and logic). Returns 0 and sets *what on integer division by
 * zero. */
int binary_lane(loom_expr_kind k, loom_dtype t, ilane a, ilane b, ilane *out,
                const char **what);
/* A math or bit intrinsic on one lane; args have dtype t. Returns 0 when op is
 * not one of them. */
int intrinsic_lane(loom_op op, loom_dtype t, const ilane *args, ilane *out);

/* ---- compiled programs ---------------------------------------------------
 * A function is compiled once per run into a tree of nodes, each holding the
 * C function that evaluates it: variables resolved to frame slots, buffers to
 * view slots, and one-lane values of a type known before the run taking a
 * scalar path. Every node keeps the general path too, which works on values
 * carrying their dtype at run time exactly as the IR spells them. */

/* Nesting of statements and expressions allowed before the run is refused;
 * the reader allows 200 levels of blocks and chains of 2,000 terms. */
#define INTERP_MAX_DEPTH 3000

/* A buffer as the running code sees it: storage plus a strided layout.
 * Element (i0, i1, ...) is data[offset + sum(ik * strides[k])], in units of
 * the buffer's dtype; every access stays within elements [0, max_flat]. */
typedef struct view {
  const loom_buffer *buf;
  unsigned char *data;
  int64_t nbytes, max_flat;
  int64_t offset;
  int ndim;
  int64_t *shape, *strides; /* owned by the site that made the view */
  bool owns_data;
} view;

/* Variables whose value is one lane of a type known before the run live in
 * sv, packed; the others, in vars with their runtime type. Both are indexed
 * by slot. */
typedef struct frame {
  ilane *sv;
  ival *vars;
  view *views; /* one per view slot */
  const loom_loc *loc; /* the statement being run, for messages */
  loom_diag *d;
} frame;

typedef struct enode enode;
typedef loom_status (*scalar_fn)(const enode *n, frame *fr, ilane *out);
typedef loom_status (*value_fn)(const enode *n, frame *fr, ival *out);

/* An expression. scalar is set when the value always is one lane of type t;
 * then eval just calls it. */
struct enode {
  value_fn eval;
  scalar_fn scalar;
  loom_dtype t, op_t; /* result type; operand type of binary ops */
  const loom_expr *e; /* for messages */
  enode **kids;
  int n_kids;
  int slot;  /* variable slot, or view slot of a load */
  int *index_slots; /* a load whose indices are all scalar variables: theirs */
  ilane k;   /* constant */
  /* Nodes computed inline rather than called: variables, constants, loads
   * at variable indices, int32/int64 sums of two variables or constants
   * (index arithmetic such as h + rh). */
  enum { LEAF_NONE, LEAF_VAR, LEAF_CONST, LEAF_LOAD, LEAF_ADD } leaf;
  const char *error; /* an error node's message */
};

/* Loads and stores element i of an array of dtype t, directly for float32,
 * float64, int32 and int64 on little-endian hosts. */
__attribute__((always_inline)) static inline ilane
load_one(loom_dtype t, const unsigned char *data, int64_t i) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  ilane r;
  if (t.code == LOOM_DT_FLOAT && t.bits == 32) {
    float f;
    memcpy(&f, data + i * 4, 4);
    r.f = f != f ? NAN : f;
    return r;
  }
  if (t.code == LOOM_DT_FLOAT && t.bits == 64) {
    memcpy(&r.f, data + i * 8, 8);
    return r;
  }
  if (t.code == LOOM_DT_INT && t.bits == 32) {
    int32_t v;
    memcpy(&v, data + i * 4, 4);
    r.u = (uint64_t)(int64_t)v;
    return r;
  }
  if (t.code == LOOM_DT_INT && t.bits == 64) {
    memcpy(&r.u, data + i * 8, 8);
    return r;
  }
#endif
  return load_elem(t, data, i);
}

static inline void store_one(loom_dtype t, unsigned char *data, int64_t i, ilane x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (t.code == LOOM_DT_FLOAT && t.bits == 32 && x.f == x.f) {
    float f = (float)x.f;
    memcpy(data + i * 4, &f, 4);
    return;
  }
  if ((t.code == LOOM_DT_FLOAT || t.code == LOOM_DT_INT) && t.bits == 64) {
    memcpy(data + i * 8, &x.u, 8);
    return;
  }
  if (t.code == LOOM_DT_INT && t.bits == 32) {
    uint32_t u = (uint32_t)x.u;
    memcpy(data + i * 4, &u, 4);
    return;
  }
#endif
  store_elem(t, data, i, x);
}

/* The error of a scalar access at kids[0..m) into v, found out of bounds:
 * evaluates the indices again and reports what flat_index says. */
loom_status access_error(const enode *const *kids, int m, frame *fr,
                         const view *v, bool is_store);

/* A load whose indices are scalar variables: the innermost loops' case.
 * Each index is checked as it is read; an unsigned compare covers both
 * bounds, as extents are never negative. */
__attribute__((always_inline)) static inline loom_status
load_vars(const enode *n, frame *fr, ilane *out) {
  const view *v = &fr->views[n->slot];
  uint64_t uf = (uint64_t)v->offset;
  if (n->n_kids == 2) { /* the commonest case, without the loop */
    uint64_t i = fr->sv[n->index_slots[0]].u, j = fr->sv[n->index_slots[1]].u;
    int64_t f = (int64_t)(uf + i * (uint64_t)v->strides[0] +
                          j * (uint64_t)v->strides[1]);
    if (i >= (uint64_t)v->shape[0] || j >= (uint64_t)v->shape[1] || f < 0 ||
        f > v->max_flat)
      return access_error((const enode *const *)n->kids, 2, fr, v, false);
    *out = load_one(n->t, v->data, f);
    return LOOM_OK;
  }
  for (int k = 0; k < n->n_kids; k++) {
    uint64_t i = fr->sv[n->index_slots[k]].u;
    if (i >= (uint64_t)v->shape[k])
      return access_error((const enode *const *)n->kids, n->n_kids, fr, v,
                          false);
    uf += i * (uint64_t)v->strides[k];
  }
  int64_t f = (int64_t)uf;
  if (f < 0 || f > v->max_flat)
    return access_error((const enode *const *)n->kids, n->n_kids, fr, v, false);
  *out = load_one(n->t, v->data, f);
  return LOOM_OK;
}

/* The value of a variable or constant node. */
static inline uint64_t leaf_bits(const enode *n, const frame *fr) {
  return n->leaf == LEAF_VAR ? fr->sv[n->slot].u : n->k.u;
}

/* The value of scalar node n: leaves are computed in place, which saves a
 * call per variable, constant, load or index sum in the innermost loops. */
__attribute__((always_inline)) static inline loom_status
get_scalar(const enode *n, frame *fr, ilane *out) {
  if (n->leaf == LEAF_VAR) {
    *out = fr->sv[n->slot];
    return LOOM_OK;
  }
  if (n->leaf == LEAF_LOAD)
    return load_vars(n, fr, out);
  if (n->leaf == LEAF_CONST) {
    *out = n->k;
    return LOOM_OK;
  }
  if (n->leaf == LEAF_ADD) {
    uint64_t u = leaf_bits(n->kids[0], fr) + leaf_bits(n->kids[1], fr);
    out->u = n->op_t.bits == 32 ? ((u & 0xffffffffu) ^ 0x80000000u) - 0x80000000u
                                : u;
    return LOOM_OK;
  }
  return n->scalar(n, fr, out);
}

typedef struct snode snode;
typedef loom_status (*exec_fn)(const snode *n, frame *fr);
typedef struct wmma_call wmma_call; /* wmma.c's */

/* Where a view's storage comes from. */
typedef enum {
  SITE_PARAM, /* a parameter's array, given by the caller */
  SITE_ALLOC, /* fresh zeroed storage */
  SITE_ALIAS, /* another view's storage (T.Buffer(..., data=Y.data)) */
  SITE_MATCH, /* a region of another view (T.match_buffer) */
} site_kind;

/* How a view is laid out when it is made: shape, strides (a stride or
 * offset that is a variable nobody defined takes the default and binds the
 * variable to it), and where the storage comes from. */
typedef struct layout {
  site_kind kind;
  const loom_buffer *buf;
  int slot;           /* view slot it fills */
  enode **shape;      /* ndim */
  enode **stride;     /* ndim, NULL entries: default; NULL: all default */
  int *stride_bind;   /* variable slot to bind to the default, or -1 */
  enode *offset;      /* NULL: base */
  int offset_bind;    /* variable slot to bind to base, or -1 */
  int64_t *shape_v, *strides_v; /* the view's arrays */
  int source;         /* view slot of the aliased or matched buffer */
  enode **lo, **ext;  /* match_buffer: the source region */
  int n_ranges;
  const char *error;  /* the site cannot be run: this message */
} layout;

/* Whether an iter var's value is checked against its domain: never (a
 * float, or a loop variable whose every value lies inside), always (a
 * scalar integer), or when its runtime type says so. */
enum { ITER_CHECK_NEVER, ITER_CHECK_ALWAYS, ITER_CHECK_BY_TYPE };

/* A statement. Fields are used by kind; kids are sub-statements. */
struct snode {
  exec_fn run;
  const loom_loc *loc;
  const loom_stmt *s;
  snode **kids;
  int n_kids;
  enode **exprs;
  int n_exprs;
  int slot;                /* loop or let variable slot */
  layout **layouts;        /* views made on entry, popped on exit */
  int n_layouts;
  /* block realize */
  int *iter_slot;          /* where iter var k lives */
  int *copied, n_copied;   /* iter vars whose value is stored there on entry */
  uint8_t *iter_check;     /* domain check of iter var k: ITER_CHECK_* */
  int *reduce, n_reduce;   /* the REDUCE iter vars */
  int *checked, n_checked; /* the iter vars whose domain is checked */
  bool is_cast;            /* a store's value needs a cast to the buffer's */
  loom_dtype elem_t;       /* a store's buffer dtype, one lane */
  int *index_slots;        /* a store whose indices are all scalar variables */
  enode **dom_min, **dom_ext;
  int64_t *dom_lo, *dom_n; /* the domains when all are constants, else NULL */
  enode *predicate;
  snode *init, *body;
  const wmma_call *wmma;   /* a warp matrix call */
  const char *error;       /* an error node's message */
};

/* Compiler state: the variables and views in scope, innermost last. */
typedef struct scope_var {
  const loom_var *var;
  int slot;
  bool is_scalar; /* holds one lane of type t whenever it is read */
  loom_dtype t;
  bool has_range; /* a loop variable whose value always lies in [lo, hi) */
  int64_t lo, hi;
} scope_var;

typedef struct scope_view {
  const loom_buffer *buf;
  int slot;
} scope_view;

typedef struct compiler {
  loom_arena *arena;
  scope_var *vars;
  int n_vars, cap_vars, n_var_slots, max_var_slots;
  scope_view *views;
  int n_views, cap_views, max_view_slots;
  bool is_nomem;
} compiler;

void *cnew(compiler *c, size_t size);
/* Binds v in the current scope to a new slot (or to slot when >= 0). */
int scope_bind(compiler *c, const loom_var *v, int slot, bool is_scalar,
               loom_dtype t);
const scope_var *scope_find_var(const compiler *c, const loom_var *v);
int scope_find_view(const compiler *c, const loom_buffer *b);
/* The view slot of the innermost buffer whose data variable is data; -1 if
 * none. */
int scope_find_data(const compiler *c, const loom_var *data);
int scope_add_view(compiler *c, const loom_buffer *b);
/* Restores the scope to marks taken from n_vars/n_var_slots and n_views. */
void scope_pop(compiler *c, int n_vars, int n_var_slots, int n_views);

enode *compile_expr(compiler *c, const loom_expr *e, int depth);
snode *compile_stmt(compiler *c, const loom_stmt *s, const loom_loc *loc,
                    int depth);
/* A statement node with room for n_kids statements and n_exprs expressions;
 * NULL when out of memory. */
snode *new_stmt(compiler *c, const loom_stmt *s, const loom_loc *loc,
                int n_kids, int n_exprs);
/* A statement node that fails with msg when run (NULL msg: out of memory). */
snode *error_stmt(compiler *c, const loom_stmt *s, const loom_loc *loc,
                  const char *msg);
/* Whether e is a call of a warp matrix (wmma) operation, which the
 * interpreter runs as a statement: T.tvm_fill_fragment,
 * T.tvm_load_matrix_sync, T.tvm_store_matrix_sync or T.tvm_mma_sync. */
bool is_wmma_call(const loom_expr *e);
/* The node running T.evaluate s of a wmma call on the fragments (wmma.c). */
snode *compile_wmma(compiler *c, const loom_stmt *s, const loom_loc *loc,
                    int depth);
/* The site making a view of b (region: the source of a match_buffer) and
 * adding it to the scope. */
layout *compile_layout(compiler *c, site_kind kind, const loom_buffer *b,
                       const loom_buffer_region *region, int depth);

loom_status run_error(frame *fr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Reports "<what> in '<e>'" (e printed as the script would). */
loom_status expr_error(frame *fr, const char *what, const loom_expr *e);
/* Evaluates n to one integer (a scalar int or bool). */
loom_status eval_int(const enode *n, frame *fr, int64_t *out);
/* Flat element index of the access at idx into v, checked against the shape
 * and the storage; is_store picks the words of the message. */
loom_status flat_index(frame *fr, const view *v, const int64_t *idx,
                       bool is_store, int64_t *flat);
/* Slots of the scalar variables es[0..m) when all are, else NULL. */
int *variable_slots(compiler *c, enode *const *es, int m);
/* Makes the view of site l: storage data of nbytes (owned when owns_data),
 * strides defaulting to given (NULL: row-major), offset to base. */
loom_status push_view(frame *fr, const layout *l, unsigned char *data,
                      int64_t nbytes, bool owns_data, const int64_t *given,
                      int64_t base);
/* Makes the view of site l over fresh, aliased or matched storage. */
loom_status push_site(frame *fr, const layout *l);
/* Frees what the view in slot owns. */
void pop_view(frame *fr, int slot);

/* Rounds a double to float32 as norm_float does: a double holds every
 * float32 exactly, C's conversion rounds to nearest even with overflow to
 * infinity, and NaNs all become the one NaN the decoder makes. */
static inline double round_f32(double x) {
  double r = (float)x;
  return r != r ? NAN : r;
}

/* A fused evaluator for scalar node n when it is a float add whose right
 * operand is a float multiply, or NULL. */
scalar_fn fast_add_mul(const enode *n);
/* The scalar evaluator for binary op k on operands of type op_t, or NULL
 * when the general lane function serves. */
scalar_fn fast_binary(loom_expr_kind k, loom_dtype op_t);

#endif
