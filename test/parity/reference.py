#!/usr/bin/python3
"""References of the randomized differential test (test/parity/parity.test.ts): OpenCV 4.6, SciPy 1.10 and
scikit-image 0.19 as Debian packages them (run with /usr/bin/python3).

    /usr/bin/python3 test/parity/reference.py DIR

DIR/manifest.json lists the cases: {"cases": [{"id", "fn", "args", "inputs": {name: file.npy}}]}. Each case's
reference function gets its inputs as numpy arrays and its JSON args, and returns a dict of outputs: arrays are
written to DIR/out/<id>.<name>.npy, scalars and lists go to DIR/results.json ({id: {"arrays": [...], "values":
{...}}}). A case whose reference raises (the library refuses what OpenCV refuses, or the reverse) is recorded
as {"error": "..."}; the test decides what that means. One process for all cases: importing cv2, scipy and
skimage costs more than most cases.
"""
import json
import math
import os
import sys
import traceback

import cv2
import numpy as np
from scipy import ndimage
import skimage.filters

cv2.setNumThreads(1)


# ---- colour -------------------------------------------------------------------------------------------------
def gray_of(img, channels):
    """The library's conversion of colour input: OpenCV's RGB(A)→gray (the input's order is RGB)."""
    if channels == 1:
        return img
    return cv2.cvtColor(img, cv2.COLOR_RGBA2GRAY if channels == 4 else cv2.COLOR_RGB2GRAY)


def per_channel(ref):
    """The library's rule for filters and morphology: a colour image is processed channel by channel (as OpenCV's
    functions do on a 3-channel array), each output stacked back as a channel."""
    def run(inputs, a):
        if a['channels'] == 1:
            return ref(inputs, a)
        src = inputs['src']
        outs = [ref(dict(inputs, src=np.ascontiguousarray(src[..., c])), dict(a, channels=1)) for c in range(a['channels'])]
        return {k: np.stack([o[k] for o in outs], axis=-1) for k in outs[0]}
    return run


def ref_gray(inputs, a):
    return {'image': gray_of(inputs['src'], a['channels'])}


# ---- histograms, equalization, global thresholds ----------------------------------------------------------------
def opencv_equalize(img):
    """cv2.equalizeHist's formula (imgproc/src/histogram.cpp) for any bit depth and rank: one histogram of all
    pixels, LUT = saturate(cumsum · (bins − 1)/(total − h[first])) in float32, rounded half to even."""
    bins = 256 if img.dtype == np.uint8 else 65536
    hist = np.bincount(img.ravel(), minlength=bins).astype(np.int64)
    first = int(np.flatnonzero(hist)[0])
    total = img.size
    if hist[first] == total:
        return np.full_like(img, first)
    scale = np.float32(bins - 1) / np.float32(total - hist[first])
    csum = np.cumsum(hist) - hist[first]  # OpenCV's running sum starts after the first occupied bin
    lut = np.rint(csum.astype(np.float32) * scale)
    lut = np.clip(lut, 0, bins - 1).astype(img.dtype)
    lut[first] = 0
    return lut[img]


def ref_equalize(inputs, a):
    img = gray_of(inputs['src'], a['channels'])
    if img.dtype == np.uint8 and img.ndim == 2:
        out = cv2.equalizeHist(img)
        # The formula above is what the 16-bit and volume references use: it must be OpenCV's on 8-bit.
        assert np.array_equal(out, opencv_equalize(img)), 'opencv_equalize differs from cv2.equalizeHist'
        return {'image': out}
    return {'image': opencv_equalize(img)}


def ref_histogram(inputs, a):
    img = gray_of(inputs['src'], a['channels'])
    levels = 256 if img.dtype == np.uint8 else 65536
    mask = inputs.get('mask')
    if a.get('roi'):
        x, y, w, h = a['roi']
        roi = np.zeros(img.shape, np.uint8)
        roi[y:y + h, x:x + w] = 1
        mask = roi if mask is None else (roi & (mask != 0)).astype(np.uint8)
    bins = a.get('bins') or levels
    if mask is not None and img.dtype == np.uint8 and img.ndim == 2:
        counts = cv2.calcHist([img], [0], mask, [bins], [0, 256]).ravel()
    else:
        vals = img.ravel() if mask is None else img[mask != 0]
        counts, _ = np.histogram(vals, bins, range=(0, levels))
    return {'counts': counts.astype(np.int64).tolist()}


def ref_otsu(inputs, a):
    img = gray_of(inputs['src'], a['channels'])
    maxv = 255 if img.dtype == np.uint8 else 65535
    t, out = cv2.threshold(img, 0, maxv, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    return {'image': out, 'threshold': int(t)}


def ref_isodata(inputs, a):
    img = gray_of(inputs['src'], a['channels'])
    maxv = 255 if img.dtype == np.uint8 else 65535
    t = int(skimage.filters.threshold_isodata(img))
    return {'image': np.where(img > t, maxv, 0).astype(img.dtype), 'threshold': t}


def ref_local(inputs, a):
    img = gray_of(inputs['src'], a['channels'])
    method = cv2.ADAPTIVE_THRESH_MEAN_C if a['method'] == 'mean' else cv2.ADAPTIVE_THRESH_GAUSSIAN_C
    return {'image': cv2.adaptiveThreshold(img, 255, method, cv2.THRESH_BINARY, a['window'], a['offset'])}


def isodata_or(img, fallback):
    """skimage's threshold_isodata, or `fallback` where it finds no threshold (it raises IndexError then)."""
    try:
        return int(skimage.filters.threshold_isodata(img))
    except IndexError:
        return fallback


def ref_adaptive(inputs, a):
    """The documented rule (docs/histogram.md): skimage's isodata on each pixel's W×W window clipped at the image
    border; windows whose value range is below `contrast`, or without a threshold, use the global isodata — a
    constant window has none (skimage would return its value)."""
    img = gray_of(inputs['src'], a['channels'])
    fallback = isodata_or(img, 0)
    r = (a['window'] - 1) // 2
    h, w = img.shape
    out = np.zeros_like(img)
    for y in range(h):
        for x in range(w):
            win = img[max(0, y - r):y + r + 1, max(0, x - r):x + r + 1]
            lo, hi = int(win.min()), int(win.max())
            t = fallback if hi - lo < max(a['contrast'], 1) else isodata_or(win, fallback)
            out[y, x] = 255 if img[y, x] > t else 0
    return {'image': out, 'fallback': fallback}


# ---- CLAHE ------------------------------------------------------------------------------------------------------
def clahe_plane(y, a):
    """Tiled: cv2.createCLAHE. Sliding window (a['radius']), as documented (docs/clahe.md): OpenCV's tile rule on
    the (2R+1)² window centred on each pixel, mirrored at the border — computed by OpenCV itself, one 1×1-tile
    CLAHE per window, whose value at the centre is the window's LUT at the pixel's value."""
    if 'radius' not in a:
        return cv2.createCLAHE(clipLimit=a['clip'], tileGridSize=tuple(a['tiles'])).apply(y)
    r = a['radius']
    border = cv2.BORDER_REFLECT if a['border'] == 'reflect' else cv2.BORDER_REFLECT_101
    pad = cv2.copyMakeBorder(y, r, r, r, r, border)
    c = cv2.createCLAHE(clipLimit=a['clip'], tileGridSize=(1, 1))
    h, w = y.shape
    out = np.empty_like(y)
    for i in range(h):
        for j in range(w):
            out[i, j] = c.apply(np.ascontiguousarray(pad[i:i + 2 * r + 1, j:j + 2 * r + 1]))[r, r]
    return out


def ref_clahe(inputs, a):
    img = inputs['src']
    if a['channels'] == 1:
        return {'image': clahe_plane(img, a)}
    # What an OpenCV user writes for colour: RGB → YCrCb, CLAHE of Y, back; alpha kept.
    ycc = cv2.cvtColor(np.ascontiguousarray(img[..., :3]), cv2.COLOR_RGB2YCrCb)
    ycc[..., 0] = clahe_plane(np.ascontiguousarray(ycc[..., 0]), a)
    rgb = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)
    return {'image': np.concatenate([rgb, img[..., 3:]], axis=2) if a['channels'] == 4 else rgb}


# ---- morphology ---------------------------------------------------------------------------------------------------
CV_OPS = {'open': cv2.MORPH_OPEN, 'close': cv2.MORPH_CLOSE, 'gradient': cv2.MORPH_GRADIENT,
          'tophat': cv2.MORPH_TOPHAT, 'blackhat': cv2.MORPH_BLACKHAT}


@per_channel
def ref_morph_cv(inputs, a):
    img, k, it = gray_of(inputs['src'], a['channels']), np.array(a['se'], np.uint8), a['iterations']
    if a['op'] == 'erode':
        return {'image': cv2.erode(img, k, iterations=it)}
    if a['op'] == 'dilate':
        return {'image': cv2.dilate(img, k, iterations=it)}
    return {'image': cv2.morphologyEx(img, CV_OPS[a['op']], k, iterations=it)}


@per_channel
def ref_morph_scipy(inputs, a):
    """scipy.ndimage grey morphology (mode 'reflect', footprint = the element); `iterations` repeats each erosion
    and dilation; differences saturate at 0 for integer images (docs/morphology.md: as cv2.subtract) — with an
    even-sized element scipy's opening can exceed the image, where its own white_tophat would wrap around."""
    img, fp, it = gray_of(inputs['src'], a['channels']), np.array(a['se'], bool), a['iterations']
    if img.ndim == 3 and fp.ndim == 2:
        fp = fp[None]

    def rep(f, x):
        for _ in range(it):
            x = f(x, footprint=fp)
        return x
    ero = lambda x: rep(ndimage.grey_erosion, x)  # noqa: E731
    dil = lambda x: rep(ndimage.grey_dilation, x)  # noqa: E731
    op = a['op']
    if op == 'erode':
        out = ero(img)
    elif op == 'dilate':
        out = dil(img)
    elif op == 'open':
        out = dil(ero(img))
    elif op == 'close':
        out = ero(dil(img))
    elif op == 'gradient':
        out = subtract(dil(img), ero(img))
    elif op == 'tophat':
        out = subtract(img, dil(ero(img)))
    else:
        out = subtract(ero(dil(img)), img)
    return {'image': out}


def subtract(a, b):
    if a.dtype == np.float32:
        return a - b
    return np.maximum(a.astype(np.int64) - b, 0).astype(a.dtype)


# ---- filters ------------------------------------------------------------------------------------------------------
CV_BORDERS = {'reflect': cv2.BORDER_REFLECT, 'reflect101': cv2.BORDER_REFLECT_101,
              'replicate': cv2.BORDER_REPLICATE, 'constant': cv2.BORDER_CONSTANT}
SCIPY_MODES = {'reflect': 'reflect', 'reflect101': 'mirror', 'replicate': 'nearest', 'wrap': 'wrap',
               'constant': 'constant', 'valid': 'constant'}


def scipy_filter(x, a):
    """The float64 result of the scipy.ndimage function the library documents for the filter."""
    mode, cval, kind = SCIPY_MODES[a['border']], a.get('cval', 0.0), a['kind']
    axes = {'x': -1, 'y': -2, 'z': -3}
    if kind in ('sobel', 'prewitt'):
        f = ndimage.sobel if kind == 'sobel' else ndimage.prewitt
        if a.get('axis'):
            return f(x, axis=axes[a['axis']], mode=mode, cval=cval)
        return np.sqrt(sum(f(x, axis=ax, mode=mode, cval=cval) ** 2 for ax in range(x.ndim)))
    if kind == 'gauss':
        sigma = a['sigma'][0] if len(a['sigma']) == 1 else a['sigma'][::-1]  # given in x, y[, z] order
        return ndimage.gaussian_filter(x, sigma=sigma, truncate=a['truncate'], mode=mode, cval=cval)
    if kind == 'box':
        return ndimage.uniform_filter(x, size=a['size'][::-1], mode=mode, cval=cval)
    if kind == 'laplace':
        return ndimage.laplace(x, mode=mode, cval=cval)
    if kind == 'roberts':
        # Anchored at the top-left tap: scipy origin = anchor − size // 2 = −1 on both axes.
        r1 = ndimage.correlate(x, np.array([[1, 0], [0, -1]], np.float64), mode=mode, cval=cval, origin=-1)
        r2 = ndimage.correlate(x, np.array([[0, 1], [-1, 0]], np.float64), mode=mode, cval=cval, origin=-1)
        return np.sqrt(r1 ** 2 + r2 ** 2)
    raise ValueError(f'unknown filter kind {kind}')


def kernel_origin(k, anchor):
    return [an - n // 2 for an, n in zip(anchor, k.shape)]


def crop_valid(out, ksize, anchor):
    """'valid': the outputs whose whole window lies inside (output element 0 sits at input element anchor)."""
    sl = tuple(slice(an, n - (k - 1 - an)) for n, k, an in zip(out.shape, ksize, anchor))
    return out[sl]


def saturate(v, dtype):
    hi = 255 if dtype == np.uint8 else 65535
    return np.clip(np.rint(v), 0, hi).astype(dtype)


def cv2_filter(img, a):
    """OpenCV's own integer result (ddepth −1) of the integer-weight filters, for --saturate."""
    b = CV_BORDERS[a['border']]
    kind = a['kind']
    if kind == 'box':
        return cv2.blur(img, tuple(a['size']), borderType=b)
    if kind == 'sobel':
        return cv2.Sobel(img, -1, 1 if a['axis'] == 'x' else 0, 1 if a['axis'] == 'y' else 0, ksize=3, borderType=b)
    if kind == 'laplace':
        return cv2.Laplacian(img, -1, ksize=1, borderType=b)
    raise ValueError(f'no OpenCV counterpart for {kind}')


def cv_gauss_kernel8(sigma, truncate):
    """cv2's 8-bit Gaussian kernel: getGaussianKernelBitExact, then 8 fractional bits with the rounding error carried
    on (getGaussianKernelFixedPoint_ED), the centre making the sum 256; size cvRound(2·truncate·σ + 1) | 1."""
    if sigma <= 1e-15:
        return [256]
    n = int(np.rint(sigma * 2 * truncate + 1)) | 1
    half, scale = (n - 1) // 2, -0.125 / (sigma * sigma)
    vals = [math.exp(float(x * x) * scale) for x in range(1 - n, 0, 2)]
    mul = 1.0 / (sum(vals) * 2 + 1.0)
    k, err, total = [0] * n, 0.0, 0
    for i in range(half):
        adj = vals[i] * mul * 256 + err
        v = int(np.rint(adj))
        err = adj - v
        k[i] = k[n - 1 - i] = v
        total += v
    k[half] = 256 - 2 * total
    return k


def gauss_fixed8(img, a):
    """cv2.GaussianBlur's fixed point on 8-bit images (integer row then column sums, (s + 2^15) >> 16): cv2 itself
    where it has the border, the same arithmetic in integers otherwise (wrap)."""
    sx, sy = a['sigma'][0], a['sigma'][-1]
    if a['border'] in CV_BORDERS:  # constant only with cval 0 here, as cv2 pads
        n = lambda s: (int(np.rint(s * 2 * a['truncate'] + 1)) | 1) if s > 1e-15 else 1  # noqa: E731
        return cv2.GaussianBlur(img, (n(sx), n(sy)), sx, sigmaY=sy, borderType=CV_BORDERS[a['border']])
    mode = SCIPY_MODES[a['border']]
    r = ndimage.correlate1d(img.astype(np.int64), cv_gauss_kernel8(sx, a['truncate']), axis=1, mode=mode)
    c = ndimage.correlate1d(r, cv_gauss_kernel8(sy, a['truncate']), axis=0, mode=mode)
    return np.minimum(255, (c + 32768) >> 16).astype(np.uint8)


@per_channel
def ref_filter(inputs, a):
    """Named filters and kernels: scipy's float64 result; with `saturate`, also the integer result — OpenCV's
    (a['cv2']) or scipy's rounded half to even and clamped."""
    img = gray_of(inputs['src'], a['channels'])
    x = img.astype(np.float64)
    if a['kind'] == 'kernel':
        k = np.array(a['weights'], np.float64)
        k = k[None] if img.ndim == 3 and k.ndim == 2 else k
        anchor = a['anchor'] if len(a['anchor']) == k.ndim else [0] + a['anchor']
        mode, cval = SCIPY_MODES[a['border']], a.get('cval', 0.0)
        f = ndimage.convolve if a['flip'] else ndimage.correlate
        # convolve: scipy's origin is the anchor of the unflipped kernel relative to its centre, as correlate's.
        out = f(x, k, mode=mode, cval=cval, origin=kernel_origin(k, anchor))
        ksize, kanchor = k.shape, (anchor if not a['flip'] else [n - 1 - an for n, an in zip(k.shape, anchor)])
    else:
        out = scipy_filter(x, a)
        ksize, kanchor = a.get('ksize'), a.get('kanchor')
    if a['border'] == 'valid':
        out = crop_valid(out, ksize[-img.ndim:], kanchor[-img.ndim:])
    res = {'float': out.astype(np.float32)}
    if a.get('saturate'):
        if a.get('cv2'):
            res['image'] = cv2_filter(img, a)
        elif a['kind'] == 'gauss' and img.dtype == np.uint8 and img.ndim == 2 and a['border'] != 'valid' and (a['border'] != 'constant' or a.get('cval', 0) == 0):
            res['image'] = gauss_fixed8(img, a)
        else:
            res['image'] = saturate(out, img.dtype)
    return res


# ---- detection, pipelines -------------------------------------------------------------------------------------------
def ref_detect(inputs, a):
    img = gray_of(inputs['src'], a['channels'])
    c = cv2.CascadeClassifier(a['cascade'])
    assert not c.empty(), a['cascade']
    min_size = tuple(a['minSize']) if a.get('minSize') else (0, 0)
    boxes = c.detectMultiScale(img, scaleFactor=a['scale'], minNeighbors=a['minNeighbors'], minSize=min_size)
    rects = sorted(np.asarray(boxes).reshape(-1, 4).tolist())
    return {'boxes': rects}


def ref_chain(inputs, a):
    """A pipeline: each step's reference on the previous step's image (colour turns gray where a step needs it)."""
    img, channels = inputs['src'], a['channels']
    for step in a['steps']:
        img = REFS[step['fn']]({'src': img}, dict(step['args'], channels=channels))['image']
        channels = channels if step['fn'] in ('clahe', 'filter', 'morph_cv', 'morph_scipy') else 1
    return {'image': img}


REFS = {
    'gray': ref_gray, 'equalize': ref_equalize, 'histogram': ref_histogram, 'otsu': ref_otsu,
    'isodata': ref_isodata, 'local': ref_local, 'adaptive': ref_adaptive, 'clahe': ref_clahe, 'morph_cv': ref_morph_cv, 'morph_scipy': ref_morph_scipy,
    'filter': ref_filter, 'detect': ref_detect, 'chain': ref_chain,
}


def main(folder):
    with open(os.path.join(folder, 'manifest.json')) as f:
        manifest = json.load(f)
    os.makedirs(os.path.join(folder, 'out'), exist_ok=True)
    results = {}
    for case in manifest['cases']:
        try:
            inputs = {k: np.load(os.path.join(folder, v)) for k, v in case['inputs'].items()}
            out = REFS[case['fn']](inputs, case['args'])
            entry = {'arrays': [], 'values': {}}
            for name, v in out.items():
                if isinstance(v, np.ndarray):
                    np.save(os.path.join(folder, 'out', f"{case['id']}.{name}.npy"), np.ascontiguousarray(v))
                    entry['arrays'].append(name)
                else:
                    entry['values'][name] = v
            results[case['id']] = entry
        except Exception as e:  # noqa: BLE001 — every reference failure is reported per case
            results[case['id']] = {'error': f'{type(e).__name__}: {e}'.strip().splitlines()[0][:300],
                                   'trace': traceback.format_exc(limit=3)}
    with open(os.path.join(folder, 'results.json'), 'w') as f:
        json.dump(results, f)


if __name__ == '__main__':
    main(sys.argv[1])
