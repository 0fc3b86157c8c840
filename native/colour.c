// OpenCV's integer colour conversions (cv2.cvtColor) of host images in C, on the native threads (pool.h): RGB(A) →
// gray (COLOR_RGB2GRAY, 15-bit weights), RGB(A) → the Y of YCrCb (COLOR_RGB2YCrCb, 14-bit), and a processed Y with
// the original's chroma back to RGB(A) (COLOR_YCrCb2RGB, alpha copied), 8- and 16-bit. The weights are those of
// src/core/image.ts GRAY_WEIGHTS and src/core/colour.ts YCRCB; the JavaScript loops there are the fallback and give
// the same bytes (test/core/colour.test.ts compares them). Called by src/core/colour-cpu.ts for the op skeleton's
// host images (CLAHE's lightness, the gray of gray operations): 12 MP in a few milliseconds where the JavaScript
// loops on the main thread took 0.4 s a photo (issue 40).
#include <node_api.h>
#include "common.h"
#include "module.h"
#include "pool.h"
#include <stdint.h>

#define SHIFT 14
#define DESCALE(x) (((x) + (1 << (SHIFT - 1))) >> SHIFT)
#define R2Y 4899
#define G2Y 9617
#define B2Y 1868
#define Y2CR 11682
#define Y2CB 9241
#define CR2R 22987
#define CR2G (-11698)
#define CB2G (-5636)
#define CB2B 29049
#define GRAY(r, g, b) (((r) * 9798 + (g) * 19235 + (b) * 3735 + (1 << 14)) >> 15)

enum { TO_GRAY = 0, TO_LUMA = 1, FROM_LUMA = 2 };
#define BLOCK (64 * 1024) // pixels a thread takes at a time

static inline int clamp_to(int v, int max) { return v < 0 ? 0 : v > max ? max : v; }

// One kernel per sample type and conversion: the channel count is a constant inside each loop (3 or 4), so the
// compiler sees fixed strides.
#define COLOUR_KERNELS(T, SUF, MAX)                                                                                    \
  static void gray_##SUF(const T *s, int c, T *d, size_t a, size_t b) {                                                \
    if (c == 3)                                                                                                        \
      for (size_t i = a; i < b; i++) d[i] = (T)GRAY((uint32_t)s[3 * i], (uint32_t)s[3 * i + 1], (uint32_t)s[3 * i + 2]); \
    else                                                                                                               \
      for (size_t i = a; i < b; i++) d[i] = (T)GRAY((uint32_t)s[4 * i], (uint32_t)s[4 * i + 1], (uint32_t)s[4 * i + 2]); \
  }                                                                                                                    \
  static inline int y_##SUF(const T *p) { return DESCALE(p[0] * R2Y + p[1] * G2Y + p[2] * B2Y); }                     \
  static void luma_##SUF(const T *s, int c, T *d, size_t a, size_t b) {                                                \
    if (c == 3)                                                                                                        \
      for (size_t i = a; i < b; i++) d[i] = (T)y_##SUF(s + 3 * i);                                                     \
    else                                                                                                               \
      for (size_t i = a; i < b; i++) d[i] = (T)y_##SUF(s + 4 * i);                                                     \
  }

COLOUR_KERNELS(uint8_t, u8, 255)
COLOUR_KERNELS(uint16_t, u16, 65535)

// The conversion back, with the arithmetic as OpenCV's YCrCb2RGB_i (16-bit; 8-bit takes the tables below).
#define BACK_KERNEL(T, SUF, MAX) \
  static inline void back_px_##SUF(const T *p, int y2, T *o) {                                                         \
    const int half = (MAX + 1) >> 1, y = y_##SUF(p);                                                                   \
    const int dr = clamp_to(DESCALE((p[0] - y) * Y2CR + (half << SHIFT)), MAX) - half;                                 \
    const int db = clamp_to(DESCALE((p[2] - y) * Y2CB + (half << SHIFT)), MAX) - half;                                 \
    o[0] = (T)clamp_to(y2 + DESCALE(dr * CR2R), MAX);                                                                  \
    o[1] = (T)clamp_to(y2 + DESCALE(db * CB2G + dr * CR2G), MAX);                                                      \
    o[2] = (T)clamp_to(y2 + DESCALE(db * CB2B), MAX);                                                                  \
  }                                                                                                                    \
  static void back_##SUF(const T *s, int c, const T *y, T *d, size_t a, size_t b) {                                    \
    if (c == 3)                                                                                                        \
      for (size_t i = a; i < b; i++) back_px_##SUF(s + 3 * i, y[i], d + 3 * i);                                        \
    else                                                                                                               \
      for (size_t i = a; i < b; i++) {                                                                                 \
        back_px_##SUF(s + 4 * i, y[i], d + 4 * i);                                                                     \
        d[4 * i + 3] = s[4 * i + 3];                                                                                   \
      }                                                                                                                \
  }

BACK_KERNEL(uint16_t, u16, 65535)

// 8-bit: what the conversion back adds to the new Y is a function of R − Y (red, and Cr's share of green) and of
// B − Y (blue, Cb's share), each in [−255, 255]: tables of them, made once (imgpu_colour_exports), replace the
// chroma's multiplies and clamps — the same integers as BACK_KERNEL's arithmetic (tested against the JavaScript
// loops), 1.5× faster measured. Green's two shares are kept unshifted and descaled once, as OpenCV rounds their sum.
static int red8[511], blue8[511], green_r8[511], green_b8[511];
static uint8_t clamp8[1024]; // clamp8[v + 384] = v clamped to [0, 255], v in [−384, 639]

static void make_tables8(void) {
  for (int d = -255; d <= 255; d++) {
    const int dr = clamp_to(DESCALE(d * Y2CR + (128 << SHIFT)), 255) - 128;
    const int db = clamp_to(DESCALE(d * Y2CB + (128 << SHIFT)), 255) - 128;
    red8[d + 255] = DESCALE(dr * CR2R);
    blue8[d + 255] = DESCALE(db * CB2B);
    green_r8[d + 255] = dr * CR2G;
    green_b8[d + 255] = db * CB2G;
  }
  for (int v = -384; v < 640; v++) clamp8[v + 384] = (uint8_t)clamp_to(v, 255);
}

static inline void back_px_tab8(const uint8_t *restrict p, int y2, uint8_t *restrict o) {
  const int y = y_u8(p), r = p[0] - y + 255, b = p[2] - y + 255;
  o[0] = clamp8[y2 + red8[r] + 384];
  o[1] = clamp8[y2 + DESCALE(green_b8[b] + green_r8[r]) + 384];
  o[2] = clamp8[y2 + blue8[b] + 384];
}

static void back_tab8(const uint8_t *restrict s, int c, const uint8_t *restrict y, uint8_t *restrict d, size_t a, size_t b) {
  if (c == 3)
    for (size_t i = a; i < b; i++) back_px_tab8(s + 3 * i, y[i], d + 3 * i);
  else
    for (size_t i = a; i < b; i++) {
      back_px_tab8(s + 4 * i, y[i], d + 4 * i);
      d[4 * i + 3] = s[4 * i + 3];
    }
}

typedef struct {
  int kind, channels, wide; // wide: 16-bit samples
  const void *src;
  void *plane; // gray/Y out (TO_GRAY, TO_LUMA) or the new Y in (FROM_LUMA)
  void *dst;   // FROM_LUMA's colour out
  size_t n, next;
} colour_job_t;

static void run_range(colour_job_t *j, size_t a, size_t b) {
  const int c = j->channels;
  if (j->wide) {
    if (j->kind == TO_GRAY) gray_u16(j->src, c, j->plane, a, b);
    else if (j->kind == TO_LUMA) luma_u16(j->src, c, j->plane, a, b);
    else back_u16(j->src, c, j->plane, j->dst, a, b);
  } else {
    if (j->kind == TO_GRAY) gray_u8(j->src, c, j->plane, a, b);
    else if (j->kind == TO_LUMA) luma_u8(j->src, c, j->plane, a, b);
    else back_tab8(j->src, c, j->plane, j->dst, a, b);
  }
}

// Blocks taken from a shared counter until none are left (as point.c's passes).
static void colour_work(void *job, int index, int count) {
  (void)index;
  (void)count;
  colour_job_t *j = job;
  for (;;) {
    size_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (k * BLOCK >= j->n) return;
    size_t a = k * BLOCK, b = a + BLOCK < j->n ? a + BLOCK : j->n;
    run_range(j, a, b);
  }
}

// Both arrays' data, and whether they are 16-bit (1) or 8-bit (0); -1 when either is neither or they differ.
static int sample_arrays(napi_env env, napi_value a, napi_value b, void **pa, size_t *na, void **pb, size_t *nb) {
  if (typed_array(env, a, napi_uint8_array, pa, na) && typed_array(env, b, napi_uint8_array, pb, nb)) return 0;
  if (typed_array(env, a, napi_uint16_array, pa, na) && typed_array(env, b, napi_uint16_array, pb, nb)) return 1;
  return -1;
}

// colourConvert(kind, src, channels, plane, dst, threads): kind 0 (gray) and 1 (Y) write the n-pixel plane from the
// n·channels samples of src; kind 2 writes dst (src's length) from src's chroma and plane's Y. All arrays Uint8Array
// or all Uint16Array.
static napi_value colour_convert(napi_env env, napi_callback_info info) {
  static const char usage[] = "colourConvert(kind 0|1|2, src, channels 3|4, plane, dst (kind 2: src's length), threads): Uint8Array or Uint16Array alike";
  size_t argc = 6;
  napi_value argv[6];
  int kind, channels, threads;
  void *src, *plane, *dst = NULL, *dst2;
  size_t ns, np, nd = 0, nd2;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 6 || napi_get_value_int32(env, argv[0], &kind) != napi_ok ||
      napi_get_value_int32(env, argv[2], &channels) != napi_ok || napi_get_value_int32(env, argv[5], &threads) != napi_ok ||
      kind < 0 || kind > 2 || (channels != 3 && channels != 4)) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  int wide = sample_arrays(env, argv[1], argv[3], &src, &ns, &plane, &np);
  if (kind == FROM_LUMA && wide >= 0 && sample_arrays(env, argv[1], argv[4], &dst2, &nd2, &dst, &nd) != wide) wide = -1;
  if (wide < 0 || ns % channels || np != ns / channels || (kind == FROM_LUMA && nd != ns)) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  colour_job_t j = {.kind = kind, .channels = channels, .wide = wide, .src = src, .plane = plane, .dst = dst, .n = np};
  size_t blocks = (np + BLOCK - 1) / BLOCK;
  pool_run(colour_work, &j, (size_t)threads < blocks ? threads : (int)blocks);
  return NULL;
}

// Adds this file's functions to the module's exports (module.c).
int imgpu_colour_exports(napi_env env, napi_value exports) {
  make_tables8();
  napi_property_descriptor props[] = {
      {"colourConvert", NULL, colour_convert, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok;
}
