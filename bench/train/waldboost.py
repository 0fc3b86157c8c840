#!/usr/bin/python3
"""The WaldBoost comparison of the training bench (issue 37): `opencv_waldboost_detector train` (OpenCV contrib
xobjdetect; Debian: libopencv-dev) on the data set that `node dist/bench/train.js --save DIR` writes, and both detectors
scored by one protocol on the same held-out scenes.

  /usr/bin/python3 bench/train/waldboost.py DIR CASCADE_XML [OUT_JSON [WALDBOOST_MODEL]]

- WaldBoost: trained on DIR/positives (24×24 crops) and DIR/backgrounds (the same images the cascade mined), its
  model kept beside OUT_JSON as waldboost-opencv.xml (given an existing WALDBOOST_MODEL, that one is scored instead of
  training). Its `detect` mode scans 24×24 windows at step 4 px over scales 0.2–1.2 (×1.1), keeps those whose sum
  passes its fixed rejection threshold (−6), and writes them already grouped — groupRectangles(3, 0.7), its own
  choice — with a confidence each. Scored as it writes them (`tool`), and at the confidence threshold that does best
  on these scenes (`bestThreshold`: chosen on the test scenes themselves, so an upper bound for any threshold).
- The cascade (imgpu train's cascade.xml): cv2.CascadeClassifier(xml).detectMultiScale(scene, 1.1, 3) — the boxes
  imgpu detect gives with the same file (tested in test/train).
- Score: a detection is a hit at IoU ≥ 0.5 with a box not yet taken; recall over all boxes; false positives per scene.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

MIN_NEIGHBORS = 3


def iou(a, b):
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    ix = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    iy = max(0, min(ay + ah, by + bh) - max(ay, by))
    inter = ix * iy
    return inter / (aw * ah + bw * bh - inter)


def score(detections, scenes):
    hits = fps = total = 0
    for ds, s in zip(detections, scenes):
        used = set()
        for d in ds:
            j = next((k for k, b in enumerate(s['boxes']) if k not in used and iou(b, d) >= 0.5), -1)
            if j >= 0:
                used.add(j)
                hits += 1
            else:
                fps += 1
        total += len(s['boxes'])
    return {'recall': hits / total, 'falsePositivesPerScene': fps / len(scenes), 'scenes': len(scenes), 'objects': total}


def waldboost_bin():
    exe = shutil.which('opencv_waldboost_detector')
    if not exe:
        sys.exit('opencv_waldboost_detector not found: apt-get install libopencv-dev (Debian ships it there)')
    return exe


def train_waldboost(exe, data, model):
    t0 = time.perf_counter()
    # Its sample lists are cv::glob patterns: a folder lists every file in it.
    r = subprocess.run([exe, 'train', model, os.path.join(data, 'positives'), os.path.join(data, 'backgrounds')],
                       capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    log = (r.stdout + r.stderr).replace('\r', '\n')
    return {'seconds': seconds, 'exitCode': r.returncode, 'log': log.strip().split('\n')[-12:], 'ok': r.returncode == 0 and os.path.exists(model)}


def detect_waldboost(exe, model, data, scenes, tmp):
    """Every scene's boxes (grouped by the tool) with their confidences (one run of the tool per scene, as it works)."""
    out = []
    for i, s in enumerate(scenes):
        labels = os.path.join(tmp, f'labels{i}.txt')
        subprocess.run([exe, 'detect', model, os.path.join(data, s['file']), os.path.join(tmp, 'out.png'), labels],
                       check=True, capture_output=True)
        rows = []
        if os.path.exists(labels):
            for line in open(labels):
                f = line.strip().split(';')
                rows.append(([int(f[1]), int(f[2]), int(f[3]), int(f[4])], float(f[5])))
        out.append(rows)
    return out


def best_threshold(raw, scenes):
    """The confidence threshold (over the observed confidences' quantiles) whose boxes score best: most recall at
    ≤ 1 false positive per scene, else fewest false positives."""
    confs = np.array([c for rows in raw for _, c in rows])
    best = None
    for t in np.unique(np.quantile(confs, np.linspace(0, 0.999, 60))) if len(confs) else []:
        sc = score([[b for b, c in rows if c >= t] for rows in raw], scenes)
        key = (sc['falsePositivesPerScene'] <= 1, sc['recall'] if sc['falsePositivesPerScene'] <= 1 else -sc['falsePositivesPerScene'])
        if best is None or key > best[0]:
            best = (key, float(t), sc)
    return None if best is None else {'threshold': best[1], **best[2]}


def main():
    data, cascade = sys.argv[1], sys.argv[2]
    out_json = sys.argv[3] if len(sys.argv) > 3 else os.path.join(data, 'comparison.json')
    scenes = json.load(open(os.path.join(data, 'scenes.json')))
    c = cv2.CascadeClassifier(cascade)
    assert not c.empty(), f'cv2 could not load {cascade}'
    imgs = [cv2.imread(os.path.join(data, s['file']), cv2.IMREAD_GRAYSCALE) for s in scenes]
    result = {'protocol': f'cascade: cv2 detectMultiScale(scene, 1.1, {MIN_NEIGHBORS}); waldboost: its detect mode (its own grouping); hit at IoU >= 0.5',
              'cascade': score([[list(map(int, b)) for b in c.detectMultiScale(im, 1.1, MIN_NEIGHBORS)] for im in imgs], scenes)}
    print('cascade', json.dumps(result['cascade']), flush=True)
    exe = waldboost_bin()
    given = sys.argv[4] if len(sys.argv) > 4 and os.path.exists(sys.argv[4]) else None
    with tempfile.TemporaryDirectory() as tmp:
        model = given or os.path.join(os.path.dirname(os.path.abspath(out_json)), 'waldboost-opencv.xml')
        result['waldboost'] = {'model': model}
        if not given:
            result['waldboost']['train'] = train_waldboost(exe, data, model)
            print('waldboost train', json.dumps(result['waldboost']['train']), flush=True)
        if given or result['waldboost']['train']['ok']:
            boxes = detect_waldboost(exe, model, data, scenes, tmp)
            result['waldboost']['boxesPerScene'] = sum(len(r) for r in boxes) / len(boxes)
            result['waldboost']['tool'] = score([[b for b, _ in rows] for rows in boxes], scenes)
            result['waldboost']['bestThreshold'] = best_threshold(boxes, scenes)
    with open(out_json, 'w') as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items()}, indent=1))


if __name__ == '__main__':
    main()
