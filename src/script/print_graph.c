/* Graph functions printed as TVM prints a Relax function whose operators
 * are TensorIR: R.call_tir steps in a dataflow block (read_graph.c reads
 * them back). The classic spelling writes out_sinfo=, TVM 0.27's out_ty=. */
#include "script/print.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The names values are printed with: a parameter's own, made a Python
 * name (ONNX's "input.1" is input_1) and unique; the value of call k is lv,
 * lv1, lv2, ... as TVM names them. */
typedef struct names {
  char **of; /* per value */
  int n;
} names;

static bool is_taken(const names *nm, int upto, const char *s) {
  for (int i = 0; i < upto; i++)
    if (nm->of[i] && !strcmp(nm->of[i], s))
      return true;
  return false;
}

static char *param_name(const names *nm, int upto, const char *raw) {
  size_t n = strlen(raw);
  char *s = malloc(n + 24);
  if (!s)
    return NULL;
  size_t k = 0;
  if (!n || isdigit((unsigned char)raw[0]))
    s[k++] = 'p';
  for (size_t i = 0; i < n; i++)
    s[k++] = isalnum((unsigned char)raw[i]) || raw[i] == '_' ? raw[i] : '_';
  s[k] = 0;
  /* lv<k> belongs to the calls; cls and R to the frame. */
  bool clash = !strncmp(s, "lv", 2) || !strcmp(s, "cls") || !strcmp(s, "R");
  for (int j = 1; clash || is_taken(nm, upto, s); j++) {
    snprintf(s + k, 24, "_%d", j);
    clash = false;
  }
  return s;
}

static bool names_make(names *nm, const loom_graph *g) {
  nm->n = g->n_values;
  nm->of = calloc((size_t)g->n_values + 1, sizeof *nm->of);
  if (!nm->of)
    return false;
  for (int i = 0; i < g->n_values; i++) {
    if (i < g->n_params) {
      nm->of[i] = param_name(nm, i, g->values[i].name ? g->values[i].name : "");
    } else if ((nm->of[i] = malloc(24))) {
      int k = i - g->n_params;
      snprintf(nm->of[i], 24, k ? "lv%d" : "lv", k);
    }
    if (!nm->of[i])
      return false;
  }
  return true;
}

static void names_free(names *nm) {
  for (int i = 0; nm->of && i < nm->n; i++)
    free(nm->of[i]);
  free(nm->of);
}

static void put_info(loom_buf *b, const loom_tensor_info *t) {
  char dt[LOOM_DTYPE_STRLEN];
  loom_buf_puts(b, "R.Tensor((");
  for (int i = 0; i < t->ndim; i++)
    loom_buf_printf(b, i ? ", %lld" : "%lld", (long long)t->shape[i]);
  loom_buf_printf(b, "%s), dtype=\"%s\")", t->ndim == 1 ? "," : "",
                  loom_dtype_str(t->dtype, dt));
}

static void put_outputs(loom_buf *b, const loom_graph *g, const names *nm) {
  for (int i = 0; i < g->n_outputs; i++)
    loom_buf_printf(b, "%s%s", i ? ", " : "", nm->of[g->outputs[i]]);
}

void pr_graph(const loom_graph *g, loom_dialect dialect, loom_buf *b) {
  names nm;
  if (!names_make(&nm, g)) {
    names_free(&nm);
    b->has_failed = 1;
    return;
  }
  loom_buf_printf(b, "    @R.function\n    def %s(", g->name);
  for (int i = 0; i < g->n_params; i++) {
    loom_buf_printf(b, "%s%s: ", i ? ", " : "", nm.of[i]);
    put_info(b, &g->values[i].info);
  }
  loom_buf_puts(b, ") -> ");
  if (g->n_outputs != 1)
    loom_buf_puts(b, "R.Tuple(");
  for (int i = 0; i < g->n_outputs; i++) {
    if (i)
      loom_buf_puts(b, ", ");
    put_info(b, &g->values[g->outputs[i]].info);
  }
  loom_buf_puts(b, g->n_outputs != 1 ? "):\n" : ":\n");
  loom_buf_puts(b, "        cls = Module\n");
  /* A graph that computes nothing returns its parameters. */
  if (g->n_calls) {
    loom_buf_puts(b, "        with R.dataflow():\n");
    for (int k = 0; k < g->n_calls; k++) {
      const loom_graph_call *c = &g->calls[k];
      loom_buf_printf(b, "            %s = R.call_tir(cls.%s, (", nm.of[c->out], c->func);
      for (int i = 0; i < c->n_args; i++)
        loom_buf_printf(b, i ? ", %s" : "%s", nm.of[c->args[i]]);
      loom_buf_printf(b, "%s), %s=", c->n_args == 1 ? "," : "",
                      dialect == LOOM_DIALECT_TIRX ? "out_ty" : "out_sinfo");
      put_info(b, &g->values[c->out].info);
      loom_buf_puts(b, ")\n");
    }
    loom_buf_puts(b, "            R.output(");
    put_outputs(b, g, &nm);
    loom_buf_puts(b, ")\n");
  }
  loom_buf_puts(b, g->n_outputs == 1 ? "        return " : "        return (");
  put_outputs(b, g, &nm);
  loom_buf_puts(b, g->n_outputs == 1 ? "\n" : ")\n");
  names_free(&nm);
}
