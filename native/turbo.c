// imgpu's JPEG codec: a Node-API binding of libjpeg-turbo's TurboJPEG API, the library OpenCV's imread/imwrite
// use. It exists because sharp (libvips) decodes and encodes JPEG 3–10× slower than cv2 on the same image and
// cannot decode only the luma, which is what cv2.imread(path, IMREAD_GRAYSCALE) returns. Accurate (islow) DCT
// and fancy upsampling, as cv2: decoded pixels are bit-identical to cv2.imread's. Decoding writes into a
// caller-given buffer (shared memory, or a GPU staging buffer), so no copy follows. Node-API: one binary serves
// every Node version and every worker thread.
#include "napi-util.h"
#include <turbojpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

static napi_value throw_tj(napi_env env, tjhandle h, const char *what) {
  char msg[300];
  snprintf(msg, sizeof msg, "%s: %s", what, tjGetErrorStr2(h));
  napi_throw_error(env, "EJPEG", msg);
  return NULL;
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
  napi_value argv[1];
  unsigned char *src;
  size_t len;
  if (!napi_util_args(env, info, argv, 1, "b", "header(jpeg: Uint8Array)", &src, &len)) return NULL;
  int w, hh, samp, cs;
  tjhandle h = open_header(env, src, len, &w, &hh, &samp, &cs);
  if (!h) return NULL;
  tjDestroy(h);
  static const char *const keys[] = {"width", "height", "subsampling", "colorspace"};
  const double values[] = {w, hh, samp, cs};
  napi_value obj = napi_util_numbers(env, keys, values, 4);
  if (!obj) napi_throw_error(env, NULL, "imgpu-turbo: N-API failure");
  return obj;
}

// The codec's work, free of JavaScript values so that it can run on a libuv thread: 0, or -1 with `err` set.
typedef struct {
  // inputs
  int encode;                 // 0: decode src (a JPEG) into dst; 1: encode src (pixels) into jpeg
  unsigned char *src, *dst;
  size_t len, cap;
  int w, h, channels, quality;
  int nice;                   // the async variants' thread priority (nice_this_thread)
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

static void free_tj(void *data) { tjFree(data); }

// The encoded bytes as a Buffer, handed to JS without a copy where the runtime allows external buffers.
static napi_value jpeg_buffer(napi_env env, codec_job_t *j) { return napi_util_owned_buffer(env, j->jpeg, j->size, free_tj); }

// Reads (jpeg, out, channels) for decode or (pixels, width, height, channels, quality) for encode into `j`, and
// up to `max` arguments into argv (the async variants' take one more, the nice value): their count, or 0 with a
// TypeError thrown when they are wrong.
static size_t read_job(napi_env env, napi_callback_info info, int encode, napi_value *argv, size_t max, codec_job_t *j) {
  static const char *const usage[] = {"decode(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3)",
                                      "encode(pixels: Uint8Array, width, height, channels: 1 | 3, quality)"};
  memset(j, 0, sizeof *j);
  j->encode = encode;
  size_t argc = encode ? napi_util_args(env, info, argv, max, "biiii", usage[1], &j->src, &j->len, &j->w, &j->h, &j->channels, &j->quality)
                       : napi_util_args(env, info, argv, max, "bbi", usage[0], &j->src, &j->len, &j->dst, &j->cap, &j->channels);
  if (!argc) return 0;
  if ((j->channels != 1 && j->channels != 3) ||
      (encode && (j->w <= 0 || j->h <= 0 || (size_t)j->w * (size_t)j->h * (size_t)j->channels > j->len))) {
    napi_throw_type_error(env, NULL, usage[encode]);
    return 0;
  }
  return argc;
}

// decode(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3): fills out (width*height*channels bytes).
static napi_value decode(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  codec_job_t j;
  if (!read_job(env, info, 0, argv, 3, &j)) return NULL;
  if (run_decode(&j) != 0) napi_throw_error(env, "EJPEG", j.err);
  return NULL;
}

// encode(pixels: Uint8Array, width, height, channels: 1 | 3, quality) -> Buffer.
static napi_value encode(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  codec_job_t j;
  if (!read_job(env, info, 1, argv, 5, &j)) return NULL;
  if (run_encode(&j) != 0) {
    napi_throw_error(env, "EJPEG", j.err);
    return NULL;
  }
  return jpeg_buffer(env, &j);
}

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

// The async variants: the same work on a libuv thread, the arrays referenced (alive) until the promise settles.
// Neither may be detached meanwhile (a mapped GPU range unmapped): the caller awaits before releasing it.
static int run_async(void *job) {
  codec_job_t *j = job;
  nice_this_thread(j->nice);
  return j->encode ? run_encode(j) : run_decode(j);
}

static napi_value resolve_async(napi_env env, void *job) {
  codec_job_t *j = job;
  napi_value undefined;
  if (j->encode) return jpeg_buffer(env, j);
  return napi_get_undefined(env, &undefined) == napi_ok ? undefined : NULL;
}

static void failure_async(void *job, const char **code, const char **message) {
  *code = "EJPEG";
  *message = ((codec_job_t *)job)->err;
}

static const napi_util_async_t CODEC_ASYNC = {"imgpu-turbo", run_async, resolve_async, failure_async};

static napi_value queue(napi_env env, napi_callback_info info, int encode) {
  codec_job_t *j = malloc(sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "imgpu-turbo: out of memory");
    return NULL;
  }
  napi_value argv[6];
  size_t want = encode ? 5 : 3, argc = read_job(env, info, encode, argv, want + 1, j);
  if (!argc) {
    free(j);
    return NULL;
  }
  if (argc > want) napi_get_value_int32(env, argv[want], &j->nice);
  return napi_util_queue(env, &CODEC_ASYNC, j, argv, encode ? 1 : 2);
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
