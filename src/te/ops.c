/* The operator library's table and the KEY=VALUE settings its builders
 * read. Adding an operator is adding a row here and a builder in one of
 * the ops_*.c files. */
#include "ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


static const loom_te_op ops[] = {
#define OP(name, fn, doc, ...) {name, {__VA_ARGS__}, fn, doc},
#include "ops.def"
#undef OP
};

#define N_OPS (int)(sizeof ops / sizeof *ops)

int loom_te_op_count(void) { return N_OPS; }
const loom_te_op *loom_te_op_at(int i) {
  return i >= 0 && i < N_OPS ? &ops[i] : NULL;
}
const loom_te_op *loom_te_op_find(const char *name) {
  for (int i = 0; i < N_OPS; i++)
    if (!strcmp(ops[i].name, name))
      return &ops[i];
  return NULL;
}

static const char *lookup(const loom_te_args *args, const char *key) {
  for (int i = args->n - 1; i >= 0; i--) {
    const char *s = args->settings[i];
    size_t n = strlen(key);
    if (!strncmp(s, key, n) && s[n] == '=')
      return s + n + 1;
  }
  for (int i = 0; i < LOOM_TE_MAX_KEYS && args->op->keys[i].name; i++)
    if (!strcmp(args->op->keys[i].name, key))
      return args->op->keys[i].default_value;
  return NULL;
}

loom_status loom_te_args_str(const loom_te_args *args, const char *key,
                             const char **out, loom_diag *d) {
  const char *v = lookup(args, key);
  if (!v)
    return loom_diag_error(d, (loom_loc){0},
                           "operator '%s' has no key '%s' (internal)",
                           args->op->name, key);
  *out = v;
  return LOOM_OK;
}

static loom_status parse_int(const loom_te_args *args, const char *key,
                             const char *s, int64_t *out, loom_diag *d) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno || v < -(1LL << 31) || v >= (1LL << 31))
    return loom_diag_error(d, (loom_loc){0},
                           "%s: %s=%s is not an integer; write %s=N",
                           args->op->name, key, s, key);
  *out = v;
  return LOOM_OK;
}

loom_status loom_te_args_int(const loom_te_args *args, const char *key,
                             int64_t *out, loom_diag *d) {
  const char *s;
  TRY(loom_te_args_str(args, key, &s, d));
  return parse_int(args, key, s, out, d);
}

loom_status loom_te_args_dtype(const loom_te_args *args, const char *key,
                               loom_dtype *out, loom_diag *d) {
  const char *s;
  TRY(loom_te_args_str(args, key, &s, d));
  if (!loom_dtype_parse(s, strlen(s), out) || out->lanes != 1 ||
      out->code == LOOM_DT_HANDLE || out->code == LOOM_DT_VOID)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: %s=%s is not a scalar dtype; write for "
                           "example %s=float32, float16 or int8",
                           args->op->name, key, s, key);
  return LOOM_OK;
}

loom_status loom_te_args_ints(const loom_te_args *args, const char *key,
                              int64_t *out, int max, int *n, loom_diag *d) {
  const char *s;
  TRY(loom_te_args_str(args, key, &s, d));
  *n = 0;
  while (*s) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    char buf[32];
    if (*n >= max || len == 0 || len >= sizeof buf)
      return loom_diag_error(d, (loom_loc){0},
                             "%s: %s takes 1 to %d comma-separated integers "
                             "(%s=1,64,28,28)",
                             args->op->name, key, max, key);
    memcpy(buf, s, len);
    buf[len] = 0;
    TRY(parse_int(args, key, buf, &out[(*n)++], d));
    s += len + (comma ? 1 : 0);
  }
  if (*n == 0)
    return loom_diag_error(d, (loom_loc){0}, "%s: %s is empty",
                           args->op->name, key);
  return LOOM_OK;
}

static bool has_key(const loom_te_op *op, const char *key, size_t n) {
  for (int i = 0; i < LOOM_TE_MAX_KEYS && op->keys[i].name; i++)
    if (strlen(op->keys[i].name) == n && !strncmp(op->keys[i].name, key, n))
      return true;
  return false;
}

static loom_status unknown_key(const loom_te_op *op, const char *s, size_t n,
                               loom_diag *d) {
  loom_buf b;
  loom_buf_init(&b);
  for (int i = 0; i < LOOM_TE_MAX_KEYS && op->keys[i].name; i++)
    loom_buf_printf(&b, "%s%s", i ? ", " : "", op->keys[i].name);
  loom_diag_error(d, (loom_loc){0}, "%s has no key '%.*s'; its keys are: %s",
                  op->name, (int)n, s, b.data ? b.data : "(none)");
  loom_buf_free(&b);
  return LOOM_ERROR;
}

static loom_status check_settings(const loom_te_op *op,
                                  const char *const *settings, int n,
                                  loom_diag *d) {
  for (int i = 0; i < n; i++) {
    const char *eq = strchr(settings[i], '=');
    if (!eq)
      return loom_diag_error(d, (loom_loc){0},
                             "'%s' is not KEY=VALUE (as in M=1024)",
                             settings[i]);
    size_t len = (size_t)(eq - settings[i]);
    if (!has_key(op, settings[i], len))
      return unknown_key(op, settings[i], len, d);
  }
  return LOOM_OK;
}

loom_status loom_te_op_build(const loom_te_op *op, const char *const *settings,
                             int n, loom_arena *a, loom_func **out,
                             loom_diag *d) {
  TRY(check_settings(op, settings, n, d));
  loom_te *te = loom_te_new(a);
  if (!te)
    return LOOM_NOMEM;
  loom_te_args args = {op, settings, n};
  return op->build(te, &args, out, d);
}

loom_status loom_te_op_apply(loom_te *te, const loom_te_op *op,
                             const char *const *settings, int n,
                             loom_te_tensor *const *inputs, int n_inputs,
                             loom_te_tensor **out, loom_diag *d) {
  TRY(check_settings(op, settings, n, d));
  if (te->error)
    return loom_diag_error(d, (loom_loc){0}, "%s", te->error);
  loom_te_args args = {op, settings, n};
  loom_func *f = NULL;
  te->given = inputs;
  te->n_given = n_inputs;
  te->next_given = 0;
  te->applied = NULL;
  loom_status s = op->build(te, &args, &f, d);
  int used = te->next_given;
  te->given = NULL;
  if (s != LOOM_OK)
    return s;
  if (te->error)
    return loom_diag_error(d, (loom_loc){0}, "%s", te->error);
  if (used != n_inputs || !te->applied)
    return loom_diag_error(d, (loom_loc){0},
                           "%s takes %d tensors here, not %d (internal)",
                           op->name, used, n_inputs);
  *out = te->applied;
  return LOOM_OK;
}
