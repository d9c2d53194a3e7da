/* Inside the C code generator: the emitter's state and the pieces that
 * print expressions (c_expr.c), statements (c_stmt.c) and functions
 * (c_func.c). */
#ifndef LOOM_CODEGEN_IMPL_H
#define LOOM_CODEGEN_IMPL_H

#include "loom/codegen.h"

extern const char codegen_prelude[];
/* The same helpers for CUDA device code (cuda_prelude.c). */
extern const char codegen_cuda_prelude[];

typedef struct emitter {
  loom_buf *out;
  loom_diag *d;
  loom_loc loc;        /* the statement being printed, for messages */
  loom_status st;      /* the first failure */
  int indent;
  loom_ptrmap names;   /* variable -> position in idents */
  loom_ptrmap data_vars; /* let variables whose values come from memory */
  loom_ptrmap locals;  /* data variables of the function's own allocations */
  loom_ptrmap fragments; /* data variables of wmma fragment buffers (CUDA) */
  loom_ptrmap nonneg;  /* loop variables that count up from 0 or more */
  char **idents;       /* C identifiers, unique within the function */
  int n_idents, cap_idents;
  const loom_var **heap; /* data vars of heap allocations now live */
  int n_heap, cap_heap;
  bool is_noalias;
  bool is_cuda;        /* printing a CUDA kernel (cuda.c), not a C function */
  const loom_gpu_kernel *kernel; /* the kernel being printed, when is_cuda */
  const loom_func *func;         /* the lowered function being printed (C) */
  int parallel_depth;  /* parallel loops around the statement being printed */
  int64_t unroll_max_step; /* from pragma_auto_unroll_max_step above; 0 none */
  const char *symbol;  /* the C function's name (C) */
  const loom_stmt *as_loops; /* a marked loop being printed as its loops */
  /* Loads a vectorized loop has in registers (cuda_vector.c): each printed
   * as its text, an element of the register, in place of memory. */
  const loom_expr *const *vec_loads;
  const char *const *vec_elems;
  int n_vec_loads;
} emitter;

/* Is e computed from memory (a load, a call, a let variable bound to such
 * a value)? Integer arithmetic on such values wraps; arithmetic on loop
 * variables and constants alone (indices) may not overflow, which lets the
 * C compiler see affine addresses and vectorize. */
bool emit_is_data(emitter *E, const loom_expr *e);
/* Notes that let variable v holds value (a data variable when value is). */
void emit_bind_let(emitter *E, const loom_var *v, const loom_expr *value);

/* Notes the loop's variable as non-negative when the loop counts up from
 * a constant start >= 0. */
void emit_note_loop(emitter *E, const loom_stmt *loop);

/* Frees what the emitter holds (not its output). */
void emit_free(emitter *E);
/* Records the first error, located at the current statement. */
void emit_error(emitter *E, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The C identifier of v, made on first use. */
const char *emit_name(emitter *E, const loom_var *v);
/* A fresh identifier based on base, not yet used in the function. */
const char *emit_fresh(emitter *E, const char *base);

/* The C type of a value of dtype t (float16 and bfloat16 compute as float,
 * bool as bool) and of an element of it in memory (raw bits, uint8_t). */
const char *emit_value_type(loom_dtype t);
const char *emit_elem_type(loom_dtype t);
/* The suffix of the prelude's helpers for t: "i32", "u8", "f32". */
const char *emit_suffix(loom_dtype t);

/* A loop: its header, with the pragmas its kind and annotations ask for,
 * then body(E, ctx) for its body. */
typedef void emit_body_fn(emitter *E, const void *ctx);
void emit_loop(emitter *E, const loom_stmt *s, emit_body_fn *body, const void *ctx);
/* Prints loop as the library call the dispatch pass marked it with, and
 * returns true; false (nothing printed) when it carries no mark, or the C
 * backend cannot call there (inside a parallel loop, in CUDA). */
bool emit_library_call(emitter *E, const loom_stmt *loop);
/* The file-scope helpers the function's library calls need (oneDNN's
 * convolutions, c_dnnl.c), printed before the function. */
void emit_library_helpers(emitter *E);
/* A marked convolution, pool or product printed as its oneDNN call, and the nests
 * it took (its padding, the nests after a conv) printed only where the
 * call is not (c_dnnl.c); false, with nothing printed, when loop is not
 * one of them. */
/* oneDNN's shared C, printed before a file's first oneDNN helper
 * (c_dnnl_shared.c). */
extern const char emit_dnnl_shared[];
bool emit_conv_call(emitter *E, const loom_stmt *loop);
bool emit_pool_call(emitter *E, const loom_stmt *loop);
bool emit_matmul_call(emitter *E, const loom_stmt *loop);
bool emit_taken(emitter *E, const loom_stmt *loop);
/* Whether the lowered nest under loop stores to out and nothing else: a
 * schedule may have moved another block under the mark (reverse_compute_at
 * of the epilogue), and a library call would skip it. */
bool emit_stores_only(const loom_stmt *loop, const loom_buffer *out);
/* A loop around a micro-kernel's accumulation, emitted with the
 * accumulator held in vector variables (c_tile.c); false, with nothing
 * emitted, when s is not such a loop. */
bool emit_register_tile(emitter *E, const loom_stmt *s);

/* A vectorized loop printed in CUDA with aligned vector loads and stores
 * (cuda_vector.c); false, with nothing printed, when its accesses are not
 * proven contiguous and aligned. */
bool emit_vector_loop(emitter *E, const loom_stmt *loop);
/* The right-hand side of a store of value into memory of type t: value
 * converted to its bits there (float16 rounded, bool as a byte). */
void emit_store_value(emitter *E, loom_dtype t, const loom_expr *value);
/* A let statement's line, "const T name = value;", without its body. */
void emit_let_line(emitter *E, const loom_stmt *let);

/* CUDA's warp matrix operations (cuda_wmma.c): the call; a fragment
 * buffer's declaration and body (false, with nothing printed, for a buffer
 * of another scope). */
void emit_wmma_call(emitter *E, const loom_expr *e);
bool emit_fragment_alloc(emitter *E, const loom_stmt *s);
void emit_expr(emitter *E, const loom_expr *e);
void emit_stmt(emitter *E, const loom_stmt *s);
void emit_line_start(emitter *E);

#endif
