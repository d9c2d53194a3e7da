/* Long-tail kernels: scans, in-place updates, stencils with offset loops,
 * triangular loops, histograms and loops under an if/else, each normalized
 * (loom_normalize_module) and then scheduled by hand. For every case the
 * test says whether the script is allowed; an allowed one must verify and
 * compute what the unscheduled program computes on random inputs (the
 * interpreter is the oracle), a refused one must give exactly the message
 * recorded here, which names the dependence or the structure that forbids
 * it. */
#include "loom/interp.h"
#include "loom/normalize.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"
#include "interp_compare.h"

#include <stdlib.h>

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"

/* ---- programs (int32, so results compare exactly) ----------------------------- */

static const char *const prefix_sum =
    HEAD "def main(A: T.Buffer((100,), \"int32\"), B: T.Buffer((100,), \"int32\")):\n"
         "    B[0] = 0\n"
         "    for i_ in range(99):\n"
         "        with T.block(\"block\"):\n"
         "            i = T.axis.remap(\"R\", [i_,])\n"
         "            B[i + 1] = B[i] + A[i + 1]\n";

static const char *const inplace =
    HEAD "def main(A: T.Buffer((100,), \"int32\"), B: T.Buffer((100,), \"int32\")):\n"
         "    for i_ in range(100):\n"
         "        with T.block(\"block\"):\n"
         "            i = T.axis.remap(\"S\", [i_,])\n"
         "            B[i] = B[i] + A[i]\n";

static const char *const loop_from_one =
    HEAD "def main(A: T.Buffer((100,), \"int32\"), B: T.Buffer((100,), \"int32\")):\n"
         "    for i_ in range(1, 100):\n"
         "        with T.block(\"block\"):\n"
         "            i = T.axis.remap(\"S\", [i_,])\n"
         "            B[i] = A[i] + 1\n";

static const char *const branches =
    HEAD "def main(A: T.Buffer((64, 64), \"int32\")):\n"
         "    for i in range(64):\n"
         "        if i % 2 == 0:\n"
         "            for j in range(64):\n"
         "                with T.block(\"block1\"):\n"
         "                    A[i, j] = 1\n"
         "        else:\n"
         "            for j in range(64):\n"
         "                with T.block(\"block2\"):\n"
         "                    A[i, j] = A[i, j] * 2\n";

/* Gauss-Seidel in i (row i reads row i - 1 as just updated), independent
 * in j; the i loop starts at 1. */
static const char *const stencil =
    HEAD "def main(A: T.Buffer((32, 48), \"int32\")):\n"
         "    for i in range(1, 32):\n"
         "        for j in range(1, 47):\n"
         "            with T.block(\"sweep\"):\n"
         "                A[i, j] = A[i - 1, j - 1] + A[i - 1, j + 1] - A[i, j]\n";

/* Lower-triangular: row i sums the entries left of the diagonal. */
static const char *const triangular =
    HEAD "def main(L: T.Buffer((40, 40), \"int32\"), S: T.Buffer((40,), \"int32\")):\n"
         "    for i in range(40):\n"
         "        for j in range(i):\n"
         "            with T.block(\"rowsum\"):\n"
         "                S[i] = S[i] + L[i, j]\n";

/* A scan per row: rows are independent, the scan loop is not. */
static const char *const row_scan =
    HEAD "def main(A: T.Buffer((8, 64), \"int32\"), B: T.Buffer((8, 64), \"int32\")):\n"
         "    for r in range(8):\n"
         "        for i_ in range(63):\n"
         "            with T.block(\"scan\"):\n"
         "                vr, i = T.axis.remap(\"SR\", [r, i_])\n"
         "                B[vr, i + 1] = B[vr, i] + A[vr, i + 1]\n";

static const char *const histogram =
    HEAD "def main(X: T.Buffer((256,), \"int32\"), H: T.Buffer((16,), \"int32\")):\n"
         "    for i in range(256):\n"
         "        with T.block(\"hist\"):\n"
         "            H[X[i] % 16] = H[X[i] % 16] + 1\n";

/* A sliding-window sum of a producer: which sums need the element
 * produced in one iteration is not a range of them. */
static const char *const window =
    HEAD "def main(A: T.Buffer((16,), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
         "    B = T.alloc_buffer((16,), \"int32\")\n"
         "    for i in range(16):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.remap(\"S\", [i])\n"
         "            B[vi] = A[vi] * 2\n"
         "    for i, k in T.grid(8, 8):\n"
         "        with T.block(\"S\"):\n"
         "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
         "            with T.init():\n"
         "                S[vi] = 0\n"
         "            S[vi] = S[vi] + B[vi + vk]\n";

/* A consumer shorter than its producer, and an unrelated nest. */
static const char *const shorter =
    HEAD "def main(A: T.Buffer((16, 8), \"int32\"), C: T.Buffer((4, 4), \"int32\"), "
         "D: T.Buffer((15, 8), \"int32\")):\n"
         "    E = T.alloc_buffer((16, 8), \"int32\")\n"
         "    for i, j in T.grid(4, 4):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
         "            C[vi, vj] = A[vi * 4 + vj, 0] + 1\n"
         "    for i, j in T.grid(16, 8):\n"
         "        with T.block(\"E\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
         "            E[vi, vj] = A[vi, vj] - 1\n"
         "    for i, j in T.grid(15, 8):\n"
         "        with T.block(\"D\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
         "            D[vi, vj] = E[vi, vj] * 3\n";

/* As users write them: loops from 1 and 2, iter vars bound to the loops. */
static const char *const from_one_as_written =
    HEAD "def main(A: T.Buffer((100,), \"int32\"), B: T.Buffer((100,), \"int32\")):\n"
         "    for i_ in range(1, 100):\n"
         "        with T.block(\"block\"):\n"
         "            i = T.axis.remap(\"S\", [i_])\n"
         "            B[i] = A[i] + 1\n";

static const char *const offsets_as_written =
    HEAD "def main(A: T.Buffer((32, 48), \"int32\"), B: T.Buffer((32, 48), \"int32\")):\n"
         "    for i in range(1, 31):\n"
         "        for j in range(2, 47):\n"
         "            with T.block(\"sweep\"):\n"
         "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
         "                B[vi, vj] = A[vi - 1, vj - 1] + A[vi + 1, vj - 2]\n";

/* ---- cases ---------------------------------------------------------------------- */

typedef struct lt_case {
  const char *name;
  const char *const *program;
  const char *script;
  const char *error; /* NULL: allowed; else the exact message */
} lt_case;

#define LOOPS1 "b0 = sch.get_block(name=\"block\")\nl1, = sch.get_loops(block=b0)\n"
#define SPLIT1 LOOPS1 "l2, l3 = sch.split(loop=l1, factors=[None, 4])\n"

static const lt_case cases[] = {
    /* The scan: split and unroll, never parallel or vectorized. */
    {"scan-split", &prefix_sum, SPLIT1, NULL},
    {"scan-unroll", &prefix_sum, SPLIT1 "sch.unroll(loop=l3)\n", NULL},
    {"scan-fuse", &prefix_sum, SPLIT1 "l4 = sch.fuse(l2, l3)\n", NULL},
    {"scan-parallel", &prefix_sum, LOOPS1 "sch.parallel(loop=l1)\n",
     "parallel: cannot parallelize loop 'i_': it carries a dependence of "
     "distance 1: B[i + 1] written at 8:13 is read as B[i] at 8:13 by "
     "iteration i_ + 1 (i_ = 0, then i_ = 1)"},
    {"scan-vectorize", &prefix_sum, SPLIT1 "sch.vectorize(loop=l3)\n",
     "vectorize: cannot vectorize loop 'i__1': it carries a dependence of "
     "distance 1: B[i + 1] written at 8:13 is read as B[i] at 8:13 by "
     "iteration i__1 + 1 (i__0 = 0, i__1 = 0, then i__0 = 0, i__1 = 1)"},
    {"scan-reorder", &prefix_sum, SPLIT1 "sch.reorder(l3, l2)\n",
     "reorder: swapping loops 'i__0' and 'i__1' would reverse a dependence: "
     "B[i + 1] written at 8:13 is read as B[i] at 8:13 by iteration i__0 + 1, "
     "i__1 - 3 (i__0 = 0, i__1 = 3, then i__0 = 1, i__1 = 0)"},
    {"scan-root-block", &prefix_sum,
     "b0 = sch.get_block(name=\"store\")\nb1 = sch.get_block(name=\"block\")\n"
     "l1, = sch.get_loops(block=b1)\nsch.unroll(loop=l1)\n",
     NULL},

    /* A scan per row: the row loop parallel, or moved inside and vectorized. */
    {"row-scan-parallel", &row_scan,
     "b0 = sch.get_block(name=\"scan\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.parallel(loop=l1)\nl3, l4 = sch.split(loop=l2, factors=[None, 8])\n"
     "sch.unroll(loop=l4)\n",
     NULL},
    {"row-scan-interchange", &row_scan,
     "b0 = sch.get_block(name=\"scan\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.reorder(l2, l1)\nsch.vectorize(loop=l1)\n",
     NULL},
    {"row-scan-parallel-scan", &row_scan,
     "b0 = sch.get_block(name=\"scan\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.parallel(loop=l2)\n",
     "parallel: cannot parallelize loop 'i_': it carries a dependence of "
     "distance 1: B[vr, i + 1] written at 8:17 is read as B[vr, i] at 8:17 by "
     "iteration i_ + 1 (r = 0, i_ = 0, then r = 0, i_ = 1)"},

    /* The in-place update: everything. */
    {"inplace-parallel", &inplace, LOOPS1 "sch.parallel(loop=l1)\n", NULL},
    {"inplace-vectorize", &inplace, SPLIT1 "sch.vectorize(loop=l3)\n", NULL},
    {"inplace-reorder", &inplace,
     SPLIT1 "sch.reorder(l3, l2)\nsch.parallel(loop=l3)\nsch.vectorize(loop=l2)\n",
     NULL},
    {"inplace-split3", &inplace,
     LOOPS1 "l2, l3, l4 = sch.split(loop=l1, factors=[5, 4, 5])\n"
            "sch.reorder(l4, l3, l2)\nsch.parallel(loop=l4)\n",
     NULL},

    /* A copy stage moves the data one way only: not for an in-place update. */
    {"inplace-reindex-read", &inplace,
     "b0 = sch.get_block(name=\"block\")\nb1 = sch.reindex(block=b0, buffer=(\"read\", 0))\n",
     "reindex: block 'block' reads and writes buffer 'B' in place; a read "
     "copy would never reach the buffer with the block's result"},
    {"inplace-reindex-write", &inplace,
     "b0 = sch.get_block(name=\"block\")\nb1 = sch.reindex(block=b0, buffer=(\"write\", 0))\n",
     "reindex: block 'block' reads and writes buffer 'B' in place; a "
     "write-back copy would leave the block reading an unfilled buffer"},
    {"inplace-reindex-cache-read", &inplace,
     "b0 = sch.get_block(name=\"block\")\n"
     "b1 = sch.reindex_cache_read(block=b0, read_buffer_index=0, "
     "storage_scope=\"local\", index_map=lambda p0: (p0,))\n",
     "reindex_cache_read: block 'block' reads and writes buffer 'B' in place; "
     "a read cache would never reach the buffer with the block's result"},
    {"inplace-reindex-other", &inplace,
     "b0 = sch.get_block(name=\"block\")\nb1 = sch.reindex(block=b0, buffer=(\"read\", 1))\n",
     NULL},

    /* A loop from 1: split after loop-zero. */
    {"from-one-split", &loop_from_one,
     SPLIT1 "sch.parallel(loop=l2)\nsch.vectorize(loop=l3)\n", NULL},

    /* Inlined into a copy of the whole buffer, the loop from 1 keeps its
     * first iteration out by a predicate. */
    {"from-one-reverse-inline", &loop_from_one,
     "b0 = sch.get_block(name=\"block\")\n"
     "b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"global\")\n"
     "sch.reverse_compute_inline(block=b0)\n",
     NULL},

    /* A reduction moved under a loop its instances do not depend on would
     * start over (its init) in each iteration. */
    {"window-reduction-at", &window,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "b1 = sch.get_block(name=\"S\")\nsch.reverse_compute_at(block=b1, loop=l1)\n",
     "reverse_compute_at: block 'S' accumulates into what it writes, but its "
     "instances under loop 'i' would not depend on loop 'i' and run again in "
     "each of its iterations"},
    /* The predicate reverse_compute_inline leaves moves with the block. */
    {"shorter-predicate-moves", &shorter,
     "b0 = sch.get_block(name=\"D\")\nsch.reverse_compute_inline(block=b0)\n"
     "b1 = sch.get_block(name=\"C\")\nl1, l2 = sch.get_loops(block=b1)\n"
     "b2 = sch.get_block(name=\"E\")\n"
     "sch.reverse_compute_at(block=b2, loop=l2, preserve_unit_loops=False)\n",
     NULL},

    /* Branches: the outer loop parallel, the inner ones vectorized; no fuse. */
    {"branches-parallel", &branches,
     "b0 = sch.get_block(name=\"block1\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.parallel(loop=l1)\n"
     "b1 = sch.get_block(name=\"block2\")\nl3, l4 = sch.get_loops(block=b1)\n"
     "sch.vectorize(loop=l4)\nsch.vectorize(loop=l2)\n",
     NULL},
    {"branches-fuse", &branches,
     "b0 = sch.get_block(name=\"block1\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3 = sch.fuse(l1, l2)\n",
     "fuse: loop 'j' is not the only child of loop 'i'; fused loops must be "
     "directly nested, outer first"},
    {"branches-split", &branches,
     "b0 = sch.get_block(name=\"block2\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3, l4 = sch.split(loop=l2, factors=[None, 16])\nsch.parallel(loop=l3)\n",
     NULL},

    /* The stencil: j is free, i carries distance 1. */
    {"stencil-parallel-j", &stencil,
     "b0 = sch.get_block(name=\"sweep\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3, l4 = sch.split(loop=l2, factors=[None, 8])\nsch.parallel(loop=l3)\n"
     "sch.vectorize(loop=l4)\n",
     NULL},
    {"stencil-parallel-i", &stencil,
     "b0 = sch.get_block(name=\"sweep\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.parallel(loop=l1)\n",
     "parallel: cannot parallelize loop 'i': it carries a dependence of "
     "distance 1: A[v_i + 1, v_j + 1] written at 7:17 is read as A[v_i, v_j] "
     "at 7:17 by iteration i + 1 (i = 0, j = 0, then i = 1, j = 1)"},
    {"stencil-interchange", &stencil,
     "b0 = sch.get_block(name=\"sweep\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.reorder(l2, l1)\n",
     "reorder: swapping loops 'i' and 'j' would reverse a dependence: "
     "A[v_i + 1, v_j + 1] written at 7:17 is read as A[v_i, v_j + 2] at 7:17 "
     "by iteration i + 1, j - 1 (i = 0, j = 1, then i = 1, j = 0)"},

    /* The triangle: rows are independent, the row loop sums. */
    {"triangular-parallel", &triangular,
     "b0 = sch.get_block(name=\"rowsum\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.parallel(loop=l1)\nsch.unroll(loop=l2)\n",
     NULL},
    {"triangular-vectorize-j", &triangular,
     "b0 = sch.get_block(name=\"rowsum\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "sch.vectorize(loop=l2)\n",
     "vectorize: cannot vectorize loop 'j': it carries a dependence of "
     "distance 1: S[v_i] read at 7:17 is written at 7:17 by "
     "iteration j + 1 (i = 2, j = 0, then i = 2, j = 1)"},

    /* New loops over the iters' whole domain would leave the triangle. */
    {"triangular-block-layout", &triangular,
     "b0 = sch.get_block(name=\"rowsum\")\n"
     "sch.transform_block_layout(block=b0, index_map=lambda p0, p1: (p0 * 40 + p1,))\n",
     "transform_block_layout: loop 'j' of block 'rowsum' does not run over the "
     "39 points of iter 'v_j' (a triangular or irregular nest), but the new "
     "loops would"},
    /* The inner extent grows with the row: factors must fit the last row. */
    {"triangular-split-short", &triangular,
     "b0 = sch.get_block(name=\"rowsum\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3, l4 = sch.split(loop=l2, factors=[1, 4])\n",
     "split: the product of the factors (4) is less than the largest extent "
     "39 of loop 'j'"},
    {"triangular-split-fits", &triangular,
     "b0 = sch.get_block(name=\"rowsum\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3, l4 = sch.split(loop=l2, factors=[10, 4])\n",
     NULL},
    /* A None factor that folds to 1 over the rows is a unit loop. */
    {"triangular-split-none", &triangular,
     "b0 = sch.get_block(name=\"rowsum\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3, l4, l5 = sch.split(loop=l2, factors=[5, None, 8], "
     "preserve_unit_iters=False)\n",
     NULL},
    /* Under an if, the write-back would copy the rows the block skips. */
    {"branches-reindex-write", &branches,
     "b0 = sch.get_block(name=\"block1\")\nb1 = sch.reindex(block=b0, buffer=(\"write\", 0))\n",
     "reindex: the write-back of 'A' would copy every point of the iters of "
     "block 'block1', which does not write them all: it lies under an if"},

    /* The histogram: the written index is data-dependent. */
    {"histogram-split", &histogram,
     "b0 = sch.get_block(name=\"hist\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3 = sch.split(loop=l1, factors=[None, 16])\nsch.unroll(loop=l3)\n",
     NULL},
    {"histogram-parallel", &histogram,
     "b0 = sch.get_block(name=\"hist\")\nl1, = sch.get_loops(block=b0)\n"
     "sch.parallel(loop=l1)\n",
     "parallel: cannot parallelize loop 'i': the index of H[X[v_i] % 16] is "
     "data-dependent, so two iterations may touch the same element: H[X[v_i] "
     "% 16] read at 6:13 is written at 6:13 by iteration i + 1 (i = 0, then "
     "i = 1); assumed: an index that is not affine may touch any element"},
};

#define N_CASES (int)(sizeof cases / sizeof *cases)

/* Scheduled as written, without loop-zero first: split and fuse take loops
 * that start elsewhere, the new loops from 0 and the bindings offset by the
 * start. */
static const lt_case as_written[] = {
    {"from-one-as-written-split", &from_one_as_written,
     SPLIT1 "sch.parallel(loop=l2)\nsch.vectorize(loop=l3)\n", NULL},
    {"offsets-as-written-fuse", &offsets_as_written,
     "b0 = sch.get_block(name=\"sweep\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3 = sch.fuse(l1, l2)\nl4, l5 = sch.split(loop=l3, factors=[None, 64])\n"
     "sch.parallel(loop=l4)\nsch.vectorize(loop=l5)\n", NULL},
    {"offsets-as-written-split-both", &offsets_as_written,
     "b0 = sch.get_block(name=\"sweep\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3, l4 = sch.split(loop=l1, factors=[None, 7])\n"
     "l5, l6 = sch.split(loop=l2, factors=[4, None])\n"
     "sch.reorder(l5, l3, l6, l4)\nsch.parallel(loop=l5)\n", NULL},

};

#define N_AS_WRITTEN (int)(sizeof as_written / sizeof *as_written)

/* ---- running a case ------------------------------------------------------------------ */

static loom_module *load(const char *text, bool is_as_written, loom_arena *a) {
  loom_module *m = NULL, *n = NULL;
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_script_read(text, strlen(text), "t.py", a, &m, &d) == LOOM_OK &&
            (is_as_written ? (n = m) != NULL
                           : loom_normalize_module(a, m, &n, &d) == LOOM_OK);
  if (!ok)
    fprintf(stderr, "load: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return ok ? n : NULL;
}

static void run_case(const lt_case *c, bool is_as_written) {
  loom_arena *a = loom_arena_new();
  loom_module *m = load(*c->program, is_as_written, a);
  CHECK(m != NULL);
  if (!m) {
    loom_arena_free(a);
    return;
  }
  loom_sched *s = loom_sched_new(m, 7);
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_sched_run_script(s, c->script, strlen(c->script),
                                         "s.py", &d);
  if (c->error) {
    if (st == LOOM_OK)
      fprintf(stderr, "%s: allowed, but should be refused\n", c->name);
    CHECK(st == LOOM_ERROR);
    if (st == LOOM_ERROR && (!d.msg || strcmp(d.msg, c->error)))
      fprintf(stderr, "%s: message differs\n", c->name);
    CHECK_STREQ(d.msg, c->error);
    /* A refusal by the dependence analysis notes the program's statement. */
    if (strstr(c->error, "dependence")) {
      CHECK(d.n_notes == 1);
      CHECK_CONTAINS(d.n_notes > 0 ? d.notes[0].msg : NULL, "of the program: ");
    }
    if (!strcmp(c->name, "scan-parallel"))
      CHECK_STREQ(d.n_notes > 0 ? d.notes[0].msg : NULL,
                  "line 8 of the program: B[i + 1] = B[i] + A[i + 1]");
  } else {
    if (st != LOOM_OK)
      fprintf(stderr, "%s: refused: %s\n", c->name, d.msg ? d.msg : "?");
    CHECK(st == LOOM_OK);
    if (st == LOOM_OK) {
      loom_diag v;
      loom_diag_init(&v);
      CHECK(loom_ir_verify_module(loom_sched_module(s), &v) == LOOM_OK);
      loom_diag_free(&v);
      bool same = interp_same_results(
          m->funcs[0], loom_sched_module(s)->funcs[0], 3, true);
      if (!same)
        fprintf(stderr, "%s: the scheduled program computes otherwise\n", c->name);
      CHECK(same);
    }
  }
  loom_diag_free(&d);
  loom_sched_free(s);
  loom_arena_free(a);
}

/* The query the design-space rules use agrees with the primitives. */
static void test_query(void) {
  static const struct {
    const char *const *program;
    const char *block;
    bool is_parallel[2];
  } qs[] = {
      {&prefix_sum, "block", {false, false}},
      {&inplace, "block", {true, true}},
      {&branches, "block1", {true, true}},
      {&stencil, "sweep", {false, true}},
      {&triangular, "rowsum", {true, false}},
      {&histogram, "hist", {false, false}},
  };
  for (int i = 0; i < (int)(sizeof qs / sizeof *qs); i++) {
    loom_arena *a = loom_arena_new();
    loom_module *m = load(*qs[i].program, false, a);
    CHECK(m != NULL);
    if (!m) {
      loom_arena_free(a);
      continue;
    }
    loom_sched *s = loom_sched_new(m, 1);
    loom_diag d;
    loom_diag_init(&d);
    loom_sched_rv b;
    const loom_sched_rv *loops = NULL;
    int n = 0;
    bool ok = loom_sched_get_block(s, qs[i].block, NULL, &b, &d) == LOOM_OK &&
              loom_sched_get_loops(s, b, &loops, &n, &d) == LOOM_OK;
    CHECK(ok);
    for (int k = 0; ok && k < n && k < 2; k++) {
      bool want = qs[i].is_parallel[k];
      CHECK(loom_sched_loop_is_parallel(s, loops[k]) == want);
      loom_diag why;
      loom_diag_init(&why);
      loom_status st = loom_sched_can_for_kind(s, LOOM_INST_PARALLEL, loops[k], &why);
      CHECK((st == LOOM_OK) == want);
      CHECK(want || (why.msg && strstr(why.msg, "cannot parallelize")));
      loom_diag_free(&why);
      CHECK(loom_sched_can_for_kind(s, LOOM_INST_UNROLL, loops[k], &why) == LOOM_OK);
      loom_diag_free(&why);
    }
    /* Asking changes nothing. */
    CHECK(loom_sched_module(s) == m || loom_ir_equal_module(loom_sched_module(s), m, NULL));
    loom_diag_free(&d);
    loom_sched_free(s);
    loom_arena_free(a);
  }
}

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i], false);
  for (int i = 0; i < N_AS_WRITTEN; i++)
    run_case(&as_written[i], true);
  test_query();
  return test_summary("schedule/longtail");
}
