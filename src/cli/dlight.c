/* `loom dlight FILE [--target SPEC] [--explain] [--dialect tir|tirx]`:
 * schedule every function of FILE for a GPU by dlight's rules and print the
 * module. --explain says on stderr, function by function, which rule took
 * it and why the rules before it did not. `--configs K` prints instead, for
 * each function, the K tilings fast tuning's policy ranks best, with their
 * estimated times. */
#include "cli/cli.h"

#include "loom/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The policy's best k tilings of each function of m, one line each. */
static loom_status print_configs(loom_arena *a, const loom_module *m, const loom_target *t,
                                 int k, loom_diag *d) {
  loom_matmul_config *c = malloc((size_t)k * sizeof *c);
  loom_module *one = loom_ir_module(a);
  loom_func **f = loom_arena_alloc(a, sizeof *f);
  if (!c || !one || !f) {
    free(c);
    return LOOM_NOMEM;
  }
  one->funcs = f;
  one->n_funcs = 1;
  loom_status st = LOOM_OK;
  for (int i = 0; st == LOOM_OK && i < m->n_funcs; i++) {
    int n;
    if (!(f[0] = (loom_func *)loom_tune_normalized(a, m->funcs[i])))
      st = LOOM_NOMEM;
    else
      st = loom_tune_fast_configs(one, t, k, c, &n, d);
    if (st != LOOM_OK)
      break;
    printf("%s: %s\n", m->funcs[i]->name,
           n ? "block tile, thread patch, k step, estimated ms"
             : "no matmul: fast tuning measures dlight's schedule alone");
    for (int j = 0; j < n; j++)
      printf("  %lldx%lld  %lldx%lld  %lld  %.4f\n", (long long)c[j].bm, (long long)c[j].bn,
             (long long)c[j].tm, (long long)c[j].tn, (long long)c[j].bk, c[j].est_ms);
  }
  free(c);
  return st;
}

int cli_dlight(int argc, char **argv) {
  const char *file = NULL, *target = NULL;
  bool is_explain = false;
  long long configs = 0;
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option("dlight", argc, argv, &i, &opts.dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    if (!strcmp(argv[i], "--target")) {
      if (i + 1 >= argc)
        return cli_usage_error("dlight", "--target needs a SPEC (\"cuda -arch=sm_90\")");
      target = argv[++i];
    } else if (!strcmp(argv[i], "--explain")) {
      is_explain = true;
    } else if (!strcmp(argv[i], "--configs")) {
      if (i + 1 >= argc || !cli_parse_int(argv[i + 1], 1, 1000, &configs))
        return cli_usage_error("dlight", "--configs needs a count from 1 to 1000");
      i++;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("dlight", "unknown option '%s'", argv[i]);
    } else if (file) {
      return cli_usage_error("dlight", "one FILE expected, got '%s' too", argv[i]);
    } else {
      file = argv[i];
    }
  }
  if (!file)
    return cli_usage_error("dlight", "missing FILE");
  loom_target t;
  int rc = cli_target("dlight", target ? target : "cuda", &t);
  if (rc)
    return rc;
  if (t.kind != LOOM_TARGET_CUDA)
    return cli_usage_error("dlight", "dlight schedules for a cuda target, not '%s'", target);
  cli_program p;
  rc = cli_load(file, &p);
  if (rc)
    return rc;
  if (configs) {
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = print_configs(p.arena, p.module, &t, (int)configs, &d);
    if (st == LOOM_NOMEM)
      fprintf(stderr, "%s: error: out of memory\n", file);
    else if (st != LOOM_OK)
      cli_print_diag(&d);
    loom_diag_free(&d);
    cli_program_free(&p);
    return st == LOOM_OK ? 0 : EXIT_USER;
  }
  int n = p.module->n_funcs;
  loom_sched **scheds = calloc((size_t)n + 1, sizeof *scheds);
  loom_module *out = loom_ir_module(p.arena);
  if (out)
    out->funcs = loom_arena_alloc(p.arena, ((size_t)n + 1) * sizeof *out->funcs);
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = scheds && out && out->funcs ? LOOM_OK : LOOM_NOMEM;
  loom_buf explain;
  loom_buf_init(&explain);
  for (int i = 0; st == LOOM_OK && i < n; i++) {
    const loom_func *g;
    const char *rule;
    if (is_explain)
      loom_buf_printf(&explain, "%s:\n", p.module->funcs[i]->name);
    st = loom_tune_dlight(p.arena, p.module->funcs[i], &t, NULL, 0, &scheds[i], &g, &rule,
                          is_explain ? &explain : NULL, &d);
    if (st == LOOM_OK)
      out->funcs[out->n_funcs++] = (loom_func *)g;
  }
  if (st == LOOM_OK) {
    loom_buf buf;
    loom_buf_init(&buf);
    loom_script_print_module(out, &opts, &buf);
    if (buf.has_failed || explain.has_failed)
      st = LOOM_NOMEM;
    else {
      if (explain.data)
        fputs(explain.data, stderr);
      if (buf.data)
        fputs(buf.data, stdout);
    }
    loom_buf_free(&buf);
  }
  if (st == LOOM_NOMEM)
    fprintf(stderr, "%s: error: out of memory\n", file);
  else if (st != LOOM_OK)
    cli_print_diag(&d);
  for (int i = 0; scheds && i < n; i++)
    if (scheds[i])
      loom_sched_free(scheds[i]);
  free(scheds);
  loom_buf_free(&explain);
  loom_diag_free(&d);
  cli_program_free(&p);
  return st == LOOM_OK ? 0 : EXIT_USER;
}
