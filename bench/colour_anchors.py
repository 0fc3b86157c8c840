#!/usr/bin/python3
"""OpenCV's side of bench/colour.ts: a camera-sized colour photo (scikit-image's astronaut, Lanczos-resized, with
sensor-like noise; written once to <photo>) and cv2's timings of the colour conversions and colour CLAHE on it
(COLOR_RGB2YCrCb, CLAHE of Y, COLOR_YCrCb2RGB: what imgpu's colour CLAHE is), on one thread and on all of cv2's,
wall clock and CPU time. Usage: colour_anchors.py <photo.png> <width>x<height> <runs> <clahe-out.png>; prints one JSON object (ms per run)."""
import json
import os
import sys
import time

import cv2
import numpy as np

photo, size, runs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
w, h = (int(v) for v in size.split('x'))
if not os.path.exists(photo):
    import skimage.data
    rgb = cv2.resize(skimage.data.astronaut(), (w, h), interpolation=cv2.INTER_LANCZOS4)
    noise = np.random.default_rng(40).normal(0, 3, rgb.shape)
    rgb = np.clip(rgb + noise, 0, 255).astype(np.uint8)
    cv2.imwrite(photo, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
rgb = cv2.cvtColor(cv2.imread(photo, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
clahe = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))


def colour_clahe(img):
    ycc = cv2.cvtColor(img, cv2.COLOR_RGB2YCrCb)
    ycc[:, :, 0] = clahe.apply(np.ascontiguousarray(ycc[:, :, 0]))
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)


def timed(fn):
    """Wall clock and this process's CPU time (all threads) of each run, ms: on a machine shared with other work the
    CPU time is the figure that does not depend on what else runs."""
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return {'wall': wall, 'cpu': cpu}


ycc = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)
result = {'cv2': cv2.__version__}
for threads in [1, cv2.getNumberOfCPUs()]:
    cv2.setNumThreads(threads)
    result[f'threads{threads}'] = {
        'toYCrCb': timed(lambda: cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)),
        'fromYCrCb': timed(lambda: cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)),
        'toGray': timed(lambda: cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)),
        'colourClahe': timed(lambda: colour_clahe(rgb)),
    }
cv2.imwrite(out, cv2.cvtColor(colour_clahe(rgb), cv2.COLOR_RGB2BGR))
print(json.dumps(result))
