/* CUDA C to cubins through NVRTC, opened at run time so that Loom builds and
 * runs where CUDA is absent. A compile needs no GPU: the cubin is made for
 * the architecture asked for, and ptxas's report (-v) says how many
 * registers each kernel uses and how much it spills. */
#define _GNU_SOURCE /* dlinfo */
#include "runtime/runtime_impl.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVRTC stays loaded once opened: it is C++ with static state (its
 * exception pool among it) that unloading would orphan. */
#define OPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)

/* How much of a failed compile's log goes into the diagnostic. */
#define MAX_LOG_LINES 20

/* NVRTC's C API (nvrtc.h): every call returns 0 on success. */
typedef int (*version_fn)(int *, int *);
typedef int (*create_fn)(void **, const char *, const char *, int,
                         const char *const *, const char *const *);
typedef int (*destroy_fn)(void **);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*size_fn)(void *, size_t *);
typedef int (*get_fn)(void *, char *);
typedef const char *(*error_fn)(int);

struct loom_runtime_nvrtc {
  void *lib;
  char *path, *include_opt; /* "--include-path=DIR", NULL when none */
  int major, minor;
  create_fn create;
  destroy_fn destroy;
  compile_fn compile;
  size_fn log_size, cubin_size;
  get_fn get_log, get_cubin;
  error_fn error_string;
};

static const char *const sonames[] = {
    "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
    "/usr/local/cuda/lib64/libnvrtc.so",
};

/* fmt with two strings, on the heap; NULL when out of memory. */
static char *dup_printf(const char *fmt, const char *a, const char *b) {
  loom_buf s;
  loom_buf_init(&s);
  loom_buf_printf(&s, fmt, a, b);
  return s.has_failed ? (loom_buf_free(&s), NULL) : loom_buf_take(&s);
}

/* The path the loader opened lib from. */
static char *lib_path(void *lib, const char *asked) {
  struct link_map *map = NULL;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
      map->l_name[0])
    return strdup(map->l_name);
  return strdup(asked);
}

/* "--include-path=" the headers' folder: $LOOM_CUDA_INCLUDE, else
 * LIB/../include when it holds cuda_fp16.h. */
static char *include_opt(const char *path) {
  const char *env = getenv("LOOM_CUDA_INCLUDE");
  if (env && *env)
    return dup_printf("--include-path=%s%s", env, "");
  const char *slash = strrchr(path, '/');
  if (!slash)
    return NULL;
  size_t n = (size_t)(slash - path);
  char *dir = malloc(n + 32);
  if (!dir)
    return NULL;
  snprintf(dir, n + 32, "%.*s/../include", (int)n, path);
  char *probe = dup_printf("%s%s", dir, "/cuda_fp16.h");
  FILE *f = probe ? fopen(probe, "r") : NULL;
  free(probe);
  char *opt = f ? dup_printf("--include-path=%s%s", dir, "") : NULL;
  if (f)
    fclose(f);
  free(dir);
  return opt;
}

/* NVRTC opens its builtins library (libnvrtc-builtins.so.X.Y) by name from
 * its own folder when it first compiles. Loading it here from the folder
 * NVRTC came from makes that lookup find it already loaded, also where the
 * caller's dlopen hides NVRTC's folder (under AddressSanitizer). */
static void preload_builtins(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return;
  char pattern[4096];
  snprintf(pattern, sizeof pattern, "%.*s/libnvrtc-builtins.so*",
           (int)(slash - path), path);
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0)
    return;
  for (size_t i = 0; i < g.gl_pathc; i++)
    if (dlopen(g.gl_pathv[i], OPEN_FLAGS))
      break;
  globfree(&g);
}

static bool bind_symbols(loom_runtime_nvrtc *nv) {
  version_fn version = (version_fn)dlsym(nv->lib, "nvrtcVersion");
  nv->create = (create_fn)dlsym(nv->lib, "nvrtcCreateProgram");
  nv->destroy = (destroy_fn)dlsym(nv->lib, "nvrtcDestroyProgram");
  nv->compile = (compile_fn)dlsym(nv->lib, "nvrtcCompileProgram");
  nv->log_size = (size_fn)dlsym(nv->lib, "nvrtcGetProgramLogSize");
  nv->get_log = (get_fn)dlsym(nv->lib, "nvrtcGetProgramLog");
  nv->cubin_size = (size_fn)dlsym(nv->lib, "nvrtcGetCUBINSize");
  nv->get_cubin = (get_fn)dlsym(nv->lib, "nvrtcGetCUBIN");
  nv->error_string = (error_fn)dlsym(nv->lib, "nvrtcGetErrorString");
  return version && version(&nv->major, &nv->minor) == 0 && nv->create &&
         nv->destroy && nv->compile && nv->log_size && nv->get_log &&
         nv->cubin_size && nv->get_cubin && nv->error_string;
}

loom_status loom_runtime_nvrtc_open(loom_runtime_nvrtc **out, loom_diag *d) {
  *out = NULL;
  const char *env = getenv("LOOM_NVRTC");
  void *lib = NULL;
  const char *asked = NULL;
  if (env && *env) {
    lib = dlopen(asked = env, OPEN_FLAGS);
  } else {
    for (size_t i = 0; !lib && i < sizeof sonames / sizeof *sonames; i++)
      lib = dlopen(asked = sonames[i], OPEN_FLAGS);
  }
  if (!lib)
    return loom_diag_error(d, (loom_loc){0},
                           "NVRTC not found: %s%s (install the CUDA toolkit or "
                           "the nvidia-cuda-nvrtc wheel, and point LOOM_NVRTC "
                           "at libnvrtc.so)",
                           env && *env ? "cannot open LOOM_NVRTC=" : "no "
                           "libnvrtc.so.13, .12 or libnvrtc.so on the loader's "
                           "path or in /usr/local/cuda/lib64",
                           env && *env ? env : "");
  loom_runtime_nvrtc *nv = calloc(1, sizeof *nv);
  if (!nv) {
    dlclose(lib);
    return LOOM_NOMEM;
  }
  nv->lib = lib;
  if (!bind_symbols(nv)) {
    loom_runtime_nvrtc_close(nv);
    return loom_diag_error(d, (loom_loc){0},
                           "%s is not a usable NVRTC (a function is missing)",
                           asked);
  }
  nv->path = lib_path(lib, asked);
  nv->include_opt = nv->path ? include_opt(nv->path) : NULL;
  if (!nv->path) {
    loom_runtime_nvrtc_close(nv);
    return LOOM_NOMEM;
  }
  preload_builtins(nv->path);
  *out = nv;
  return LOOM_OK;
}

void loom_runtime_nvrtc_close(loom_runtime_nvrtc *nv) {
  if (!nv)
    return;
  if (nv->lib)
    dlclose(nv->lib);
  free(nv->path);
  free(nv->include_opt);
  free(nv);
}

const char *loom_runtime_nvrtc_path(const loom_runtime_nvrtc *nv) {
  return nv->path;
}

void loom_runtime_nvrtc_version(const loom_runtime_nvrtc *nv, int *major,
                                int *minor) {
  *major = nv->major;
  *minor = nv->minor;
}

/* The registers and spills ptxas reports, a line each per kernel:
 * "Used 32 registers, ..." and "0 bytes stack frame, 8 bytes spill stores,
 * 8 bytes spill loads". */
static void read_report(const char *log, loom_runtime_cubin *out) {
  static const char frame[] = "bytes stack frame, ";
  for (const char *p = log; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
    const char *used = strstr(line, "Used ");
    const char *spill = strstr(line, frame);
    int regs;
    long long stores, loads;
    if (used && sscanf(used, "Used %d registers", &regs) == 1 &&
        regs > out->max_registers)
      out->max_registers = regs;
    if (spill && sscanf(spill + sizeof frame - 1,
                        "%lld bytes spill stores, %lld bytes spill loads",
                        &stores, &loads) == 2)
      out->spill_bytes += stores + loads;
    p = nl ? nl + 1 : NULL;
  }
}

static void note_lines(const char *log, loom_diag *d) {
  int lines = 0;
  for (const char *p = log; p && *p && lines < MAX_LOG_LINES; lines++) {
    const char *nl = strchr(p, '\n');
    int n = nl ? (int)(nl - p) : (int)strlen(p);
    if (n > 0)
      loom_diag_note(d, (loom_loc){0}, "%.*s", n, p);
    p = nl ? nl + 1 : NULL;
  }
}

/* The compile, leaving NVRTC's log in out->log whatever the outcome. */
static loom_status compile(loom_runtime_nvrtc *nv, const char *src, const char *name,
                           int sm, loom_runtime_cubin *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  char arch[32];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d", sm);
  const char *opts[] = {arch, "--ptxas-options=-v", "--std=c++17",
                        nv->include_opt};
  int n_opts = nv->include_opt ? 4 : 3;
  void *prog = NULL;
  int rc = nv->create(&prog, src, name, 0, NULL, NULL);
  if (rc != 0)
    return rc == 1 ? LOOM_NOMEM
                   : loom_diag_error(d, (loom_loc){0}, "NVRTC: %s",
                                     nv->error_string(rc));
  rc = nv->compile(prog, n_opts, opts);
  size_t log_n = 0;
  loom_status st = LOOM_OK;
  if (nv->log_size(prog, &log_n) == 0 && (out->log = malloc(log_n + 1))) {
    out->log[0] = 0;
    nv->get_log(prog, out->log);
    out->log[log_n] = 0;
  }
  if (rc != 0) {
    st = loom_diag_error(d, (loom_loc){0}, "%s: NVRTC could not compile it "
                         "for sm_%d: %s", name, sm, nv->error_string(rc));
    note_lines(out->log, d);
  } else if (nv->cubin_size(prog, &out->size) != 0 || out->size == 0) {
    st = loom_diag_error(d, (loom_loc){0}, "%s: NVRTC made no cubin", name);
  } else if (!(out->data = malloc(out->size))) {
    st = LOOM_NOMEM;
  } else {
    nv->get_cubin(prog, out->data);
    read_report(out->log, out);
  }
  nv->destroy(&prog);
  return st;
}

loom_status loom_runtime_nvrtc_compile(loom_runtime_nvrtc *nv, const char *src,
                                       const char *name, int sm,
                                       loom_runtime_cubin *out, loom_diag *d) {
  loom_status st = compile(nv, src, name, sm, out, d);
  if (st != LOOM_OK)
    loom_runtime_cubin_free(out);
  return st;
}

/* ---- compiling in a child process ------------------------------------------- */

#define APART_CUBIN_MAX ((size_t)64 << 20)
#define APART_LOG_MAX ((size_t)256 << 10)

/* What the child hands back, in shared memory: the cubin after the log. */
typedef struct apart {
  const loom_runtime_nvrtc *nv;
  const char *src, *name;
  int sm;
  loom_status st;
  size_t size, log_n;
  int max_registers;
  int64_t spill_bytes;
  char msg[1024];
  char log[APART_LOG_MAX];
  char data[];
} apart;

static int compile_child(void *ctx) {
  apart *ap = ctx;
  loom_runtime_cubin c;
  loom_diag d;
  loom_diag_init(&d);
  ap->st = compile((loom_runtime_nvrtc *)ap->nv, ap->src, ap->name, ap->sm, &c, &d);
  if (d.msg)
    snprintf(ap->msg, sizeof ap->msg, "%s", d.msg);
  if (c.log) {
    ap->log_n = strlen(c.log) < APART_LOG_MAX - 1 ? strlen(c.log) : APART_LOG_MAX - 1;
    memcpy(ap->log, c.log, ap->log_n);
  }
  if (ap->st == LOOM_OK && c.size > APART_CUBIN_MAX) {
    ap->st = LOOM_ERROR;
    snprintf(ap->msg, sizeof ap->msg, "%s: the cubin is over %zu MiB", ap->name,
             APART_CUBIN_MAX >> 20);
  } else if (ap->st == LOOM_OK) {
    memcpy(ap->data, c.data, c.size);
    ap->size = c.size;
    ap->max_registers = c.max_registers;
    ap->spill_bytes = c.spill_bytes;
  }
  loom_runtime_cubin_free(&c);
  loom_diag_free(&d);
  return 0;
}

loom_status loom_runtime_nvrtc_compile_apart(loom_runtime_nvrtc *nv, const char *src,
                                             const char *name, int sm,
                                             loom_runtime_cubin *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  size_t n = sizeof(apart) + APART_CUBIN_MAX;
  apart *ap = loom_runtime_shared_alloc(n); /* untouched pages cost nothing */
  if (!ap)
    return LOOM_NOMEM;
  ap->nv = nv;
  ap->src = src;
  ap->name = name;
  ap->sm = sm;
  ap->st = LOOM_ERROR;
  loom_runtime_child_result r;
  loom_status st = loom_runtime_run_child(compile_child, ap, 120000, &r, d);
  char how[128];
  if (st != LOOM_OK) {
    /* said */
  } else if (r.kind != LOOM_RUNTIME_CHILD_OK) {
    st = loom_diag_error(d, (loom_loc){0}, "%s: NVRTC failed: %s", name,
                         loom_runtime_child_describe(&r, how, sizeof how));
  } else if (ap->st != LOOM_OK) {
    st = ap->st == LOOM_NOMEM ? LOOM_NOMEM
                              : loom_diag_error(d, (loom_loc){0}, "%s", ap->msg);
    ap->log[ap->log_n] = 0;
    if (st == LOOM_ERROR)
      note_lines(ap->log, d);
  } else if (!(out->data = malloc(ap->size)) || !(out->log = malloc(ap->log_n + 1))) {
    st = LOOM_NOMEM;
  } else {
    memcpy(out->data, ap->data, ap->size);
    memcpy(out->log, ap->log, ap->log_n);
    out->log[ap->log_n] = 0;
    out->size = ap->size;
    out->max_registers = ap->max_registers;
    out->spill_bytes = ap->spill_bytes;
  }
  if (st != LOOM_OK)
    loom_runtime_cubin_free(out);
  loom_runtime_shared_free(ap, n);
  return st;
}

void loom_runtime_cubin_free(loom_runtime_cubin *c) {
  free(c->data);
  free(c->log);
  memset(c, 0, sizeof *c);
}
