/* The C backend's calls of oneDNN: a convolution the dispatch pass marked
 * is printed as the call of a helper made for its call site, printed
 * before the function (emit_library_helpers); the helper makes oneDNN's
 * primitive on its first call and keeps it. oneDNN is opened when the
 * program first runs (loom_library_symbol), so a machine without it gets
 * return code -4, not a failed load. */
#include "codegen/codegen_impl.h"

#include "loom/dispatch.h"

#include <string.h>

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

/* Printed once per file, before the first helper: oneDNN's header when the
 * compiler has it (else LOOM_DNNL stays undefined and the convolutions are
 * printed as their loops too, under #else), the table of its functions,
 * looked up on first use (loom_library_symbol: libdnnl.so.2), and the two
 * functions every call site's helper calls. oneDNN 2's C API; its threads
 * are its own (OpenMP).
 *
 * The weights go to the primitive in the layout it prefers (format_tag_any),
 * reordered from the user's HWIO or OIHW on every call, since a parameter
 * may change between calls: on a 2-core AVX-512 Xeon, 3x3 NHWC at
 * 56x56x64 and 28x28x128, the primitive on plain weights is oneDNN's gemm
 * convolution (1.55 and 1.24 ms), on blocked weights its brgemm one (0.70
 * ms for both, the reorder included: 0.006 and 0.02 ms). */
static const char dnnl_shared[] =
"#ifndef LOOM_DNNL_TRIED\n"
"#define LOOM_DNNL_TRIED 1\n"
"#if defined(__has_include)\n"
"#if __has_include(<dnnl.h>)\n"
"#include <dnnl.h>\n"
"#endif\n"
"#endif\n"
"#if defined(DNNL_VERSION_MAJOR) && DNNL_VERSION_MAJOR == 2\n"
"#define LOOM_DNNL 1\n"
"#define LOOM_DNNL_FNS(X) X(engine_create) X(stream_create) X(memory_desc_init_by_tag) \\\n"
"  X(dilated_convolution_forward_desc_init) X(primitive_attr_create) X(post_ops_create) \\\n"
"  X(post_ops_append_sum) X(primitive_attr_set_post_ops) X(primitive_desc_create) \\\n"
"  X(primitive_create) X(primitive_desc_query_md) X(memory_desc_equal) X(memory_create) \\\n"
"  X(reorder_primitive_desc_create) X(primitive_desc_destroy) X(primitive_attr_destroy) \\\n"
"  X(post_ops_destroy) X(memory_set_data_handle) X(primitive_execute) X(stream_wait) \\\n"
"  X(post_ops_append_binary) X(post_ops_append_eltwise) X(pooling_v2_forward_desc_init) \\\n"
"  X(matmul_desc_init)\n"
"#define LOOM_DNNL_FIELD(f) __typeof__(&dnnl_##f) f;\n"
"#define LOOM_DNNL_KEPT 16\n"
"#define LOOM_DNNL_POSTS 4\n"
"static struct { LOOM_DNNL_FNS(LOOM_DNNL_FIELD) } loom_dnnl;\n"
"/* 0 when every function was found, -4 when one was not. */\n"
"static int32_t loom_dnnl_open(void) {\n"
"  static int32_t state; /* 0: not looked up yet, 1: found, -4: missing */\n"
"#define LOOM_DNNL_FIND(f) \\\n"
"  if (!(loom_dnnl.f = (__typeof__(&dnnl_##f))loom_library_symbol(\"dnnl_\" #f))) state = -4;\n"
"  if (!state) {\n"
"    state = 1;\n"
"    LOOM_DNNL_FNS(LOOM_DNNL_FIND)\n"
"  }\n"
"  return state == 1 ? 0 : state;\n"
"}\n"
"/* Constant weights reordered into a primitive's layout, by the address\n"
" * they came from: one call site serves every layer of its shape. */\n"
"typedef struct loom_dnnl_kept {\n"
"  struct { const float *from; dnnl_memory_t mem; } at[LOOM_DNNL_KEPT];\n"
"  int n;\n"
"} loom_dnnl_kept;\n"
"/* The memory holding the constant weights at w (user's data handle) in\n"
" * layout md: kept from an earlier call, else made (in place of the oldest\n"
" * when the table is full) and moved into by the reorder in; NULL when\n"
" * oneDNN fails. */\n"
"static dnnl_memory_t loom_dnnl_keep(loom_dnnl_kept *t, dnnl_engine_t e, dnnl_stream_t s,\n"
"                                    dnnl_primitive_t in, dnnl_memory_t user,\n"
"                                    const dnnl_memory_desc_t *md, const float *w) {\n"
"  for (int i = 0; i < t->n && i < LOOM_DNNL_KEPT; i++)\n"
"    if (t->at[i].from == w) return t->at[i].mem;\n"
"  int i = t->n++ % LOOM_DNNL_KEPT;\n"
"  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, NULL}};\n"
"  t->at[i].from = NULL;\n"
"  if (!t->at[i].mem && loom_dnnl.memory_create(&t->at[i].mem, md, e, DNNL_MEMORY_ALLOCATE))\n"
"    return NULL;\n"
"  args[1].memory = t->at[i].mem;\n"
"  if (loom_dnnl.primitive_execute(in, s, 2, args)) return NULL;\n"
"  t->at[i].from = w;\n"
"  return t->at[i].mem;\n"
"}\n"
"/* One call site's convolution, made on its first call (the shapes are\n"
" * constants) and kept. One caller at a time. Each of src, wei and dst is\n"
" * the memory the primitive uses and the user's; when oneDNN prefers\n"
" * another layout they differ, and reorders move the data between them. */\n"
"typedef struct loom_dnnl_conv {\n"
"  int32_t state; /* 0: not made yet, 1: ready, else the code making it failed with */\n"
"  dnnl_engine_t engine;\n"
"  dnnl_stream_t stream;\n"
"  dnnl_primitive_t conv;\n"
"  dnnl_primitive_t src_in, wei_in, dst_in, dst_out; /* reorders; NULL: none needed */\n"
"  dnnl_memory_t src, wei, dst, src_user, wei_user, dst_user;\n"
"  dnnl_memory_desc_t wei_md; /* the layout of wei */\n"
"  dnnl_memory_t bias, src1[LOOM_DNNL_POSTS]; /* the bias, each added tensor; the user's */\n"
"  int n_src1;\n"
"  const char *post; /* the post-ops after the sum (beta), as loom_dnnl_conv_make spells them */\n"
"  int post_base;    /* the index of post[0] among the post-ops */\n"
"  int is_sum_first; /* post[0], an addition, is oneDNN's sum: dst holds the tensor first */\n"
"  size_t dst_bytes;\n"
"  loom_dnnl_kept kept;\n"
"} loom_dnnl_conv;\n"
"/* The user's memory of layout user (its data set at each call) and the\n"
" * primitive's of layout best: the same memory when the layouts are equal,\n"
" * else one oneDNN allocates, with the reorders into it (*in, when in is\n"
" * not NULL) and out of it (*out, when out is not NULL). */\n"
"static dnnl_status_t loom_dnnl_place(loom_dnnl_conv *c, const dnnl_memory_desc_t *user,\n"
"                                     const dnnl_memory_desc_t *best, dnnl_memory_t *user_mem,\n"
"                                     dnnl_memory_t *mem, dnnl_primitive_t *in,\n"
"                                     dnnl_primitive_t *out) {\n"
"  dnnl_primitive_desc_t rpd = NULL;\n"
"  dnnl_status_t st = loom_dnnl.memory_create(user_mem, user, c->engine, DNNL_MEMORY_NONE);\n"
"  if (st || loom_dnnl.memory_desc_equal(best, user)) {\n"
"    *mem = *user_mem;\n"
"    return st;\n"
"  }\n"
"  st = loom_dnnl.memory_create(mem, best, c->engine, DNNL_MEMORY_ALLOCATE);\n"
"  if (!st && in) st = loom_dnnl.reorder_primitive_desc_create(&rpd, user, c->engine, best,\n"
"                                                              c->engine, NULL);\n"
"  if (!st && in) st = loom_dnnl.primitive_create(in, rpd);\n"
"  if (rpd) loom_dnnl.primitive_desc_destroy(rpd);\n"
"  rpd = NULL;\n"
"  if (!st && out) st = loom_dnnl.reorder_primitive_desc_create(&rpd, best, c->engine, user,\n"
"                                                               c->engine, NULL);\n"
"  if (!st && out) st = loom_dnnl.primitive_create(out, rpd);\n"
"  if (rpd) loom_dnnl.primitive_desc_destroy(rpd);\n"
"  return st;\n"
"}\n"
"/* s: n, ci, ih, iw, co, oh, ow, kh, kw, strides, dilations (1: none), padding\n"
" * top, left, bottom, right. 1 when made, -4 without oneDNN, -5 when it\n"
" * refuses. The weights, and the data in NCHW (whose plain layout oneDNN\n"
" * computes only by its gemm convolution), take the layouts oneDNN prefers.\n"
" * A bias per output channel when has_bias, then the post-ops post spells:\n"
" * 'a' adds a tensor of dst's shape and layout, 'r' is a ReLU (NHWC). */\n"
"static int32_t loom_dnnl_conv_make(loom_dnnl_conv *c, const int64_t *s, int is_nchw, int beta,\n"
"                                   int has_bias, const char *post) {\n"
"  if (loom_dnnl_open()) return -4;\n"
"  dnnl_dims_t src_d = {s[0], s[1], s[2], s[3]}, wei_d = {s[4], s[1], s[7], s[8]};\n"
"  dnnl_dims_t dst_d = {s[0], s[4], s[5], s[6]}, strides = {s[9], s[10]};\n"
"  dnnl_dims_t dilates = {s[11] - 1, s[12] - 1}, pad_l = {s[13], s[14]}, pad_r = {s[15], s[16]};\n"
"  dnnl_format_tag_t data_tag = is_nchw ? dnnl_nchw : dnnl_nhwc;\n"
"  dnnl_format_tag_t wei_tag = is_nchw ? dnnl_oihw : dnnl_hwio;\n"
"  dnnl_format_tag_t data_pick = is_nchw ? dnnl_format_tag_any : data_tag;\n"
"  dnnl_memory_desc_t src_md, wei_md, dst_md, src_pick, wei_pick, dst_pick, bias_md;\n"
"  dnnl_dims_t bias_d = {s[4]};\n"
"  dnnl_convolution_desc_t cd;\n"
"  dnnl_primitive_desc_t pd = NULL;\n"
"  dnnl_primitive_attr_t attr = NULL;\n"
"  dnnl_post_ops_t ops = NULL;\n"
"  const dnnl_memory_desc_t *src_best = NULL, *wei_best = NULL, *dst_best = NULL;\n"
"  dnnl_status_t st = loom_dnnl.engine_create(&c->engine, dnnl_cpu, 0);\n"
"  if (!st) st = loom_dnnl.stream_create(&c->stream, c->engine, dnnl_stream_default_flags);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&src_md, 4, src_d, dnnl_f32, data_tag);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&wei_md, 4, wei_d, dnnl_f32, wei_tag);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&dst_md, 4, dst_d, dnnl_f32, data_tag);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&src_pick, 4, src_d, dnnl_f32, data_pick);\n"
"  if (!st)\n"
"    st = loom_dnnl.memory_desc_init_by_tag(&wei_pick, 4, wei_d, dnnl_f32, dnnl_format_tag_any);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&dst_pick, 4, dst_d, dnnl_f32, data_pick);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&bias_md, 1, bias_d, dnnl_f32, dnnl_x);\n"
"  if (!st) st = loom_dnnl.dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,\n"
"      dnnl_convolution_direct, &src_pick, &wei_pick, has_bias ? &bias_md : NULL, &dst_pick,\n"
"      strides, dilates, pad_l, pad_r);\n"
"  /* Y += conv: oneDNN's sum post-op adds what dst held. */\n"
"  if (!st) st = loom_dnnl.primitive_attr_create(&attr);\n"
"  if (!st && (beta || *post)) st = loom_dnnl.post_ops_create(&ops);\n"
"  if (!st && beta) st = loom_dnnl.post_ops_append_sum(ops, 1.0f);\n"
"  /* A first addition is a sum on dst, which the tensor is copied into:\n"
"   * oneDNN's brgemm convolution takes a sum, but no binary post-op. */\n"
"  c->is_sum_first = post[0] == 'a' && !beta;\n"
"  for (const char *p = post; !st && *p; p++)\n"
"    st = *p == 'r' ? loom_dnnl.post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f)\n"
"         : p == post && c->is_sum_first ? loom_dnnl.post_ops_append_sum(ops, 1.0f)\n"
"                                         : loom_dnnl.post_ops_append_binary(ops, dnnl_binary_add,\n"
"                                                                            &dst_md);\n"
"  if (!st && ops) st = loom_dnnl.primitive_attr_set_post_ops(attr, ops);\n"
"  if (!st) st = loom_dnnl.primitive_desc_create(&pd, &cd, attr, c->engine, NULL);\n"
"  if (!st) st = loom_dnnl.primitive_create(&c->conv, pd);\n"
"  if (!st && (!(src_best = loom_dnnl.primitive_desc_query_md(pd, dnnl_query_src_md, 0)) ||\n"
"              !(wei_best = loom_dnnl.primitive_desc_query_md(pd, dnnl_query_weights_md, 0)) ||\n"
"              !(dst_best = loom_dnnl.primitive_desc_query_md(pd, dnnl_query_dst_md, 0))))\n"
"    st = dnnl_runtime_error;\n"
"  if (!st) st = loom_dnnl_place(c, &src_md, src_best, &c->src_user, &c->src, &c->src_in, NULL);\n"
"  if (!st) st = loom_dnnl_place(c, &wei_md, wei_best, &c->wei_user, &c->wei, &c->wei_in, NULL);\n"
"  if (!st) c->wei_md = *wei_best;\n"
"  if (!st) st = loom_dnnl_place(c, &dst_md, dst_best, &c->dst_user, &c->dst,\n"
"                                beta ? &c->dst_in : NULL, &c->dst_out);\n"
"  if (!st && has_bias)\n"
"    st = loom_dnnl.memory_create(&c->bias, &bias_md, c->engine, DNNL_MEMORY_NONE);\n"
"  c->post = post;\n"
"  c->post_base = beta;\n"
"  c->dst_bytes = (size_t)(s[0] * s[4] * s[5] * s[6]) * sizeof(float);\n"
"  for (const char *p = post + c->is_sum_first; !st && *p && c->n_src1 < LOOM_DNNL_POSTS; p++)\n"
"    if (*p == 'a')\n"
"      st = loom_dnnl.memory_create(&c->src1[c->n_src1++], &dst_md, c->engine, DNNL_MEMORY_NONE);\n"
"  if (pd) loom_dnnl.primitive_desc_destroy(pd);\n"
"  if (attr) loom_dnnl.primitive_attr_destroy(attr);\n"
"  if (ops) loom_dnnl.post_ops_destroy(ops);\n"
"  return st ? -5 : 1;\n"
"}\n"
"/* Runs reorder r from memory a to memory b, when there is one. */\n"
"static dnnl_status_t loom_dnnl_move(loom_dnnl_conv *c, dnnl_primitive_t r, dnnl_memory_t a,\n"
"                                    dnnl_memory_t b) {\n"
"  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}};\n"
"  return r ? loom_dnnl.primitive_execute(r, c->stream, 2, args) : dnnl_success;\n"
"}\n"

"/* y = conv(x, w) (+ y), each moved into the primitive's layout first and\n"
" * y back after, with the bias b and the tensors added (src1, in the\n"
" * post-ops' order) when the primitive has them: 0, or -5 when oneDNN\n"
" * fails. Constant weights (the function's layout-free buffer: a model's)\n"
" * are moved once for each address they are given at. */\n"
"static int32_t loom_dnnl_conv_run(loom_dnnl_conv *c, const float *x, const float *w, float *y,\n"
"                                  const float *b, const float *const *src1, int is_const_w) {\n"
"  dnnl_exec_arg_t args[4 + LOOM_DNNL_POSTS] = {{DNNL_ARG_SRC, c->src},\n"
"                                               {DNNL_ARG_WEIGHTS, c->wei},\n"
"                                               {DNNL_ARG_DST, c->dst}};\n"
"  int n = 3;\n"
"  dnnl_status_t st = dnnl_success;\n"
"  if (c->bias) {\n"
"    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, c->bias};\n"
"    st = loom_dnnl.memory_set_data_handle(c->bias, (void *)b);\n"
"  }\n"
"  for (int k = c->is_sum_first, i = 0; !st && c->post[k]; k++) {\n"
"    if (c->post[k] != 'a') continue; /* the i-th binary addition: post-op post_base + k */\n"
"    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(c->post_base + k) |\n"
"                                  DNNL_ARG_SRC_1, c->src1[i]};\n"
"    st = loom_dnnl.memory_set_data_handle(c->src1[i], (void *)src1[c->is_sum_first + i]);\n"
"    i++;\n"
"  }\n"
"  if (!st && c->is_sum_first && y != src1[0]) memcpy(y, src1[0], c->dst_bytes);\n"
"  if (!st) st = loom_dnnl.memory_set_data_handle(c->src_user, (void *)x);\n"
"  if (!st) st = loom_dnnl.memory_set_data_handle(c->wei_user, (void *)w);\n"
"  if (!st) st = loom_dnnl.memory_set_data_handle(c->dst_user, y);\n"
"  if (!st) st = loom_dnnl_move(c, c->src_in, c->src_user, c->src);\n"
"  if (!st && is_const_w && c->wei_in)\n"
"    st = (args[1].memory = loom_dnnl_keep(&c->kept, c->engine, c->stream, c->wei_in,\n"
"                                          c->wei_user, &c->wei_md, w))\n"
"             ? dnnl_success : dnnl_runtime_error;\n"
"  else if (!st)\n"
"    st = loom_dnnl_move(c, c->wei_in, c->wei_user, c->wei);\n"
"  if (!st) st = loom_dnnl_move(c, c->dst_in, c->dst_user, c->dst);\n"
"  if (!st) st = loom_dnnl.primitive_execute(c->conv, c->stream, n, args);\n"
"  if (!st) st = loom_dnnl_move(c, c->dst_out, c->dst, c->dst_user);\n"
"  if (!st) st = loom_dnnl.stream_wait(c->stream);\n"
"  return st ? -5 : 0;\n"
"}\n"
"/* One call site's max pool, made on its first call and kept, on the\n"
" * user's memory as it is (oneDNN pools NHWC and NCHW alike). */\n"
"typedef struct loom_dnnl_pool {\n"
"  int32_t state; /* as a conv's */\n"
"  dnnl_engine_t engine;\n"
"  dnnl_stream_t stream;\n"
"  dnnl_primitive_t pool;\n"
"  dnnl_memory_t src, dst;\n"
"} loom_dnnl_pool;\n"
"/* s: n, c, ih, iw, oh, ow, kh, kw, strides, dilations (1: none), padding\n"
" * top, left, bottom, right. 1 when made, -4 without oneDNN, -5 when it\n"
" * refuses. */\n"
"static int32_t loom_dnnl_pool_make(loom_dnnl_pool *c, const int64_t *s, int is_nchw) {\n"
"  if (loom_dnnl_open()) return -4;\n"
"  dnnl_dims_t src_d = {s[0], s[1], s[2], s[3]}, dst_d = {s[0], s[1], s[4], s[5]};\n"
"  dnnl_dims_t kernel = {s[6], s[7]}, strides = {s[8], s[9]};\n"
"  dnnl_dims_t dilates = {s[10] - 1, s[11] - 1}, pad_l = {s[12], s[13]}, pad_r = {s[14], s[15]};\n"
"  dnnl_format_tag_t tag = is_nchw ? dnnl_nchw : dnnl_nhwc;\n"
"  dnnl_memory_desc_t src_md, dst_md;\n"
"  dnnl_pooling_v2_desc_t pdesc;\n"
"  dnnl_primitive_desc_t pd = NULL;\n"
"  dnnl_status_t st = loom_dnnl.engine_create(&c->engine, dnnl_cpu, 0);\n"
"  if (!st) st = loom_dnnl.stream_create(&c->stream, c->engine, dnnl_stream_default_flags);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&src_md, 4, src_d, dnnl_f32, tag);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&dst_md, 4, dst_d, dnnl_f32, tag);\n"
"  if (!st) st = loom_dnnl.pooling_v2_forward_desc_init(&pdesc, dnnl_forward_inference,\n"
"      dnnl_pooling_max, &src_md, &dst_md, strides, kernel, dilates, pad_l, pad_r);\n"
"  if (!st) st = loom_dnnl.primitive_desc_create(&pd, &pdesc, NULL, c->engine, NULL);\n"
"  if (!st) st = loom_dnnl.primitive_create(&c->pool, pd);\n"
"  if (!st) st = loom_dnnl.memory_create(&c->src, &src_md, c->engine, DNNL_MEMORY_NONE);\n"
"  if (!st) st = loom_dnnl.memory_create(&c->dst, &dst_md, c->engine, DNNL_MEMORY_NONE);\n"
"  if (pd) loom_dnnl.primitive_desc_destroy(pd);\n"
"  return st ? -5 : 1;\n"
"}\n"
"/* One call site's product by constant weights (a layer's), made on its\n"
" * first call and kept: the weights go to the layout oneDNN's matmul\n"
" * prefers, once for each address they are given at. */\n"
"typedef struct loom_dnnl_matmul {\n"
"  int32_t state; /* as a conv's */\n"
"  dnnl_engine_t engine;\n"
"  dnnl_stream_t stream;\n"
"  dnnl_primitive_t mm, wei_in; /* the product; the weights' reorder, NULL: none needed */\n"
"  dnnl_memory_t src, wei_user, dst;\n"
"  dnnl_memory_desc_t wei_md;\n"
"  loom_dnnl_kept kept;\n"
"} loom_dnnl_matmul;\n"
"/* s: m, n, k, A transposed (stored [k, m]), B transposed (stored [n, k]).\n"
" * 1 when made, -4 without oneDNN, -5 when it refuses. C += A B: beta. */\n"
"static int32_t loom_dnnl_matmul_make(loom_dnnl_matmul *c, const int64_t *s, int beta) {\n"
"  if (loom_dnnl_open()) return -4;\n"
"  dnnl_dims_t a_d = {s[0], s[2]}, b_d = {s[2], s[1]}, c_d = {s[0], s[1]};\n"
"  dnnl_memory_desc_t a_md, b_md, b_pick, c_md;\n"
"  dnnl_matmul_desc_t md;\n"
"  dnnl_primitive_desc_t pd = NULL, rpd = NULL;\n"
"  dnnl_primitive_attr_t attr = NULL;\n"
"  dnnl_post_ops_t ops = NULL;\n"
"  const dnnl_memory_desc_t *best = NULL;\n"
"  dnnl_status_t st = loom_dnnl.engine_create(&c->engine, dnnl_cpu, 0);\n"
"  if (!st) st = loom_dnnl.stream_create(&c->stream, c->engine, dnnl_stream_default_flags);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&a_md, 2, a_d, dnnl_f32, s[3] ? dnnl_ba : dnnl_ab);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&b_md, 2, b_d, dnnl_f32, s[4] ? dnnl_ba : dnnl_ab);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&b_pick, 2, b_d, dnnl_f32, dnnl_format_tag_any);\n"
"  if (!st) st = loom_dnnl.memory_desc_init_by_tag(&c_md, 2, c_d, dnnl_f32, dnnl_ab);\n"
"  if (!st) st = loom_dnnl.matmul_desc_init(&md, &a_md, &b_pick, NULL, &c_md);\n"
"  if (!st) st = loom_dnnl.primitive_attr_create(&attr);\n"
"  if (!st && beta) st = loom_dnnl.post_ops_create(&ops);\n"
"  if (!st && beta) st = loom_dnnl.post_ops_append_sum(ops, 1.0f);\n"
"  if (!st && beta) st = loom_dnnl.primitive_attr_set_post_ops(attr, ops);\n"
"  if (!st) st = loom_dnnl.primitive_desc_create(&pd, &md, attr, c->engine, NULL);\n"
"  if (!st) st = loom_dnnl.primitive_create(&c->mm, pd);\n"
"  if (!st && !(best = loom_dnnl.primitive_desc_query_md(pd, dnnl_query_weights_md, 0)))\n"
"    st = dnnl_runtime_error;\n"
"  if (!st) st = loom_dnnl.memory_create(&c->src, &a_md, c->engine, DNNL_MEMORY_NONE);\n"
"  if (!st) st = loom_dnnl.memory_create(&c->dst, &c_md, c->engine, DNNL_MEMORY_NONE);\n"
"  if (!st) st = loom_dnnl.memory_create(&c->wei_user, &b_md, c->engine, DNNL_MEMORY_NONE);\n"
"  if (!st) c->wei_md = *best;\n"
"  if (!st && !loom_dnnl.memory_desc_equal(best, &b_md))\n"
"    st = loom_dnnl.reorder_primitive_desc_create(&rpd, &b_md, c->engine, best, c->engine, NULL);\n"
"  if (!st && rpd) st = loom_dnnl.primitive_create(&c->wei_in, rpd);\n"
"  if (rpd) loom_dnnl.primitive_desc_destroy(rpd);\n"
"  if (pd) loom_dnnl.primitive_desc_destroy(pd);\n"
"  if (attr) loom_dnnl.primitive_attr_destroy(attr);\n"
"  if (ops) loom_dnnl.post_ops_destroy(ops);\n"
"  return st ? -5 : 1;\n"
"}\n"
"/* c (+)= a b, b the constant weights: 0, or -5 when oneDNN fails. */\n"
"static int32_t loom_dnnl_matmul_run(loom_dnnl_matmul *c, const float *a, const float *b,\n"
"                                    float *y) {\n"
"  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, c->wei_user},\n"
"                             {DNNL_ARG_DST, c->dst}};\n"
"  dnnl_status_t st = loom_dnnl.memory_set_data_handle(c->src, (void *)a);\n"
"  if (!st) st = loom_dnnl.memory_set_data_handle(c->dst, y);\n"
"  if (!st) st = loom_dnnl.memory_set_data_handle(c->wei_user, (void *)b);\n"
"  if (!st && c->wei_in)\n"
"    st = (args[1].memory = loom_dnnl_keep(&c->kept, c->engine, c->stream, c->wei_in,\n"
"                                          c->wei_user, &c->wei_md, b))\n"
"             ? dnnl_success : dnnl_runtime_error;\n"
"  if (!st) st = loom_dnnl.primitive_execute(c->mm, c->stream, 3, args);\n"
"  if (!st) st = loom_dnnl.stream_wait(c->stream);\n"
"  return st ? -5 : 0;\n"
"}\n"
"/* y = the max pool of x: 0, or -5 when oneDNN fails. */\n"
"static int32_t loom_dnnl_pool_run(loom_dnnl_pool *c, const float *x, float *y) {\n"
"  dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_DST, c->dst}};\n"
"  dnnl_status_t st = loom_dnnl.memory_set_data_handle(c->src, (void *)x);\n"
"  if (!st) st = loom_dnnl.memory_set_data_handle(c->dst, y);\n"
"  if (!st) st = loom_dnnl.primitive_execute(c->pool, c->stream, 2, args);\n"
"  if (!st) st = loom_dnnl.stream_wait(c->stream);\n"
"  return st ? -5 : 0;\n"
"}\n"
"#endif\n"
"#endif\n";

typedef struct seq_ctx {
  const loom_stmt *loop;
  const loom_stmt *seq; /* the sequence holding loop; NULL: none */
  int at;               /* loop's place in it */
} seq_ctx;

static loom_visit find_seq(void *ctx, loom_stmt *s) {
  seq_ctx *p = ctx;
  if (s->kind != LOOM_STMT_SEQ)
    return LOOM_VISIT_GO;
  for (int i = 0; i < s->u.seq.n_stmts; i++)
    if (s->u.seq.stmts[i] == p->loop) {
      p->seq = s;
      p->at = i;
      return LOOM_VISIT_STOP;
    }
  return LOOM_VISIT_GO;
}

/* The sequence of statements loop is in, and its place there. */
static seq_ctx seq_of(const loom_func *f, const loom_stmt *loop) {
  seq_ctx p = {loop, NULL, 0};
  loom_ir_visitor v = {.stmt_pre = find_seq, .ctx = &p};
  loom_ir_visit_stmt(&v, f->body);
  return p;
}

typedef struct stored_ctx {
  const loom_var *data; /* the one buffer stored to; NULL: none yet */
  bool is_many;
} stored_ctx;

static loom_visit note_store(void *ctx, loom_stmt *s) {
  stored_ctx *c = ctx;
  if (s->kind == LOOM_STMT_STORE) {
    if (c->data && c->data != s->u.store.buffer->data)
      c->is_many = true;
    c->data = s->u.store.buffer->data;
  }
  return LOOM_VISIT_GO;
}

/* The data of the one buffer the lowered nest under loop stores to; NULL
 * when it stores to none or to several. */
static const loom_var *stored_by(const loom_stmt *loop) {
  stored_ctx c = {NULL, false};
  loom_ir_visitor v = {.stmt_pre = note_store, .ctx = &c};
  loom_ir_visit_stmt(&v, loop->u.loop.body);
  return c.is_many ? NULL : c.data;
}

/* The nests after the conv that its mark gives the call are still as the
 * dispatch pass left them (a schedule applied after it may have changed
 * them; then the conv and they are printed as their loops): the nests
 * right after it, marked taken, each storing one buffer that only it and
 * the next read, the last storing out. */
static bool has_post_as_marked(const loom_func *f, const loom_stmt *loop, const loom_conv *c) {
  if (!c->out)
    return true;
  seq_ctx p = seq_of(f, loop);
  int steps = (c->bias != NULL) + c->n_post;
  if (!p.seq || p.at + steps >= p.seq->u.seq.n_stmts)
    return false;
  loom_stmt *const *nest = &p.seq->u.seq.stmts[p.at];
  for (int j = 1; j <= steps; j++) {
    const loom_var *made = j == 1 ? c->y->data : stored_by(nest[j - 1]);
    if (nest[j]->kind != LOOM_STMT_FOR ||
        !loom_ir_attr_get(nest[j]->u.loop.annotations, nest[j]->u.loop.n_annotations,
                          "loom.taken_by") ||
        !made || made == c->out->data ||
        loom_ir_buffer_uses(f->body, made).loads !=
            loom_ir_buffer_uses(nest[j - 1], made).loads +
                loom_ir_buffer_uses(nest[j], made).loads)
      return false;
  }
  return stored_by(nest[steps]) == c->out->data;
}

/* Is b a parameter the function lists in "layout_free_buffers": a weight
 * that holds the same data on every call (TVM's meaning: its layout may be
 * rewritten ahead of time)? */
static bool is_layout_free(const loom_func *f, const loom_buffer *b) {
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer == b)
      return loom_ir_func_is_layout_free(f, i);
  return false;
}

/* Whether the conv a marked loop describes can be printed as the call
 * here: a C function, outside parallel loops, its nest storing to Y
 * alone, the nests after it it takes as they were. */
static bool is_conv_call(emitter *E, const loom_stmt *loop, loom_conv *c) {
  return !E->is_cuda && E->func && E->parallel_depth == 0 && loop != E->as_loops &&
         loom_dispatch_marked_conv(E->func, loop, c) && emit_stores_only(loop, c->y) &&
         has_post_as_marked(E->func, loop, c);
}

/* Whether loop is a product marked for oneDNN's matmul that can be printed
 * as its call here, as a conv: B must be a layer's constant weights (the
 * helper keeps them reordered by address), else a hand-written mark is
 * printed as its loops. */
static bool is_matmul_call(emitter *E, const loom_stmt *loop, loom_gemm *g) {
  return !E->is_cuda && E->func && E->parallel_depth == 0 && loop != E->as_loops &&
         loom_dispatch_marked_gemm(E->func, loop, g) && !strcmp(g->routine, "dnnl_matmul") &&
         emit_stores_only(loop, g->c) && is_layout_free(E->func, g->b);
}

/* The same for a marked pool. */
static bool is_pool_call(emitter *E, const loom_stmt *loop, loom_pool *p) {
  return !E->is_cuda && E->func && E->parallel_depth == 0 && loop != E->as_loops &&
         loom_dispatch_marked_pool(E->func, loop, p) && emit_stores_only(loop, p->y);
}

typedef struct site_ctx {
  const loom_func *f;
  const loom_stmt *loop; /* the site to number; NULL: count them all */
  int index;             /* the sites before it */
  bool is_found;
} site_ctx;

static loom_visit count_site(void *ctx, loom_stmt *s) {
  site_ctx *c = ctx;
  loom_conv conv;
  loom_pool pool;
  loom_gemm g;
  if (s == c->loop) {
    c->is_found = true;
    return LOOM_VISIT_STOP;
  }
  if (s->kind == LOOM_STMT_FOR &&
      (loom_dispatch_marked_conv(c->f, s, &conv) || loom_dispatch_marked_pool(c->f, s, &pool) ||
       (loom_dispatch_marked_gemm(c->f, s, &g) && !strcmp(g.routine, "dnnl_matmul"))))
    c->index++;
  return LOOM_VISIT_GO;
}

/* The number of loop among the function's oneDNN calls (convolutions,
 * pools, products), in the order they are printed: the helper's name. */
static int site_of(const loom_func *f, const loom_stmt *loop) {
  site_ctx c = {f, loop, 0, false};
  loom_ir_visitor v = {.stmt_pre = count_site, .ctx = &c};
  loom_ir_visit_stmt(&v, f->body);
  return c.index;
}


/* The post-ops as loom_dnnl_conv_make spells them: 'a' an addition, 'r'
 * a ReLU. */
static void post_spelling(const loom_conv *c, char *out) {
  for (int i = 0; i < c->n_post; i++)
    out[i] = c->post[i].kind == LOOM_CONV_POST_ADD ? 'a' : 'r';
  out[c->n_post] = 0;
}

static void emit_conv_helper(emitter *E, const loom_conv *c, int site) {
  char post[LOOM_CONV_MAX_POST + 1];
  post_spelling(c, post);
  put(E, dnnl_shared);
  loom_buf_printf(E->out,
                  "#ifdef LOOM_DNNL\n"
                  "/* %s, convolution %d: %s = %s (*) %s, %s%s%s%s%s, by oneDNN. */\n"
                  "__attribute__((unused)) static int32_t loom_conv_%s_%d(const float *x, "
                  "const float *w, float *y, const float *b, const float *const *src1) {\n"
                  "  static loom_dnnl_conv c;\n",
                  E->func->name, site, c->out ? c->out->name : c->y->name, c->x->name,
                  c->w->name, c->is_nchw ? "NCHW/OIHW" : "NHWC/HWIO",
                  c->bias ? ", a bias" : "", *post ? ", post-ops \"" : "", post,
                  *post ? "\"" : "", E->symbol, site);
  int64_t s[17] = {c->n,  c->ci, c->ih, c->iw, c->co, c->oh, c->ow, c->kh, c->kw,
                   c->stride[0], c->stride[1], c->dilation[0], c->dilation[1],
                   c->pad_lo[0], c->pad_lo[1], c->pad_hi[0], c->pad_hi[1]};
  put(E, "  static const int64_t shape[17] = {");
  for (int i = 0; i < 17; i++)
    loom_buf_printf(E->out, "%s%lld", i ? ", " : "", (long long)s[i]);
  loom_buf_printf(E->out,
                  "};\n"
                  "  if (c.state == 0) c.state = loom_dnnl_conv_make(&c, shape, %d, %d, %d, \"%s\");\n"
                  "  return c.state == 1 ? loom_dnnl_conv_run(&c, x, w, y, b, src1, %d) : c.state;\n"
                  "}\n"
                  "#endif\n",
                  c->is_nchw, c->beta, c->bias != NULL, post, is_layout_free(E->func, c->w));
}

typedef struct helpers_ctx {
  emitter *E;
  int site;
} helpers_ctx;

static void emit_pool_helper(emitter *E, const loom_pool *p, int site) {
  put(E, dnnl_shared);
  loom_buf_printf(E->out,
                  "#ifdef LOOM_DNNL\n"
                  "/* %s, pool %d: %s = the max pool of %s, %s, by oneDNN. */\n"
                  "__attribute__((unused)) static int32_t loom_pool_%s_%d(const float *x, "
                  "float *y) {\n"
                  "  static loom_dnnl_pool c;\n"
                  "  static const int64_t shape[16] = {",
                  E->func->name, site, p->y->name, p->x->name, p->is_nchw ? "NCHW" : "NHWC",
                  E->symbol, site);
  int64_t s[16] = {p->n,  p->c,  p->ih, p->iw, p->oh, p->ow, p->kh, p->kw,
                   p->stride[0], p->stride[1], p->dilation[0], p->dilation[1],
                   p->pad_lo[0], p->pad_lo[1], p->pad_hi[0], p->pad_hi[1]};
  for (int i = 0; i < 16; i++)
    loom_buf_printf(E->out, "%s%lld", i ? ", " : "", (long long)s[i]);
  loom_buf_printf(E->out,
                  "};\n"
                  "  if (c.state == 0) c.state = loom_dnnl_pool_make(&c, shape, %d);\n"
                  "  return c.state == 1 ? loom_dnnl_pool_run(&c, x, y) : c.state;\n"
                  "}\n"
                  "#endif\n",
                  p->is_nchw);
}

static void emit_matmul_helper(emitter *E, const loom_gemm *g, int site) {
  put(E, dnnl_shared);
  loom_buf_printf(E->out,
                  "#ifdef LOOM_DNNL\n"
                  "/* %s, product %d: %s %s= %s%s x %s%s, by oneDNN. */\n"
                  "__attribute__((unused)) static int32_t loom_matmul_%s_%d(const float *a, "
                  "const float *b, float *c) {\n"
                  "  static loom_dnnl_matmul m;\n"
                  "  static const int64_t shape[5] = {%lld, %lld, %lld, %d, %d};\n"
                  "  if (m.state == 0) m.state = loom_dnnl_matmul_make(&m, shape, %d);\n"
                  "  return m.state == 1 ? loom_dnnl_matmul_run(&m, a, b, c) : m.state;\n"
                  "}\n"
                  "#endif\n",
                  E->func->name, site, g->c->name, g->beta ? "+" : "", g->a->name,
                  g->trans_a ? "^T" : "", g->b->name, g->trans_b ? "^T" : "", E->symbol, site,
                  (long long)g->m, (long long)g->n, (long long)g->k, g->trans_a, g->trans_b,
                  g->beta);
}

static loom_visit helper_at(void *ctx, loom_stmt *s) {
  helpers_ctx *h = ctx;
  loom_conv c;
  loom_pool p;
  loom_gemm g;
  if (s->kind != LOOM_STMT_FOR)
    return LOOM_VISIT_GO;
  if (loom_dispatch_marked_conv(h->E->func, s, &c))
    emit_conv_helper(h->E, &c, h->site++);
  else if (loom_dispatch_marked_pool(h->E->func, s, &p))
    emit_pool_helper(h->E, &p, h->site++);
  else if (loom_dispatch_marked_gemm(h->E->func, s, &g) && !strcmp(g.routine, "dnnl_matmul"))
    emit_matmul_helper(h->E, &g, h->site++);
  return LOOM_VISIT_GO;
}

void emit_library_helpers(emitter *E) {
  if (E->is_cuda || !E->func)
    return;
  helpers_ctx h = {E, 0};
  loom_ir_visitor v = {.stmt_pre = helper_at, .ctx = &h};
  loom_ir_visit_stmt(&v, E->func->body);
}

/* A marked nest printed as its loops, not as the call its mark asks for. */
static void emit_as_loops(emitter *E, const loom_stmt *loop) {
  const loom_stmt *outer = E->as_loops;
  E->as_loops = loop;
  emit_stmt(E, loop);
  E->as_loops = outer;
}

/* call printed (comment above it) and its return code checked where the
 * compiler has oneDNN's header; else loop's loops. */
static void emit_guarded(emitter *E, const loom_stmt *loop, const char *comment,
                         const char *call) {
  put(E, "#ifdef LOOM_DNNL\n");
  emit_line_start(E);
  loom_buf_printf(E->out, "{ /* %s */\n", comment);
  E->indent++;
  emit_line_start(E);
  loom_buf_printf(E->out, "int32_t rc = %s;\n", call);
  emit_line_start(E);
  put(E, "if (rc) return rc;\n");
  E->indent--;
  emit_line_start(E);
  put(E, "}\n#else\n");
  emit_as_loops(E, loop);
  put(E, "#endif\n");
}

/* The marked conv nest, printed as the call of its helper where the
 * compiler has oneDNN's header, else as its loops. */
bool emit_conv_call(emitter *E, const loom_stmt *loop) {
  loom_conv c;
  if (!is_conv_call(E, loop, &c))
    return false;
  loom_buf comment, call;
  loom_buf_init(&comment);
  loom_buf_init(&call);
  loom_buf_printf(&comment, "%s: %s = %s (*) %s, %s%s%s, by oneDNN", c.routine,
                  (c.out ? c.out : c.y)->name, c.x->name, c.w->name,
                  c.is_nchw ? "NCHW/OIHW" : "NHWC/HWIO", c.pad ? ", padded" : "",
                  c.out ? ", with the nests after it" : "");
  loom_buf_printf(&call, "loom_conv_%s_%d(%s, %s, %s, %s, ", E->symbol, site_of(E->func, loop),
                  emit_name(E, c.x->data), emit_name(E, c.w->data),
                  emit_name(E, (c.out ? c.out : c.y)->data),
                  c.bias ? emit_name(E, c.bias->data) : "NULL");
  int n_src1 = 0;
  for (int i = 0; i < c.n_post; i++)
    if (c.post[i].kind == LOOM_CONV_POST_ADD)
      loom_buf_printf(&call, "%s%s", n_src1++ ? ", " : "(const float *const[]){",
                      emit_name(E, c.post[i].src->data));
  loom_buf_puts(&call, n_src1 ? "})" : "NULL)");
  emit_guarded(E, loop, comment.data, call.data);
  loom_buf_free(&comment);
  loom_buf_free(&call);
  return true;
}

/* The marked pool nest, the same way. */
bool emit_pool_call(emitter *E, const loom_stmt *loop) {
  loom_pool p;
  if (!is_pool_call(E, loop, &p))
    return false;
  loom_buf comment, call;
  loom_buf_init(&comment);
  loom_buf_init(&call);
  loom_buf_printf(&comment, "%s: %s = the max pool of %s, %s%s, by oneDNN", p.routine,
                  p.y->name, p.x->name, p.is_nchw ? "NCHW" : "NHWC", p.pad ? ", padded" : "");
  loom_buf_printf(&call, "loom_pool_%s_%d(%s, %s)", E->symbol, site_of(E->func, loop),
                  emit_name(E, p.x->data), emit_name(E, p.y->data));
  emit_guarded(E, loop, comment.data, call.data);
  loom_buf_free(&comment);
  loom_buf_free(&call);
  return true;
}

/* The marked product, the same way. */
bool emit_matmul_call(emitter *E, const loom_stmt *loop) {
  loom_gemm g;
  if (!is_matmul_call(E, loop, &g))
    return false;
  loom_buf comment, call;
  loom_buf_init(&comment);
  loom_buf_init(&call);
  loom_buf_printf(&comment, "dnnl_matmul: %s = %s x %s, by oneDNN", g.c->name, g.a->name,
                  g.b->name);
  loom_buf_printf(&call, "loom_matmul_%s_%d(%s, %s, %s)", E->symbol, site_of(E->func, loop),
                  emit_name(E, g.a->data), emit_name(E, g.b->data), emit_name(E, g.c->data));
  emit_guarded(E, loop, comment.data, call.data);
  loom_buf_free(&comment);
  loom_buf_free(&call);
  return true;
}

/* A nest the dispatch pass gave to a library call: the padding just
 * before a conv or pool, or one of the nests after a conv its call
 * computes too. It is printed only where the call is not (no oneDNN
 * header), and only when that call is printed and still takes it (a
 * schedule applied after dispatch may have changed either; then it is
 * printed as its loops). */
bool emit_taken(emitter *E, const loom_stmt *loop) {
  loom_conv c;
  if (!loom_ir_attr_get(loop->u.loop.annotations, loop->u.loop.n_annotations,
                        "loom.taken_by"))
    return false;
  seq_ctx p = seq_of(E->func, loop);
  if (!p.seq)
    return false;
  loom_stmt *const *stmts = p.seq->u.seq.stmts;
  bool is_taken = false;
  /* the padding: the conv or pool after it its only reader */
  loom_pool pool;
  const loom_buffer *padded =
      p.at + 1 >= p.seq->u.seq.n_stmts                     ? NULL
      : is_conv_call(E, stmts[p.at + 1], &c)               ? c.pad
      : is_pool_call(E, stmts[p.at + 1], &pool)            ? pool.pad
                                                           : NULL;
  if (padded)
    is_taken = emit_stores_only(loop, padded) &&
               loom_ir_buffer_uses(E->func->body, padded->data).loads ==
                   loom_ir_buffer_uses(stmts[p.at + 1], padded->data).loads;
  for (int k = p.at - 1; k >= 0 && !is_taken; k--)
    if (stmts[k]->kind == LOOM_STMT_FOR && loom_dispatch_marked_conv(E->func, stmts[k], &c)) {
      is_taken = is_conv_call(E, stmts[k], &c) && p.at - k <= (c.bias != NULL) + c.n_post;
      break;
    }
  if (!is_taken)
    return false;
  put(E, "#ifndef LOOM_DNNL\n");
  emit_as_loops(E, loop);
  put(E, "#endif\n");
  return true;
}
