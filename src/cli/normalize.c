/* `loom normalize FILE [--pass NAME] [--dialect tir|tirx]`: run the
 * normalization passes (all of them, or the one named) and print the
 * result. `--pass list` names the passes. */
#include "cli/cli.h"

#include "loom/normalize.h"

#include <stdio.h>
#include <string.h>

static void list_passes(void) {
  for (int i = 0; i < LOOM_NORMALIZE_COUNT_; i++)
    printf("%-10s %s\n", loom_normalize_pass_name((loom_normalize_pass)i),
           loom_normalize_pass_summary((loom_normalize_pass)i));
}

int cli_normalize(int argc, char **argv) {
  const char *file = NULL, *pass = NULL;
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option("normalize", argc, argv, &i, &opts.dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    if (!strcmp(argv[i], "--pass")) {
      if (i + 1 >= argc)
        return cli_usage_error("normalize", "--pass needs a NAME");
      pass = argv[++i];
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error("normalize", "unknown option '%s'", argv[i]);
    if (file)
      return cli_usage_error("normalize", "one FILE expected, got '%s' too",
                             argv[i]);
    file = argv[i];
  }
  if (pass && !strcmp(pass, "list")) {
    list_passes();
    return 0;
  }
  int which = pass ? loom_normalize_pass_lookup(pass) : -1;
  if (pass && which < 0) {
    fprintf(stderr, "loom normalize: unknown pass '%s'; the passes are:\n", pass);
    for (int i = 0; i < LOOM_NORMALIZE_COUNT_; i++)
      fprintf(stderr, "  %s\n", loom_normalize_pass_name((loom_normalize_pass)i));
    return EXIT_USAGE;
  }
  if (!file)
    return cli_usage_error("normalize", "missing FILE");
  cli_program p;
  int rc = cli_load(file, &p);
  if (rc)
    return rc;
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p.text, p.len);
  loom_module *out = NULL;
  loom_status st = which >= 0
                       ? loom_normalize_run(p.arena, p.module,
                                            (loom_normalize_pass)which, &out, &d)
                       : loom_normalize_module(p.arena, p.module, &out, &d);
  if (st == LOOM_NOMEM) {
    fprintf(stderr, "%s: error: out of memory\n", file);
    rc = EXIT_USER;
  } else if (st != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  } else {
    loom_buf buf;
    loom_buf_init(&buf);
    loom_script_print_module(out, &opts, &buf);
    if (buf.has_failed) {
      fprintf(stderr, "%s: error: out of memory while printing\n", file);
      rc = EXIT_USER;
    } else if (buf.data) {
      fputs(buf.data, stdout);
    }
    loom_buf_free(&buf);
  }
  loom_diag_free(&d);
  cli_program_free(&p);
  return rc;
}
