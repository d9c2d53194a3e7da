/* compute_inline and reverse_compute_inline refuse what TVM refuses and
 * what would change the program: a producer whose buffer outlives its
 * scope (read again outside it), and a buffer with two writers. Each
 * program here was changed by the primitive before the check existed (the
 * GPU schedule of dlight, which inlines what it can, found them). TVM 0.27
 * refuses the same steps ("is an output block", "not a complete block"). */
#include "program.h"
#include "test.h"

#include <stdlib.h>

/* A is written inside block "scope" but allocated outside it, and C reads
 * it after the scope. */
static const char outlives[] =
    "@T.prim_func\n"
    "def main(B: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
    "    A = T.alloc_buffer((128, 128))\n"
    "    for i0, j0 in T.grid(8, 8):\n"
    "        with T.block(\"scope\"):\n"
    "            i, j = T.axis.remap(\"SS\", [i0, j0])\n"
    "            T.reads(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            T.writes(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16], B[i * 16:i * 16 + 16, j * 16:j * 16 + 16])\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"A\"):\n"
    "                    vi = T.axis.spatial(128, i * 16 + x)\n"
    "                    vj = T.axis.spatial(128, j * 16 + y)\n"
    "                    A[vi, vj] = T.float32(1.0)\n"
    "            for x, y in T.grid(16, 16):\n"
    "                with T.block(\"B\"):\n"
    "                    vi = T.axis.spatial(128, i * 16 + x)\n"
    "                    vj = T.axis.spatial(128, j * 16 + y)\n"
    "                    B[vi, vj] = A[vi, vj] + T.float32(1.0)\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            C[vi, vj] = A[vi, vj] * T.float32(2.0)\n";

/* A is written by two blocks, the second overwriting the first. */
static const char two_writers[] =
    "@T.prim_func\n"
    "def main(B: T.Buffer((128,), \"float32\")):\n"
    "    A = T.alloc_buffer((128,))\n"
    "    for i in range(128):\n"
    "        with T.block(\"A0\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            A[vi] = T.float32(1.0)\n"
    "    for i in range(128):\n"
    "        with T.block(\"A1\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            A[vi] = T.float32(2.0)\n"
    "    for i in range(128):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            B[vi] = A[vi]\n";

/* The script's last step is refused with a message holding want. */
static void refused(const char *program, const char *script, const char *want) {
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, program);
  CHECK(m != NULL);
  loom_sched *s = m ? loom_sched_new(m, 1) : NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(s && loom_sched_run_script(s, script, strlen(script), "case", &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, want);
  loom_diag_free(&d);
  if (s)
    loom_sched_free(s);
  loom_arena_free(a);
}

int main(void) {
  refused(outlives, "b = sch.get_block(\"A\")\nsch.compute_inline(b)\n",
          "block 'A' is an output block: it writes 'A', which block 'scope' around it "
          "does not allocate");
  refused(outlives, "b = sch.get_block(\"B\")\nsch.reverse_compute_inline(b)\n",
          "producer 'A' is an output block: it writes 'A', which block 'scope' around "
          "it does not allocate");
  refused(two_writers, "b = sch.get_block(\"A0\")\nsch.compute_inline(b)\n",
          "block 'A0' is not the only block writing 'A' in its scope (2 do)");
  refused(two_writers, "b = sch.get_block(\"A1\")\nsch.compute_inline(b)\n",
          "block 'A1' is not the only block writing 'A' in its scope (2 do)");
  return test_summary("inline refusals");
}
