// imgpu's PNG decoder: a Node-API binding of libpng 1.6, the library behind cv2.imread's PNG reads. It exists for two
// reasons. sharp (libvips, libspng inside) is slower than libpng at the 12 MP photos of a batch, and a colour PNG read
// gray by cv2.imread(IMREAD_GRAYSCALE) is converted by libpng itself (png_set_rgb_to_gray: its own fixed-point
// weights, gamma tables where the file has gAMA), which no conversion after decoding reproduces. So this file asks
// libpng for the same transformations, in the same order, as OpenCV 4.6's PngDecoder::readData
// (modules/imgcodecs/src/grfmt_png.cpp), except that colour stays RGB (no png_set_bgr) and 16-bit samples are never
// stripped (imgpu reads at the file's depth, as IMREAD_ANYDEPTH). Pixels are cv2.imread's bit for bit.
// Decoding writes into a caller-given buffer (shared memory), row by row, so no copy follows; the file's eXIf chunk
// (before or after the image data) comes back for the caller to apply its orientation, as cv2.imread does.
#include "napi-util.h"
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PNG_ERR_LEN 200

// A read in memory: the PNG's bytes, how far libpng has read, and libpng's error message when it gives up.
typedef struct {
  const unsigned char *src;
  size_t len, at;
  char err[PNG_ERR_LEN];
} png_source_t;

// libpng's read callback over a memory buffer: a file that ends early is an error (cv2's message for imdecode).
static void read_memory(png_structp png, png_bytep dst, size_t n) {
  png_source_t *s = png_get_io_ptr(png);
  if (n > s->len - s->at) png_error(png, "PNG input buffer is incomplete");
  memcpy(dst, s->src + s->at, n);
  s->at += n;
}

// libpng's errors keep their message for the caller (the error pointer is a read's or a write's `err`, PNG_ERR_LEN
// bytes); its warnings (an ancillary chunk's bad CRC, skipped) are silent, as in cv2, which decodes through them.
static void on_error(png_structp png, png_const_charp msg) {
  snprintf(png_get_error_ptr(png), PNG_ERR_LEN, "%s", msg);
  png_longjmp(png, 1);
}
static void on_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

// The output layout: after png_read_update_info, what png_read_image writes per pixel.
typedef struct {
  png_uint_32 width, height;
  int channels, depth;
  size_t rowbytes;
  // after a decode: the eXIf chunk's bytes (malloc'd, the caller frees them), or NULL
  unsigned char *exif;
  png_uint_32 exif_len;
} png_layout_t;

// The eXIf chunk libpng kept in `info` (read before or after the image data), copied into lay->exif.
static void keep_exif(png_structp png, png_infop info, png_layout_t *lay) {
  png_bytep exif = NULL;
  png_uint_32 n = 0;
  lay->exif = NULL;
  if (png_get_valid(png, info, PNG_INFO_eXIf) && png_get_eXIf_1(png, info, &n, &exif) && exif && n && (lay->exif = malloc(n))) {
    memcpy(lay->exif, exif, n);
    lay->exif_len = n;
  }
}

// cv2.imread's transformations for a read of one channel (`gray`: IMREAD_GRAYSCALE | IMREAD_ANYDEPTH) or of the
// file's own channels (IMREAD_UNCHANGED, except that gray+alpha drops alpha as imgpu's reads do): alpha stripped below
// 4 channels, tRNS made alpha at 4 (an RGB or palette file with tRNS), palettes expanded, 1/2/4-bit gray scaled to 8
// bits, colour to gray by libpng with cv2's weights, native byte order for 16 bits, Adam7 passes combined.
static void set_transforms(png_structp png, png_infop info, int gray) {
  int color_type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  int alpha_out = !gray && (color_type == PNG_COLOR_TYPE_RGB_ALPHA ||
                            ((color_type == PNG_COLOR_TYPE_RGB || color_type == PNG_COLOR_TYPE_PALETTE) && png_get_valid(png, info, PNG_INFO_tRNS)));
  const png_uint_16 one = 1;
  if (depth == 16 && *(const unsigned char *)&one == 1) png_set_swap(png);
  if (alpha_out) png_set_tRNS_to_alpha(png);
  else png_set_strip_alpha(png);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if ((color_type & PNG_COLOR_MASK_COLOR) == 0 && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (gray) png_set_rgb_to_gray(png, PNG_ERROR_ACTION_NONE, 0.299, 0.587);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
}

// A read struct over `src` with its info struct (into *info; NULL where memory ran out), errors kept in src->err.
static png_structp open_png(png_source_t *src, png_infop *info) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, src->err, on_error, on_warning);
  if (!png) return NULL;
  *info = png_create_info_struct(png);
  png_set_read_fn(png, src, read_memory);
  return png;
}

// The layout of `src`'s pixels read as `gray` says, into `lay`; with `rows` (lay->height row pointers, filled from
// `dst`), the pixels too, and the chunks after them checked (png_read_end: a damaged IEND is refused, as by cv2).
// 0, or -1 with src->err set.
static int read_png(png_source_t *src, int gray, png_layout_t *lay, unsigned char *dst, size_t cap) {
  png_infop info = NULL;
  png_structp png = open_png(src, &info);
  png_bytep *volatile rows = NULL;
  volatile int rc = -1;
  lay->exif = NULL;
  if (!png || !info) {
    snprintf(src->err, sizeof src->err, "out of memory");
  } else if (setjmp(png_jmpbuf(png)) == 0) {
    png_read_info(png, info);
    set_transforms(png, info, gray);
    lay->width = png_get_image_width(png, info);
    lay->height = png_get_image_height(png, info);
    lay->channels = png_get_channels(png, info);
    lay->depth = png_get_bit_depth(png, info);
    lay->rowbytes = png_get_rowbytes(png, info);
    if (dst && lay->rowbytes * lay->height > cap) {
      snprintf(src->err, sizeof src->err, "decode: output buffer too small");
    } else if (dst) {
      rows = png_malloc(png, lay->height * sizeof *rows);
      for (png_uint_32 y = 0; y < lay->height; y++) rows[y] = dst + y * lay->rowbytes;
      png_read_image(png, rows);
      png_read_end(png, info);
      keep_exif(png, info, lay);
      rc = 0;
    } else {
      rc = 0;
    }
  }
  if (png && rows) png_free(png, rows);
  png_destroy_read_struct(png ? &png : NULL, info ? &info : NULL, NULL);
  return rc;
}

static napi_value throw_png(napi_env env, const png_source_t *src) {
  char msg[240];
  snprintf(msg, sizeof msg, "libpng: %s", src->err);
  napi_throw_error(env, "EPNG", msg);
  return NULL;
}

// header(png: Uint8Array, gray: boolean) -> { width, height, channels, depth }: what decode will write.
static napi_value header(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  unsigned char *data;
  size_t len;
  bool gray;
  if (!napi_util_args(env, info, argv, 2, "bz", "header(png: Uint8Array, gray: boolean)", &data, &len, &gray)) return NULL;
  png_source_t src = {data, len, 0, ""};
  png_layout_t lay;
  if (read_png(&src, gray, &lay, NULL, 0) != 0) return throw_png(env, &src);
  static const char *const keys[] = {"width", "height", "channels", "depth"};
  const double values[] = {lay.width, lay.height, lay.channels, lay.depth};
  napi_value obj = napi_util_numbers(env, keys, values, 4);
  if (!obj) napi_throw_error(env, NULL, "imgpu-png: N-API failure");
  return obj;
}

// decode(png: Uint8Array, out: Uint8Array, gray: boolean) -> Buffer | undefined: the pixels header() describes, rows
// packed, into `out`; returns the eXIf chunk's bytes (a TIFF header and IFDs), if the file has one.
static napi_value decode(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  unsigned char *data, *out;
  size_t len, cap;
  bool gray;
  if (!napi_util_args(env, info, argv, 3, "bbz", "decode(png: Uint8Array, out: Uint8Array, gray: boolean)", &data, &len, &out, &cap, &gray))
    return NULL;
  png_source_t src = {data, len, 0, ""};
  png_layout_t lay;
  if (read_png(&src, gray, &lay, out, cap) != 0) return throw_png(env, &src);
  napi_value exif = NULL;
  if (lay.exif && napi_create_buffer_copy(env, lay.exif_len, lay.exif, NULL, &exif) != napi_ok) exif = NULL;
  free(lay.exif);
  return exif;
}

// ---- Encoding: cv2.imwrite's PNG bytes ----
// The settings of OpenCV's PngEncoder::write (modules/imgcodecs/src/grfmt_png.cpp; the same in 4.6 and 5.0): without
// IMWRITE_PNG_COMPRESSION, every row filtered with Sub, zlib level 1 (Z_BEST_SPEED) and strategy Z_RLE; with it (a
// level 0-9), libpng's own filter choice (all five, per row) at that level with the default strategy. Rows are
// handed to libpng as they lie (imgpu's colour is RGB, cv2's BGR: cv2 asks png_set_bgr, so both store RGB), 16-bit
// samples in the machine's byte order swapped to PNG's big-endian as cv2 swaps them. Equal settings, libpng 1.6 and
// zlib's deflate make equal bytes: zlib comes from the system (libpng16 links it), as for Debian's and pip's cv2.
#define CV2_DEFAULT_LEVEL -1

// The encoded file, grown as libpng writes it.
typedef struct {
  unsigned char *data;
  size_t len, cap;
  char err[PNG_ERR_LEN];
} png_sink_t;

// libpng's write callback into memory; running out of memory is libpng's error, as a failed write is.
static void write_memory(png_structp png, png_bytep src, size_t n) {
  png_sink_t *s = png_get_io_ptr(png);
  if (n > s->cap - s->len) {
    size_t cap = s->cap ? s->cap : 1 << 16;
    while (n > cap - s->len) cap *= 2;
    unsigned char *grown = realloc(s->data, cap);
    if (!grown) png_error(png, "out of memory");
    s->data = grown;
    s->cap = cap;
  }
  memcpy(s->data + s->len, src, n);
  s->len += n;
}
static void flush_memory(png_structp png) { (void)png; }

// What encode writes: the pixels (rows packed), their layout, and cv2's level (CV2_DEFAULT_LEVEL or 0-9).
typedef struct {
  const unsigned char *pixels;
  png_uint_32 width, height;
  int channels, depth, level;
} png_image_t;

// cv2's compression settings on `png` for `level` (see above).
static void set_cv2_compression(png_structp png, int level) {
  if (level == CV2_DEFAULT_LEVEL) {
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_compression_level(png, 1);
    png_set_compression_strategy(png, 3); // Z_RLE (zlib.h is not included: libpng's own header suffices)
  } else {
    png_set_compression_level(png, level);
    png_set_compression_strategy(png, 0); // Z_DEFAULT_STRATEGY
  }
}

// PNG colour types by channel count, as cv2 picks them (1 gray, 3 RGB, 4 RGBA; 2 is not written).
static const int COLOR_TYPES[] = {0, PNG_COLOR_TYPE_GRAY, -1, PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};

// `img` as a PNG into `out` (its data malloc'd, the caller frees it): 0, or -1 with out->err set.
static int write_png(const png_image_t *img, png_sink_t *out) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, out->err, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  png_bytep *volatile rows = NULL;
  volatile int rc = -1;
  if (!png || !info) {
    snprintf(out->err, sizeof out->err, "out of memory");
  } else if (setjmp(png_jmpbuf(png)) == 0) {
    const png_uint_16 one = 1;
    size_t stride = (size_t)img->width * img->channels * (img->depth / 8);
    png_set_write_fn(png, out, write_memory, flush_memory);
    set_cv2_compression(png, img->level);
    png_set_IHDR(png, info, img->width, img->height, img->depth, COLOR_TYPES[img->channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (img->depth == 16 && *(const unsigned char *)&one == 1) png_set_swap(png);
    rows = png_malloc(png, img->height * sizeof *rows);
    for (png_uint_32 y = 0; y < img->height; y++) rows[y] = (png_bytep)img->pixels + y * stride;
    png_write_image(png, rows);
    png_write_end(png, info);
    rc = 0;
  }
  if (png && rows) png_free(png, rows);
  png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
  return rc;
}

// The pixels' layout read from encode's arguments and checked against the array's length: 0 with a TypeError thrown
// where it does not fit (the TypeScript caller validates first; this guards the memory).
static int image_args(napi_env env, napi_callback_info info, png_image_t *img) {
  napi_value argv[6];
  unsigned char *px;
  size_t len;
  int w, h;
  const char *usage = "encode(pixels: Uint8Array, width, height, channels: 1|3|4, depth: 8|16, level: -1|0-9)";
  if (!napi_util_args(env, info, argv, 6, "biiiii", usage, &px, &len, &w, &h, &img->channels, &img->depth, &img->level)) return 0;
  int ok = w > 0 && h > 0 && (img->channels == 1 || img->channels == 3 || img->channels == 4) && (img->depth == 8 || img->depth == 16) &&
           img->level >= CV2_DEFAULT_LEVEL && img->level <= 9 && (size_t)w * h * img->channels * (img->depth / 8) <= len;
  if (!ok) {
    napi_throw_type_error(env, NULL, usage);
    return 0;
  }
  img->pixels = px;
  img->width = w;
  img->height = h;
  return 1;
}

// encode(pixels: Uint8Array, width, height, channels, depth, level) -> Buffer: the PNG cv2.imwrite writes of these
// pixels (gray, gray+alpha, RGB, RGBA; 16-bit samples in the machine's byte order), `level` -1 for cv2's default
// (no IMWRITE_PNG_COMPRESSION) or the level IMWRITE_PNG_COMPRESSION gives. The file is copied into a Buffer of
// Node's own (~1 ms for 5 MB) rather than handed over as an external one, whose memory the collector does not see.
static napi_value encode(napi_env env, napi_callback_info info) {
  png_image_t img;
  if (!image_args(env, info, &img)) return NULL;
  png_sink_t out = {NULL, 0, 0, ""};
  if (write_png(&img, &out) != 0) {
    free(out.data);
    char msg[240];
    snprintf(msg, sizeof msg, "libpng: %s", out.err);
    napi_throw_error(env, "EPNG", msg);
    return NULL;
  }
  napi_value buf = NULL;
  void *copy;
  if (napi_create_buffer_copy(env, out.len, out.data, &copy, &buf) != napi_ok) buf = NULL;
  free(out.data);
  if (!buf) napi_throw_error(env, NULL, "imgpu-png: N-API failure");
  return buf;
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
