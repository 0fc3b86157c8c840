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
#include <string.h>

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

// decode(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3): fills out (width*height*channels bytes). A warning
// (e.g. a truncated file) is an error, as in sharp's default, so a damaged file is reported, not half-gray.
static napi_value decode(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *src, *dst;
  size_t len, cap;
  int channels;
  if (argc < 3 || !get_bytes(env, argv[0], &src, &len) || !get_bytes(env, argv[1], &dst, &cap) ||
      napi_get_value_int32(env, argv[2], &channels) != napi_ok || (channels != 1 && channels != 3)) {
    napi_throw_type_error(env, NULL, "decode(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3)");
    return NULL;
  }
  int w, hh, samp, cs;
  tjhandle h = open_header(env, src, len, &w, &hh, &samp, &cs);
  if (!h) return NULL;
  if ((size_t)w * (size_t)hh * (size_t)channels > cap) {
    tjDestroy(h);
    napi_throw_range_error(env, NULL, "decode: output buffer too small");
    return NULL;
  }
  int pf = channels == 1 ? TJPF_GRAY : TJPF_RGB;
  if (tjDecompress2(h, src, (unsigned long)len, dst, w, 0, hh, pf, TJFLAG_STOPONWARNING) != 0) {
    throw_tj(env, h, "corrupt or truncated JPEG");
    tjDestroy(h);
    return NULL;
  }
  tjDestroy(h);
  return NULL;
}

static void free_tj(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  tjFree(data);
}

// encode(pixels: Uint8Array, width, height, channels: 1 | 3, quality) -> Buffer. Accurate DCT (TurboJPEG would
// pick the fast one below quality 96, as cv2 does not). Colour is 4:2:0 and gray is
// one component, cv2.imwrite's defaults; the encoded bytes are handed to JS without a copy.
static napi_value encode(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *src;
  size_t len;
  int w, hh, channels, quality;
  if (argc < 5 || !get_bytes(env, argv[0], &src, &len) || napi_get_value_int32(env, argv[1], &w) != napi_ok ||
      napi_get_value_int32(env, argv[2], &hh) != napi_ok || napi_get_value_int32(env, argv[3], &channels) != napi_ok ||
      napi_get_value_int32(env, argv[4], &quality) != napi_ok || (channels != 1 && channels != 3) || w <= 0 || hh <= 0 ||
      (size_t)w * (size_t)hh * (size_t)channels > len) {
    napi_throw_type_error(env, NULL, "encode(pixels: Uint8Array, width, height, channels: 1 | 3, quality)");
    return NULL;
  }
  tjhandle h = tjInitCompress();
  unsigned char *jpeg = NULL;
  unsigned long size = 0;
  int pf = channels == 1 ? TJPF_GRAY : TJPF_RGB;
  int samp = channels == 1 ? TJSAMP_GRAY : TJSAMP_420;
  if (tjCompress2(h, src, w, 0, hh, pf, &jpeg, &size, samp, quality, TJFLAG_ACCURATEDCT) != 0) {
    throw_tj(env, h, "cannot encode JPEG");
    tjFree(jpeg);
    tjDestroy(h);
    return NULL;
  }
  tjDestroy(h);
  napi_value out;
  if (napi_create_external_buffer(env, size, jpeg, free_tj, NULL, &out) != napi_ok) {
    // Runtimes that forbid external buffers: copy instead.
    void *copy;
    napi_status s = napi_create_buffer_copy(env, size, jpeg, &copy, &out);
    tjFree(jpeg);
    CHECK(env, s);
  }
  return out;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"header", NULL, header, NULL, NULL, NULL, napi_default, NULL},
      {"decode", NULL, decode, NULL, NULL, NULL, napi_default, NULL},
      {"encode", NULL, encode, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}
