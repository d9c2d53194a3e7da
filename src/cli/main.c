/* Entry point of the `loom` command: finds the subcommand in the table and
 * runs it. Usage errors exit 2, user errors 1, and nothing ends in a signal. */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const cli_command commands[] = {
    {"fmt", cli_fmt, "FILE [--dialect tir|tirx]",
     "parse TVMScript and print it in canonical form"},
    {"equal", cli_equal, "FILE1 FILE2",
     "exit 0 if two modules are structurally equal, else print the first difference"},
    {"run", cli_run,
     "FILE [--func NAME] [--target SPEC] [--seed N] [--repeat N] [--verify] [--arg NAME=V] "
     "[--pipeline P1,...]",
     "build (C, or CUDA with --target cuda), run on seeded inputs, time, and check"},
    {"tune", cli_tune, "FILE --trials N [--space SCRIPT | --block NAME=SCRIPT] [--db PATH] [--strategy S]",
     "tune each function over its design spaces, recording every measurement"},
    {"space", cli_space, "FILE [--target SPEC] [--block NAME=SCRIPT] [--sample N] [--seed S] [--json]",
     "print the design spaces (cpu or cuda); sample and postprocess candidates"},
    {"apply", cli_apply, "FILE [--db PATH] [-o OUT]",
     "rewrite each function with a tuning record into its best schedule"},
    {"db", cli_db, "list|show ID|export|import FILE [--db PATH]",
     "inspect the tuning database (loom.db by default)"},
    {"build", cli_build, "FILE --emit c|cuda [--target SPEC] [--pipeline P1,...]",
     "print the C file, or the CUDA C of the GPU kernels, Loom makes for FILE"},
    {"interp", cli_interp, "FILE [--func NAME] [--seed N] [--arg NAME=VALUE]... [--dump]",
     "run each function on seeded random inputs with the reference interpreter"},
    {"sched", cli_sched, "FILE SCRIPT [--dialect tir|tirx]",
     "apply a schedule script (.py) or JSON trace (.json) and print the result"},
    {"trace", cli_trace, "FILE SCRIPT [--json] [--dialect tir|tirx]",
     "replay a schedule script or JSON trace and print its trace"},
    {"op", cli_op, "NAME [KEY=VALUE...] | --list",
     "print the TensorIR of an operator from the library"},
    {"normalize", cli_normalize, "FILE [--pass NAME|list] [--dialect tir|tirx]",
     "rewrite loops to start at 0, wrap bare statements, give blocks iter vars"},
    {"dlight", cli_dlight, "FILE [--target SPEC] [--explain] [--dialect tir|tirx]",
     "schedule every function for a GPU by dlight's rules, without tuning"},
    {"compile", cli_compile,
     "FILE --pipeline P1,P2,... [--target SPEC] [--db PATH] [--explain] [-o OUT]",
     "run module passes in order (dispatch, manual=DIR, apply-db, dlight, default, best)"},
    {"te", cli_te, "FILE [--dialect tir|tirx]",
     "run a TE script (te.compute ...) and print the TensorIR it defines"},
    {"import", cli_import, "MODEL.onnx [-o OUT] [--dialect tir|tirx]",
     "the same as loom model import"},
    {"model", cli_model,
     "import MODEL.onnx | run MODEL.onnx|MODULE.py [--input NAME=F.npy] [--verify] "
     "[--pipeline P1,...] [--db PATH] | tune MODEL --trials N [--db PATH]",
     "import an ONNX model as a module; run a module's graph function; tune a network"},
};

#define N_COMMANDS (int)(sizeof commands / sizeof *commands)

static void print_help(FILE *out) {
  fprintf(out, "usage: loom COMMAND [ARGS]\n\n"
               "Loom reads TensorIR programs written in TVMScript, schedules and "
               "tunes them.\n\ncommands:\n");
  for (int i = 0; i < N_COMMANDS; i++)
    fprintf(out, "  %-6s %-28s %s\n", commands[i].name, commands[i].usage,
            commands[i].summary);
  fprintf(out, "\nexit codes: 0 success, 1 user error, 2 usage error\n");
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "loom %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  for (int i = 0; i < N_COMMANDS; i++)
    if (!strcmp(commands[i].name, cmd))
      fprintf(stderr, "usage: loom %s %s\n", cmd, commands[i].usage);
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    print_help(stdout);
    return 0;
  }
  for (int i = 0; i < N_COMMANDS; i++)
    if (!strcmp(commands[i].name, argv[1]))
      return commands[i].run(argc - 2, argv + 2);
  fprintf(stderr, "loom: unknown command '%s' (see loom --help)\n", argv[1]);
  return EXIT_USAGE;
}
