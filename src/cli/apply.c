/* `loom apply FILE [--db PATH] [-o OUT] [--dialect tir|tirx]`: the apply-db
 * pass. Prints FILE with every function that matches a tuned workload
 * rewritten into its best schedule; stderr says which functions matched. */
#include "cli/cli.h"

#include "loom/tune.h"

#include <stdio.h>
#include <string.h>

int cli_apply(int argc, char **argv) {
  const char *file = NULL, *db_path = "loom.db", *out_path = NULL;
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option("apply", argc, argv, &i, &opts.dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    const char *a = argv[i];
    if (!strcmp(a, "--db") || !strcmp(a, "-o")) {
      if (i + 1 >= argc)
        return cli_usage_error("apply", "%s needs a path", a);
      *(a[1] == 'o' ? &out_path : &db_path) = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      return cli_usage_error("apply", "unknown option '%s'", a);
    } else if (file) {
      return cli_usage_error("apply", "one FILE expected, got '%s' too", a);
    } else {
      file = a;
    }
  }
  if (!file)
    return cli_usage_error("apply", "missing FILE");
  cli_program p;
  int rc = cli_load(file, &p);
  if (rc)
    return rc;
  loom_diag d;
  loom_diag_init(&d);
  loom_db *db = NULL;
  loom_applied res = {0};
  loom_buf text;
  loom_buf_init(&text);
  if (loom_db_open(db_path, &db, &d) != LOOM_OK ||
      loom_tune_apply_db(p.module, db, NULL, &res, &d) != LOOM_OK) {
    if (d.has_error)
      cli_print_diag(&d);
    else
      fprintf(stderr, "%s: error: out of memory\n", file);
    rc = EXIT_USER;
  } else {
    for (int i = 0; i < res.module->n_funcs; i++)
      fprintf(stderr, "%s: %s\n", res.module->funcs[i]->name,
              res.is_applied[i] ? "scheduled from the database"
                                : "no tuning record; left as written");
    loom_script_print_module(res.module, &opts, &text);
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
      fprintf(stderr, "loom apply: cannot write '%s'\n", out_path);
      rc = EXIT_USAGE;
    } else {
      if (text.data)
        fputs(text.data, out);
      if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "loom apply: cannot write '%s'\n", out_path);
        rc = EXIT_USER;
      }
    }
  }
  loom_buf_free(&text);
  loom_tune_applied_free(&res);
  loom_db_close(db);
  loom_diag_free(&d);
  cli_program_free(&p);
  return rc;
}
