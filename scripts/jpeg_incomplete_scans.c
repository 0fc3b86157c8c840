// A progressive JPEG whose scans leave coefficients inexact (successive approximation never refined), for the GPU
// decoder's test of libjpeg's block smoothing (decompress_smooth_data). Built and run by
// scripts/make_jpeg_gpu_fixtures.py: `jpeg_incomplete_scans in.ppm out.jpg` (8-bit RGB P6 in, YCbCr 4:2:0 out).
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  int w, h, max;
  if (!in || !out || fscanf(in, "P6 %d %d %d", &w, &h, &max) != 3 || max != 255 || fgetc(in) == EOF) return 1;
  unsigned char *px = malloc((size_t)w * h * 3);
  if (fread(px, 3, (size_t)w * h, in) != (size_t)w * h) return 1;
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr e;
  c.err = jpeg_std_error(&e);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, out);
  c.image_width = w;
  c.image_height = h;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  // DC at half precision (Al 1), luma AC in two bands at a quarter (Al 2), chroma AC at half: none refined.
  static jpeg_scan_info scans[] = {
      {3, {0, 1, 2}, 0, 0, 0, 1}, {1, {0}, 1, 5, 0, 2}, {1, {0}, 6, 63, 0, 2}, {1, {1}, 1, 63, 0, 1}, {1, {2}, 1, 63, 0, 1},
  };
  c.scan_info = scans;
  c.num_scans = sizeof scans / sizeof scans[0];
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = px + (size_t)c.next_scanline * w * 3;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  fclose(out);
  return 0;
}
