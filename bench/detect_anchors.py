#!/usr/bin/env python3
"""OpenCV anchor for bench/detect.ts: cv2.CascadeClassifier.detectMultiScale(gray, 1.1, 3) on one frame,
on all cores and on one thread (median ms of `reps` runs after a warm-up), and its boxes.
Usage: python3 bench/detect_anchors.py <frame.png> <cascade.xml> [reps] -> one JSON line.
OpenCV 5 has no CascadeClassifier: the anchor then reports that and nothing else."""
import json
import statistics
import sys
import time

import cv2


def main():
    path, cascade = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    if not hasattr(cv2, 'CascadeClassifier'):
        print(json.dumps({'available': False, 'opencv': cv2.__version__, 'reason': 'this OpenCV has no CascadeClassifier'}))
        return
    img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    c = cv2.CascadeClassifier(cascade)
    out = {'available': True, 'opencv': cv2.__version__}
    for threads, key in [(cv2.getNumberOfCPUs(), 'allCores'), (1, 'oneThread')]:
        cv2.setNumThreads(threads)
        boxes = c.detectMultiScale(img, 1.1, 3)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            c.detectMultiScale(img, 1.1, 3)
            times.append((time.perf_counter() - t0) * 1000)
        out[key] = {'threads': threads, 'median': statistics.median(times), 'min': min(times)}
    out['boxes'] = sorted(map(list, map(lambda b: map(int, b), boxes)))
    print(json.dumps(out))


main()
