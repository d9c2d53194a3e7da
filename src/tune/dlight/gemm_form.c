/* A product in other index spaces made a matmul, as dlight's Matmul
 * normalizes one: the block's iters sorted by the buffers they index (I:
 * A and C, J: B and C, K: reduced, A and B), then A, B and C reindexed
 * (each a copy indexed by the iters it uses) and laid out as A[I, K],
 * B[J, K] and C[I, J], each class fused, and the block itself iterating
 * over (I, J, K). A convolution becomes its im2col product: the copy of
 * its input is the im2col matrix, and the padding before it is inlined
 * into that copy. */
#include "tune/dlight/dlight_impl.h"

#include <stdio.h>
#include <string.h>

enum { CLASS_NONE, CLASS_I, CLASS_J, CLASS_K, CLASS_UNIT };

/* A copy made of an operand: the block that copies it, and the index map
 * that laid the copy out. */
typedef struct gemm_copy {
  char block[256];
  char map[1024];
} gemm_copy;

typedef struct use_ctx {
  const loom_block *b;
  bool *in;
} use_ctx;

static loom_visit note_iter(void *ctx, loom_expr *e) {
  use_ctx *u = ctx;
  if (e->kind == LOOM_EXPR_VAR)
    for (int i = 0; i < u->b->n_iter_vars; i++)
      if (u->b->iter_vars[i].var == e->u.var)
        u->in[i] = true;
  return LOOM_VISIT_GO;
}

/* Whether region r is of single points; the iters its indices use go to in. */
static bool note_region(const loom_block *b, const loom_buffer_region *r, bool *in) {
  use_ctx u = {b, in};
  loom_ir_visitor v = {.expr_pre = note_iter, .ctx = &u};
  for (int k = 0; k < r->n_ranges; k++) {
    int64_t ext;
    if (!loom_ir_is_const_int(r->ranges[k].extent, &ext) || ext != 1)
      return false;
    loom_ir_visit_expr(&v, r->ranges[k].min);
  }
  return true;
}

/* The product's form: which read is A, which B, and each iter's class. */
typedef struct form {
  int a, b;                    /* indices into the block's reads */
  int cls[SPACE_MAX_LOOPS];
  int64_t ext[SPACE_MAX_LOOPS];
  int n_class[5];
} form;

/* Whether e is a load, or a load cast. */
static bool is_factor(const loom_expr *e) {
  if (e->kind == LOOM_EXPR_CAST)
    e = e->u.unary.a;
  return e->kind == LOOM_EXPR_LOAD;
}

/* Whether b's body is C[...] = C[...] + x * y, x and y loads (or loads
 * cast): every read unconditional, so that the copies made of them read
 * what the block reads. A padding inlined into it (a read under
 * T.if_then_else) is not: its copy would read outside the input. */
static bool is_product_body(const loom_block *b) {
  const loom_stmt *st = b->body;
  if (!st || st->kind != LOOM_STMT_STORE)
    return false;
  const loom_expr *v = st->u.store.value;
  if (v->kind != LOOM_EXPR_ADD)
    return false;
  const loom_expr *p = v->u.bin.a->kind == LOOM_EXPR_MUL ? v->u.bin.a : v->u.bin.b;
  const loom_expr *acc = p == v->u.bin.a ? v->u.bin.b : v->u.bin.a;
  return acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == st->u.store.buffer &&
         p->kind == LOOM_EXPR_MUL && is_factor(p->u.bin.a) && is_factor(p->u.bin.b);
}

static loom_status classify(const char *name, const loom_block *b, form *f, loom_diag *why) {
  if (!b->init || b->n_writes != 1 || b->n_iter_vars > SPACE_MAX_LOOPS)
    return dlight_not_taken(why, name, "is not a reduction with an init writing one buffer");
  if (!is_product_body(b))
    return dlight_not_taken(why, name, "does not add a product of two loads to its output");
  const loom_buffer *c = b->writes[0].buffer;
  int reads[2], n = 0;
  for (int r = 0; r < b->n_reads; r++)
    if (b->reads[r].buffer != c) {
      if (n == 2)
        return dlight_not_taken(why, name, "reads more than two buffers besides its output");
      reads[n++] = r;
    }
  if (n != 2)
    return dlight_not_taken(why, name, "does not read two buffers besides its output");
  bool in[3][SPACE_MAX_LOOPS] = {{false}};
  if (!note_region(b, &b->reads[reads[0]], in[0]) || !note_region(b, &b->reads[reads[1]], in[1]) ||
      !note_region(b, &b->writes[0], in[2]))
    return dlight_not_taken(why, name, "reads or writes more than one element at a time");
  memset(f, 0, sizeof *f);
  for (int i = 0; i < b->n_iter_vars; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    if (!loom_ir_is_const_int(iv->dom.extent, &f->ext[i]) || f->ext[i] < 1)
      return dlight_not_taken(why, name, "has an iter of no constant extent");
    bool x = in[0][i], y = in[1][i], z = in[2][i];
    bool is_reduce = iv->kind == LOOM_ITER_REDUCE;
    int k = f->ext[i] == 1 ? CLASS_UNIT
            : !is_reduce && x && z && !y ? CLASS_I
            : !is_reduce && y && z && !x ? CLASS_J
            : is_reduce && x && y && !z ? CLASS_K
                                        : CLASS_NONE;
    if (k == CLASS_NONE)
      return dlight_not_taken(why, name, "has an iter that is not a product's row, column or "
                                         "reduction (a batch, or an iter one buffer alone uses)");
    f->cls[i] = k;
    f->n_class[k]++;
  }
  if (!f->n_class[CLASS_I] || !f->n_class[CLASS_J] || !f->n_class[CLASS_K])
    return dlight_not_taken(why, name, "lacks rows, columns or a reduction");
  /* As dlight's: A is the first read (a convolution's data), B the other. */
  f->a = reads[0];
  f->b = reads[1];
  return LOOM_OK;
}

/* Appends to out (at *len) the fused index of the iters of class k among
 * those that use[] marks, named x<i>: x0 * e1 * e2 + x1 * e2 + x2; 0 when
 * there is none. */
static void fused(const form *f, int n_iters, const bool *use, int k, char *out, size_t n,
                  size_t *len) {
  bool is_first = true;
  for (int i = 0; i < n_iters; i++) {
    if (!use[i] || f->cls[i] != k)
      continue;
    int64_t stride = 1;
    for (int j = i + 1; j < n_iters; j++)
      if (use[j] && f->cls[j] == k)
        stride *= f->ext[j];
    *len += (size_t)snprintf(out + *len, *len < n ? n - *len : 0, "%sx%d", is_first ? "" : " + ",
                             i);
    if (stride > 1)
      *len += (size_t)snprintf(out + *len, *len < n ? n - *len : 0, " * %lld",
                               (long long)stride);
    is_first = false;
  }
  if (is_first)
    *len += (size_t)snprintf(out + *len, *len < n ? n - *len : 0, "0");
}

/* "lambda x<i>, ...: (CLASS0, CLASS1)" over the iters use[] marks (all
 * when NULL), in the block's order: the index map of a buffer, or of the
 * block with three classes. */
static bool index_map(const form *f, int n_iters, const bool *use, const int *classes,
                      int n_classes, char *out, size_t n) {
  bool all[SPACE_MAX_LOOPS];
  for (int i = 0; i < n_iters; i++)
    all[i] = !use || use[i];
  size_t len = (size_t)snprintf(out, n, "lambda ");
  bool is_first = true;
  for (int i = 0; i < n_iters; i++)
    if (all[i]) {
      len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%sx%d", is_first ? "" : ", ", i);
      is_first = false;
    }
  len += (size_t)snprintf(out + len, len < n ? n - len : 0, ": (");
  for (int c = 0; c < n_classes; c++) {
    fused(f, n_iters, all, classes[c], out, n, &len);
    len += (size_t)snprintf(out + len, len < n ? n - len : 0, c + 1 < n_classes ? ", " : ")");
  }
  return len < n;
}

/* The iters the region's indices use. */
static void region_uses(const loom_block *b, const loom_buffer_region *r, bool *use) {
  memset(use, 0, sizeof(bool) * SPACE_MAX_LOOPS);
  note_region(b, r, use);
}

/* Reindexes block's read of buffer (its write when buffer is NULL) and
 * lays the copy out by classes; copy gets the copying block's name and the
 * map. */
static loom_status lay_out(loom_sched *s, loom_sched_rv block, const form *f,
                           const loom_buffer *buffer, const int *classes,
                           gemm_copy *copy, loom_diag *why) {
  const loom_block *b = loom_sched_rv_block(s, block);
  int index = 0;
  if (buffer)
    while (index < b->n_reads && b->reads[index].buffer != buffer)
      index++;
  if (buffer && index == b->n_reads)
    return loom_diag_error(why, (loom_loc){0}, "block '%s' lost its read of '%s'", b->name,
                           buffer->name);
  bool use[SPACE_MAX_LOOPS];
  region_uses(b, buffer ? &b->reads[index] : &b->writes[0], use);
  loom_tval in = loom_tval_rv(block);
  loom_tval attrs[5] = {loom_tval_int(index), loom_tval_int(!buffer)};
  const loom_sched_rv *out;
  TRY(space_apply(s, LOOM_INST_REINDEX, &in, 1, attrs, 2, &out, NULL, why));
  const loom_block *cb = loom_sched_rv_block(s, out[0]);
  /* The copy's dims are the iters the access uses, in the block's order
   * (the copying block's iters, in the same order); the block now reads
   * (or writes) it where it read the buffer. */
  if (!cb || snprintf(copy->block, sizeof copy->block, "%s", cb->name) >= (int)sizeof copy->block ||
      !index_map(f, b->n_iter_vars, use, classes, 2, copy->map, sizeof copy->map))
    return loom_diag_error(why, (loom_loc){0}, "a name or an index map too long to write");
  attrs[2] = loom_tval_str(copy->map);
  attrs[3] = loom_tval_none();
  attrs[4] = loom_tval_bool(false);
  return space_apply(s, LOOM_INST_TRANSFORM_LAYOUT, &in, 1, attrs, 5, NULL, NULL, why);
}

/* Whether the block is a product already in the form Matmul reads: three
 * iters, each buffer indexed by two of them. */
static bool is_plain(const loom_block *b, const form *f) {
  return b->n_iter_vars == 3 && b->reads[f->a].n_ranges == 2 && b->reads[f->b].n_ranges == 2 &&
         b->writes[0].n_ranges == 2;
}

/* The one reduction block of *s made a plain matmul when it is a product
 * in other index spaces; copies get A's, B's and C's copies. LOOM_ERROR
 * (why) when there is no such block, or it is a matmul already; *s
 * unchanged then. */
static loom_status gemm_form(loom_sched **s, gemm_copy copies[3], loom_diag *why) {
  const char *names[SPACE_MAX_BLOCKS];
  int n = space_block_names(space_func(*s), names, SPACE_MAX_BLOCKS);
  const char *name = NULL;
  space_block sb, found = {0};
  for (int i = 0; i < n; i++)
    if (space_find_block(space_func(*s), names[i], &sb) && sb.scope &&
        !space_is_spatial(sb.block)) {
      if (name)
        return loom_diag_error(why, (loom_loc){0}, "more than one reduction block");
      name = names[i];
      found = sb;
    }
  if (!name)
    return loom_diag_error(why, (loom_loc){0}, "no reduction block");
  form f;
  TRY(classify(name, found.block, &f, why));
  if (is_plain(found.block, &f))
    return dlight_not_taken(why, name, "is a matmul already");
  const loom_buffer *a = found.block->reads[f.a].buffer, *b = found.block->reads[f.b].buffer;
  loom_sched *c = loom_sched_copy(*s);
  if (!c)
    return LOOM_NOMEM;
  loom_sched_rv block;
  static const int a_cls[2] = {CLASS_I, CLASS_K}, b_cls[2] = {CLASS_J, CLASS_K},
                   c_cls[2] = {CLASS_I, CLASS_J}, all[3] = {CLASS_I, CLASS_J, CLASS_K};
  char map[1024];
  loom_status st = loom_sched_get_block(c, name, NULL, &block, why);
  if (st == LOOM_OK)
    st = lay_out(c, block, &f, a, a_cls, &copies[0], why);
  if (st == LOOM_OK)
    st = lay_out(c, block, &f, b, b_cls, &copies[1], why);
  if (st == LOOM_OK)
    st = lay_out(c, block, &f, NULL, c_cls, &copies[2], why);
  if (st == LOOM_OK && !index_map(&f, found.block->n_iter_vars, NULL, all, 3, map, sizeof map))
    st = loom_diag_error(why, (loom_loc){0}, "an index map too long to write");
  if (st == LOOM_OK) {
    loom_tval in = loom_tval_rv(block), attrs[1] = {loom_tval_str(map)};
    st = space_apply(c, LOOM_INST_TRANSFORM_BLOCK_LAYOUT, &in, 1, attrs, 1, NULL, NULL, why);
  }
  if (st != LOOM_OK) {
    loom_sched_free(c);
    return st;
  }
  loom_sched_free(*s);
  *s = c;
  return LOOM_OK;
}

/* The copying blocks made to iterate over the copies' new layout (each
 * where the primitive allows it), so that each is indexed by its iters and
 * can be inlined into the tiles of the product that read or write it. */
static loom_status lay_out_copies(loom_sched **s, const gemm_copy copies[3]) {
  for (int i = 0; i < 3; i++) {
    loom_tval map = loom_tval_str(copies[i].map);
    bool is_done = false;
    TRY(dlight_try_step(s, LOOM_INST_TRANSFORM_BLOCK_LAYOUT, copies[i].block, &map, 1, &is_done));
  }
  return LOOM_OK;
}

loom_status dlight_gemm_prepare(loom_sched **s, bool *is_product, loom_diag *why) {
  gemm_copy copies[3];
  loom_status st = gemm_form(s, copies, why);
  *is_product = st == LOOM_OK;
  if (st != LOOM_OK && st != LOOM_ERROR)
    return st;
  TRY(dlight_inline_all(s));
  return *is_product ? lay_out_copies(s, copies) : LOOM_OK;
}
