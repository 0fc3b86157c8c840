// imgpu's host copies: one memcpy split over threads. It exists for the copies into and out of GPU-mapped memory.
// Measured on the H100 machine through Dawn: one JavaScript TypedArray.set of 33 MB into mapped upload memory runs
// at ~5 GB/s on one thread (it is write-combined system memory), so a 7680×4320 upload was 6.7 ms of which the
// GPU's own copy is ~0.8 ms; memory bandwidth allows several times that from several threads. JavaScript cannot
// hand a mapped ArrayBuffer to worker threads (it is not shareable), but native threads can write through its
// pointer. The threads are made once and wait on a condition variable; one copy uses them at a time (another
// caller meanwhile copies on its own thread). Node-API: one binary for every Node version and worker thread.
#include <node_api.h>
#include "common.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 32
// Parts are cut at 64-byte boundaries (cache lines; write-combining buffers) and never smaller than this.
#define MIN_PART (256 * 1024)

typedef struct {
  unsigned char *dst;
  const unsigned char *src;
  size_t n;
} part_t;

static pthread_mutex_t use_lock = PTHREAD_MUTEX_INITIALIZER; // one parallel copy at a time
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;     // guards the fields below
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static pthread_t threads[MAX_THREADS];
static int started = 0;       // helper threads running
static unsigned long generation = 0;
static int active = 0;        // helpers given a part in this generation
static int pending = 0;       // of those, not done yet
static part_t parts[MAX_THREADS];

static void *helper(void *arg) {
  int id = (int)(intptr_t)arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (generation == seen) pthread_cond_wait(&go, &lock);
    seen = generation;
    if (id >= active) continue;
    part_t p = parts[id];
    pthread_mutex_unlock(&lock);
    memcpy(p.dst, p.src, p.n);
    pthread_mutex_lock(&lock);
    if (--pending == 0) pthread_cond_signal(&finished);
  }
  return NULL;
}

// Starts helpers up to `want` (best effort: fewer if the system refuses threads). Called with use_lock held.
static int ensure_helpers(int want) {
  while (started < want && started < MAX_THREADS) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    int rc = pthread_create(&threads[started], &attr, helper, (void *)(intptr_t)started);
    pthread_attr_destroy(&attr);
    if (rc != 0) break;
    started++;
  }
  return started < want ? started : want;
}

// Copies n bytes with up to `nthreads` threads (the caller's included).
static void parallel_copy(unsigned char *dst, const unsigned char *src, size_t n, int nthreads) {
  int parts_wanted = (int)(n / MIN_PART);
  if (parts_wanted > nthreads) parts_wanted = nthreads;
  if (parts_wanted > MAX_THREADS + 1) parts_wanted = MAX_THREADS + 1;
  if (parts_wanted <= 1 || pthread_mutex_trylock(&use_lock) != 0) {
    memcpy(dst, src, n);
    return;
  }
  int helpers = ensure_helpers(parts_wanted - 1);
  int total = helpers + 1;
  size_t per = ((n / total) + 63) & ~(size_t)63;
  size_t off = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < helpers; i++) {
    size_t len = off + per <= n ? per : n - off;
    parts[i] = (part_t){dst + off, src + off, len};
    off += len;
  }
  active = helpers;
  pending = helpers;
  generation++;
  pthread_cond_broadcast(&go);
  pthread_mutex_unlock(&lock);
  memcpy(dst + off, src + off, n - off); // the caller's own part: the rest
  pthread_mutex_lock(&lock);
  while (pending > 0) pthread_cond_wait(&finished, &lock);
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&use_lock);
}

// Reads (dst: Uint8Array, src: Uint8Array, threads: number); same lengths, or a JS error is thrown.
static int read_args(napi_env env, napi_callback_info info, napi_value argv[3], unsigned char **dst, unsigned char **src,
                     size_t *n, int *nthreads) {
  size_t argc = 3;
  size_t dn, sn;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !get_bytes(env, argv[0], dst, &dn) ||
      !get_bytes(env, argv[1], src, &sn) || napi_get_value_int32(env, argv[2], nthreads) != napi_ok) {
    napi_throw_type_error(env, NULL, "copy(dst: Uint8Array, src: Uint8Array, threads: number)");
    return 0;
  }
  if (dn != sn) {
    napi_throw_range_error(env, NULL, "copy: dst and src differ in length");
    return 0;
  }
  *n = dn;
  return 1;
}

// copy(dst, src, threads): returns when the bytes are copied.
static napi_value copy(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  unsigned char *dst, *src;
  size_t n;
  int nthreads;
  if (!read_args(env, info, argv, &dst, &src, &n, &nthreads)) return NULL;
  if (n) parallel_copy(dst, src, n, nthreads);
  return NULL;
}

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref dst_ref, src_ref; // keep both arrays alive while a libuv thread copies
  unsigned char *dst;
  const unsigned char *src;
  size_t n;
  int nthreads;
} async_copy_t;

static void async_execute(napi_env env, void *data) {
  (void)env;
  async_copy_t *c = data;
  parallel_copy(c->dst, c->src, c->n, c->nthreads);
}

static void async_complete(napi_env env, napi_status status, void *data) {
  async_copy_t *c = data;
  napi_value undef;
  napi_get_undefined(env, &undef);
  if (status == napi_ok) {
    napi_resolve_deferred(env, c->deferred, undef);
  } else {
    napi_value msg, err;
    napi_create_string_utf8(env, "copy: cancelled", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &err);
    napi_reject_deferred(env, c->deferred, err);
  }
  napi_delete_reference(env, c->dst_ref);
  napi_delete_reference(env, c->src_ref);
  napi_delete_async_work(env, c->work);
  free(c);
}

// copyAsync(dst, src, threads) -> Promise<void>: the copy runs off the JavaScript thread. Neither array may be
// detached (a mapped range unmapped) before the promise settles.
static napi_value copy_async(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  unsigned char *dst, *src;
  size_t n;
  int nthreads;
  if (!read_args(env, info, argv, &dst, &src, &n, &nthreads)) return NULL;
  async_copy_t *c = calloc(1, sizeof *c);
  napi_value promise, name;
  if (!c) {
    napi_throw_error(env, NULL, "copy: out of memory");
    return NULL;
  }
  *c = (async_copy_t){.dst = dst, .src = src, .n = n, .nthreads = nthreads};
  if (napi_create_promise(env, &c->deferred, &promise) != napi_ok ||
      napi_create_reference(env, argv[0], 1, &c->dst_ref) != napi_ok ||
      napi_create_reference(env, argv[1], 1, &c->src_ref) != napi_ok ||
      napi_create_string_utf8(env, "imgpu-copy", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, async_execute, async_complete, c, &c->work) != napi_ok ||
      napi_queue_async_work(env, c->work) != napi_ok) {
    napi_throw_error(env, NULL, "copy: N-API failure");
    return NULL;
  }
  return promise;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"copy", NULL, copy, NULL, NULL, NULL, napi_default, NULL},
      {"copyAsync", NULL, copy_async, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof *props, props) != napi_ok) return NULL;
  return exports;
}
