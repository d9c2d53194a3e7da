/* Allocation placement and compaction: scheduled programs (cache_write and
 * cache_read at several loop levels, and random candidates of the CPU design
 * spaces) are lowered, and the lowered program, run in the interpreter with
 * its bounds checks, must compute what the unscheduled program computes on
 * random inputs. The cache buffers must come out at the size of the tile
 * they hold, inside the loop that owns the tile; buffers whose values cross
 * loop iterations must stay where they were. */
#include "loom/codegen.h"
#include "loom/interp.h"
#include "loom/lower.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "loom/space.h"
#include "test.h"
#include "interp_compare.h"
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 8

/* Collects the distinct buffers a statement stores to or loads from. */
typedef struct bufs {
  const loom_buffer *items[64];
  int n;
} bufs;

static void note(bufs *B, const loom_buffer *b) {
  for (int i = 0; i < B->n; i++)
    if (B->items[i] == b)
      return;
  if (B->n < 64)
    B->items[B->n++] = b;
}

static loom_expr *note_loads(void *ctx, loom_expr *e) {
  if (e->kind == LOOM_EXPR_LOAD)
    note(ctx, e->u.load.buffer);
  return NULL;
}

static void collect(loom_arena *a, const loom_stmt *s, bufs *B,
                    const loom_stmt **allocs, int *n_allocs) {
  if (!s)
    return;
  switch (s->kind) {
  case LOOM_STMT_FOR: collect(a, s->u.loop.body, B, allocs, n_allocs); return;
  case LOOM_STMT_STORE:
    note(B, s->u.store.buffer);
    loom_ir_rewrite_expr(a, s->u.store.value, note_loads, B);
    for (int i = 0; i < s->u.store.n_indices; i++)
      loom_ir_rewrite_expr(a, s->u.store.indices[i], note_loads, B);
    return;
  case LOOM_STMT_IF:
    loom_ir_rewrite_expr(a, s->u.if_.cond, note_loads, B);
    collect(a, s->u.if_.then_case, B, allocs, n_allocs);
    collect(a, s->u.if_.else_case, B, allocs, n_allocs);
    return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      collect(a, s->u.seq.stmts[i], B, allocs, n_allocs);
    return;
  case LOOM_STMT_LET:
    loom_ir_rewrite_expr(a, s->u.let.value, note_loads, B);
    collect(a, s->u.let.body, B, allocs, n_allocs);
    return;
  case LOOM_STMT_ALLOCATE:
    if (*n_allocs < 64)
      allocs[(*n_allocs)++] = s;
    collect(a, s->u.alloc.body, B, allocs, n_allocs);
    return;
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
    collect(a, s->kind == LOOM_STMT_ATTR ? s->u.attr.body
               : s->kind == LOOM_STMT_ASSERT ? s->u.assert_.body
                                             : s->u.alloc.body,
            B, allocs, n_allocs);
    return;
  default: return;
  }
}

/* The lowered function made runnable by the interpreter: its flat views of
 * the parameters declared over their data. */
static loom_func *runnable(loom_arena *a, const loom_func *lf) {
  bufs B = {0};
  const loom_stmt *allocs[64];
  int n_allocs = 0;
  collect(a, lf->body, &B, allocs, &n_allocs);
  loom_stmt *body = lf->body;
  for (int i = 0; i < B.n; i++)
    for (int p = 0; p < lf->n_params; p++)
      if (lf->params[p].buffer && lf->params[p].buffer->data == B.items[i]->data) {
        loom_stmt *d = loom_ir_stmt(a, LOOM_STMT_DECL_BUFFER, body->loc);
        d->u.alloc.buffer = (loom_buffer *)B.items[i];
        d->u.alloc.body = body;
        body = d;
      }
  loom_func *f = loom_arena_dup(a, lf, sizeof *lf);
  f->body = body;
  return f;
}

/* Lowers g (with opts) and checks it against f, the unscheduled program. */
static bool lowers_right(const loom_func *f, const loom_func *g,
                         const loom_lower_options *opts, uint64_t seed,
                         loom_arena *a, const loom_func **lowered) {
  loom_diag d;
  loom_diag_init(&d);
  loom_func *lf = NULL;
  bool ok = loom_lower_func_with(a, g, opts, &lf, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "lower: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  if (!ok || f->n_params > MAX_PARAMS)
    return false;
  *lowered = lf;
  loom_interp_array *x[MAX_PARAMS] = {0}, *y[MAX_PARAMS] = {0};
  ok = interp_run_random(f, seed, x) &&
       interp_run_random(runnable(a, lf), seed, y);
  for (int i = 0; ok && i < f->n_params; i++) {
    char *why = NULL;
    if (x[i] && !loom_interp_compare(y[i], x[i], 1e-4, 1e-5, &why)) {
      fprintf(stderr, "output %d differs %s\n", i, why ? why : "");
      ok = false;
    }
    free(why);
  }
  loom_interp_free_args(f, x);
  loom_interp_free_args(f, y);
  return ok;
}

/* The flat size of the allocation of buffer `name` in a lowered program
 * and the loop variable of the loop right around it ("" at the top); -1
 * when it is not allocated or not of constant size. */
static int64_t alloc_size(loom_arena *a, const loom_func *lf, const char *name) {
  bufs B = {0};
  const loom_stmt *allocs[64];
  int n = 0;
  collect(a, lf->body, &B, allocs, &n);
  for (int i = 0; i < n; i++) {
    const loom_buffer *b = allocs[i]->u.alloc.buffer;
    int64_t size;
    if (!strcmp(b->name, name) && loom_ir_is_const_int(b->shape[0], &size))
      return size;
  }
  return -1;
}

static loom_module *read_file(loom_arena *a, const char *root, const char *rel) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  return program_read_file(a, path);
}

/* ---- hand-written schedules ------------------------------------------------- */

typedef struct sched_case {
  const char *id;
  const char *program; /* under tests/ */
  const char *script;
  const char *buffer;  /* the allocation to measure */
  int64_t size;        /* its flat size after compaction */
  const char *access;  /* NULL or text the C file must hold: an access whose
                        * index speaks only of the loops inside */
  const char *rolled;  /* NULL or a loop variable whose loop must not be
                        * unrolled: it holds a cache and a whole k loop */
} sched_case;

#define MM_TILES                                                               \
  "b0 = sch.get_block(name=\"matmul\", func_name=\"main\")\n"                  \
  "b1 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"global\")\n" \
  "l1, l2, l3 = sch.get_loops(block=b0)\n"                                     \
  "l4, l5, l6 = sch.split(loop=l1, factors=[4, 2, 8])\n"                       \
  "l7, l8, l9 = sch.split(loop=l2, factors=[2, 2, 16])\n"                      \
  "l10, l11 = sch.split(loop=l3, factors=[16, 4])\n"                           \
  "sch.reorder(l4, l7, l5, l8, l10, l6, l11, l9)\n"

static const sched_case sched_cases[] = {
  /* The write cache at each tile level: the tile it holds. */
  {"matmul-cw-inner", "schedule/cases/matmul_64.py",
   MM_TILES "sch.reverse_compute_at(block=b1, loop=l8, preserve_unit_loops=True)\n"
            "sch.parallel(loop=l4)\n",
   "C_global", 8 * 16, "C_global[((i_2 * 16) + j_2)] = (C_global[((i_2 * 16) + j_2)] +", NULL},
  {"matmul-cw-mid", "schedule/cases/matmul_64.py",
   MM_TILES "sch.reverse_compute_at(block=b1, loop=l5, preserve_unit_loops=True)\n",
   "C_global", 8 * 32, NULL, NULL},
  {"matmul-cw-outer", "schedule/cases/matmul_64.py",
   MM_TILES "sch.reverse_compute_at(block=b1, loop=l4, preserve_unit_loops=True)\n",
   "C_global", 16 * 64, NULL, NULL},
  /* Left at the root, it keeps its whole shape. */
  {"matmul-cw-root", "schedule/cases/matmul_64.py", MM_TILES, "C_global", 64 * 64, NULL, NULL},
  /* A read cache of A's rows under the k loop: 8 rows by 4 columns. */
  {"matmul-cr", "schedule/cases/matmul_64.py",
   MM_TILES "b2 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"global\")\n"
            "sch.compute_at(block=b2, loop=l10, preserve_unit_loops=True)\n",
   "A_global", 8 * 4, NULL, NULL},
  /* An auto-unroll over the tiles counts the nest under the cache: the
   * loops holding it run a whole k loop each and must stay loops. */
  {"matmul-cw-unroll", "schedule/cases/matmul_64.py",
   MM_TILES "sch.reverse_compute_at(block=b1, loop=l8, preserve_unit_loops=True)\n"
            "sch.annotate(block_or_loop=l4, ann_key=\"pragma_auto_unroll_max_step\", ann_val=64)\n",
   "C_global", 8 * 16, NULL, "j_1"},
  {"conv2d-pad", "schedule/cases/conv2d.py",
   "b0 = sch.get_block(name=\"conv\", func_name=\"main\")\n"
   "b1 = sch.get_block(name=\"pad\", func_name=\"main\")\n"
   "l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)\n"
   "sch.compute_at(block=b1, loop=l2, preserve_unit_loops=True)\n",
   "pad", 3 * 8 * 4, NULL, NULL},
  {"conv2d-cw", "schedule/cases/conv2d.py",
   "b0 = sch.get_block(name=\"conv\", func_name=\"main\")\n"
   "b1 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"global\")\n"
   "l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)\n"
   "l8, l9 = sch.split(loop=l3, factors=[2, 3])\n"
   "sch.reorder(l2, l8, l9, l4, l5, l6, l7)\n"
   "sch.reverse_compute_at(block=b1, loop=l8, preserve_unit_loops=True)\n",
   "Y_global", 3 * 4, NULL, NULL},
  {"softmax-rows", "schedule/cases/softmax.py",
   "b0 = sch.get_block(name=\"norm\", func_name=\"main\")\n"
   "b1 = sch.get_block(name=\"sum\", func_name=\"main\")\n"
   "b2 = sch.get_block(name=\"exp\", func_name=\"main\")\n"
   "b3 = sch.get_block(name=\"max\", func_name=\"main\")\n"
   "l1, l2 = sch.get_loops(block=b0)\n"
   "sch.compute_at(block=b1, loop=l1, preserve_unit_loops=True)\n"
   "sch.compute_at(block=b2, loop=l1, preserve_unit_loops=True)\n"
   "sch.compute_at(block=b3, loop=l1, preserve_unit_loops=True)\n",
   "ex", 12, NULL, NULL},
  {"softmax-rows-total", "schedule/cases/softmax.py",
   "b0 = sch.get_block(name=\"norm\", func_name=\"main\")\n"
   "b1 = sch.get_block(name=\"sum\", func_name=\"main\")\n"
   "b2 = sch.get_block(name=\"exp\", func_name=\"main\")\n"
   "l1, l2 = sch.get_loops(block=b0)\n"
   "sch.compute_at(block=b1, loop=l1, preserve_unit_loops=True)\n"
   "sch.compute_at(block=b2, loop=l1, preserve_unit_loops=True)\n",
   "total", 1, NULL, NULL},
};

/* Whether the C text unrolls the loop over var: a pragma on the line
 * before its header. */
static bool is_unrolled(const char *c, const char *var) {
  char head[64];
  snprintf(head, sizeof head, "for (int32_t %s = ", var);
  const char *at = strstr(c, head);
  if (!at)
    return false;
  const char *line = at;
  while (line > c && line[-1] != '\n')
    line--;
  const char *prev = line > c ? line - 1 : c;
  while (prev > c && prev[-1] != '\n')
    prev--;
  return prev < line && strstr(prev, "#pragma GCC unroll") != NULL &&
         strstr(prev, "#pragma GCC unroll") < line;
}

static void test_schedules(const char *root) {
  for (size_t i = 0; i < sizeof sched_cases / sizeof *sched_cases; i++) {
    const sched_case *c = &sched_cases[i];
    loom_arena *a = loom_arena_new();
    loom_module *m = read_file(a, root, c->program);
    CHECK(m != NULL);
    if (!m) {
      loom_arena_free(a);
      continue;
    }
    loom_sched *s = program_schedule(m, 1, c->script, c->id);
    bool ok = s != NULL;
    CHECK(ok);
    loom_diag d;
    loom_diag_init(&d);
    const loom_func *lf = NULL, *kept = NULL;
    loom_lower_options keep = {.keep_allocations = true};
    const loom_func *g = loom_sched_module(s)->funcs[0];
    if (ok) {
      bool right = lowers_right(m->funcs[0], g, NULL, 7 + i, a, &lf);
      bool right_kept = lowers_right(m->funcs[0], g, &keep, 7 + i, a, &kept);
      int64_t size = lf ? alloc_size(a, lf, c->buffer) : -2;
      if (!right || !right_kept || size != c->size)
        fprintf(stderr, "%s: right %d, right kept %d, %s size %lld (want %lld)\n",
                c->id, right, right_kept, c->buffer, (long long)size,
                (long long)c->size);
      CHECK(right);
      CHECK(right_kept);
      CHECK(size == c->size);
    }
    if (ok && (c->access || c->rolled)) {
      loom_buf out;
      loom_buf_init(&out);
      CHECK(loom_codegen_c_module(loom_sched_module(s), &out, &d) == LOOM_OK);
      if (c->access)
        CHECK_CONTAINS(out.data, c->access);
      if (c->rolled && out.data) {
        CHECK(strstr(out.data, "#pragma GCC unroll") != NULL);
        CHECK(!is_unrolled(out.data, c->rolled));
        CHECK(is_unrolled(out.data, "ax1")); /* the copy-back's row is short */
      }
      loom_buf_free(&out);
    }
    loom_diag_free(&d);
    loom_sched_free(s);
    loom_arena_free(a);
  }
}

/* ---- buffers whose values cross loop iterations, and buffers the threads
 * that share them keep above them -------------------------------------------- */

typedef struct stay_case {
  const char *id, *text, *buffer;
  int64_t size;
} stay_case;

/* Each thread of 4 blocks of 16 writes and reads its own element of t. */
#define THREADED(scope)                                                        \
  "@T.prim_func\n"                                                             \
  "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n" \
  "    t = T.alloc_buffer((64,), scope=\"" scope "\")\n"                        \
  "    for bx in T.thread_binding(4, thread=\"blockIdx.x\"):\n"                 \
  "        for tx in T.thread_binding(16, thread=\"threadIdx.x\"):\n"           \
  "            with T.block(\"w\"):\n"                                          \
  "                vi = T.axis.spatial(64, bx * 16 + tx)\n"                     \
  "                t[vi] = A[vi] * T.float32(2.0)\n"                            \
  "            with T.block(\"r\"):\n"                                          \
  "                vi = T.axis.spatial(64, bx * 16 + tx)\n"                     \
  "                B[vi] = t[vi] + T.float32(1.0)\n"

static const stay_case stay_cases[] = {
  /* Iteration i reads what iteration i - 1 wrote. */
  {"previous", "@T.prim_func\n"
   "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
   "    t = T.alloc_buffer((8,))\n"
   "    for i in range(8):\n"
   "        with T.block(\"w\"):\n"
   "            vi = T.axis.spatial(8, i)\n"
   "            t[vi] = A[vi] * T.float32(2.0)\n"
   "        with T.block(\"r\"):\n"
   "            vi = T.axis.spatial(8, i)\n"
   "            B[vi] = t[vi] + t[T.max(vi - 1, 0)]\n",
   "t", 8},
  /* A running sum: the accumulator lives across the reduction loop. */
  {"prefix", "@T.prim_func\n"
   "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
   "    acc = T.alloc_buffer((1,))\n"
   "    for i in range(8):\n"
   "        with T.block(\"acc\"):\n"
   "            vi = T.axis.reduce(8, i)\n"
   "            with T.init():\n"
   "                acc[0] = T.float32(0.0)\n"
   "            acc[0] = acc[0] + A[vi]\n"
   "        with T.block(\"out\"):\n"
   "            vi = T.axis.spatial(8, i)\n"
   "            B[vi] = acc[0]\n",
   "acc", 1},
  /* Written in one iteration, read in every later one. */
  {"first", "@T.prim_func\n"
   "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8, 4), \"float32\")):\n"
   "    t = T.alloc_buffer((4,))\n"
   "    for i, j in T.grid(8, 4):\n"
   "        with T.block(\"w\"):\n"
   "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
   "            T.where(i == 0)\n"
   "            t[vj] = A[vj]\n"
   "        with T.block(\"r\"):\n"
   "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
   "            B[vi, vj] = t[vj] + A[vi]\n",
   "t", 4},
  /* Under thread-bound loops the scope decides: shared memory goes into
   * the block loop, not into the threads that share it; local memory is
   * each thread's; global memory stays above every thread loop. */
  {"shared", THREADED("shared"), "t", 16},
  {"local", THREADED("local"), "t", 1},
  {"global", THREADED("global"), "t", 64},
};

static void test_stays(void) {
  for (size_t i = 0; i < sizeof stay_cases / sizeof *stay_cases; i++) {
    const stay_case *c = &stay_cases[i];
    loom_arena *a = loom_arena_new();
    loom_module *m = program_read(a, c->text);
    CHECK(m != NULL);
    const loom_func *lf = NULL;
    if (m) {
      bool right = lowers_right(m->funcs[0], m->funcs[0], NULL, 3, a, &lf);
      int64_t size = lf ? alloc_size(a, lf, c->buffer) : -2;
      if (!right || size != c->size)
        fprintf(stderr, "%s: right %d, size %lld\n", c->id, right, (long long)size);
      CHECK(right);
      CHECK(size == c->size);
    }
    loom_arena_free(a);
  }
}

/* ---- indices of a packed layout --------------------------------------------- */

static const char packed_matmul[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"),"
    " C: T.Buffer((32, 32), \"float32\")):\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* B read through a copy packed by 16 lanes, j tiled by %d, the copy's j
 * by 16. */
static const char packed_script[] =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "b1 = sch.reindex_cache_read(block=b0, read_buffer_index=1, storage_scope=\"global\","
    " index_map=lambda v0, v1, v2: (v1 // 16, v2, v1 %% 16))\n"
    "l2, l3, l4 = sch.get_loops(block=b0)\n"
    "l5, l6 = sch.split(loop=l3, factors=[None, %d])\n"
    "sch.reorder(l5, l2, l4, l6)\n"
    "l7, l8 = sch.get_loops(block=b1)\n"
    "l9, l10 = sch.split(loop=l7, factors=[None, 16])\n";

/* The C lines that index B_global, and whether one divides. */
static bool divides_packed(const loom_module *m, int *n_lines) {
  loom_buf c;
  loom_buf_init(&c);
  loom_diag d;
  loom_diag_init(&d);
  bool divides = false;
  *n_lines = 0;
  if (loom_codegen_c_module(m, &c, &d) == LOOM_OK && c.data)
    for (char *line = strtok(c.data, "\n"); line; line = strtok(NULL, "\n"))
      if (strstr(line, "B_global[")) {
        ++*n_lines;
        divides = divides || strstr(line, "loom_floordiv") || strstr(line, "loom_floormod") ||
                  strstr(line, " / 16)") || strstr(line, " % 16)");
      }
  loom_diag_free(&d);
  loom_buf_free(&c);
  return divides;
}

/* With j's innermost tile at the 16 lanes, B_global[vj // 16, vk, vj % 16]
 * lowers to the tile loops' own terms, free of divisions (the lanes are
 * then contiguous), in the copy and in the block; with a tile of 8 the
 * block's division stays. Both compute the unscheduled program's result. */
static void test_packed_index(void) {
  static const int inner[] = {16, 8};
  for (int i = 0; i < 2; i++) {
    loom_arena *a = loom_arena_new();
    loom_module *m = program_read(a, packed_matmul);
    char script[1024];
    snprintf(script, sizeof script, packed_script, inner[i]);
    loom_sched *s = m ? program_schedule(m, 1, script, "packed") : NULL;
    CHECK(s != NULL);
    if (s) {
      const loom_func *lf = NULL;
      CHECK(lowers_right(m->funcs[0], loom_sched_module(s)->funcs[0], NULL, 5, a, &lf));
      int n_lines;
      bool divides = divides_packed(loom_sched_module(s), &n_lines);
      CHECK(n_lines >= 2);
      CHECK(divides == (inner[i] != 16));
      loom_sched_free(s);
    }
    loom_arena_free(a);
  }
}

/* ---- random candidates of the design spaces --------------------------------- */

#define SAMPLES 4

static int n_candidates, n_compacted;

static void test_space(const char *root, const char *rel) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_file(a, root, rel);
  if (!m) {
    CHECK(false);
    loom_arena_free(a);
    return;
  }
  loom_target tg;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=2 -vector-bytes=32", &tg, &d) == LOOM_OK ||
        loom_target_parse("cpu -cores=2", &tg, &d) == LOOM_OK);
  loom_trace *spaces;
  int n_spaces = 0;
  CHECK(loom_space_generate(m, &tg, a, &spaces, &n_spaces, &d) == LOOM_OK);
  for (int k = 0; k < n_spaces; k++)
    for (int i = 0; i < SAMPLES; i++) {
      loom_sched *s = loom_sched_new(m, 500 * (uint64_t)k + (uint64_t)i);
      loom_diag cd;
      loom_diag_init(&cd);
      if (loom_trace_apply(&spaces[k], s, LOOM_REPLAY_RESAMPLE, &cd) == LOOM_OK &&
          loom_space_postprocess(s, &tg, &cd) == LOOM_OK) {
        const loom_func *g = loom_sched_module(s)->funcs[0], *lf = NULL;
        bool right = lowers_right(m->funcs[0], g, NULL, 11 + (uint64_t)i, a, &lf);
        if (!right) {
          loom_trace t = loom_sched_trace(s);
          loom_buf b;
          loom_buf_init(&b);
          loom_trace_print_py(&t, LOOM_DIALECT_TIR, &b);
          fprintf(stderr, "%s: space %d: wrong candidate:\n%s\n", rel, k,
                  b.data ? b.data : "");
          loom_buf_free(&b);
        }
        CHECK(right);
        n_candidates++;
        bufs B = {0};
        const loom_stmt *allocs[64];
        int n = 0;
        if (lf)
          collect(a, lf->body, &B, allocs, &n);
        for (int j = 0; j < n; j++)
          if (strstr(allocs[j]->u.alloc.buffer->name, "_global"))
            n_compacted += alloc_size(a, lf, allocs[j]->u.alloc.buffer->name) < 64 * 64;
      }
      loom_diag_free(&cd);
      loom_sched_free(s);
    }
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  char tests[1024];
  snprintf(tests, sizeof tests, "%s/tests", root);
  test_schedules(tests);
  test_stays();
  test_packed_index();
  test_space(tests, "schedule/cases/matmul_64.py");
  test_space(tests, "schedule/cases/conv2d.py");
  test_space(tests, "schedule/cases/softmax.py");
  CHECK(n_candidates >= 12);
  CHECK(n_compacted > 0);
  printf("compact: %d candidates lowered, %d cache buffers compacted\n",
         n_candidates, n_compacted);
  return test_summary("lower compaction");
}
