/* Growable heap strings for printers and messages. A failed allocation
 * poisons the buffer instead of aborting; the owner checks has_failed once. */
#include "loom/base.h"

#include <stdlib.h>
#include <string.h>

void loom_buf_init(loom_buf *b) { memset(b, 0, sizeof *b); }

void loom_buf_free(loom_buf *b) {
  free(b->data);
  loom_buf_init(b);
}

static int reserve(loom_buf *b, size_t extra) {
  if (b->has_failed)
    return 0;
  if (b->len + extra + 1 <= b->cap)
    return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->has_failed = 1;
    return 0;
  }
  b->data = p;
  b->cap = cap;
  return 1;
}

void loom_buf_putn(loom_buf *b, const char *s, size_t n) {
  if (!reserve(b, n))
    return;
  if (n > 0) /* s may be NULL then: an empty buffer from a library */
    memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void loom_buf_puts(loom_buf *b, const char *s) { loom_buf_putn(b, s, strlen(s)); }

void loom_buf_putc(loom_buf *b, char c) { loom_buf_putn(b, &c, 1); }

void loom_buf_vprintf(loom_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n >= 0 && reserve(b, (size_t)n)) {
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
  }
  va_end(ap2);
}

void loom_buf_printf(loom_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  loom_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *loom_buf_take(loom_buf *b) {
  char *p = b->data;
  if (!p)
    p = calloc(1, 1);
  loom_buf_init(b);
  return p;
}
