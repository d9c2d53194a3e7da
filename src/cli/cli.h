/* The `loom` command: one function per subcommand, dispatched from a table
 * in main.c. Each returns the process exit code: 0 success, 1 user error,
 * 2 usage error. */
#ifndef LOOM_CLI_H
#define LOOM_CLI_H

#include "loom/onnx.h"
#include "loom/script.h"
#include "loom/space.h"
#include "loom/tune.h"

enum { EXIT_USER = 1, EXIT_USAGE = 2 };

typedef struct cli_command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *usage;   /* arguments after the command name */
  const char *summary; /* one line for `loom --help` */
} cli_command;

int cli_fmt(int argc, char **argv);
int cli_equal(int argc, char **argv);
int cli_interp(int argc, char **argv);
int cli_build(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_db(int argc, char **argv);
int cli_tune(int argc, char **argv);
int cli_apply(int argc, char **argv);
int cli_sched(int argc, char **argv);
int cli_trace(int argc, char **argv);
int cli_op(int argc, char **argv);
int cli_te(int argc, char **argv);
int cli_model(int argc, char **argv);
int cli_space(int argc, char **argv);
int cli_normalize(int argc, char **argv);
int cli_dlight(int argc, char **argv);
int cli_compile(int argc, char **argv);

/* Parses a whole decimal integer in [lo, hi]; false for anything else. */
bool cli_parse_int(const char *s, long long lo, long long hi, long long *out);

/* Prints a usage error for `cmd` and returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints a rendered diagnostic to stderr. */
void cli_print_diag(const loom_diag *d);

/* The target of --target SPEC (NULL: this machine, detected); a bad SPEC is
 * printed with a caret under the fault and gives EXIT_USAGE. */
int cli_target(const char *cmd, const char *spec, loom_target *out);

/* A program read from a file: the text (kept alive for diagnostics), the
 * arena holding the module, and the module. */
typedef struct cli_program {
  char *text;
  size_t len;
  loom_arena *arena;
  loom_module *module;
} cli_program;

/* A network loom model reads (model.c): the module and, for ONNX, the
 * weights of its graph. */
typedef struct cli_net {
  loom_arena *arena;
  cli_program program; /* a module read from TVMScript */
  loom_onnx_model onnx;
  const loom_module *module;
  const loom_graph *graph;
  bool is_onnx;
} cli_net;

/* Reads FILE (MODEL.onnx, with the importer's rewrites, or a module's
 * TVMScript), fuses its operators unless is_unfused (loom_fuse_module; a
 * line per fused function into
 * explain when not NULL), marks the parameters a model's weights reach
 * (loom_fuse_mark_constants) and finds its graph (NAME, or the only one, or
 * main); prints why not and returns the exit code. */
int cli_net_load(const char *file, const char *graph, bool is_unfused,
                 const loom_onnx_options *rewrites, loom_buf *explain, cli_net *m);
/* The importer's rewrites as loom model asks for them: --layout NCHW|NHWC,
 * --fold-bn on|off and --accumulate float32|input, unset (-1) until given,
 * --dtype float16|bfloat16, the type the model's float32 tensors are read
 * as, and --dim NAME=N, the values of symbolic dimensions. */
#define CLI_MAX_DIMS 8
typedef struct cli_rewrites {
  int is_channels_last, is_bn_folded, is_f32_accumulated; /* -1: unset */
  loom_dtype float_dtype; /* --dtype float16|bfloat16; bits 0: the model's */
  char dim_names[CLI_MAX_DIMS][64];
  int64_t dim_values[CLI_MAX_DIMS];
  int n_dims;
  const char *dim_name_list[CLI_MAX_DIMS]; /* into dim_names, for the importer */
} cli_rewrites;
/* 1 when a is one of the rewrites' options (val read into r), 0 when not,
 * else the usage error's exit code. */
int cli_rewrite_option(const char *a, const char *val, cli_rewrites *r);
/* r with what is unset filled in. A network run or tuned (is_run) is
 * read to be fast and accurate: batch normalizations folded, float16
 * products summed in float32, and channels-last on a CPU, where oneDNN's
 * convolutions take NHWC. Imported or fused, it is read as TVM's frontend
 * reads it: none of these. */
loom_onnx_options cli_rewrites_get(cli_rewrites *r, bool is_run, bool is_cpu);
/* Rewrites with every choice unset. */
cli_rewrites cli_rewrites_unset(void);
void cli_net_free(cli_net *m);
/* The options loom tune and loom model tune share (--seed, --model,
 * --strategy) into t: 1 when a is one of them, 0 when not, else the usage
 * error's exit code (cmd names the command in it). */
int cli_tune_option(const char *cmd, const char *a, const char *val, loom_tune_options *t,
                    bool *is_random_model);

/* The cost model kept in db (loom_tune_model_open), its diagnostic or note
 * printed; the exit code. */
int cli_tune_model_open(const char *cmd, const char *file, loom_db *db, bool is_random,
                        uint64_t seed, loom_model **model);

/* `loom import`: `loom model import` under the name outside checks call. */
int cli_import(int argc, char **argv);
/* `loom model tune` (model_tune.c). */
int cli_model_tune(int argc, char **argv);

/* Reads and parses FILE. On failure prints the diagnostic and returns the
 * exit code (EXIT_USAGE for a missing file, EXIT_USER for bad contents). */
int cli_load(const char *path, cli_program *p);
void cli_program_free(cli_program *p);

/* Parses "--dialect tir|tirx" at argv[*i]; returns 1 if consumed, 0 if argv[*i]
 * is not that option, -1 on a bad value (message printed). */
/* Writes text to the file at path (NULL: stdout); returns the exit code
 * (EXIT_USAGE when it cannot be opened, EXIT_USER when it cannot be
 * written whole). */
int cli_write_text(const char *cmd, const char *path, const loom_buf *text);

/* --pipeline for compile, run and build: runs the module passes of spec
 * over p's module (apply-db reads db_path, loom.db when NULL), prints the
 * --explain table when asked, and points p->module at the result, which
 * out owns (free it with cli_pipeline_free after p's last use). Returns
 * the exit code. */
typedef struct cli_pipeline_result {
  loom_compiled c;
} cli_pipeline_result;
int cli_pipeline(const char *cmd, const char *spec, const char *db_path,
                 const loom_target *t, bool is_explain, cli_program *p,
                 cli_pipeline_result *out);
void cli_pipeline_free(cli_pipeline_result *r);

int cli_dialect_option(const char *cmd, int argc, char **argv, int *i,
                       loom_dialect *out);

/* The schedule scripts of `--block NAME=SCRIPT` options, each a rule of
 * the user's for that block (loom_space_apply_script). */
#define CLI_MAX_BLOCK_RULES 16
typedef struct cli_block_rules {
  loom_space_rule rules[CLI_MAX_BLOCK_RULES];
  loom_space_script scripts[CLI_MAX_BLOCK_RULES];
  char *texts[CLI_MAX_BLOCK_RULES];
  int n;
} cli_block_rules;

/* Reads the script of one option value "NAME=SCRIPT" for `cmd`; 0, or the
 * exit code after printing why not. */
int cli_block_rule_add(cli_block_rules *r, const char *cmd, const char *value);
void cli_block_rules_free(cli_block_rules *r);
/* Shows d's error with the line it points into: of a script, or of the
 * program p (read from file). */
void cli_block_rules_source(const cli_block_rules *r, const char *file,
                            const cli_program *p, loom_diag *d);

#endif
