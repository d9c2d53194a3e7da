/* `loom apply FILE [--db PATH] [--target SPEC] [-o OUT] [--dialect tir|tirx]`:
 * the apply-db pass. Prints FILE with every function that matches a workload
 * tuned on the target (this machine by default) rewritten into its best
 * schedule; stderr says which functions matched. */
#include "cli/cli.h"

#include "loom/tune.h"

#include <stdio.h>
#include <string.h>

int cli_apply(int argc, char **argv) {
  const char *file = NULL, *db_path = "loom.db", *out_path = NULL;
  const char *spec = NULL;
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option("apply", argc, argv, &i, &opts.dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    const char *a = argv[i];
    if (!strcmp(a, "--target")) {
      if (i + 1 >= argc)
        return cli_usage_error("apply", "--target needs a value");
      spec = argv[++i];
    } else if (!strcmp(a, "--db") || !strcmp(a, "-o")) {
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
  loom_target tg;
  int rc = cli_target("apply", spec, &tg);
  if (rc)
    return rc;
  char key[LOOM_TARGET_KEY_MAX];
  loom_target_key(&tg, key, sizeof key);
  cli_program p;
  rc = cli_load(file, &p);
  if (rc)
    return rc;
  loom_diag d;
  loom_diag_init(&d);
  loom_db *db = NULL;
  loom_applied res = {0};
  loom_buf text;
  loom_buf_init(&text);
  if (loom_db_open(db_path, &db, &d) != LOOM_OK ||
      loom_tune_apply_db(p.module, db, key, &res, &d) != LOOM_OK) {
    if (d.has_error)
      cli_print_diag(&d);
    else
      fprintf(stderr, "%s: error: out of memory\n", file);
    rc = EXIT_USER;
  } else {
    for (int i = 0; i < res.module->n_funcs; i++) {
      const char *name = res.module->funcs[i]->name;
      if (res.is_applied[i])
        fprintf(stderr, "%s: scheduled from the database\n", name);
      else if (res.elsewhere[i])
        fprintf(stderr, "%s: no tuning record on this target; left as "
                        "written (records exist on '%s'; --target picks "
                        "the target)\n",
                name, res.elsewhere[i]);
      else
        fprintf(stderr, "%s: no tuning record; left as written\n", name);
    }
    loom_script_print_module(res.module, &opts, &text);
    rc = cli_write_text("apply", out_path, &text);
  }
  loom_buf_free(&text);
  loom_tune_applied_free(&res);
  loom_db_close(db);
  loom_diag_free(&d);
  cli_program_free(&p);
  return rc;
}
