#!/usr/bin/env python3
"""Morphology anchors in the same run as bench/morph.ts: cv2.erode with a k×k rectangle (OpenCV's threads) and
CuPy's cupyx.scipy.ndimage.grey_erosion(size=(k, k)) on device-resident data (with a synchronize), per image.
Usage: python3 bench/morph_anchors.py <dir of NAME.npy> <k,k,...> [reps] -> JSON on stdout
{ "opencv": version, "threads": n, "cupy": version|null, "results": { NAME: { "k": { "cv2.erode": {min, median}, "cupy.grey_erosion": … } } } }
Volumes (3D .npy) get CuPy only (OpenCV has no 3D morphology), with a k×k×k box."""
import json
import os
import sys

import numpy as np

from anchors import cp, cv2, timeit  # bench/anchors.py, beside this file: the optional libraries, the timer

try:
    from cupyx.scipy import ndimage as cnd
except ImportError:
    cp = None


def main():
    folder, ks = sys.argv[1], [int(k) for k in sys.argv[2].split(',')]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    out = {"opencv": cv2.__version__ if cv2 else None, "threads": cv2.getNumThreads() if cv2 else None,
           "cupy": cp.__version__ if cp else None, "results": {}}
    for f in sorted(os.listdir(folder)):
        if not f.endswith('.npy'):
            continue
        img = np.load(os.path.join(folder, f))
        r = {}
        dimg = cp.asarray(img) if cp is not None else None
        for k in ks:
            row = {}
            if img.ndim == 2 and cv2 is not None:
                se = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
                row["cv2.erode"] = timeit(lambda: cv2.erode(img, se), reps)
            if dimg is not None:
                size = (k,) * img.ndim
                # CuPy's filters cost seconds for large windows on large data: fewer repetitions there.
                n = reps if k * img.size < 4e9 else 2
                row["cupy.grey_erosion"] = timeit(lambda: (cnd.grey_erosion(dimg, size=size), cp.cuda.Device().synchronize()), n)
            r[str(k)] = row
        out["results"][f[:-4]] = r
    print(json.dumps(out))


main()
