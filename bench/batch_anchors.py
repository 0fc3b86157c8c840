#!/usr/bin/env python3
"""Batch anchors for bench/batch.ts: the Python a user would write over a folder of images, in the same run.
Usage: python3 bench/batch_anchors.py <in dir> <out dir> <op> [processes] [pool-only] -> JSON {loop, pool} in images/s
(pool-only: the loop left out, null).
op: equalize | otsu | pipeline (equalizeHist then Otsu) | clahe (colour: YCrCb's Y, back) | erode (colour, 5x5 rect) |
gauss (colour, cv2.GaussianBlur sigma 2). Each image: cv2.imread(gray; clahe, erode, gauss: colour) -> op -> cv2.imwrite
(same extension); `loop` is a plain for loop, `pool` the same function in a multiprocessing.Pool(processes)."""
import json
import os
import sys
import time
from multiprocessing import Pool

import cv2
import numpy as np

COLOUR_OPS = ('clahe', 'erode', 'gauss')  # imgpu's clahe, morph and filter take colour photos as colour


def colour_clahe(bgr):
    """CLAHE of the lightness as OpenCV users write it (imgpu clahe on a colour photo): YCrCb's Y, and back."""
    ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
    ycc[:, :, 0] = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8)).apply(ycc[:, :, 0].copy())
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)


def work(args):
    src, dst, op = args
    img = cv2.imread(src, cv2.IMREAD_COLOR if op in COLOUR_OPS else cv2.IMREAD_GRAYSCALE)
    if img is None:
        return 0
    if op == 'equalize':
        out = cv2.equalizeHist(img)
    elif op == 'otsu':
        out = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
    elif op == 'clahe':
        out = colour_clahe(img)
    elif op == 'erode':
        out = cv2.erode(img, np.ones((5, 5), np.uint8))
    elif op == 'gauss':
        out = cv2.GaussianBlur(img, (0, 0), 2)
    else:
        out = cv2.threshold(cv2.equalizeHist(img), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
    cv2.imwrite(dst, out)
    return 1


def main():
    src, dst, op = sys.argv[1], sys.argv[2], sys.argv[3]
    procs = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    pool_only = len(sys.argv) > 5 and sys.argv[5] == "pool-only"  # the loop (~30 s for 210 photos) left out
    os.makedirs(dst, exist_ok=True)
    jobs = [(os.path.join(src, f), os.path.join(dst, f), op) for f in sorted(os.listdir(src)) if f.endswith(('.jpg', '.png'))]
    loop = None
    if not pool_only:
        t0 = time.perf_counter()
        n = sum(work(j) for j in jobs)
        loop = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    with Pool(procs) as p:
        n = sum(p.map(work, jobs, chunksize=1))
    pool = n / (time.perf_counter() - t0)
    print(json.dumps({"op": op, "images": n, "loop": loop, "pool": pool, "processes": procs, "cv2_threads": cv2.getNumThreads()}))


main()
