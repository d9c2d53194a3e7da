/* Foundations every module uses: arenas, growable byte buffers, status codes
 * and diagnostics. Nothing here touches global state; each object is owned by
 * whoever created it. */
#ifndef LOOM_BASE_H
#define LOOM_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Ownership markers, in isl's manner: a parameter marked LOOM_TAKE is consumed,
 * a return value marked LOOM_GIVE is owned by the caller, LOOM_KEEP is borrowed. */
#define LOOM_TAKE
#define LOOM_GIVE
#define LOOM_KEEP

/* Marks a declaration of the public API. libloom is built with
 * -fvisibility=hidden: what a module shares with another module stays inside
 * the library, and the shared library exports these and nothing else. */
#if defined(__GNUC__)
#define LOOM_API __attribute__((visibility("default")))
#else
#define LOOM_API
#endif

/* Every fallible function returns a status; details go into a loom_diag. */
typedef enum {
  LOOM_OK = 0,
  LOOM_ERROR = 1, /* user error: bad input, illegal request */
  LOOM_NOMEM = 2, /* allocation failed */
} loom_status;

/* Propagates a failing status to the caller. The only control-flow macro. */
#define TRY(expr)                                                              \
  do {                                                                         \
    loom_status try_status_ = (expr);                                          \
    if (try_status_ != LOOM_OK)                                                \
      return try_status_;                                                      \
  } while (0)

/* ---- arena ---------------------------------------------------------------
 * Bump allocator. Freeing is dropping the arena; nothing inside is freed alone.
 * An allocation that fails returns NULL and marks the arena failed, so a
 * builder may run on and check loom_arena_status() once at its boundary; IR
 * constructors return NULL when given NULL, so failure flows upward. */
typedef struct loom_arena loom_arena;

LOOM_API LOOM_GIVE loom_arena *loom_arena_new(void);
LOOM_API void loom_arena_free(LOOM_TAKE loom_arena *a);
LOOM_API void *loom_arena_alloc(loom_arena *a,
                                size_t size); /* zeroed, 16-aligned */
LOOM_API char *loom_arena_strndup(loom_arena *a, const char *s, size_t n);
LOOM_API char *loom_arena_strdup(loom_arena *a, const char *s);
LOOM_API char *loom_arena_printf(loom_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Copies an array of n pointers into the arena. */
LOOM_API void *loom_arena_dup(loom_arena *a, const void *p, size_t size);
LOOM_API loom_status loom_arena_status(const loom_arena *a);
LOOM_API size_t loom_arena_bytes(const loom_arena *a);

/* Fault injection for tests: the n-th successful-so-far allocation of any
 * arena or buffer made with this hook active fails (0 disables). The counter
 * lives in the hook object the caller owns, not in a global. */
typedef struct loom_faultsim {
  long fail_at;   /* 1-based index of the allocation to fail; 0 = never */
  long count;     /* allocations seen so far */
} loom_faultsim;
LOOM_API void loom_arena_set_faultsim(loom_arena *a, loom_faultsim *fs);

/* ---- growable buffer -----------------------------------------------------
 * A heap string builder for printers and messages. On allocation failure
 * it sets has_failed and further appends do nothing. */
typedef struct loom_buf {
  char *data;      /* always NUL-terminated when len > 0 or cap > 0 */
  size_t len, cap;
  int has_failed;
} loom_buf;

LOOM_API void loom_buf_init(loom_buf *b);
LOOM_API void loom_buf_free(loom_buf *b);
LOOM_API void loom_buf_putn(loom_buf *b, const char *s, size_t n);
LOOM_API void loom_buf_puts(loom_buf *b, const char *s);
LOOM_API void loom_buf_putc(loom_buf *b, char c);
LOOM_API void loom_buf_printf(loom_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
LOOM_API void loom_buf_vprintf(loom_buf *b, const char *fmt, va_list ap);
/* Detaches the text; the caller frees it with free(). */
LOOM_API LOOM_GIVE char *loom_buf_take(loom_buf *b);

/* ---- pointer maps ----------------------------------------------------------
 * A small open-addressing hash map from pointers to non-negative ints, for
 * walkers that number or pair nodes by identity (equality, hashing, the
 * verifier, lowering). Linear probing over a power-of-two table kept at most
 * half full. Keys are never removed, only cleared all at once. Pointer values
 * decide where a key sits in the table and nothing else: no result a walker
 * derives from the map depends on addresses. A zeroed struct is an empty
 * map. */
typedef struct loom_ptrmap {
  const void **keys; /* NULL marks an empty slot */
  int *vals;
  size_t cap, len;
} loom_ptrmap;

LOOM_API void loom_ptrmap_init(loom_ptrmap *m);
LOOM_API void loom_ptrmap_free(loom_ptrmap *m);
/* Empties the map and keeps its storage for reuse. */
LOOM_API void loom_ptrmap_clear(loom_ptrmap *m);
/* The value stored for key, or -1 when the key is absent. */
LOOM_API int loom_ptrmap_get(const loom_ptrmap *m, const void *key);
/* Stores key -> val (val >= 0), replacing an earlier value. key is not NULL.
 * Returns LOOM_NOMEM, with the map unchanged, when the table cannot grow. */
LOOM_API loom_status loom_ptrmap_put(loom_ptrmap *m, const void *key,
                                     int val);

/* ---- source locations and diagnostics ------------------------------------ */

/* A place in a source text. line and col are 1-based; 0 means unknown. */
typedef struct loom_loc {
  const char *file;
  int line, col;
} loom_loc;

typedef struct loom_note {
  loom_loc loc;
  char *msg;
} loom_note;

/* The first error of an operation, with notes that explain it. Later errors
 * are dropped: the first is the one that points at the cause.
 * `source` (borrowed) is the text the locations point into, used to show the
 * offending line with a caret. */
typedef struct loom_diag {
  int has_error;
  loom_loc loc;
  char *msg;
  loom_note *notes;
  int n_notes;
  const char *source;
  size_t source_len;
} loom_diag;

LOOM_API void loom_diag_init(loom_diag *d);
LOOM_API void loom_diag_free(loom_diag *d);
LOOM_API void loom_diag_set_source(loom_diag *d, const char *text, size_t len);
/* Records an error (ignored if one is already recorded); returns LOOM_ERROR so
 * callers can write `return loom_diag_error(d, loc, "...")`. */
LOOM_API loom_status loom_diag_error(loom_diag *d, loom_loc loc,
                                     const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
LOOM_API loom_status loom_diag_verror(loom_diag *d, loom_loc loc,
                                      const char *fmt, va_list ap);
/* Adds a note to the recorded error. */
LOOM_API void loom_diag_note(loom_diag *d, loom_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Renders compiler style into buf:
 *   FILE:LINE:COL: error: MESSAGE
 *     source line
 *         ^
 *   FILE:LINE:COL: note: ...                                              */
LOOM_API void loom_diag_render(const loom_diag *d, loom_buf *out);

/* ---- random numbers --------------------------------------------------------
 * One explicit generator per schedule, search or fill (xoshiro256** seeded
 * through splitmix64): the same seed gives the same stream on every machine
 * and build. There is no global generator. */
typedef struct loom_rng {
  uint64_t s[4];
} loom_rng;

LOOM_API void loom_rng_seed(loom_rng *r, uint64_t seed);
LOOM_API uint64_t loom_rng_next(loom_rng *r);
/* Uniform in [0, n) without modulo bias; n > 0. */
LOOM_API uint64_t loom_rng_below(loom_rng *r, uint64_t n);
/* Uniform in [0, 1) with 53 random bits. */
LOOM_API double loom_rng_double(loom_rng *r);

/* ---- JSON -----------------------------------------------------------------
 * Values read from text into an arena, each located where it starts. */
typedef enum {
  LOOM_JSON_NULL,
  LOOM_JSON_BOOL,  /* i: 0 or 1 */
  LOOM_JSON_INT,   /* i */
  LOOM_JSON_FLOAT, /* f */
  LOOM_JSON_STR,   /* s, decoded, NUL-terminated */
  LOOM_JSON_LIST,  /* items[0..n) */
  LOOM_JSON_DICT,  /* keys[0..n), items[0..n) */
} loom_json_kind;

typedef struct loom_json {
  loom_json_kind kind;
  int64_t i;
  double f;
  const char *s;
  struct loom_json *items;
  const char **keys;
  int n;
  loom_loc loc;
} loom_json;

/* Reads one JSON value filling all of text[0..len); `file` names it in
 * diagnostics, which carry line:col. */
LOOM_API loom_status loom_json_parse(loom_arena *a, const char *text,
                                     size_t len, const char *file,
                                     loom_json *out, loom_diag *d);
/* Appends v as compact JSON (", " and ": " between items); reading it back
 * gives an equal value. */
LOOM_API void loom_json_print(const loom_json *v, loom_buf *out);
/* Appends s as a JSON string literal. */
LOOM_API void loom_json_print_str(const char *s, loom_buf *out);

/* ---- files ---------------------------------------------------------------- */

/* Reads a whole file. On failure fills d (no location) and returns an error. */
LOOM_API loom_status loom_read_file(const char *path, LOOM_GIVE char **text,
                                    size_t *len, loom_diag *d);

#endif
