/* Waiting for a child process under a deadline without a busy loop and
 * without reaping it, so that its process group can still be killed safely
 * (a zombie's pid, and so its group id, cannot be reused). */
#define _DEFAULT_SOURCE
#include "runtime/runtime_impl.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <time.h>

/* A pipe's write end held by the child may also be held by processes it
 * started, which keep the pipe open after the child ends; so the pipe only
 * wakes the wait early, and the child's state is checked at least this
 * often (milliseconds). */
#define MAX_POLL_MS 50

/* 1 when pid has ended (left a zombie), 0 when not, -1 on error. */
static int has_ended(pid_t pid) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno == EINTR ? 0 : -1;
  return si.si_pid == pid;
}

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
  nanosleep(&ts, NULL);
}

int runtime_wait_end(pid_t pid, int read_end, double deadline) {
  bool use_pipe = read_end >= 0;
  double nap = 0.05;
  for (;;) {
    int ended = has_ended(pid);
    if (ended != 0)
      return ended;
    double left = deadline > 0 ? deadline - runtime_now_ms() : MAX_POLL_MS;
    if (left <= 0)
      return 0;
    if (use_pipe) {
      struct pollfd p = {.fd = read_end, .events = POLLIN};
      int ms = left < MAX_POLL_MS ? (int)ceil(left) : MAX_POLL_MS;
      /* Readable or hung up: the child is exiting, or closed its end. */
      if (poll(&p, 1, ms) > 0)
        use_pipe = false;
    } else {
      sleep_ms(left < nap ? left : nap);
      nap = nap < 2 ? nap * 2 : 2;
    }
  }
}

int runtime_finish(pid_t pid, int *status) {
  kill(-pid, SIGKILL);
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return 0;
}
