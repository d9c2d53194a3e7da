/* The C backend against hand-written C: the untuned matmul of
 * examples/matmul.py (1024 cubed) compiled by Loom, side by side with the
 * same naive loop written by hand, both built with the same compiler and
 * flags; then the compile cost per function, alone and batched 32 to a file
 * (how the tuner builds candidates). Run with `make bench` from the
 * repository root, or give the matmul file as the argument. */
#include "loom/codegen.h"
#include "loom/runtime.h"
#include "loom/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 1024
#define BATCH 32

static const char hand_c[] =
    "#include <stdint.h>\n"
    "int32_t naive(void *const *args, const int64_t *const *shapes) {\n"
    "  const float *restrict A = args[0], *restrict B = args[1];\n"
    "  float *restrict C = args[2];\n"
    "  (void)shapes;\n"
    "  for (int i = 0; i < 1024; i++)\n"
    "    for (int j = 0; j < 1024; j++) {\n"
    "      C[i * 1024 + j] = 0.0f;\n"
    "      for (int k = 0; k < 1024; k++)\n"
    "        C[i * 1024 + j] += A[i * 1024 + k] * B[k * 1024 + j];\n"
    "    }\n"
    "  return 0;\n"
    "}\n";

typedef int32_t (*kernel_fn)(void *const *, const int64_t *const *);

typedef struct call {
  kernel_fn fn;
  void *args[3];
  const int64_t *shapes[3];
} call;

static int run_call(void *ctx) {
  call *c = ctx;
  return c->fn(c->args, c->shapes) ? 1 : 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void die(const char *what, loom_diag *d) {
  fprintf(stderr, "bench_codegen: %s: %s\n", what, d && d->msg ? d->msg : "failed");
  for (int i = 0; d && i < d->n_notes; i++)
    fprintf(stderr, "  %s\n", d->notes[i].msg);
  exit(1);
}

static loom_runtime_lib *compile(const char *src, size_t len, const char *flags,
                                 double *ms) {
  loom_diag d;
  loom_diag_init(&d);
  loom_runtime_cc_options cc = {.flags = flags};
  loom_runtime_lib *lib;
  if (loom_runtime_compile(src, len, &cc, &lib, ms, &d) != LOOM_OK)
    die("compile", &d);
  return lib;
}

static double time_kernel(kernel_fn fn, loom_runtime_array **arrays) {
  call c = {.fn = fn};
  for (int i = 0; i < 3; i++) {
    c.args[i] = arrays[i]->data;
    c.shapes[i] = arrays[i]->shape;
  }
  loom_runtime_timer_config cfg = loom_runtime_timer_default();
  cfg.warmup = 1;
  cfg.repeat = 3;
  cfg.number = 1;
  loom_runtime_timing t;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_runtime_time(run_call, &c, &cfg, &t, &d) != LOOM_OK)
    die("timing", &d);
  return t.median_ms;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/matmul.py";
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(path, &text, &len, &d) != LOOM_OK)
    die(path, &d);
  loom_arena *arena = loom_arena_new();
  loom_module *m;
  if (loom_script_read(text, len, path, arena, &m, &d) != LOOM_OK)
    die(path, &d);
  const char *env = getenv("LOOM_CFLAGS");
  char flags[512];
  snprintf(flags, sizeof flags, "%s %s", env ? env : "-O3 -march=native",
           LOOM_CODEGEN_CFLAGS);
  printf("flags: %s\n", flags);

  /* One function alone. */
  loom_buf src;
  loom_buf_init(&src);
  double t0 = now_ms();
  if (loom_codegen_c_module(m, &src, &d) != LOOM_OK)
    die("codegen", &d);
  double emit_ms = now_ms() - t0, alone_ms, hand_ms, batch_ms;
  loom_runtime_lib *lib = compile(src.data, src.len, flags, &alone_ms);
  loom_runtime_lib *hand = compile(hand_c, sizeof hand_c - 1, flags, &hand_ms);

  /* BATCH copies of it in one file, as the tuner batches candidates. */
  const loom_func *funcs[BATCH];
  char names[BATCH][16];
  const char *symbols[BATCH];
  for (int i = 0; i < BATCH; i++) {
    funcs[i] = m->funcs[0];
    snprintf(names[i], sizeof names[i], "cand%d", i);
    symbols[i] = names[i];
  }
  loom_buf many;
  loom_buf_init(&many);
  if (loom_codegen_c_funcs(funcs, symbols, BATCH, &many, &d) != LOOM_OK)
    die("codegen", &d);
  loom_runtime_lib_free(compile(many.data, many.len, flags, &batch_ms));
  printf("emit C: %.3f ms per function\n", emit_ms);
  printf("compile: %.1f ms alone, %.1f ms per function batched %d to a file "
         "(%.1f ms the file)\n", alone_ms, batch_ms / BATCH, BATCH, batch_ms);

  int64_t shape[2] = {N, N};
  loom_runtime_array *arrays[3];
  for (int i = 0; i < 3; i++) {
    arrays[i] = loom_runtime_array_new(LOOM_FLOAT32, shape, 2, 0);
    if (!arrays[i])
      die("allocate", NULL);
    loom_runtime_array_fill(arrays[i], (uint64_t)i + 1);
  }
  char sym[64];
  kernel_fn loom_fn = (kernel_fn)loom_runtime_lib_symbol(
      lib, loom_codegen_c_symbol(m->funcs[0]->name, sym, sizeof sym));
  kernel_fn hand_fn = (kernel_fn)loom_runtime_lib_symbol(hand, "naive");
  if (!loom_fn || !hand_fn)
    die("symbol lookup", NULL);
  double loom_t = time_kernel(loom_fn, arrays);
  double hand_t = time_kernel(hand_fn, arrays);
  printf("matmul %dx%dx%d untuned: loom %.1f ms, hand-written C %.1f ms, "
         "ratio loom/hand %.3f\n", N, N, N, loom_t, hand_t, loom_t / hand_t);
  for (int i = 0; i < 3; i++)
    loom_runtime_array_free(arrays[i]);
  loom_runtime_lib_free(lib);
  loom_runtime_lib_free(hand);
  loom_buf_free(&src);
  loom_buf_free(&many);
  loom_arena_free(arena);
  free(text);
  return 0;
}
