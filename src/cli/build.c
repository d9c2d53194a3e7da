/* `loom build FILE --emit c`: prints the C file the C backend makes for
 * FILE's functions. */
#include "cli/cli.h"

#include "loom/codegen.h"

#include <stdio.h>
#include <string.h>

int cli_build(int argc, char **argv) {
  const char *file = NULL, *emit = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--emit")) {
      if (i + 1 >= argc)
        return cli_usage_error("build", "--emit needs a value (c)");
      emit = argv[++i];
      if (strcmp(emit, "c"))
        return cli_usage_error("build", "unknown --emit '%s' (c is known)", emit);
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("build", "unknown option '%s'", argv[i]);
    } else if (file) {
      return cli_usage_error("build", "one FILE expected, got '%s' too", argv[i]);
    } else {
      file = argv[i];
    }
  }
  if (!file)
    return cli_usage_error("build", "missing FILE");
  if (!emit)
    return cli_usage_error("build", "nothing to do: pass --emit c");
  cli_program p;
  int rc = cli_load(file, &p);
  if (rc)
    return rc;
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p.text, p.len);
  loom_buf out;
  loom_buf_init(&out);
  loom_status st = loom_codegen_c_module(p.module, &out, &d);
  if (st == LOOM_OK)
    fwrite(out.data, 1, out.len, stdout);
  else if (st == LOOM_NOMEM)
    fprintf(stderr, "loom build: out of memory\n");
  else
    cli_print_diag(&d);
  loom_buf_free(&out);
  loom_diag_free(&d);
  cli_program_free(&p);
  return st == LOOM_OK ? 0 : EXIT_USER;
}
