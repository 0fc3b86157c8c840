// Tiled CLAHE's interpolation in C (src/ops/clahe/cpu-kernels.ts claheInterpolateRows is the JavaScript twin and the
// fallback): every pixel between the four nearest tiles' LUTs with OpenCV's float32 expression and order,
// res = (L11·xa1 + L12·xa)·ya1 + (L21·xa1 + L22·xa)·ya, each operation rounded to float (built with
// -ffp-contract=off: no fused multiply-add), then cvRound (half to even) and saturate. Rows are taken in blocks by the
// native threads (pool.h). It was most of a 12 MP colour CLAHE on the CPU path (issue 40): 207 ms of CPU as
// JavaScript, 35 ms here (~3 ns a pixel, as OpenCV's).
#include <node_api.h>
#include "common.h"
#include "module.h"
#include "pool.h"
#include <stdint.h>

#define ROWS 16 // rows a thread takes at a time

typedef struct {
  int wide; // 16-bit samples and LUTs
  const void *src, *lut;
  void *dst;
  size_t width, height, tiles_x, bins;
  const float *xw, *yw;
  const uint32_t *xt, *yt;
  size_t next;
} interp_job_t;

// cvRound of a float in [-2^22, 2^22] (these are within [0, 65535·2]): adding and taking away 1.5·2^23 leaves it
// rounded to an integer in the default rounding mode, half to even — without the call to libm's rintf that x86-64's
// baseline instruction set needs (it was half the loop's time).
static inline int round_even(float v) {
  const float magic = 12582912.0f; // IEEE arithmetic (no -ffast-math) forbids folding (v + m) - m to v
  return (int)((v + magic) - magic);
}

// The tables are copied into restrict locals: a store through the 8-bit `d` may alias anything, so read through `j`
// they would be reloaded for every pixel.
#define INTERPOLATE(T, SUF)                                                                                            \
  VECTORIZE static void rows_##SUF(const interp_job_t *j, size_t y0, size_t y1) {                                               \
    const T *restrict src = j->src, *restrict lut = j->lut;                                                            \
    T *restrict dst = j->dst;                                                                                          \
    const float *restrict xw = j->xw, *restrict yw = j->yw;                                                            \
    const uint32_t *restrict xt = j->xt, *restrict yt = j->yt;                                                         \
    const size_t w = j->width, bins = j->bins, stride = j->tiles_x * bins;                                             \
    const int max = (int)bins - 1;                                                                                     \
    for (size_t y = y0; y < y1; y++) {                                                                                 \
      const float ya = yw[2 * y], ya1 = yw[2 * y + 1];                                                                 \
      const T *restrict l1 = lut + yt[2 * y] * stride, *restrict l2 = lut + yt[2 * y + 1] * stride;                    \
      const T *restrict s = src + y * w;                                                                               \
      T *restrict d = dst + y * w;                                                                                     \
      for (size_t x = 0; x < w; x++) {                                                                                 \
        const size_t i1 = xt[2 * x] * bins + s[x], i2 = xt[2 * x + 1] * bins + s[x];                                   \
        const float xa = xw[2 * x], xa1 = xw[2 * x + 1];                                                               \
        const float top = (float)l1[i1] * xa1 + (float)l1[i2] * xa;                                                    \
        const float bottom = (float)l2[i1] * xa1 + (float)l2[i2] * xa;                                                 \
        const int r = round_even(top * ya1 + bottom * ya);                                                             \
        d[x] = (T)(r < 0 ? 0 : r > max ? max : r);                                                                     \
      }                                                                                                                \
    }                                                                                                                  \
  }

INTERPOLATE(uint8_t, u8)
INTERPOLATE(uint16_t, u16)

static void interp_work(void *job, int index, int count) {
  (void)index;
  (void)count;
  interp_job_t *j = job;
  for (;;) {
    size_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (k * ROWS >= j->height) return;
    size_t y0 = k * ROWS, y1 = y0 + ROWS < j->height ? y0 + ROWS : j->height;
    if (j->wide) rows_u16(j, y0, y1);
    else rows_u8(j, y0, y1);
  }
}

// claheInterpolate(src, dst, width, tilesX, bins, lut, xw, xt, yw, yt, threads): src, dst and lut all Uint8Array or
// all Uint16Array; xw, yw Float32Array and xt, yt Uint32Array (2 per column / row: plan.ts axisTable).
static napi_value clahe_interpolate(napi_env env, napi_callback_info info) {
  static const char usage[] = "claheInterpolate(src, dst, width, tilesX, bins, lut, xw: Float32Array, xt: Uint32Array, yw: Float32Array, yt: Uint32Array, threads)";
  size_t argc = 11;
  napi_value argv[11];
  void *src, *dst, *lut, *xw, *xt, *yw, *yt;
  size_t ns, nd, nl, nxw, nxt, nyw, nyt;
  int32_t width, tiles_x, bins, threads;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 11 || napi_get_value_int32(env, argv[2], &width) != napi_ok ||
      napi_get_value_int32(env, argv[3], &tiles_x) != napi_ok || napi_get_value_int32(env, argv[4], &bins) != napi_ok ||
      napi_get_value_int32(env, argv[10], &threads) != napi_ok || width <= 0 || tiles_x <= 0 || (bins != 256 && bins != 65536)) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  const napi_typedarray_type t = bins == 256 ? napi_uint8_array : napi_uint16_array;
  if (!typed_array(env, argv[0], t, &src, &ns) || !typed_array(env, argv[1], t, &dst, &nd) || !typed_array(env, argv[5], t, &lut, &nl) ||
      !typed_array(env, argv[6], napi_float32_array, &xw, &nxw) || !typed_array(env, argv[7], napi_uint32_array, &xt, &nxt) ||
      !typed_array(env, argv[8], napi_float32_array, &yw, &nyw) || !typed_array(env, argv[9], napi_uint32_array, &yt, &nyt) ||
      nd != ns || ns % (size_t)width || nxw != 2 * (size_t)width || nxt != nxw || nyw != 2 * (ns / width) || nyt != nyw || nl % ((size_t)tiles_x * bins)) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  // Every tile index the tables name must lie inside the LUTs (a wrong table would read out of bounds).
  const size_t tiles_y = nl / ((size_t)tiles_x * bins);
  const uint32_t *xi = xt, *yi = yt;
  for (size_t i = 0; i < nxt; i++)
    if (xi[i] >= (uint32_t)tiles_x) goto bad;
  for (size_t i = 0; i < nyt; i++)
    if (yi[i] >= tiles_y) goto bad;
  interp_job_t j = {.wide = bins == 65536, .src = src, .lut = lut, .dst = dst, .width = width, .height = ns / width, .tiles_x = tiles_x, .bins = bins,
                    .xw = xw, .yw = yw, .xt = xt, .yt = yt};
  size_t blocks = (j.height + ROWS - 1) / ROWS;
  pool_run(interp_work, &j, (size_t)threads < blocks ? threads : (int)blocks);
  return NULL;
bad:
  napi_throw_range_error(env, NULL, "claheInterpolate: a tile index beyond the LUTs");
  return NULL;
}

// Adds this file's functions to the module's exports (module.c).
int imgpu_clahe_exports(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"claheInterpolate", NULL, clahe_interpolate, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok;
}
