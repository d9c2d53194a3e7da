/* The max-pool pattern: a padding nest and the pool, or a lone pool nest,
 * taken with the layout, extents, strides and padding they say, or refused
 * with the reason; the mark reads back as the same pool, and the marked
 * function computes in the interpreter what the program computes. */
#include "interp_compare.h"
#include "nests.h"
#include "loom/dispatch.h"

#include <string.h>

#define LOWEST "T.float32(-340282346638528859811704183484516925440.0)"

/* ResNet's pool as the ONNX importer writes it channels-last: 3x3, stride
 * 2, padded by one with the lowest float32. */
static const char nhwc_text[] =
    HEAD "def main(A: T.Buffer((1, 8, 8, 4), \"float32\"), Y: T.Buffer((1, 4, 4, 4), \"float32\")):\n"
    "    P = T.alloc_buffer((1, 10, 10, 4))\n"
    "    for i0, i1, i2, i3 in T.grid(1, 10, 10, 4):\n"
    "        with T.block(\"pad\"):\n"
    "            v0, v1, v2, v3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "            P[v0, v1, v2, v3] = T.if_then_else(1 <= v1 and v1 < 9 and (1 <= v2 and v2 < 9), "
    "A[v0, v1 - 1, v2 - 1, v3], " LOWEST ")\n"
    "    for i0, i1, i2, i3, r0, r1 in T.grid(1, 4, 4, 4, 3, 3):\n"
    "        with T.block(\"pool\"):\n"
    "            v0, v1, v2, v3, vr0, vr1 = T.axis.remap(\"SSSSRR\", [i0, i1, i2, i3, r0, r1])\n"
    "            with T.init():\n"
    "                Y[v0, v1, v2, v3] = " LOWEST "\n"
    "            Y[v0, v1, v2, v3] = T.max(Y[v0, v1, v2, v3], P[v0, v1 * 2 + vr0, v2 * 2 + vr1, v3])\n";

/* NCHW, unpadded, 2x2 with stride 2, a batch of 2, the maximum the other
 * way round. */
static const char nchw_text[] =
    HEAD "def main(A: T.Buffer((2, 3, 6, 6), \"float32\"), Y: T.Buffer((2, 3, 3, 3), \"float32\")):\n"
    "    for n, c, h, w, r0, r1 in T.grid(2, 3, 3, 3, 2, 2):\n"
    "        with T.block(\"pool\"):\n"
    "            vn, vc, vh, vw, vr0, vr1 = T.axis.remap(\"SSSSRR\", [n, c, h, w, r0, r1])\n"
    "            with T.init():\n"
    "                Y[vn, vc, vh, vw] = " LOWEST "\n"
    "            Y[vn, vc, vh, vw] = T.max(A[vn, vc, vh * 2 + vr0, vw * 2 + vr1], Y[vn, vc, vh, vw])\n";

static bool same_pool(const loom_pool *x, const loom_pool *y) {
  return x->is_nchw == y->is_nchw && x->n == y->n && x->c == y->c && x->ih == y->ih &&
         x->iw == y->iw && x->oh == y->oh && x->ow == y->ow && x->kh == y->kh &&
         x->kw == y->kw && !memcmp(x->stride, y->stride, sizeof x->stride) &&
         !memcmp(x->dilation, y->dilation, sizeof x->dilation) &&
         !memcmp(x->pad_lo, y->pad_lo, sizeof x->pad_lo) &&
         !memcmp(x->pad_hi, y->pad_hi, sizeof x->pad_hi) && x->x == y->x && x->y == y->y &&
         x->pad == y->pad;
}

/* text is taken: want holds n, c, ih, iw, oh, ow, k, stride, pad lo, pad hi. */
static void check_taken(const char *text, bool is_nchw, const int64_t want[10]) {
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text);
  if (!f) {
    loom_arena_free(a);
    return;
  }
  const loom_stmt *pad, *pool;
  nests(f, &pad, &pool);
  loom_pool p;
  char why[256] = "";
  CHECK(loom_dispatch_match_pool(f, pad, pool, &p, why, sizeof why));
  if (why[0])
    fprintf(stderr, "refused: %s\n", why);
  CHECK(p.is_nchw == is_nchw && p.n == want[0] && p.c == want[1] && p.ih == want[2] &&
        p.iw == want[3] && p.oh == want[4] && p.ow == want[5] && p.kh == want[6] &&
        p.kw == want[6] && p.stride[0] == want[7] && p.stride[1] == want[7] &&
        p.dilation[0] == 1 && p.pad_lo[0] == want[8] && p.pad_lo[1] == want[8] &&
        p.pad_hi[0] == want[9] && p.pad_hi[1] == want[9]);
  CHECK_STREQ(p.x->name, "A");
  CHECK(pad ? p.pad && !strcmp(p.pad->name, "P") : !p.pad);
  const loom_func *marked;
  int n;
  CHECK(loom_dispatch_func(a, f, NULL, &marked, &n, why, sizeof why) == LOOM_OK && n == 1);
  CHECK_STREQ(why, "oneDNN");
  const loom_stmt *mpad, *mpool;
  nests(marked, &mpad, &mpool);
  loom_pool back;
  loom_conv conv;
  CHECK(loom_dispatch_marked_pool(marked, mpool, &back));
  CHECK(back.x && back.y && !strcmp(back.x->name, p.x->name) && !strcmp(back.y->name, "Y"));
  back.x = p.x, back.y = p.y, back.pad = back.pad ? p.pad : NULL;
  CHECK(same_pool(&p, &back));
  CHECK(!loom_dispatch_marked_pool(f, pool, &back));
  CHECK(!loom_dispatch_marked_conv(marked, mpool, &conv));
  if (pad)
    CHECK(loom_ir_attr_get(mpad->u.loop.annotations, mpad->u.loop.n_annotations,
                           "loom.taken_by") != NULL);
  CHECK(interp_compare_results(f, marked, 1, false, true));
  loom_arena_free(a);
}

/* text with its first `from` replaced by `to`, refused with reason. */
static void check_refused(const char *text, const char *from, const char *to,
                          const char *reason) {
  char buf[4096];
  const char *at = strstr(text, from);
  CHECK(at != NULL);
  if (!at)
    return;
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, buf);
  if (f) {
    const loom_stmt *pad, *pool;
    nests(f, &pad, &pool);
    loom_pool p;
    char why[256] = "";
    CHECK(!loom_dispatch_match_pool(f, pad, pool, &p, why, sizeof why));
    CHECK_CONTAINS(why, reason);
  }
  loom_arena_free(a);
}

int main(void) {
  check_taken(nhwc_text, false, (int64_t[]){1, 4, 8, 8, 4, 4, 3, 2, 1, 0});
  check_taken(nchw_text, true, (int64_t[]){2, 3, 6, 6, 3, 3, 2, 2, 0, 0});
  check_refused(nhwc_text, "A[v0, v1 - 1, v2 - 1, v3], " LOWEST,
                "A[v0, v1 - 1, v2 - 1, v3], T.float32(0)",
                "block 'pad' pads with something other than the lowest float32");
  check_refused(nchw_text, "Y[vn, vc, vh, vw] = " LOWEST, "Y[vn, vc, vh, vw] = T.float32(0)",
                "does not compute Y = max(Y, P[...]) from the lowest float32");
  check_refused(nchw_text, "T.max(A[vn, vc, vh * 2 + vr0, vw * 2 + vr1], Y[vn, vc, vh, vw])",
                "A[vn, vc, vh * 2 + vr0, vw * 2 + vr1] + Y[vn, vc, vh, vw]",
                "does not take a maximum into Y");
  check_refused(nchw_text, "vh * 2 + vr0, vw * 2 + vr1", "vh * 2 + vr0, vw * 2 + vr0",
                "does not pool P[n, h*sh + rh*dh, w*sw + rw*dw, c]");
  return test_summary("dispatch/pool");
}
