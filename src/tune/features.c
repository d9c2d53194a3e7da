/* Per-store features of a candidate for the cost model, after Ansor's and
 * MetaSchedule's PerStoreFeature: the loops around each buffer store, the
 * operations it performs, and for each buffer it touches the bytes, the
 * footprint, the reuse and the strides, all read from the lowered program,
 * where every access is one flat index. Indices are analysed as affine
 * forms over the enclosing loops; what is not affine is approximated and
 * flagged. Column meanings are in include/loom/model.h. */
#include "loom/lower.h"
#include "loom/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOOPS 64  /* nesting the analysis follows */
#define MAX_ACCESS 64 /* distinct buffers of one store */

typedef struct loop {
  const loom_var *var;
  double extent;
  loom_for_kind kind;
  const char *thread; /* the tag of a thread binding, else NULL */
} loop;

/* sum(coef[i] * loop_i) + konst; coefficients are doubles so that i // 4
 * can be given the stride 1/4 it has on average. */
typedef struct affine {
  double coef[MAX_LOOPS];
  bool is_affine;
} affine;

typedef struct binding {
  const loom_var *var;
  const loom_expr *value;
} binding;

typedef struct access {
  const loom_var *data;      /* buffer identity: its data pointer */
  double elem_bytes;
  affine index;
  int n_reads, n_writes;
} access;

typedef struct ops {
  double fadd, fmul, fdiv, fmath, iops, cmp, sel, cast;
} ops;

typedef struct walker {
  loop loops[MAX_LOOPS];
  int depth;
  double guard;             /* divisor of the trips from guards `loop == c` */
  binding *lets;            /* LET statements in scope */
  int n_lets, cap_lets;
  const loom_var **allocs;  /* ALLOCATE statements in scope */
  double *alloc_bytes;
  const char **alloc_scope;
  int n_allocs, cap_allocs;
  float *rows;
  int n_rows, cap_rows;
  int cores;
  double prog_flops, prog_bytes, prog_parallel;
  loom_diag *d;
  bool has_failed;          /* out of memory */
} walker;

static double slog(double x) {
  if (!isfinite(x))
    x = x > 0 ? 1e300 : x < 0 ? -1e300 : 0;
  double v = log2(1 + fabs(x));
  return x < 0 ? -v : v;
}

static double dtype_bytes(loom_dtype t) {
  double b = (double)t.bits * (t.lanes ? t.lanes : 1) / 8;
  return b < 1 ? 1 : b;
}

static double const_or(const loom_expr *e, double dflt) {
  int64_t v;
  return e && loom_ir_is_const_int(e, &v) ? (double)v : dflt;
}

/* ---- affine index analysis ----------------------------------------------- */

static void affine_analyse(walker *w, const loom_expr *e, affine *out, int fuel);

static int loop_of(const walker *w, const loom_var *v) {
  for (int i = w->depth - 1; i >= 0; i--)
    if (w->loops[i].var == v)
      return i;
  return -1;
}

static const loom_expr *let_of(const walker *w, const loom_var *v) {
  for (int i = w->n_lets - 1; i >= 0; i--)
    if (w->lets[i].var == v)
      return w->lets[i].value;
  return NULL;
}

static void affine_zero(affine *f) {
  memset(f, 0, sizeof *f);
  f->is_affine = true;
}

/* What an index that is not affine in a loop still tells: that it moves
 * with every loop it mentions. */
static void affine_mark_uses(walker *w, const loom_expr *e, affine *out,
                             int fuel) {
  affine t;
  affine_analyse(w, e, &t, fuel);
  for (int i = 0; i < w->depth; i++)
    if (t.coef[i] != 0)
      out->coef[i] = 1;
  out->is_affine = false;
}

static void affine_analyse(walker *w, const loom_expr *e, affine *out,
                           int fuel) {
  affine_zero(out);
  if (!e || fuel <= 0) {
    out->is_affine = false;
    return;
  }
  affine a, b;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
    return;
  case LOOM_EXPR_VAR: {
    int i = loop_of(w, e->u.var);
    if (i >= 0) {
      out->coef[i] = 1;
      return;
    }
    const loom_expr *v = let_of(w, e->u.var);
    if (v)
      affine_analyse(w, v, out, fuel - 1);
    return; /* a parameter: constant within the program */
  }
  case LOOM_EXPR_CAST:
    affine_analyse(w, e->u.unary.a, out, fuel - 1);
    return;
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB: {
    double sign = e->kind == LOOM_EXPR_SUB ? -1 : 1;
    affine_analyse(w, e->u.bin.a, &a, fuel - 1);
    affine_analyse(w, e->u.bin.b, &b, fuel - 1);
    for (int i = 0; i < w->depth; i++)
      out->coef[i] = a.coef[i] + sign * b.coef[i];
    out->is_affine = a.is_affine && b.is_affine;
    return;
  }
  case LOOM_EXPR_MUL: {
    affine_analyse(w, e->u.bin.a, &a, fuel - 1);
    affine_analyse(w, e->u.bin.b, &b, fuel - 1);
    double ka = const_or(e->u.bin.a, NAN), kb = const_or(e->u.bin.b, NAN);
    const affine *x = !isnan(kb) ? &a : !isnan(ka) ? &b : NULL;
    double k = !isnan(kb) ? kb : ka;
    for (int i = 0; i < w->depth; i++)
      out->coef[i] = x ? x->coef[i] * k : (a.coef[i] != 0 || b.coef[i] != 0);
    out->is_affine = x ? x->is_affine : false;
    return;
  }
  case LOOM_EXPR_DIV:
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_MOD:
  case LOOM_EXPR_FLOORMOD: {
    affine_analyse(w, e->u.bin.a, &a, fuel - 1);
    double kv = const_or(e->u.bin.b, NAN);
    bool is_div = e->kind == LOOM_EXPR_DIV || e->kind == LOOM_EXPR_FLOORDIV;
    if (isnan(kv) || kv == 0) {
      affine_mark_uses(w, e->u.bin.a, out, fuel - 1);
      return;
    }
    for (int i = 0; i < w->depth; i++) {
      double c = a.coef[i];
      /* A remainder keeps the steps smaller than its divisor and hides the
       * others; a quotient scales every step down. */
      out->coef[i] = is_div ? c / kv : (fabs(c) < fabs(kv) ? c : 0);
    }
    out->is_affine = false;
    return;
  }
  case LOOM_EXPR_LET: {
    /* Bound for the body only; the binding is dropped on return. */
    if (w->n_lets < w->cap_lets) {
      w->lets[w->n_lets].var = e->u.let.var;
      w->lets[w->n_lets].value = e->u.let.value;
      w->n_lets++;
      affine_analyse(w, e->u.let.body, out, fuel - 1);
      w->n_lets--;
    } else {
      affine_mark_uses(w, e->u.let.body, out, fuel - 1);
    }
    return;
  }
  default:
    /* min, max, select, loads in indices: moves with whatever it uses */
    out->is_affine = false;
    for (int i = 0; i < w->depth; i++)
      out->coef[i] = 0;
    {
      const loom_expr *kids[3] = {0};
      switch (e->kind) {
      case LOOM_EXPR_SELECT:
        kids[0] = e->u.select.cond, kids[1] = e->u.select.t, kids[2] = e->u.select.f;
        break;
      case LOOM_EXPR_MIN: case LOOM_EXPR_MAX: case LOOM_EXPR_EQ:
      case LOOM_EXPR_NE: case LOOM_EXPR_LT: case LOOM_EXPR_LE:
      case LOOM_EXPR_GT: case LOOM_EXPR_GE: case LOOM_EXPR_AND:
      case LOOM_EXPR_OR:
        kids[0] = e->u.bin.a, kids[1] = e->u.bin.b;
        break;
      case LOOM_EXPR_NOT:
        kids[0] = e->u.unary.a;
        break;
      default:
        break;
      }
      for (int k = 0; k < 3; k++)
        if (kids[k]) {
          affine t;
          affine_analyse(w, kids[k], &t, fuel - 1);
          for (int i = 0; i < w->depth; i++)
            if (t.coef[i] != 0)
              out->coef[i] = 1;
        }
    }
    return;
  }
}

/* ---- counting operations and accesses ------------------------------------ */

typedef struct store_info {
  ops ops;
  access acc[MAX_ACCESS];
  int n_acc;
  int n_dropped;
} store_info;

static void note_access(walker *w, store_info *s, const loom_buffer *buf,
                        loom_expr *const *indices, int n_indices,
                        bool is_write) {
  const loom_var *data = buf->data;
  access *a = NULL;
  for (int i = 0; i < s->n_acc; i++)
    if (s->acc[i].data == data)
      a = &s->acc[i];
  if (!a) {
    if (s->n_acc == MAX_ACCESS) {
      s->n_dropped++;
      return;
    }
    a = &s->acc[s->n_acc++];
    memset(a, 0, sizeof *a);
    a->data = data;
    a->elem_bytes = dtype_bytes(buf->dtype);
    /* The flat index of the lowered form; a buffer of more dimensions (a
     * program lowering left as is) is read through its last index. */
    affine_analyse(w, n_indices > 0 ? indices[n_indices - 1] : NULL,
                   &a->index, 64);
    if (n_indices > 1)
      a->index.is_affine = false;
  }
  if (is_write)
    a->n_writes++;
  else
    a->n_reads++;
}

static void count_expr(walker *w, store_info *s, const loom_expr *e) {
  if (!e)
    return;
  bool is_float = loom_dtype_is_float(e->dtype);
  ops *o = &s->ops;
  switch (e->kind) {
  case LOOM_EXPR_INT: case LOOM_EXPR_FLOAT: case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR:
    return;
  case LOOM_EXPR_ADD: case LOOM_EXPR_SUB:
    *(is_float ? &o->fadd : &o->iops) += 1;
    break;
  case LOOM_EXPR_MUL:
    *(is_float ? &o->fmul : &o->iops) += 1;
    break;
  case LOOM_EXPR_DIV: case LOOM_EXPR_MOD:
  case LOOM_EXPR_FLOORDIV: case LOOM_EXPR_FLOORMOD:
    *(is_float ? &o->fdiv : &o->iops) += 1;
    break;
  case LOOM_EXPR_MIN: case LOOM_EXPR_MAX:
    *(is_float ? &o->fmath : &o->iops) += 1;
    break;
  case LOOM_EXPR_EQ: case LOOM_EXPR_NE: case LOOM_EXPR_LT: case LOOM_EXPR_LE:
  case LOOM_EXPR_GT: case LOOM_EXPR_GE: case LOOM_EXPR_AND: case LOOM_EXPR_OR:
  case LOOM_EXPR_NOT:
    o->cmp += 1;
    break;
  case LOOM_EXPR_SELECT:
    o->sel += 1;
    break;
  case LOOM_EXPR_CAST:
    o->cast += 1;
    break;
  case LOOM_EXPR_CALL:
    if (e->u.call.op == LOOM_OP_IF_THEN_ELSE)
      o->sel += 1;
    else
      *(is_float ? &o->fmath : &o->iops) += 1;
    break;
  default:
    break;
  }
  switch (e->kind) {
  case LOOM_EXPR_SELECT:
    count_expr(w, s, e->u.select.cond);
    count_expr(w, s, e->u.select.t);
    count_expr(w, s, e->u.select.f);
    return;
  case LOOM_EXPR_NOT: case LOOM_EXPR_CAST:
    count_expr(w, s, e->u.unary.a);
    return;
  case LOOM_EXPR_LOAD:
    note_access(w, s, e->u.load.buffer, e->u.load.indices, e->u.load.n_indices,
                false);
    for (int i = 0; i < e->u.load.n_indices; i++)
      count_expr(w, s, e->u.load.indices[i]);
    return;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      count_expr(w, s, e->u.call.args[i]);
    return;
  case LOOM_EXPR_LET:
    count_expr(w, s, e->u.let.value);
    if (w->n_lets < w->cap_lets) {
      w->lets[w->n_lets].var = e->u.let.var;
      w->lets[w->n_lets].value = e->u.let.value;
      w->n_lets++;
      count_expr(w, s, e->u.let.body);
      w->n_lets--;
    } else {
      count_expr(w, s, e->u.let.body);
    }
    return;
  case LOOM_EXPR_RAMP:
    count_expr(w, s, e->u.ramp.base);
    count_expr(w, s, e->u.ramp.stride);
    return;
  case LOOM_EXPR_BROADCAST:
    count_expr(w, s, e->u.broadcast.value);
    return;
  default:
    break;
  }
  if (e->kind >= LOOM_EXPR_ADD && e->kind <= LOOM_EXPR_OR) {
    count_expr(w, s, e->u.bin.a);
    count_expr(w, s, e->u.bin.b);
  }
}

/* ---- one row -------------------------------------------------------------- */

typedef struct buf_feat {
  double bytes;
  float f[LOOM_FEAT_BUF_DIM_];
} buf_feat;

static int by_bytes_desc(const void *x, const void *y) {
  const buf_feat *a = x, *b = y;
  return (a->bytes < b->bytes) - (a->bytes > b->bytes);
}

/* Distinct elements a touches in one run of the loops from `from` inward:
 * the lesser of the iterations that move it and the span its strides
 * cover. */
static double footprint(const walker *w, const access *a, int from) {
  double moving = 1, span = 1;
  for (int i = from < 0 ? 0 : from; i < w->depth; i++) {
    double c = fabs(a->index.coef[i]), e = w->loops[i].extent;
    if (c == 0 || e <= 1)
      continue;
    moving *= e;
    span += c * (e - 1);
  }
  return moving < span ? moving : span;
}

/* Bytes all accesses of s touch in one run of the loops from `from` in. */
static double footprint_bytes(const walker *w, const store_info *s, int from) {
  double bytes = 0;
  for (int i = 0; i < s->n_acc; i++)
    bytes += footprint(w, &s->acc[i], from) * s->acc[i].elem_bytes;
  return bytes;
}

static void access_features(const walker *w, const store_info *s,
                            const access *a, double trips, buf_feat *out) {
  float *f = out->f;
  memset(out, 0, sizeof *out);
  double eb = a->elem_bytes, line = LOOM_MODEL_CACHE_LINE;
  int n = a->n_reads + a->n_writes;
  double min_stride = 0;
  for (int i = 0; i < w->depth; i++) {
    double c = fabs(a->index.coef[i]);
    if (c != 0 && w->loops[i].extent > 1 && (min_stride == 0 || c < min_stride))
      min_stride = c;
  }
  double unique = footprint(w, a, 0);
  double step = min_stride * eb < line ? min_stride * eb : line;
  double unique_lines = ceil(unique * (step > 0 ? step : line) / line);
  if (unique_lines > unique)
    unique_lines = unique;
  if (unique_lines < 1)
    unique_lines = 1;

  /* The innermost loop that moves at all decides contiguity. */
  double inner_stride = 0, inner_extent = 1;
  if (w->depth > 0) {
    inner_stride = fabs(a->index.coef[w->depth - 1]);
    inner_extent = w->loops[w->depth - 1].extent;
  }
  bool is_contiguous = false;
  for (int i = w->depth - 1; i >= 0; i--)
    if (a->index.coef[i] != 0 && w->loops[i].extent > 1) {
      is_contiguous = fabs(a->index.coef[i]) == 1;
      break;
    }
  double lines;
  if (inner_stride == 0)
    lines = trips / (inner_extent > 1 ? inner_extent : 1);
  else
    lines = trips * (inner_stride * eb < line ? inner_stride * eb : line) / line;
  if (lines < 1)
    lines = 1;

  /* Reuse: the innermost loop that leaves the access in place reuses it
   * every iteration of the loops inside it (Ansor's loop-multiple-read). */
  int reuse_loop = -1;
  for (int i = w->depth - 1; i >= 0; i--)
    if (a->index.coef[i] == 0 && w->loops[i].extent > 1) {
      reuse_loop = i;
      break;
    }
  double dist = 0, count = 0, dist_bytes = 0;
  if (reuse_loop >= 0) {
    dist_bytes = footprint_bytes(w, s, reuse_loop + 1);
    dist = 1;
    for (int i = reuse_loop + 1; i < w->depth; i++)
      dist *= w->loops[i].extent;
    count = w->loops[reuse_loop].extent;
    f[LOOM_FEAT_BUF_REUSE_LOOP] = 1;
  } else if (n > 1) {
    count = n;
    f[LOOM_FEAT_BUF_REUSE_SERIAL] = 1;
  } else {
    f[LOOM_FEAT_BUF_REUSE_NONE] = 1;
  }

  out->bytes = trips * eb * n;
  f[LOOM_FEAT_BUF_PRESENT] = 1;
  f[LOOM_FEAT_BUF_IS_READ] = a->n_reads > 0;
  f[LOOM_FEAT_BUF_IS_WRITE] = a->n_writes > 0;
  f[LOOM_FEAT_BUF_BYTES] = slog(out->bytes);
  f[LOOM_FEAT_BUF_UNIQUE_BYTES] = slog(unique * eb);
  f[LOOM_FEAT_BUF_LINES] = slog(lines * n);
  f[LOOM_FEAT_BUF_UNIQUE_LINES] = slog(unique_lines);
  f[LOOM_FEAT_BUF_REUSE_DIST] = slog(dist);
  f[LOOM_FEAT_BUF_REUSE_COUNT] = slog(count);
  f[LOOM_FEAT_BUF_REUSE_BYTES] = slog(dist_bytes);
  f[LOOM_FEAT_BUF_INNER_STRIDE] = slog(inner_stride);
  f[LOOM_FEAT_BUF_IS_CONTIGUOUS] = is_contiguous;
  f[LOOM_FEAT_BUF_MIN_STRIDE] = slog(min_stride);
  f[LOOM_FEAT_BUF_BYTES_PER_LINE] = slog(unique * eb / unique_lines);
  f[LOOM_FEAT_BUF_NONAFFINE] = !a->index.is_affine;
}

static float *new_row(walker *w) {
  if (w->n_rows == w->cap_rows) {
    int cap = w->cap_rows ? 2 * w->cap_rows : 8;
    float *r = realloc(w->rows, (size_t)cap * LOOM_MODEL_FEATURE_DIM * sizeof *r);
    if (!r) {
      w->has_failed = true;
      return NULL;
    }
    w->rows = r;
    w->cap_rows = cap;
  }
  float *row = w->rows + (size_t)w->n_rows++ * LOOM_MODEL_FEATURE_DIM;
  memset(row, 0, LOOM_MODEL_FEATURE_DIM * sizeof *row);
  return row;
}

static void visit_store(walker *w, const loom_stmt *st) {
  store_info *s = calloc(1, sizeof *s);
  buf_feat *bf = calloc(MAX_ACCESS, sizeof *bf);
  float *row = s && bf ? new_row(w) : NULL;
  if (!row) {
    w->has_failed = true;
    free(s);
    free(bf);
    return;
  }
  note_access(w, s, st->u.store.buffer, st->u.store.indices,
              st->u.store.n_indices, true);
  count_expr(w, s, st->u.store.value);
  for (int i = 0; i < st->u.store.n_indices; i++)
    count_expr(w, s, st->u.store.indices[i]);

  /* A thread axis bound twice (a shared copy's loop inside the tiling's)
   * is one axis: each counts once, at its widest. */
  double trips = 1, par = 1, vthreads = 1, axis[6] = {1, 1, 1, 1, 1, 1};
  double num[5] = {0}, len[5] = {1, 1, 1, 1, 1};
  int vec_pos = 0, par_pos = 0;
  for (int i = 0; i < w->depth; i++) {
    const loop *l = &w->loops[i];
    trips *= l->extent;
    int k = l->kind <= LOOM_FOR_THREAD_BINDING ? (int)l->kind : 0;
    num[k]++;
    len[k] *= l->extent;
    if (l->kind == LOOM_FOR_VECTORIZED)
      vec_pos = w->depth - i;
    const char *tag = l->thread ? l->thread : "";
    int at = !strncmp(tag, "blockIdx.", 9) ? 0 : !strncmp(tag, "threadIdx.", 10) ? 3 : -1;
    const char *dot = strchr(tag, '.');
    if (at >= 0 && dot && dot[1] >= 'x' && dot[1] <= 'z' && l->extent > axis[at + dot[1] - 'x'])
      axis[at + dot[1] - 'x'] = l->extent;
    if (!strncmp(tag, "vthread", 7))
      vthreads *= l->extent;
    if (l->kind == LOOM_FOR_PARALLEL || l->kind == LOOM_FOR_THREAD_BINDING) {
      par *= l->extent;
      if (!par_pos)
        par_pos = i + 1;
    }
  }
  trips /= w->guard;
  if (trips < 1)
    trips = 1;

  row[LOOM_FEAT_LOOP_DEPTH] = (float)w->depth;
  row[LOOM_FEAT_LOOP_TRIPS] = slog(trips);
  row[LOOM_FEAT_INNER_EXTENT] = slog(w->depth ? w->loops[w->depth - 1].extent : 1);
  row[LOOM_FEAT_SERIAL_NUM] = num[LOOM_FOR_SERIAL];
  row[LOOM_FEAT_SERIAL_LEN] = slog(num[LOOM_FOR_SERIAL] ? len[LOOM_FOR_SERIAL] : 0);
  row[LOOM_FEAT_PARALLEL_NUM] = num[LOOM_FOR_PARALLEL] + num[LOOM_FOR_THREAD_BINDING];
  row[LOOM_FEAT_PARALLEL_LEN] = slog(par > 1 || row[LOOM_FEAT_PARALLEL_NUM] ? par : 0);
  row[LOOM_FEAT_VECTOR_NUM] = num[LOOM_FOR_VECTORIZED];
  row[LOOM_FEAT_VECTOR_LEN] = slog(num[LOOM_FOR_VECTORIZED] ? len[LOOM_FOR_VECTORIZED] : 0);
  row[LOOM_FEAT_UNROLL_NUM] = num[LOOM_FOR_UNROLLED];
  row[LOOM_FEAT_UNROLL_LEN] = slog(num[LOOM_FOR_UNROLLED] ? len[LOOM_FOR_UNROLLED] : 0);
  row[LOOM_FEAT_VECTOR_IS_INNERMOST] = vec_pos == 1;
  row[LOOM_FEAT_VECTOR_POS] = (float)vec_pos;
  row[LOOM_FEAT_PARALLEL_POS] = (float)par_pos;
  double blocks = axis[0] * axis[1] * axis[2], threads = axis[3] * axis[4] * axis[5];
  row[LOOM_FEAT_GPU_BLOCKS] = slog(blocks > 1 ? blocks : 0);
  row[LOOM_FEAT_GPU_THREADS] = slog(threads > 1 ? threads : 0);
  row[LOOM_FEAT_GPU_THREAD_X] = slog(axis[3] > 1 ? axis[3] : 0);
  row[LOOM_FEAT_GPU_VTHREADS] = slog(vthreads > 1 ? vthreads : 0);

  const ops *o = &s->ops;
  double flops = (o->fadd + o->fmul + o->fdiv + o->fmath) * trips;
  row[LOOM_FEAT_FLOAT_ADDSUB] = slog(o->fadd * trips);
  row[LOOM_FEAT_FLOAT_MUL] = slog(o->fmul * trips);
  row[LOOM_FEAT_FLOAT_DIV] = slog(o->fdiv * trips);
  row[LOOM_FEAT_FLOAT_MATH] = slog(o->fmath * trips);
  row[LOOM_FEAT_INT_OPS] = slog(o->iops * trips);
  row[LOOM_FEAT_COMPARES] = slog(o->cmp * trips);
  row[LOOM_FEAT_SELECTS] = slog(o->sel * trips);
  row[LOOM_FEAT_CASTS] = slog(o->cast * trips);
  row[LOOM_FEAT_FLOPS] = slog(flops);

  double bytes = 0, unique = 0;
  for (int i = 0; i < s->n_acc; i++) {
    access_features(w, s, &s->acc[i], trips, &bf[i]);
    bytes += bf[i].bytes;
    unique += exp2(bf[i].f[LOOM_FEAT_BUF_UNIQUE_BYTES]) - 1;
  }
  row[LOOM_FEAT_BYTES] = slog(bytes);
  row[LOOM_FEAT_INTENSITY] = (float)(bytes > 0 ? flops / bytes : 0);
  row[LOOM_FEAT_UNIQUE_BYTES] = slog(unique);
  row[LOOM_FEAT_INTENSITY_UNIQUE] = slog(unique > 0 ? flops / unique : 0);
  for (int k = 0; k < 6; k++)
    row[LOOM_FEAT_FOOTPRINT_1 + k] = slog(footprint_bytes(w, s, w->depth - 1 - k));
  qsort(bf, (size_t)s->n_acc, sizeof *bf, by_bytes_desc);
  for (int i = 0; i < s->n_acc && i < LOOM_MODEL_BUFFERS; i++)
    memcpy(row + LOOM_FEAT_BUFFERS_ + i * LOOM_FEAT_BUF_DIM_, bf[i].f,
           sizeof bf[i].f);

  double alloc_bytes = 0;
  const char *scope = "global";
  bool is_local = false;
  for (int i = 0; i < w->n_allocs; i++) {
    alloc_bytes += w->alloc_bytes[i];
    if (w->allocs[i] == st->u.store.buffer->data) {
      is_local = true;
      scope = w->alloc_scope[i];
    }
  }
  if (!is_local && st->u.store.buffer->scope)
    scope = st->u.store.buffer->scope;
  row[LOOM_FEAT_ALLOC_NUM] = (float)w->n_allocs;
  row[LOOM_FEAT_ALLOC_BYTES] = slog(alloc_bytes);
  row[LOOM_FEAT_STORE_IS_LOCAL] = is_local;
  loom_scope_kind kind = loom_ir_scope_kind(scope);
  row[LOOM_FEAT_STORE_SCOPE_GLOBAL] = kind == LOOM_SCOPE_GLOBAL;
  row[LOOM_FEAT_STORE_SCOPE_SHARED] = kind == LOOM_SCOPE_SHARED;
  row[LOOM_FEAT_STORE_SCOPE_LOCAL] = kind == LOOM_SCOPE_LOCAL;

  w->prog_flops += flops;
  w->prog_bytes += bytes;
  if (par > w->prog_parallel)
    w->prog_parallel = par;
  free(s);
  free(bf);
}

/* ---- the walk ------------------------------------------------------------- */

/* How much a guard `loop == c` (the form init statements are lowered to)
 * thins out the iterations under it: the product of the extents of the
 * loops it pins. Other conditions are taken as always true. */
static double guard_factor(walker *w, const loom_expr *c) {
  if (!c)
    return 1;
  if (c->kind == LOOM_EXPR_AND)
    return guard_factor(w, c->u.bin.a) * guard_factor(w, c->u.bin.b);
  if (c->kind != LOOM_EXPR_EQ)
    return 1;
  affine a, b;
  affine_analyse(w, c->u.bin.a, &a, 64);
  affine_analyse(w, c->u.bin.b, &b, 64);
  double f = 1;
  for (int i = 0; i < w->depth; i++)
    if (a.coef[i] != b.coef[i])
      f *= w->loops[i].extent;
  return f;
}

static bool push_let(walker *w, const loom_var *v, const loom_expr *value) {
  if (w->n_lets == w->cap_lets) {
    int cap = w->cap_lets ? 2 * w->cap_lets : 16;
    binding *l = realloc(w->lets, (size_t)cap * sizeof *l);
    if (!l)
      return w->has_failed = true, false;
    w->lets = l;
    w->cap_lets = cap;
  }
  w->lets[w->n_lets].var = v;
  w->lets[w->n_lets].value = value;
  w->n_lets++;
  return true;
}

static bool push_alloc(walker *w, const loom_buffer *b) {
  if (w->n_allocs == w->cap_allocs) {
    int cap = w->cap_allocs ? 2 * w->cap_allocs : 8;
    const loom_var **v = realloc(w->allocs, (size_t)cap * sizeof *v);
    if (v)
      w->allocs = v;
    double *n = realloc(w->alloc_bytes, (size_t)cap * sizeof *n);
    if (n)
      w->alloc_bytes = n;
    const char **s = realloc(w->alloc_scope, (size_t)cap * sizeof *s);
    if (s)
      w->alloc_scope = s;
    if (!v || !n || !s)
      return w->has_failed = true, false;
    w->cap_allocs = cap;
  }
  double bytes = dtype_bytes(b->dtype);
  for (int i = 0; i < b->ndim; i++)
    bytes *= const_or(b->shape[i], 1);
  w->allocs[w->n_allocs] = b->data;
  w->alloc_bytes[w->n_allocs] = bytes;
  w->alloc_scope[w->n_allocs] = b->scope ? b->scope : "global";
  w->n_allocs++;
  return true;
}

static loom_status visit(walker *w, const loom_stmt *s) {
  if (!s || w->has_failed)
    return LOOM_OK;
  switch (s->kind) {
  case LOOM_STMT_FOR: {
    if (w->depth == MAX_LOOPS)
      return loom_diag_error(w->d, s->loc,
                             "too many nested loops for the cost model "
                             "(limit is %d)", MAX_LOOPS);
    double e = const_or(s->u.loop.extent, 1);
    loop *l = &w->loops[w->depth++];
    l->var = s->u.loop.var;
    l->extent = e < 1 ? 1 : e;
    l->kind = s->u.loop.kind;
    l->thread = s->u.loop.kind == LOOM_FOR_THREAD_BINDING ? s->u.loop.thread : NULL;
    loom_status st = visit(w, s->u.loop.body);
    w->depth--;
    return st;
  }
  case LOOM_STMT_STORE:
    visit_store(w, s);
    return LOOM_OK;
  case LOOM_STMT_IF: {
    double saved = w->guard;
    w->guard = saved * guard_factor(w, s->u.if_.cond);
    loom_status st = visit(w, s->u.if_.then_case);
    w->guard = saved;
    if (st == LOOM_OK)
      st = visit(w, s->u.if_.else_case);
    return st;
  }
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      TRY(visit(w, s->u.seq.stmts[i]));
    return LOOM_OK;
  case LOOM_STMT_LET: {
    int n = w->n_lets;
    if (!push_let(w, s->u.let.var, s->u.let.value))
      return LOOM_OK;
    loom_status st = visit(w, s->u.let.body);
    w->n_lets = n;
    return st;
  }
  case LOOM_STMT_ALLOCATE: {
    int n = w->n_allocs;
    if (!push_alloc(w, s->u.alloc.buffer))
      return LOOM_OK;
    loom_status st = visit(w, s->u.alloc.body);
    w->n_allocs = n;
    return st;
  }
  case LOOM_STMT_DECL_BUFFER:
    return visit(w, s->u.alloc.body);
  case LOOM_STMT_ATTR:
    return visit(w, s->u.attr.body);
  case LOOM_STMT_ASSERT:
    return visit(w, s->u.assert_.body);
  case LOOM_STMT_BLOCK_REALIZE:
    /* Not in lowered programs; looked into all the same. */
    if (s->u.realize.block)
      return visit(w, s->u.realize.block->body);
    return LOOM_OK;
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_:
    return LOOM_OK;
  }
  return LOOM_OK;
}

loom_status loom_model_features(const loom_func *candidate, int cores,
                                float **rows, int *n_rows, loom_diag *d) {
  *rows = NULL;
  *n_rows = 0;
  loom_arena *a = loom_arena_new();
  if (!a)
    return loom_diag_error(d, (loom_loc){0}, "out of memory");
  loom_func *lowered;
  loom_status st = loom_lower_func(a, candidate, &lowered, d);
  if (st != LOOM_OK) {
    loom_arena_free(a);
    return st;
  }
  walker w;
  memset(&w, 0, sizeof w);
  w.guard = 1;
  w.cores = cores > 0 ? cores : 1;
  w.d = d;
  /* Lets inside expressions use the room left on the stack and never grow
   * it, so the stack starts roomy. */
  w.lets = malloc(256 * sizeof *w.lets);
  w.cap_lets = w.lets ? 256 : 0;
  w.has_failed = !w.lets;
  if (!w.has_failed)
    st = visit(&w, lowered->body);
  loom_arena_free(a);
  free(w.lets);
  free(w.allocs);
  free(w.alloc_bytes);
  free(w.alloc_scope);
  if (st == LOOM_OK && w.has_failed)
    st = loom_diag_error(d, candidate->loc, "out of memory");
  if (st != LOOM_OK) {
    free(w.rows);
    return st;
  }
  for (int r = 0; r < w.n_rows; r++) {
    float *row = w.rows + (size_t)r * LOOM_MODEL_FEATURE_DIM;
    row[LOOM_FEAT_PROG_FLOPS] = slog(w.prog_flops);
    row[LOOM_FEAT_PROG_BYTES] = slog(w.prog_bytes);
    row[LOOM_FEAT_PROG_STORES] = (float)w.n_rows;
    row[LOOM_FEAT_PROG_PARALLEL] = slog(w.prog_parallel);
    row[LOOM_FEAT_PROG_PAR_PER_CORE] = slog(w.prog_parallel / w.cores);
    for (int i = 0; i < LOOM_MODEL_FEATURE_DIM; i++)
      if (!isfinite(row[i]))
        row[i] = row[i] > 0 ? 1e30f : row[i] < 0 ? -1e30f : 0;
  }
  *rows = w.rows;
  *n_rows = w.n_rows;
  return LOOM_OK;
}

static const char *const loop_names[LOOM_FEAT_BUFFERS_] = {
    "loop_depth", "loop_trips", "inner_extent", "serial_num", "serial_len",
    "parallel_num", "parallel_len", "vector_num", "vector_len", "unroll_num",
    "unroll_len", "vector_is_innermost", "vector_pos", "parallel_pos",
    "gpu_blocks", "gpu_threads", "gpu_thread_x", "gpu_vthreads",
    "float_addsub", "float_mul", "float_div", "float_math", "int_ops",
    "compares", "selects", "casts", "flops", "bytes", "intensity",
    "unique_bytes", "intensity_unique", "footprint_1", "footprint_2",
    "footprint_3", "footprint_4", "footprint_5", "footprint_6", "alloc_num", "alloc_bytes",
    "store_is_local", "store_scope_global", "store_scope_shared",
    "store_scope_local", "prog_flops", "prog_bytes", "prog_stores",
    "prog_parallel", "prog_par_per_core",
};

static const char *const buf_names[LOOM_FEAT_BUF_DIM_] = {
    "present", "is_read", "is_write", "bytes", "unique_bytes", "lines",
    "unique_lines", "reuse_loop", "reuse_serial", "reuse_none", "reuse_dist",
    "reuse_count", "reuse_bytes", "inner_stride", "is_contiguous", "min_stride",
    "bytes_per_line", "nonaffine",
};

const char *loom_model_feature_name(int i, char buf[48]) {
  if (i < 0 || i >= LOOM_MODEL_FEATURE_DIM)
    snprintf(buf, 48, "?");
  else if (i < LOOM_FEAT_BUFFERS_)
    snprintf(buf, 48, "%s", loop_names[i]);
  else
    snprintf(buf, 48, "buf%d_%s", (i - LOOM_FEAT_BUFFERS_) / LOOM_FEAT_BUF_DIM_,
             buf_names[(i - LOOM_FEAT_BUFFERS_) % LOOM_FEAT_BUF_DIM_]);
  return buf;
}
