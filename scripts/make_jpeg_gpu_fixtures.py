#!/usr/bin/python3
"""JPEG fixtures for the GPU JPEG decoder's tests (test/io/jpeg-gpu-decode.test.ts). Run from the repository root:
/usr/bin/python3 scripts/make_jpeg_gpu_fixtures.py  (Debian's python3-opencv 4.6 and python3-pil; libjpeg-turbo 2.1.5)
Input: real photographs in the repository: the Chelsea photograph (test/fixtures/images/chelsea.png, 451×300) and
the camera man (samples/camera.png, gray). Crops have odd sizes, so MCUs are cut at the right and bottom edges.
Writes into test/fixtures/jpeg-gpu/, for each X.jpg, X_rgb.png = cv2.imread(X.jpg) and X_gray.png =
cv2.imread(X.jpg, IMREAD_GRAYSCALE) (the references; PNG is lossless, and an RGB PNG read back is cv2's BGR reversed):
  c420.jpg        cv2.imwrite, quality 95 (4:2:0, cv2's default), 451×300
  c420_rst.jpg    cv2.imwrite with restart markers every 2 MCUs (IMWRITE_JPEG_RST_INTERVAL), 211×141
  c420_prog.jpg   cv2.imwrite progressive (IMWRITE_JPEG_PROGRESSIVE), 209×149
  c444.jpg        PIL, quality 90, subsampling 4:4:4, 219×139
  c444_prog.jpg   PIL, quality 85, 4:4:4, progressive, 173×111
  c422.jpg        PIL, quality 90, subsampling 4:2:2, 221×147
  c422_prog.jpg   PIL, quality 92, 4:2:2, progressive, 181×121
  tiny420.jpg     cv2.imwrite of a 3×5 downscale (chroma 2 samples wide: libjpeg's box upsampling, not fancy)
  tiny422.jpg     PIL 4:2:2 of a 4×3 downscale (the same)
  gray.jpg        cv2.imwrite of a 301×255 crop of the camera man (one component)
  gray_prog.jpg   the same, progressive, with restart markers every 3 MCUs
  c420_smooth.jpg a 4:2:0 progressive file whose scans never refine their coefficients (scripts/jpeg_incomplete_scans.c,
                  compiled here with gcc -ljpeg): libjpeg smooths its blocks, and the GPU decoder gets the smoothed ones
  c440.jpg        a 64×64 4:2:2 file whose luma sampling factors are rewritten 2×1 → 1×2 (4:4:0, the same number of
                  blocks per MCU and MCUs): a file libjpeg reads (compared with the CPU path; every layout, with
                  cv2.imread's references: scripts/make_jpeg_layout_fixtures.py)
"""
import io
import os
import subprocess
import tempfile

import cv2
import numpy as np
from PIL import Image

ROOT = os.path.join(os.path.dirname(__file__), '..')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'jpeg-gpu')
os.makedirs(OUT, exist_ok=True)

chelsea = cv2.imread(os.path.join(ROOT, 'test', 'fixtures', 'images', 'chelsea.png'), cv2.IMREAD_COLOR)
camera = cv2.imread(os.path.join(ROOT, 'samples', 'camera.png'), cv2.IMREAD_GRAYSCALE)


def path(name):
    return os.path.join(OUT, name)


def cv2_jpeg(name, img, params=()):
    cv2.imwrite(path(name + '.jpg'), img, [cv2.IMWRITE_JPEG_QUALITY, 95, *params])


def pil_jpeg(name, bgr, **kw):
    Image.fromarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)).save(path(name + '.jpg'), 'JPEG', **kw)


def references(name, colour=True):
    if colour:
        cv2.imwrite(path(name + '_rgb.png'), cv2.imread(path(name + '.jpg'), cv2.IMREAD_COLOR))
    cv2.imwrite(path(name + '_gray.png'), cv2.imread(path(name + '.jpg'), cv2.IMREAD_GRAYSCALE))


cv2_jpeg('c420', chelsea)
cv2_jpeg('c420_rst', chelsea[30:171, 100:311], [cv2.IMWRITE_JPEG_RST_INTERVAL, 2])
cv2_jpeg('c420_prog', chelsea[60:209, 120:329], [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
pil_jpeg('c444', chelsea[80:219, 150:369], quality=90, subsampling=0)
pil_jpeg('c444_prog', chelsea[40:151, 160:333], quality=85, subsampling=0, progressive=True)
pil_jpeg('c422', chelsea[100:247, 90:311], quality=90, subsampling=1)
pil_jpeg('c422_prog', chelsea[50:171, 200:381], quality=92, subsampling=1, progressive=True)
cv2_jpeg('tiny420', cv2.resize(chelsea, (3, 5), interpolation=cv2.INTER_AREA))
pil_jpeg('tiny422', cv2.resize(chelsea, (4, 3), interpolation=cv2.INTER_AREA), quality=95, subsampling=1)
cv2_jpeg('gray', camera[100:355, 50:351])
cv2_jpeg('gray_prog', camera[100:355, 50:351], [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_RST_INTERVAL, 3])
with tempfile.TemporaryDirectory() as tmp:
    exe, ppm = os.path.join(tmp, 'scans'), os.path.join(tmp, 'in.ppm')
    subprocess.run(['gcc', '-O2', '-o', exe, os.path.join(ROOT, 'scripts', 'jpeg_incomplete_scans.c'), '-ljpeg'], check=True)
    cv2.imwrite(ppm, chelsea[20:133, 40:219])
    subprocess.run([exe, ppm, path('c420_smooth.jpg')], check=True)
for name in ['c420_smooth', 'c420', 'c420_rst', 'c420_prog', 'c444', 'c444_prog', 'c422', 'c422_prog', 'tiny420', 'tiny422']:
    references(name)
references('gray', colour=False)
references('gray_prog', colour=False)

# 4:4:0 from 4:2:2: SOF0's luma component entry (id 1, factors 0x21, table 0) becomes 0x12.
buf = io.BytesIO()
Image.fromarray(cv2.cvtColor(chelsea[:64, :64], cv2.COLOR_BGR2RGB)).save(buf, 'JPEG', quality=90, subsampling=1)
data = bytearray(buf.getvalue())
sof = data.index(b'\xff\xc0')
luma = sof + 10  # marker(2) length(2) precision(1) height(2) width(2) count(1): then id, factors, table
assert data[luma] == 1 and data[luma + 1] == 0x21, data[luma:luma + 3]
data[luma + 1] = 0x12
with open(path('c440.jpg'), 'wb') as f:
    f.write(bytes(data))
assert cv2.imread(path('c440.jpg')) is not None
