#!/usr/bin/env python3
"""Folders for bench/throughput.ts (issue 40 item 1), deterministic: camera-sized pictures (2-24 MP) from real photos of
different sources (test/fixtures/images, and scikit-image's bundled photographs where it is installed), mirror-tiled to
size (camera-like detail at every size), written by different encoders:
  jpeg-cv2/   libjpeg through cv2.imwrite, quality 95: 4:2:0, 4:2:2, 4:4:4, 4:1:1, 4:4:0, gray, progressive, restart
              markers, EXIF orientation 6 and 3 (an APP1 segment inserted after SOI)
  png/        8-bit colour and gray, 16-bit colour and gray PNG (cv2.imwrite, zlib level 1)
  src-sharp/  lossless sources (PNG level 0) that bench/throughput.ts encodes with sharp (libvips, q80-90, optimised Huffman)
Usage: python3 bench/throughput_folders.py <dir> <images per folder>  -> JSON: each file and its layout as written."""
import json
import os
import sys
from multiprocessing import Pool

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, '..', 'test', 'fixtures', 'images')
# OpenCV's IMWRITE_JPEG_SAMPLING_FACTOR (4.5.5+; builds without it write 4:2:0: the layout is read back from the file).
SAMPLING = 7
FACTORS = {'420': 0x221111, '422': 0x211111, '444': 0x111111, '411': 0x411111, '440': 0x121111}
# jpeg-cv2's layouts, one per image in turn (4:2:0 most often, as cameras write).
LAYOUTS = ['420', '422', '420', '444', '411', 'gray', '420-progressive', '420-restart', '440', '420-exif6', '420', '422-exif3']


def sources():
    """Real photographs, BGR 8-bit: the repository's and scikit-image's bundled ones (those that load offline)."""
    out = []
    for f in ['chelsea.png', 'camera.png', 'coins.png', 'moon.png', 'page.png']:
        img = cv2.imread(os.path.join(FIXTURES, f), cv2.IMREAD_COLOR)
        if img is not None:
            out.append((f, img))
    try:
        from skimage import data
        for name in ['astronaut', 'coffee', 'rocket', 'chelsea', 'immunohistochemistry', 'retina']:
            try:
                rgb = getattr(data, name)()
                if rgb.ndim == 3 and rgb.shape[2] == 3:
                    out.append((f'skimage.{name}', cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)))
            except Exception:  # noqa: BLE001 (a picture that needs a download)
                pass
    except ImportError:
        pass
    return out


def tiled(img, mp, i):
    """`img` mirror-tiled (numpy 'symmetric') to about `mp` megapixels at its aspect ratio, shifted by image index."""
    h0, w0 = img.shape[:2]
    h = int(round((mp * 1e6 * h0 / w0) ** 0.5))
    w = int(round(mp * 1e6 / h))
    pad = ((0, max(0, h - h0) + 17 * i), (0, max(0, w - w0) + 29 * i), (0, 0))
    big = np.pad(img, pad, mode='symmetric')
    return np.ascontiguousarray(big[17 * i:17 * i + h, 29 * i:29 * i + w])


def exif_orientation(jpeg, value):
    """The JPEG with an EXIF APP1 segment (big-endian TIFF, one IFD entry: Orientation = value) after its SOI."""
    tiff = b'MM\x00\x2a\x00\x00\x00\x08' + b'\x00\x01' + b'\x01\x12\x00\x03\x00\x00\x00\x01' + value.to_bytes(2, 'big') + b'\x00\x00' + b'\x00\x00\x00\x00'
    body = b'Exif\x00\x00' + tiff
    return jpeg[:2] + b'\xff\xe1' + (len(body) + 2).to_bytes(2, 'big') + body + jpeg[2:]


DRI, SOS = b'\xff\xdd', b'\xff\xda'


def sof_layout(jpeg):
    """'gray', or the luma and chroma sampling factors and the frame type read from the file's SOF: what was written."""
    i = 2
    while i < len(jpeg) - 4:
        marker, size = jpeg[i + 1], int.from_bytes(jpeg[i + 2:i + 4], 'big')
        if marker in (0xC0, 0xC1, 0xC2):
            n = jpeg[i + 9]
            kind = 'progressive' if marker == 0xC2 else 'baseline'
            if n == 1:
                return f'gray {kind}'
            f = [jpeg[i + 11 + 3 * c] for c in range(n)]
            restart = ', restart' if DRI in jpeg[:jpeg.find(SOS)] else ''
            return f'{kind} Y {f[0] >> 4}x{f[0] & 15}, chroma {f[1] >> 4}x{f[1] & 15}{restart}'
        i += 2 + size
    return 'unknown'


def jpeg_cv2(img, layout):
    base = layout.split('-')[0]
    params = [cv2.IMWRITE_JPEG_QUALITY, 95]
    if base != 'gray':
        params += [SAMPLING, FACTORS[base]]
    else:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    if 'progressive' in layout:
        params += [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]
    if 'restart' in layout:
        params += [cv2.IMWRITE_JPEG_RST_INTERVAL, 4]
    ok, buf = cv2.imencode('.jpg', img, params)
    assert ok
    b = buf.tobytes()
    if 'exif' in layout:
        b = exif_orientation(b, int(layout[-1]))
    return b


def png(img, i):
    """8-bit colour, 8-bit gray, 16-bit colour, 16-bit gray in turn (16-bit: the 8-bit photo ×257, full range)."""
    kind = ['png8-colour', 'png8-gray', 'png16-colour', 'png16-gray'][i % 4]
    x = img if 'colour' in kind else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    if '16' in kind:
        x = x.astype(np.uint16) * 257
    ok, buf = cv2.imencode('.png', x, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    assert ok
    return kind, buf.tobytes()


def write_image(args):
    """Image i of every folder; returns its entries of the file list."""
    root, i, count, srcs = args
    mp = 2 + 22 * i / max(1, count - 1)
    name, photo = srcs[i % len(srcs)]
    img = tiled(photo, mp, i)
    stem = f'img{i:04d}'
    layout = LAYOUTS[i % len(LAYOUTS)]
    b = jpeg_cv2(img, layout)
    with open(os.path.join(root, 'jpeg-cv2', stem + '.jpg'), 'wb') as f:
        f.write(b)
    kind, p = png(img, i)
    with open(os.path.join(root, 'png', stem + '.png'), 'wb') as f:
        f.write(p)
    cv2.imwrite(os.path.join(root, 'src-sharp', stem + '.png'), img, [cv2.IMWRITE_PNG_COMPRESSION, 0])
    mps = round(img.shape[0] * img.shape[1] / 1e6, 2)
    return {f'jpeg-cv2/{stem}.jpg': {'source': name, 'mp': mps, 'asked': layout, 'written': sof_layout(b)},
            f'png/{stem}.png': {'source': name, 'mp': mps, 'kind': kind}}


def main():
    root, count = sys.argv[1], int(sys.argv[2])
    srcs = sources()
    for folder in ['jpeg-cv2', 'png', 'src-sharp']:
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    files = {}
    with Pool(min(16, os.cpu_count() or 1)) as p:
        for entries in p.map(write_image, [(root, i, count, srcs) for i in range(count)], chunksize=1):
            files.update(entries)
    print(json.dumps({'cv2': cv2.__version__, 'sources': [n for n, _ in srcs], 'files': files}))


main()
