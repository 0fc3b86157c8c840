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
// GPU expands it to the form above (codecs/jpeg/decode/kernels.wgsl.ts expand_coefs). `compact_bytes` is its worst case (every
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
  int width, height, components, max_h, max_v, color_space;
  int h[3], v[3], blocks_w[3], blocks_h[3], stride[3], samples_w[3], samples_h[3];
  size_t offset[3], bytes;
  size_t header[3], values, compact_bytes;  // the compact form
  char fallback[160];
} layout_t;

// libjpeg's errors and warnings end the decode (a warning is a damaged file: as the TurboJPEG path with
// TJFLAG_STOPONWARNING, it is reported rather than decoded half-gray): jump_errors(&e, 1).

// The layout of what the decoder reads (after jpeg_read_header), or a fallback reason for what the GPU kernels do
// not cover: other than 8-bit; other than 1-component gray or 3-component YCbCr. Any sampling factors libjpeg
// decodes are covered (the kernels upsample each component as jdsample.c does); factors it cannot upsample — a
// component's not dividing the largest (JERR_FRACT_SAMPLE_NOTIMPL) — are left to the CPU path, which reports them as
// libjpeg does (raw-data mode, which skips the upsampler, would decode them).
static void plan_layout(j_decompress_ptr d, int gray, layout_t *l) {
  memset(l, 0, sizeof *l);
  l->width = (int)d->image_width;
  l->height = (int)d->image_height;
  l->max_h = d->max_h_samp_factor;
  l->max_v = d->max_v_samp_factor;
  l->color_space = (int)d->jpeg_color_space;
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
  int integral = 1;
  for (int i = 0; i < d->num_components; i++)
    integral = integral && l->max_h % c[i].h_samp_factor == 0 && l->max_v % c[i].v_samp_factor == 0;
  if (!integral) {
    snprintf(l->fallback, sizeof l->fallback, "sampling factors %dx%d,%dx%d,%dx%d (not integral ratios: libjpeg cannot upsample them)",
             c[0].h_samp_factor, c[0].v_samp_factor, c[1].h_samp_factor, c[1].v_samp_factor, c[2].h_samp_factor,
             c[2].v_samp_factor);
    return;
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
  int gray, compact, scan;
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

// ---- The scan form (`scan`): Huffman decoding on the GPU too (codecs/jpeg/decode/huffman-decode.ts) ----
// Nothing is entropy-decoded here: the headers are libjpeg's (jpeg_read_header), and the entropy-coded segment is
// copied with its byte stuffing removed, for the GPU's parallel Huffman decoder. Layout (u32 words, little-endian):
//   [0, 1024)              the quantization tables as above;
//   SCAN_INFO (1024)       the scan's geometry (SI_* word indices below);
//   SCAN_TABLES (1280)     per scan component c: its DC table at slot 2c, its AC table at 2c + 1, TBL_WORDS each:
//                          a 9-bit lookahead (TBL_LUT: size << 8 | symbol, 0 where the code is longer), maxcode[0..17]
//                          (TBL_MAXCODE, int32, -1 for no code of a length, maxcode[17] a sentinel), valoffset
//                          (TBL_VALOFF) and huffval (TBL_VAL), as jdhuff.c jpeg_make_d_derived_tbl makes them;
//   SCAN_DATA (21504)      the unstuffed entropy-coded bytes, then 16 zero bytes.
// Covered: baseline or extended sequential Huffman (not progressive, not arithmetic), one scan of every component,
// no restart interval, tables valid as libjpeg checks them; anything else is a fallback (to the form above).
#define SCAN_INFO 1024
#define SCAN_TABLES 1280
#define TBL_LUT 0
#define TBL_MAXCODE 512
#define TBL_VALOFF 544
#define TBL_VAL 576
#define TBL_WORDS 832
#define SCAN_DATA 21504
#define LOOKAHEAD 9
// Info words: the data bits, blocks per MCU, MCUs across, MCUs, blocks; per block of an MCU (SI_BLOCK + b) its
// component | column << 4 | row << 8 within the MCU; per component (SI_COMP + SI_COMP_WORDS * c) its sampling
// factors, width and height in blocks, and where the output has it, the layout's stride (blocks) and word offset,
// word 7 saying whether it does; the zigzag order (SI_ZIGZAG).
enum { SI_BITS, SI_BPM, SI_MCU_COLS, SI_MCUS, SI_BLOCKS, SI_OUT_COMPS, SI_BLOCK = 8, SI_COMP = 24, SI_COMP_WORDS = 8, SI_ZIGZAG = 48 };

// The natural index of each zigzag position (libjpeg's jpeg_natural_order), four to a word at SI_ZIGZAG.
static const unsigned char ZIGZAG[DCTSIZE2] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

// A Huffman table as the GPU decoder reads it (jpeg_make_d_derived_tbl's derivation and checks); 0, or -1 where
// libjpeg would reject it.
static int derive_table(const JHUFF_TBL *t, int dc, uint32_t *out) {
  if (!t) return -1;  // no DHT (libjpeg then takes the standard tables): left to the CPU stage
  unsigned char size[257];
  unsigned int code[257];
  int n = 0;
  for (int l = 1; l <= 16; l++) {
    int k = t->bits[l];
    if (n + k > 256) return -1;
    while (k--) size[n++] = (unsigned char)l;
  }
  size[n] = 0;
  unsigned int c = 0;
  int si = size[0];
  for (int p = 0; size[p];) {
    while (size[p] == si) code[p++] = c++;
    if (c >= (1u << si)) return -1;
    c <<= 1;
    si++;
  }
  int32_t *maxcode = (int32_t *)out + TBL_MAXCODE, *valoff = (int32_t *)out + TBL_VALOFF;
  memset(out, 0, TBL_WORDS * sizeof *out);
  for (int l = 1, p = 0; l <= 16; l++) {
    if (t->bits[l]) {
      valoff[l] = p - (int32_t)code[p];
      p += t->bits[l];
      maxcode[l] = (int32_t)code[p - 1];
    } else {
      maxcode[l] = -1;
    }
  }
  maxcode[17] = 0xFFFFF;
  for (int p = 0; p < n; p++) {
    if (dc && t->huffval[p] > 15) return -1;
    out[TBL_VAL + p] = t->huffval[p];
    if (size[p] <= LOOKAHEAD) {
      unsigned int first = code[p] << (LOOKAHEAD - size[p]);
      for (unsigned int k = 0; k < 1u << (LOOKAHEAD - size[p]); k++) out[TBL_LUT + first + k] = (uint32_t)size[p] << 8 | t->huffval[p];
    }
  }
  return 0;
}

// Copies the entropy-coded segment at `p` (up to `end`) without its stuffing (FF 00 -> FF) into `dst`, up to the
// marker that ends it; the bytes written, or -1 with `why` set where that marker is not EOI or there is none.
static long unstuff(const unsigned char *p, const unsigned char *end, unsigned char *dst, size_t cap, const char **why) {
  unsigned char *o = dst;
  while (p < end) {
    const unsigned char *ff = memchr(p, 0xff, (size_t)(end - p));
    size_t run = (size_t)((ff ? ff : end) - p);
    if ((size_t)(o - dst) + run + 1 > cap) break;
    memcpy(o, p, run);
    o += run;
    if (!ff) break;
    p = ff + 1;
    while (p < end && *p == 0xff) p++;  // fill bytes before a marker
    if (p >= end) break;
    if (*p == 0x00) {
      *o++ = 0xff;
      p++;
      continue;
    }
    if (*p == 0xd9) return (long)(o - dst);
    *why = *p >= 0xd0 && *p <= 0xd7 ? "restart marker without a restart interval" : "more than one scan";
    return -1;
  }
  *why = "no EOI after the scan (truncated)";
  return -1;
}

// Blocks an MCU of the (first) scan holds, as jdinput.c per_scan_setup counts them (it has not run yet: the header
// is read, decompression not started).
static int mcu_blocks(j_decompress_ptr d) {
  if (d->comps_in_scan == 1) return 1;
  int n = 0;
  for (int i = 0; i < d->comps_in_scan; i++) n += d->cur_comp_info[i]->h_samp_factor * d->cur_comp_info[i]->v_samp_factor;
  return n;
}

// The scan form (above), or a fallback reason. Returns the bytes of dst written.
static size_t capture_scan(j_decompress_ptr d, const layout_t *l, const unsigned char *src, size_t len, unsigned char *dst, size_t cap, char *why, size_t why_len) {
  const char *reason = NULL;
  if (cap < SCAN_DATA + len + 16) {
    snprintf(why, why_len, "scan buffer too small (%zu bytes, %zu needed)", cap, SCAN_DATA + len + 16);
    return 0;
  }
  if (d->progressive_mode) reason = "progressive";
  else if (d->arith_code) reason = "arithmetic coding";
  else if (d->restart_interval) reason = "restart markers";
  else if (d->comps_in_scan != d->num_components) reason = "components in more than one scan";
  // libjpeg refuses such an MCU (JERR_BAD_MCU_SIZE, at jpeg_start_decompress): the CPU stage reports it.
  else if (mcu_blocks(d) > D_MAX_BLOCKS_IN_MCU) reason = "more blocks an MCU than libjpeg decodes";
  // What jdhuff.c start_pass_huff_decoder warns of (a warning ends the CPU stage's decode: it reports the file).
  else if (d->Ss != 0 || d->Se != DCTSIZE2 - 1 || d->Ah != 0 || d->Al != 0) reason = "scan parameters of a progressive scan in a sequential file";
  else
    for (int i = 0; i < d->comps_in_scan; i++)
      if (d->cur_comp_info[i]->component_index != i) reason = "components scanned out of frame order";
  if (reason) {
    snprintf(why, why_len, "%s (Huffman decoding on the CPU)", reason);
    return 0;
  }
  uint32_t *w = (uint32_t *)dst, *info = w + SCAN_INFO / 4;
  memset(dst, 0, SCAN_DATA);
  // Every component's, even those a gray output does not read: libjpeg requires them all (jdinput.c latch_quant_tables).
  for (int ci = 0; ci < d->num_components; ci++) {
    // The header's table selectors are not checked by jpeg_read_header (libjpeg does at jpeg_start_decompress, which
    // this form never calls): one beyond the table arrays, or an undefined table, is left to the CPU stage, which
    // reports it.
    int qn = d->comp_info[ci].quant_tbl_no;
    const JQUANT_TBL *q = qn >= 0 && qn < NUM_QUANT_TBLS ? d->quant_tbl_ptrs[qn] : NULL;
    if (!q) {
      snprintf(why, why_len, "no quantization table %d", qn);
      return 0;
    }
    if (ci < l->components)
      for (int k = 0; k < DCTSIZE2; k++) w[ci * DCTSIZE2 + k] = q->quantval[k];
  }
  // MCU geometry as jdinput.c per_scan_setup sets it: one block per MCU in a single-component scan.
  int single = d->comps_in_scan == 1;
  unsigned int mcu_cols = single ? d->cur_comp_info[0]->width_in_blocks : (unsigned int)((d->image_width + 8 * d->max_h_samp_factor - 1) / (8 * d->max_h_samp_factor));
  unsigned int mcu_rows = single ? d->cur_comp_info[0]->height_in_blocks : (unsigned int)((d->image_height + 8 * d->max_v_samp_factor - 1) / (8 * d->max_v_samp_factor));
  unsigned int bpm = 0;
  for (int i = 0; i < d->comps_in_scan; i++) {
    jpeg_component_info *c = d->cur_comp_info[i];
    int ci = c->component_index, h = single ? 1 : c->h_samp_factor, v = single ? 1 : c->v_samp_factor;
    uint32_t *tables = w + SCAN_TABLES / 4 + (size_t)2 * ci * TBL_WORDS;
    int tables_ok = c->dc_tbl_no >= 0 && c->dc_tbl_no < NUM_HUFF_TBLS && c->ac_tbl_no >= 0 && c->ac_tbl_no < NUM_HUFF_TBLS;
    if (ci > 2 || !tables_ok || derive_table(d->dc_huff_tbl_ptrs[c->dc_tbl_no], 1, tables) || derive_table(d->ac_huff_tbl_ptrs[c->ac_tbl_no], 0, tables + TBL_WORDS)) {
      snprintf(why, why_len, "Huffman tables of component %d not usable here", ci);
      return 0;
    }
    for (int y = 0; y < v; y++)
      for (int x = 0; x < h; x++) info[SI_BLOCK + bpm++] = (uint32_t)(ci | x << 4 | y << 8);
    uint32_t *ci_info = info + SI_COMP + SI_COMP_WORDS * ci;
    ci_info[0] = (uint32_t)h;
    ci_info[1] = (uint32_t)v;
    ci_info[2] = c->width_in_blocks;
    ci_info[3] = c->height_in_blocks;
    ci_info[4] = ci < l->components ? (uint32_t)l->stride[ci] : 0;
    ci_info[5] = ci < l->components ? (uint32_t)(l->offset[ci] / 4) : 0;
    ci_info[7] = ci < l->components;
  }
  const char *bad = NULL;
  const unsigned char *start = d->src->next_input_byte;
  long n = unstuff(start, src + len, dst + SCAN_DATA, cap - SCAN_DATA - 16, &bad);
  if (n == 0) bad = "no entropy-coded data";
  if (n <= 0) {
    snprintf(why, why_len, "%s (Huffman decoding on the CPU)", bad);
    return 0;
  }
  memset(dst + SCAN_DATA + n, 0, 16);
  memcpy(info + SI_ZIGZAG, ZIGZAG, sizeof ZIGZAG);
  info[SI_BITS] = (uint32_t)n * 8;
  info[SI_BPM] = bpm;
  info[SI_MCU_COLS] = mcu_cols;
  info[SI_MCUS] = mcu_cols * mcu_rows;
  info[SI_BLOCKS] = mcu_cols * mcu_rows * bpm;
  info[SI_OUT_COMPS] = (uint32_t)l->components;
  return SCAN_DATA + (size_t)n + 16;
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
  } else if (j->scan) {
    j->used = capture_scan(&d, &l, j->src, j->len, j->dst, j->cap, j->err, sizeof j->err);
    j->fallback = j->used == 0;
    rc = j->used ? 0 : -1;
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
    // With the header's size and libjpeg's colour space (J_COLOR_SPACE), for a lenient decode of what TurboJPEG's
    // header reader refuses (io/jpeg.ts nativePlan).
    static const char *const fkeys[] = {"width", "height", "colorSpace"};
    const double fvalues[] = {l->width, l->height, l->color_space};
    napi_value s;
    if (!(obj = napi_util_numbers(env, fkeys, fvalues, 3)) || napi_create_string_utf8(env, l->fallback, NAPI_AUTO_LENGTH, &s) != napi_ok ||
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

// A zeroed job of `size` bytes for the thread pool, or NULL with a JavaScript error thrown.
static void *new_job(napi_env env, size_t size) {
  void *j = calloc(1, size);
  if (!j) napi_throw_error(env, NULL, "imgpu-jpegcoef: out of memory");
  return j;
}

static const napi_util_async_t COEF_ASYNC = {"imgpu-jpegcoef", run_async, resolve_async, failure_async};

// coefDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean, compact?: boolean) -> Promise<number>: fills `out`
// (coefLayout's bytes, or compactBytes in the compact form) on libuv's thread pool and resolves with the bytes written;
// rejects with code EJPEGFALLBACK (and the reason) for a file the GPU kernels do not cover, EJPEG for a damaged one;
// both arrays stay referenced until the promise settles (neither may be detached — a mapped GPU range unmapped —
// before then).
static napi_value coef_decode_async(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  coef_job_t *j = new_job(env, sizeof *j);
  if (!j) return NULL;
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

// scanDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean) -> Promise<number>: the scan form (capture_scan:
// headers, tables and the unstuffed entropy-coded bytes; `out` at least SCAN_DATA + jpeg.length + 16 bytes) on libuv's
// thread pool, resolving with the bytes written; rejects as coefDecodeAsync does (EJPEGFALLBACK: decode it that way).
static napi_value scan_decode_async(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  coef_job_t *j = new_job(env, sizeof *j);
  if (!j) return NULL;
  bool gray = false;
  if (!napi_util_args(env, info, argv, 3, "bbz", "scanDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean)", &j->src, &j->len, &j->dst, &j->cap, &gray)) {
    free(j);
    return NULL;
  }
  j->gray = gray;
  j->scan = 1;
  return napi_util_queue(env, &COEF_ASYNC, j, argv, 2);
}

// ---- Lenient decoding (io/jpeg.ts, ReadOptions.failOn below 'warning') ----
// The whole decode to pixels, as cv2.imread runs libjpeg (grfmt_jpeg.cpp): islow IDCT, fancy upsampling, RGB or gray
// out, warnings logged and the decode carried on (libjpeg fills what is missing: zero coefficients after a premature
// end), only an error ending it. The TurboJPEG path (turbo.c) cannot say whether a warning it stopped on was the
// only trouble, nor which warnings there were; here every one is counted, the first kept, and a premature end of
// the file (JWRN_JPEG_EOF: truncated) flagged. Here rather than in turbo.c: this module links libjpeg's own API.
#include <jerror.h>

typedef struct {
  jump_error_t jump;  // first: libjpeg's error manager
  int warnings, truncated;
  char first[JMSG_LENGTH_MAX];
} warn_log_t;

static void log_warning(j_common_ptr c, int level) {
  warn_log_t *w = (warn_log_t *)c->err;
  if (level >= 0) return;
  if (c->err->msg_code == JWRN_JPEG_EOF) w->truncated = 1;
  if (!w->warnings++) c->err->format_message(c, w->first);
}

typedef struct {
  unsigned char *src, *dst;
  size_t len, cap;
  int channels;
  volatile int rows_done;  // every row decoded: an error from here on (jpeg_finish_decompress) does not void them
  warn_log_t log;
  char err[JMSG_LENGTH_MAX + 64];
} lenient_job_t;

static int run_lenient(void *job) {
  lenient_job_t *j = job;
  struct jpeg_decompress_struct d;
  d.err = jump_errors(&j->log.jump, 0);
  j->log.jump.pub.emit_message = log_warning;
  jpeg_create_decompress(&d);
  if (setjmp(j->log.jump.jump)) {
    jpeg_destroy_decompress(&d);
    // cv2.imread keeps the image when only jpeg_finish_decompress fails (its result is set before that call), e.g.
    // on a second scan in a single-scan file: so does this, the error counted as a warning.
    if (j->rows_done) {
      if (!j->log.warnings++) snprintf(j->log.first, sizeof j->log.first, "%s", j->log.jump.msg);
      return 0;
    }
    snprintf(j->err, sizeof j->err, "corrupt JPEG: %s", j->log.jump.msg);
    return -1;
  }
  jpeg_mem_src(&d, j->src, (unsigned long)j->len);
  jpeg_read_header(&d, TRUE);
  d.out_color_space = j->channels == 1 ? JCS_GRAYSCALE : JCS_EXT_RGB;
  d.dct_method = JDCT_ISLOW;
  jpeg_start_decompress(&d);
  size_t stride = (size_t)d.output_width * (size_t)d.output_components;
  if (d.output_components != j->channels || stride * d.output_height > j->cap) {
    snprintf(j->err, sizeof j->err, "decode: %d components out, output buffer too small", d.output_components);
    jpeg_destroy_decompress(&d);
    return -1;
  }
  while (d.output_scanline < d.output_height) {
    JSAMPROW row = j->dst + stride * d.output_scanline;
    jpeg_read_scanlines(&d, &row, 1);
  }
  j->rows_done = 1;
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  return 0;
}

// The promise's value: { warnings, truncated, first } (the first warning's message, '' if none).
static napi_value resolve_lenient(napi_env env, void *job) {
  lenient_job_t *j = job;
  static const char *const keys[] = {"warnings", "truncated"};
  const double values[] = {j->log.warnings, j->log.truncated};
  napi_value obj = napi_util_numbers(env, keys, values, 2), first;
  if (!obj || napi_create_string_utf8(env, j->log.first, NAPI_AUTO_LENGTH, &first) != napi_ok ||
      napi_set_named_property(env, obj, "first", first) != napi_ok)
    return NULL;
  return obj;
}

static void failure_lenient(void *job, const char **code, const char **message) {
  *code = "EJPEG";
  *message = ((lenient_job_t *)job)->err;
}

static const napi_util_async_t LENIENT_ASYNC = {"imgpu-jpeglenient", run_lenient, resolve_lenient, failure_lenient};

// decodeLenient(jpeg, out, channels: 1 | 3, async: boolean) -> { warnings, truncated, first } (or a Promise of it,
// run on libuv's thread pool): fills `out` (width × height × channels) as cv2.imread does; throws (rejects) with
// code EJPEG where libjpeg ends the decode with an error.
static napi_value decode_lenient(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  lenient_job_t *j = new_job(env, sizeof *j);
  if (!j) return NULL;
  bool async = false;
  const char *usage = "decodeLenient(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3, async: boolean)";
  if (!napi_util_args(env, info, argv, 4, "bbiz", usage, &j->src, &j->len, &j->dst, &j->cap, &j->channels, &async)) {
    free(j);
    return NULL;
  }
  if (j->channels != 1 && j->channels != 3) {
    napi_throw_type_error(env, NULL, usage);
    free(j);
    return NULL;
  }
  if (async) return napi_util_queue(env, &LENIENT_ASYNC, j, argv, 2);
  napi_value r = NULL;
  if (run_lenient(j) == 0) r = resolve_lenient(env, j);
  else napi_throw_error(env, "EJPEG", j->err);
  free(j);
  return r;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"coefLayout", NULL, coef_layout, NULL, NULL, NULL, napi_default, NULL},
      {"coefDecodeAsync", NULL, coef_decode_async, NULL, NULL, NULL, napi_default, NULL},
      {"scanDecodeAsync", NULL, scan_decode_async, NULL, NULL, NULL, napi_default, NULL},
      {"decodeLenient", NULL, decode_lenient, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}
