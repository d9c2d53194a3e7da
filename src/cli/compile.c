/* `loom compile FILE --target T --pipeline P1,P2,... [--db PATH] [--explain]
 * [-o OUT] [--dialect tir|tirx]`: runs module passes in the given order
 * (dispatch, manual=DIR, apply-db, dlight, default, best); each function is taken by the
 * first pass that handles it. Prints the module; --explain prints on
 * stderr a table of function, pass and reason. */
#include "cli/cli.h"

#include "loom/tune.h"

#include <stdio.h>
#include <string.h>

static void explain(const loom_compiled *c) {
  fprintf(stderr, "%-24s %-10s %s\n", "function", "pass", "why");
  for (int i = 0; i < c->module->n_funcs; i++)
    fprintf(stderr, "%-24s %-10s %s\n", c->module->funcs[i]->name,
            c->pass[i] ? c->pass[i] : "(none)", c->why[i] ? c->why[i] : "");
}

int cli_pipeline(const char *cmd, const char *spec, const char *db_path,
                 const loom_target *t, bool is_explain, cli_program *p,
                 cli_pipeline_result *out) {
  memset(out, 0, sizeof *out);
  loom_pipeline pl;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_pipeline_parse(spec, &pl, &d) != LOOM_OK) {
    int rc = cli_usage_error(cmd, "%s", d.msg);
    loom_diag_free(&d);
    return rc;
  }
  int rc = 0;
  if (loom_tune_compile_spec(p->module, spec, t, db_path, &out->c, &d) != LOOM_OK) {
    if (d.has_error)
      cli_print_diag(&d);
    else
      fprintf(stderr, "loom %s: error: out of memory\n", cmd);
    rc = EXIT_USER;
  } else {
    if (is_explain)
      explain(&out->c);
    p->module = out->c.module;
  }
  loom_diag_free(&d);
  return rc;
}

void cli_pipeline_free(cli_pipeline_result *r) {
  loom_tune_compiled_free(&r->c);
}

int cli_compile(int argc, char **argv) {
  const char *file = NULL, *db_path = NULL, *out_path = NULL, *spec = NULL, *pipe = NULL;
  bool is_explain = false;
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option("compile", argc, argv, &i, &opts.dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    const char *a = argv[i];
    if (!strcmp(a, "--explain")) {
      is_explain = true;
    } else if (!strcmp(a, "--target") || !strcmp(a, "--pipeline") || !strcmp(a, "--db") ||
               !strcmp(a, "-o")) {
      if (i + 1 >= argc)
        return cli_usage_error("compile", "%s needs a value", a);
      const char **slot = a[1] == 'o' ? &out_path : a[2] == 't' ? &spec
                          : a[2] == 'p' ? &pipe : &db_path;
      *slot = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      return cli_usage_error("compile", "unknown option '%s'", a);
    } else if (file) {
      return cli_usage_error("compile", "one FILE expected, got '%s' too", a);
    } else {
      file = a;
    }
  }
  if (!file)
    return cli_usage_error("compile", "missing FILE");
  if (!pipe)
    return cli_usage_error("compile", "missing --pipeline (passes in order, such as "
                                      "dispatch,apply-db,default)");
  loom_target tg;
  int rc = cli_target("compile", spec, &tg);
  if (rc)
    return rc;
  cli_program p;
  if ((rc = cli_load(file, &p)))
    return rc;
  cli_pipeline_result res;
  loom_buf text;
  loom_buf_init(&text);
  rc = cli_pipeline("compile", pipe, db_path, &tg, is_explain, &p, &res);
  if (rc == 0) {
    loom_script_print_module(p.module, &opts, &text);
    rc = cli_write_text("compile", out_path, &text);
  }
  loom_buf_free(&text);
  cli_pipeline_free(&res);
  cli_program_free(&p);
  return rc;
}
