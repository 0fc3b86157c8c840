#!/usr/bin/env python3
"""Times the reference libraries on the same images as `npm run bench`, in the same run.
Usage: python3 bench/anchors.py <dir with NAME.npy images> [reps]  → JSON on stdout:
{ "opencv": version, "threads": n, "results": { NAME: { "equalizeHist": {"min": ms, "median": ms} } } }"""
import json
import os
import statistics
import sys
import time

import numpy as np

try:
    import cv2
except ImportError:  # no OpenCV on this machine: say so, don't fail the benchmark
    print(json.dumps({"error": "python3 cannot import cv2"}))
    sys.exit(0)


def timeit(fn, reps):
    fn()  # warm-up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return {"min": min(ts), "median": statistics.median(ts)}


def main():
    folder = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    out = {"opencv": cv2.__version__, "threads": cv2.getNumThreads(), "results": {}}
    for f in sorted(os.listdir(folder)):
        if not f.endswith('.npy'):
            continue
        img = np.load(os.path.join(folder, f))
        r = {}
        if img.dtype == np.uint8:
            r["cv2.equalizeHist"] = timeit(lambda: cv2.equalizeHist(img), reps)
        out["results"][f[:-4]] = r
    print(json.dumps(out))


main()
