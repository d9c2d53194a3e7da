/* Module passes and built kernels for bindings: a module through the
 * pipeline, and every function of one built by the C backend and called
 * on the caller's memory, in the caller's process. */
#include "embed/embed_impl.h"

#include "loom/tune.h"

#include <stdlib.h>
#include <string.h>

struct loom_embed_built {
  loom_build_set set;
};

loom_status embed_target(const char *spec, loom_target *t, loom_diag *d) {
  if (!spec) {
    loom_target_detect(t);
    return LOOM_OK;
  }
  loom_status st = loom_target_parse(spec, t, d);
  if (st != LOOM_OK)
    loom_diag_set_source(d, spec, strlen(spec));
  return st;
}

static void put_explain(const loom_compiled *c, loom_buf *b) {
  loom_buf_putc(b, '[');
  for (int i = 0; i < c->module->n_funcs; i++) {
    loom_buf_puts(b, i ? ", {\"func\": " : "{\"func\": ");
    loom_json_print_str(c->module->funcs[i]->name, b);
    loom_buf_puts(b, ", \"pass\": ");
    if (c->pass[i])
      loom_json_print_str(c->pass[i], b);
    else
      loom_buf_puts(b, "null");
    loom_buf_puts(b, ", \"why\": ");
    loom_json_print_str(c->why[i] ? c->why[i] : "", b);
    loom_buf_putc(b, '}');
  }
  loom_buf_putc(b, ']');
}

/* A failure may be located in a manual pair's file, which is freed with
 * the pipeline's result before the caller sees it: the place goes into the
 * message. */
static void keep_place(loom_diag *d) {
  if (!d->has_error || !d->loc.file || !d->loc.line)
    return;
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_printf(&b, "%s:%d:%d: %s", d->loc.file, d->loc.line, d->loc.col,
                  d->msg ? d->msg : "");
  if (!b.has_failed) {
    free(d->msg);
    d->msg = loom_buf_take(&b);
  }
  loom_buf_free(&b);
  d->loc = (loom_loc){0};
  for (int i = 0; i < d->n_notes; i++)
    d->notes[i].loc = (loom_loc){0};
  loom_diag_set_source(d, NULL, 0);
}

loom_embed_module *loom_embed_compile(const loom_embed_module *m, const char *target,
                                      const char *pipeline, const char *db,
                                      char **explain, loom_diag *d) {
  if (explain)
    *explain = NULL;
  loom_target t;
  if (embed_target(target, &t, d) != LOOM_OK)
    return NULL;
  loom_compiled c;
  loom_embed_module *out = NULL;
  if (loom_tune_compile_spec(m->module, pipeline ? pipeline : "default", &t, db, &c, d) !=
      LOOM_OK) {
    if (!d->has_error)
      loom_diag_error(d, (loom_loc){0}, "out of memory running the pipeline");
    keep_place(d);
  } else if ((out = embed_module_copy(c.module, "<compiled>", d)) && explain) {
    loom_buf b;
    loom_buf_init(&b);
    put_explain(&c, &b);
    *explain = b.has_failed ? NULL : loom_buf_take(&b);
    loom_buf_free(&b);
  }
  loom_tune_compiled_free(&c);
  return out;
}

loom_embed_built *loom_embed_build(const loom_embed_module *m, const char *target,
                                   loom_diag *d) {
  loom_target t;
  if (embed_target(target, &t, d) != LOOM_OK)
    return NULL;
  if (t.kind != LOOM_TARGET_CPU) {
    loom_diag_error(d, (loom_loc){0}, "a %s target cannot be built for calls from here: "
                    "only cpu targets are (run it with `loom run --target %s`)",
                    loom_target_kind_name(t.kind), loom_target_kind_name(t.kind));
    return NULL;
  }
  loom_embed_built *b = calloc(1, sizeof *b);
  const loom_module *mod = m->module;
  loom_builder_options o = {.target = &t};
  if (!b || loom_tune_build((const loom_func *const *)mod->funcs, mod->n_funcs, &o,
                            &b->set) != LOOM_OK) {
    free(b);
    loom_diag_error(d, (loom_loc){0}, "out of memory building the module");
    return NULL;
  }
  for (int i = 0; i < b->set.n; i++)
    if (!b->set.items[i].kernel) {
      const loom_func *f = mod->funcs[i];
      loom_diag_error(d, f->loc, "function '%s' cannot be built: %s", f->name,
                      b->set.items[i].error ? b->set.items[i].error : "unknown reason");
      loom_embed_built_free(b);
      return NULL;
    }
  return b;
}

void loom_embed_built_free(loom_embed_built *b) {
  if (!b)
    return;
  loom_tune_build_free(&b->set);
  free(b);
}

int32_t loom_embed_call(const loom_embed_built *b, int i, void *const *args,
                        const int64_t *const *shapes) {
  if (i < 0 || i >= b->set.n)
    return LOOM_EMBED_NO_FUNC;
  loom_c_kernel k = (loom_c_kernel)b->set.items[i].kernel;
  return k(args, shapes);
}
