/* Library dispatch: loop nests a library does well, recognized by their
 * pattern (never by name) and marked to be computed by it. A marked nest
 * keeps its TensorIR: the interpreter runs it as written, so `--verify`
 * still compares the library's answer with the program's meaning, and the
 * C backend emits the library call in its place (docs/dispatch.md).
 *
 * The mark is a set of annotations on the nest's outermost loop:
 *   "loom.library"  the routine: "cblas_sgemm", "cblas_dgemm", "cblas_sgemv"
 *                   or "cblas_dgemv" (then B is x[k], C is y[m], n is 1)
 *   "loom.gemm"     "NN", "NT", "TN" or "TT": A and B as stored
 *   "loom.a", "loom.b", "loom.c"  the buffers' names
 *   "loom.m", "loom.n", "loom.k"  the extents; "loom.beta" 0 (C is
 *                   initialized to zero first) or 1 (C accumulates)
 *   "loom.batch"    the batch (1: none); "loom.b_batched" 1 when B has it
 * A convolution's mark (loop is the conv nest's outermost loop):
 *   "loom.library"  "dnnl_convolution_forward" (oneDNN)
 *   "loom.conv"     "NHWC" (NHWC input, HWIO weights) or "NCHW" (NCHW, OIHW)
 *   "loom.x", "loom.w", "loom.y"  the input (unpadded), weights, output
 *   "loom.pad"      the padded intermediate, when a pad nest is taken too
 *   "loom.n", "loom.ci", "loom.co", "loom.ih", "loom.iw", "loom.oh",
 *   "loom.ow", "loom.kh", "loom.kw"  the extents; "loom.beta" as above
 *   "loom.stride", "loom.dilation"  [h, w]; "loom.padding" [top, left,
 *                   bottom, right], the zeros oneDNN adds around the input
 * and the pad nest's outermost loop is marked "loom.taken_by":
 * "dnnl_convolution_forward": the call computes it too (it is printed as
 * nothing when the conv nest after it is printed as the call).
 * On a cuda target a product's routine is "cublas_gemm" (the factors'
 * and the result's dtypes are the buffers'; a gemv is a product of one
 * column), and the GPU lowering makes it a call of cuBLAS's
 * cublasGemmStridedBatchedEx on the host (docs/dispatch.md).
 * The library is opened when the program first runs (libopenblas.so.0,
 * else libblas.so.3; libdnnl.so.2; libcublas.so): a machine without it
 * gets a diagnostic, not a crash. */
#ifndef LOOM_DISPATCH_H
#define LOOM_DISPATCH_H

#include "loom/ir.h"
#include "loom/target.h"

/* A matrix product C[m, n] (=|+=) op(A) op(B) over row-major, compact
 * float32 or float64 buffers, or batch of them: C[batch, m, n] from
 * A[batch, ...] and B[batch, ...] or one B for every batch. On cuda, A and
 * B may be float16 or bfloat16 cast to C's float32 (or float16 into
 * float16). */
typedef struct loom_gemm {
  const loom_buffer *a, *b, *c;
  bool trans_a, trans_b; /* A stored [k, m], B stored [n, k] */
  int64_t m, n, k;
  int64_t batch;         /* 1: a single product */
  bool is_b_batched;     /* B has the batch dimension too */
  int beta;              /* 0: C = A B (an init of zero); 1: C += A B */
  const char *routine;   /* "cblas_sgemm", "cblas_dgemm", "cblas_sgemv", "cblas_dgemv",
                            "dnnl_matmul" or "cublas_gemm" */
  bool is_gemv;          /* B is a vector x[k] and C a vector y[m]: n is 1 */
  loom_dtype ab;         /* A's and B's dtype (C's but on cuda) */
} loom_gemm;

/* Whether the loop nest under loop (a FOR whose body is the nest, one block
 * at its bottom) is a gemm, or a batch of them, that the library of target
 * t (NULL: a CPU) computes, BLAS or cuBLAS, with *out describing it; else
 * false, and why (when not NULL) says what does not fit, in a sentence
 * fragment ("block 'C' reads a third buffer"). Buffers must be compact and
 * row-major; f gives the parameters and allocations they may be. */
LOOM_API bool loom_dispatch_match_gemm(const loom_func *f, const loom_target *t,
                                       const loom_stmt *loop, loom_gemm *out, char *why,
                                       size_t why_len);

/* The layout of g's factors as the marks write it: "NN", "NT", "TN" or
 * "TT" (A, then B, as stored). */
LOOM_API const char *loom_dispatch_gemm_layout(const loom_gemm *g);

/* Whether cuBLAS multiplies factors of dtype ab into a result of dtype c:
 * float32 and float64 alike, float16 and bfloat16 into float32, float16
 * into float16. */
LOOM_API bool loom_dispatch_cublas_has(loom_dtype ab, loom_dtype c);

/* A float32 2-D convolution, one group:
 *   NHWC: Y[n, h, w, co] (+)= X'[n, h*sh + rh*dh, w*sw + rw*dw, ci] * W[rh, rw, ci, co]
 *   NCHW: Y[n, co, h, w] (+)= X'[n, ci, h*sh + rh*dh, w*sw + rw*dw] * W[co, ci, rh, rw]
 * where X' is X with pad_lo zeros before and pad_hi after along h and w,
 * over compact buffers. */
/* What oneDNN does to a convolution's result after its bias and before
 * storing it (its post-ops), in order. */
typedef enum { LOOM_CONV_POST_ADD, LOOM_CONV_POST_RELU } loom_conv_post_kind;

#define LOOM_CONV_MAX_POST 4

typedef struct loom_conv_post {
  loom_conv_post_kind kind;
  const loom_buffer *src; /* ADD: the tensor of the result's shape added */
} loom_conv_post;

typedef struct loom_conv {
  const loom_buffer *x, *w, *y; /* input (unpadded), weights, output */
  const loom_buffer *pad;       /* the padded copy of X the nest before writes;
                                   NULL: the conv reads X itself */
  bool is_nchw;                 /* NCHW and OIHW; else NHWC and HWIO */
  int64_t n, ci, co;            /* batch, input and output channels */
  int64_t ih, iw, oh, ow, kh, kw;
  int64_t stride[2], dilation[2]; /* along h and w; dilation 1: none */
  int64_t pad_lo[2], pad_hi[2];   /* zeros before and after X along h and w,
                                     as oneDNN takes them: pad_hi counts the
                                     rows and columns the conv reads */
  int beta;                     /* 0: Y = conv (an init of zero); 1: Y += conv */
  const char *routine;          /* "dnnl_convolution_forward" */
  /* The nests after the conv that the call computes too
   * (loom_dispatch_match_conv_post); none when out is NULL. */
  const loom_buffer *bias;      /* B[co] added first; NULL: none */
  loom_conv_post post[LOOM_CONV_MAX_POST];
  int n_post;
  const loom_buffer *out;       /* where the last of them stores */
} loom_conv;

/* Whether the nest under loop is a convolution oneDNN computes, with *out
 * describing it; else false, and why (when not NULL) says what does not
 * fit. pad_loop (NULL: none) is the nest just before it: when it writes
 * the buffer the conv reads, it must be a zero padding of another buffer
 * that only the conv reads, and the two are taken together (out->pad). */
LOOM_API bool loom_dispatch_match_conv(const loom_func *f, const loom_stmt *pad_loop,
                                       const loom_stmt *loop, loom_conv *out, char *why,
                                       size_t why_len);

/* A 2-D max pool oneDNN's pooling computes (src/dispatch/pool.c). */
typedef struct loom_pool {
  const loom_buffer *x, *y;     /* input (unpadded), output */
  const loom_buffer *pad;       /* the padded copy of X the nest before writes;
                                   NULL: the pool reads X itself */
  bool is_nchw;                 /* else NHWC */
  int64_t n, c, ih, iw, oh, ow, kh, kw;
  int64_t stride[2], dilation[2]; /* along h and w; dilation 1: none */
  int64_t pad_lo[2], pad_hi[2];   /* as a conv's (loom_conv) */
  const char *routine;          /* "dnnl_pooling_forward" */
} loom_pool;

/* Whether the nest under loop is a max pool oneDNN computes: six loops
 * around one block that takes Y[n, h, w, c] = max(Y[n, h, w, c], P[n, h*sh
 * + rh*dh, w*sw + rw*dw, c]) from float32's lowest value (or NCHW), P the
 * input or, as a conv's, a padding of it by pad_loop, with the lowest
 * value; else false, and why. */
LOOM_API bool loom_dispatch_match_pool(const loom_func *f, const loom_stmt *pad_loop,
                                       const loom_stmt *loop, loom_pool *out, char *why,
                                       size_t why_len);

/* How many of the nests after conv c's, nests[1..n) (nests[0] is the
 * conv's), oneDNN computes with it, as its bias and post-ops: first, a bias per output
 * channel, Z = Y + B[co]; then Z = Y + R (R any tensor of Y's shape) and
 * Z = max(Y, 0), at most LOOM_CONV_MAX_POST of them. Each nest is four
 * loops around one block storing Z at its iters over the whole of the
 * buffer Y the nest before writes, which nothing else reads or writes and
 * which is not a parameter (the call never writes it). NHWC convolutions
 * that start from zero only. c gets the bias, the post-ops and the last
 * buffer written (out); 0 leaves c as it is. */
LOOM_API int loom_dispatch_match_conv_post(const loom_func *f, const loom_stmt *const *nests,
                                           int n, loom_conv *c);

/* The dispatch pass on one function for target t (NULL: a CPU): each
 * loop nest at the top of f's body that a library takes is marked (a
 * convolution with the padding nest before it); *out is the new function
 * in arena a (f itself, and *n_taken 0, when none is). On cuda only
 * products are taken, by cuBLAS. why (when not NULL) gets the reason a
 * nest was not taken (the first one that computes a reduction, else the
 * first) when none is, and the libraries that take them ("BLAS", "oneDNN",
 * "BLAS and oneDNN" or "cuBLAS") when some are. */
LOOM_API loom_status loom_dispatch_func(loom_arena *a, const loom_func *f, const loom_target *t,
                                        const loom_func **out, int *n_taken,
                                        char *why, size_t why_len);

/* The gemm a nest was marked with, read back from the annotations of loop
 * (buffers by name among f's parameters and allocations): false when loop
 * carries no mark, or a mark that does not describe f's buffers. */
LOOM_API bool loom_dispatch_marked_gemm(const loom_func *f, const loom_stmt *loop,
                                        loom_gemm *out);

/* The pool a nest was marked with, read back as a conv's. */
LOOM_API bool loom_dispatch_marked_pool(const loom_func *f, const loom_stmt *loop,
                                        loom_pool *out);

/* The convolution a nest was marked with, read back as
 * loom_dispatch_marked_gemm reads a gemm: false when loop carries no conv
 * mark, or one that does not describe f's buffers. */
LOOM_API bool loom_dispatch_marked_conv(const loom_func *f, const loom_stmt *loop,
                                        loom_conv *out);

#endif
