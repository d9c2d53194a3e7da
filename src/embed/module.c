/* Modules for bindings: read from text, printed, described as JSON, and
 * compared. */
#include "embed/embed_impl.h"

#include <stdlib.h>
#include <string.h>

void loom_embed_free(void *p) { free(p); }

loom_embed_module *embed_module_new(void) {
  loom_embed_module *m = calloc(1, sizeof *m);
  if (m && !(m->arena = loom_arena_new())) {
    free(m);
    return NULL;
  }
  return m;
}

void loom_embed_module_free(loom_embed_module *m) {
  if (!m)
    return;
  loom_arena_free(m->arena);
  free(m);
}

/* The diagnostic of a failed read points into the module's copies of the
 * text and the file name, which go with it: point it at the caller's. */
static void point_at_caller(loom_diag *d, const char *kept_file, const char *file,
                            const char *text, size_t len) {
  if (d->loc.file == kept_file)
    d->loc.file = file;
  for (int i = 0; i < d->n_notes; i++)
    if (d->notes[i].loc.file == kept_file)
      d->notes[i].loc.file = file;
  loom_diag_set_source(d, text, len);
}

loom_embed_module *loom_embed_read(const char *text, size_t len, const char *file,
                                   loom_diag *d) {
  loom_embed_module *m = embed_module_new();
  char *kept = m ? loom_arena_alloc(m->arena, len + 1) : NULL;
  const char *kept_file = m ? loom_arena_strdup(m->arena, file ? file : "<string>") : NULL;
  if (!kept || !kept_file) {
    loom_embed_module_free(m);
    loom_diag_error(d, (loom_loc){file, 0, 0}, "out of memory reading the program");
    return NULL;
  }
  memcpy(kept, text, len);
  loom_module *mod;
  if (loom_script_read(kept, len, kept_file, m->arena, &mod, d) != LOOM_OK) {
    point_at_caller(d, kept_file, file, text, len);
    loom_embed_module_free(m);
    return NULL;
  }
  m->module = mod;
  return m;
}

loom_embed_module *embed_module_copy(const loom_module *mod, const char *what,
                                     loom_diag *d) {
  loom_buf b;
  loom_buf_init(&b);
  loom_print_opts o = {LOOM_DIALECT_TIR};
  loom_script_print_module(mod, &o, &b);
  loom_embed_module *m = NULL;
  if (b.has_failed)
    loom_diag_error(d, (loom_loc){what, 0, 0}, "out of memory printing the module");
  else
    m = loom_embed_read(b.data, b.len, what, d);
  /* The text a failed read points into goes now: keep the message. */
  loom_diag_set_source(d, NULL, 0);
  loom_buf_free(&b);
  return m;
}

const loom_module *loom_embed_module_ir(const loom_embed_module *m) { return m->module; }

char *loom_embed_module_script(const loom_embed_module *m, loom_dialect dialect) {
  loom_buf b;
  loom_buf_init(&b);
  loom_print_opts o = {dialect};
  loom_script_print_module(m->module, &o, &b);
  if (b.has_failed) {
    loom_buf_free(&b);
    return NULL;
  }
  return loom_buf_take(&b);
}

bool loom_embed_module_equal(const loom_embed_module *a, const loom_embed_module *b) {
  return loom_ir_equal_module(a->module, b->module, NULL);
}

/* ---- signatures -------------------------------------------------------------- */

static void put_dim(loom_buf *b, const loom_expr *e) {
  if (e->kind == LOOM_EXPR_INT) {
    loom_buf_printf(b, "%lld", (long long)e->u.int_value);
    return;
  }
  loom_buf text;
  loom_buf_init(&text);
  if (e->kind == LOOM_EXPR_VAR)
    loom_buf_puts(&text, e->u.var->name);
  else
    loom_script_print_expr(e, &text);
  loom_json_print_str(text.data ? text.data : "", b);
  loom_buf_free(&text);
}

static void put_param(loom_buf *b, const loom_func *f, const loom_param *p) {
  char dt[LOOM_DTYPE_STRLEN];
  const loom_buffer *buf = p->buffer;
  loom_buf_puts(b, "{\"name\": ");
  loom_json_print_str(buf ? buf->name : p->var->name, b);
  loom_buf_puts(b, ", \"dtype\": ");
  loom_json_print_str(loom_dtype_str(buf ? buf->dtype : p->var->dtype, dt), b);
  loom_buf_puts(b, ", \"shape\": ");
  if (!buf) {
    loom_buf_puts(b, "null, \"written\": false}");
    return;
  }
  loom_buf_putc(b, '[');
  for (int k = 0; k < buf->ndim; k++) {
    if (k)
      loom_buf_puts(b, ", ");
    put_dim(b, buf->shape[k]);
  }
  bool is_written = loom_ir_buffer_uses(f->body, buf->data).stores > 0;
  loom_buf_printf(b, "], \"written\": %s}", is_written ? "true" : "false");
}

char *loom_embed_module_signature(const loom_embed_module *m) {
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_putc(&b, '[');
  for (int i = 0; i < m->module->n_funcs; i++) {
    const loom_func *f = m->module->funcs[i];
    loom_buf_puts(&b, i ? ", {\"name\": " : "{\"name\": ");
    loom_json_print_str(f->name, &b);
    loom_buf_puts(&b, ", \"params\": [");
    for (int p = 0; p < f->n_params; p++) {
      if (p)
        loom_buf_puts(&b, ", ");
      put_param(&b, f, &f->params[p]);
    }
    loom_buf_puts(&b, "]}");
  }
  loom_buf_putc(&b, ']');
  if (b.has_failed) {
    loom_buf_free(&b);
    return NULL;
  }
  return loom_buf_take(&b);
}
