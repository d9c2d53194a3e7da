/* `loom build FILE --emit c|cuda [--target SPEC] [--pipeline P1,P2,...
 * [--db PATH] [--explain]]`: prints the C file the C backend makes for
 * FILE's functions, or the CUDA C of their kernels (functions with no
 * thread bindings get dlight's schedule first), after the module passes of
 * --pipeline when given, as `loom compile` runs them. */
#include "cli/cli.h"

#include "loom/codegen.h"
#include "loom/tune.h"

#include <stdio.h>
#include <string.h>

/* The CUDA C of every function of m, for target t. */
static loom_status emit_cuda(const loom_module *m, const loom_target *t,
                             loom_buf *out, loom_diag *d) {
  loom_status st = LOOM_OK;
  for (int i = 0; i < m->n_funcs && st == LOOM_OK; i++)
    st = loom_tune_cuda_emit(m->funcs[i], t, out, d);
  return st;
}

int cli_build(int argc, char **argv) {
  const char *file = NULL, *emit = NULL, *target = NULL, *pipe = NULL, *db = NULL;
  bool is_explain = false;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--explain")) {
      is_explain = true;
    } else if (!strcmp(argv[i], "--emit") || !strcmp(argv[i], "--target") ||
               !strcmp(argv[i], "--pipeline") || !strcmp(argv[i], "--db")) {
      if (i + 1 >= argc)
        return cli_usage_error("build", "%s needs a value", argv[i]);
      const char **slot = argv[i][2] == 'e' ? &emit : argv[i][2] == 't' ? &target
                          : argv[i][2] == 'p' ? &pipe : &db;
      *slot = argv[++i];
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
    return cli_usage_error("build", "nothing to do: pass --emit c or --emit cuda");
  bool is_cuda = !strcmp(emit, "cuda");
  if (!is_cuda && strcmp(emit, "c"))
    return cli_usage_error("build", "unknown --emit '%s' (c and cuda are known)", emit);
  loom_target t;
  int rc = cli_target("build", target ? target : is_cuda ? "cuda" : NULL, &t);
  if (rc)
    return rc;
  if ((t.kind == LOOM_TARGET_CUDA) != is_cuda)
    return cli_usage_error("build", "--emit %s needs a %s target, not '%s'", emit,
                           is_cuda ? "cuda" : "cpu", target);
  cli_program p;
  if ((rc = cli_load(file, &p)))
    return rc;
  cli_pipeline_result piped = {0};
  if (pipe && (rc = cli_pipeline("build", pipe, db, &t, is_explain, &p, &piped))) {
    cli_program_free(&p);
    return rc;
  }
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p.text, p.len);
  loom_buf out;
  loom_buf_init(&out);
  loom_status st = is_cuda ? emit_cuda(p.module, &t, &out, &d)
                           : loom_codegen_c_module(p.module, &out, &d);
  if (st == LOOM_OK && out.has_failed)
    st = LOOM_NOMEM;
  if (st == LOOM_OK)
    fwrite(out.data, 1, out.len, stdout);
  else if (st == LOOM_NOMEM)
    fprintf(stderr, "loom build: out of memory\n");
  else
    cli_print_diag(&d);
  loom_buf_free(&out);
  loom_diag_free(&d);
  cli_pipeline_free(&piped);
  cli_program_free(&p);
  return st == LOOM_OK ? 0 : EXIT_USER;
}
