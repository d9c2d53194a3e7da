/* What the runtime's files share and no caller needs. */
#ifndef LOOM_RUNTIME_IMPL_H
#define LOOM_RUNTIME_IMPL_H

#include "loom/runtime.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

/* Milliseconds on CLOCK_MONOTONIC from an arbitrary origin. */
double runtime_now_ms(void);

/* Waits until child pid ends or runtime_now_ms() passes deadline (<= 0: no
 * deadline), leaving it unreaped. read_end (-1: none) is the read end of a
 * pipe whose only write end the child holds; it wakes the wait as soon as
 * the child exits. Returns 1 when it ended, 0 at the deadline, -1 when pid
 * cannot be waited for (errno tells). */
int runtime_wait_end(pid_t pid, int read_end, double deadline);

/* Kills the process group led by pid, whatever is left of it, then reaps
 * pid into *status. Returns -1 when pid cannot be reaped (errno tells). */
int runtime_finish(pid_t pid, int *status);

#endif
