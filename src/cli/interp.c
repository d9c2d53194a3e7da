/* `loom interp FILE [--func NAME] [--seed N] [--arg NAME=VALUE]... [--dump]`:
 * runs each function (or the named one) on seeded random inputs with the
 * reference interpreter, scalar parameters taking their --arg values, and,
 * with --dump, prints every parameter buffer after the run. */
#include "cli/cli.h"

#include "loom/interp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Elements printed per buffer before the rest is elided with "...". */
#define DUMP_MAX_ELEMS 1000

/* Most --arg options one command line may give. */
#define MAX_ARGS 64

/* One --arg NAME=VALUE: name points into argv, up to the '='. */
typedef struct scalar_arg {
  const char *name;
  size_t name_len;
  int64_t value;
  int is_used;
} scalar_arg;

typedef struct interp_opts {
  const char *file, *func;
  uint64_t seed;
  int is_dump;
  scalar_arg args[MAX_ARGS];
  int n_args;
} interp_opts;

static int parse_seed(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *end || errno || s[0] == '-')
    return 0;
  *out = v;
  return 1;
}

/* Parses "NAME=VALUE" with an integer VALUE into the next --arg slot. */
static int parse_arg(const char *s, interp_opts *o) {
  const char *eq = strchr(s, '=');
  if (!eq || eq == s || !eq[1])
    return cli_usage_error("interp", "bad --arg '%s' (expected NAME=VALUE)", s);
  char *end;
  errno = 0;
  long long v = strtoll(eq + 1, &end, 0);
  if (*end || errno)
    return cli_usage_error("interp", "bad --arg value '%s' (an integer)", eq + 1);
  if (o->n_args == MAX_ARGS)
    return cli_usage_error("interp", "too many --arg options (limit is %d)",
                           MAX_ARGS);
  scalar_arg *a = &o->args[o->n_args++];
  a->name = s;
  a->name_len = (size_t)(eq - s);
  a->value = v;
  return 0;
}

static int parse_opts(int argc, char **argv, interp_opts *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--dump")) {
      o->is_dump = 1;
    } else if (!strcmp(a, "--func") || !strcmp(a, "--seed") ||
               !strcmp(a, "--arg")) {
      if (i + 1 >= argc)
        return cli_usage_error("interp", "%s needs a value", a);
      const char *v = argv[++i];
      int rc = 0;
      if (a[2] == 'f')
        o->func = v;
      else if (a[2] == 'a')
        rc = parse_arg(v, o);
      else if (!parse_seed(v, &o->seed))
        return cli_usage_error("interp", "bad seed '%s' (a non-negative integer)", v);
      if (rc)
        return rc;
    } else if (a[0] == '-' && a[1]) {
      return cli_usage_error("interp", "unknown option '%s'", a);
    } else if (o->file) {
      return cli_usage_error("interp", "one FILE expected, got '%s' too", a);
    } else {
      o->file = a;
    }
  }
  if (!o->file)
    return cli_usage_error("interp", "missing FILE");
  return 0;
}

static void dump_args(const loom_func *f, loom_interp_array **arrays) {
  for (int i = 0; i < f->n_params; i++) {
    if (!arrays[i])
      continue;
    loom_buf b;
    loom_buf_init(&b);
    loom_interp_array_print(arrays[i], DUMP_MAX_ELEMS, &b);
    printf("%s.%s = %s\n", f->name, f->params[i].buffer->name,
           b.data ? b.data : "(out of memory)");
    loom_buf_free(&b);
  }
}

/* Fills scalars[i] for every scalar parameter i of f from the --arg
 * options; false (with d set) when one has no --arg. */
static int bind_args(const loom_func *f, interp_opts *o, int64_t *scalars,
                     loom_diag *d) {
  for (int i = 0; i < f->n_params; i++) {
    scalars[i] = 0;
    if (f->params[i].buffer)
      continue;
    const char *name = f->params[i].var->name;
    int k = 0;
    while (k < o->n_args && (strlen(name) != o->args[k].name_len ||
                             strncmp(name, o->args[k].name, o->args[k].name_len)))
      k++;
    if (k == o->n_args) {
      loom_diag_error(d, f->loc, "scalar parameter '%s' of '%s' needs a value: "
                      "pass --arg %s=VALUE", name, f->name, name);
      return 0;
    }
    o->args[k].is_used = 1;
    scalars[i] = o->args[k].value;
  }
  return 1;
}

/* Runs one function; returns the exit code. */
static int run_func(const cli_program *p, const loom_func *f,
                    interp_opts *o) {
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p->text, p->len);
  size_t n = (size_t)(f->n_params ? f->n_params : 1);
  loom_interp_array **arrays = calloc(n, sizeof *arrays);
  int64_t *scalars = calloc(n, sizeof *scalars);
  int rc = 0;
  if (arrays && scalars && !bind_args(f, o, scalars, &d))
    rc = EXIT_USER;
  else if (!arrays || !scalars ||
           loom_interp_alloc_args(f, scalars, arrays, &d) != LOOM_OK) {
    if (!d.has_error)
      fprintf(stderr, "%s: error: out of memory\n", o->file);
    rc = EXIT_USER;
  }
  if (rc == 0) {
    loom_rng r;
    loom_rng_seed(&r, o->seed);
    for (int i = 0; i < f->n_params; i++)
      if (arrays[i])
        loom_interp_fill_random(arrays[i], &r);
    if (loom_interp_run(f, arrays, scalars, &d) != LOOM_OK)
      rc = EXIT_USER;
  }
  if (rc == 0) {
    printf("%s: ok\n", f->name);
    if (o->is_dump)
      dump_args(f, arrays);
  } else if (d.has_error) {
    cli_print_diag(&d);
  }
  if (arrays)
    loom_interp_free_args(f, arrays);
  free(arrays);
  free(scalars);
  loom_diag_free(&d);
  return rc;
}

int cli_interp(int argc, char **argv) {
  interp_opts o;
  int rc = parse_opts(argc, argv, &o);
  if (rc)
    return rc;
  cli_program p;
  rc = cli_load(o.file, &p);
  if (rc)
    return rc;
  const loom_module *m = p.module;
  if (o.func && !loom_ir_module_find(m, o.func)) {
    fprintf(stderr, "%s: error: no function named '%s'\n", o.file, o.func);
    cli_program_free(&p);
    return EXIT_USER;
  }
  for (int i = 0; i < m->n_funcs && rc == 0; i++)
    if (!o.func || !strcmp(m->funcs[i]->name, o.func))
      rc = run_func(&p, m->funcs[i], &o);
  /* An --arg no function used is most likely a misspelt name. */
  for (int k = 0; k < o.n_args && rc == 0; k++)
    if (!o.args[k].is_used) {
      fprintf(stderr, "%s: error: no function run has a scalar parameter "
              "named '%.*s'\n", o.file, (int)o.args[k].name_len, o.args[k].name);
      rc = EXIT_USER;
    }
  fflush(stdout);
  cli_program_free(&p);
  return rc;
}
