/* The C backend's calls of oneDNN: a convolution, max pool or product the
 * dispatch pass marked is printed as the call of a helper made for its
 * call site, printed before the function (emit_library_helpers); the
 * helper makes oneDNN's primitive on its first call and keeps it (the
 * shared C it calls: c_dnnl_shared.c). oneDNN is opened when the program
 * first runs (loom_library_symbol), so a machine without it gets return
 * code -4, not a failed load. */
#include "codegen/codegen_impl.h"

#include "loom/dispatch.h"

#include <string.h>

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

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
  put(E, emit_dnnl_shared);
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
  put(E, emit_dnnl_shared);
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
  put(E, emit_dnnl_shared);
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
