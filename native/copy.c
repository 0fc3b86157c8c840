// imgpu's host copies: one memcpy split over threads. It exists for the copies into and out of GPU-mapped memory.
// Measured on the H100 machine through Dawn: one JavaScript TypedArray.set of 33 MB into mapped upload memory runs
// at ~5 GB/s on one thread (it is write-combined system memory), so a 7680×4320 upload was 6.7 ms of which the
// GPU's own copy is ~0.8 ms; memory bandwidth allows several times that from several threads. JavaScript cannot
// hand a mapped ArrayBuffer to worker threads (it is not shareable), but native threads can write through its
// pointer. The threads are the module's pool (pool.c). Node-API: one binary for every Node version and thread.
#include <node_api.h>
#include "common.h"
#include "module.h"
#include "pool.h"
#include <stdint.h>
#include <string.h>

// Parts never smaller than this; cut at 64-byte boundaries (cache lines; write-combining buffers).
#define MIN_PART (256 * 1024)

typedef struct {
  unsigned char *dst;
  const unsigned char *src;
  size_t n;
} copy_job_t;

static void copy_part(void *job, int index, int count) {
  copy_job_t *c = job;
  size_t per = ((c->n / (size_t)count) + 63) & ~(size_t)63;
  size_t start = per * (size_t)index;
  if (start >= c->n) return;
  size_t len = index == count - 1 || start + per > c->n ? c->n - start : per;
  memcpy(c->dst + start, c->src + start, len);
}

// Copies n bytes with up to `nthreads` threads (the caller's included).
static void parallel_copy(unsigned char *dst, const unsigned char *src, size_t n, int nthreads) {
  copy_job_t job = {dst, src, n};
  int parts = (int)(n / MIN_PART);
  pool_run(copy_part, &job, parts < nthreads ? parts : nthreads);
}

// copy(dst: Uint8Array, src: Uint8Array, threads): returns when the bytes are copied; same lengths, or a JS error.
static napi_value copy(napi_env env, napi_callback_info info) {
  size_t argc = 3, n, sn;
  napi_value argv[3];
  unsigned char *dst, *src;
  int nthreads;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !get_bytes(env, argv[0], &dst, &n) ||
      !get_bytes(env, argv[1], &src, &sn) || napi_get_value_int32(env, argv[2], &nthreads) != napi_ok) {
    napi_throw_type_error(env, NULL, "copy(dst: Uint8Array, src: Uint8Array, threads: number)");
    return NULL;
  }
  if (n != sn) {
    napi_throw_range_error(env, NULL, "copy: dst and src differ in length");
    return NULL;
  }
  if (n) parallel_copy(dst, src, n, nthreads);
  return NULL;
}

// Adds this file's functions to the module's exports (module.c).
int imgpu_copy_exports(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"copy", NULL, copy, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok;
}
