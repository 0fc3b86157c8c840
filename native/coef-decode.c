// The CPU half of imgpu's GPU JPEG decoder (src/node/jpeg-gpu-decode.ts): entropy (Huffman or arithmetic) decoding
// to quantized DCT coefficients with libjpeg-turbo's libjpeg.so.62 (the library behind cv2.imread), written straight
// into the caller's buffer (mapped GPU upload memory), so that dequantization, the inverse DCT, upsampling and
// colour conversion run on the GPU. The decoding runs on libuv's thread pool, off the JavaScript thread.
//
// How the coefficients are taken: libjpeg decodes in raw-data mode (no upsampling, no colour conversion) with its
// inverse-DCT method replaced by one that copies each block it is handed, so exactly the blocks libjpeg would
// transform arrive, in its order, with no whole-image coefficient array: baseline files stream (a 24 MP 4:2:0 photo:
// 16-33 ms, against 44-67 ms through jpeg_read_coefficients and 58-103 ms for the whole decode: docs/jpeg.md),
// progressive files are assembled by libjpeg first, and where libjpeg smooths the blocks of an incomplete
// progressive file (decompress_smooth_data) the smoothed ones are what arrive. The method table (struct
// jpeg_inverse_dct) is from jpegint.h, shipped by libjpeg62-turbo-dev; the library is pinned beside the module
// (build-native.mjs).
//
// The buffer's layout (coefLayout says where each piece lies):
//   [0, 768)             the quantization tables of components 0..2, 64 uint32 each, in natural order;
//   components, each at a 256-byte aligned offset: blocksH rows of `stride` blocks (blocksW rounded up to even, so
//   every block row starts 256-byte aligned and can be bound on its own), a block 64 int16 in natural order.
// Files the GPU kernels do not reproduce exactly get `fallback` (a reason) instead, and are decoded on the CPU.
//
// The compact form (`compact`: a batch's host memory, copied to upload memory once decoded): most coefficients of a
// photo are zero (84-96%), so the upload carries only the others. The quantization tables as above; per component,
// at `header[i]` (256-byte aligned), the same grid of blocks as above, 3 uint32 each: the index of the block's first
// value in the value array, and the 64-bit mask of its nonzero coefficients (natural order, low word first); at
// `values` (256-byte aligned) the nonzero int16 values, each block's in natural order, blocks in decoding order. The
// GPU expands it to the form above (jpeg-gpu-decode.wgsl.ts expand_coefs). `compact_bytes` is its worst case (every
// coefficient nonzero); the decode says how many bytes it used.
#include "napi-util.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jpegint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "jpeg-jump.h"

#define QUANT_BYTES 1024
#define BLOCK_BYTES (DCTSIZE2 * (int)sizeof(JCOEF))
#define HEADER_BYTES 12
#define ALIGN256(x) (((x) + 255) & ~(size_t)255)
// Row pointers handed to jpeg_read_raw_data per component: an iMCU row holds v_samp_factor (at most 4) block rows.
#define RAW_ROWS (MAX_SAMP_FACTOR * DCTSIZE)

typedef struct {
  int width, height, components, max_h, max_v;
  int h[3], v[3], blocks_w[3], blocks_h[3], stride[3], samples_w[3], samples_h[3];
  size_t offset[3], bytes;
  size_t header[3], values, compact_bytes;  // the compact form
  char fallback[160];
} layout_t;

// libjpeg's errors and warnings end the decode (a warning is a damaged file: as the TurboJPEG path with
// TJFLAG_STOPONWARNING, it is reported rather than decoded half-gray): jump_errors(&e, 1).

// The layout of what the decoder reads (after jpeg_read_header), or a fallback reason for what the GPU kernels do
// not cover: other than 8-bit; other than 1-component gray or 3-component YCbCr; chroma not 1×1 or luma not the
// largest; sampling other than 4:4:4, 4:2:2 (h2v1) or 4:2:0 (h2v2).
static void plan_layout(j_decompress_ptr d, int gray, layout_t *l) {
  memset(l, 0, sizeof *l);
  l->width = (int)d->image_width;
  l->height = (int)d->image_height;
  l->max_h = d->max_h_samp_factor;
  l->max_v = d->max_v_samp_factor;
  if (d->data_precision != 8) {
    snprintf(l->fallback, sizeof l->fallback, "%d-bit samples", d->data_precision);
    return;
  }
  int ycc = d->num_components == 3 && d->jpeg_color_space == JCS_YCbCr;
  if (!(d->num_components == 1 && d->jpeg_color_space == JCS_GRAYSCALE) && !ycc) {
    snprintf(l->fallback, sizeof l->fallback, "%d components, colour space %d (only gray and YCbCr)", d->num_components,
             (int)d->jpeg_color_space);
    return;
  }
  jpeg_component_info *c = d->comp_info;
  if (ycc) {
    int sub = (l->max_h == 1 && l->max_v == 1) || (l->max_h == 2 && l->max_v == 1) || (l->max_h == 2 && l->max_v == 2);
    if (!sub || c[0].h_samp_factor != l->max_h || c[0].v_samp_factor != l->max_v || c[1].h_samp_factor != 1 ||
        c[1].v_samp_factor != 1 || c[2].h_samp_factor != 1 || c[2].v_samp_factor != 1) {
      snprintf(l->fallback, sizeof l->fallback, "sampling factors %dx%d,%dx%d,%dx%d (only 4:4:4, 4:2:2, 4:2:0)",
               c[0].h_samp_factor, c[0].v_samp_factor, c[1].h_samp_factor, c[1].v_samp_factor, c[2].h_samp_factor,
               c[2].v_samp_factor);
      return;
    }
  }
  l->components = gray || !ycc ? 1 : 3;
  size_t at = QUANT_BYTES;
  for (int i = 0; i < l->components; i++) {
    l->h[i] = c[i].h_samp_factor;
    l->v[i] = c[i].v_samp_factor;
    l->blocks_w[i] = (int)c[i].width_in_blocks;
    l->blocks_h[i] = (int)c[i].height_in_blocks;
    l->samples_w[i] = (int)c[i].downsampled_width;
    l->samples_h[i] = (int)c[i].downsampled_height;
    l->stride[i] = (l->blocks_w[i] + 1) & ~1;
    l->offset[i] = at;
    at += (size_t)l->stride[i] * (size_t)l->blocks_h[i] * BLOCK_BYTES;
  }
  l->bytes = at;
  size_t h = QUANT_BYTES, blocks = 0;
  for (int i = 0; i < l->components; i++) {
    l->header[i] = h;
    blocks += (size_t)l->stride[i] * (size_t)l->blocks_h[i];
    h = ALIGN256(h + (size_t)l->stride[i] * (size_t)l->blocks_h[i] * HEADER_BYTES);
  }
  l->values = h;
  l->compact_bytes = h + blocks * BLOCK_BYTES;
}

// Work free of JavaScript values (runs on a libuv thread): 0, or -1 with err set.
typedef struct {
  unsigned char *src, *dst;
  size_t len, cap;
  int gray, compact;
  size_t used;  // bytes of dst written (the compact form's end; the whole layout otherwise)
  int fallback;  // set with err when the file is one the GPU kernels do not cover (not an error in the file)
  char err[JMSG_LENGTH_MAX + 64];
} coef_job_t;

// What the replaced inverse-DCT method needs (cinfo->client_data): where each block goes.
typedef struct {
  const layout_t *l;
  unsigned char *dst;
  JSAMPARRAY rows[3];       // the row pointers given to jpeg_read_raw_data (never written through)
  JDIMENSION first_row[3];  // block row of the iMCU row being read, per component
  size_t nvalues;           // compact form: values written so far
} capture_t;

// Where a captured block goes: its component's index and its block row and column in the grid.
static size_t block_slot(capture_t *x, jpeg_component_info *c, JSAMPARRAY output_buf, JDIMENSION output_col) {
  int ci = c->component_index;
  size_t row = x->first_row[ci] + (size_t)(output_buf - x->rows[ci]) / DCTSIZE, col = output_col / DCTSIZE;
  return row * (size_t)x->l->stride[ci] + col;
}

// libjpeg's inverse_DCT method, replaced: copies the (quantized, natural-order) block to its place in the buffer.
// `output_buf` points into the row pointers of this iMCU row, so it says the block row; `output_col` the column.
static void capture_block(j_decompress_ptr d, jpeg_component_info *c, JCOEFPTR block, JSAMPARRAY output_buf, JDIMENSION output_col) {
  capture_t *x = d->client_data;
  memcpy(x->dst + x->l->offset[c->component_index] + block_slot(x, c, output_buf, output_col) * BLOCK_BYTES, block, BLOCK_BYTES);
}

// The 64-bit mask of a block's nonzero coefficients (bit k: coefficient k, natural order).
static uint64_t nonzero_mask(const JCOEF *block) {
  uint64_t mask = 0;
#if defined(__SSE2__)
  // Eight coefficients at a time: compared with zero, narrowed to bytes, one bit each.
  for (int g = 0; g < DCTSIZE2 / 8; g++) {
    __m128i zero = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(block + 8 * g)), _mm_setzero_si128());
    uint32_t zeros = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(zero, zero)) & 0xffu;
    mask |= (uint64_t)(~zeros & 0xffu) << (8 * g);
  }
#else
  for (int k = 0; k < DCTSIZE2; k++) mask |= (uint64_t)(block[k] != 0) << k;
#endif
  return mask;
}

// The same in the compact form: the block's nonzero values appended, its header (first value, mask) in its slot.
// The buffer holds compact_bytes, the worst case, so the values always fit. The mask is found eight coefficients at
// a time and the values picked by its set bits: a test and branch per coefficient cost 5.9 s more CPU than the plain
// copy over a 210-photo folder on the H100 machine (most of libjpeg's own decoding time again).
static void capture_compact(j_decompress_ptr d, jpeg_component_info *c, JCOEFPTR block, JSAMPARRAY output_buf, JDIMENSION output_col) {
  capture_t *x = d->client_data;
  JCOEF *values = (JCOEF *)(x->dst + x->l->values) + x->nvalues;
  uint64_t mask = nonzero_mask(block);
  uint32_t header[3] = {(uint32_t)x->nvalues, (uint32_t)mask, (uint32_t)(mask >> 32)};
  int n = 0;
  for (uint64_t m = mask; m; m &= m - 1) values[n++] = block[__builtin_ctzll(m)];
  x->nvalues += (size_t)n;
  memcpy(x->dst + x->l->header[c->component_index] + block_slot(x, c, output_buf, output_col) * HEADER_BYTES, header, HEADER_BYTES);
}

// The same for a component a gray output does not read (Cb, Cr): nothing.
static void skip_block(j_decompress_ptr d, jpeg_component_info *c, JCOEFPTR block, JSAMPARRAY output_buf, JDIMENSION output_col) {
  (void)d, (void)c, (void)block, (void)output_buf, (void)output_col;
}

// Decodes the whole file in raw-data mode, every block through capture_block (capture_compact), and copies the
// quantization tables. Returns the bytes of dst written.
static size_t capture_all(j_decompress_ptr d, const layout_t *l, unsigned char *dst, int compact) {
  static JSAMPLE sink[DCTSIZE];  // where the row pointers point: the replaced method writes no samples
  JSAMPROW rows[MAX_COMPONENTS][RAW_ROWS];
  JSAMPARRAY planes[MAX_COMPONENTS];
  capture_t x = {.l = l, .dst = dst};
  d->raw_data_out = TRUE;
  d->client_data = &x;
  jpeg_start_decompress(d);  // progressive files: all scans read here; the output pass's IDCT methods set
  for (int ci = 0; ci < d->num_components; ci++) {
    for (int i = 0; i < RAW_ROWS; i++) rows[ci][i] = sink;
    planes[ci] = rows[ci];
    if (ci < 3) x.rows[ci] = rows[ci];
    d->idct->inverse_DCT[ci] = ci >= l->components ? skip_block : compact ? capture_compact : capture_block;
  }
  for (int ci = 0; ci < l->components; ci++) {
    uint32_t *quant = (uint32_t *)dst + ci * DCTSIZE2;
    for (int k = 0; k < DCTSIZE2; k++) quant[k] = d->comp_info[ci].quant_table->quantval[k];
  }
  JDIMENSION imcu_rows = (JDIMENSION)d->max_v_samp_factor * DCTSIZE;
  while (d->output_scanline < d->output_height) {
    JDIMENSION imcu = d->output_scanline / imcu_rows;
    for (int ci = 0; ci < l->components; ci++) x.first_row[ci] = imcu * (JDIMENSION)d->comp_info[ci].v_samp_factor;
    if (jpeg_read_raw_data(d, planes, imcu_rows) == 0) break;  // suspension cannot happen with a memory source
  }
  jpeg_finish_decompress(d);
  return compact ? l->values + x.nvalues * sizeof(JCOEF) : l->bytes;
}

static int run_coef_decode(coef_job_t *j) {
  struct jpeg_decompress_struct d;
  jump_error_t e;
  layout_t l;
  int rc = -1;
  d.err = jump_errors(&e, 1);
  jpeg_create_decompress(&d);
  if (setjmp(e.jump)) {
    snprintf(j->err, sizeof j->err, "corrupt or truncated JPEG: %s", e.msg);
    jpeg_destroy_decompress(&d);
    return -1;
  }
  jpeg_mem_src(&d, j->src, (unsigned long)j->len);
  jpeg_read_header(&d, TRUE);
  plan_layout(&d, j->gray, &l);
  if (l.fallback[0]) {
    j->fallback = 1;
    snprintf(j->err, sizeof j->err, "%s", l.fallback);
  } else if ((j->compact ? l.compact_bytes : l.bytes) > j->cap) {
    snprintf(j->err, sizeof j->err, "coefficient buffer too small (%zu bytes, %zu needed)", j->cap, j->compact ? l.compact_bytes : l.bytes);
  } else {
    j->used = capture_all(&d, &l, j->dst, j->compact);
    rc = 0;
  }
  jpeg_destroy_decompress(&d);
  return rc;
}

static napi_value layout_object(napi_env env, const layout_t *l) {
  napi_value obj, comps;
  if (l->fallback[0]) {
    napi_value s;
    if (napi_create_object(env, &obj) != napi_ok || napi_create_string_utf8(env, l->fallback, NAPI_AUTO_LENGTH, &s) != napi_ok ||
        napi_set_named_property(env, obj, "fallback", s) != napi_ok)
      return NULL;
    return obj;
  }
  static const char *const keys[] = {"width", "height", "maxH", "maxV", "bytes", "values", "compactBytes"};
  const double values[] = {l->width, l->height, l->max_h, l->max_v, (double)l->bytes, (double)l->values, (double)l->compact_bytes};
  if (!(obj = napi_util_numbers(env, keys, values, 7)) || napi_create_array_with_length(env, (size_t)l->components, &comps) != napi_ok)
    return NULL;
  for (int i = 0; i < l->components; i++) {
    static const char *const ckeys[] = {"h", "v", "blocksW", "blocksH", "stride", "offset", "samplesW", "samplesH", "header"};
    const double cvalues[] = {l->h[i], l->v[i], l->blocks_w[i], l->blocks_h[i], l->stride[i], (double)l->offset[i], l->samples_w[i], l->samples_h[i], (double)l->header[i]};
    napi_value c = napi_util_numbers(env, ckeys, cvalues, 9);
    if (!c || napi_set_element(env, comps, (uint32_t)i, c) != napi_ok) return NULL;
  }
  if (napi_set_named_property(env, obj, "components", comps) != napi_ok) return NULL;
  return obj;
}

// coefLayout(jpeg: Uint8Array, gray: boolean) -> { width, height, maxH, maxV, bytes, components[] } | { fallback }:
// the header only (no entropy decoding), on the calling thread.
static napi_value coef_layout(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  unsigned char *src;
  size_t len;
  bool gray = false;
  if (!napi_util_args(env, info, argv, 2, "bz", "coefLayout(jpeg: Uint8Array, gray: boolean)", &src, &len, &gray)) return NULL;
  struct jpeg_decompress_struct d;
  jump_error_t e;
  layout_t l;
  d.err = jump_errors(&e, 1);
  jpeg_create_decompress(&d);
  if (setjmp(e.jump)) {
    jpeg_destroy_decompress(&d);
    napi_throw_error(env, "EJPEG", e.msg);
    return NULL;
  }
  jpeg_mem_src(&d, src, (unsigned long)len);
  jpeg_read_header(&d, TRUE);
  plan_layout(&d, gray, &l);
  jpeg_destroy_decompress(&d);
  return layout_object(env, &l);
}

static int run_async(void *job) { return run_coef_decode(job); }

static void failure_async(void *job, const char **code, const char **message) {
  coef_job_t *j = job;
  *code = j->fallback ? "EJPEGFALLBACK" : "EJPEG";
  *message = j->err;
}

// The promise's value: the bytes of `out` written.
static napi_value resolve_async(napi_env env, void *job) {
  napi_value v;
  return napi_create_double(env, (double)((coef_job_t *)job)->used, &v) == napi_ok ? v : NULL;
}

static const napi_util_async_t COEF_ASYNC = {"imgpu-jpegcoef", run_async, resolve_async, failure_async};

// coefDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean, compact?: boolean) -> Promise<number>: fills `out`
// (coefLayout's bytes, or compactBytes in the compact form) on libuv's thread pool and resolves with the bytes written;
// rejects with code EJPEGFALLBACK (and the reason) for a file the GPU kernels do not cover, EJPEG for a damaged one;
// both arrays stay referenced until the promise settles (neither may be detached — a mapped GPU range unmapped —
// before then).
static napi_value coef_decode_async(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  coef_job_t *j = calloc(1, sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "imgpu-jpegcoef: out of memory");
    return NULL;
  }
  bool gray = false, compact = false;
  size_t argc = napi_util_args(env, info, argv, 4, "bbz", "coefDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean, compact?: boolean)",
                               &j->src, &j->len, &j->dst, &j->cap, &gray);
  if (!argc) {
    free(j);
    return NULL;
  }
  if (argc > 3 && napi_get_value_bool(env, argv[3], &compact) != napi_ok) {
    free(j);
    napi_throw_type_error(env, NULL, "coefDecodeAsync: compact must be a boolean");
    return NULL;
  }
  j->gray = gray;
  j->compact = compact;
  return napi_util_queue(env, &COEF_ASYNC, j, argv, 2);
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"coefLayout", NULL, coef_layout, NULL, NULL, NULL, napi_default, NULL},
      {"coefDecodeAsync", NULL, coef_decode_async, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}
