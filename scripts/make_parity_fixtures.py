#!/usr/bin/python3
"""References for the numeric-parity fixes of issue 24 (colour → gray, Otsu ties, adaptive Gaussian threshold,
uint16 box rounding, non-finite convolution input, float morphology), from Debian's OpenCV 4.6 and SciPy 1.10.
Run from the repository root with Debian's Python: /usr/bin/python3 scripts/make_parity_fixtures.py
Every input is pseudo-random with a fixed seed or built here; every reference is the library's own output."""
import os

import cv2
import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures')


def save(family, name, a):
    os.makedirs(os.path.join(ROOT, family), exist_ok=True)
    np.save(os.path.join(ROOT, family, name + '.npy'), np.ascontiguousarray(a))


# ---- Colour -> gray: cv2.cvtColor(RGB2GRAY) of random 8- and 16-bit RGB pixels (imgpu images are RGB).
rng = np.random.default_rng(24)
for bits, dtype in ((8, np.uint8), (16, np.uint16)):
    rgb = rng.integers(0, 2 ** bits, (64, 64, 3)).astype(dtype)
    rgb[0, :4] = [[197, 175, 148], [0, 0, 0], [2 ** bits - 1] * 3, [2 ** bits - 1, 0, 2 ** bits - 1]]
    save('images', f'gray-rgb{bits}', rgb)
    save('images', f'gray-rgb{bits}-cv2', cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))

# For each gray level v, one RGB pixel that cv2 converts to v, chosen where OpenCV's 14-bit YCrCb weights
# (4899, 9617, 1868) give another level where such a pixel exists: colour images painted from a gray one with it
# convert back to that gray exactly only with cvtColor's own weights.
cand = np.stack(np.meshgrid(np.arange(256), np.arange(0, 256, 3), np.arange(0, 256, 5), indexing='ij'), -1).reshape(-1, 3)
cand = cand.astype(np.uint8)
g15 = cv2.cvtColor(cand[None], cv2.COLOR_RGB2GRAY)[0].astype(int)
g14 = (cand[:, 0].astype(int) * 4899 + cand[:, 1].astype(int) * 9617 + cand[:, 2].astype(int) * 1868 + 8192) >> 14
table = np.zeros((256, 3), np.uint8)
for v in range(256):
    at = np.flatnonzero(g15 == v)
    odd = at[g14[at] != v]
    table[v] = cand[(odd if len(odd) else at)[0]]
assert (cv2.cvtColor(table[None], cv2.COLOR_RGB2GRAY)[0] == np.arange(256)).all()
save('images', 'gray-levels-rgb', table)
print('gray: levels whose pixel differs with 14-bit weights:', int(((table[:, 0].astype(int) * 4899 + table[:, 1].astype(int) * 9617 + table[:, 2].astype(int) * 1868 + 8192) >> 14 != np.arange(256)).sum()))
