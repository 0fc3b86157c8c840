#!/usr/bin/env python3
"""Batch anchors for bench/batch.ts: the Python a user would write over a folder of images, in the same run.
Usage: python3 bench/batch_anchors.py <in dir> <out dir> <op> [processes] [pool-only] -> JSON {loop, pool} in images/s
(pool-only: the loop left out, null).
op: equalize | otsu | pipeline (equalizeHist then Otsu) | clahe (colour: YCrCb's Y, back) | erode (colour, 5x5 rect) |
gauss (colour, cv2.GaussianBlur sigma 2) | dilate (colour, 5x5 rect) | box (colour, cv2.blur 5x5) | gamma (colour, skimage's
adjust_gamma 0.5 LUT through cv2.LUT) | mean (cv2.adaptiveThreshold mean, block 11, C 2). PNGs are read at their depth
(IMREAD_ANYDEPTH: 16-bit stays 16-bit, as imgpu reads it). Each image: cv2.imread(gray; clahe, erode, gauss: colour) -> op -> cv2.imwrite
(same extension); `loop` is a plain for loop, `pool` the same function in a multiprocessing.Pool(processes)."""
import json
import os
import sys
import time
from multiprocessing import Pool

import cv2
import numpy as np

COLOUR_OPS = ('clahe', 'erode', 'gauss', 'dilate', 'box', 'gamma')  # imgpu's clahe, morph and filter take colour photos as colour


def colour_clahe(bgr):
    """CLAHE of the lightness as OpenCV users write it (imgpu clahe on a colour photo): YCrCb's Y, and back."""
    ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
    ycc[:, :, 0] = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8)).apply(ycc[:, :, 0].copy())
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)


def gamma_lut():
    """imgpu gamma --gamma 0.5's 8-bit table: Debian's scikit-image 0.19 adjust_gamma (_adjust_gamma_u8), which
    truncates. Written out rather than imported: newer scikit-image rounds the table instead (np.rint), so importing
    whatever skimage a machine has made every gamma cell of the first H200 matrix 'differ' from imgpu."""
    return np.minimum(255 * np.linspace(0, 1, 256) ** 0.5, 255).astype(np.uint8)


def work(args):
    src, dst, op = args
    depth = cv2.IMREAD_ANYDEPTH if src.endswith('.png') else 0
    img = cv2.imread(src, (cv2.IMREAD_COLOR if op in COLOUR_OPS else cv2.IMREAD_GRAYSCALE) | depth)
    if img is None:
        return 0
    try:
        out = apply(img, op)
    except cv2.error:  # e.g. equalizeHist or LUT of a 16-bit PNG: cv2 has no such function; the image is left out
        return 0
    cv2.imwrite(dst, out)
    return 1


def apply(img, op):
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
    elif op == 'dilate':
        out = cv2.dilate(img, np.ones((5, 5), np.uint8))
    elif op == 'box':
        out = cv2.blur(img, (5, 5))
    elif op == 'gamma':
        out = cv2.LUT(img, gamma_lut())
    elif op == 'mean':
        out = cv2.adaptiveThreshold(img, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 11, 2)
    else:
        out = cv2.threshold(cv2.equalizeHist(img), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
    return out


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
