/* Loom's tuned kernels side by side with the libraries people use instead:
 * matmul (512^3, 1024^3, 2048^3, each also with B transposed) and gemv against
 * OpenBLAS, conv2d NHWC against oneDNN, softmax, layer norm, a row sum and
 * an elementwise add against plain C loops with OpenMP (their reductions
 * vectorized by `omp simd reduction`: without it the compiler keeps the
 * sums in order, one lane at a time). Each kernel is
 * tuned (the rule-generated spaces, or hand-written ones), its best
 * schedule rebuilt from the database and timed in this process the same way
 * as its peer, with the same thread count, and its result compared with the
 * peer's. Prints trials, tuning time, GFLOP/s and the ratio per kernel, and
 * writes SVG plots of the matmul searches into the output folder.
 *
 * usage: bench_cpu [--trials N] [--out DIR] [--space auto|rules|hand]
 *                  [--only NAMES] [--threads N] [--population N] [--keep-db DIR]
 * --only keeps the kernels whose name contains one of the comma-separated
 * NAMES ("512,gemv"); --population sets the evolutionary search's;
 * --keep-db keeps each kernel's tuning database as DIR/INDEX.db.        */
#include "loom/script.h"
#include "loom/space.h"
#include "loom/tune.h"
#include "openblas_env.h"

#include <cblas.h>
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { PEER_SGEMM, PEER_SGEMM_NT, PEER_SGEMV, PEER_CONV, PEER_SOFTMAX,
       PEER_LAYERNORM, PEER_ROWSUM, PEER_ADD };

static const char *peer_names[] = {"OpenBLAS sgemm", "OpenBLAS sgemm NT", "OpenBLAS sgemv",
                                   "oneDNN conv", "C+OpenMP", "C+OpenMP", "C+OpenMP",
                                   "C+OpenMP"};

#define MAX_POINTS 4096

typedef struct point {
  int trials;
  double elapsed_s, gflops;
} point;

typedef struct row {
  const char *name, *peer, *space;
  int trials, rejected, failures;
  double tune_s, loom_ms, peer_ms, flops;
  /* oneDNN's convolution again with the algorithm its own choice (auto);
   * peer_ms is with the direct algorithm. 0 for other peers. */
  double peer_auto_ms;
  bool is_ok;
  double max_err;
} row;

typedef struct kcase {
  const char *name;
  char program[4096];
  char space[2048];      /* the hand-written space */
  int peer;
  int64_t m, n, k;       /* matmul M N K; conv H C; rows, cols */
  bool is_plotted;
  point pts[MAX_POINTS];
  int n_pts;
  /* oneDNN's state */
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_t conv;
  dnnl_memory_t src, wei, dst;
  char db_path[256];      /* the tuning records, until timed */
  row r;
  bool is_tuned;
} kcase;

static int threads;
/* Evolutionary population per round; 0: the search's default. */
static int population;
static const char *keep_dir; /* --keep-db: the databases stay there */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- programs and hand-written spaces ------------------------------------ */

static void matmul(kcase *c, const char *name, int64_t m, int64_t n, int64_t k, bool is_nt) {
  c->name = name;
  c->peer = is_nt ? PEER_SGEMM_NT : m == 1 ? PEER_SGEMV : PEER_SGEMM;
  c->m = m, c->n = n, c->k = k;
  c->is_plotted = m > 1;
  snprintf(c->program, sizeof c->program,
           "@T.prim_func\n"
           "def main(A: T.Buffer((%lld, %lld), \"float32\"), B: T.Buffer((%lld, %lld), \"float32\"), C: T.Buffer((%lld, %lld), \"float32\")):\n"
           "    T.func_attr({\"tir.noalias\": True})\n"
           "    for i, j, k in T.grid(%lld, %lld, %lld):\n"
           "        with T.block(\"C\"):\n"
           "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
           "            with T.init():\n"
           "                C[vi, vj] = T.float32(0.0)\n"
           "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[%s]\n",
           (long long)m, (long long)k, (long long)(is_nt ? n : k), (long long)(is_nt ? k : n),
           (long long)m, (long long)n, (long long)m, (long long)n, (long long)k,
           is_nt ? "vj, vk" : "vk, vj");
  if (m == 1)
    snprintf(c->space, sizeof c->space,
             "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
             "l1, l2, l3 = sch.get_loops(block=b0)\n"
             "v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=64)\n"
             "l6, l7 = sch.split(loop=l2, factors=[v4, v5])\n"
             "v8, v9 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=64)\n"
             "l10, l11 = sch.split(loop=l3, factors=[v8, v9])\n"
             "sch.reorder(l1, l6, l10, l11, l7)\n"
             "sch.parallel(loop=l6)\n"
             "sch.vectorize(loop=l7)\n");
  else
    snprintf(c->space, sizeof c->space,
             "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
             "l1, l2, l3 = sch.get_loops(block=b0)\n"
             "v4, v5, v6 = sch.sample_perfect_tile(loop=l1, n=3, max_innermost_factor=16)\n"
             "l7, l8, l9 = sch.split(loop=l1, factors=[v4, v5, v6])\n"
             "v10, v11, v12 = sch.sample_perfect_tile(loop=l2, n=3, max_innermost_factor=64)\n"
             "l13, l14, l15 = sch.split(loop=l2, factors=[v10, v11, v12])\n"
             "v16, v17 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=16)\n"
             "l18, l19 = sch.split(loop=l3, factors=[v16, v17])\n"
             "sch.reorder(l7, l13, l8, l14, l18, l9, l19, l15)\n"
             "sch.parallel(loop=l7)\n"
             "sch.vectorize(loop=l15)\n");
}

/* ResNet-style 3x3 convolution, stride 1, padding 1, NHWC input, HWIO
 * weights (the layout of ../shared/corpus/conv2d_nhwc.py). */
static void conv(kcase *c, const char *name, int64_t h, int64_t ch) {
  c->name = name;
  c->peer = PEER_CONV;
  c->m = h, c->n = ch;
  long long H = h, C = ch;
  snprintf(c->program, sizeof c->program,
           "@T.prim_func\n"
           "def main(X: T.Buffer((1, %lld, %lld, %lld), \"float32\"), W: T.Buffer((3, 3, %lld, %lld), \"float32\"), Y: T.Buffer((1, %lld, %lld, %lld), \"float32\")):\n"
           "    T.func_attr({\"tir.noalias\": True})\n"
           "    pad = T.alloc_buffer((1, %lld, %lld, %lld))\n"
           "    for n, h, w, c in T.grid(1, %lld, %lld, %lld):\n"
           "        with T.block(\"pad\"):\n"
           "            vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
           "            pad[vn, vh, vw, vc] = T.if_then_else(1 <= vh and vh < %lld and 1 <= vw and vw < %lld, X[vn, vh - 1, vw - 1, vc], T.float32(0.0))\n"
           "    for n, h, w, co, rh, rw, ci in T.grid(1, %lld, %lld, %lld, 3, 3, %lld):\n"
           "        with T.block(\"conv\"):\n"
           "            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap(\"SSSSRRR\", [n, h, w, co, rh, rw, ci])\n"
           "            with T.init():\n"
           "                Y[vn, vh, vw, vco] = T.float32(0.0)\n"
           "            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]\n",
           H, H, C, C, C, H, H, C, H + 2, H + 2, C, H + 2, H + 2, C, H + 1, H + 1, H, H, C, C);
  snprintf(c->space, sizeof c->space,
           "b0 = sch.get_block(name=\"conv\", func_name=\"main\")\n"
           "l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)\n"
           "v8, v9 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=8)\n"
           "l10, l11 = sch.split(loop=l2, factors=[v8, v9])\n"
           "v12, v13 = sch.sample_perfect_tile(loop=l4, n=2, max_innermost_factor=64)\n"
           "l14, l15 = sch.split(loop=l4, factors=[v12, v13])\n"
           "sch.reorder(l1, l10, l14, l3, l11, l5, l6, l7, l15)\n"
           "sch.parallel(loop=l10)\n"
           "sch.vectorize(loop=l15)\n"
           "b16 = sch.get_block(name=\"pad\", func_name=\"main\")\n"
           "l17, l18, l19, l20 = sch.get_loops(block=b16)\n"
           "sch.parallel(loop=l18)\n");
}

/* Row-wise kernels over R x C: the hand spaces parallelize the rows of
 * every block. */
static void rows(kcase *c, const char *name, int peer, int64_t r, int64_t cols) {
  c->name = name;
  c->peer = peer;
  c->m = r, c->n = cols;
  long long R = r, C = cols;
  if (peer == PEER_SOFTMAX) {
    snprintf(c->program, sizeof c->program,
             "@T.prim_func\n"
             "def main(A: T.Buffer((%lld, %lld), \"float32\"), B: T.Buffer((%lld, %lld), \"float32\")):\n"
             "    T.func_attr({\"tir.noalias\": True})\n"
             "    maxv = T.alloc_buffer((%lld,))\n"
             "    ex = T.alloc_buffer((%lld, %lld))\n"
             "    total = T.alloc_buffer((%lld,))\n"
             "    for i, k in T.grid(%lld, %lld):\n"
             "        with T.block(\"max\"):\n"
             "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
             "            with T.init():\n"
             "                maxv[vi] = T.min_value(\"float32\")\n"
             "            maxv[vi] = T.max(maxv[vi], A[vi, vk])\n"
             "    for i, j in T.grid(%lld, %lld):\n"
             "        with T.block(\"exp\"):\n"
             "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
             "            ex[vi, vj] = T.exp(A[vi, vj] - maxv[vi])\n"
             "    for i, k in T.grid(%lld, %lld):\n"
             "        with T.block(\"sum\"):\n"
             "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
             "            with T.init():\n"
             "                total[vi] = T.float32(0.0)\n"
             "            total[vi] = total[vi] + ex[vi, vk]\n"
             "    for i, j in T.grid(%lld, %lld):\n"
             "        with T.block(\"norm\"):\n"
             "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
             "            B[vi, vj] = ex[vi, vj] / total[vi]\n",
             R, C, R, C, R, R, C, R, R, C, R, C, R, C, R, C);
    snprintf(c->space, sizeof c->space,
             "b0 = sch.get_block(name=\"max\", func_name=\"main\")\n"
             "l1, l2 = sch.get_loops(block=b0)\n"
             "sch.parallel(loop=l1)\n"
             "b3 = sch.get_block(name=\"exp\", func_name=\"main\")\n"
             "l4, l5 = sch.get_loops(block=b3)\n"
             "sch.parallel(loop=l4)\n"
             "b6 = sch.get_block(name=\"sum\", func_name=\"main\")\n"
             "l7, l8 = sch.get_loops(block=b6)\n"
             "sch.parallel(loop=l7)\n"
             "b9 = sch.get_block(name=\"norm\", func_name=\"main\")\n"
             "l10, l11 = sch.get_loops(block=b9)\n"
             "sch.parallel(loop=l10)\n"
             "sch.vectorize(loop=l11)\n");
  } else if (peer == PEER_LAYERNORM) {
    /* The arithmetic of the peer (and of topi's layer_norm): the row's
     * inverse square root times each element, not a division by the
     * square root per element, which costs a vector division each. */
    snprintf(c->program, sizeof c->program,
             "@T.prim_func\n"
             "def main(A: T.Buffer((%lld, %lld), \"float32\"), G: T.Buffer((%lld,), \"float32\"), Bt: T.Buffer((%lld,), \"float32\"), B: T.Buffer((%lld, %lld), \"float32\")):\n"
             "    T.func_attr({\"tir.noalias\": True})\n"
             "    s1 = T.alloc_buffer((%lld,))\n"
             "    s2 = T.alloc_buffer((%lld,))\n"
             "    for i, k in T.grid(%lld, %lld):\n"
             "        with T.block(\"moments\"):\n"
             "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
             "            with T.init():\n"
             "                s1[vi] = T.float32(0.0)\n"
             "                s2[vi] = T.float32(0.0)\n"
             "            s1[vi] = s1[vi] + A[vi, vk]\n"
             "            s2[vi] = s2[vi] + A[vi, vk] * A[vi, vk]\n"
             "    for i, j in T.grid(%lld, %lld):\n"
             "        with T.block(\"norm\"):\n"
             "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
             "            B[vi, vj] = (A[vi, vj] - s1[vi] * T.float32(%.10g)) * T.rsqrt(s2[vi] * T.float32(%.10g) - s1[vi] * T.float32(%.10g) * (s1[vi] * T.float32(%.10g)) + T.float32(1e-05)) * G[vj] + Bt[vj]\n",
             R, C, C, C, R, C, R, R, R, C, R, C, 1.0 / C, 1.0 / C, 1.0 / C, 1.0 / C);
    snprintf(c->space, sizeof c->space,
             "b0 = sch.get_block(name=\"moments\", func_name=\"main\")\n"
             "l1, l2 = sch.get_loops(block=b0)\n"
             "sch.parallel(loop=l1)\n"
             "b3 = sch.get_block(name=\"norm\", func_name=\"main\")\n"
             "l4, l5 = sch.get_loops(block=b3)\n"
             "sch.parallel(loop=l4)\n"
             "sch.vectorize(loop=l5)\n");
  } else if (peer == PEER_ROWSUM) {
    snprintf(c->program, sizeof c->program,
             "@T.prim_func\n"
             "def main(A: T.Buffer((%lld, %lld), \"float32\"), B: T.Buffer((%lld,), \"float32\")):\n"
             "    T.func_attr({\"tir.noalias\": True})\n"
             "    for i, k in T.grid(%lld, %lld):\n"
             "        with T.block(\"sum\"):\n"
             "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
             "            with T.init():\n"
             "                B[vi] = T.float32(0.0)\n"
             "            B[vi] = B[vi] + A[vi, vk]\n",
             R, C, R, R, C);
    snprintf(c->space, sizeof c->space,
             "b0 = sch.get_block(name=\"sum\", func_name=\"main\")\n"
             "l1, l2 = sch.get_loops(block=b0)\n"
             "v3, v4 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16)\n"
             "l5, l6 = sch.split(loop=l1, factors=[v3, v4])\n"
             "sch.reorder(l5, l2, l6)\n"
             "sch.parallel(loop=l5)\n");
  } else {
    snprintf(c->program, sizeof c->program,
             "@T.prim_func\n"
             "def main(A: T.Buffer((%lld, %lld), \"float32\"), B: T.Buffer((%lld, %lld), \"float32\"), C: T.Buffer((%lld, %lld), \"float32\")):\n"
             "    T.func_attr({\"tir.noalias\": True})\n"
             "    for i, j in T.grid(%lld, %lld):\n"
             "        with T.block(\"add\"):\n"
             "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
             "            C[vi, vj] = A[vi, vj] + B[vi, vj]\n",
             R, C, R, C, R, C, R, C);
    snprintf(c->space, sizeof c->space,
             "b0 = sch.get_block(name=\"add\", func_name=\"main\")\n"
             "l1, l2 = sch.get_loops(block=b0)\n"
             "v3, v4 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=64)\n"
             "l5, l6 = sch.split(loop=l2, factors=[v3, v4])\n"
             "sch.parallel(loop=l1)\n"
             "sch.vectorize(loop=l6)\n");
  }
}

/* ---- peers ------------------------------------------------------------------ */

#define DNNL_OK(x) ((x) == dnnl_success)

/* oneDNN's convolution set up as it runs in a framework: the weights
 * reordered once, into the layout the primitive asks for, outside the timed
 * region; the algorithm direct, or with is_auto oneDNN's own choice. */
static bool conv_setup(kcase *c, float **b, bool is_auto) {
  dnnl_dims_t src_dims = {1, c->n, c->m, c->m}, dst_dims = {1, c->n, c->m, c->m};
  dnnl_dims_t wei_dims = {c->n, c->n, 3, 3}, strides = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t src_md, dst_md, wei_md, wei_any;
  dnnl_convolution_desc_t cd;
  dnnl_primitive_desc_t pd, rpd;
  dnnl_primitive_t reorder;
  dnnl_memory_t wei_user;
  if (!DNNL_OK(dnnl_engine_create(&c->engine, dnnl_cpu, 0)) ||
      !DNNL_OK(dnnl_stream_create(&c->stream, c->engine, dnnl_stream_default_flags)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, dnnl_nhwc)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, dnnl_nhwc)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&wei_md, 4, wei_dims, dnnl_f32, dnnl_hwio)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&wei_any, 4, wei_dims, dnnl_f32, dnnl_format_tag_any)) ||
      !DNNL_OK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                  is_auto ? dnnl_convolution_auto
                                                          : dnnl_convolution_direct,
                                                  &src_md, &wei_any,
                                                  NULL, &dst_md, strides, pad, pad)) ||
      !DNNL_OK(dnnl_primitive_desc_create(&pd, &cd, NULL, c->engine, NULL)) ||
      !DNNL_OK(dnnl_primitive_create(&c->conv, pd)))
    return false;
  /* The weights in the layout the primitive prefers, reordered once. */
  const dnnl_memory_desc_t *best = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  if (!DNNL_OK(dnnl_memory_create(&c->src, &src_md, c->engine, b[0])) ||
      !DNNL_OK(dnnl_memory_create(&c->dst, &dst_md, c->engine, b[2])) ||
      !DNNL_OK(dnnl_memory_create(&wei_user, &wei_md, c->engine, b[1])) ||
      !DNNL_OK(dnnl_memory_create(&c->wei, best, c->engine, DNNL_MEMORY_ALLOCATE)) ||
      !DNNL_OK(dnnl_reorder_primitive_desc_create(&rpd, &wei_md, c->engine, best, c->engine, NULL)) ||
      !DNNL_OK(dnnl_primitive_create(&reorder, rpd)))
    return false;
  dnnl_exec_arg_t rargs[] = {{DNNL_ARG_FROM, wei_user}, {DNNL_ARG_TO, c->wei}};
  bool ok = DNNL_OK(dnnl_primitive_execute(reorder, c->stream, 2, rargs)) &&
            DNNL_OK(dnnl_stream_wait(c->stream));
  dnnl_primitive_destroy(reorder);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_primitive_desc_destroy(pd);
  dnnl_memory_destroy(wei_user);
  return ok;
}

/* Frees oneDNN's state and forgets it, so conv_setup can run again. */
static void conv_teardown(kcase *c) {
  if (c->conv)
    dnnl_primitive_destroy(c->conv);
  if (c->src)
    dnnl_memory_destroy(c->src);
  if (c->dst)
    dnnl_memory_destroy(c->dst);
  if (c->wei)
    dnnl_memory_destroy(c->wei);
  if (c->stream)
    dnnl_stream_destroy(c->stream);
  if (c->engine)
    dnnl_engine_destroy(c->engine);
  c->conv = NULL;
  c->src = c->dst = c->wei = NULL;
  c->stream = NULL;
  c->engine = NULL;
}

static void peer_run(kcase *c, float **b) {
  int m = (int)c->m, n = (int)c->n, k = (int)c->k;
  switch (c->peer) {
  case PEER_SGEMM:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, b[0], k, b[1], n, 0, b[2], n);
    break;
  case PEER_SGEMM_NT:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, b[0], k, b[1], k, 0, b[2], n);
    break;
  case PEER_SGEMV: /* C[0, :] = A[0, :] B, B row-major K x N */
    cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1, b[1], n, b[0], 1, 0, b[2], 1);
    break;
  case PEER_CONV: {
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, c->wei},
                              {DNNL_ARG_DST, c->dst}};
    dnnl_primitive_execute(c->conv, c->stream, 3, args);
    dnnl_stream_wait(c->stream);
    break;
  }
  case PEER_SOFTMAX: {
    const float *A = b[0];
    float *B = b[1];
#pragma omp parallel for
    for (int i = 0; i < m; i++) {
      const float *a = A + (size_t)i * n;
      float *o = B + (size_t)i * n, mx = -INFINITY, s = 0;
#pragma omp simd reduction(max : mx)
      for (int j = 0; j < n; j++)
        mx = a[j] > mx ? a[j] : mx;
      for (int j = 0; j < n; j++)
        o[j] = expf(a[j] - mx);
#pragma omp simd reduction(+ : s)
      for (int j = 0; j < n; j++)
        s += o[j];
      float inv = 1.0f / s;
      for (int j = 0; j < n; j++)
        o[j] *= inv;
    }
    break;
  }
  case PEER_LAYERNORM: {
    const float *A = b[0], *G = b[1], *Bt = b[2];
    float *B = b[3];
#pragma omp parallel for
    for (int i = 0; i < m; i++) {
      const float *a = A + (size_t)i * n;
      float *o = B + (size_t)i * n, s1 = 0, s2 = 0;
#pragma omp simd reduction(+ : s1, s2)
      for (int j = 0; j < n; j++) {
        s1 += a[j];
        s2 += a[j] * a[j];
      }
      float mean = s1 / n, inv = 1.0f / sqrtf(s2 / n - mean * mean + 1e-5f);
      for (int j = 0; j < n; j++)
        o[j] = (a[j] - mean) * inv * G[j] + Bt[j];
    }
    break;
  }
  case PEER_ROWSUM: {
    const float *A = b[0];
    float *B = b[1];
#pragma omp parallel for
    for (int i = 0; i < m; i++) {
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (int j = 0; j < n; j++)
        s += A[(size_t)i * n + j];
      B[i] = s;
    }
    break;
  }
  default: {
    const float *A = b[0], *B = b[1];
    float *C = b[2];
    size_t total = (size_t)m * n;
#pragma omp parallel for
    for (size_t i = 0; i < total; i++)
      C[i] = A[i] + B[i];
  }
  }
}

/* ---- timing ----------------------------------------------------------------- */

typedef struct timed {
  kcase *c;
  float **bufs;
  loom_kernel kernel;
  void **args;
  const int64_t **shapes;
} timed;

static void call(timed *t) {
  if (t->kernel)
    ((loom_c_kernel)t->kernel)(t->args, t->shapes);
  else
    peer_run(t->c, t->bufs);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* The median of 5 repeats, each of enough calls to last 50 ms, after one
 * warm-up call: the same for Loom's kernel and its peer. */
/* Calls of t that last about 50 ms together (at least one). */
static int calls_for_50ms(timed *t) {
  call(t);
  double t0 = now_s();
  call(t);
  double once = (now_s() - t0) * 1e3;
  return once >= 50 ? 1 : (int)(50 / (once > 1e-3 ? once : 1e-3)) + 1;
}

static double batch_ms(timed *t, int number) {
  double t0 = now_s();
  for (int i = 0; i < number; i++)
    call(t);
  return (now_s() - t0) * 1e3 / number;
}

#define ROUNDS 7

/* The medians of ROUNDS batches of each, the two taking turns: a burst of
 * load from elsewhere on the host then slows both sides, not one. Each
 * timed batch follows two untimed ones of the same side: the other side's
 * idle threads spin for a while after it returns (OpenBLAS's for up to
 * about 0.1 s) and would take a core from the first calls. */
static void time_pair(timed *a, timed *b, double *a_ms, double *b_ms) {
  int na = calls_for_50ms(a), nb = calls_for_50ms(b);
  double ra[ROUNDS], rb[ROUNDS];
  for (int k = 0; k < ROUNDS; k++) {
    batch_ms(a, 2 * na);
    ra[k] = batch_ms(a, na);
    batch_ms(b, 2 * nb);
    rb[k] = batch_ms(b, nb);
  }
  qsort(ra, ROUNDS, sizeof *ra, cmp_double);
  qsort(rb, ROUNDS, sizeof *rb, cmp_double);
  *a_ms = ra[ROUNDS / 2];
  *b_ms = rb[ROUNDS / 2];
}

/* ---- tuning ----------------------------------------------------------------- */

static void progress(void *ctx, const loom_tune_progress *p) {
  kcase *c = ctx;
  if (c->n_pts < MAX_POINTS && p->best_ms > 0 && p->flops > 0)
    c->pts[c->n_pts++] = (point){p->trials, p->elapsed_s, p->flops / (p->best_ms * 1e6)};
}

/* Whether the generated spaces have knobs: until the schedule rules exist,
 * they are the function as written, and the hand spaces stand in. */
static bool rules_have_knobs(const loom_module *m, const loom_target *tg) {
  loom_arena *a = loom_arena_new();
  loom_trace *spaces;
  int n = 0;
  loom_diag d;
  loom_diag_init(&d);
  bool has = false;
  if (a && loom_space_generate(m, tg, a, &spaces, &n, &d) == LOOM_OK)
    for (int i = 0; i < n && !has; i++)
      for (int j = 0; j < spaces[i].n_insts && !has; j++) {
        loom_inst_kind k = spaces[i].insts[j]->kind;
        has = k == LOOM_INST_SAMPLE_PERFECT_TILE || k == LOOM_INST_SAMPLE_CATEGORICAL;
      }
  loom_diag_free(&d);
  loom_arena_free(a);
  return has;
}

static void remove_db(const char *path) {
  char side[300];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
}

/* Tunes c into its own database. */
static bool tune_case(kcase *c, int index, int trials, const char *space_mode,
                      const loom_target *tg) {
  row *out = &c->r;
  memset(out, 0, sizeof *out);
  out->name = c->name;
  out->peer = peer_names[c->peer];
  loom_arena *a = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_task *tasks;
  int n_tasks;
  if (loom_script_read(c->program, strlen(c->program), c->name, a, &m, &d) != LOOM_OK ||
      loom_tune_extract_tasks(a, m, &tasks, &n_tasks) != LOOM_OK) {
    fprintf(stderr, "bench_cpu: %s: %s\n", c->name, d.msg ? d.msg : "out of memory");
    return false;
  }
  bool use_rules = !strcmp(space_mode, "rules") ||
                   (!strcmp(space_mode, "auto") && rules_have_knobs(m, tg));
  out->space = use_rules ? "rules" : "hand";
  if (keep_dir) {
    mkdir(keep_dir, 0777);
    snprintf(c->db_path, sizeof c->db_path, "%s/%d.db", keep_dir, index);
  } else {
    snprintf(c->db_path, sizeof c->db_path, "/tmp/loom-bench-cpu-%d-%d.db", (int)getpid(), index);
  }
  remove_db(c->db_path);
  loom_db *db;
  loom_model *model = NULL;
  if (loom_db_open(c->db_path, &db, &d) != LOOM_OK ||
      loom_model_xgb_new(&(loom_model_options){.seed = 1}, &model, &d) != LOOM_OK) {
    fprintf(stderr, "bench_cpu: %s\n", d.msg ? d.msg : "out of memory");
    return false;
  }
  /* The runner's check against the interpreter would take minutes on these
   * sizes; the best kernel's result is compared with the peer's instead. */
  loom_tune_options o = {.strategy = LOOM_SEARCH_EVOLUTIONARY, .trials = trials,
                         .batch = 16, .seed = 1, .target = tg, .model = model,
                         .population = population, .progress = progress,
                         .progress_ctx = c};
  /* Room for a slow first candidate of the 2048^3 matmul; once a best is
   * known the search stops candidates 30 times slower. */
  o.runner.timeout_ms = 120000;
  o.runner.threads = threads;
  o.skip_baseline = true; /* the naive 2048^3 matmul alone runs for minutes */
  loom_tune_result r;
  double t0 = now_s();
  loom_status st = loom_tune_task(&tasks[0], use_rules ? NULL : c->space,
                                  use_rules ? 0 : strlen(c->space), "space.py", db, &o, &r, &d);
  out->tune_s = now_s() - t0;
  bool ok = st == LOOM_OK && r.best_ms > 0;
  if (!ok)
    fprintf(stderr, "bench_cpu: %s: tuning failed: %s\n", c->name,
            d.msg ? d.msg : r.rejections ? r.rejections : "no candidate succeeded");
  out->trials = r.trials;
  out->rejected = r.rejected;
  out->failures = r.failures;
  out->flops = loom_tune_flops(tasks[0].func);
  fprintf(stderr, "bench_cpu: %s: tuning spent %.1f s proposing, %.1f s building, %.1f s running\n",
          c->name, r.propose_s, r.build_s, r.run_s);
  loom_tune_result_free(&r);
  loom_model_free(model);
  loom_db_close(db);
  loom_diag_free(&d);
  loom_arena_free(a);
  return ok;
}


/* Rebuilds c's best from its database, times it and its peer on the same
 * inputs, and compares their results. Runs in a child process (below): the
 * OpenMP threads these calls start would hang the runner's later forked
 * children. */
static bool time_case(kcase *c) {
  row *out = &c->r;
  loom_arena *a = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_db *db = NULL;
  if (loom_script_read(c->program, strlen(c->program), c->name, a, &m, &d) != LOOM_OK ||
      loom_db_open(c->db_path, &db, &d) != LOOM_OK) {
    fprintf(stderr, "bench_cpu: %s: %s\n", c->name, d.msg ? d.msg : "out of memory");
    loom_arena_free(a);
    return false;
  }
  loom_builder_options bo = {0};
  int n_params = m->funcs[0]->n_params;
  loom_applied ap;
  loom_build_set b = {0};
  loom_interp_array **arr = calloc((size_t)n_params, sizeof *arr);
  float **bufs = calloc((size_t)n_params, sizeof *bufs);
  float **mine = calloc((size_t)n_params, sizeof *mine);
  const int64_t **shapes = calloc((size_t)n_params, sizeof *shapes);
  bool ok = arr && bufs && mine && shapes &&
            loom_tune_apply_db(m, db, NULL, &ap, &d) == LOOM_OK;
  const loom_func *f = ok ? ap.module->funcs[0] : NULL;
  ok = ok && loom_tune_build(&f, 1, &bo, &b) == LOOM_OK && b.items[0].kernel;
  ok = ok && loom_interp_alloc_args(f, NULL, arr, &d) == LOOM_OK;
  int np = f ? f->n_params : 0;
  if (ok) {
    loom_rng rng;
    loom_rng_seed(&rng, 7);
    for (int i = 0; i < np; i++) {
      loom_interp_fill_random(arr[i], &rng);
      bufs[i] = arr[i]->data;
      shapes[i] = arr[i]->shape;
      mine[i] = malloc((size_t)arr[i]->n_elems * sizeof(float));
      ok = ok && mine[i];
      if (mine[i])
        memcpy(mine[i], bufs[i], (size_t)arr[i]->n_elems * sizeof(float));
    }
  }
  if (ok && c->peer == PEER_CONV && !conv_setup(c, bufs, false)) {
    fprintf(stderr, "bench_cpu: %s: oneDNN refused the convolution\n", c->name);
    ok = false;
  }
  if (ok) {
    void (*set)(int) = (void (*)(int))loom_runtime_lib_symbol(b.libs[0], "loom_set_num_threads");
    if (set)
      set(threads);
    timed lt = {c, mine, b.items[0].kernel, (void **)mine, shapes};
    timed pt = {c, bufs, NULL, NULL, NULL};
    time_pair(&lt, &pt, &out->loom_ms, &out->peer_ms);
    if (c->peer == PEER_CONV) {
      /* The same convolution with oneDNN free to choose its algorithm
       * (Winograd, say): Loom is timed again beside it, as a pair. */
      double loom_again = 0;
      conv_teardown(c);
      if (conv_setup(c, bufs, true))
        time_pair(&lt, &pt, &loom_again, &out->peer_auto_ms);
    }
    /* The output is the last parameter: each element within the runner's
     * float32 tolerance of the peer's, relative to itself and to the
     * largest element (docs/tune.md), as tuning checks against the
     * interpreter. max_err is the worst |x - y| / (|y| + largest |y|). */
    const float *x = mine[np - 1], *y = bufs[np - 1];
    int64_t n_out = arr[np - 1]->n_elems;
    double largest = 0, tol = loom_tune_tolerance(LOOM_FLOAT32);
    for (int64_t i = 0; i < n_out; i++)
      if (isfinite(y[i]) && fabs((double)y[i]) > largest)
        largest = fabs((double)y[i]);
    out->is_ok = true;
    for (int64_t i = 0; i < n_out; i++) {
      double scale = fabs((double)y[i]) + largest;
      double e = fabs((double)x[i] - y[i]) / (scale > 0 ? scale : 1);
      out->max_err = e > out->max_err ? e : out->max_err;
      if (!(e <= tol))
        out->is_ok = false;
    }
  } else if (d.msg) {
    fprintf(stderr, "bench_cpu: %s: %s\n", c->name, d.msg);
  }
  if (c->peer == PEER_CONV)
    conv_teardown(c);
  for (int i = 0; mine && i < np; i++)
    free(mine[i]);
  if (f && arr && arr[0])
    loom_interp_free_args(f, arr);
  free(arr);
  free(bufs);
  free(mine);
  free(shapes);
  loom_tune_build_free(&b);
  if (f)
    loom_tune_applied_free(&ap);
  loom_db_close(db);
  loom_diag_free(&d);
  loom_arena_free(a);
  return ok;
}

/* time_case in a child process, its row sent back through a pipe; the
 * strings it points to are static, the same in both processes. */
static bool time_in_child(kcase *c) {
  int fd[2];
  fflush(stdout);
  fflush(stderr);
  if (pipe(fd))
    return false;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return false;
  }
  if (pid == 0) {
    close(fd[0]);
    bool ok = time_case(c);
    ssize_t w = write(fd[1], &ok, sizeof ok);
    w += write(fd[1], &c->r, sizeof c->r);
    fflush(stdout);
    fflush(stderr);
    _exit(w == (ssize_t)(sizeof ok + sizeof c->r) ? 0 : 1);
  }
  close(fd[1]);
  bool ok = false;
  row r;
  bool got = read(fd[0], &ok, sizeof ok) == (ssize_t)sizeof ok &&
             read(fd[0], &r, sizeof r) == (ssize_t)sizeof r;
  close(fd[0]);
  int status;
  waitpid(pid, &status, 0);
  if (!keep_dir)
    remove_db(c->db_path);
  if (!got)
    return false;
  c->r = r;
  return ok;
}

/* ---- plots -------------------------------------------------------------------- */

static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};

/* Best GFLOP/s of each plotted case against trials (by_time false) or
 * seconds of tuning, as an SVG line chart. */
static void plot(const char *path, kcase *cs, int n, bool by_time) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bench_cpu: cannot write %s\n", path);
    return;
  }
  double xmax = 1, ymax = 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; cs[i].is_plotted && j < cs[i].n_pts; j++) {
      double x = by_time ? cs[i].pts[j].elapsed_s : cs[i].pts[j].trials;
      xmax = x > xmax ? x : xmax;
      ymax = cs[i].pts[j].gflops > ymax ? cs[i].pts[j].gflops : ymax;
    }
  ymax *= 1.1;
  const int W = 640, H = 400, L = 60, R = 170, T = 30, B = 50;
  double pw = W - L - R, ph = H - T - B;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
             "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
  fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"14\">Best GFLOP/s against %s</text>\n", L,
          by_time ? "tuning time" : "trials");
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T + (int)ph, L + (int)pw, T + (int)ph);
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L, T + (int)ph);
  for (int k = 0; k <= 4; k++) {
    double xv = xmax * k / 4, yv = ymax * k / 4;
    double x = L + pw * k / 4, y = T + ph - ph * k / 4;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.*f</text>\n", x, T + (int)ph + 16,
            by_time ? 1 : 0, xv);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n", L - 6, y + 4, yv);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, L + (int)pw, y);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", L + pw / 2, H - 12,
          by_time ? "seconds" : "trials");
  fprintf(f, "<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">GFLOP/s</text>\n",
          T + ph / 2, T + ph / 2);
  int line = 0;
  for (int i = 0; i < n; i++) {
    if (!cs[i].is_plotted || cs[i].n_pts == 0)
      continue;
    const char *col = colors[line % 5];
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
    for (int j = 0; j < cs[i].n_pts; j++) {
      double x = by_time ? cs[i].pts[j].elapsed_s : cs[i].pts[j].trials;
      fprintf(f, "%.1f,%.1f ", L + pw * x / xmax, T + ph - ph * cs[i].pts[j].gflops / ymax);
    }
    fprintf(f, "\"/>\n");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>\n", W - R + 10,
            T + 10 + 18 * line, col);
    fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", W - R + 28, T + 15 + 18 * line, cs[i].name);
    line++;
  }
  fprintf(f, "</svg>\n");
  fclose(f);
}

/* Whether name contains one of the comma-separated words of list. */
static bool is_selected(const char *name, const char *list) {
  if (!list)
    return true;
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    for (const char *q = name; n > 0 && *q; q++)
      if (!strncmp(q, p, n))
        return true;
    p += n + (e != NULL);
  }
  return false;
}

/* ---- main --------------------------------------------------------------------- */

int main(int argc, char **argv) {
  const char *detected;
  if (bench_openblas_setup(argv, &detected))
    return 1;
  int trials = 64;
  const char *out_dir = "bench-out", *space = "auto", *only = NULL;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  threads = online > 0 ? (int)online : 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "usage: bench_cpu [--trials N] [--out DIR] [--space auto|rules|hand] "
                      "[--only NAMES] [--threads N] [--population N] [--keep-db DIR]\n");
      return 2;
    }
    if (!strcmp(a, "--trials"))
      trials = atoi(v);
    else if (!strcmp(a, "--out"))
      out_dir = v;
    else if (!strcmp(a, "--space"))
      space = v;
    else if (!strcmp(a, "--only"))
      only = v;
    else if (!strcmp(a, "--threads"))
      threads = atoi(v);
    else if (!strcmp(a, "--population"))
      population = atoi(v);
    else if (!strcmp(a, "--keep-db"))
      keep_dir = v;
    else {
      fprintf(stderr, "bench_cpu: unknown option '%s'\n", a);
      return 2;
    }
    i++;
  }
  if (trials < 1 || threads < 1 ||
      (strcmp(space, "auto") && strcmp(space, "rules") && strcmp(space, "hand"))) {
    fprintf(stderr, "bench_cpu: bad --trials, --threads or --space\n");
    return 2;
  }
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
  loom_target tg;
  loom_target_detect(&tg);

  static kcase cs[13];
  int n = 0;
  matmul(&cs[n++], "matmul 512^3", 512, 512, 512, false);
  matmul(&cs[n++], "matmul 1024^3", 1024, 1024, 1024, false);
  matmul(&cs[n++], "matmul 2048^3", 2048, 2048, 2048, false);
  matmul(&cs[n++], "matmul NT 512^3", 512, 512, 512, true);
  matmul(&cs[n++], "matmul NT 1024^3", 1024, 1024, 1024, true);
  matmul(&cs[n++], "matmul NT 2048^3", 2048, 2048, 2048, true);
  matmul(&cs[n++], "gemv 1x4096x4096", 1, 4096, 4096, false);
  conv(&cs[n++], "conv2d 56x56x64 3x3", 56, 64);
  conv(&cs[n++], "conv2d 28x28x128 3x3", 28, 128);
  rows(&cs[n++], "softmax 2048x1024", PEER_SOFTMAX, 2048, 1024);
  rows(&cs[n++], "layernorm 2048x1024", PEER_LAYERNORM, 2048, 1024);
  rows(&cs[n++], "row sum 4096x4096", PEER_ROWSUM, 4096, 4096);
  rows(&cs[n++], "add 4096x4096", PEER_ADD, 4096, 4096);

  printf("bench_cpu: %d trials per kernel, %d threads, %d cores, %d-byte vectors\n", trials,
         threads, tg.cpu.cores, tg.cpu.vector_bytes);
  if (detected)
    printf("OpenBLAS: %s kernels (its own detection took this CPU for a %s)\n",
           openblas_get_corename(), detected);
  else
    printf("OpenBLAS: %s kernels, as it detects them\n", openblas_get_corename());
  printf("oneDNN conv: weights reordered once, outside the timed region, to the layout the "
         "primitive asks for; algorithm direct (and, on the next line, oneDNN's choice)\n");
  printf("%-22s %-5s %6s %8s %8s %10s %10s %-18s %6s %s\n", "kernel", "space", "trials",
         "rejected", "tune s", "Loom GF/s", "peer GF/s", "peer", "ratio", "check");
  fflush(stdout);
  int n_failed = 0;
  for (int i = 0; i < n; i++) {
    if (!is_selected(cs[i].name, only))
      continue;
    cs[i].is_tuned = tune_case(&cs[i], i, trials, space, &tg);
    row *r = &cs[i].r;
    if (!cs[i].is_tuned || !time_in_child(&cs[i])) {
      n_failed++;
      printf("%-22s failed (see above)\n", cs[i].name);
      fflush(stdout);
      if (!keep_dir)
        remove_db(cs[i].db_path);
      continue;
    }
    double lg = r->flops / (r->loom_ms * 1e6), pg = r->flops / (r->peer_ms * 1e6);
    /* A wrong kernel gets no speed and no ratio: a number it earned by
     * computing something else would be a false claim. */
    if (!r->is_ok) {
      n_failed++;
      printf("%-22s %-5s %6d %8d %8.1f %10s %10.2f %-18s %6s MISMATCH (max err %.1e)\n",
             r->name, r->space, r->trials, r->rejected, r->tune_s, "-", pg, r->peer, "-",
             r->max_err);
      fflush(stdout);
      continue;
    }
    printf("%-22s %-5s %6d %8d %8.1f %10.2f %10.2f %-18s %6.3f ok (max err %.1e)\n", r->name,
           r->space, r->trials, r->rejected, r->tune_s, lg, pg, r->peer, pg > 0 ? lg / pg : 0,
           r->max_err);
    if (r->peer_auto_ms > 0) {
      double ag = r->flops / (r->peer_auto_ms * 1e6);
      printf("%-22s %-5s %6s %8s %8s %10s %10.2f %-18s %6.3f (oneDNN's own algorithm)\n", "",
             "", "", "", "", "", ag, "oneDNN conv auto", ag > 0 ? lg / ag : 0);
    }
    fflush(stdout);
  }
  mkdir(out_dir, 0777);
  char path[1024];
  snprintf(path, sizeof path, "%s/matmul_by_trials.svg", out_dir);
  plot(path, cs, n, false);
  snprintf(path, sizeof path, "%s/matmul_by_time.svg", out_dir);
  plot(path, cs, n, true);
  printf("plots: %s/matmul_by_trials.svg, %s/matmul_by_time.svg\n", out_dir, out_dir);
  if (n_failed)
    printf("bench_cpu: %d kernels failed or computed a wrong result\n", n_failed);
  return n_failed ? 1 : 0;
}
