/* A loop nest the dispatch pass marked (include/loom/dispatch.h), printed
 * as the library call that computes it. The routine is looked up when the
 * program first runs (loom_library_symbol in the prelude), so a machine
 * without the library gets return code -4, not a failed load. */
#include "codegen/codegen_impl.h"

#include "loom/dispatch.h"

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

bool emit_library_call(emitter *E, const loom_stmt *loop) {
  loom_gemm g;
  if (E->is_cuda || !E->func || E->parallel_depth > 0 ||
      !loom_dispatch_marked_gemm(E->func, loop, &g))
    return false;
  bool is_single = g.routine[6] == 's';
  const char *t = is_single ? "float" : "double";
  /* CBLAS's enums as ints: row-major 101, no transpose 111, transpose 112. */
  long long lda = g.trans_a ? g.m : g.k, ldb = g.trans_b ? g.k : g.n, ldc = g.n;
  emit_line_start(E);
  loom_buf_printf(E->out, "{ /* %s: %s = %s%s x %s%s, by the library */\n", g.routine,
                  g.c->name, g.a->name, g.trans_a ? "^T" : "", g.b->name,
                  g.trans_b ? "^T" : "");
  E->indent++;
  emit_line_start(E);
  loom_buf_printf(E->out,
                  "typedef void (*loom_gemm_fn)(int, int, int, int, int, int, %s, "
                  "const %s *, int, const %s *, int, %s, %s *, int);\n",
                  t, t, t, t, t);
  emit_line_start(E);
  put(E, "static loom_gemm_fn loom_gemm;\n");
  emit_line_start(E);
  loom_buf_printf(E->out, "if (!loom_gemm) loom_gemm = (loom_gemm_fn)loom_library_symbol(\"%s\");\n",
                  g.routine);
  emit_line_start(E);
  put(E, "if (!loom_gemm) return -4;\n");
  emit_line_start(E);
  loom_buf_printf(E->out, "loom_gemm(101, %d, %d, %lld, %lld, %lld, 1, %s, %lld, %s, %lld, %d, %s, %lld);\n",
                  g.trans_a ? 112 : 111, g.trans_b ? 112 : 111, (long long)g.m,
                  (long long)g.n, (long long)g.k, emit_name(E, g.a->data), lda,
                  emit_name(E, g.b->data), ldb, g.beta, emit_name(E, g.c->data), ldc);
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
  return true;
}
