#!/usr/bin/python3
"""Reference outputs for imgpu's tests, from the libraries people trust (Debian python3-opencv 4.6,
python3-skimage 0.19). Run from the repository root with Debian's Python: /usr/bin/python3 scripts/make_fixtures.py
Inputs are real photographs shipped with scikit-image; outputs are written as lossless PNG/.npy."""
import os
import shutil

import cv2
import numpy as np
import skimage
import skimage.data

ROOT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures')
DATA = os.path.dirname(skimage.data.__file__)
IMAGES = os.path.join(ROOT, 'images')
os.makedirs(IMAGES, exist_ok=True)
os.makedirs(os.path.join(ROOT, 'equalize'), exist_ok=True)


def copy_input(name):
    shutil.copy(os.path.join(DATA, name), os.path.join(IMAGES, name))
    return os.path.join(IMAGES, name)


# Gray photographs: cv2.equalizeHist reference.
for name in ['camera.png', 'moon.png', 'coins.png']:
    src = cv2.imread(copy_input(name), cv2.IMREAD_UNCHANGED)
    assert src.dtype == np.uint8 and src.ndim == 2, name
    cv2.imwrite(os.path.join(ROOT, 'equalize', name), cv2.equalizeHist(src))

# Colour photograph: OpenCV's RGB->gray (imgpu converts colour this way), and equalizeHist of that gray.
rgb = cv2.cvtColor(cv2.imread(copy_input('chelsea.png'), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
cv2.imwrite(os.path.join(ROOT, 'images', 'chelsea_gray_cv2.png'), gray)
cv2.imwrite(os.path.join(ROOT, 'equalize', 'chelsea.png'), cv2.equalizeHist(gray))

# 16-bit: OpenCV has no 16-bit equalizeHist; the reference is OpenCV's formula with 65536 bins, in float32
# exactly as imgpu documents it (scale = 65535.f / (total - hist[i0]), lut = rint(float32(cumsum) * scale)).
img16 = (skimage.data.moon().astype(np.uint32) * 257 + (np.arange(512 * 512).reshape(512, 512) % 251)).astype(np.uint16)
np.save(os.path.join(IMAGES, 'moon16.npy'), img16)
hist = np.bincount(img16.ravel(), minlength=65536).astype(np.int64)
i0 = int(np.flatnonzero(hist)[0])
total = img16.size
scale = np.float32(65535.0) / np.float32(total - hist[i0])
cum = np.cumsum(hist) - hist[i0]
lut = np.rint(cum.astype(np.float32) * scale).clip(0, 65535).astype(np.uint16)
lut[: i0 + 1] = 0
np.save(os.path.join(ROOT, 'equalize', 'moon16.npy'), lut[img16])
cv2.imwrite(os.path.join(IMAGES, 'moon16.png'), img16)
print('fixtures written to', os.path.normpath(ROOT))

# ---- Histograms (issue 3): numpy.bincount / np.histogram(range=(0, 2^bits)) / cv2.calcHist with a mask.
import json  # noqa: E402

HIST = os.path.join(ROOT, 'histogram')
os.makedirs(HIST, exist_ok=True)


def sparse(counts):
    return {str(i): int(c) for i, c in enumerate(counts) if c}


hist_ref = {}
for name in ['camera', 'moon', 'coins']:
    img = cv2.imread(os.path.join(IMAGES, f'{name}.png'), cv2.IMREAD_UNCHANGED)
    hist_ref[name] = {'bincount': sparse(np.bincount(img.ravel(), minlength=256)),
                      'bins64': sparse(np.histogram(img, bins=64, range=(0, 256))[0]),
                      'bins100': sparse(np.histogram(img, bins=100, range=(0, 256))[0])}
hist_ref['moon16'] = {'bincount': sparse(np.bincount(img16.ravel(), minlength=65536)),
                      'bins1000': sparse(np.histogram(img16, bins=1000, range=(0, 65536))[0])}
coins = cv2.imread(os.path.join(IMAGES, 'coins.png'), cv2.IMREAD_UNCHANGED)
mask = np.zeros_like(coins)
cv2.circle(mask, (190, 150), 110, 255, -1)
cv2.imwrite(os.path.join(IMAGES, 'coins_mask.png'), mask)
hist_ref['coins']['masked'] = sparse(cv2.calcHist([coins], [0], mask, [256], [0, 256]).ravel().astype(np.int64))
with open(os.path.join(HIST, 'histograms.json'), 'w') as f:
    json.dump(hist_ref, f)

# ---- Global thresholds (issue 3): cv2.threshold(THRESH_OTSU) value and output; skimage threshold_isodata.
import skimage.filters  # noqa: E402

copy_input('page.png')
THR = os.path.join(ROOT, 'threshold')
os.makedirs(THR, exist_ok=True)
thr_ref = {}
for name in ['camera', 'coins', 'page', 'moon']:
    img = cv2.imread(os.path.join(IMAGES, f'{name}.png'), cv2.IMREAD_UNCHANGED)
    t, out = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    cv2.imwrite(os.path.join(THR, f'{name}_otsu.png'), out)
    iso = skimage.filters.threshold_isodata(img)
    iso_all = skimage.filters.threshold_isodata(img, return_all=True)
    thr_ref[name] = {'otsu': float(t), 'isodata': int(iso), 'isodata_all': [int(x) for x in iso_all]}
with open(os.path.join(THR, 'thresholds.json'), 'w') as f:
    json.dump(thr_ref, f, indent=1)
print('histogram and threshold fixtures written')

# ---- Local thresholds (issue 3): cv2.adaptiveThreshold, MEAN_C and GAUSSIAN_C, THRESH_BINARY.
LOCAL = {}
for name, block, c in [('page', 11, 2), ('page', 25, 5), ('camera', 15, 3), ('coins', 31, -4)]:
    img = cv2.imread(os.path.join(IMAGES, f'{name}.png'), cv2.IMREAD_UNCHANGED)
    for mname, m in [('mean', cv2.ADAPTIVE_THRESH_MEAN_C), ('gaussian', cv2.ADAPTIVE_THRESH_GAUSSIAN_C)]:
        out = cv2.adaptiveThreshold(img, 255, m, cv2.THRESH_BINARY, block, c)
        cv2.imwrite(os.path.join(THR, f'{name}_{mname}_{block}_{c}.png'), out)
print('local threshold fixtures written')

# ---- A pipeline (test/package: the packed package's runPipeline): "equalize | threshold --method otsu" =
# cv2.threshold(cv2.equalizeHist(img), THRESH_OTSU).
img = cv2.imread(os.path.join(IMAGES, 'camera.png'), cv2.IMREAD_UNCHANGED)
cv2.imwrite(os.path.join(THR, 'camera_equalize_otsu.png'), cv2.threshold(cv2.equalizeHist(img), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[1])
print('pipeline fixture written')
