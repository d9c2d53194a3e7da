/* The conv2d pattern, case by case: each program's pair of nests (a
 * padding, then the convolution) or lone conv nest is taken with the
 * layout, extents, strides, dilations and padding it says, or refused with
 * the reason it says. The dispatch pass marks what it takes, the mark reads
 * back as the same convolution, and a marked function computes in the
 * interpreter what the program computes. */
#include "interp_compare.h"
#include "nests.h"
#include "loom/dispatch.h"

#include <string.h>

/* A convolution to write: NHWC/HWIO or NCHW/OIHW, with a pad nest when
 * is_padded (cond is its condition, with %d for lo_h, hi_h, lo_w, hi_w in
 * that order), an init of zero when has_init. */
typedef struct spec {
  bool is_nchw, is_padded, has_init;
  int n, c, h, w, k, r, s;        /* batch, input channels, input h and w, out channels, kernel */
  int sh, sw, dh, dw;
  int pt, pl, pb, pr;             /* the pad nest's zeros */
  const char *cond;               /* NULL: the usual one */
  const char *dtype;              /* NULL: float32 */
} spec;

static int out_ext(int in, int lo, int hi, int k, int d, int s) {
  return (in + lo + hi - (k - 1) * d - 1) / s + 1;
}

/* Writes the program; the layouts' index orders come from one table. */
static void program(char *buf, size_t len, const spec *p) {
  const char *dt = p->dtype ? p->dtype : "float32";
  int ph = p->h + p->pt + p->pb, pw = p->w + p->pl + p->pr;
  int oh = out_ext(p->h, p->pt, p->pb, p->r, p->dh, p->sh);
  int ow = out_ext(p->w, p->pl, p->pr, p->s, p->dw, p->sw);
  char xs[64], ps[64], ys[64], ws[64], pad_at[64], x_at[64], y_at[64], p_at[128], w_at[64];
  char cond[256];
  if (p->is_nchw) {
    snprintf(xs, sizeof xs, "(%d, %d, %d, %d)", p->n, p->c, p->h, p->w);
    snprintf(ps, sizeof ps, "(%d, %d, %d, %d)", p->n, p->c, ph, pw);
    snprintf(ys, sizeof ys, "(%d, %d, %d, %d)", p->n, p->k, oh, ow);
    snprintf(ws, sizeof ws, "(%d, %d, %d, %d)", p->k, p->c, p->r, p->s);
    snprintf(pad_at, sizeof pad_at, "vn, vc, vh, vw");
    snprintf(x_at, sizeof x_at, "vn, vc, vh - %d, vw - %d", p->pt, p->pl);
    snprintf(y_at, sizeof y_at, "vn, vco, vh, vw");
    snprintf(p_at, sizeof p_at, "vn, vci, vh * %d + vrh * %d, vw * %d + vrw * %d", p->sh, p->dh,
             p->sw, p->dw);
    snprintf(w_at, sizeof w_at, "vco, vci, vrh, vrw");
  } else {
    snprintf(xs, sizeof xs, "(%d, %d, %d, %d)", p->n, p->h, p->w, p->c);
    snprintf(ps, sizeof ps, "(%d, %d, %d, %d)", p->n, ph, pw, p->c);
    snprintf(ys, sizeof ys, "(%d, %d, %d, %d)", p->n, oh, ow, p->k);
    snprintf(ws, sizeof ws, "(%d, %d, %d, %d)", p->r, p->s, p->c, p->k);
    snprintf(pad_at, sizeof pad_at, "vn, vh, vw, vc");
    snprintf(x_at, sizeof x_at, "vn, vh - %d, vw - %d, vc", p->pt, p->pl);
    snprintf(y_at, sizeof y_at, "vn, vh, vw, vco");
    snprintf(p_at, sizeof p_at, "vn, vh * %d + vrh * %d, vw * %d + vrw * %d, vci", p->sh, p->dh,
             p->sw, p->dw);
    snprintf(w_at, sizeof w_at, "vrh, vrw, vci, vco");
  }
  snprintf(cond, sizeof cond,
           p->cond ? p->cond : "%d <= vh and vh < %d and %d <= vw and vw < %d", p->pt,
           p->pt + p->h, p->pl, p->pl + p->w);
  int n = snprintf(buf, len,
                   HEAD "def main(X: T.Buffer(%s, \"%s\"), W: T.Buffer(%s, \"%s\"), "
                        "Y: T.Buffer(%s, \"%s\")):\n",
                   xs, dt, ws, dt, ys, dt);
  const char *in = "X";
  if (p->is_padded) {
    n += snprintf(buf + n, len - n,
                  "    P = T.alloc_buffer(%s, \"%s\")\n"
                  "    for %s in T.grid%s:\n"
                  "        with T.block(\"pad\"):\n"
                  "            vn, %s = T.axis.remap(\"SSSS\", [n, %s])\n"
                  "            P[%s] = T.if_then_else(%s, X[%s], T.%s(0))\n",
                  ps, dt, p->is_nchw ? "n, c, h, w" : "n, h, w, c", ps,
                  p->is_nchw ? "vc, vh, vw" : "vh, vw, vc",
                  p->is_nchw ? "c, h, w" : "h, w, c", pad_at, cond, x_at, dt);
    in = "P";
  }
  char init[128] = "";
  if (p->has_init)
    snprintf(init, sizeof init,
             "            with T.init():\n                Y[%s] = T.%s(0)\n", y_at, dt);
  snprintf(buf + n, len - n,
           "    for n, h, w, co, rh, rw, ci in T.grid(%d, %d, %d, %d, %d, %d, %d):\n"
           "        with T.block(\"conv\"):\n"
           "            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap(\"SSSSRRR\", "
           "[n, h, w, co, rh, rw, ci])\n"
           "%s"
           "            Y[%s] = Y[%s] + %s[%s] * W[%s]\n",
           p->n, oh, ow, p->k, p->r, p->s, p->c, init, y_at, y_at, in, p_at, w_at);
}

static bool same_conv(const loom_conv *x, const loom_conv *y) {
  return x->is_nchw == y->is_nchw && x->n == y->n && x->ci == y->ci && x->co == y->co &&
         x->ih == y->ih && x->iw == y->iw && x->oh == y->oh && x->ow == y->ow &&
         x->kh == y->kh && x->kw == y->kw && !memcmp(x->stride, y->stride, sizeof x->stride) &&
         !memcmp(x->dilation, y->dilation, sizeof x->dilation) &&
         !memcmp(x->pad_lo, y->pad_lo, sizeof x->pad_lo) &&
         !memcmp(x->pad_hi, y->pad_hi, sizeof x->pad_hi) && x->beta == y->beta &&
         !strcmp(x->x->name, y->x->name) && !strcmp(x->w->name, y->w->name) &&
         !strcmp(x->y->name, y->y->name) && !x->pad == !y->pad;
}

/* p is taken with these figures: padding as oneDNN takes it (top, left,
 * bottom, right). */
static void check_taken(const spec *p, const int64_t padding[4]) {
  char text[4096];
  program(text, sizeof text, p);
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text);
  if (!f) {
    loom_arena_free(a);
    return;
  }
  const loom_stmt *pad, *conv;
  nests(f, &pad, &conv);
  loom_conv c;
  char why[256] = "";
  CHECK(loom_dispatch_match_conv(f, pad, conv, &c, why, sizeof why));
  if (why[0])
    fprintf(stderr, "refused: %s\n%s", why, text);
  CHECK(c.is_nchw == p->is_nchw && c.n == p->n && c.ci == p->c && c.co == p->k);
  CHECK(c.ih == p->h && c.iw == p->w && c.kh == p->r && c.kw == p->s);
  CHECK(c.oh == out_ext(p->h, p->pt, p->pb, p->r, p->dh, p->sh));
  CHECK(c.ow == out_ext(p->w, p->pl, p->pr, p->s, p->dw, p->sw));
  CHECK(c.stride[0] == p->sh && c.stride[1] == p->sw);
  CHECK(c.dilation[0] == p->dh && c.dilation[1] == p->dw);
  CHECK(c.pad_lo[0] == padding[0] && c.pad_lo[1] == padding[1]);
  CHECK(c.pad_hi[0] == padding[2] && c.pad_hi[1] == padding[3]);
  CHECK(c.beta == !p->has_init);
  CHECK_STREQ(c.x->name, "X");
  CHECK(p->is_padded ? c.pad && !strcmp(c.pad->name, "P") : !c.pad);
  const loom_func *marked;
  int n;
  CHECK(loom_dispatch_func(a, f, NULL, &marked, &n, why, sizeof why) == LOOM_OK && n == 1);
  CHECK_STREQ(why, "oneDNN");
  const loom_stmt *mpad, *mconv;
  nests(marked, &mpad, &mconv);
  loom_conv back;
  CHECK(loom_dispatch_marked_conv(marked, mconv, &back) && same_conv(&c, &back));
  CHECK(!loom_dispatch_marked_conv(f, conv, &back));
  loom_gemm g;
  CHECK(!loom_dispatch_marked_gemm(marked, mconv, &g));
  if (p->is_padded)
    CHECK(loom_ir_attr_get(mpad->u.loop.annotations, mpad->u.loop.n_annotations,
                           "loom.taken_by") != NULL);
  CHECK(interp_compare_results(f, marked, 1, false, true));
  loom_arena_free(a);
}

/* text is refused with reason, and the pass leaves it as it is. */
static void check_refused_text(const char *text, const char *reason) {
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text);
  if (f) {
    const loom_stmt *pad, *conv;
    nests(f, &pad, &conv);
    loom_conv c;
    char why[256] = "";
    CHECK(!loom_dispatch_match_conv(f, pad, conv, &c, why, sizeof why));
    CHECK_CONTAINS(why, reason);
    const loom_func *same;
    int n = -1;
    why[0] = 0;
    CHECK(loom_dispatch_func(a, f, NULL, &same, &n, why, sizeof why) == LOOM_OK);
    CHECK(n == 0 && same == f);
    CHECK_CONTAINS(why, reason);
  }
  loom_arena_free(a);
}

static void check_refused(const spec *p, const char *reason) {
  char text[4096];
  program(text, sizeof text, p);
  check_refused_text(text, reason);
}

/* text with the first from replaced by to. */
static void edit(char *text, size_t len, const char *from, const char *to) {
  char *at = strstr(text, from);
  CHECK(at != NULL);
  if (!at)
    return;
  char tail[4096];
  snprintf(tail, sizeof tail, "%s", at + strlen(from));
  snprintf(at, len - (size_t)(at - text), "%s%s", to, tail);
}

/* ---- the nests after the conv (loom_dispatch_match_conv_post) ---------------- */

/* A conv (NHWC, from zero) then a bias, a residual and a ReLU, as a
 * network's fused function has them. */
static const char post_text[] =
    HEAD "def main(X: T.Buffer((1, 6, 6, 4), \"float32\"), W: T.Buffer((3, 3, 4, 8), \"float32\"),\n"
    "         B: T.Buffer((8,), \"float32\"), R: T.Buffer((1, 4, 4, 8), \"float32\"),\n"
    "         Z: T.Buffer((1, 4, 4, 8), \"float32\")):\n"
    "    Y = T.alloc_buffer((1, 4, 4, 8))\n"
    "    Yb = T.alloc_buffer((1, 4, 4, 8))\n"
    "    Ys = T.alloc_buffer((1, 4, 4, 8))\n"
    "    for n, h, w, co, rh, rw, ci in T.grid(1, 4, 4, 8, 3, 3, 4):\n"
    "        with T.block(\"conv\"):\n"
    "            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap(\"SSSSRRR\", [n, h, w, co, rh, rw, ci])\n"
    "            with T.init():\n"
    "                Y[vn, vh, vw, vco] = T.float32(0)\n"
    "            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]\n"
    "    for n, h, w, c in T.grid(1, 4, 4, 8):\n"
    "        with T.block(\"bias\"):\n"
    "            vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
    "            Yb[vn, vh, vw, vc] = Y[vn, vh, vw, vc] + B[vc]\n"
    "    for n, h, w, c in T.grid(1, 4, 4, 8):\n"
    "        with T.block(\"add\"):\n"
    "            vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
    "            Ys[vn, vh, vw, vc] = R[vn, vh, vw, vc] + Yb[vn, vh, vw, vc]\n"
    "    for n, h, w, c in T.grid(1, 4, 4, 8):\n"
    "        with T.block(\"relu\"):\n"
    "            vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
    "            Z[vn, vh, vw, vc] = T.max(Ys[vn, vh, vw, vc], T.float32(0))\n";

/* text's conv takes want of the nests after it (the bias counted), the
 * last storing `out`; with all three, the mark reads back the same and
 * the marked function computes what text does. */
static void check_post(const char *text, int want, const char *out) {
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text);
  if (!f) {
    loom_arena_free(a);
    return;
  }
  const loom_stmt *nest[4] = {top(f, 0), top(f, 1), top(f, 2), top(f, 3)};
  loom_conv c;
  char why[256] = "";
  CHECK(loom_dispatch_match_conv(f, NULL, nest[0], &c, why, sizeof why));
  int k = loom_dispatch_match_conv_post(f, nest, 4, &c);
  CHECK(k == want);
  CHECK(want == 0 ? !c.out : c.out && !strcmp(c.out->name, out));
  if (want == 3) {
    CHECK(c.bias && !strcmp(c.bias->name, "B") && c.n_post == 2);
    CHECK(c.post[0].kind == LOOM_CONV_POST_ADD && !strcmp(c.post[0].src->name, "R"));
    CHECK(c.post[1].kind == LOOM_CONV_POST_RELU && !c.post[1].src);
    const loom_func *marked;
    int n;
    CHECK(loom_dispatch_func(a, f, NULL, &marked, &n, why, sizeof why) == LOOM_OK && n == 1);
    loom_conv back;
    CHECK(loom_dispatch_marked_conv(marked, top(marked, 0), &back) && same_conv(&c, &back));
    CHECK(back.bias && !strcmp(back.bias->name, "B") && back.n_post == 2 &&
          back.post[0].kind == LOOM_CONV_POST_ADD && !strcmp(back.post[0].src->name, "R") &&
          back.post[1].kind == LOOM_CONV_POST_RELU && !strcmp(back.out->name, "Z"));
    for (int i = 1; i < 4; i++)
      CHECK(loom_ir_attr_get(top(marked, i)->u.loop.annotations,
                             top(marked, i)->u.loop.n_annotations, "loom.taken_by") != NULL);
    CHECK(interp_compare_results(f, marked, 1, false, true));
  }
  loom_arena_free(a);
}

static void test_post(void) {
  char text[4096];
  check_post(post_text, 3, "Z");
  /* Where the chain stops. A bias after an addition: oneDNN adds its bias
   * first. */
  snprintf(text, sizeof text, "%s", post_text);
  edit(text, sizeof text, "Yb[vn, vh, vw, vc] = Y[vn, vh, vw, vc] + B[vc]",
       "Yb[vn, vh, vw, vc] = Y[vn, vh, vw, vc] + R[vn, vh, vw, vc]");
  edit(text, sizeof text, "Ys[vn, vh, vw, vc] = R[vn, vh, vw, vc] + Yb[vn, vh, vw, vc]",
       "Ys[vn, vh, vw, vc] = Yb[vn, vh, vw, vc] + B[vc]");
  check_post(text, 1, "Yb");
  /* An intermediate read by another nest too (the ReLU reads Yb). */
  snprintf(text, sizeof text, "%s", post_text);
  edit(text, sizeof text, "T.max(Ys[vn, vh, vw, vc], T.float32(0))",
       "T.max(Ys[vn, vh, vw, vc], Yb[vn, vh, vw, vc])");
  check_post(text, 1, "Yb");
  /* A max with something other than zero. */
  snprintf(text, sizeof text, "%s", post_text);
  edit(text, sizeof text, "T.max(Ys[vn, vh, vw, vc], T.float32(0))",
       "T.max(Ys[vn, vh, vw, vc], T.float32(1))");
  check_post(text, 2, "Ys");
  /* The conv's output a parameter: the call would leave it unwritten. */
  snprintf(text, sizeof text, "%s", post_text);
  edit(text, sizeof text, "    Y = T.alloc_buffer((1, 4, 4, 8))\n", "");
  edit(text, sizeof text, "Z: T.Buffer((1, 4, 4, 8), \"float32\")):",
       "Z: T.Buffer((1, 4, 4, 8), \"float32\"), Y: T.Buffer((1, 4, 4, 8), \"float32\")):");
  check_post(text, 0, NULL);
  /* A conv that accumulates (no init): oneDNN's sum post-op would come first. */
  snprintf(text, sizeof text, "%s", post_text);
  edit(text, sizeof text, "            with T.init():\n                Y[vn, vh, vw, vco] = T.float32(0)\n",
       "");
  check_post(text, 0, NULL);
  /* A bias along another axis. */
  snprintf(text, sizeof text, "%s", post_text);
  edit(text, sizeof text, "B: T.Buffer((8,)", "B: T.Buffer((4,)");
  edit(text, sizeof text, "+ B[vc]", "+ B[vh]");
  check_post(text, 0, NULL);
}

int main(void) {
  /* NHWC, padded by 1 all round: the corpus's shape, smaller. */
  spec nhwc = {.n = 1, .c = 8, .h = 10, .w = 10, .k = 16, .r = 3, .s = 3, .sh = 1, .sw = 1,
               .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .is_padded = true,
               .has_init = true};
  check_taken(&nhwc, (int64_t[]){1, 1, 1, 1});
  /* NCHW, no pad nest, stride 2, batch 2: the stride drops the last row. */
  spec nchw = {.is_nchw = true, .n = 2, .c = 4, .h = 11, .w = 9, .k = 6, .r = 3, .s = 3,
               .sh = 2, .sw = 2, .dh = 1, .dw = 1, .has_init = true};
  check_taken(&nchw, (int64_t[]){0, 0, 0, 0});
  /* Uneven padding, strides and dilations per axis, accumulating. */
  spec odd = nhwc;
  odd.pt = 2, odd.pl = 0, odd.pb = 1, odd.pr = 3;
  odd.sh = 2, odd.sw = 1, odd.dh = 2, odd.dw = 3, odd.r = 3, odd.s = 2;
  odd.has_init = false;
  check_taken(&odd, (int64_t[]){2, 0, 1, 3});
  /* Padding the stride never reaches: oneDNN is given only what is read. */
  spec skip = nchw;
  skip.is_padded = true;
  skip.h = 10, skip.w = 10, skip.pt = 1, skip.pl = 1, skip.pb = 1, skip.pr = 1;
  check_taken(&skip, (int64_t[]){1, 1, 0, 0});
  /* The condition's terms in another order, T.likely, >= and >. */
  spec likely = nhwc;
  likely.cond = "T.likely(vw < %4$d and %3$d <= vw) and T.likely(vh >= %1$d) and %2$d > vh";
  check_taken(&likely, (int64_t[]){1, 1, 1, 1});
  /* Padding on one side only, one term missing. */
  spec one_side = nhwc;
  one_side.pt = 0, one_side.pb = 2;
  one_side.cond = "vh < %2$d and %3$d <= vw and vw < %4$d";
  check_taken(&one_side, (int64_t[]){0, 1, 2, 1});

  /* Refusals. */
  spec f16 = nhwc;
  f16.dtype = "float16";
  check_refused(&f16, "is not float32 throughout");
  spec f64 = nchw;
  f64.dtype = "float64";
  check_refused(&f64, "is not float32 throughout");
  char text[4096];
  /* Another nest reads the padding too. */
  program(text, sizeof text, &nhwc);
  edit(text, sizeof text, "\"float32\")):\n",
       "\"float32\"), Z: T.Buffer((1, 12, 12, 8), \"float32\")):\n");
  size_t len = strlen(text);
  snprintf(text + len, sizeof text - len,
           "    for n, h, w, c in T.grid(1, 12, 12, 8):\n"
           "        with T.block(\"copy\"):\n"
           "            vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
           "            Z[vn, vh, vw, vc] = P[vn, vh, vw, vc]\n");
  {
    loom_arena *a = loom_arena_new();
    const loom_func *f = read_one(a, text);
    loom_conv c;
    char why[256] = "";
    CHECK(f && !loom_dispatch_match_conv(f, top(f, 0), top(f, 1), &c, why, sizeof why));
    CHECK_CONTAINS(why, "the padded 'P' is read or written by another nest too");
    loom_arena_free(a);
  }
  /* A pad of something other than zero. */
  program(text, sizeof text, &nhwc);
  edit(text, sizeof text, "T.float32(0))", "T.float32(1))");
  check_refused_text(text, "pads with something other than zero");
  /* A pad along the channels. */
  program(text, sizeof text, &nhwc);
  edit(text, sizeof text, "1 <= vh and", "1 <= vc and 1 <= vh and");
  check_refused_text(text, "does not pad along h and w alone");
  /* An epilogue in the block: Y = max(Y + P W, 0). */
  program(text, sizeof text, &nhwc);
  edit(text, sizeof text, "= Y[vn, vh, vw, vco] + P[vn, vh * 1 + vrh * 1, vw * 1 + vrw * 1, vci] "
                          "* W[vrh, vrw, vci, vco]",
       "= T.max(Y[vn, vh, vw, vco] + P[vn, vh * 1 + vrh * 1, vw * 1 + vrw * 1, vci] "
       "* W[vrh, vrw, vci, vco], T.float32(0))");
  check_refused_text(text, "does not add a product to Y");
  /* Groups: the input channel from the output's. */
  program(text, sizeof text, &nhwc);
  edit(text, sizeof text, "W: T.Buffer((3, 3, 8, 16)", "W: T.Buffer((3, 3, 4, 16)");
  edit(text, sizeof text, "T.grid(1, 10, 10, 16, 3, 3, 8)", "T.grid(1, 10, 10, 16, 3, 3, 4)");
  edit(text, sizeof text, "vw * 1 + vrw * 1, vci]", "vw * 1 + vrw * 1, vco // 8 * 4 + vci]");
  check_refused_text(text, "convolves in groups");
  /* A buffer with strides. */
  program(text, sizeof text, &nchw);
  edit(text, sizeof text, "W: T.Buffer((6, 4, 3, 3), \"float32\")",
       "W: T.Buffer((6, 4, 3, 3), \"float32\", strides=(64, 16, 4, 1))");
  check_refused_text(text, "does not cover whole compact global buffers");
  /* Weights in another layout (OHWI). */
  program(text, sizeof text, &nhwc);
  edit(text, sizeof text, "W: T.Buffer((3, 3, 8, 16)", "W: T.Buffer((16, 3, 3, 8)");
  edit(text, sizeof text, "W[vrh, vrw, vci, vco]", "W[vco, vrh, vrw, vci]");
  check_refused_text(text, "does not compute Y[n, h, w, co] +=");
  /* An init of one. */
  program(text, sizeof text, &nchw);
  edit(text, sizeof text, "= T.float32(0)", "= T.float32(1)");
  check_refused_text(text, "starts Y from something other than zero");
  /* Only a part of the output oneDNN would compute. */
  program(text, sizeof text, &nchw);
  edit(text, sizeof text, "Y: T.Buffer((2, 6, 5, 4)", "Y: T.Buffer((2, 6, 4, 4)");
  edit(text, sizeof text, "T.grid(2, 5, 4,", "T.grid(2, 4, 4,");
  check_refused_text(text, "computes a part of the convolution");
  /* The padded buffer is the function's output: the call cannot skip it. */
  program(text, sizeof text, &nhwc);
  edit(text, sizeof text, "    P = T.alloc_buffer((1, 12, 12, 8), \"float32\")\n", "");
  edit(text, sizeof text, "\"float32\")):\n", "\"float32\"), P: T.Buffer((1, 12, 12, 8), "
                                             "\"float32\")):\n");
  check_refused_text(text, "the padded 'P' is a parameter");
  /* A gemm beside a conv: both taken, the pass says by whom. */
  {
    program(text, sizeof text, &nchw);
    edit(text, sizeof text, "\"float32\")):\n",
         "\"float32\"), A: T.Buffer((8, 4), \"float32\"), B: T.Buffer((4, 8), \"float32\"), "
         "C: T.Buffer((8, 8), \"float32\")):\n");
    len = strlen(text);
    snprintf(text + len, sizeof text - len,
             "    for i, j, k in T.grid(8, 8, 4):\n"
             "        with T.block(\"C\"):\n"
             "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
             "            with T.init():\n"
             "                C[vi, vj] = T.float32(0)\n"
             "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
    loom_arena *a = loom_arena_new();
    const loom_func *f = read_one(a, text), *marked;
    int n = 0;
    char why[256] = "";
    CHECK(f && loom_dispatch_func(a, f, NULL, &marked, &n, why, sizeof why) == LOOM_OK && n == 2);
    CHECK_STREQ(why, "BLAS and oneDNN");
    loom_arena_free(a);
  }
  test_post();
  return test_summary("dispatch/conv");
}
