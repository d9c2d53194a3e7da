/* Manual dispatch: pairs of a function and the optimized TensorIR that
 * replaces it, read from a folder, matched by structure as apply-db
 * matches workloads (normalized, anonymous, hashed, then compared). */
#include "loom/script.h"
#include "tune/tune_impl.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair {
  const char *file;
  const loom_func *key;   /* `before`, normalized and anonymous */
  uint64_t hash;
  const loom_func *after;
} pair;

struct loom_manual {
  loom_arena *arena;       /* the files' texts, paths and IR */
  pair *pairs;
  int n, cap;
};

loom_manual *loom_manual_new(void) {
  loom_manual *m = calloc(1, sizeof *m);
  if (m && !(m->arena = loom_arena_new())) {
    free(m);
    return NULL;
  }
  return m;
}

void loom_manual_free(loom_manual *m) {
  if (!m)
    return;
  loom_arena_free(m->arena);
  free(m->pairs);
  free(m);
}

int loom_manual_count(const loom_manual *m) { return m ? m->n : 0; }

static bool same_buffer(const loom_buffer *x, const loom_buffer *y) {
  if (!loom_dtype_eq(x->dtype, y->dtype) || x->ndim != y->ndim)
    return false;
  for (int i = 0; i < x->ndim; i++) {
    int64_t a, b;
    bool ca = loom_ir_is_const_int(x->shape[i], &a), cb = loom_ir_is_const_int(y->shape[i], &b);
    if (ca != cb || (ca && a != b))
      return false;
  }
  return true;
}

/* Fails d at after's line when its parameters are not before's. */
static loom_status check_signature(const loom_func *before, const loom_func *after,
                                   loom_diag *d) {
  if (before->n_params != after->n_params)
    return loom_diag_error(d, after->loc,
                           "the replacement 'after' takes %d parameters, 'before' %d",
                           after->n_params, before->n_params);
  for (int i = 0; i < before->n_params; i++) {
    const loom_param *x = &before->params[i], *y = &after->params[i];
    bool ok = x->buffer && y->buffer ? same_buffer(x->buffer, y->buffer)
              : !x->buffer && !y->buffer ? loom_dtype_eq(x->var->dtype, y->var->dtype)
                                         : false;
    if (!ok)
      return loom_diag_error(d, after->loc,
                             "parameter %d of the replacement 'after' is not that of "
                             "'before' (the same dtype and shape, or the same scalar)", i + 1);
  }
  return LOOM_OK;
}

static loom_status add_file(loom_manual *m, const char *path, loom_diag *d) {
  char *text;
  size_t len;
  TRY(loom_read_file(path, &text, &len, d));
  char *kept = loom_arena_strdup(m->arena, text);
  const char *file = loom_arena_strdup(m->arena, path);
  free(text);
  if (!kept || !file)
    return LOOM_NOMEM;
  loom_module *mod;
  TRY(loom_script_read(kept, len, file, m->arena, &mod, d));
  const loom_func *before = loom_ir_module_find(mod, "before");
  const loom_func *after = loom_ir_module_find(mod, "after");
  if (!before || !after)
    return loom_diag_error(d, (loom_loc){file, 1, 1},
                           "a manual dispatch pair needs a function named 'before' (what "
                           "it matches) and one named 'after' (what replaces it)");
  TRY(check_signature(before, after, d));
  loom_func *key = tune_workload_form(m->arena, before);
  if (!key)
    return LOOM_NOMEM;
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 8;
    pair *p = realloc(m->pairs, (size_t)cap * sizeof *p);
    if (!p)
      return LOOM_NOMEM;
    m->pairs = p;
    m->cap = cap;
  }
  m->pairs[m->n++] = (pair){file, key, loom_ir_hash_func(key), after};
  return LOOM_OK;
}

static int by_name(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

loom_status loom_manual_load(loom_manual *m, const char *dir, loom_diag *d) {
  DIR *dp = opendir(dir);
  if (!dp)
    return loom_diag_error(d, (loom_loc){0}, "cannot read the folder '%s' of manual "
                           "dispatch pairs", dir);
  char **names = NULL;
  int n = 0, cap = 0;
  loom_status st = LOOM_OK;
  struct dirent *e;
  while (st == LOOM_OK && (e = readdir(dp))) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".py"))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      char **p = realloc(names, (size_t)cap * sizeof *p);
      if (!p) {
        st = LOOM_NOMEM;
        break;
      }
      names = p;
    }
    size_t size = strlen(dir) + len + 2;
    if (!(names[n] = malloc(size)))
      st = LOOM_NOMEM;
    else
      snprintf(names[n++], size, "%s/%s", dir, e->d_name);
  }
  closedir(dp);
  if (st == LOOM_OK && n)
    qsort(names, (size_t)n, sizeof *names, by_name);
  for (int i = 0; i < n && st == LOOM_OK; i++)
    st = add_file(m, names[i], d);
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
  return st;
}

const loom_func *loom_manual_find(const loom_manual *m, loom_arena *a, const loom_func *f,
                                  const char **file) {
  loom_func *key = tune_workload_form(a, f);
  if (!key)
    return NULL;
  uint64_t h = loom_ir_hash_func(key);
  for (int i = 0; i < m->n; i++) {
    const pair *p = &m->pairs[i];
    if (p->hash != h || !loom_ir_equal_func(p->key, key, NULL))
      continue;
    loom_func *out = loom_arena_dup(a, p->after, sizeof *p->after);
    if (!out)
      return NULL;
    out->name = f->name;
    out->attrs = f->attrs;
    out->n_attrs = f->n_attrs;
    if (file)
      *file = p->file;
    return out;
  }
  return NULL;
}
