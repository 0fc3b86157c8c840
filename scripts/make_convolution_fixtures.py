#!/usr/bin/python3
"""Convolution references: SciPy (scipy.ndimage) and Debian's OpenCV 4.6 on real data. Run from the repository
root after make_volume_fixtures.py: /usr/bin/python3 scripts/make_convolution_fixtures.py

Inputs: img2d.npy — a 128×97 float32 crop (rows 100–196, columns 200–327) of scikit-image's camera photograph;
vol3d.npy — a 6×40×44 float32 crop (all slices, rows 40–79, columns 30–73) of the CT series of
make_volume_fixtures.py (HU). Kernels k2d.npy (5×3), k3d.npy (3×3×3), keven.npy (4×2): fixed pseudo-random.
Every reference is the float32 output, [z,] y, x.
"""
import os

import cv2
import numpy as np
from scipy import ndimage as ndi

ROOT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures')
OUT = os.path.join(ROOT, 'convolve')
os.makedirs(OUT, exist_ok=True)
MODES = {'reflect': 'reflect', 'reflect101': 'mirror', 'replicate': 'nearest', 'wrap': 'wrap', 'constant': 'constant'}


def save(name, a):
    np.save(os.path.join(OUT, name + '.npy'), np.ascontiguousarray(a, dtype=np.float32))


cam = cv2.imread(os.path.join(ROOT, 'images', 'camera.png'), cv2.IMREAD_GRAYSCALE)
img = cam[100:197, 200:328].astype(np.float32)
vol = np.load(os.path.join(ROOT, 'volumes', 'ct-series.npy'))[:, 40:80, 30:74].copy()
rng = np.random.default_rng(7)
k2d = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
k3d = rng.uniform(-1, 1, (3, 3, 3)).astype(np.float32)
keven = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
save('img2d', img)
save('vol3d', vol)
save('k2d', k2d)
save('k3d', k3d)
save('keven', keven)

# 2D, scipy
for name, mode in MODES.items():
    save(f'sp2-sobel-x-{name}', ndi.sobel(img, axis=1, mode=mode))
    save(f'sp2-correlate-{name}', ndi.correlate(img, k2d, mode=mode, cval=-2.0))
save('sp2-sobel-y-reflect', ndi.sobel(img, axis=0, mode='reflect'))
save('sp2-prewitt-x-reflect101', ndi.prewitt(img, axis=1, mode='mirror'))
save('sp2-gauss2-reflect', ndi.gaussian_filter(img, 2.0, mode='reflect'))
save('sp2-gauss2-constant', ndi.gaussian_filter(img, 2.0, mode='constant', cval=3.0))
save('sp2-box5-reflect', ndi.uniform_filter(img, 5, mode='reflect'))
save('sp2-laplace-reflect101', ndi.laplace(img, mode='mirror'))
save('sp2-convolve-reflect', ndi.convolve(img, k2d, mode='reflect'))
# An even kernel anchored at (1, 0): scipy's origin is anchor - size // 2.
save('sp2-correlate-even-reflect', ndi.correlate(img, keven, mode='reflect', origin=(1 - 2, 0 - 1)))
r1 = ndi.correlate(img, np.array([[1, 0], [0, -1]], np.float32), mode='reflect', origin=(-1, -1))
r2 = ndi.correlate(img, np.array([[0, 1], [-1, 0]], np.float32), mode='reflect', origin=(-1, -1))
save('sp2-roberts-reflect', np.sqrt(r1 * r1 + r2 * r2))
sx = ndi.sobel(img, axis=1, mode='reflect')
sy = ndi.sobel(img, axis=0, mode='reflect')
save('sp2-sobel-reflect', np.sqrt(sx * sx + sy * sy))

# 2D, OpenCV (float32 output; default border BORDER_REFLECT_101)
save('cv2-sobel-x', cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3))
save('cv2-sobel-y', cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3))
save('cv2-gauss2', cv2.GaussianBlur(img, (17, 17), 2.0))  # ksize 2·⌊4σ + 0.5⌋ + 1 = 17 = scipy's radius 8
save('cv2-filter2d', cv2.filter2D(img, cv2.CV_32F, k2d))

# 3D, scipy
for name, mode in MODES.items():
    save(f'sp3-correlate-{name}', ndi.correlate(vol, k3d, mode=mode, cval=1.5))
for axis, a in (('x', 2), ('y', 1), ('z', 0)):
    save(f'sp3-sobel-{axis}-reflect', ndi.sobel(vol, axis=a, mode='reflect'))
s = [ndi.sobel(vol, axis=a, mode='reflect') for a in range(3)]
save('sp3-sobel-reflect', np.sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]))
save('sp3-prewitt-z-reflect101', ndi.prewitt(vol, axis=0, mode='mirror'))
save('sp3-gauss-reflect', ndi.gaussian_filter(vol, (0.8, 1.5, 2.0), mode='reflect', truncate=3.0))
save('sp3-laplace-replicate', ndi.laplace(vol, mode='nearest'))
print('wrote', OUT)
