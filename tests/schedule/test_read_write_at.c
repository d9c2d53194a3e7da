/* read_at and write_at: each allowed script must verify, print the copy
 * block TVM prints (checked as fragments of the printed module) and compute
 * what the unscheduled program computes on random inputs (the interpreter
 * is the oracle); each refused one must give exactly the message recorded
 * here. */
#include "schedule/sched_impl.h"
#include "loom/interp.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"

#include <stdlib.h>

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"

static const char *const matmul =
    HEAD "def main(A: T.Buffer((16, 16), \"int32\"), B: T.Buffer((16, 16), \"int32\"), "
         "C: T.Buffer((16, 16), \"int32\")):\n"
         "    for i, j, k in T.grid(16, 16, 16):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = 0\n"
         "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* Under one loop: a block reads X, the next writes it. */
static const char *const read_then_write =
    HEAD "def main(X: T.Buffer((8,), \"int32\"), Y: T.Buffer((8,), \"int32\")):\n"
         "    for i in range(8):\n"
         "        with T.block(\"r\"):\n"
         "            vi = T.axis.spatial(8, i)\n"
         "            Y[vi] = X[vi] + 1\n"
         "        with T.block(\"w\"):\n"
         "            vi = T.axis.spatial(8, i)\n"
         "            X[vi] = Y[vi] * 2\n";

static const char *const inplace =
    HEAD "def main(A: T.Buffer((10,), \"int32\"), B: T.Buffer((10,), \"int32\")):\n"
         "    for i in range(10):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(10, i)\n"
         "            B[vi] = B[vi] + A[vi]\n";

typedef struct rw_case {
  const char *name;
  const char *const *program;
  const char *script;
  const char *error;       /* NULL: allowed; else the exact message */
  const char *expect[6];   /* fragments of the printed result */
} rw_case;

#define MM "b0 = sch.get_block(name=\"C\")\nl1, l2, l3 = sch.get_loops(block=b0)\n"
#define MM_SPLIT MM "l4, l5 = sch.split(loop=l3, factors=[None, 4])\n"

static const rw_case cases[] = {
    {"read-at-split", &matmul,
     MM_SPLIT "b6 = sch.read_at(loop=l4, block=b0, read_buffer_index=0, "
     "storage_scope=\"shared\")\n",
     NULL,
     {"A_shared = T.alloc_buffer((16, 16), \"int32\", scope=\"shared\")",
      "with T.block(\"A_shared\"):", "v0, v1 = T.axis.remap(\"SS\", [i, k_0])",
      "T.reads(A[v0, v1 * 4:v1 * 4 + 4])", "T.block_attr({\"auto_copy\": True})",
      "A_shared[v0 + ax0, v1 * 4 + ax1] = A[v0 + ax0, v1 * 4 + ax1]"}},
    {"read-at-outer", &matmul,
     MM "b4 = sch.read_at(loop=l1, block=b0, read_buffer_index=1, "
     "storage_scope=\"local\")\n",
     NULL,
     {"with T.block(\"B_local\"):", "for ax0, ax1 in T.grid(16, 16):",
      "T.reads(A[vi, vk], B_local[vk, vj])", NULL}},
    {"write-at-reduction", &matmul,
     MM "b4 = sch.write_at(loop=l2, block=b0, write_buffer_index=0, "
     "storage_scope=\"local\")\n",
     NULL,
     {"with T.block(\"C_local\"):", "v0, v1 = T.axis.remap(\"SS\", [i, j])",
      "T.reads(C_local[v0, v1])", "C[v0 + ax0, v1 + ax1] = C_local[v0 + ax0, v1 + ax1]",
      "C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]", NULL}},
    {"not-under-loop", &read_then_write,
     "b0 = sch.get_block(name=\"r\")\nl1, = sch.get_loops(block=b0)\n"
     "b2 = sch.get_block(name=\"w\")\n"
     "l3 = sch.fuse(l1)\n"
     "b4 = sch.add_unit_loop(block_or_loop=b2)\n"
     "b5 = sch.read_at(loop=b4, block=b0, read_buffer_index=0, "
     "storage_scope=\"local\")\n",
     "read_at: block 'r' is not under loop 'u'", {NULL}},
    {"index", &matmul,
     MM "b4 = sch.read_at(loop=l1, block=b0, read_buffer_index=3, "
     "storage_scope=\"local\")\n",
     "read_at: block 'C' reads 2 buffers, so the index must be in [0, 2), not 3",
     {NULL}},
    {"scope", &matmul,
     MM "b4 = sch.read_at(loop=l1, block=b0, read_buffer_index=0, "
     "storage_scope=\"nowhere\")\n",
     "read_at: 'nowhere' is not a storage scope", {NULL}},
    {"written-after-read", &read_then_write,
     "b0 = sch.get_block(name=\"r\")\nl1, = sch.get_loops(block=b0)\n"
     "b2 = sch.read_at(loop=l1, block=b0, read_buffer_index=0, "
     "storage_scope=\"local\")\n",
     "read_at: buffer 'X' is written under loop 'i' after it is first read "
     "there; the copy would miss what is written", {NULL}},
    {"out-of-bounds", &inplace,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3 = sch.split(loop=l1, factors=[None, 4])\n"
     "b4 = sch.read_at(loop=l2, block=b0, read_buffer_index=1, "
     "storage_scope=\"local\")\n",
     "read_at: the part of buffer 'A' that loop 'i_0' touches may leave the "
     "buffer in dimension 0; the copy would access it out of bounds", {NULL}},
    {"write-at-update", &inplace,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "b2 = sch.write_at(loop=l1, block=b0, write_buffer_index=0, "
     "storage_scope=\"local\")\n",
     "write_at: block 'B' under loop 'i' reads the buffer, and would read the "
     "copy before it holds the buffer's values", {NULL}},
};
#define N_CASES ((int)(sizeof cases / sizeof *cases))

static bool run(const loom_func *f, uint64_t seed, loom_interp_array **args) {
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_interp_alloc_args(f, NULL, args, &d) == LOOM_OK;
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params; i++)
    if (args[i])
      loom_interp_fill_random(args[i], &r);
  ok = ok && loom_interp_run(f, args, NULL, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "interp: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return ok;
}

static bool same_results(const loom_func *f, const loom_func *g) {
  bool ok = true;
  for (uint64_t seed = 1; seed <= 3 && ok; seed++) {
    loom_interp_array *x[8] = {0}, *y[8] = {0};
    ok = f->n_params <= 8 && run(f, seed, x) && run(g, seed, y);
    for (int i = 0; ok && i < f->n_params; i++) {
      char *why = NULL;
      if (x[i] && !loom_interp_compare(y[i], x[i], 0, 0, &why)) {
        fprintf(stderr, "parameter %d differs %s\n", i, why ? why : "");
        ok = false;
      }
      free(why);
    }
    loom_interp_free_args(f, x);
    loom_interp_free_args(g, y);
  }
  return ok;
}

static void run_case(const rw_case *c) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(*c->program, strlen(*c->program), "t.py", a, &m,
                         &d) == LOOM_OK);
  if (!m) {
    fprintf(stderr, "%s: %s\n", c->name, d.msg ? d.msg : "?");
    loom_diag_free(&d);
    loom_arena_free(a);
    return;
  }
  loom_sched *s = loom_sched_new(m, 7);
  loom_status st = loom_sched_run_script(s, c->script, strlen(c->script),
                                         "s.py", &d);
  if (c->error) {
    if (st == LOOM_OK)
      fprintf(stderr, "%s: allowed, but should be refused\n", c->name);
    CHECK(st == LOOM_ERROR);
    CHECK_STREQ(d.msg, c->error);
  } else {
    if (st != LOOM_OK)
      fprintf(stderr, "%s: refused: %s\n", c->name, d.msg ? d.msg : "?");
    CHECK(st == LOOM_OK);
    if (st == LOOM_OK) {
      loom_diag v;
      loom_diag_init(&v);
      CHECK(loom_ir_verify_module(loom_sched_module(s), &v) == LOOM_OK);
      loom_diag_free(&v);
      loom_buf out;
      loom_buf_init(&out);
      loom_script_print_module(loom_sched_module(s), NULL, &out);
      for (int i = 0; i < 6 && c->expect[i]; i++)
        CHECK_CONTAINS(out.data, c->expect[i]);
      loom_buf_free(&out);
      bool same = same_results(m->funcs[0], loom_sched_module(s)->funcs[0]);
      if (!same)
        fprintf(stderr, "%s: the scheduled program computes otherwise\n",
                c->name);
      CHECK(same);
    }
  }
  loom_diag_free(&d);
  loom_sched_free(s);
  loom_arena_free(a);
}

/* Every arena allocation of an allowed case may fail, the 1st, the 2nd,
 * ... until the case runs through: each failure must be a clean error,
 * never a crash or a leak (the sanitizers watch). */
static void run_faults(const rw_case *c) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_script_read(*c->program, strlen(*c->program), "t.py", a, &m,
                             &d) == LOOM_OK;
  loom_diag_free(&d);
  bool done = false;
  for (long at = 1; ok && !done && at < 20000; at++) {
    loom_sched *s = loom_sched_new(m, 7);
    if (!s)
      break;
    loom_faultsim fs = {at, 0};
    loom_arena_set_faultsim(sched_arena(s), &fs);
    loom_diag_init(&d);
    loom_status st = loom_sched_run_script(s, c->script, strlen(c->script),
                                           "s.py", &d);
    done = st == LOOM_OK;
    CHECK(done || d.has_error);
    loom_diag_free(&d);
    loom_sched_free(s);
  }
  CHECK(done);
  loom_arena_free(a);
}

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  for (int i = 0; i < N_CASES; i++)
    if (!cases[i].error)
      run_faults(&cases[i]);
  return test_summary("schedule/read_write_at");
}
