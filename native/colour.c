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

static inline int clamp_to(int v, int max) {
  v = v < 0 ? 0 : v;
  return v > max ? max : v;
}

// The loops are written for the vectorizer (VECTORIZE, common.h): restrict pointers, the channel count a constant of
// each loop, the clamps min/max — measured on 12 MP, the conversion back took 74 ms at -O2 (scalar), 70 at -O3 with
// SSE2 and 12 with AVX2, as cv2's.

#define COLOUR_KERNELS(T, SUF, MAX, C)                                                                                 \
  VECTORIZE static void gray_##SUF##_##C(const T *restrict s, T *restrict d, size_t a, size_t b) {                     \
    for (size_t i = a; i < b; i++) {                                                                                   \
      const uint32_t r = s[C * i], g = s[C * i + 1], bl = s[C * i + 2];                                                \
      d[i] = (T)GRAY(r, g, bl);                                                                                        \
    }                                                                                                                  \
  }                                                                                                                    \
  VECTORIZE static void luma_##SUF##_##C(const T *restrict s, T *restrict d, size_t a, size_t b) {                     \
    for (size_t i = a; i < b; i++) d[i] = (T)DESCALE(s[C * i] * R2Y + s[C * i + 1] * G2Y + s[C * i + 2] * B2Y);        \
  }                                                                                                                    \
  VECTORIZE static void back_##SUF##_##C(const T *restrict s, const T *restrict yp, T *restrict d, size_t a, size_t b) { \
    const int half = (MAX + 1) >> 1;                                                                                   \
    for (size_t i = a; i < b; i++) {                                                                                   \
      const int r = s[C * i], g = s[C * i + 1], bl = s[C * i + 2], y2 = yp[i];                                         \
      const int y = DESCALE(r * R2Y + g * G2Y + bl * B2Y);                                                             \
      const int dr = clamp_to(DESCALE((r - y) * Y2CR + (half << SHIFT)), MAX) - half;                                  \
      const int db = clamp_to(DESCALE((bl - y) * Y2CB + (half << SHIFT)), MAX) - half;                                 \
      d[C * i] = (T)clamp_to(y2 + DESCALE(dr * CR2R), MAX);                                                            \
      d[C * i + 1] = (T)clamp_to(y2 + DESCALE(db * CB2G + dr * CR2G), MAX);                                            \
      d[C * i + 2] = (T)clamp_to(y2 + DESCALE(db * CB2B), MAX);                                                        \
      if (C == 4) d[C * i + 3] = s[C * i + 3];                                                                         \
    }                                                                                                                  \
  }

COLOUR_KERNELS(uint8_t, u8, 255, 3)
COLOUR_KERNELS(uint8_t, u8, 255, 4)
COLOUR_KERNELS(uint16_t, u16, 65535, 3)
COLOUR_KERNELS(uint16_t, u16, 65535, 4)

typedef struct {
  int kind, channels, wide; // wide: 16-bit samples
  const void *src;
  void *plane; // gray/Y out (TO_GRAY, TO_LUMA) or the new Y in (FROM_LUMA)
  void *dst;   // FROM_LUMA's colour out
  size_t n, next;
} colour_job_t;

// The kernel for the job's conversion, sample type and channel count.
#define PICK(SUF, C)                                                                                                   \
  do {                                                                                                                 \
    if (j->kind == TO_GRAY) gray_##SUF##_##C(j->src, j->plane, a, b);                                                  \
    else if (j->kind == TO_LUMA) luma_##SUF##_##C(j->src, j->plane, a, b);                                             \
    else back_##SUF##_##C(j->src, j->plane, j->dst, a, b);                                                             \
  } while (0)

static void run_range(colour_job_t *j, size_t a, size_t b) {
  if (j->wide && j->channels == 3) PICK(u16, 3);
  else if (j->wide) PICK(u16, 4);
  else if (j->channels == 3) PICK(u8, 3);
  else PICK(u8, 4);
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
  napi_property_descriptor props[] = {
      {"colourConvert", NULL, colour_convert, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok;
}
