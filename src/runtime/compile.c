/* Compiling C source into a shared object and loading it. The compiler runs
 * as a child without a shell, in a private directory that is removed before
 * returning, so thousands of compiles leave no files and no descriptors. */
#define _GNU_SOURCE /* pipe2 */
#include "runtime/runtime_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Words of the compiler command and flags are limited so a runaway flags
 * string is an error, not a huge allocation; the rest of argv is the fixed
 * tail (-fopenmp -shared -fPIC -o LIB SRC -lm NULL). */
#define MAX_WORDS 248
#define MAX_ARGS (MAX_WORDS + 8)
/* How much of the compiler's output goes into the diagnostic. */
#define MAX_LOG_LINES 20
#define MAX_LOG_BYTES 4096

struct loom_runtime_lib {
  void *handle;
};

/* The private directory and the paths inside it. */
typedef struct workdir {
  char dir[4096];
  char src[4096 + 16];
  char lib[4096 + 16];
  char log[4096 + 16];
} workdir;

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

/* Splits s on blanks into argv[*argc..], copying into store (one NUL-separated
 * copy per string). Returns 0 when the words do not fit. */
static int split_words(const char *s, char *store, int *argc, char **argv) {
  strcpy(store, s);
  for (char *p = store; *p;) {
    while (is_blank(*p))
      *p++ = 0;
    if (!*p)
      break;
    if (*argc >= MAX_WORDS)
      return 0;
    argv[(*argc)++] = p;
    while (*p && !is_blank(*p))
      p++;
  }
  return 1;
}

static loom_status write_all(const char *path, const char *data, size_t len,
                             loom_diag *d) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return loom_diag_error(d, (loom_loc){0}, "cannot create '%s': %s", path,
                           strerror(errno));
  while (len > 0) {
    ssize_t k = write(fd, data, len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      int e = errno;
      close(fd);
      return loom_diag_error(d, (loom_loc){0}, "cannot write '%s': %s", path,
                             strerror(e));
    }
    data += k;
    len -= (size_t)k;
  }
  close(fd);
  return LOOM_OK;
}

/* Adds the first lines of the compiler's output to d as notes. */
static void note_log(const char *path, loom_diag *d) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  char buf[MAX_LOG_BYTES + 1];
  size_t len = 0;
  while (len < MAX_LOG_BYTES) {
    ssize_t k = read(fd, buf + len, MAX_LOG_BYTES - len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    len += (size_t)k;
  }
  close(fd);
  buf[len] = 0;
  int lines = 0;
  for (char *p = buf; *p && lines < MAX_LOG_LINES; lines++) {
    char *nl = strchr(p, '\n');
    if (nl)
      *nl = 0;
    loom_diag_note(d, (loom_loc){0}, "%s", p);
    if (!nl)
      break;
    p = nl + 1;
  }
}

/* Spawn attributes for the compiler: a process group of its own (so a
 * timeout kills the driver and every pass it started), no blocked signals
 * and default actions where the caller may have changed them (an ignored
 * SIGCHLD would break the driver's own waits). */
static int init_attr(posix_spawnattr_t *attr) {
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGCHLD);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  int rc = posix_spawnattr_init(attr);
  if (rc)
    return rc;
  rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP |
                                          POSIX_SPAWN_SETSIGMASK |
                                          POSIX_SPAWN_SETSIGDEF);
  if (!rc)
    rc = posix_spawnattr_setpgroup(attr, 0);
  if (!rc)
    rc = posix_spawnattr_setsigmask(attr, &none);
  if (!rc)
    rc = posix_spawnattr_setsigdefault(attr, &defaults);
  if (rc)
    posix_spawnattr_destroy(attr);
  return rc;
}

/* Starts the compiler with stdin from /dev/null, stdout and stderr into
 * w->log, and fd 3 the write end of a pipe (so its end wakes the wait). */
static int spawn(char **argv, const workdir *w, int pipe_write, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc)
    return rc;
  rc = init_attr(&attr);
  if (rc) {
    posix_spawn_file_actions_destroy(&fa);
    return rc;
  }
  rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (!rc)
    rc = posix_spawn_file_actions_addopen(&fa, 1, w->log,
                                          O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!rc)
    rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (!rc)
    rc = posix_spawn_file_actions_adddup2(&fa, pipe_write, 3);
  if (!rc)
    rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

/* Runs the compiler and waits for it, at most timeout_ms (0: no limit). */
static loom_status run_compiler(char **argv, const workdir *w,
                                double timeout_ms, loom_diag *d) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return loom_diag_error(d, (loom_loc){0}, "cannot make a pipe: %s",
                           strerror(errno));
  double t0 = runtime_now_ms();
  pid_t pid = 0;
  int rc = spawn(argv, w, fds[1], &pid);
  close(fds[1]);
  if (rc) {
    close(fds[0]);
    return loom_diag_error(d, (loom_loc){0}, "cannot run the C compiler '%s': %s",
                           argv[0], strerror(rc));
  }
  int ended = runtime_wait_end(pid, fds[0], timeout_ms > 0 ? t0 + timeout_ms : 0);
  int wait_errno = errno;
  close(fds[0]);
  int st = 0;
  if (runtime_finish(pid, &st) < 0 || ended < 0)
    return loom_diag_error(d, (loom_loc){0},
                           "cannot wait for the C compiler '%s': %s", argv[0],
                           strerror(ended < 0 ? wait_errno : errno));
  if (!ended) {
    loom_diag_error(d, (loom_loc){0},
                    "the C compiler '%s' timed out after %.0f ms", argv[0],
                    timeout_ms);
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    return LOOM_OK;
  } else if (WIFEXITED(st)) {
    loom_diag_error(d, (loom_loc){0},
                    "the C compiler '%s' failed with exit status %d", argv[0],
                    WEXITSTATUS(st));
  } else {
    loom_diag_error(d, (loom_loc){0},
                    "the C compiler '%s' was killed by signal %d", argv[0],
                    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  }
  note_log(w->log, d);
  return LOOM_ERROR;
}

/* OpenMP runtimes keep worker threads parked inside their own code after a
 * parallel region. Unloading the runtime with the last kernel that needed it
 * would leave those threads running unmapped code, so once loaded it is
 * pinned for the life of the process (RTLD_NOLOAD promotes the flag on the
 * copy already there and loads nothing new). */
static void pin_openmp_runtime(void) {
  static const char *const names[] = {"libgomp.so.1", "libomp.so",
                                      "libomp.so.5", "libiomp5.so"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (h)
      dlclose(h);
  }
}

static loom_status build_and_load(const char *src, size_t len,
                                  const loom_runtime_cc_options *opt,
                                  const workdir *w, void **handle,
                                  loom_diag *d) {
  const char *cc = opt && opt->cc ? opt->cc : getenv("CC");
  if (!cc || !*cc)
    cc = "cc";
  const char *flags = opt && opt->flags ? opt->flags : "-O3 -march=native";
  char *store = malloc(strlen(cc) + strlen(flags) + 2);
  char **argv = malloc(MAX_ARGS * sizeof *argv);
  if (!store || !argv) {
    free(store);
    free(argv);
    return LOOM_NOMEM;
  }
  int argc = 0;
  loom_status st = LOOM_OK;
  if (!split_words(cc, store, &argc, argv) || argc == 0 ||
      !split_words(flags, store + strlen(cc) + 1, &argc, argv))
    st = loom_diag_error(d, (loom_loc){0},
                         "bad compiler command '%s %s' (empty, or more than %d "
                         "words)",
                         cc, flags, MAX_WORDS);
  if (st == LOOM_OK) {
    if (opt && opt->openmp)
      argv[argc++] = "-fopenmp";
    argv[argc++] = "-shared";
    argv[argc++] = "-fPIC";
    argv[argc++] = "-o";
    argv[argc++] = (char *)w->lib;
    argv[argc++] = (char *)w->src;
    argv[argc++] = "-lm";
    argv[argc] = NULL;
    st = write_all(w->src, src, len, d);
  }
  if (st == LOOM_OK)
    st = run_compiler(argv, w, opt ? opt->timeout_ms : 0, d);
  if (st == LOOM_OK) {
    *handle = dlopen(w->lib, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
      const char *e = dlerror();
      st = loom_diag_error(d, (loom_loc){0}, "cannot load the compiled code: %s",
                           e ? e : "unknown error");
    }
  }
  if (st == LOOM_OK)
    pin_openmp_runtime();
  free(store);
  free(argv);
  return st;
}

/* A new private directory under opt->tmpdir, $TMPDIR or /tmp. The name is
 * random, so a library path is never that of one still loaded (dlopen would
 * hand back the old one). */
static loom_status make_workdir(const loom_runtime_cc_options *opt, workdir *w,
                                loom_diag *d) {
  const char *base = opt && opt->tmpdir ? opt->tmpdir : getenv("TMPDIR");
  if (!base || !*base)
    base = "/tmp";
  int n = snprintf(w->dir, sizeof w->dir, "%s/loom-cc-XXXXXX", base);
  if (n < 0 || (size_t)n >= sizeof w->dir)
    return loom_diag_error(d, (loom_loc){0}, "temporary directory name too long");
  if (!mkdtemp(w->dir))
    return loom_diag_error(d, (loom_loc){0},
                           "cannot create a temporary directory in '%s': %s",
                           base, strerror(errno));
  snprintf(w->src, sizeof w->src, "%s/kernel.c", w->dir);
  snprintf(w->lib, sizeof w->lib, "%s/kernel.so", w->dir);
  snprintf(w->log, sizeof w->log, "%s/cc.log", w->dir);
  return LOOM_OK;
}

static void remove_workdir(const workdir *w) {
  unlink(w->src);
  unlink(w->lib);
  unlink(w->log);
  rmdir(w->dir);
}

loom_status loom_runtime_compile(const char *src, size_t len,
                                 const loom_runtime_cc_options *opt,
                                 loom_runtime_lib **out, double *compile_ms,
                                 loom_diag *d) {
  double t0 = runtime_now_ms();
  *out = NULL;
  workdir *w = malloc(sizeof *w);
  loom_runtime_lib *lib = malloc(sizeof *lib);
  if (!w || !lib) {
    free(w);
    free(lib);
    return LOOM_NOMEM;
  }
  loom_status st = make_workdir(opt, w, d);
  if (st == LOOM_OK) {
    void *handle = NULL;
    st = build_and_load(src, len, opt, w, &handle, d);
    remove_workdir(w);
    lib->handle = handle;
  }
  free(w);
  if (compile_ms)
    *compile_ms = runtime_now_ms() - t0;
  if (st != LOOM_OK) {
    free(lib);
    return st;
  }
  *out = lib;
  return LOOM_OK;
}

void *loom_runtime_lib_symbol(loom_runtime_lib *lib, const char *name) {
  if (!lib || !name)
    return NULL;
  return dlsym(lib->handle, name);
}

void loom_runtime_lib_free(loom_runtime_lib *lib) {
  if (!lib)
    return;
  dlclose(lib->handle);
  free(lib);
}
