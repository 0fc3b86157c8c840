#!/usr/bin/python3
"""JPEG sampling layouts for the GPU JPEG decoder's tests (test/io/jpeg-layouts.test.ts). Run from the repository root:
/usr/bin/python3 scripts/make_jpeg_layout_fixtures.py  (Debian's python3-opencv 4.6; cjpeg of libjpeg-turbo-progs 2.1.5)
Input: crops of the Chelsea photograph (test/fixtures/images/chelsea.png), of sizes that cut the MCUs at the right and
bottom edges. Each file is written by cjpeg -sample (every layout libjpeg encodes and decodes, beyond 4:4:4, 4:2:2 and
4:2:0), some with restart markers or progressive. Writes test/fixtures/jpeg-layouts/NAME.jpg and references.json:
per file, the shape and the SHA-256 of cv2.imread's pixels, colour (BGR reversed to the library's RGB, interleaved)
and IMREAD_GRAYSCALE — hashes, not images, so that the fixtures stay a few KB each.
Also frac.jpg: a 4:2:2 file whose sampling factors are rewritten to 3x1,2x1,2x1 (not integral ratios), which
libjpeg and cv2.imread refuse in colour ("Fractional sampling not implemented yet"; in gray the chroma is not
upsampled, and the data, no longer matching the factors, is damaged).
"""
import hashlib
import json
import os
import subprocess
import tempfile

import cv2

ROOT = os.path.join(os.path.dirname(__file__), '..')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'jpeg-layouts')
os.makedirs(OUT, exist_ok=True)
chelsea = cv2.imread(os.path.join(ROOT, 'test', 'fixtures', 'images', 'chelsea.png'), cv2.IMREAD_COLOR)

# name: (cjpeg -sample, crop rows, crop columns, extra cjpeg flags). Upsampling per component (jdsample.c): ratio of
# the largest factors to the component's; 2x1 and 2x2 triangle filters (box where the plane is <= 2 samples wide),
# 1x2 triangle filter, anything else replication.
LAYOUTS = {
    's411': ('4x1,1x1,1x1', (40, 117), (100, 249), []),             # 4:1:1: chroma 4x1, replicated
    's411_rst': ('4x1,1x1,1x1', (60, 131), (150, 301), ['-restart', '1']),  # a restart marker every MCU row
    's411_prog': ('4x1,1x1,1x1', (20, 95), (90, 233), ['-progressive']),
    's440': ('1x2,1x1,1x1', (30, 109), (120, 261), []),             # 4:4:0: chroma 1x2, triangle filter down
    's440_rst': ('1x2,1x1,1x1', (70, 141), (80, 217), ['-restart', '3B']),  # every 3 MCUs
    's440_prog': ('1x2,1x1,1x1', (50, 125), (200, 333), ['-progressive']),
    's410': ('4x2,1x1,1x1', (10, 97), (60, 213), []),               # 4:1:0: 4x2, replicated
    's311': ('3x1,1x1,1x1', (80, 157), (140, 287), []),             # 3x1, replicated
    's141': ('1x4,1x1,1x1', (90, 171), (30, 171), []),              # 1x4, replicated
    's241': ('2x4,1x1,1x1', (25, 99), (70, 207), []),               # 2x4 (10 blocks an MCU, libjpeg's most)
    's12_22': ('1x2,2x2,2x2', (35, 110), (110, 259), []),           # chroma sampled more than luma: luma 2x1 triangle
    's21_12': ('2x1,1x2,1x2', (45, 120), (95, 241), ['-progressive']),  # luma 1x2 triangle, chroma 2x1 triangle
    's22_11_21': ('2x2,1x1,2x1', (55, 130), (85, 237), ['-restart', '2']),  # Cb 2x2 triangle, Cr 1x2 triangle
    's22_12': ('2x2,1x2,1x2', (65, 142), (75, 227), []),            # chroma 2x1 triangle
    's41_21': ('4x1,2x1,2x1', (75, 150), (65, 211), []),            # chroma 2x1 triangle under a 4x1 luma
    'tiny_s12_22': ('1x2,2x2,2x2', (100, 105), (200, 203), []),     # 3x5: luma 2 samples wide, replicated
    'tiny_s440': ('1x2,1x1,1x1', (100, 101), (200, 207), []),       # 7x1: one chroma row
    'tiny_s411': ('4x1,1x1,1x1', (100, 103), (200, 205), []),       # 5x3
}


def sha(img):
    return hashlib.sha256(img.tobytes()).hexdigest()


refs = {}
with tempfile.TemporaryDirectory() as tmp:
    for name, (sample, (y0, y1), (x0, x1), flags) in LAYOUTS.items():
        ppm = os.path.join(tmp, name + '.ppm')
        cv2.imwrite(ppm, chelsea[y0:y1, x0:x1])
        out = os.path.join(OUT, name + '.jpg')
        subprocess.run(['cjpeg', '-quality', '90', '-sample', sample, *flags, '-outfile', out, ppm], check=True)
        colour = cv2.imread(out, cv2.IMREAD_COLOR)
        gray = cv2.imread(out, cv2.IMREAD_GRAYSCALE)
        refs[name] = {'sample': sample, 'flags': ' '.join(flags), 'shape': list(gray.shape), 'rgb': sha(colour[:, :, ::-1]), 'gray': sha(gray)}

# Not integral ratios: luma 2x1 -> 3x1, chroma 1x1 -> 2x1 in a 4:2:2 file's SOF0 (the data no longer matches either).
with tempfile.TemporaryDirectory() as tmp:
    ppm = os.path.join(tmp, 'frac.ppm')
    cv2.imwrite(ppm, chelsea[:32, :48])
    frac = os.path.join(OUT, 'frac.jpg')
    subprocess.run(['cjpeg', '-quality', '90', '-sample', '2x1,1x1,1x1', '-outfile', frac, ppm], check=True)
    data = bytearray(open(frac, 'rb').read())
    sof = data.index(b'\xff\xc0') + 10  # marker(2) length(2) precision(1) height(2) width(2) count(1): id, factors, table
    assert [data[sof + 1], data[sof + 4], data[sof + 7]] == [0x21, 0x11, 0x11]
    data[sof + 1], data[sof + 4], data[sof + 7] = 0x31, 0x21, 0x21
    open(frac, 'wb').write(bytes(data))
    assert cv2.imread(frac) is None

with open(os.path.join(OUT, 'references.json'), 'w') as f:
    json.dump(refs, f, indent=1)
    f.write('\n')
