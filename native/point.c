// imgpu's 8-bit point passes in C: the histogram and the LUT of a whole image on native threads (pool.h), called
// by src/ops/histogram/cpu.ts and src/ops/lut/cpu.ts where this module is built; the JavaScript loops on the worker
// pool remain the fallback and the browser path. Measured on the H100 machine: the JavaScript loops ran ~2× slower
// per thread than these, and waking 16 JavaScript workers by message cost ~0.25 ms a pass; those two passes are all
// of equalize. Results are integers: identical either way (tested against the JavaScript loops).
#include <node_api.h>
#include "common.h"
#include "module.h"
#include "pool.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Four interleaved sub-histograms, so that runs of equal pixels (flat regions) do not serialize on one counter.
static void hist8(const uint8_t *p, size_t start, size_t end, uint32_t *out) {
  uint32_t h[4][256];
  memset(h, 0, sizeof h);
  size_t i = start;
  for (; i + 8 <= end; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h[0][w & 255]++;
    h[1][(w >> 8) & 255]++;
    h[2][(w >> 16) & 255]++;
    h[3][(w >> 24) & 255]++;
    h[0][(w >> 32) & 255]++;
    h[1][(w >> 40) & 255]++;
    h[2][(w >> 48) & 255]++;
    h[3][w >> 56]++;
  }
  for (; i < end; i++) h[0][p[i]]++;
  for (int b = 0; b < 256; b++) out[b] += h[0][b] + h[1][b] + h[2][b] + h[3][b];
}

// Eight lookups loaded before any store: a store through uint8_t* may alias the table, so interleaving them makes
// the compiler reload (measured 3× slower than this on the development machine).
static void lut8(const uint8_t *src, uint8_t *dst, const uint8_t *lut, size_t start, size_t end) {
  size_t i = start;
  for (; i + 8 <= end; i += 8) {
    uint8_t a = lut[src[i]], b = lut[src[i + 1]], c = lut[src[i + 2]], d = lut[src[i + 3]];
    uint8_t e = lut[src[i + 4]], f = lut[src[i + 5]], g = lut[src[i + 6]], h = lut[src[i + 7]];
    dst[i] = a, dst[i + 1] = b, dst[i + 2] = c, dst[i + 3] = d;
    dst[i + 4] = e, dst[i + 5] = f, dst[i + 6] = g, dst[i + 7] = h;
  }
  for (; i < end; i++) dst[i] = lut[src[i]];
}

// The whole image on the native pool (pool.h), blocks taken from a shared counter by each thread until none are
// left (a late or descheduled thread does fewer) — OpenCV's parallel_for_, with threads woken by a condition
// variable instead of the messages that wake JavaScript workers.
#define BLOCK (128 * 1024)

typedef struct {
  size_t n;
  size_t next; // the next block, taken atomically
} blocks_t;

static int take_block(blocks_t *b, size_t *start, size_t *end) {
  size_t k = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
  if (k * BLOCK >= b->n) return 0;
  *start = k * BLOCK;
  *end = *start + BLOCK < b->n ? *start + BLOCK : b->n;
  return 1;
}

typedef struct {
  blocks_t blocks;
  const uint8_t *src;
  uint32_t hist[POOL_MAX_THREADS + 1][256]; // one per participant, summed by the caller
} hist_job_t;

typedef struct {
  blocks_t blocks;
  const uint8_t *src;
  uint8_t *dst;
  const uint8_t *lut;
} lut_job_t;

// No more threads than blocks.
static int useful_threads(size_t n, int threads) {
  size_t blocks = (n + BLOCK - 1) / BLOCK;
  return (size_t)threads < blocks ? threads : (int)blocks;
}

static void hist_work(void *job, int index, int count) {
  (void)count;
  hist_job_t *j = job;
  size_t s, e;
  while (take_block(&j->blocks, &s, &e)) hist8(j->src, s, e, j->hist[index]);
}

static void lut_work(void *job, int index, int count) {
  (void)index;
  (void)count;
  lut_job_t *j = job;
  size_t s, e;
  while (take_block(&j->blocks, &s, &e)) lut8(j->src, j->dst, j->lut, s, e);
}

// histogram8(data: Uint8Array, out: Uint32Array(256), threads): adds the counts of all of data to out.
static napi_value histogram8(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  void *data, *out;
  size_t n, bins;
  int threads;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 ||
      !typed_array(env, argv[0], napi_uint8_array, &data, &n) || !typed_array(env, argv[1], napi_uint32_array, &out, &bins) ||
      bins != 256 || napi_get_value_int32(env, argv[2], &threads) != napi_ok) {
    napi_throw_type_error(env, NULL, "histogram8(data: Uint8Array, out: Uint32Array(256), threads)");
    return NULL;
  }
  hist_job_t *j = calloc(1, sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "histogram8: out of memory");
    return NULL;
  }
  j->src = data;
  j->blocks.n = n;
  pool_run(hist_work, j, useful_threads(n, threads));
  uint32_t *o = out;
  for (int t = 0; t <= POOL_MAX_THREADS; t++)
    for (int b = 0; b < 256; b++) o[b] += j->hist[t][b];
  free(j);
  return NULL;
}

// applyLut8(src: Uint8Array, dst: Uint8Array, lut: Uint8Array(256), threads): dst[i] = lut[src[i]], all i.
static napi_value apply_lut8(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  void *src, *dst, *lut;
  size_t n, dn, ln;
  int threads;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 ||
      !typed_array(env, argv[0], napi_uint8_array, &src, &n) || !typed_array(env, argv[1], napi_uint8_array, &dst, &dn) ||
      !typed_array(env, argv[2], napi_uint8_array, &lut, &ln) || ln != 256 || dn != n ||
      napi_get_value_int32(env, argv[3], &threads) != napi_ok) {
    napi_throw_type_error(env, NULL, "applyLut8(src: Uint8Array, dst: Uint8Array (same length), lut: Uint8Array(256), threads)");
    return NULL;
  }
  lut_job_t j = {.blocks = {.n = n}, .src = src, .dst = dst, .lut = lut};
  pool_run(lut_work, &j, useful_threads(n, threads));
  return NULL;
}

// Adds this file's functions to the module's exports (module.c).
int imgpu_point_exports(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"histogram8", NULL, histogram8, NULL, NULL, NULL, napi_default, NULL},
      {"applyLut8", NULL, apply_lut8, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok;
}
