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


# ---- Otsu on 8-bit histograms full of exact and near ties: small images of few distinct values (random sets,
# arithmetic runs, symmetric triples), and np.arange(0, 181, 3). Pixels concatenated; rows [offset, length, T]
# with T = cv2.threshold(THRESH_OTSU)'s threshold. Half of the cases are ones an f32 evaluation of σ gets wrong.
def f32_otsu(hist):
    f = np.float32
    N, S = int(hist.sum()), int((np.arange(256) * hist).sum())
    best, at, n1, s1 = f(0), 0, 0, 0
    for i in range(256):
        n1 += int(hist[i])
        s1 += i * int(hist[i])
        f1, f2 = f(n1), f(N - n1)
        if min(f1, f2) < f(1.1920928955078125e-7) * f(N):
            continue
        mu1, mu2 = f(s1) / f1, f(S - s1) / f2
        sigma = f1 * f2 * (mu1 - mu2) * (mu1 - mu2)
        if sigma > best:
            best, at = sigma, i
    return at


rng = np.random.default_rng(14)
wrong, right = [np.arange(0, 181, 3, dtype=np.uint8)], []
while len(wrong) < 100 or len(right) < 100:
    kind = rng.integers(3)
    if kind == 0:
        k = rng.integers(2, 7)
        vals, cnt = rng.choice(256, k, replace=False), rng.integers(1, 4, k)
    elif kind == 1:
        step, start = rng.integers(1, 8), rng.integers(0, 50)
        vals = np.arange(start, min(256, start + step * rng.integers(3, 60)), step)
        cnt = np.full(len(vals), rng.integers(1, 3))
    else:
        c, d = rng.integers(20, 230), rng.integers(1, 25)
        vals, cnt = np.array([c - d, c, c + d]), rng.integers(1, 5, 3)
        cnt[2] = cnt[0]
    img = np.repeat(vals, cnt).astype(np.uint8)
    cv_t = int(cv2.threshold(img[None], 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[0])
    (wrong if f32_otsu(np.bincount(img, minlength=256)) != cv_t else right).append(img)
cases = wrong[:100] + right[:100]
rows, at = [], 0
for img in cases:
    rows.append([at, len(img), int(cv2.threshold(img[None], 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[0])])
    at += len(img)
save('threshold', 'otsu-ties-pixels', np.concatenate(cases)[None])
save('threshold', 'otsu-ties-cv2', np.array(rows, np.uint16))
print('otsu ties:', len(cases), 'cases,', at, 'pixels; arange(0, 181, 3) ->', rows[0][2])


def xorshift(n, seed, mx):
    """test/helpers/fixtures.ts randomBytes / randomU16: xorshift32 values modulo mx, so tests rebuild inputs."""
    out, s = np.empty(n, np.int64), (seed & 0xffffffff) or 1
    for i in range(n):
        s ^= (s << 13) & 0xffffffff
        s ^= s >> 17
        s ^= (s << 5) & 0xffffffff
        out[i] = s % mx
    return out


# ---- uint16 box filter with rounding back to 16 bits: cv2.blur (BORDER_REFLECT_101) of randomU16(127 * 131, 16)
# shaped 127×131 (131 % 8 = 3 columns take OpenCV's scalar tail), windows (w, h) 7×11, 16×16, 2×2, 5×1.
box_in = xorshift(127 * 131, 16, 65536).astype(np.uint16).reshape(127, 131)
for kw, kh in ((7, 11), (16, 16), (2, 2), (5, 1)):
    save('convolve', f'cv2-blur-u16-{kw}x{kh}', cv2.blur(box_in, (kw, kh)))


# ---- Gaussian adaptive threshold on low-contrast noise: 181 + randomBytes(320 * 300, 15, 4) shaped 300×320, whose
# blur values fall within a float32 step of x.5; cv2.adaptiveThreshold(255, GAUSSIAN_C, BINARY, k, C = 2) for
# k = 11, 15, 31, 101, stored as np.packbits of (result == 255), rows of 40 bytes.
noise = (181 + xorshift(320 * 300, 15, 4)).astype(np.uint8).reshape(300, 320)
for k in (11, 15, 31, 101):
    ref = cv2.adaptiveThreshold(noise, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, k, 2)
    save('threshold', f'gauss-noise-k{k}-bits', np.packbits(ref == 255, axis=1))

# A window sum where OpenCV's float32 scaling and the exact quotient round apart: 40×48 of 65535 with one pixel
# 382 at (20, 24), window 15×17 (area 255): sum 254·65535 + 382.
spike = np.full((40, 48), 65535, np.uint16)
spike[20, 24] = 382
save('convolve', 'cv2-blur-u16-spike-15x17', cv2.blur(spike, (15, 17)))
s = 254 * 65535 + 382
print('spike: cv2', int(cv2.blur(spike, (15, 17))[20, 24]), 'float32 scaling', int(np.rint(np.float32(s) * np.float32(1 / 255))), 'exact', round(s / 255))


# ---- float32 morphology at infinities: OpenCV pads float32 with ±FLT_MAX (its default border value made
# concrete), so a window of border only gives ±FLT_MAX, and border beats an infinite pixel. Input: 6×7 with
# ±inf at edges, an interior 3×3 block of +inf, a 2×2 corner block of +inf and one of −inf; references for rect:3x3, rect:5x5 with 2
# iterations (OpenCV folds them into one 9×9 box), and a 3×3 mask with only its top-left element (the window
# never covers its anchor).
mf = np.arange(42, dtype=np.float32).reshape(6, 7) - 20
mf[0, 0], mf[0, 6], mf[5, 3], mf[2, 0] = np.inf, -np.inf, -np.inf, np.inf
mf[2:5, 2:5] = np.inf
mf[4:, :2], mf[:2, 5:] = np.inf, -np.inf
save('morph', 'inf-input', mf)
corner = np.zeros((3, 3), np.uint8)
corner[0, 0] = 1
for name, kernel, it in (('rect3', np.ones((3, 3), np.uint8), 1), ('rect5-it2', np.ones((5, 5), np.uint8), 2), ('corner', corner, 1)):
    save('morph', f'inf-erode-{name}', cv2.erode(mf, kernel, iterations=it))
    save('morph', f'inf-dilate-{name}', cv2.dilate(mf, kernel, iterations=it))
print('morph: corner erode row 0', cv2.erode(mf, corner)[0])


# ---- Non-finite input through the float filters: scipy.ndimage 1.10 (what imgpu's filter command follows).
# sobel/prewitt run correlate1d passes that multiply every weight (0·NaN and 0·inf are NaN); uniform_filter runs
# running sums (a NaN or inf that enters stays in the sum: the rest of the line is NaN); correlate skips weights
# |w| ≤ DBL_EPSILON. Inputs: 12×13 and 5×8×9 float32 with NaN, +inf and −inf inside, on edges and corners.
from scipy import ndimage as ndi  # noqa: E402

rng = np.random.default_rng(16)
nf2 = rng.normal(0, 10, (12, 13)).astype(np.float32)
for (y, x), v in {(5, 6): np.nan, (0, 3): np.inf, (9, 12): -np.inf, (7, 1): np.inf, (7, 3): -np.inf, (11, 0): np.nan, (2, 10): np.inf}.items():
    nf2[y, x] = v
nf3 = rng.normal(0, 10, (5, 8, 9)).astype(np.float32)
for (z, y, x), v in {(2, 4, 4): np.nan, (0, 0, 8): np.inf, (4, 6, 2): -np.inf, (1, 3, 0): np.inf}.items():
    nf3[z, y, x] = v
save('convolve', 'nf-in2d', nf2)
save('convolve', 'nf-in3d', nf3)
NF_MODES = {'reflect': 'reflect', 'reflect101': 'mirror', 'replicate': 'nearest', 'wrap': 'wrap', 'constant': 'constant'}
kd = np.array([[0, 0, 0], [1, 2, 1], [0, -1, 0]], np.float32)  # zero weights, not rank 1
kr = np.array([[0, 0, 0], [1, 2, 1], [0, 0, 0]], np.float32)  # zero weights, rank 1
for m, sm in NF_MODES.items():
    kw = {'mode': sm}  # cval 0: with another cval scipy's pass order moves finite border values (docs/convolution.md)
    mag = lambda parts: np.sqrt(sum(p * p for p in parts)).astype(np.float32)  # noqa: E731
    refs = {
        'sobel-x': ndi.sobel(nf2, axis=1, **kw), 'sobel-y': ndi.sobel(nf2, axis=0, **kw),
        'sobel': mag([ndi.sobel(nf2, axis=a, **kw) for a in (0, 1)]),
        'prewitt-x': ndi.prewitt(nf2, axis=1, **kw), 'box-3x5': ndi.uniform_filter(nf2, size=(5, 3), **kw),
        'box-4x2': ndi.uniform_filter(nf2, size=(2, 4), **kw), 'gauss-1': ndi.gaussian_filter(nf2, 1, **kw),
        'laplace': ndi.laplace(nf2, **kw), 'kd': ndi.correlate(nf2, kd, **kw), 'kr': ndi.correlate(nf2, kr, **kw),
        '3d-sobel-z': ndi.sobel(nf3, axis=0, **kw), '3d-box-3x3x3': ndi.uniform_filter(nf3, size=3, **kw),
    }
    for name, a in refs.items():
        save('convolve', f'nf-{name}-{m}', a.astype(np.float32))
