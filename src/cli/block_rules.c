/* `--block NAME=SCRIPT`: a schedule script for one block, given to the
 * design space as a rule of the user's; the built-in rules do the rest. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_block_rule_add(cli_block_rules *r, const char *cmd, const char *value) {
  const char *eq = strchr(value, '=');
  if (!eq || eq == value || !eq[1])
    return cli_usage_error(cmd, "--block needs NAME=SCRIPT, not '%s'", value);
  if (r->n == CLI_MAX_BLOCK_RULES)
    return cli_usage_error(cmd, "at most %d --block options",
                           CLI_MAX_BLOCK_RULES);
  const char *file = eq + 1;
  char *text = NULL, *name = NULL;
  size_t len = 0;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(file, &text, &len, &d) != LOOM_OK) {
    fprintf(stderr, "%s: error: %s\n", file, d.msg ? d.msg : "cannot read");
    loom_diag_free(&d);
    return EXIT_USAGE;
  }
  loom_diag_free(&d);
  size_t n = (size_t)(eq - value);
  if (!(name = malloc(n + 1))) {
    free(text);
    fprintf(stderr, "loom %s: out of memory\n", cmd);
    return EXIT_USER;
  }
  memcpy(name, value, n);
  name[n] = '\0';
  int k = r->n++;
  r->texts[k] = text;
  r->scripts[k] = (loom_space_script){text, len, file};
  r->rules[k] = (loom_space_rule){name, loom_space_apply_script,
                                  &r->scripts[k]};
  return 0;
}

void cli_block_rules_free(cli_block_rules *r) {
  for (int i = 0; i < r->n; i++) {
    free(r->texts[i]);
    free((char *)r->rules[i].block);
  }
  r->n = 0;
}

void cli_block_rules_source(const cli_block_rules *r, const char *file,
                            const cli_program *p, loom_diag *d) {
  if (!d->loc.file)
    return;
  if (!strcmp(d->loc.file, file))
    loom_diag_set_source(d, p->text, p->len);
  for (int i = 0; i < r->n; i++)
    if (!strcmp(d->loc.file, r->scripts[i].file))
      loom_diag_set_source(d, r->scripts[i].text, r->scripts[i].len);
}
