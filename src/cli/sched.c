/* `loom sched FILE SCRIPT` and `loom trace FILE SCRIPT`: apply a schedule
 * script (.py) or a JSON trace (.json) to a program, then print the
 * scheduled module or the trace. */
#include "cli/cli.h"
#include "loom/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_json(const char *path) {
  size_t n = strlen(path);
  return n >= 5 && !strcmp(path + n - 5, ".json");
}

/* Runs SCRIPT on a fresh schedule of p; prints the diagnostic on failure. */
static int run(const char *script, cli_program *p, loom_sched **out) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(script, &text, &len, &d) != LOOM_OK) {
    fprintf(stderr, "%s: error: %s\n", script, d.msg ? d.msg : "cannot read");
    loom_diag_free(&d);
    return EXIT_USAGE;
  }
  loom_sched *s = loom_sched_new(p->module, 0);
  loom_arena *a = loom_arena_new();
  loom_status st = LOOM_NOMEM;
  if (s && a && is_json(script)) {
    loom_trace t;
    st = loom_trace_read_json(text, len, script, a, &t, &d);
    if (st == LOOM_OK)
      st = loom_trace_apply(&t, s, LOOM_REPLAY_CHECK, &d);
  } else if (s && a)
    st = loom_sched_run_script(s, text, len, script, &d);
  if (st != LOOM_OK) {
    if (!d.has_error)
      fprintf(stderr, "%s: error: out of memory\n", script);
    cli_print_diag(&d);
    loom_sched_free(s);
    s = NULL;
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  free(text);
  *out = s;
  return s ? 0 : EXIT_USER;
}

static int sched_main(const char *cmd, int argc, char **argv, bool is_trace) {
  const char *files[2] = {NULL, NULL};
  int n_files = 0;
  bool as_json = false;
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option(cmd, argc, argv, &i, &opts.dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    if (is_trace && !strcmp(argv[i], "--json")) {
      as_json = true;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
    if (n_files == 2)
      return cli_usage_error(cmd, "two files expected, got '%s' too", argv[i]);
    files[n_files++] = argv[i];
  }
  if (n_files < 2)
    return cli_usage_error(cmd, "missing %s", n_files ? "SCRIPT" : "FILE");
  cli_program p;
  int rc = cli_load(files[0], &p);
  if (rc)
    return rc;
  loom_sched *s;
  rc = run(files[1], &p, &s);
  if (rc) {
    cli_program_free(&p);
    return rc;
  }
  loom_buf out;
  loom_buf_init(&out);
  loom_trace t = loom_sched_trace(s);
  if (!is_trace)
    loom_script_print_module(loom_sched_module(s), &opts, &out);
  else if (as_json)
    loom_trace_print_json(&t, opts.dialect, &out);
  else
    loom_trace_print_py(&t, opts.dialect, &out);
  if (out.has_failed) {
    fprintf(stderr, "%s: error: out of memory while printing\n", files[0]);
    rc = EXIT_USER;
  } else if (out.data)
    fputs(out.data, stdout);
  loom_buf_free(&out);
  loom_sched_free(s);
  cli_program_free(&p);
  return rc;
}

int cli_sched(int argc, char **argv) {
  return sched_main("sched", argc, argv, false);
}

int cli_trace(int argc, char **argv) {
  return sched_main("trace", argc, argv, true);
}
