/* --target SPEC, as every command reads it: the machine this runs on when no
 * SPEC is given, else the parsed text; a bad SPEC is a usage error pointing
 * into it. */
#include "cli/cli.h"

#include <string.h>

int cli_target(const char *cmd, const char *spec, loom_target *out) {
  if (!spec) {
    loom_target_detect(out);
    return 0;
  }
  loom_diag d;
  loom_diag_init(&d);
  if (loom_target_parse(spec, out, &d) == LOOM_OK) {
    loom_diag_free(&d);
    return 0;
  }
  fprintf(stderr, "loom %s: bad --target '%s'\n", cmd, spec);
  loom_diag_set_source(&d, spec, strlen(spec));
  cli_print_diag(&d);
  loom_diag_free(&d);
  return EXIT_USAGE;
}
