// imgpu's JPEG codec: a Node-API binding of libjpeg-turbo's TurboJPEG API, the library OpenCV's imread/imwrite
// use. It exists because sharp (libvips) decodes and encodes JPEG 3–10× slower than cv2 on the same image and
// cannot decode only the luma, which is what cv2.imread(path, IMREAD_GRAYSCALE) returns. Accurate (islow) DCT
// and fancy upsampling, as cv2: decoded pixels are bit-identical to cv2.imread's. Decoding writes into a
// caller-given buffer (shared memory, or a GPU staging buffer), so no copy follows. Node-API: one binary serves
// every Node version and every worker thread.
#include <node_api.h>
#include "common.h"
#include <turbojpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define CHECK(env, call)                                        \
  do {                                                          \
    if ((call) != napi_ok) {                                    \
      napi_throw_error((env), NULL, "imgpu-turbo: N-API failure"); \
      return NULL;                                              \
    }                                                           \
  } while (0)

static napi_value throw_tj(napi_env env, tjhandle h, const char *what) {
  char msg[300];
  snprintf(msg, sizeof msg, "%s: %s", what, tjGetErrorStr2(h));
  napi_throw_error(env, "EJPEG", msg);
  return NULL;
}

static napi_value set_int(napi_env env, napi_value obj, const char *key, int value) {
  napi_value v;
  if (napi_create_int32(env, value, &v) != napi_ok || napi_set_named_property(env, obj, key, v) != napi_ok) return NULL;
  return obj;
}

// A decompressor with the JPEG's header read, or NULL with a JS error thrown.
static tjhandle open_header(napi_env env, unsigned char *src, size_t len, int *w, int *h, int *samp, int *cs) {
  tjhandle t = tjInitDecompress();
  if (tjDecompressHeader3(t, src, (unsigned long)len, w, h, samp, cs) != 0) {
    throw_tj(env, t, "not a readable JPEG");
    tjDestroy(t);
    return NULL;
  }
  return t;
}

// header(jpeg: Uint8Array) -> { width, height, subsampling, colorspace }
static napi_value header(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *src;
  size_t len;
  if (argc < 1 || !get_bytes(env, argv[0], &src, &len)) {
    napi_throw_type_error(env, NULL, "header(jpeg: Uint8Array)");
    return NULL;
  }
  int w, hh, samp, cs;
  tjhandle h = open_header(env, src, len, &w, &hh, &samp, &cs);
  if (!h) return NULL;
  tjDestroy(h);
  napi_value obj;
  CHECK(env, napi_create_object(env, &obj));
  if (!set_int(env, obj, "width", w) || !set_int(env, obj, "height", hh) || !set_int(env, obj, "subsampling", samp) ||
      !set_int(env, obj, "colorspace", cs))
    return NULL;
  return obj;
}

// The codec's work, free of JavaScript values so that it can run on a libuv thread: 0, or -1 with `err` set.
typedef struct {
  // inputs
  int encode;                 // 0: decode src (a JPEG) into dst; 1: encode src (pixels) into jpeg
  unsigned char *src, *dst;
  size_t len, cap;
  int w, h, channels, quality;
  // outputs
  unsigned char *jpeg;
  unsigned long size;
  char err[300];
} codec_job_t;

// A warning (e.g. a truncated file) is an error, as in sharp's default, so a damaged file is reported, not half-gray.
static int run_decode(codec_job_t *j) {
  tjhandle t = tjInitDecompress();
  int w, hh, samp, cs, rc = -1;
  if (tjDecompressHeader3(t, j->src, (unsigned long)j->len, &w, &hh, &samp, &cs) != 0) {
    snprintf(j->err, sizeof j->err, "not a readable JPEG: %s", tjGetErrorStr2(t));
  } else if ((size_t)w * (size_t)hh * (size_t)j->channels > j->cap) {
    snprintf(j->err, sizeof j->err, "decode: output buffer too small");
  } else if (tjDecompress2(t, j->src, (unsigned long)j->len, j->dst, w, 0, hh, j->channels == 1 ? TJPF_GRAY : TJPF_RGB,
                           TJFLAG_STOPONWARNING) != 0) {
    snprintf(j->err, sizeof j->err, "corrupt or truncated JPEG: %s", tjGetErrorStr2(t));
  } else {
    rc = 0;
  }
  tjDestroy(t);
  return rc;
}

// Accurate DCT (TurboJPEG would pick the fast one below quality 96, as cv2 does not); colour 4:2:0 and gray one
// component, cv2.imwrite's defaults.
static int run_encode(codec_job_t *j) {
  tjhandle t = tjInitCompress();
  int pf = j->channels == 1 ? TJPF_GRAY : TJPF_RGB, samp = j->channels == 1 ? TJSAMP_GRAY : TJSAMP_420;
  int rc = tjCompress2(t, j->src, j->w, 0, j->h, pf, &j->jpeg, &j->size, samp, j->quality, TJFLAG_ACCURATEDCT);
  if (rc != 0) {
    snprintf(j->err, sizeof j->err, "cannot encode JPEG: %s", tjGetErrorStr2(t));
    tjFree(j->jpeg);
    j->jpeg = NULL;
  }
  tjDestroy(t);
  return rc == 0 ? 0 : -1;
}

static void free_tj(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  tjFree(data);
}

// The encoded bytes as a Buffer, handed to JS without a copy where the runtime allows external buffers.
static napi_value jpeg_buffer(napi_env env, codec_job_t *j) {
  napi_value out;
  if (napi_create_external_buffer(env, j->size, j->jpeg, free_tj, NULL, &out) == napi_ok) return out;
  void *copy;
  napi_status s = napi_create_buffer_copy(env, j->size, j->jpeg, &copy, &out);
  tjFree(j->jpeg);
  return s == napi_ok ? out : NULL;
}

// Reads (jpeg, out, channels) for decode or (pixels, width, height, channels, quality) for encode into `j`; argv
// has room for one more argument (the async variants' nice value). 0 with a TypeError thrown when they are wrong.
static int read_job(napi_env env, napi_callback_info info, int encode, napi_value *argv, size_t *argc, codec_job_t *j) {
  memset(j, 0, sizeof *j);
  j->encode = encode;
  if (napi_get_cb_info(env, info, argc, argv, NULL, NULL) != napi_ok) return 0;
  if (!encode) {
    if (*argc < 3 || !get_bytes(env, argv[0], &j->src, &j->len) || !get_bytes(env, argv[1], &j->dst, &j->cap) ||
        napi_get_value_int32(env, argv[2], &j->channels) != napi_ok || (j->channels != 1 && j->channels != 3)) {
      napi_throw_type_error(env, NULL, "decode(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3)");
      return 0;
    }
    return 1;
  }
  if (*argc < 5 || !get_bytes(env, argv[0], &j->src, &j->len) || napi_get_value_int32(env, argv[1], &j->w) != napi_ok ||
      napi_get_value_int32(env, argv[2], &j->h) != napi_ok || napi_get_value_int32(env, argv[3], &j->channels) != napi_ok ||
      napi_get_value_int32(env, argv[4], &j->quality) != napi_ok || (j->channels != 1 && j->channels != 3) || j->w <= 0 ||
      j->h <= 0 || (size_t)j->w * (size_t)j->h * (size_t)j->channels > j->len) {
    napi_throw_type_error(env, NULL, "encode(pixels: Uint8Array, width, height, channels: 1 | 3, quality)");
    return 0;
  }
  return 1;
}

// decode(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3): fills out (width*height*channels bytes).
static napi_value decode(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  size_t argc = 3;
  codec_job_t j;
  if (!read_job(env, info, 0, argv, &argc, &j)) return NULL;
  if (run_decode(&j) != 0) napi_throw_error(env, "EJPEG", j.err);
  return NULL;
}

// encode(pixels: Uint8Array, width, height, channels: 1 | 3, quality) -> Buffer.
static napi_value encode(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  size_t argc = 5;
  codec_job_t j;
  if (!read_job(env, info, 1, argv, &argc, &j)) return NULL;
  if (run_encode(&j) != 0) {
    napi_throw_error(env, "EJPEG", j.err);
    return NULL;
  }
  return jpeg_buffer(env, &j);
}

// The async variants: the same work on a libuv thread, both arrays referenced (alive) until the promise settles.
// Neither may be detached meanwhile (a mapped GPU range unmapped): the caller awaits before releasing it.
typedef struct {
  codec_job_t job;
  int nice, rc;
  napi_async_work work;
  napi_deferred deferred;
  napi_ref refs[2];
} async_job_t;

// A libuv thread's own nice value on Linux (setpriority on its thread id), raised once to `nice` so that batch
// codecs yield to the thread that feeds the GPU; never lowered.
static void nice_this_thread(int nice) {
#ifdef __linux__
  static __thread int current = 0;
  if (nice > current && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) == 0) current = nice;
#else
  (void)nice;
#endif
}

static void async_execute(napi_env env, void *data) {
  (void)env;
  async_job_t *a = data;
  nice_this_thread(a->nice);
  a->rc = a->job.encode ? run_encode(&a->job) : run_decode(&a->job);
}

static void async_complete(napi_env env, napi_status status, void *data) {
  async_job_t *a = data;
  napi_value result = NULL;
  if (status == napi_ok && a->rc == 0) {
    if (a->job.encode) result = jpeg_buffer(env, &a->job);
    else napi_get_undefined(env, &result);
  }
  if (result) {
    napi_resolve_deferred(env, a->deferred, result);
  } else {
    napi_value msg, code, err;
    napi_create_string_utf8(env, status == napi_ok ? a->job.err : "JPEG work cancelled", NAPI_AUTO_LENGTH, &msg);
    napi_create_string_utf8(env, "EJPEG", NAPI_AUTO_LENGTH, &code);
    napi_create_error(env, code, msg, &err);
    napi_reject_deferred(env, a->deferred, err);
  }
  for (int i = 0; i < 2; i++)
    if (a->refs[i]) napi_delete_reference(env, a->refs[i]);
  napi_delete_async_work(env, a->work);
  free(a);
}

static napi_value queue(napi_env env, napi_callback_info info, int encode) {
  async_job_t *a = calloc(1, sizeof *a);
  if (!a) {
    napi_throw_error(env, NULL, "imgpu-turbo: out of memory");
    return NULL;
  }
  napi_value argv[6], promise, name;
  size_t want = encode ? 5 : 3, argc = want + 1;
  if (!read_job(env, info, encode, argv, &argc, &a->job)) {
    free(a);
    return NULL;
  }
  if (argc > want) napi_get_value_int32(env, argv[want], &a->nice);
  int arrays = encode ? 1 : 2;
  for (int i = 0; i < arrays; i++) {
    if (napi_create_reference(env, argv[i], 1, &a->refs[i]) != napi_ok) goto fail;
  }
  if (napi_create_promise(env, &a->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "imgpu-turbo", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, async_execute, async_complete, a, &a->work) != napi_ok ||
      napi_queue_async_work(env, a->work) != napi_ok)
    goto fail;
  return promise;
fail:
  napi_throw_error(env, NULL, "imgpu-turbo: N-API failure");
  return NULL;
}

// decodeAsync(jpeg, out, channels, nice?) -> Promise<void>; encodeAsync(pixels, width, height, channels, quality,
// nice?) -> Promise<Buffer>: on libuv's thread pool (UV_THREADPOOL_SIZE threads), off the JavaScript thread.
static napi_value decode_async(napi_env env, napi_callback_info info) { return queue(env, info, 0); }
static napi_value encode_async(napi_env env, napi_callback_info info) { return queue(env, info, 1); }

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"header", NULL, header, NULL, NULL, NULL, napi_default, NULL},
      {"decode", NULL, decode, NULL, NULL, NULL, napi_default, NULL},
      {"encode", NULL, encode, NULL, NULL, NULL, napi_default, NULL},
      {"decodeAsync", NULL, decode_async, NULL, NULL, NULL, napi_default, NULL},
      {"encodeAsync", NULL, encode_async, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}
