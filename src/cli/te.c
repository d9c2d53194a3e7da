/* `loom op` and `loom te`: TensorIR from the operator library and from TE scripts. */
#include "cli/cli.h"
#include "loom/te.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void list_ops(void) {
  for (int i = 0; i < loom_te_op_count(); i++) {
    const loom_te_op *op = loom_te_op_at(i);
    printf("%s", op->name);
    for (int k = 0; k < LOOM_TE_MAX_KEYS && op->keys[k].name; k++)
      printf(" %s=%s", op->keys[k].name, op->keys[k].default_value);
    printf("  # %s\n", op->doc);
  }
}

int cli_op(int argc, char **argv) {
  loom_dialect dialect = LOOM_DIALECT_TIR;
  if (argc < 1)
    return cli_usage_error("op", "missing operator name (see loom op --list)");
  if (!strcmp(argv[0], "--list")) {
    list_ops();
    return 0;
  }
  const loom_te_op *op = loom_te_op_find(argv[0]);
  if (!op) {
    fprintf(stderr, "loom op: unknown operator '%s'; loom op --list shows "
                    "the %d there are\n", argv[0], loom_te_op_count());
    return EXIT_USAGE;
  }
  const char *settings[64];
  int n = 0;
  for (int i = 1; i < argc; i++) {
    int r = cli_dialect_option("op", argc, argv, &i, &dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    if (n == 64)
      return cli_usage_error("op", "too many settings (limit is 64)");
    settings[n++] = argv[i];
  }
  loom_arena *a = loom_arena_new();
  if (!a) {
    fprintf(stderr, "loom op: out of memory\n");
    return EXIT_USER;
  }
  loom_diag d;
  loom_diag_init(&d);
  loom_func *f;
  loom_status s = loom_te_op_build(op, settings, n, a, &f, &d);
  int rc = 0;
  if (s != LOOM_OK) {
    fprintf(stderr, "loom op: %s\n", d.msg ? d.msg : "out of memory");
    rc = EXIT_USAGE;
  } else {
    loom_print_opts o = {dialect};
    loom_buf b;
    loom_buf_init(&b);
    loom_script_print_func(f, &o, &b);
    if (b.data)
      fputs(b.data, stdout);
    loom_buf_free(&b);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  return rc;
}

/* `loom te FILE`: runs a TE script and prints the TensorIR it defines. */
int cli_te(int argc, char **argv) {
  loom_dialect dialect = LOOM_DIALECT_TIR;
  const char *path = NULL;
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option("te", argc, argv, &i, &dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r > 0)
      continue;
    if (argv[i][0] == '-' || path)
      return cli_usage_error("te", "unexpected argument '%s'", argv[i]);
    path = argv[i];
  }
  if (!path)
    return cli_usage_error("te", "missing FILE");
  loom_diag d;
  loom_diag_init(&d);
  char *text;
  size_t len;
  if (loom_read_file(path, &text, &len, &d) != LOOM_OK) {
    cli_print_diag(&d);
    loom_diag_free(&d);
    return EXIT_USAGE;
  }
  loom_arena *a = loom_arena_new();
  loom_func *f = NULL;
  int rc = 0;
  if (!a) {
    fprintf(stderr, "loom te: out of memory\n");
    rc = EXIT_USER;
  } else if (loom_te_read_script(text, len, path, a, &f, &d) != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  } else {
    loom_print_opts o = {dialect};
    loom_buf b;
    loom_buf_init(&b);
    loom_script_print_func(f, &o, &b);
    if (b.data)
      fputs(b.data, stdout);
    loom_buf_free(&b);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  free(text);
  return rc;
}
