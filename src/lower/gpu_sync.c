/* __syncthreads() in a kernel. TensorIR runs a block's threads one after
 * another; a GPU runs them at once, so wherever one thread may read shared
 * memory another wrote, or write shared memory another still reads, the
 * block waits for all its threads first.
 *
 * A barrier is placed only where every thread of the block gets to it:
 * outside conditions and loops whose range depends on threadIdx. In a
 * sequence there, one goes before a statement that reads a shared buffer
 * written since the last barrier, or writes one read or written since. A
 * loop there whose body reads shared memory it writes ends each iteration
 * with one, so the next iteration's writes wait for this one's reads. The test is by
 * buffer, not by element: a barrier too many costs a little time, one too
 * few a wrong result. */
#include "lower/lower_impl.h"

#include <string.h>

typedef struct sync_ctx {
  loom_arena *a;
  loom_ptrmap shared; /* data variables of the kernel's shared buffers */
  loom_ptrmap varying; /* variables whose value differs between threads */
  loom_status st;
} sync_ctx;

/* ---- shared buffers a statement reads and writes ------------------------- */

#define MAX_TRACKED 64

typedef struct access_set {
  const loom_var *read[MAX_TRACKED], *written[MAX_TRACKED];
  int n_read, n_written;
  bool is_over; /* more buffers than tracked: assume every conflict */
  const loom_ptrmap *shared; /* the kernel's shared data variables */
} access_set;

static bool is_shared(const loom_buffer *b) {
  return loom_ir_scope_kind(b->scope) == LOOM_SCOPE_SHARED ||
         loom_ir_scope_kind(b->scope) == LOOM_SCOPE_WARP;
}

static void add(access_set *s, const loom_var *v, bool is_write) {
  const loom_var **list = is_write ? s->written : s->read;
  int *n = is_write ? &s->n_written : &s->n_read;
  for (int i = 0; i < *n; i++)
    if (list[i] == v)
      return;
  if (*n == MAX_TRACKED) {
    s->is_over = true;
    return;
  }
  list[(*n)++] = v;
}

static loom_visit access_stmt(void *ctx, loom_stmt *s) {
  if (s->kind == LOOM_STMT_STORE && is_shared(s->u.store.buffer))
    add(ctx, s->u.store.buffer->data, true);
  return LOOM_VISIT_GO;
}

/* T.tvm_access_ptr(t, data, offset, extent, rw) into shared memory: a
 * wmma load (rw 1) or store (rw 2) reads or writes through it. */
static void access_ptr(access_set *s, const loom_expr *e) {
  if (e->u.call.n_args != 5)
    return;
  const loom_expr *data = e->u.call.args[1], *rw = e->u.call.args[4];
  int64_t mask = 3;
  if (data->kind != LOOM_EXPR_VAR)
    return;
  if (loom_ptrmap_get(s->shared, data->u.var) < 0)
    return;
  loom_ir_is_const_int(rw, &mask);
  if (mask & 1)
    add(s, data->u.var, false);
  if (mask & 2)
    add(s, data->u.var, true);
}

static loom_visit access_expr(void *ctx, loom_expr *e) {
  if (e->kind == LOOM_EXPR_LOAD && is_shared(e->u.load.buffer))
    add(ctx, e->u.load.buffer->data, false);
  if (e->kind == LOOM_EXPR_CALL && e->u.call.op == LOOM_OP_TVM_ACCESS_PTR)
    access_ptr(ctx, e);
  return LOOM_VISIT_GO;
}

static void accesses(const sync_ctx *S, const loom_stmt *s, access_set *out) {
  memset(out, 0, sizeof *out);
  out->shared = &S->shared;
  loom_ir_visitor v = {.stmt_pre = access_stmt, .expr_pre = access_expr, .ctx = out};
  loom_ir_visit_stmt(&v, s);
}

static bool meets(const loom_var *const *x, int nx, const loom_var *const *y, int ny) {
  for (int i = 0; i < nx; i++)
    for (int k = 0; k < ny; k++)
      if (x[i] == y[k])
        return true;
  return false;
}

/* Must a barrier separate what `since` did from what `next` does? */
static bool conflicts(const access_set *since, const access_set *next) {
  if ((since->is_over || next->is_over) &&
      (since->n_written || next->n_written))
    return true;
  return meets(since->written, since->n_written, next->read, next->n_read) ||
         meets(since->written, since->n_written, next->written, next->n_written) ||
         meets(since->read, since->n_read, next->written, next->n_written);
}

static void merge(access_set *into, const access_set *s) {
  for (int i = 0; i < s->n_read; i++)
    add(into, s->read[i], false);
  for (int i = 0; i < s->n_written; i++)
    add(into, s->written[i], true);
  into->is_over |= s->is_over;
}

/* ---- where all threads arrive ------------------------------------------------ */

/* A value read from memory may differ between threads too. */
static loom_visit find_varying(void *ctx, loom_expr *e) {
  sync_ctx *S = ctx;
  bool is_var = e->kind == LOOM_EXPR_VAR && loom_ptrmap_get(&S->varying, e->u.var) >= 0;
  return is_var || e->kind == LOOM_EXPR_LOAD ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

static bool is_varying(sync_ctx *S, const loom_expr *e) {
  loom_ir_visitor v = {.expr_pre = find_varying, .ctx = S};
  return e && !loom_ir_visit_expr(&v, e);
}

static void mark_varying(sync_ctx *S, const loom_var *v) {
  if (loom_ptrmap_put(&S->varying, v, 1) != LOOM_OK)
    S->st = LOOM_NOMEM;
}

static loom_stmt *barrier(sync_ctx *S) {
  loom_expr *name = loom_ir_str(S->a, "__syncthreads");
  loom_stmt *s = loom_ir_stmt(S->a, LOOM_STMT_EVALUATE, (loom_loc){0});
  if (!name || !s || !(s->u.evaluate.value = loom_ir_call(S->a, LOOM_VOID,
                                                          LOOM_OP_CALL_EXTERN, &name, 1))) {
    S->st = LOOM_NOMEM;
    return NULL;
  }
  return s;
}

static loom_stmt *place(sync_ctx *S, loom_stmt *s);

static loom_stmt *place_seq(sync_ctx *S, loom_stmt *s) {
  int n = s->u.seq.n_stmts;
  loom_stmt **kids = loom_arena_alloc(S->a, (size_t)(2 * n + 1) * sizeof *kids);
  if (!kids) {
    S->st = LOOM_NOMEM;
    return s;
  }
  access_set since, next;
  memset(&since, 0, sizeof since);
  int k = 0;
  bool is_changed = false;
  for (int i = 0; i < n; i++) {
    accesses(S, s->u.seq.stmts[i], &next);
    if (conflicts(&since, &next)) {
      kids[k++] = barrier(S);
      memset(&since, 0, sizeof since);
    }
    kids[k] = place(S, s->u.seq.stmts[i]);
    is_changed |= kids[k++] != s->u.seq.stmts[i];
    merge(&since, &next);
  }
  if (k == n && !is_changed)
    return s;
  loom_stmt *seq = loom_ir_stmt(S->a, LOOM_STMT_SEQ, s->loc);
  if (!seq) {
    S->st = LOOM_NOMEM;
    return s;
  }
  seq->u.seq.stmts = kids;
  seq->u.seq.n_stmts = k;
  return seq;
}

/* A loop every thread runs alike: a barrier ends each iteration when the
 * body reads shared memory it also writes, so that one iteration's reads
 * are done before the next one's writes (and its writes seen by the next
 * one's reads). A body that only fills shared memory (a cooperative
 * fetch) writes each element once and needs none. */
static loom_stmt *place_loop(sync_ctx *S, loom_stmt *s) {
  loom_stmt *n = loom_ir_stmt(S->a, s->kind, s->loc);
  if (!n) {
    S->st = LOOM_NOMEM;
    return s;
  }
  *n = *s;
  n->u.loop.body = place(S, s->u.loop.body);
  access_set body;
  accesses(S, s->u.loop.body, &body);
  int64_t ext;
  bool is_once = loom_ir_is_const_int(s->u.loop.extent, &ext) && ext <= 1;
  bool is_carried = body.is_over ? body.n_written > 0
                    : meets(body.written, body.n_written, body.read, body.n_read);
  if (is_carried && !is_once) {
    loom_stmt *seq = loom_ir_stmt(S->a, LOOM_STMT_SEQ, s->loc);
    loom_stmt **kids = loom_arena_alloc(S->a, 2 * sizeof *kids);
    if (!seq || !kids) {
      S->st = LOOM_NOMEM;
      return s;
    }
    kids[0] = n->u.loop.body;
    kids[1] = barrier(S);
    seq->u.seq.stmts = kids;
    seq->u.seq.n_stmts = 2;
    n->u.loop.body = seq;
  }
  return n;
}

static loom_stmt **body_of(loom_stmt *s) {
  switch (s->kind) {
  case LOOM_STMT_IF: return &s->u.if_.then_case;
  case LOOM_STMT_LET: return &s->u.let.body;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return &s->u.alloc.body;
  case LOOM_STMT_ATTR: return &s->u.attr.body;
  case LOOM_STMT_ASSERT: return &s->u.assert_.body;
  case LOOM_STMT_FOR:
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_STORE:
  case LOOM_STMT_SEQ:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: break;
  }
  return NULL;
}

/* s with its one body given barriers. */
static loom_stmt *with_body(sync_ctx *S, loom_stmt *s) {
  loom_stmt *body = place(S, *body_of(s));
  if (body == *body_of(s))
    return s;
  loom_stmt *n = loom_ir_stmt(S->a, s->kind, s->loc);
  if (!n) {
    S->st = LOOM_NOMEM;
    return s;
  }
  *n = *s;
  *body_of(n) = body;
  return n;
}

/* s, where all threads of the block arrive, with its barriers. */
static loom_stmt *place(sync_ctx *S, loom_stmt *s) {
  if (!s || S->st != LOOM_OK)
    return s;
  switch (s->kind) {
  case LOOM_STMT_SEQ: return place_seq(S, s);
  case LOOM_STMT_FOR:
    if (is_varying(S, s->u.loop.min) || is_varying(S, s->u.loop.extent))
      return s; /* threads leave it at different times: no barrier inside */
    return place_loop(S, s);
  case LOOM_STMT_IF:
    if (is_varying(S, s->u.if_.cond) || s->u.if_.else_case)
      return s;
    return with_body(S, s);
  case LOOM_STMT_LET:
    if (is_varying(S, s->u.let.value))
      mark_varying(S, s->u.let.var);
    return with_body(S, s);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT: return with_body(S, s);
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: break;
  }
  return s;
}

static loom_visit note_shared(void *ctx, loom_stmt *s) {
  sync_ctx *S = ctx;
  if (s->kind == LOOM_STMT_ALLOCATE && is_shared(s->u.alloc.buffer) &&
      loom_ptrmap_put(&S->shared, s->u.alloc.buffer->data, 1) != LOOM_OK)
    S->st = LOOM_NOMEM;
  return LOOM_VISIT_GO;
}

loom_status lower_gpu_sync(loom_arena *a, loom_gpu_kernel *k, loom_diag *d) {
  (void)d;
  if (k->shared_bytes == 0)
    return LOOM_OK;
  sync_ctx S = {.a = a};
  loom_ptrmap_init(&S.varying);
  loom_ptrmap_init(&S.shared);
  loom_ir_visitor v = {.stmt_pre = note_shared, .ctx = &S};
  loom_ir_visit_stmt(&v, k->body);
  for (int i = LOOM_GPU_THREAD_X; i <= LOOM_GPU_THREAD_Z; i++)
    if (k->axes[i])
      mark_varying(&S, k->axes[i]);
  loom_stmt *body = place(&S, k->body);
  loom_ptrmap_free(&S.varying);
  loom_ptrmap_free(&S.shared);
  if (S.st == LOOM_OK)
    k->body = body;
  return S.st;
}
