/* Statements to C. Bodies of loops and branches are always braced, since a
 * LET becomes a declaration and C allows no declaration as a lone body. */
#include "codegen/codegen_impl.h"

#include <stdlib.h>

/* Allocations up to this size live on the stack; larger ones, and those of
 * symbolic size, on the heap. */
#define STACK_LIMIT (64 * 1024)

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

void emit_line_start(emitter *E) {
  for (int i = 0; i < E->indent; i++)
    put(E, "  ");
}

/* The rest of a failure branch whose `if (...) {` is written. Outside a
 * parallel loop it frees the heap buffers live here and returns rc. Inside
 * one no return may leave the OpenMP region: it notes rc, which the
 * function returns after the loop, and opens the `else` that guards what
 * the failure skips; then it returns true, and emit_fail_end closes it. */
static bool emit_fail_branch(emitter *E, const char *rc) {
  bool is_noted = E->parallel_depth > 0;
  E->indent++;
  if (E->is_cuda) {
    /* A kernel has no one to return a code to: it stops with a fault,
     * which the runner reports. */
    is_noted = false;
    emit_line_start(E);
    put(E, "__trap();\n");
  } else if (is_noted) {
    emit_line_start(E);
    loom_buf_printf(E->out, "__atomic_store_n(&loom_rc, %s, __ATOMIC_RELAXED);\n", rc);
  } else {
    for (int i = E->n_heap - 1; i >= 0; i--) {
      emit_line_start(E);
      loom_buf_printf(E->out, "loom_free(%s);\n", emit_name(E, E->heap[i]));
    }
    emit_line_start(E);
    loom_buf_printf(E->out, "return %s;\n", rc);
  }
  E->indent--;
  emit_line_start(E);
  put(E, is_noted ? "} else {\n" : "}\n");
  E->indent += is_noted;
  return is_noted;
}

static void emit_fail_end(emitter *E, bool is_noted) {
  if (!is_noted)
    return;
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
}

static void emit_body(emitter *E, const loom_stmt *s) {
  E->indent++;
  emit_stmt(E, s);
  E->indent--;
}

/* The statements a loop nest runs, counting each loop's body extent
 * times; saturates at limit. */
static int64_t count_steps(const loom_stmt *s, int64_t limit, int depth) {
  if (!s || depth > 64)
    return limit;
  int64_t n = 1, ext;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    if (!loom_ir_is_const_int(s->u.loop.extent, &ext) || ext < 0)
      return limit;
    n = count_steps(s->u.loop.body, limit, depth + 1);
    return ext > 0 && n > limit / ext ? limit : ext * n;
  case LOOM_STMT_SEQ:
    n = 0;
    for (int i = 0; i < s->u.seq.n_stmts && n < limit; i++)
      n += count_steps(s->u.seq.stmts[i], limit, depth + 1);
    return n < limit ? n : limit;
  case LOOM_STMT_IF: {
    int64_t a = count_steps(s->u.if_.then_case, limit, depth + 1);
    int64_t b = count_steps(s->u.if_.else_case, limit, depth + 1);
    return a > b ? a : b;
  }
  case LOOM_STMT_LET: return count_steps(s->u.let.body, limit, depth + 1);
  /* A compacted cache is allocated inside the tile loops: the nest under
   * it counts, or a loop over a whole k loop would pass for one step. */
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return count_steps(s->u.alloc.body, limit, depth + 1);
  case LOOM_STMT_ATTR: return count_steps(s->u.attr.body, limit, depth + 1);
  case LOOM_STMT_ASSERT: return count_steps(s->u.assert_.body, limit, depth + 1);
  case LOOM_STMT_BLOCK_REALIZE: /* lowered away before the emitter */
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: break;
  }
  return 1;
}

/* pragma_auto_unroll_max_step on a loop (set by the tuner's
 * postprocessors) asks, as TVM's UnrollLoop pass does, that every serial
 * loop under it whose whole nest runs at most that many steps be
 * unrolled; GCC does it when told. */
static void emit_auto_unroll(emitter *E, const loom_stmt *s, bool is_const_ext,
                             int64_t ext) {
  if (E->unroll_max_step <= 0 || s->u.loop.kind != LOOM_FOR_SERIAL ||
      !is_const_ext || ext <= 1)
    return;
  int64_t steps = count_steps(s, E->unroll_max_step + 1, 0);
  if (steps > E->unroll_max_step)
    return;
  emit_line_start(E);
  loom_buf_printf(E->out, E->is_cuda ? "#pragma unroll %lld\n" : "#pragma GCC unroll %lld\n",
                  (long long)ext);
}

static void emit_stmt_body(emitter *E, const void *ctx) { emit_body(E, ctx); }

static void emit_for(emitter *E, const loom_stmt *s) {
  if (!emit_register_tile(E, s) && !emit_vector_loop(E, s))
    emit_loop(E, s, emit_stmt_body, s->u.loop.body);
}

void emit_note_loop(emitter *E, const loom_stmt *loop) {
  int64_t min;
  if (loom_ir_is_const_int(loop->u.loop.min, &min) && min >= 0 &&
      loom_ptrmap_put(&E->nonneg, loop->u.loop.var, 1) != LOOM_OK)
    E->st = LOOM_NOMEM;
}

void emit_loop(emitter *E, const loom_stmt *s, emit_body_fn *body, const void *ctx) {
  if (emit_library_call(E, s))
    return;
  const char *ty = emit_value_type(s->u.loop.var->dtype);
  const char *i = emit_name(E, s->u.loop.var);
  int64_t min = -1, ext;
  emit_note_loop(E, s);
  bool is_zero_min = loom_ir_is_const_int(s->u.loop.min, &min) && min == 0;
  bool is_const_ext = loom_ir_is_const_int(s->u.loop.extent, &ext);
  bool is_simple_ext = is_const_ext || s->u.loop.extent->kind == LOOM_EXPR_VAR;
  /* The end is evaluated once, before the loop, as TensorIR's semantics say;
   * in a braced scope so OpenMP sees a loop of canonical form. */
  const char *end = NULL;
  if (!is_zero_min || !is_simple_ext) {
    end = emit_fresh(E, "end");
    emit_line_start(E);
    loom_buf_printf(E->out, "{\n");
    E->indent++;
    emit_line_start(E);
    loom_buf_printf(E->out, "const %s %s = ", ty, end);
    emit_expr(E, s->u.loop.min);
    put(E, " + ");
    emit_expr(E, s->u.loop.extent);
    put(E, ";\n");
  }
  switch (E->is_cuda ? LOOM_FOR_SERIAL : s->u.loop.kind) {
  case LOOM_FOR_PARALLEL:
    emit_line_start(E);
    put(E, "#pragma omp parallel for schedule(static)\n");
    break;
  case LOOM_FOR_VECTORIZED:
    emit_line_start(E);
    put(E, "#pragma GCC ivdep\n");
    break;
  case LOOM_FOR_UNROLLED:
    if (is_const_ext && ext > 0 && ext < 65535) {
      emit_line_start(E);
      loom_buf_printf(E->out, "#pragma GCC unroll %lld\n", (long long)ext);
    }
    break;
  case LOOM_FOR_THREAD_BINDING:
    emit_line_start(E);
    loom_buf_printf(E->out, "/* bound to %s: run serially on the CPU */\n",
                    s->u.loop.thread ? s->u.loop.thread : "a thread axis");
    break;
  default: break;
  }
  if (E->is_cuda && (s->u.loop.kind == LOOM_FOR_UNROLLED ||
                     s->u.loop.kind == LOOM_FOR_VECTORIZED) &&
      is_const_ext && ext > 0 && ext < 65535) {
    emit_line_start(E);
    loom_buf_printf(E->out, "#pragma unroll %lld\n", (long long)ext);
  }
  emit_auto_unroll(E, s, is_const_ext, ext);
  int64_t outer_step = E->unroll_max_step;
  const loom_value *step = loom_ir_attr_get(
      s->u.loop.annotations, s->u.loop.n_annotations,
      "pragma_auto_unroll_max_step");
  int64_t v;
  if (step && step->kind == LOOM_VALUE_EXPR &&
      loom_ir_is_const_int(step->expr, &v))
    E->unroll_max_step = v;
  emit_line_start(E);
  loom_buf_printf(E->out, "for (%s %s = ", ty, i);
  emit_expr(E, s->u.loop.min);
  loom_buf_printf(E->out, "; %s < ", i);
  if (end)
    put(E, end);
  else
    emit_expr(E, s->u.loop.extent);
  loom_buf_printf(E->out, "; ++%s) {\n", i);
  bool is_parallel = s->u.loop.kind == LOOM_FOR_PARALLEL && !E->is_cuda;
  E->parallel_depth += is_parallel;
  body(E, ctx);
  E->parallel_depth -= is_parallel;
  E->unroll_max_step = outer_step;
  emit_line_start(E);
  put(E, "}\n");
  if (is_parallel && E->parallel_depth == 0) {
    emit_line_start(E);
    put(E, "if (loom_rc) {\n");
    emit_fail_branch(E, "loom_rc");
  }
  if (end) {
    E->indent--;
    emit_line_start(E);
    put(E, "}\n");
  }
}

static void emit_store(emitter *E, const loom_stmt *s) {
  const loom_buffer *b = s->u.store.buffer;
  if (s->u.store.n_indices != 1) {
    emit_error(E, "store to '%s' is not flattened", b->name);
    return;
  }
  loom_dtype t = b->dtype;
  emit_line_start(E);
  loom_buf_printf(E->out, "%s[", emit_name(E, b->data));
  emit_expr(E, s->u.store.indices[0]);
  put(E, "] = ");
  emit_store_value(E, t, s->u.store.value);
  put(E, ";\n");
}

void emit_store_value(emitter *E, loom_dtype t, const loom_expr *value) {
  bool is_bf16 = t.code == LOOM_DT_BFLOAT, is_f16 = t.code == LOOM_DT_FLOAT && t.bits == 16;
  if (is_bf16 || is_f16)
    put(E, is_bf16 ? "loom_bf16_store(" : "loom_f16_storef("); /* a float16 value is a float */
  else if (t.code == LOOM_DT_BOOL)
    put(E, "(uint8_t)(");
  emit_expr(E, value);
  if (is_bf16 || is_f16 || t.code == LOOM_DT_BOOL)
    put(E, ")");
}

static void emit_alloc(emitter *E, const loom_stmt *s) {
  if (E->is_cuda && emit_fragment_alloc(E, s))
    return;
  const loom_buffer *b = s->u.alloc.buffer;
  const char *name = emit_name(E, b->data);
  const char *ty = emit_elem_type(b->dtype);
  if (loom_ptrmap_put(&E->locals, b->data, 1) != LOOM_OK) {
    E->st = LOOM_NOMEM;
    return;
  }
  int64_t n;
  int bytes = b->dtype.code == LOOM_DT_BOOL || b->dtype.bits <= 8 ? 1 : b->dtype.bits / 8;
  bool is_const = b->ndim == 1 && loom_ir_is_const_int(b->shape[0], &n) && n >= 0;
  emit_line_start(E);
  put(E, "{\n");
  E->indent++;
  emit_line_start(E);
  if (E->is_cuda) {
    /* Shared and local memory (the lowering refused other scopes and
     * sizes known only at run time). */
    bool is_shared = loom_ir_scope_kind(b->scope) == LOOM_SCOPE_SHARED;
    int at = -1;
    for (int i = 0; is_shared && i < E->kernel->n_shared && at < 0; i++)
      if (E->kernel->shared_vars[i] == b->data)
        at = i;
    if (!is_const) {
      emit_error(E, "buffer '%s' has no constant size", b->name);
      return;
    }
    if (at >= 0) /* a slice of the kernel's dynamic shared memory */
      loom_buf_printf(E->out, "%s *%s = (%s *)(loom_smem + %lld);\n", ty, name, ty,
                      (long long)E->kernel->shared_offsets[at]);
    else
      loom_buf_printf(E->out, "%s%s %s[%lld] __align__(16);\n", is_shared ? "__shared__ " : "",
                      ty, name, (long long)(n ? n : 1));
    emit_stmt(E, s->u.alloc.body);
  } else if (is_const && n * bytes <= STACK_LIMIT) {
    loom_buf_printf(E->out, "%s %s[%lld] __attribute__((aligned(64)));\n", ty, name,
                    (long long)(n ? n : 1));
    emit_stmt(E, s->u.alloc.body);
  } else {
    loom_buf_printf(E->out, "%s *%s = (%s *)loom_alloc((size_t)", ty, name, ty);
    emit_expr(E, b->shape[0]);
    loom_buf_printf(E->out, " * %d);\n", bytes);
    emit_line_start(E);
    loom_buf_printf(E->out, "if (!%s) {\n", name);
    bool is_noted = emit_fail_branch(E, "-3");
    if (E->n_heap == E->cap_heap) {
      int cap = E->cap_heap ? 2 * E->cap_heap : 8;
      const loom_var **p = realloc(E->heap, (size_t)cap * sizeof *p);
      if (!p) {
        E->st = LOOM_NOMEM;
        return;
      }
      E->heap = p;
      E->cap_heap = cap;
    }
    E->heap[E->n_heap++] = b->data;
    emit_stmt(E, s->u.alloc.body);
    E->n_heap--;
    emit_line_start(E);
    loom_buf_printf(E->out, "loom_free(%s);\n", name);
    emit_fail_end(E, is_noted);
  }
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
}

/* A failed T.assert returns -1. Inside a parallel loop it notes -1 for
 * after the loop and skips its body (the statements after it in its
 * sequence). */
static void emit_assert(emitter *E, const loom_stmt *s) {
  emit_line_start(E);
  put(E, "if (!(");
  emit_expr(E, s->u.assert_.cond);
  put(E, ")) {\n");
  bool is_noted = emit_fail_branch(E, "-1");
  emit_stmt(E, s->u.assert_.body);
  emit_fail_end(E, is_noted);
}

void emit_let_line(emitter *E, const loom_stmt *let) {
  emit_bind_let(E, let->u.let.var, let->u.let.value);
  emit_line_start(E);
  loom_buf_printf(E->out, "const %s %s = ", emit_value_type(let->u.let.var->dtype),
                  emit_name(E, let->u.let.var));
  emit_expr(E, let->u.let.value);
  put(E, ";\n");
}

void emit_stmt(emitter *E, const loom_stmt *s) {
  if (!s || E->st != LOOM_OK)
    return;
  E->loc = s->loc;
  switch (s->kind) {
  case LOOM_STMT_FOR: emit_for(E, s); return;
  case LOOM_STMT_STORE: emit_store(E, s); return;
  case LOOM_STMT_IF:
    emit_line_start(E);
    put(E, "if (");
    emit_expr(E, s->u.if_.cond);
    put(E, ") {\n");
    emit_body(E, s->u.if_.then_case);
    if (s->u.if_.else_case) {
      emit_line_start(E);
      put(E, "} else {\n");
      emit_body(E, s->u.if_.else_case);
    }
    emit_line_start(E);
    put(E, "}\n");
    return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      emit_stmt(E, s->u.seq.stmts[i]);
    return;
  case LOOM_STMT_EVALUATE:
    if (s->u.evaluate.value->kind == LOOM_EXPR_INT)
      return; /* T.evaluate(0): a placeholder */
    emit_line_start(E);
    put(E, "(void)");
    emit_expr(E, s->u.evaluate.value);
    put(E, ";\n");
    return;
  case LOOM_STMT_LET:
    emit_let_line(E, s);
    emit_stmt(E, s->u.let.body);
    return;
  case LOOM_STMT_ALLOCATE: emit_alloc(E, s); return;
  case LOOM_STMT_DECL_BUFFER: emit_stmt(E, s->u.alloc.body); return;
  case LOOM_STMT_ATTR: emit_stmt(E, s->u.attr.body); return;
  case LOOM_STMT_ASSERT: emit_assert(E, s); return;
  case LOOM_STMT_BLOCK_REALIZE:
    emit_error(E, "a block left after lowering");
    return;
  case LOOM_STMT_COUNT_: break;
  }
}
