"""Per-pixel sliding-window references written from their definitions (docs/clahe.md, docs/histogram.md), in numpy
only — nothing of imgpu's code: the tests compare imgpu's CPU and GPU paths with them on real images.

Every pixel's window histogram is counted whole (one-hot planes summed over the window through 2D prefix sums,
a band of rows at a time to bound memory), and the rule is applied to the full 256-bin histogram, not through
imgpu's shortcuts (windowLutValue's two sums, Huang's moving histogram).
"""
import numpy as np

BINS = 256
BAND = 24  # rows per band: 256 × (BAND + 2R) × (W + 2R) int32 prefix sums at a time


def window_histograms(padded, out_h, out_w, size, y0, y1):
    """hist[b, y, x] for rows y0..y1 of the output: the count of b in padded[y:y+size, x:x+size]."""
    rows = padded[y0:y1 + size - 1]
    onehot = rows[None, :, :] == np.arange(BINS, dtype=padded.dtype)[:, None, None]
    prefix = np.zeros((BINS, rows.shape[0] + 1, rows.shape[1] + 1), np.int32)
    np.cumsum(onehot, axis=1, out=prefix[:, 1:, 1:])
    np.cumsum(prefix[:, 1:, 1:], axis=2, out=prefix[:, 1:, 1:])
    n = y1 - y0
    return (prefix[:, size:size + n, size:size + out_w] - prefix[:, :n, size:size + out_w]
            - prefix[:, size:size + n, :out_w] + prefix[:, :n, :out_w])


def clahe_window(img, radius, clip, border):
    """Sliding-window CLAHE of an 8-bit image: OpenCV's tile rule (CLAHE_Impl: clip limit max(int(clip·area/256), 1),
    the clipped excess spread as `batch` per bin plus one per `step`-th bin from 0 for the residual, then the
    cumulative sum times float32(255/area), rounded half to even) applied to the histogram of the (2R+1)² window
    centred on each pixel, mirrored at the borders (reflect101: numpy 'reflect'; reflect: numpy 'symmetric'), the
    value taken at the pixel's own grey level."""
    h, w = img.shape
    size = 2 * radius + 1
    area = size * size
    limit = max(int(clip * area / BINS), 1) if clip > 0 else 0
    scale = np.float32(BINS - 1) / np.float32(area)
    padded = np.pad(img, radius, mode={'reflect101': 'reflect', 'reflect': 'symmetric'}[border])
    out = np.empty((h, w), np.uint8)
    bins = np.arange(BINS)[:, None, None]
    for y0 in range(0, h, BAND):
        y1 = min(h, y0 + BAND)
        hist = window_histograms(padded, h, w, size, y0, y1)
        if limit > 0:
            excess = np.maximum(hist - limit, 0).sum(axis=0)
            hist = np.minimum(hist, limit) + excess // BINS
            residual = excess % BINS
            step = np.maximum(BINS // np.maximum(residual, 1), 1)
            hist += ((residual > 0) & (bins % step == 0) & (bins // step < residual)).astype(np.int32)
        cdf = np.cumsum(hist, axis=0)
        at = np.take_along_axis(cdf, img[None, y0:y1].astype(np.intp), axis=0)[0]
        out[y0:y1] = np.minimum(np.rint(at.astype(np.float32) * scale), BINS - 1).astype(np.uint8)
    return out


def isodata_window(img, window, contrast, fallback):
    """Adaptive isodata segmentation of an 8-bit image: 255 where the pixel is above t, t the lowest grey level in
    [lo, hi) of its W×W window (clipped at the image border) with 0 ≤ (μ(≤ t) + μ(> t))/2 − t < 1 (compared in
    exact integers); `fallback` (the whole image's isodata threshold) where hi − lo < contrast or no t qualifies.
    In int32: Σ·n ≤ 255·W⁴ stays below 2³¹ for windows up to 45."""
    assert window <= 45, 'int32 products'
    h, w = img.shape
    r = (window - 1) // 2
    padded = np.pad(img.astype(np.int16), r, mode='constant', constant_values=-1)  # -1: outside, in no bin
    out = np.empty((h, w), np.uint8)
    levels = np.arange(BINS, dtype=np.int32)[:, None, None]
    for y0 in range(0, h, BAND):
        y1 = min(h, y0 + BAND)
        hist = window_histograms(padded, h, w, window, y0, y1)
        present = hist > 0
        lo = np.argmax(present, axis=0)
        hi = BINS - 1 - np.argmax(present[::-1], axis=0)
        n1 = np.cumsum(hist, axis=0)
        s1 = np.cumsum(hist * levels, axis=0)
        n2 = n1[-1] - n1
        s2 = s1[-1] - s1
        nn = n1 * n2
        mid = s1 * n2 + s2 * n1
        ok = (levels >= lo) & (levels < hi) & (2 * levels * nn <= mid) & (mid < (2 * levels + 2) * nn)
        t = np.where(ok.any(axis=0), np.argmax(ok, axis=0), fallback)
        t = np.where(hi - lo < contrast, fallback, t)
        out[y0:y1] = np.where(img[y0:y1] > t, 255, 0)
    return out
