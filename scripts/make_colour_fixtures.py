#!/usr/bin/python3
"""cv2.cvtColor references for imgpu's colour conversions (core/colour.ts, core/gpu/colour.ts): OpenCV's integer
RGB <-> YCrCb both ways, 8- and 16-bit, RGB and RGBA. Run from the repository root with Debian's Python 3 (OpenCV 4.6):
/usr/bin/python3 scripts/make_colour_fixtures.py

For each depth: ycrcb-rgb{bits}.npy, random RGBA pixels (37 x 29, odd so that no row is whole words; the RGB
tests take its first three channels), with the extremes (black, white, pure primaries) in its first row;
ycrcb-rgb{bits}-y.npy, the Y of cv2.COLOR_RGB2YCrCb; ycrcb-rgb{bits}-back.npy, cv2.COLOR_YCrCb2RGB of that image's
YCrCb with Y replaced by max - Y (a processed lightness, as CLAHE gives, far from the original, so that the
clamping of every channel is exercised)."""
import os

import cv2
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'colour')
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(40)
for bits, dtype in [(8, np.uint8), (16, np.uint16)]:
    top = (1 << bits) - 1
    rgba = rng.integers(0, top + 1, (37, 29, 4)).astype(dtype)
    extremes = [(0, 0, 0), (top, top, top), (top, 0, 0), (0, top, 0), (0, 0, top), (top, top, 0), (0, top, top), (top, 0, top)]
    for i, px in enumerate(extremes):
        rgba[0, i, :3] = px
    ycc = cv2.cvtColor(np.ascontiguousarray(rgba[:, :, :3]), cv2.COLOR_RGB2YCrCb)
    y = ycc[:, :, 0].copy()
    ycc[:, :, 0] = top - y
    back = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)
    np.save(os.path.join(OUT, f'ycrcb-rgb{bits}.npy'), rgba)
    np.save(os.path.join(OUT, f'ycrcb-rgb{bits}-y.npy'), y)
    np.save(os.path.join(OUT, f'ycrcb-rgb{bits}-back.npy'), back)
