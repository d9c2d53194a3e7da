/* Tensor intrinsics for tensorize: a name, a description prim func (what
 * the intrinsic computes, as a loop nest around one block) and an
 * implementation prim func (how, over the same buffer parameters), both kept
 * as TVMScript text. The built-in CPU intrinsics are a const table; user
 * intrinsics live in a set the caller owns and attaches to a schedule, so
 * that nothing global changes after start-up and schedules on parallel
 * workers share no mutable state. */
#include "schedule/sched_impl.h"

#include <string.h>

/* ---- the built-in intrinsics -------------------------------------------------
 * The implementations keep each output element's accumulation in the order
 * of its reduction loop, so a tensorized program computes what the original
 * computes, rounding included. */

/* C[0] += A[k] * B[k], k < 16: one row of A against one column of B. */
static const char dot16_desc[] =
    "@T.prim_func\n"
    "def loom_f32_dot_16_desc(A: T.Buffer((16,), \"float32\", offset_factor=1), "
    "B: T.Buffer((16,), \"float32\", offset_factor=1), "
    "C: T.Buffer((1,), \"float32\", offset_factor=1)):\n"
    "    with T.block(\"root\"):\n"
    "        T.reads(C[0:1], A[0:16], B[0:16])\n"
    "        T.writes(C[0:1])\n"
    "        for k in range(16):\n"
    "            with T.block(\"update\"):\n"
    "                vk = T.axis.reduce(16, k)\n"
    "                T.reads(C[0], A[vk], B[vk])\n"
    "                T.writes(C[0])\n"
    "                C[0] = C[0] + A[vk] * B[vk]\n";

static const char dot16_impl[] =
    "@T.prim_func\n"
    "def loom_f32_dot_16_impl(a: T.handle, b: T.handle, c: T.handle):\n"
    "    A = T.match_buffer(a, (16,), offset_factor=1)\n"
    "    B = T.match_buffer(b, (16,), offset_factor=1)\n"
    "    C = T.match_buffer(c, (1,), offset_factor=1)\n"
    "    with T.block(\"root\"):\n"
    "        T.reads(C[0:1], A[0:16], B[0:16])\n"
    "        T.writes(C[0:1])\n"
    "        for k in T.unroll(16):\n"
    "            C[0] = C[0] + A[k] * B[k]\n";

/* C[i, j] += A[i, k] * B[k, j] over a 4 x 16 x 4 tile: a register tile of
 * four rank-1 updates, each row of C one 16-lane vector. */
static const char gemm_desc[] =
    "@T.prim_func\n"
    "def loom_f32_gemm_4x16x4_desc(A: T.Buffer((4, 4), \"float32\", "
    "offset_factor=1), B: T.Buffer((4, 16), \"float32\", offset_factor=1), "
    "C: T.Buffer((4, 16), \"float32\", offset_factor=1)):\n"
    "    with T.block(\"root\"):\n"
    "        T.reads(C[0:4, 0:16], A[0:4, 0:4], B[0:4, 0:16])\n"
    "        T.writes(C[0:4, 0:16])\n"
    "        for i, j, k in T.grid(4, 16, 4):\n"
    "            with T.block(\"update\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                T.reads(C[vi, vj], A[vi, vk], B[vk, vj])\n"
    "                T.writes(C[vi, vj])\n"
    "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char gemm_impl[] =
    "@T.prim_func\n"
    "def loom_f32_gemm_4x16x4_impl(a: T.handle, b: T.handle, c: T.handle):\n"
    "    A = T.match_buffer(a, (4, 4), strides=(A_s0, A_s1), offset_factor=1)\n"
    "    B = T.match_buffer(b, (4, 16), strides=(B_s0, B_s1), offset_factor=1)\n"
    "    C = T.match_buffer(c, (4, 16), strides=(C_s0, C_s1), offset_factor=1)\n"
    "    with T.block(\"root\"):\n"
    "        T.reads(C[0:4, 0:16], A[0:4, 0:4], B[0:4, 0:16])\n"
    "        T.writes(C[0:4, 0:16])\n"
    "        for k in range(4):\n"
    "            for i in T.unroll(4):\n"
    "                for j in T.vectorized(16):\n"
    "                    C[i, j] = C[i, j] + A[i, k] * B[k, j]\n";

static const loom_sched_intrin builtins[] = {
    {"loom_f32_dot_16", dot16_desc, dot16_impl},
    {"loom_f32_gemm_4x16x4", gemm_desc, gemm_impl},
};
#define N_BUILTINS (int)(sizeof builtins / sizeof *builtins)

/* ---- sets of user intrinsics ---------------------------------------------------- */

struct loom_intrin_set {
  loom_arena *arena; /* the copies of names and texts */
  loom_sched_intrin *items;
  int n, cap;
};

loom_intrin_set *loom_sched_intrins_new(void) {
  loom_intrin_set *set = calloc(1, sizeof *set);
  if (!set)
    return NULL;
  if (!(set->arena = loom_arena_new())) {
    free(set);
    return NULL;
  }
  return set;
}

void loom_sched_intrins_free(loom_intrin_set *set) {
  if (!set)
    return;
  loom_arena_free(set->arena);
  free(set->items);
  free(set);
}

int loom_sched_intrin_count(const loom_intrin_set *set) {
  return N_BUILTINS + sched_n_intrins_wmma + (set ? set->n : 0);
}

const loom_sched_intrin *loom_sched_intrin_at(const loom_intrin_set *set,
                                              int i) {
  if (i >= 0 && i < N_BUILTINS)
    return &builtins[i];
  i -= N_BUILTINS;
  if (i >= 0 && i < sched_n_intrins_wmma)
    return &sched_intrins_wmma[i];
  i -= sched_n_intrins_wmma;
  return set && i >= 0 && i < set->n ? &set->items[i] : NULL;
}

const loom_sched_intrin *loom_sched_intrin_get(const loom_intrin_set *set,
                                               const char *name) {
  for (int i = 0; i < loom_sched_intrin_count(set); i++) {
    const loom_sched_intrin *t = loom_sched_intrin_at(set, i);
    if (!strcmp(t->name, name))
      return t;
  }
  return NULL;
}

/* The one prim func of text, read into a, with a root block realize as its
 * body (what tensorize matches and splices). */
loom_status sched_intrin_read(const loom_sched_intrin *t, bool is_impl,
                              loom_arena *a, const loom_func **out,
                              loom_diag *d) {
  const char *text = is_impl ? t->impl : t->desc;
  const char *what = is_impl ? "implementation" : "description";
  loom_loc nowhere = {0};
  loom_module *m;
  /* A diagnostic of its own: a successful read would still point the
   * caller's at the intrinsic's text, and a later error at a script line
   * would show a line of the intrinsic. */
  loom_diag rd;
  loom_diag_init(&rd);
  loom_status st = loom_script_read(text, strlen(text), what, a, &m, &rd);
  if (st != LOOM_OK && !d->has_error) {
    loom_diag_error(d, rd.loc, "%s", rd.msg ? rd.msg : "cannot be read");
    loom_diag_set_source(d, text, strlen(text));
  }
  loom_diag_free(&rd);
  if (st != LOOM_OK)
    return st;
  if (m->n_funcs != 1)
    return loom_diag_error(d, nowhere, "the %s of tensor intrinsic '%s' must "
                           "be one prim func, not %d", what, t->name,
                           m->n_funcs);
  const loom_func *f = m->funcs[0];
  const loom_stmt *body = f->body;
  if (!body || body->kind != LOOM_STMT_BLOCK_REALIZE ||
      body->u.realize.n_iter_values != 0)
    return loom_diag_error(d, nowhere, "the %s of tensor intrinsic '%s' must "
                           "have a root block (`with T.block(\"root\"):`) as "
                           "its body", what, t->name);
  for (int i = 0; i < f->n_params; i++)
    if (!f->params[i].buffer)
      return loom_diag_error(d, nowhere, "parameter %d of the %s of tensor "
                             "intrinsic '%s' is a scalar; every parameter "
                             "must be a buffer", i, what, t->name);
  *out = f;
  return LOOM_OK;
}

/* The description and implementation must take the same buffers: as many,
 * and pairwise of one dtype and constant shape. */
static loom_status check_pair(const loom_sched_intrin *t, const loom_func *desc,
                              const loom_func *impl, loom_diag *d) {
  loom_loc nowhere = {0};
  if (desc->n_params != impl->n_params)
    return loom_diag_error(d, nowhere, "tensor intrinsic '%s': the "
                           "description has %d parameters, the "
                           "implementation %d", t->name, desc->n_params,
                           impl->n_params);
  for (int i = 0; i < desc->n_params; i++) {
    const loom_buffer *x = desc->params[i].buffer, *y = impl->params[i].buffer;
    bool same = loom_dtype_eq(x->dtype, y->dtype) && x->ndim == y->ndim;
    for (int k = 0; same && k < x->ndim; k++) {
      int64_t ex, ey;
      same = loom_ir_is_const_int(x->shape[k], &ex) &&
             loom_ir_is_const_int(y->shape[k], &ey) && ex == ey;
    }
    if (!same)
      return loom_diag_error(d, nowhere, "tensor intrinsic '%s': parameter "
                             "%d ('%s' and '%s') must have the same dtype and "
                             "the same constant shape in the description and "
                             "the implementation", t->name, i, x->name,
                             y->name);
  }
  return LOOM_OK;
}

loom_status sched_intrin_check(const loom_sched_intrin *t, loom_diag *d) {
  loom_arena *a = loom_arena_new();
  if (!a)
    return LOOM_NOMEM;
  const loom_func *desc = NULL, *impl = NULL;
  loom_status st = sched_intrin_read(t, false, a, &desc, d);
  if (st == LOOM_OK)
    st = sched_intrin_read(t, true, a, &impl, d);
  if (st == LOOM_OK)
    st = check_pair(t, desc, impl, d);
  loom_arena_free(a);
  return st;
}

loom_status loom_sched_intrin_register(loom_intrin_set *set, const char *name,
                                       const char *desc_text,
                                       const char *impl_text, loom_diag *d) {
  loom_loc nowhere = {0};
  if (!set || !name || !*name || !desc_text || !impl_text)
    return loom_diag_error(d, nowhere, "a tensor intrinsic needs a set, a "
                           "name, a description and an implementation");
  if (loom_sched_intrin_get(set, name))
    return loom_diag_error(d, nowhere, "tensor intrinsic '%s' is already "
                           "registered", name);
  loom_sched_intrin t = {name, desc_text, impl_text};
  TRY(sched_intrin_check(&t, d));
  if (set->n == set->cap) {
    int cap = set->cap ? 2 * set->cap : 8;
    loom_sched_intrin *items = realloc(set->items, (size_t)cap * sizeof *items);
    if (!items)
      return LOOM_NOMEM;
    set->items = items;
    set->cap = cap;
  }
  t.name = loom_arena_strdup(set->arena, name);
  t.desc = loom_arena_strdup(set->arena, desc_text);
  t.impl = loom_arena_strdup(set->arena, impl_text);
  if (!t.name || !t.desc || !t.impl)
    return LOOM_NOMEM;
  set->items[set->n++] = t;
  return LOOM_OK;
}

void loom_sched_set_intrins(loom_sched *s, const loom_intrin_set *set) {
  s->intrins = set;
}

const loom_intrin_set *loom_sched_intrins(const loom_sched *s) {
  return s->intrins;
}
