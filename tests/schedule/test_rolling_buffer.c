/* rolling_buffer: on cascades of max pools tiled and computed at a tile
 * loop, the rolled program must verify, print what TVM prints (fragments of
 * the printed module) and compute what the untiled program computes on
 * random inputs (the interpreter is the oracle), for the hand-written cases
 * and for random tile sizes; each refused case must give exactly the
 * message recorded here. */
#include "prim_case.h"

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"

#define POOL(name, out, in, h, stride)                                          \
  "    for i0, i1, i2, i3, i4, i5 in T.grid(1, " #h ", " #h ", 4, 3, 3):\n"     \
  "        with T.block(\"" name "\"):\n"                                      \
  "            ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap(\"SSSSRR\", "       \
  "[i0, i1, i2, i3, i4, i5])\n"                                               \
  "            with T.init():\n"                                              \
  "                " out "[ax0, ax1, ax2, ax3] = -1000\n"                      \
  "            " out "[ax0, ax1, ax2, ax3] = T.max(" out "[ax0, ax1, ax2, ax3], " \
  in "[ax0, ax1 * " #stride " + rv0, ax2 * " #stride " + rv1, ax3])\n"

static const char cascade2[] =
    HEAD "def main(A: T.Buffer((1, 12, 12, 4), \"int32\"), "
         "C: T.Buffer((1, 8, 8, 4), \"int32\")):\n"
         "    B = T.alloc_buffer((1, 10, 10, 4), \"int32\")\n"
    POOL("B", "B", "A", 10, 1) POOL("C", "C", "B", 8, 1);

static const char cascade3[] =
    HEAD "def main(A: T.Buffer((1, 24, 24, 4), \"int32\"), "
         "C: T.Buffer((1, 8, 8, 4), \"int32\")):\n"
         "    B_0 = T.alloc_buffer((1, 22, 22, 4), \"int32\")\n"
         "    B_1 = T.alloc_buffer((1, 10, 10, 4), \"int32\")\n"
    POOL("B_0", "B_0", "A", 22, 1) POOL("B_1", "B_1", "B_0", 10, 2)
    POOL("C", "C", "B_1", 8, 1);

/* Two writers of B. */
static const char two_writers[] =
    HEAD "def main(A: T.Buffer((16,), \"int32\"), C: T.Buffer((8,), \"int32\")):\n"
         "    B = T.alloc_buffer((16,), \"int32\")\n"
         "    for i in range(16):\n"
         "        with T.block(\"B0\"):\n"
         "            vi = T.axis.spatial(16, i)\n"
         "            B[vi] = A[vi]\n"
         "    for i in range(16):\n"
         "        with T.block(\"B1\"):\n"
         "            vi = T.axis.spatial(16, i)\n"
         "            B[vi] = B[vi] + 1\n"
         "    for i in range(8):\n"
         "        with T.block(\"C\"):\n"
         "            vi = T.axis.spatial(8, i)\n"
         "            C[vi] = B[vi * 2] + B[vi * 2 + 1]\n";

#define TILE(fh, fw)                                                           \
  "b0 = sch.get_block(name=\"C\")\n"                                           \
  "l1, l2, l3, l4, l5, l6 = sch.get_loops(block=b0)\n"                        \
  "l7, l8 = sch.split(loop=l2, factors=[None, " #fh "])\n"                     \
  "l9, l10 = sch.split(loop=l3, factors=[None, " #fw "])\n"                    \
  "sch.reorder(l1, l7, l9, l4, l8, l10)\n"

static const prim_case cases[] = {
    {"width", cascade2,
     TILE(8, 4) "b11 = sch.get_block(name=\"B\")\n"
     "sch.compute_at(block=b11, loop=l9)\n"
     "sch.rolling_buffer(block=b11, write_buffer_index=0)\n",
     NULL,
     {"B = T.alloc_buffer((1, 10, 6, 4), \"int32\")",
      "T.where(i2_0 < 1 or 2 <= ax1)",
      "B[ax0_1, ax1_1, ax2_1 % 6, ax3_1] = T.max(",
      "ax2 = T.axis.opaque(8, i2_0 * 4 + i2_1)", NULL}, true},
    {"height-and-width", cascade2,
     TILE(4, 4) "b11 = sch.get_block(name=\"B\")\n"
     "sch.compute_at(block=b11, loop=l9)\n"
     "sch.rolling_buffer(block=b11, write_buffer_index=0)\n",
     NULL,
     {"B = T.alloc_buffer((1, 6, 10, 4), \"int32\")",
      "T.where((i1_0 < 1 or 2 <= ax0) and (i2_0 < 1 or 2 <= ax1))", NULL}, true},
    {"output-block", cascade2,
     TILE(4, 4) "sch.rolling_buffer(block=b0, write_buffer_index=0)\n",
     "rolling_buffer: block 'C' is an output block: 'C' is not allocated by "
     "the block around it, so it cannot shrink", {NULL}, false},
    {"index", cascade2,
     "b0 = sch.get_block(name=\"B\")\n"
     "sch.rolling_buffer(block=b0, write_buffer_index=1)\n",
     "rolling_buffer: block 'B' writes 1 buffer, so the index must be in "
     "[0, 1), not 1", {NULL}, false},
    {"not-tiled", cascade2,
     "b0 = sch.get_block(name=\"B\")\n"
     "sch.rolling_buffer(block=b0, write_buffer_index=0)\n",
     "rolling_buffer: block 'B' must be tiled so that the lowest common "
     "ancestor of the accesses of 'B' (the block and its consumers) is a loop",
     {NULL}, false},
    {"no-overlap", cascade2,
     TILE(8, 8) "b11 = sch.get_block(name=\"B\")\n"
     "l12, l13 = sch.split(loop=l4, factors=[None, 2])\n"
     "sch.compute_at(block=b11, loop=l12)\n"
     "sch.rolling_buffer(block=b11, write_buffer_index=0)\n",
     "rolling_buffer: no dimension of 'B' overlaps between the tiles of block "
     "'B' (a start such as hh_0 * 4 over an extent larger than 4)", {NULL}, false},
    {"iters-permuted", cascade2,
     TILE(4, 4) "b11 = sch.get_block(name=\"B\")\n"
     "sch.reorder_block_iter_var(block=b11, new_order=[0, 2, 1, 3, 4, 5])\n"
     "sch.compute_at(block=b11, loop=l9)\n"
     "sch.rolling_buffer(block=b11, write_buffer_index=0)\n",
     "rolling_buffer: block 'B' writes dimension 1 of 'B' at another index "
     "than its iter 1, from which the overlap of the tiles is skipped", {NULL}, false},
    {"two-writers", two_writers,
     "b0 = sch.get_block(name=\"B0\")\n"
     "sch.rolling_buffer(block=b0, write_buffer_index=0)\n",
     "rolling_buffer: block 'B0' is required to have only RAW dependences, but "
     "block 'B1' also writes 'B'", {NULL}, false},
};
#define N_CASES ((int)(sizeof cases / sizeof *cases))


/* Applies script to program; a refusal is fine, an applied one must verify
 * and compute what the program computes. Returns whether it applied. */
static int run_tiling(const char *program, const char *script) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(program, strlen(program), "t.py", a, &m, &d) ==
        LOOM_OK);
  int applied = 0;
  loom_sched *s = m ? loom_sched_new(m, 7) : NULL;
  if (s && loom_sched_run_script(s, script, strlen(script), "s.py", &d) ==
               LOOM_OK) {
    applied = 1;
    loom_diag v;
    loom_diag_init(&v);
    CHECK(loom_ir_verify_module(loom_sched_module(s), &v) == LOOM_OK);
    loom_diag_free(&v);
    bool same = interp_same_results(m->funcs[0],
                                    loom_sched_module(s)->funcs[0], 1, true);
    if (!same)
      fprintf(stderr, "tiling computes otherwise:\n%s", script);
    CHECK(same);
  }
  loom_diag_free(&d);
  loom_sched_free(s);
  loom_arena_free(a);
  return applied;
}

/* Tilings of the cascades with random tile sizes: each must either be
 * refused or compute what the untiled program computes. */
static void random_tilings(void) {
  static const int sizes[] = {1, 2, 3, 4, 8};
  loom_rng r;
  loom_rng_seed(&r, 20261123);
  int applied = 0;
  for (int t = 0; t < 16; t++) {
    bool three = loom_rng_below(&r, 2);
    int fh = sizes[loom_rng_below(&r, 5)], fw = sizes[loom_rng_below(&r, 5)];
    char script[1600];
    int n = snprintf(script, sizeof script,
                     "b0 = sch.get_block(name=\"C\")\n"
                     "l1, l2, l3, l4, l5, l6 = sch.get_loops(block=b0)\n"
                     "l7, l8 = sch.split(loop=l2, factors=[None, %d])\n"
                     "l9, l10 = sch.split(loop=l3, factors=[None, %d])\n"
                     "sch.reorder(l1, l7, l9, l4, l8, l10)\n",
                     fh, fw);
    if (three)
      n += snprintf(script + n, sizeof script - (size_t)n,
                    "b11 = sch.get_block(name=\"B_1\")\n"
                    "sch.compute_at(block=b11, loop=l9)\n"
                    "b12 = sch.get_block(name=\"B_0\")\n"
                    "sch.compute_at(block=b12, loop=l9)\n"
                    "sch.rolling_buffer(block=b12, write_buffer_index=0)\n"
                    "sch.rolling_buffer(block=b11, write_buffer_index=0)\n");
    else
      n += snprintf(script + n, sizeof script - (size_t)n,
                    "b11 = sch.get_block(name=\"B\")\n"
                    "sch.compute_at(block=b11, loop=l9)\n"
                    "sch.rolling_buffer(block=b11, write_buffer_index=0)\n");
    applied += run_tiling(three ? cascade3 : cascade2, script);
  }
  /* Most tilings overlap and apply. */
  printf("rolling_buffer: %d of 16 random tilings applied\n", applied);
  CHECK(applied >= 10);
}

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  random_tilings();
  return test_summary("schedule/rolling_buffer");
}
