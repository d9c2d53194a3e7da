/* What the runtime's files share and no caller needs. */
#ifndef LOOM_RUNTIME_IMPL_H
#define LOOM_RUNTIME_IMPL_H

#include "loom/runtime.h"

/* Milliseconds on CLOCK_MONOTONIC from an arbitrary origin. */
double runtime_now_ms(void);

#endif
