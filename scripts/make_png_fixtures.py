#!/usr/bin/python3
"""PNG kinds for the libpng decoder's tests (test/io/png-libpng.test.ts). Run from the repository root:
/usr/bin/python3 scripts/make_png_fixtures.py  (Debian's python3-opencv 4.6 on libpng 1.6.39, python3-pil)
Input: odd-sized crops of the Chelsea photograph (colour, test/fixtures/images/chelsea.png, 8 and 16 bits) and of the
camera and moon pictures (gray), so that rows and Adam7 passes end mid-byte. Written by cv2.imwrite (8/16-bit gray,
RGB, RGBA), by PIL (palette with transparency, gray+alpha, 1-bit) and, for what neither writes (16-bit gray+alpha,
1/2/4-bit gray, RGB/gray with a tRNS colour, gAMA and sRGB chunks, Adam7 interlacing, eXIf orientation before
and after the image data), by write_png below.
Writes test/fixtures/png/NAME.png and references.json: per file, the shape, channels and depth of the two reads imgpu
makes and the SHA-256 of cv2.imread's pixels for each (samples interleaved, 16-bit little-endian):
  colour: IMREAD_UNCHANGED's pixels, BGR(A) reversed to the library's RGB(A), EXIF orientation applied (cv2 applies it
          under every flag but IMREAD_UNCHANGED, so these are checked against IMREAD_COLOR | IMREAD_ANYDEPTH where
          that keeps every channel); a gray+alpha file as `gray' (imgpu drops alpha);
  gray:   IMREAD_GRAYSCALE | IMREAD_ANYDEPTH (libpng's png_set_rgb_to_gray for colour files).
Hashes, not images, keep the fixtures a few KB each.
"""
import hashlib
import json
import os
import struct
import zlib

import cv2
import numpy as np
from PIL import Image

ROOT = os.path.join(os.path.dirname(__file__), '..')
IMAGES = os.path.join(ROOT, 'test', 'fixtures', 'images')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'png')
os.makedirs(OUT, exist_ok=True)

H, W = 37, 53  # odd: rows of 1/2/4-bit samples and every Adam7 pass end mid-byte or short
rgb8 = cv2.cvtColor(cv2.imread(os.path.join(IMAGES, 'chelsea.png'), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)[100:100 + H, 150:150 + W]
rgb16 = cv2.cvtColor(cv2.imread(os.path.join(IMAGES, 'chelsea16.png'), cv2.IMREAD_UNCHANGED), cv2.COLOR_BGR2RGB)[100:100 + H, 150:150 + W]
gray8 = cv2.imread(os.path.join(IMAGES, 'camera.png'), cv2.IMREAD_GRAYSCALE)[200:200 + H, 220:220 + W]
gray16 = cv2.imread(os.path.join(IMAGES, 'moon16.png'), cv2.IMREAD_UNCHANGED)[150:150 + H, 180:180 + W]
alpha8 = ((np.arange(H)[:, None] * 7 + np.arange(W)[None, :] * 5) % 256).astype(np.uint8)
alpha16 = alpha8.astype(np.uint16) * 257


def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))


def pack_rows(samples, depth):
    """Rows of samples (2-D: row, sample) as PNG scanline bytes at `depth` bits, big-endian for 16."""
    if depth == 16:
        return [r.astype('>u2').tobytes() for r in samples]
    if depth == 8:
        return [r.astype(np.uint8).tobytes() for r in samples]
    per = 8 // depth
    out = []
    for r in samples:
        r = np.concatenate([r, np.zeros((-len(r)) % per, r.dtype)]).reshape(-1, per).astype(np.uint8)
        out.append(bytes(sum(int(v) << (8 - depth * (i + 1)) for i, v in enumerate(g)) for g in r))
    return out


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(name, px, color_type, depth, extra=b'', interlace=False, after=b''):
    """px: (H, W, samples per pixel) integers. Filter 0 on every row; Adam7 passes when `interlace`; `extra` chunks
    before the image data, `after` chunks after it."""
    h, w, spp = px.shape
    raw = b''
    for x0, y0, dx, dy in (ADAM7 if interlace else [(0, 0, 1, 1)]):
        sub = px[y0::dy, x0::dx]
        if sub.size:
            raw += b''.join(b'\0' + r for r in pack_rows(sub.reshape(sub.shape[0], -1), depth))
    ihdr = struct.pack('>IIBBBBB', w, h, depth, color_type, 0, 0, 1 if interlace else 0)
    data = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + extra + chunk(b'IDAT', zlib.compress(raw, 9)) + after + chunk(b'IEND', b'')
    with open(os.path.join(OUT, name + '.png'), 'wb') as f:
        f.write(data)


def cv2_write(name, rgb):
    bgr = rgb if rgb.ndim == 2 else cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR if rgb.shape[2] == 3 else cv2.COLOR_RGBA2BGRA)
    assert cv2.imwrite(os.path.join(OUT, name + '.png'), bgr)


def pil_write(name, im, **kw):
    im.save(os.path.join(OUT, name + '.png'), **kw)


GAMA = chunk(b'gAMA', struct.pack('>I', 45455))
SRGB = chunk(b'sRGB', b'\0')
def exif(orientation, order):
    """An eXIf chunk: a TIFF header (`order` b'MM' or b'II') and one IFD holding Orientation."""
    e = '>' if order == b'MM' else '<'
    return chunk(b'eXIf', order + struct.pack(e + 'HIH', 42, 8, 1) + struct.pack(e + 'HHIHH', 0x0112, 3, 1, orientation, 0) + struct.pack(e + 'I', 0))


levels = lambda img, d: (img.astype(np.uint32) >> (8 - d)).astype(np.uint8)  # 8-bit gray to d bits

cv2_write('rgb8', rgb8)
cv2_write('rgba8', np.dstack([rgb8, alpha8]))
cv2_write('gray8', gray8)
cv2_write('rgb16', rgb16)
cv2_write('rgba16', np.dstack([rgb16, alpha16]))
cv2_write('gray16', gray16)
pil_write('palette_trns', Image.fromarray(rgb8).quantize(colors=40), transparency=bytes(range(0, 240, 6)))
pil_write('palette4', Image.fromarray(rgb8).quantize(colors=12), bits=4)
pil_write('graya8', Image.fromarray(np.dstack([gray8, alpha8]), 'LA'))
pil_write('gray1', Image.fromarray(gray8 > 127))
write_png('graya16', np.dstack([gray16, alpha16]), 4, 16)
for d in (1, 2, 4):
    write_png(f'gray{d}bit', levels(gray8, d)[:, :, None], 0, d)
write_png('gray2bit_trns', levels(gray8, 2)[:, :, None], 0, 2, chunk(b'tRNS', struct.pack('>H', 1)))
write_png('rgb8_trns', rgb8, 2, 8, chunk(b'tRNS', struct.pack('>HHH', *(int(v) for v in rgb8[0, 0]))))
write_png('rgb8_gama', rgb8, 2, 8, GAMA)
write_png('rgb16_srgb', rgb16, 2, 16, SRGB + GAMA)
write_png('rgba8_adam7', np.dstack([rgb8, alpha8]), 6, 8, interlace=True)
write_png('rgb16_adam7', rgb16, 2, 16, interlace=True)
write_png('rgb16_exif6', rgb16, 2, 16, exif(6, b'MM'))  # rotated 90° clockwise by cv2.imread
write_png('gray8_exif3_after', gray8[:, :, None], 0, 8, after=exif(3, b'II'))  # eXIf after IDAT: rotated 180°
write_png('gray4bit_adam7', levels(gray8, 4)[:, :, None], 0, 4, interlace=True)


def library_order(img):
    """cv2's pixels in imgpu's order (RGB(A), interleaved), as little-endian bytes."""
    if img.ndim == 3:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB if img.shape[2] == 3 else cv2.COLOR_BGRA2RGBA)
    return np.ascontiguousarray(img).astype(img.dtype.newbyteorder('<')).tobytes()


def oriented(img, o):
    """EXIF orientation `o` applied as cv2's ApplyExifOrientation does (flips and a transpose)."""
    t = img.swapaxes(0, 1) if o >= 5 else img
    return np.ascontiguousarray({1: t, 2: t[:, ::-1], 3: t[::-1, ::-1], 4: t[::-1], 5: t, 6: t[:, ::-1], 7: t[::-1, ::-1], 8: t[::-1]}[o])


def describe(img):
    return {'shape': list(img.shape[:2]), 'channels': 1 if img.ndim == 2 else img.shape[2], 'depth': img.dtype.itemsize * 8,
            'sha256': hashlib.sha256(library_order(img)).hexdigest()}


refs = {}
for f in sorted(os.listdir(OUT)):
    if not f.endswith('.png'):
        continue
    path = os.path.join(OUT, f)
    gray = cv2.imread(path, cv2.IMREAD_GRAYSCALE | cv2.IMREAD_ANYDEPTH)
    with Image.open(path) as im:
        colour = oriented(cv2.imread(path, cv2.IMREAD_UNCHANGED), im.getexif().get(0x0112, 1))
    if colour.ndim == 3 and colour.shape[2] == 3:
        assert np.array_equal(colour, cv2.imread(path, cv2.IMREAD_COLOR | cv2.IMREAD_ANYDEPTH)), f'{f}: orientation'
    with open(path, 'rb') as png:
        gray_alpha = png.read(26)[25] == 4  # IHDR's colour type
    refs[f[:-4]] = {'colour': describe(gray if gray_alpha else colour), 'gray': describe(gray)}
with open(os.path.join(OUT, 'references.json'), 'w') as f:
    json.dump(refs, f, indent=1, sort_keys=True)
    f.write('\n')
print(f'{len(refs)} PNGs in {OUT}')
