#!/usr/bin/env python3
"""Convolution anchors in the same run as bench/convolve.ts. Usage:
python3 bench/conv_anchors.py <dir of NAME.npy> <filter,filter,...> [reps] -> JSON on stdout
{ "opencv", "threads", "scipy", "cupy", "results": { NAME: { FILTER: { "scipy": {min, median}, "cv2": …,
  "cupy.kernels": …, "cupy.host_to_host": … } } } }
Filters: sobel-x (derivative along x), gauss:S (sigma S on every axis, scipy's radius ⌊4S + 0.5⌋), sobel
(gradient magnitude over all axes). 2D inputs are 8-bit and produce float32 (cv2.Sobel / sepFilter2D with
ddepth CV_32F, BORDER_REFLECT = scipy 'reflect'); volumes are float32 (OpenCV has no 3D filters). scipy runs on
one thread (it has no others); on volumes over 50M voxels it runs once."""
import json
import os
import sys
import time

import numpy as np

try:
    from scipy import ndimage as ndi
except ImportError:
    ndi = None

from anchors import cp, cv2, timeit  # bench/anchors.py, beside this file: the optional libraries, the timer

try:
    from cupyx.scipy import ndimage as cnd
except ImportError:
    cp = None


def once(fn):
    t0 = time.perf_counter()
    fn()
    ms = (time.perf_counter() - t0) * 1e3
    return {"min": ms, "median": ms}


def gauss_weights(s):
    r = int(4 * s + 0.5)
    x = np.arange(-r, r + 1)
    w = np.exp(-0.5 * x * x / (s * s))
    return (w / w.sum()).astype(np.float32)


def scipy_op(spec, v):
    f = v.astype(np.float32)
    if spec == 'sobel-x':
        return lambda: ndi.sobel(f, axis=-1)
    if spec.startswith('gauss:'):
        return lambda: ndi.gaussian_filter(f, float(spec[6:]))
    return lambda: np.sqrt(sum(ndi.sobel(f, axis=a) ** 2 for a in range(f.ndim)))


def cv2_op(spec, img):
    b = cv2.BORDER_REFLECT
    if spec == 'sobel-x':
        return lambda: cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3, borderType=b)
    if spec.startswith('gauss:'):
        g = gauss_weights(float(spec[6:]))
        return lambda: cv2.sepFilter2D(img, cv2.CV_32F, g, g, borderType=b)
    return lambda: cv2.magnitude(cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3, borderType=b), cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3, borderType=b))


def cupy_op(spec, d):
    if spec == 'sobel-x':
        return lambda: cnd.sobel(d, axis=-1)
    if spec.startswith('gauss:'):
        return lambda: cnd.gaussian_filter(d, float(spec[6:]))
    return lambda: cp.sqrt(sum(cnd.sobel(d, axis=a) ** 2 for a in range(d.ndim)))


def main():
    folder, filters = sys.argv[1], sys.argv[2].split(',')
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    out = {"opencv": cv2.__version__ if cv2 else None, "threads": cv2.getNumThreads() if cv2 else None,
           "scipy": __import__('scipy').__version__ if ndi else None, "cupy": cp.__version__ if cp else None, "results": {}}
    for f in sorted(os.listdir(folder)):
        if not f.endswith('.npy'):
            continue
        v = np.load(os.path.join(folder, f))
        r = {}
        for spec in filters:
            row = {}
            big = v.size > 50e6
            # scipy has no warm-up to pay (no JIT, no threads): volumes are timed once, without one.
            if ndi is not None:
                row["scipy"] = once(scipy_op(spec, v)) if v.ndim == 3 else timeit(scipy_op(spec, v), min(reps, 3))
            if v.ndim == 2 and cv2 is not None:
                row["cv2"] = timeit(cv2_op(spec, v), reps)
            if cp is not None:
                d = cp.asarray(v.astype(np.float32))
                op = cupy_op(spec, d)
                row["cupy.kernels"] = timeit(lambda: (op(), cp.cuda.Device().synchronize()), 3 if big else reps)
                row["cupy.host_to_host"] = timeit(lambda: cp.asnumpy(cupy_op(spec, cp.asarray(v.astype(np.float32)))()), 3 if big else reps)
                del d
                cp.get_default_memory_pool().free_all_blocks()
            r[spec] = row
            print(json.dumps({"progress": f, "filter": spec, **row}), file=sys.stderr)
        out["results"][f[:-4]] = r
    print(json.dumps(out))


main()
