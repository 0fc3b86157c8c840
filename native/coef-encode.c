// The entropy-coding half of imgpu's GPU JPEG encoder: quantized DCT coefficients (computed on the GPU, exactly
// as libjpeg's colour conversion, downsampling, islow FDCT and quantization compute them) are written to a JPEG by
// libjpeg's transcoding API (jpeg_write_coefficients), with the compressor set up as cv2.imwrite sets it up
// (jpeg_set_defaults, jpeg_set_quality(q, TRUE), no optimize): headers, tables and Huffman coding are libjpeg's
// own, so the file is byte-identical to cv2.imwrite's from the same pixels. The tables the GPU quantizes with come
// from the same library call (quantTables), never from a copy of its formula. Node-API; the encode runs on the
// calling thread or on libuv's threads (encodeAsync), so several photos are entropy-coded at once.
#include "napi-util.h"
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
#include "jpeg-jump.h"
#include <stdlib.h>
#include <string.h>

// A growing malloc'd output (jpeg_mem_dest would do, but its buffer cannot be freed after an error).
typedef struct {
  struct jpeg_destination_mgr pub;
  unsigned char *buf;
  size_t cap;
} dest_mgr_t;

static void dest_init(j_compress_ptr c) {
  dest_mgr_t *d = (dest_mgr_t *)c->dest;
  d->pub.next_output_byte = d->buf;
  d->pub.free_in_buffer = d->cap;
}

static boolean dest_grow(j_compress_ptr c) {
  dest_mgr_t *d = (dest_mgr_t *)c->dest;
  unsigned char *more = realloc(d->buf, d->cap * 2);
  if (!more) ERREXIT1(c, JERR_OUT_OF_MEMORY, 0);
  d->buf = more;
  d->pub.next_output_byte = more + d->cap;
  d->pub.free_in_buffer = d->cap;
  d->cap *= 2;
  return TRUE;
}

static void dest_term(j_compress_ptr c) { (void)c; }

// The job, free of JavaScript values so that it can run on a libuv thread.
typedef struct {
  const JCOEF *coefs;
  size_t count;             // int16 elements in coefs
  int w, h, components, quality, h_samp, v_samp;  // h_samp/v_samp: the luma's sampling factors (chroma 1x1)
  int headers_only;         // stop before the first block: the result is the file's headers (SOI .. SOS)
  unsigned char *jpeg;      // malloc'd result
  unsigned long size;
  char err[JMSG_LENGTH_MAX + 64];
} coef_job_t;

// The compressor set up as cv2.imwrite sets it up (OpenCV 4.6 grfmt_jpeg.cpp): defaults for the input colour space
// (JFIF, YCbCr or gray, standard Huffman tables, islow DCT), then the quality limited to baseline values.
static void setup(j_compress_ptr c, int w, int h, int components, int quality) {
  c->image_width = (JDIMENSION)w;
  c->image_height = (JDIMENSION)h;
  c->input_components = components;
  c->in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(c);
  jpeg_set_quality(c, quality, TRUE);
}

// Blocks of component `ci` in one MCU row of the coefficient layout: the image's MCUs times the component's
// horizontal factor (a component's virtual array is that wide).
static JDIMENSION row_blocks(j_compress_ptr c, int ci) {
  JDIMENSION mcu_cols = (c->image_width + (JDIMENSION)(c->max_h_samp_factor * DCTSIZE) - 1) / (JDIMENSION)(c->max_h_samp_factor * DCTSIZE);
  return mcu_cols * (JDIMENSION)c->comp_info[ci].h_samp_factor;
}

static JDIMENSION mcu_rows(j_compress_ptr c) {
  return (c->image_height + (JDIMENSION)(c->max_v_samp_factor * DCTSIZE) - 1) / (JDIMENSION)(c->max_v_samp_factor * DCTSIZE);
}

// Int16 coefficients the layout holds: per MCU row, per component, v_samp rows of row_blocks blocks of 64.
static size_t layout_count(j_compress_ptr c) {
  size_t per_row = 0;
  for (int ci = 0; ci < c->num_components; ci++) per_row += (size_t)c->comp_info[ci].v_samp_factor * row_blocks(c, ci) * DCTSIZE2;
  return per_row * mcu_rows(c);
}

// The coefficients as libjpeg's "virtual arrays", without a copy: jpeg_write_coefficients reads a component's block
// rows through the memory manager's access_virt_barray method, which is replaced here (the manager's methods are
// public, meant to be overridden) by one returning row pointers into the caller's buffer for this encoder's arrays,
// and deferring to libjpeg's own for any other. The transcoder only reads the rows (its dummy blocks are its own).
typedef struct {
  JBLOCKROW *rows[MAX_COMPONENTS];  // per component, every block row of the layout, top to bottom
  int components;
  jmp_buf *stop;  // where set, the first access (the coding's start, all headers written) jumps there
  JBLOCKARRAY (*access)(j_common_ptr, jvirt_barray_ptr, JDIMENSION, JDIMENSION, boolean);  // libjpeg's own
} coef_source_t;

static JBLOCKARRAY access_rows(j_common_ptr cinfo, jvirt_barray_ptr ptr, JDIMENSION start_row, JDIMENSION num_rows, boolean writable) {
  coef_source_t *s = cinfo->client_data;
  if (s->stop) longjmp(*s->stop, 1);
  for (int ci = 0; ci < s->components; ci++)
    if (ptr == (jvirt_barray_ptr)&s->rows[ci]) return s->rows[ci] + start_row;
  return s->access(cinfo, ptr, start_row, num_rows, writable);
}

// Points each component's block rows into `coefs` (MCU row by MCU row, component by component; NULL: headers only,
// no block is read) and hooks the access method; `arrays` receives the handles to pass to jpeg_write_coefficients.
static void point_rows(j_compress_ptr c, coef_source_t *s, const JCOEF *coefs, jvirt_barray_ptr *arrays) {
  size_t at = 0;
  s->components = c->num_components;
  for (int ci = 0; ci < c->num_components; ci++) {
    s->rows[ci] = (*c->mem->alloc_small)((j_common_ptr)c, JPOOL_IMAGE, sizeof(JBLOCKROW) * mcu_rows(c) * (size_t)c->comp_info[ci].v_samp_factor);
    arrays[ci] = (jvirt_barray_ptr)&s->rows[ci];
  }
  for (JDIMENSION r = 0; coefs && r < mcu_rows(c); r++) {
    for (int ci = 0; ci < c->num_components; ci++) {
      int v = c->comp_info[ci].v_samp_factor;
      for (int y = 0; y < v; y++, at += (size_t)row_blocks(c, ci) * DCTSIZE2) s->rows[ci][r * (JDIMENSION)v + (JDIMENSION)y] = (JBLOCKROW)(coefs + at);
    }
  }
  s->access = c->mem->access_virt_barray;
  c->mem->access_virt_barray = access_rows;
  c->client_data = s;
}

static int run_encode(coef_job_t *j) {
  struct jpeg_compress_struct c;
  jump_error_t err;
  // A quarter of the pixel bytes holds a photo at quality 95; a larger file grows it.
  dest_mgr_t dest = {{0}, NULL, j->headers_only ? 4096 : (size_t)j->w * (size_t)j->h * (size_t)j->components / 4 + 4096};
  dest.pub.init_destination = dest_init;
  dest.pub.empty_output_buffer = dest_grow;
  dest.pub.term_destination = dest_term;
  c.err = jump_errors(&err, 0);
  if (setjmp(err.jump)) {
    snprintf(j->err, sizeof j->err, "cannot encode JPEG coefficients: %s", err.msg);
    jpeg_destroy_compress(&c);
    free(dest.buf);
    return -1;
  }
  jpeg_create_compress(&c);
  setup(&c, j->w, j->h, j->components, j->quality);
  c.comp_info[0].h_samp_factor = j->h_samp;
  c.comp_info[0].v_samp_factor = j->v_samp;
  c.max_h_samp_factor = j->h_samp;  // as jcmaster's initial_setup will compute them, for the layout below
  c.max_v_samp_factor = j->v_samp;
  if (!j->headers_only && layout_count(&c) != j->count) {
    snprintf(j->err, sizeof j->err, "coefficients: %zu values for a %dx%d image with %d components, which needs %zu", j->count, j->w, j->h,
             j->components, layout_count(&c));
    jpeg_destroy_compress(&c);
    return -1;
  }
  jvirt_barray_ptr arrays[MAX_COMPONENTS];
  coef_source_t source;
  jmp_buf stop;
  point_rows(&c, &source, j->headers_only ? NULL : j->coefs, arrays);
  source.stop = j->headers_only ? &stop : NULL;
  if (!(dest.buf = malloc(dest.cap))) ERREXIT1(&c, JERR_OUT_OF_MEMORY, 0);
  c.dest = &dest.pub;
  // jpeg_write_coefficients writes SOI and JFIF; jpeg_finish_compress's first pass writes DQT, SOF0, DHT and SOS,
  // then codes the blocks (where headers_only stops it, at the first block row's access) and writes EOI.
  if (!setjmp(stop)) {
    jpeg_write_coefficients(&c, arrays);
    jpeg_finish_compress(&c);
  }
  jpeg_destroy_compress(&c);
  j->size = dest.cap - dest.pub.free_in_buffer;
  // The buffer was sized for a large file; the Buffer handed to JavaScript keeps only the file's bytes.
  unsigned char *fit = realloc(dest.buf, j->size ? j->size : 1);
  j->jpeg = fit ? fit : dest.buf;
  return 0;
}

// The encoded bytes as a Buffer, handed to JavaScript without a copy where the runtime allows external buffers.
static napi_value jpeg_buffer(napi_env env, coef_job_t *j) { return napi_util_owned_buffer(env, j->jpeg, j->size, free); }

static int check_job(napi_env env, const coef_job_t *j, const char *usage);

// Reads (coefs: Int16Array, width, height, components: 1 | 3, quality, hSamp, vSamp) into `j` (the arguments into
// argv); 0 with a TypeError thrown when they are wrong.
static int read_job(napi_env env, napi_callback_info info, napi_value *argv, coef_job_t *j) {
  static const char usage[] = "encode(coefs: Int16Array, width, height, components: 1 | 3, quality: 1..100, hSamp: 1 | 2, vSamp: 1 | 2)";
  void *data;
  memset(j, 0, sizeof *j);
  if (!napi_util_args(env, info, argv, 7, "hiiiiii", usage, &data, &j->count, &j->w, &j->h, &j->components, &j->quality, &j->h_samp, &j->v_samp))
    return 0;
  j->coefs = data;
  return check_job(env, j, usage);
}

// 1 where the job's image and settings are ones the encoder takes, else 0 with a TypeError (`usage`) thrown.
static int check_job(napi_env env, const coef_job_t *j, const char *usage) {
  if ((j->components != 1 && j->components != 3) || j->w <= 0 || j->h <= 0 || j->w > JPEG_MAX_DIMENSION || j->h > JPEG_MAX_DIMENSION ||
      j->quality < 1 || j->quality > 100 || j->h_samp < 1 || j->h_samp > 2 || j->v_samp < 1 || j->v_samp > 2 ||
      (j->components == 1 && (j->h_samp != 1 || j->v_samp != 1))) {
    napi_throw_type_error(env, NULL, usage);
    return 0;
  }
  return 1;
}

// encode(coefs, width, height, components, quality, hSamp, vSamp) -> Buffer, on this thread.
static napi_value encode(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  coef_job_t j;
  if (!read_job(env, info, argv, &j)) return NULL;
  if (run_encode(&j) != 0) {
    napi_throw_error(env, "EJPEG", j.err);
    return NULL;
  }
  return jpeg_buffer(env, &j);
}

// headers(width, height, components, quality, hSamp, vSamp) -> Buffer: the bytes encode() writes before the first
// coded block (SOI, JFIF APP0, DQT, SOF0, DHT, SOS), from libjpeg's own marker writer — for the GPU entropy coder,
// which writes the rest (the coded blocks, then EOI).
static napi_value headers(napi_env env, napi_callback_info info) {
  static const char usage[] = "headers(width, height, components: 1 | 3, quality: 1..100, hSamp: 1 | 2, vSamp: 1 | 2)";
  napi_value argv[6];
  coef_job_t j;
  memset(&j, 0, sizeof j);
  if (!napi_util_args(env, info, argv, 6, "iiiiii", usage, &j.w, &j.h, &j.components, &j.quality, &j.h_samp, &j.v_samp) || !check_job(env, &j, usage))
    return NULL;
  j.headers_only = 1;
  if (run_encode(&j) != 0) {
    napi_throw_error(env, "EJPEG", j.err);
    return NULL;
  }
  return jpeg_buffer(env, &j);
}

// The async variant: the same work on a libuv thread, the coefficient array referenced until the promise settles
// (the caller keeps a mapped GPU range mapped until then).
static int run_async(void *job) { return run_encode(job); }

static napi_value resolve_async(napi_env env, void *job) { return jpeg_buffer(env, job); }

static void failure_async(void *job, const char **code, const char **message) {
  *code = "EJPEG";
  *message = ((coef_job_t *)job)->err;
}

static const napi_util_async_t ENCODE_ASYNC = {"imgpu-jpegenc", run_async, resolve_async, failure_async};

// encodeAsync(coefs, width, height, components, quality, hSamp, vSamp) -> Promise<Buffer>, on libuv's threads.
static napi_value encode_async(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  coef_job_t *j = malloc(sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "imgpu-jpegenc: out of memory");
    return NULL;
  }
  if (!read_job(env, info, argv, j)) {
    free(j);
    return NULL;
  }
  return napi_util_queue(env, &ENCODE_ASYNC, j, argv, 1);
}

// quantTables(quality) -> Uint16Array(128): the luma and chroma quantization tables cv2.imwrite writes at that
// quality, in natural (row-major) order, as libjpeg's jpeg_set_quality(quality, TRUE) makes them.
static napi_value quant_tables(napi_env env, napi_callback_info info) {
  napi_value argv[1], ab, out;
  int quality;
  if (!napi_util_args(env, info, argv, 1, "i", "quantTables(quality: 1..100)", &quality)) return NULL;
  if (quality < 1 || quality > 100) {
    napi_throw_type_error(env, NULL, "quantTables(quality: 1..100)");
    return NULL;
  }
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);  // nothing below can fail for valid arguments
  jpeg_create_compress(&c);
  setup(&c, 8, 8, 3, quality);
  void *data;
  if (napi_create_arraybuffer(env, 2 * DCTSIZE2 * sizeof(UINT16), &data, &ab) != napi_ok ||
      napi_create_typedarray(env, napi_uint16_array, 2 * DCTSIZE2, ab, 0, &out) != napi_ok) {
    jpeg_destroy_compress(&c);
    napi_throw_error(env, NULL, "imgpu-jpegenc: N-API failure");
    return NULL;
  }
  for (int t = 0; t < 2; t++) memcpy((UINT16 *)data + t * DCTSIZE2, c.quant_tbl_ptrs[t]->quantval, DCTSIZE2 * sizeof(UINT16));
  jpeg_destroy_compress(&c);
  return out;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"encode", NULL, encode, NULL, NULL, NULL, napi_default, NULL},
      {"encodeAsync", NULL, encode_async, NULL, NULL, NULL, napi_default, NULL},
      {"quantTables", NULL, quant_tables, NULL, NULL, NULL, napi_default, NULL},
      {"headers", NULL, headers, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}
