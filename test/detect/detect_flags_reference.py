"""cv2.CascadeClassifier.detectMultiScale's answers for `imgpu detect --max-size` and `--threshold` (test/cli/detect-flags.test.ts).

argv: cascade.xml image [image…]; prints JSON {image: {...}} with, per image, sorted [x, y, w, h] lists:
  max_<W>: detectMultiScale(maxSize=(W, W)), raw (minNeighbors 0) and grouped (minNeighbors 3);
  threshold: detectMultiScale3(outputRejectLevels=True) raw windows, each with its levelWeight (the last stage's sum),
  kept where the weight is ≥ T, then grouped as detectMultiScale groups (groupRectangles(minNeighbors 3, eps 0.2),
  clipped to the image) — checked here to give detectMultiScale's own boxes with no window dropped.
"""
import json
import sys

import cv2
import numpy as np

MAX_SIZES = (100, 60)
T = 1.0


def boxes(a):
    return sorted([int(v) for v in r] for r in a)


def grouped(rects, shape):
    if len(rects) == 0:
        return []
    g, _ = cv2.groupRectangles([list(map(int, r)) for r in rects], 3, 0.2)
    h, w = shape
    out = []
    for x, y, bw, bh in g:
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + bw, w), min(y + bh, h)
        if x1 > x0 and y1 > y0:
            out.append([int(x0), int(y0), int(x1 - x0), int(y1 - y0)])
    return sorted(out)


cascade = cv2.CascadeClassifier(sys.argv[1])
result = {}
for path in sys.argv[2:]:
    img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    gray = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)  # as imgpu reads a colour PNG gray
    r = {}
    for m in MAX_SIZES:
        r[f'max_{m}'] = {n: boxes(cascade.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=n, maxSize=(m, m))) for n in (0, 3)}
    rects, _, weights = cascade.detectMultiScale3(gray, scaleFactor=1.1, minNeighbors=0, outputRejectLevels=True)
    weights = np.asarray(weights).ravel()
    assert grouped(rects, gray.shape) == boxes(cascade.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=3)), 'grouping as detectMultiScale'
    kept = [rc for rc, wt in zip(rects, weights) if wt >= T]
    assert 0 < len(kept) < len(rects) and np.min(np.abs(weights - T)) > 1e-4, 'T splits the windows, none near it'
    r['threshold'] = {'T': T, 'all': len(rects), 0: boxes(kept), 3: grouped(kept, gray.shape)}
    result[path] = r
print(json.dumps(result))
