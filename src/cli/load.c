/* Shared plumbing of the subcommands: reading a program file and printing
 * diagnostics the way compilers do, parsing numeric options. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_print_diag(const loom_diag *d) {
  loom_buf out;
  loom_buf_init(&out);
  loom_diag_render(d, &out);
  if (out.data)
    fputs(out.data, stderr);
  loom_buf_free(&out);
}

int cli_load(const char *path, cli_program *p) {
  memset(p, 0, sizeof *p);
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(path, &p->text, &p->len, &d) != LOOM_OK) {
    fprintf(stderr, "%s: error: %s\n", path, d.msg ? d.msg : "cannot read");
    loom_diag_free(&d);
    return EXIT_USAGE;
  }
  p->arena = loom_arena_new();
  if (!p->arena) {
    fprintf(stderr, "%s: error: out of memory\n", path);
    cli_program_free(p);
    return EXIT_USER;
  }
  loom_status s =
      loom_script_read(p->text, p->len, path, p->arena, &p->module, &d);
  if (s != LOOM_OK) {
    if (s == LOOM_NOMEM && !d.has_error)
      fprintf(stderr, "%s: error: out of memory\n", path);
    cli_print_diag(&d);
    loom_diag_free(&d);
    cli_program_free(p);
    return EXIT_USER;
  }
  loom_diag_free(&d);
  return 0;
}

void cli_program_free(cli_program *p) {
  loom_arena_free(p->arena);
  free(p->text);
  memset(p, 0, sizeof *p);
}

int cli_dialect_option(const char *cmd, int argc, char **argv, int *i,
                       loom_dialect *out) {
  const char *arg = argv[*i], *value = NULL;
  if (!strncmp(arg, "--dialect=", 10))
    value = arg + 10;
  else if (!strcmp(arg, "--dialect")) {
    if (*i + 1 >= argc) {
      cli_usage_error(cmd, "--dialect needs a value: tir or tirx");
      return -1;
    }
    value = argv[++*i];
  } else
    return 0;
  if (!strcmp(value, "tir"))
    *out = LOOM_DIALECT_TIR;
  else if (!strcmp(value, "tirx"))
    *out = LOOM_DIALECT_TIRX;
  else {
    cli_usage_error(cmd, "unknown dialect '%s' (expected tir or tirx)", value);
    return -1;
  }
  return 1;
}

bool cli_parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

int cli_write_text(const char *cmd, const char *path, const loom_buf *text) {
  FILE *out = path ? fopen(path, "w") : stdout;
  if (!out) {
    fprintf(stderr, "loom %s: cannot write '%s'\n", cmd, path);
    return EXIT_USAGE;
  }
  if (text->data)
    fputs(text->data, out);
  if (out != stdout && fclose(out) != 0) {
    fprintf(stderr, "loom %s: cannot write '%s'\n", cmd, path);
    return EXIT_USER;
  }
  return 0;
}
