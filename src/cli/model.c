/* `loom model import MODEL.onnx [-o OUT] [--dialect tir|tirx] [--no-fuse]`:
 * the module an ONNX model imports into (its prim funcs and the graph
 * "main"), its operators fused (loom_fuse_module) unless --no-fuse.
 * `loom model fuse MODULE.py|MODEL.onnx [-o OUT] [--dialect ...]`: the
 * module with its operators fused.
 * `loom model run MODEL.onnx|MODULE.py [--graph NAME] [--target SPEC]
 * [--input NAME=FILE.npy]... [--output DIR] [--seed N] [--repeat N]
 * [--verify] [--no-fuse] [--explain] [--profile] [--pipeline P1,...
 * [--db PATH]]`: fuses the graph's operators (--explain lists the fused
 * functions), builds the graph's functions (after the module passes of
 * --pipeline, as `loom compile` runs them: dispatch,default unless given,
 * apply-db first with --db), runs
 * it on the inputs given (the others, and the weights of a module that has
 * none, seeded random; an ONNX model's weights are its own), prints each
 * output and the time of a run (--profile: of each function too), writes
 * the outputs as DIR/NAME.npy, and with --verify compares them with what
 * the reference interpreter computes. */
#include "cli/cli.h"

#include "loom/fuse.h"
#include "loom/interp.h"
#include "loom/net.h"
#include "loom/onnx.h"
#include "loom/tune.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUTS 64

typedef struct model_opts {
  const char *file, *graph, *target, *output, *pipeline, *db;
  bool is_explain;
  const char *input_names[MAX_INPUTS], *input_files[MAX_INPUTS];
  int n_inputs;
  long long seed, repeat;
  bool is_verify, is_unfused, is_profile;
  cli_rewrites rewrites;
  loom_target tg;
} model_opts;

typedef cli_net model;

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && !strcmp(s + n - k, tail);
}

void cli_net_free(model *m) {
  if (!m->is_onnx && m->program.arena)
    cli_program_free(&m->program);
  loom_arena_free(m->arena);
}

/* st's failure said: d's error, or out of memory; EXIT_USER (0 for LOOM_OK). */
static int said(const char *file, loom_status st, loom_diag *d) {
  if (st != LOOM_OK && d->has_error)
    cli_print_diag(d);
  else if (st != LOOM_OK)
    fprintf(stderr, "%s: error: out of memory\n", file);
  loom_diag_free(d);
  return st == LOOM_OK ? 0 : EXIT_USER;
}

int cli_rewrite_option(const char *a, const char *val, cli_rewrites *r) {
  if (!strcmp(a, "--layout")) {
    if (strcmp(val, "NCHW") && strcmp(val, "NHWC"))
      return cli_usage_error("model", "unknown layout '%s' (NCHW or NHWC)", val);
    r->is_channels_last = val[1] == 'H';
  } else if (!strcmp(a, "--fold-bn")) {
    if (strcmp(val, "on") && strcmp(val, "off"))
      return cli_usage_error("model", "--fold-bn takes on or off, not '%s'", val);
    r->is_bn_folded = val[1] == 'n';
  } else if (!strcmp(a, "--accumulate")) {
    if (strcmp(val, "float32") && strcmp(val, "input"))
      return cli_usage_error("model", "--accumulate takes float32 or input, not '%s'", val);
    r->is_f32_accumulated = val[0] == 'f';
  } else if (!strcmp(a, "--dtype")) {
    if (strcmp(val, "float16") && strcmp(val, "bfloat16"))
      return cli_usage_error("model", "--dtype takes float16 or bfloat16, not '%s'", val);
    r->float_dtype = val[0] == 'f' ? LOOM_DTYPE(LOOM_DT_FLOAT, 16, 1)
                                   : LOOM_DTYPE(LOOM_DT_BFLOAT, 16, 1);
  } else if (!strcmp(a, "--dim")) {
    const char *eq = strchr(val, '=');
    char *end = NULL;
    long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
    if (!eq || eq == val || !end || *end || end == eq + 1 || v < 1)
      return cli_usage_error("model", "--dim takes NAME=N with N a positive integer, not '%s'",
                             val);
    if (r->n_dims == CLI_MAX_DIMS || eq - val >= (ptrdiff_t)sizeof r->dim_names[0])
      return cli_usage_error("model", "more than %d --dim options, or a name of more than %d "
                             "characters", CLI_MAX_DIMS, (int)sizeof r->dim_names[0] - 1);
    snprintf(r->dim_names[r->n_dims], sizeof r->dim_names[0], "%.*s", (int)(eq - val), val);
    r->dim_values[r->n_dims++] = v;
  } else {
    return 0;
  }
  return 1;
}

cli_rewrites cli_rewrites_unset(void) {
  return (cli_rewrites){.is_channels_last = -1, .is_bn_folded = -1, .is_f32_accumulated = -1};
}

loom_onnx_options cli_rewrites_get(cli_rewrites *r, bool is_run, bool is_cpu) {
  loom_onnx_options o;
  o.is_channels_last = r->is_channels_last >= 0 ? r->is_channels_last : is_run && is_cpu;
  o.is_bn_folded = r->is_bn_folded >= 0 ? r->is_bn_folded : is_run;
  o.is_f32_accumulated = r->is_f32_accumulated >= 0 ? r->is_f32_accumulated : is_run;
  o.float_dtype = r->float_dtype;
  for (int i = 0; i < r->n_dims; i++)
    r->dim_name_list[i] = r->dim_names[i];
  o.dim_names = r->dim_name_list;
  o.dim_values = r->dim_values;
  o.n_dims = r->n_dims;
  return o;
}

int cli_net_load(const char *file, const char *graph, bool is_unfused,
                 const loom_onnx_options *rewrites, loom_buf *explain, model *m) {
  memset(m, 0, sizeof *m);
  m->arena = loom_arena_new();
  if (!m->arena)
    return EXIT_USER;
  m->is_onnx = ends_with(file, ".onnx");
  if (m->is_onnx) {
    loom_diag d;
    loom_diag_init(&d);
    if (said(file, loom_onnx_read_with(file, m->arena, rewrites, &m->onnx, &d), &d))
      return EXIT_USER;
    m->module = m->onnx.module;
  } else {
    int rc = cli_load(file, &m->program);
    if (rc)
      return rc;
    m->module = m->program.module;
  }
  loom_diag d;
  loom_diag_init(&d);
  loom_module *fused = (loom_module *)m->module;
  if (!is_unfused && said(file, loom_fuse_module(m->arena, m->module, &fused, explain, &d), &d))
    return EXIT_USER;
  m->module = fused;
  /* An ONNX model's initializers are constants: kernels may keep their
   * weights reordered. */
  loom_module *marked = fused;
  if (m->is_onnx &&
      said(file, loom_fuse_mark_constants(m->arena, m->module, m->onnx.n_inputs, &marked), &d))
    return EXIT_USER;
  m->module = marked;
  const loom_module *mod = m->module;
  m->graph = graph ? loom_ir_module_find_graph(mod, graph)
             : mod->n_graphs == 1 ? mod->graphs[0]
                                  : loom_ir_module_find_graph(mod, "main");
  if (!m->graph) {
    fprintf(stderr, "%s: error: %s\n", file,
            graph ? "the module has no graph function of that name"
            : mod->n_graphs ? "the module has several graph functions: name one with --graph"
                            : "the module has no graph function (@R.function) to run");
    return EXIT_USER;
  }
  return 0;
}

/* import (an ONNX model) and fuse (a module or an ONNX model): the module
 * printed, its operators fused unless --no-fuse. */
static int cmd_import(int argc, char **argv, bool is_fuse) {
  const char *file = NULL, *out = NULL;
  bool is_unfused = false;
  loom_print_opts opts = {LOOM_DIALECT_TIR};
  cli_rewrites rw = cli_rewrites_unset();
  for (int i = 0; i < argc; i++) {
    int r = cli_dialect_option("model", argc, argv, &i, &opts.dialect);
    if (r < 0)
      return EXIT_USAGE;
    if (r == 0 && i + 1 < argc && (r = cli_rewrite_option(argv[i], argv[i + 1], &rw)) > 0)
      i++;
    if (r > 1)
      return r;
    if (r > 0)
      continue;
    if (!strcmp(argv[i], "-o") && i + 1 < argc)
      out = argv[++i];
    else if (!strcmp(argv[i], "--no-fuse") && !is_fuse)
      is_unfused = true;
    else if (argv[i][0] == '-')
      return cli_usage_error("model", "unknown option '%s' for %s", argv[i],
                             is_fuse ? "fuse" : "import");
    else if (file)
      return cli_usage_error("model", "one MODEL expected, got '%s' too", argv[i]);
    else
      file = argv[i];
  }
  if (!file && is_fuse)
    return cli_usage_error("model", "fuse takes a module (MODULE.py) or an ONNX model");
  if (!is_fuse && (!file || !ends_with(file, ".onnx")))
    return cli_usage_error("model", "import takes an ONNX model (MODEL.onnx)");
  model m;
  loom_onnx_options rewrites = cli_rewrites_get(&rw, false, true);
  int rc = cli_net_load(file, NULL, is_unfused, &rewrites, NULL, &m);
  if (rc == 0) {
    loom_buf text;
    loom_buf_init(&text);
    loom_script_print_module(m.module, &opts, &text);
    rc = cli_write_text("model", out, &text);
    loom_buf_free(&text);
  }
  cli_net_free(&m);
  return rc;
}

static int parse_run(int argc, char **argv, model_opts *o) {
  memset(o, 0, sizeof *o);
  o->repeat = 3;
  o->rewrites = cli_rewrites_unset();
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool *flag = !strcmp(a, "--verify")    ? &o->is_verify
                 : !strcmp(a, "--explain") ? &o->is_explain
                 : !strcmp(a, "--no-fuse") ? &o->is_unfused
                 : !strcmp(a, "--profile") ? &o->is_profile
                                           : NULL;
    if (flag) {
      *flag = true;
      continue;
    }
    if (a[0] != '-') {
      if (o->file)
        return cli_usage_error("model", "one MODEL expected, got '%s' too", a);
      o->file = a;
      continue;
    }
    if (i + 1 >= argc)
      return cli_usage_error("model", "%s needs a value", a);
    const char *v = argv[++i];
    int r = cli_rewrite_option(a, v, &o->rewrites);
    if (r > 1)
      return r;
    if (r) {
      continue;
    } else if (!strcmp(a, "--graph")) {
      o->graph = v;
    } else if (!strcmp(a, "--target")) {
      o->target = v;
    } else if (!strcmp(a, "--output")) {
      o->output = v;
    } else if (!strcmp(a, "--pipeline")) {
      o->pipeline = v;
    } else if (!strcmp(a, "--db")) {
      o->db = v;
    } else if (!strcmp(a, "--seed") || !strcmp(a, "--repeat")) {
      bool is_seed = a[2] == 's';
      if (!cli_parse_int(v, is_seed ? 0 : 1, is_seed ? INT64_MAX : 1000000,
                         is_seed ? &o->seed : &o->repeat))
        return cli_usage_error("model", "bad %s '%s'", a, v);
    } else if (!strcmp(a, "--input")) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || !eq[1])
        return cli_usage_error("model", "--input takes NAME=FILE.npy, not '%s'", v);
      if (o->n_inputs == MAX_INPUTS)
        return cli_usage_error("model", "at most %d --input", MAX_INPUTS);
      o->input_names[o->n_inputs] = v;
      o->input_files[o->n_inputs++] = eq + 1;
    } else {
      return cli_usage_error("model", "unknown option '%s' for run", a);
    }
  }
  if (!o->file)
    return cli_usage_error("model", "missing MODEL");
  /* Without --pipeline the libraries take what they can (products to BLAS,
   * convolutions to oneDNN), since a network is run to be fast, and a
   * database's records come first; `--pipeline default` runs every
   * function as written. */
  if (!o->pipeline)
    o->pipeline = o->db ? "apply-db,dispatch,default" : "dispatch,default";
  return cli_target("model", o->target, &o->tg);
}

/* Whether NAME= (up to '=') names parameter p: as written, or as printed
 * (every character outside [A-Za-z0-9_] an underscore). */
static bool names_param(const char *arg, const char *p) {
  size_t n = (size_t)(strchr(arg, '=') - arg);
  if (strlen(p) != n)
    return false;
  if (!strncmp(arg, p, n))
    return true;
  for (size_t i = 0; i < n; i++) {
    char c = isalnum((unsigned char)p[i]) ? p[i] : '_';
    if (arg[i] != c)
      return false;
  }
  return true;
}

/* The data of every parameter: --input files, the model's weights, or
 * seeded random values, in that order of preference. */
static int gather_params(const model_opts *o, model *m, const void **params) {
  const loom_graph *g = m->graph;
  loom_rng rng;
  loom_rng_seed(&rng, (uint64_t)o->seed);
  for (int k = 0; k < o->n_inputs; k++) {
    int p = 0;
    while (p < g->n_params && !names_param(o->input_names[k], g->values[p].name))
      p++;
    if (p == g->n_params) {
      fprintf(stderr, "%s: error: --input %.*s: the graph has no parameter of that name\n",
              o->file, (int)(strchr(o->input_names[k], '=') - o->input_names[k]),
              o->input_names[k]);
      return EXIT_USER;
    }
  }
  for (int p = 0; p < g->n_params; p++) {
    const loom_tensor_info *want = &g->values[p].info;
    params[p] = NULL;
    for (int k = 0; k < o->n_inputs; k++)
      if (names_param(o->input_names[k], g->values[p].name)) {
        loom_diag d;
        loom_diag_init(&d);
        loom_tensor_info got;
        void *data;
        loom_status st = loom_net_npy_read(o->input_files[k], m->arena, &got, &data, &d);
        if (st != LOOM_OK)
          cli_print_diag(&d);
        loom_diag_free(&d);
        if (st != LOOM_OK)
          return EXIT_USER;
        if (!loom_ir_tensor_info_equal(&got, want)) {
          char a[160], b[160];
          loom_ir_tensor_info_str(&got, a, sizeof a);
          loom_ir_tensor_info_str(want, b, sizeof b);
          fprintf(stderr, "%s: error: parameter '%s' is %s; the file holds %s\n",
                  o->input_files[k], g->values[p].name, b, a);
          return EXIT_USER;
        }
        params[p] = data;
      }
    int w = p - m->onnx.n_inputs;
    if (!params[p] && m->is_onnx && w >= 0 && w < m->onnx.n_weights)
      params[p] = m->onnx.weights[w].data;
    if (!params[p]) {
      loom_interp_array *arr = loom_interp_array_new(want->dtype, want->shape, want->ndim);
      void *data = arr ? loom_arena_alloc(m->arena, loom_net_bytes(want) + 1) : NULL;
      if (!data) {
        loom_interp_array_free(arr);
        fprintf(stderr, "%s: error: out of memory\n", o->file);
        return EXIT_USER;
      }
      loom_interp_fill_random(arr, &rng);
      memcpy(data, arr->data, loom_net_bytes(want));
      loom_interp_array_free(arr);
      params[p] = data;
    }
  }
  return 0;
}

/* One run of the graph, as the runtime's timer calls it. */
typedef struct run_ctx {
  loom_net *net;
  const void *const *params;
  void *const *outs;
  loom_diag *d;
} run_ctx;

static int run_once(void *ctx) {
  run_ctx *r = ctx;
  return loom_net_run(r->net, r->params, r->outs, r->d) != LOOM_OK;
}

/* Prints output i and writes it to DIR/output_I.npy when asked. */
static int report_output(const model_opts *o, const loom_graph *g, int i, void *data) {
  const loom_tensor_info *t = &g->values[g->outputs[i]].info;
  loom_interp_array *arr = loom_interp_array_new(t->dtype, t->shape, t->ndim);
  if (!arr)
    return EXIT_USER;
  memcpy(arr->data, data, loom_net_bytes(t));
  char info[160];
  loom_ir_tensor_info_str(t, info, sizeof info);
  loom_buf b;
  loom_buf_init(&b);
  loom_interp_array_print(arr, 8, &b);
  printf("output %d: %s %s\n", i, info, b.data ? b.data : "");
  loom_buf_free(&b);
  loom_interp_array_free(arr);
  if (!o->output)
    return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/output_%d.npy", o->output, i);
  loom_diag d;
  loom_diag_init(&d);
  int rc = 0;
  if (loom_net_npy_write(path, t, data, &d) != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  }
  loom_diag_free(&d);
  return rc;
}

/* Compares the outputs with the interpreter's. */
static int verify(const model_opts *o, const model *m, const void **params, void **outs) {
  const loom_graph *g = m->graph;
  void **want = calloc((size_t)g->n_outputs, sizeof *want);
  int rc = want ? 0 : EXIT_USER;
  for (int i = 0; i < g->n_outputs && rc == 0; i++)
    if (!(want[i] = malloc(loom_net_bytes(&g->values[g->outputs[i]].info) + 1)))
      rc = EXIT_USER;
  loom_diag d;
  loom_diag_init(&d);
  if (rc == 0 && loom_net_interp(m->module, g, params, want, &d) != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  }
  loom_diag_free(&d);
  for (int i = 0; i < g->n_outputs && rc == 0; i++) {
    const loom_tensor_info *t = &g->values[g->outputs[i]].info;
    loom_interp_array *a = loom_interp_array_new(t->dtype, t->shape, t->ndim);
    loom_interp_array *b = loom_interp_array_new(t->dtype, t->shape, t->ndim);
    char *why = NULL;
    double tol = loom_tune_tolerance(t->dtype);
    if (!a || !b) {
      rc = EXIT_USER;
    } else {
      memcpy(a->data, outs[i], loom_net_bytes(t));
      memcpy(b->data, want[i], loom_net_bytes(t));
      if (!loom_interp_compare(a, b, tol, tol, &why)) {
        fprintf(stderr, "%s: error: output %d differs from the interpreter's %s\n", o->file,
                i, why ? why : "");
        rc = EXIT_USER;
      }
    }
    free(why);
    loom_interp_array_free(a);
    loom_interp_array_free(b);
  }
  if (rc == 0)
    printf("verified: %d output%s match the interpreter\n", g->n_outputs,
           g->n_outputs == 1 ? "" : "s");
  for (int i = 0; want && i < g->n_outputs; i++)
    free(want[i]);
  free(want);
  return rc;
}

typedef struct func_time {
  const char *func;
  int calls;
  double ms;
} func_time;

static int by_time(const void *a, const void *b) {
  double x = ((const func_time *)a)->ms, y = ((const func_time *)b)->ms;
  return (x < y) - (x > y);
}

/* --profile: --repeat more runs, each call's kernel timed; a line per
 * function, the slowest first: its calls, its time in a run, its share. */
static int profile(const model_opts *o, loom_net *net, const loom_graph *g,
                   const void **params, void **outs) {
  double *call_ms = calloc((size_t)g->n_calls + 1, sizeof *call_ms);
  func_time *fs = calloc((size_t)g->n_calls + 1, sizeof *fs);
  loom_diag d;
  loom_diag_init(&d);
  int rc = call_ms && fs ? 0 : EXIT_USER;
  for (long long r = 0; r < o->repeat && rc == 0; r++)
    if (loom_net_profile(net, params, outs, call_ms, &d) != LOOM_OK) {
      cli_print_diag(&d);
      rc = EXIT_USER;
    }
  int n = 0;
  double total = 0;
  for (int k = 0; k < g->n_calls && rc == 0; k++) {
    int i = 0;
    while (i < n && strcmp(fs[i].func, g->calls[k].func))
      i++;
    if (i == n)
      fs[n++] = (func_time){g->calls[k].func, 0, 0};
    fs[i].calls++;
    fs[i].ms += call_ms[k] / (double)o->repeat;
    total += call_ms[k] / (double)o->repeat;
  }
  qsort(fs, (size_t)n, sizeof *fs, by_time);
  if (rc == 0)
    printf("%-40s %5s %10s %6s\n", "function", "calls", "ms a run", "share");
  for (int i = 0; i < n && rc == 0; i++)
    printf("%-40s %5d %10.4f %5.1f%%\n", fs[i].func, fs[i].calls, fs[i].ms,
           total > 0 ? 100 * fs[i].ms / total : 0);
  if (rc == 0)
    printf("%-40s %5d %10.4f\n", "all kernels", g->n_calls, total);
  loom_diag_free(&d);
  free(call_ms);
  free(fs);
  return rc;
}

static int cmd_run(int argc, char **argv) {
  model_opts o;
  int rc = parse_run(argc, argv, &o);
  if (rc)
    return rc;
  model m;
  loom_buf fused;
  loom_buf_init(&fused);
  loom_onnx_options rewrites = cli_rewrites_get(&o.rewrites, true, o.tg.kind == LOOM_TARGET_CPU);
  rc = cli_net_load(o.file, o.graph, o.is_unfused, &rewrites, o.is_explain ? &fused : NULL, &m);
  if (rc == 0 && o.is_explain && fused.len)
    printf("fused:\n%s", fused.data);
  loom_buf_free(&fused);
  if (rc) {
    cli_net_free(&m);
    return rc;
  }
  /* The module passes keep the graphs, and the functions' names they call. */
  cli_program piped_program = {.module = (loom_module *)m.module};
  cli_pipeline_result piped = {0};
  if (o.pipeline && (rc = cli_pipeline("model", o.pipeline, o.db, &o.tg, o.is_explain,
                                       &piped_program, &piped))) {
    cli_pipeline_free(&piped);
    cli_net_free(&m);
    return rc;
  }
  m.module = piped_program.module;
  const loom_graph *g = m.graph;
  const void **params = calloc((size_t)g->n_params + 1, sizeof *params);
  void **outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
  rc = params && outs ? gather_params(&o, &m, params) : EXIT_USER;
  for (int i = 0; i < g->n_outputs && rc == 0; i++)
    if (!(outs[i] = loom_arena_alloc(m.arena, loom_net_bytes(&g->values[g->outputs[i]].info) + 1)))
      rc = EXIT_USER;
  loom_net *net = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (rc == 0 && loom_net_build(m.module, g, &o.tg, &net, &d) != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  }
  /* An ONNX model's weights stay on a GPU from run to run; its inputs are
   * copied there at each. */
  if (rc == 0 && m.is_onnx)
    loom_net_keep_params(net, m.onnx.n_inputs);
  /* Each run timed alone, none before: --repeat runs in all. */
  loom_runtime_timer_config cfg = {.warmup = 0, .repeat = (int)o.repeat, .number = 1};
  loom_runtime_timing timing = {0};
  run_ctx run = {net, params, outs, &d};
  if (rc == 0 && loom_runtime_time(run_once, &run, &cfg, &timing, &d) != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  }
  loom_diag_free(&d);
  for (int i = 0; i < g->n_outputs && rc == 0; i++)
    rc = report_output(&o, g, i, outs[i]);
  if (rc == 0) {
    size_t planned, unplanned;
    loom_net_memory(net, &planned, &unplanned);
    printf("%d calls of %d functions; run %.4f ms (median of %lld); intermediates %.1f KiB "
           "planned, %.1f KiB one buffer each\n", g->n_calls, m.module->n_funcs,
           timing.median_ms, o.repeat, planned / 1024.0, unplanned / 1024.0);
  }
  if (rc == 0 && o.is_profile)
    rc = profile(&o, net, g, params, outs);
  if (rc == 0 && o.is_verify)
    rc = verify(&o, &m, params, outs);
  loom_net_free(net);
  free(params);
  free(outs);
  cli_pipeline_free(&piped);
  cli_net_free(&m);
  return rc;
}

int cli_import(int argc, char **argv) { return cmd_import(argc, argv, false); }

int cli_model(int argc, char **argv) {
  if (argc < 1)
    return cli_usage_error("model", "missing import, fuse, run or tune");
  if (!strcmp(argv[0], "import") || !strcmp(argv[0], "fuse"))
    return cmd_import(argc - 1, argv + 1, argv[0][0] == 'f');
  if (!strcmp(argv[0], "run"))
    return cmd_run(argc - 1, argv + 1);
  if (!strcmp(argv[0], "tune"))
    return cli_model_tune(argc - 1, argv + 1);
  return cli_usage_error("model", "unknown action '%s' (import, fuse, run or tune)", argv[0]);
}
