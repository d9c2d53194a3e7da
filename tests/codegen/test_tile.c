/* Register tiles and plain floor division in the C backend. Tiled matmuls
 * (float32 and float64, a write cache or the output itself, + and -) must
 * hold their accumulator in vector variables across the k loop; programs
 * where that would change the result (no noalias, a nest that revisits an
 * element, an update reading the accumulator, lanes that do not divide
 * into vectors) must not. Each is compiled and run against the
 * interpreter, as are random candidates of the CPU design space. Floor
 * division and modulo of non-negative loop indices by constants must come
 * out as C's / and %, and stay the prelude's helpers otherwise. Freed heap
 * buffers are kept in the prelude's pool for the next call. */
#include "loom/schedule.h"
#include "loom/script.h"
#include "loom/space.h"
#include "test.h"
#include "interp_compare.h"
#include "program.h"

#include <stdlib.h>

#define TILE_MARK "vec_mem"

/* A matmul C = C op A * B of M x N x K in dtype, with its update written
 * as `update` (%s: the product). */
static void matmul(char *out, size_t n, const char *dtype, bool is_noalias,
                   const char *update) {
  char body[256];
  snprintf(body, sizeof body, update, "A[vi, vk] * B[vk, vj]");
  snprintf(out, n,
           "@T.prim_func\n"
           "def main(A: T.Buffer((16, 32), \"%s\"), B: T.Buffer((32, 64), \"%s\"), "
           "C: T.Buffer((16, 64), \"%s\")):\n"
           "%s"
           "    for i, j, k in T.grid(16, 64, 32):\n"
           "        with T.block(\"C\"):\n"
           "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
           "            with T.init():\n"
           "                C[vi, vj] = T.%s(0.0)\n"
           "            C[vi, vj] = %s\n",
           dtype, dtype, dtype,
           is_noalias ? "    T.func_attr({\"tir.noalias\": True})\n" : "", dtype, body);
}

/* i = [2, 2, 4], j = [2, 1, 32] (lanes j3), k = [4, 8]; the k1 loop runs
 * around the 4 x 32 micro-tile. */
#define TILING(jfactors)                                                       \
  "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"                       \
  "l1, l2, l3 = sch.get_loops(block=b0)\n"                                     \
  "i0, i1, i2 = sch.split(loop=l1, factors=[2, 2, 4])\n"                       \
  "j0, j1, j2 = sch.split(loop=l2, factors=" jfactors ")\n"                    \
  "k0, k1 = sch.split(loop=l3, factors=[4, 8])\n"                              \
  "sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)\n"                              \
  "sch.vectorize(loop=j2)\n"

#define DECOMPOSE "sch.decompose_reduction(block=b0, loop=k0)\n"

#define CACHE                                                                  \
  "b1 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"global\")\n" \
  "sch.reverse_compute_at(block=b1, loop=j1, preserve_unit_loops=True)\n"

typedef struct tile_case {
  const char *id, *dtype;
  bool is_noalias;
  const char *update, *script;
  bool is_tiled;
} tile_case;

static const tile_case cases[] = {
  {"cache", "float32", true, "C[vi, vj] + %s", TILING("[2, 1, 32]") CACHE DECOMPOSE, true},
  {"cache-no-noalias", "float32", false, "C[vi, vj] + %s", TILING("[2, 1, 32]") CACHE DECOMPOSE, true},
  {"output", "float32", true, "C[vi, vj] + %s", TILING("[2, 1, 32]") DECOMPOSE, true},
  {"output-aliased", "float32", false, "C[vi, vj] + %s", TILING("[2, 1, 32]") DECOMPOSE, false},
  {"float64", "float64", true, "C[vi, vj] + %s", TILING("[2, 1, 32]") CACHE DECOMPOSE, true},
  {"reversed", "float32", true, "%s + C[vi, vj]", TILING("[2, 1, 32]") CACHE DECOMPOSE, true},
  {"minus", "float32", true, "C[vi, vj] - %s", TILING("[2, 1, 32]") CACHE DECOMPOSE, true},
  {"scaled", "float32", true, "C[vi, vj] + %s * T.float32(0.5)", TILING("[2, 1, 32]") CACHE DECOMPOSE, true},
  {"lanes-8x4", "float32", true, "C[vi, vj] + %s", TILING("[4, 2, 8]") CACHE DECOMPOSE, true},
  {"lanes-odd", "float32", true, "C[vi, vj] + %s", TILING("[64, 1, 1]") CACHE DECOMPOSE, false},
  /* The update reads the accumulator a second time. */
  {"reads-acc", "float32", true, "C[vi, vj] + %s * C[vi, vj]", TILING("[2, 1, 32]") CACHE DECOMPOSE, false},
};

/* The compiled module leaves what the interpreter computes for the
 * original, within rounding, on inputs of two seeds. */
static bool compiled_right(const loom_module *orig, const loom_module *got) {
  const loom_func *f = orig->funcs[0];
  bool ok = true;
  for (uint64_t seed = 1; seed <= 2 && ok; seed++) {
    loom_interp_array *want[8] = {0};
    loom_runtime_array *cc[8] = {0};
    ok = interp_run_random(f, seed, want) && interp_run_compiled(got, seed, cc);
    for (int i = 0; ok && i < f->n_params; i++) {
      char *why = NULL;
      loom_interp_array v = loom_runtime_array_view(cc[i]);
      if (!loom_interp_compare(&v, want[i], 1e-5, 1e-5, &why)) {
        fprintf(stderr, "param %d: %s\n", i, why ? why : "");
        ok = false;
      }
      free(why);
    }
    for (int i = 0; i < f->n_params; i++)
      loom_runtime_array_free(cc[i]);
    loom_interp_free_args(f, want);
  }
  return ok;
}

static char *c_text(const loom_module *m) {
  loom_buf b;
  loom_buf_init(&b);
  loom_diag d;
  loom_diag_init(&d);
  if (loom_codegen_c_module(m, &b, &d) != LOOM_OK)
    fprintf(stderr, "C backend: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return b.data;
}

static void test_cases(void) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const tile_case *c = &cases[i];
    char text[2048];
    matmul(text, sizeof text, c->dtype, c->is_noalias, c->update);
    loom_arena *a = loom_arena_new();
    loom_module *m = program_read(a, text);
    CHECK(m != NULL);
    if (!m) {
      loom_arena_free(a);
      continue;
    }
    loom_sched *s = program_schedule(m, 1, c->script, c->id);
    bool ok = s != NULL;
    CHECK(ok);
    if (ok) {
      char *src = c_text(loom_sched_module(s));
      bool is_tiled = src && strstr(src, TILE_MARK);
      bool right = compiled_right(m, loom_sched_module(s));
      if (is_tiled != c->is_tiled || !right)
        fprintf(stderr, "%s: tiled %d (want %d), right %d\n", c->id, is_tiled,
                c->is_tiled, right);
      CHECK(is_tiled == c->is_tiled);
      CHECK(right);
      free(src);
    }
    loom_sched_free(s);
    loom_arena_free(a);
  }
}

/* Rows 16 elements apart holding 32 lanes each: two (row, lane) points
 * share an element, so one vector per row would lose updates. */
static void test_overlap(void) {
  static const char text[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((8, 32), \"float32\"), "
      "C: T.Buffer((80,), \"float32\")):\n"
      "    T.func_attr({\"tir.noalias\": True})\n"
      "    for k in range(8):\n"
      "        for i in range(4):\n"
      "            for j in T.vectorized(32):\n"
      "                with T.block(\"C\"):\n"
      "                    vk, vi, vj = T.axis.remap(\"RSS\", [k, i, j])\n"
      "                    C[vi * 16 + vj] = C[vi * 16 + vj] + A[vi, vk] * B[vk, vj]\n";
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, text);
  CHECK(m != NULL);
  if (m) {
    char *src = c_text(m);
    CHECK(src && !strstr(src, TILE_MARK));
    CHECK(compiled_right(m, m));
    free(src);
  }
  loom_arena_free(a);
}

/* A write cache of 128 KiB inside a parallel loop lives on the heap; its
 * failure path cannot return out of the OpenMP region (gcc refuses the
 * file), so the kernel must compile and compute the matmul. */
static void test_parallel_heap(void) {
  static const char text[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((256, 16), \"float32\"), B: T.Buffer((16, 256), \"float32\"), "
      "C: T.Buffer((256, 256), \"float32\")):\n"
      "    for i, j, k in T.grid(256, 256, 16):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0.0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
  static const char script[] =
      "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
      "l1, l2, l3 = sch.get_loops(block=b0)\n"
      "i0, i1 = sch.split(loop=l1, factors=[2, 128])\n"
      "b1 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"global\")\n"
      "sch.reverse_compute_at(block=b1, loop=i0, preserve_unit_loops=True)\n"
      "sch.parallel(loop=i0)\n";
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, text);
  loom_sched *s = m ? program_schedule(m, 1, script, "heap") : NULL;
  CHECK(s != NULL);
  if (s) {
    char *src = c_text(loom_sched_module(s));
    CHECK_CONTAINS(src, "loom_alloc(");
    CHECK_CONTAINS(src, "__atomic_store_n(&loom_rc, -3, __ATOMIC_RELAXED);");
    CHECK_CONTAINS(src, "if (loom_rc) {\n    return loom_rc;\n  }");
    CHECK(compiled_right(m, loom_sched_module(s)));
    free(src);
  }
  loom_sched_free(s);
  loom_arena_free(a);
}

/* Heap buffers go back to a pool of 8 when freed and are handed out again:
 * the same block for the same size, never one over 4 times too big, and the
 * smallest block leaves a full pool first. */
static void test_heap_pool(void) {
  static const char text[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((4,), \"float32\")):\n"
      "    for i in range(4):\n"
      "        with T.block(\"A\"):\n"
      "            vi = T.axis.spatial(4, i)\n"
      "            A[vi] = T.float32(1.0)\n";
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, text);
  char *src = m ? c_text(m) : NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_runtime_lib *lib = NULL;
  CHECK(src && loom_runtime_compile(src, strlen(src), NULL, &lib, NULL, &d) == LOOM_OK);
  void *(*alloc)(size_t) =
      lib ? (void *(*)(size_t))loom_runtime_lib_symbol(lib, "loom_alloc") : NULL;
  void (*release)(void *) =
      lib ? (void (*)(void *))loom_runtime_lib_symbol(lib, "loom_free") : NULL;
  CHECK(alloc && release);
  if (alloc && release) {
    enum { KIB = 1024, N = 9 };
    char *p = alloc(1024 * KIB);
    CHECK(p && (uintptr_t)p % 64 == 0);
    memset(p, 1, 1024 * KIB);
    release(p);
    char *q = alloc(1024 * KIB);
    CHECK(q == p);
    release(q);
    char *small = alloc(100);
    CHECK(small && small != p);
    release(small);
    p = alloc(1024 * KIB); /* the pooled 1 MiB block: small is left alone in the pool */
    char *held[N];
    for (int i = 0; i < N; i++) {
      held[i] = alloc((size_t)(i + 1) * 128 * KIB);
      CHECK(held[i] != NULL);
    }
    for (int i = 0; i < N; i++)
      release(held[i]);
    q = alloc(128 * KIB);
    CHECK(q == held[1]);
    release(q);
    release(p);
  }
  loom_runtime_lib_free(lib);
  loom_diag_free(&d);
  free(src);
  loom_arena_free(a);
}

/* ---- random candidates of the design space ------------------------------------ */

static void test_space(void) {
  char text[2048];
  matmul(text, sizeof text, "float32", true, "C[vi, vj] + %s");
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, text);
  loom_target tg;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(m && loom_target_parse("cpu -cores=2 -vector-bytes=64", &tg, &d) == LOOM_OK);
  loom_trace *spaces;
  int n_spaces = 0, n_run = 0, n_tiled = 0;
  CHECK(m && loom_space_generate(m, &tg, a, &spaces, &n_spaces, &d) == LOOM_OK);
  for (int i = 0; i < 24 && n_spaces > 0; i++) {
    loom_sched *s = loom_sched_new(m, 77 + (uint64_t)i);
    loom_diag cd;
    loom_diag_init(&cd);
    if (loom_trace_apply(&spaces[i % n_spaces], s, LOOM_REPLAY_RESAMPLE, &cd) == LOOM_OK &&
        loom_space_postprocess(s, &tg, &cd) == LOOM_OK) {
      char *src = c_text(loom_sched_module(s));
      n_tiled += src && strstr(src, TILE_MARK);
      bool right = compiled_right(m, loom_sched_module(s));
      if (!right)
        fprintf(stderr, "candidate %d is wrong:\n%s\n", i, src ? src : "");
      CHECK(right);
      free(src);
      n_run++;
    }
    loom_diag_free(&cd);
    loom_sched_free(s);
  }
  printf("tile: %d candidates compiled, %d with register tiles\n", n_run, n_tiled);
  CHECK(n_run >= 12);
  CHECK(n_tiled >= 1);
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* ---- floor division -------------------------------------------------------------- */

static void test_floor(void) {
  static const struct {
    const char *text;
    const char *want, *unwanted;
  } floor_cases[] = {
    /* A fused loop split back into its rows and columns. */
    {"@T.prim_func\n"
     "def main(A: T.Buffer((6, 8), \"int32\"), B: T.Buffer((6, 8), \"int32\")):\n"
     "    for f in range(48):\n"
     "        with T.block(\"B\"):\n"
     "            vi = T.axis.spatial(6, f // 8)\n"
     "            vj = T.axis.spatial(8, f % 8)\n"
     "            B[vi, vj] = A[vi, vj] + 1\n",
     "(f / 8)", "loom_floordiv_i32("},
    /* An index that may be negative keeps the helper: floor, not
     * truncation. */
    {"@T.prim_func\n"
     "def main(A: T.Buffer((8,), \"int32\"), B: T.Buffer((8,), \"int32\")):\n"
     "    for i in range(8):\n"
     "        with T.block(\"B\"):\n"
     "            vi = T.axis.spatial(8, i)\n"
     "            B[vi] = A[(vi - 5) // 2 + 3] + (vi - 5) % 3\n",
     "loom_floordiv_i32(", NULL},
    /* Data from memory keeps it too. */
    {"@T.prim_func\n"
     "def main(A: T.Buffer((8,), \"int32\"), B: T.Buffer((8,), \"int32\")):\n"
     "    for i in range(8):\n"
     "        with T.block(\"B\"):\n"
     "            vi = T.axis.spatial(8, i)\n"
     "            B[vi] = A[vi] // 3 + A[vi] % 4\n",
     "loom_floordiv_i32(", NULL},
  };
  for (size_t i = 0; i < sizeof floor_cases / sizeof *floor_cases; i++) {
    loom_arena *a = loom_arena_new();
    loom_module *m = program_read(a, floor_cases[i].text);
    CHECK(m != NULL);
    if (m) {
      char *src = c_text(m);
      CHECK_CONTAINS(src, floor_cases[i].want);
      if (floor_cases[i].unwanted)
        CHECK(src && !strstr(src, floor_cases[i].unwanted));
      CHECK(compiled_right(m, m));
      free(src);
    }
    loom_arena_free(a);
  }
}

int main(void) {
  test_cases();
  test_overlap();
  test_parallel_heap();
  test_heap_pool();
  test_space();
  test_floor();
  return test_summary("codegen register tiles");
}
