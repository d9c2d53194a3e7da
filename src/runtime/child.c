/* Running code in a forked child so that a crash or a hang is a report, not
 * the end of the caller. The child is the leader of its own process group so
 * that one kill takes it and anything it started; the parent learns of its
 * end through a pipe whose write end only the child holds. */
#define _GNU_SOURCE /* pipe2 */
#include "runtime/runtime_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* Signals a crashing kernel raises; the child takes their default action, so
 * a crash shows as the signal even where the parent installed handlers. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                    SIGABRT, SIGTRAP, SIGSYS};

static const struct {
  int sig;
  const char *name;
} signal_names[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGILL, "SIGILL"},   {SIGABRT, "SIGABRT"}, {SIGTRAP, "SIGTRAP"},
    {SIGSYS, "SIGSYS"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"},
    {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGUSR1, "SIGUSR1"},
    {SIGUSR2, "SIGUSR2"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
};

/* What the child does between fork and fn: never returns. */
static void child_main(int (*fn)(void *), void *ctx, int read_end,
                       pid_t parent) {
  setpgid(0, 0);
#ifdef __linux__
  /* Die with the parent; if it is already gone, leave at once. The "parent"
   * here is the forking thread, which stays in run_child until the child is
   * reaped, so only the death of the whole process can fire this. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(255);
#endif
  close(read_end);
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) {
    dup2(null, 0);
    if (null != 0)
      close(null);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (size_t i = 0; i < sizeof crash_signals / sizeof *crash_signals; i++)
    signal(crash_signals[i], SIG_DFL);
  int rc = fn(ctx);
  _exit(rc == 0 ? 0 : rc > 0 && rc < 256 ? rc : 255);
}

loom_status loom_runtime_run_child(int (*fn)(void *ctx), void *ctx,
                                   double timeout_ms,
                                   loom_runtime_child_result *out,
                                   loom_diag *d) {
  memset(out, 0, sizeof *out);
  out->timeout_ms = timeout_ms;
  if (!fn)
    return loom_diag_error(d, (loom_loc){0}, "no function to run in the child");
  if (!(timeout_ms >= 0 && timeout_ms < 1e12))
    return loom_diag_error(d, (loom_loc){0},
                           "child timeout must be a non-negative number of "
                           "milliseconds, not %g",
                           timeout_ms);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return loom_diag_error(d, (loom_loc){0}, "cannot make a pipe: %s",
                           strerror(errno));
  pid_t parent = getpid();
  double t0 = runtime_now_ms();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return loom_diag_error(d, (loom_loc){0}, "cannot fork: %s", strerror(e));
  }
  if (pid == 0)
    child_main(fn, ctx, fds[0], parent);
  /* Also here, so the group exists before any kill, whoever runs first. */
  setpgid(pid, pid);
  close(fds[1]);
  double deadline = timeout_ms > 0 ? t0 + timeout_ms : 0;
  int ended = runtime_wait_end(pid, fds[0], deadline);
  int wait_errno = errno;
  close(fds[0]);
  out->ms = runtime_now_ms() - t0;
  out->pid = (int)pid;
  int st = 0;
  if (runtime_finish(pid, &st) < 0 || ended < 0)
    return loom_diag_error(d, (loom_loc){0},
                           "cannot wait for child process %d: %s (is SIGCHLD "
                           "ignored?)",
                           (int)pid, strerror(ended < 0 ? wait_errno : errno));
  if (!ended) {
    out->kind = LOOM_RUNTIME_CHILD_TIMEOUT;
  } else if (WIFSIGNALED(st)) {
    out->kind = LOOM_RUNTIME_CHILD_SIGNAL;
    out->signal = WTERMSIG(st);
  } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
    out->kind = LOOM_RUNTIME_CHILD_EXIT;
    out->exit_code = WEXITSTATUS(st);
  } else {
    out->kind = LOOM_RUNTIME_CHILD_OK;
  }
  return LOOM_OK;
}

static const char *signal_name(int sig) {
  for (size_t i = 0; i < sizeof signal_names / sizeof *signal_names; i++)
    if (signal_names[i].sig == sig)
      return signal_names[i].name;
  return NULL;
}

const char *loom_runtime_child_describe(const loom_runtime_child_result *r,
                                        char *buf, size_t n) {
  if (!buf || n == 0)
    return buf;
  switch (r->kind) {
  case LOOM_RUNTIME_CHILD_OK:
    snprintf(buf, n, "ok");
    break;
  case LOOM_RUNTIME_CHILD_EXIT:
    snprintf(buf, n, "exited with %d", r->exit_code);
    break;
  case LOOM_RUNTIME_CHILD_SIGNAL: {
    const char *name = signal_name(r->signal);
    if (name)
      snprintf(buf, n, "killed by signal %d (%s)", r->signal, name);
    else
      snprintf(buf, n, "killed by signal %d", r->signal);
    break;
  }
  case LOOM_RUNTIME_CHILD_TIMEOUT:
    snprintf(buf, n, "timed out after %.0f ms", r->timeout_ms);
    break;
  default:
    snprintf(buf, n, "unknown outcome");
    break;
  }
  return buf;
}
