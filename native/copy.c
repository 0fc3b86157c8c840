// imgpu's host copies: one memcpy split over threads. It exists for the copies into and out of GPU-mapped memory.
// Measured on the H100 machine through Dawn: one JavaScript TypedArray.set of 33 MB into mapped upload memory runs
// at ~5 GB/s on one thread (it is write-combined system memory), so a 7680×4320 upload was 6.7 ms of which the
// GPU's own copy is ~0.8 ms; memory bandwidth allows several times that from several threads. JavaScript cannot
// hand a mapped ArrayBuffer to worker threads (it is not shareable), but native threads can write through its
// pointer. The threads are the module's pool (pool.c). Node-API: one binary for every Node version and thread.
#include <node_api.h>
#include "common.h"
#include "module.h"
#include "napi-util.h"
#include "pool.h"
#include <stdint.h>
#include <stdlib.h>
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

// copyAsync: the same copy on one of libuv's threads, off the JavaScript thread (which goes on with other work:
// a batch's JPEG coefficients, 0.65 s of its main thread on the H100 as a synchronous copy). One thread, not the
// pool: the pool is for the JavaScript thread's own copies, which would find it busy and run alone.
typedef struct {
  unsigned char *dst, *src;
  size_t n;
} async_copy_t;

static int run_async_copy(void *job) {
  async_copy_t *c = job;
  memcpy(c->dst, c->src, c->n);
  return 0;
}

static void async_copy_failure(void *job, const char **code, const char **message) {
  (void)job;
  *code = "ECOPY";
  *message = "copy failed";
}

static const napi_util_async_t COPY_ASYNC = {"imgpu-copy", run_async_copy, NULL, async_copy_failure};

// copyAsync(dst: Uint8Array, src: Uint8Array) -> Promise<void>: copies on libuv's thread pool; both arrays stay
// referenced until it settles, and neither may be detached (a mapped GPU range unmapped) or written before then.
static napi_value copy_async(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  async_copy_t *c = calloc(1, sizeof *c);
  size_t sn;
  if (!c) {
    napi_throw_error(env, NULL, "imgpu-copy: out of memory");
    return NULL;
  }
  if (!napi_util_args(env, info, argv, 2, "bb", "copyAsync(dst: Uint8Array, src: Uint8Array)", &c->dst, &c->n, &c->src, &sn)) {
    free(c);
    return NULL;
  }
  if (c->n != sn) {
    free(c);
    napi_throw_range_error(env, NULL, "copyAsync: dst and src differ in length");
    return NULL;
  }
  return napi_util_queue(env, &COPY_ASYNC, c, argv, 2);
}

// Adds this file's functions to the module's exports (module.c).
int imgpu_copy_exports(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"copy", NULL, copy, NULL, NULL, NULL, napi_default, NULL},
      {"copyAsync", NULL, copy_async, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok;
}
