#!/usr/bin/python3
"""Fixtures for the detection tests (test/fixtures/detect), made with Debian's python3-opencv 4.6,
python3-skimage and opencv-data:

- astronaut.png: scikit-image's astronaut photograph, converted to gray with cv2.cvtColor (RGB2GRAY).
- lfw_mosaic.png: 30 faces of scikit-image's lfw_subset (Labeled Faces in the Wild crops, 25x25) enlarged to
  64x64 (cv2.INTER_CUBIC) and tiled 10x3: real faces at known places, many detections per image.
- lbpcascade_frontalface.xml, lbpcascade_frontalcatface.xml: copied from opencv-data.
- reference.json: cv2.CascadeClassifier.detectMultiScale on each case: the raw windows (minNeighbors 0,
  OpenCV's own list, order not significant) and the grouped boxes.
- handmade_waldboost.xml + handmade_reference.json: a small WaldBoost classifier written here (see
  handmade()) and the windows it accepts on the astronaut pyramid, computed by an independent numpy
  evaluation (cv2.resize INTER_LINEAR_EXACT levels, cv2.integral, MB-LBP codes, running sum with posT/negT).
- pan.mp4: a 320x240 H.264 pan and zoom over the astronaut photograph (ffmpeg zoompan), 12 frames.
- frame_640x352.png: the benchmark's 640x352 frame, written first by `node dist/bench/detect-frame.js 640x352
  test/fixtures/detect/frame_640x352.png` (astronaut repeated, LFW faces): at one of its levels OpenCV's stripes
  leave the last window row unscanned, a trap the other images do not set.

Run from the repository root: /usr/bin/python3 scripts/make_detect_fixtures.py
"""
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import cv2
import numpy as np
from skimage import data

OUT = 'test/fixtures/detect'
CASCADES = '/usr/share/opencv4/lbpcascades'


def rects(a):
    return np.asarray(a).reshape(-1, 4).tolist()


def cases(images):
    """(name, image file, cascade, scale, minNeighbors, minSize) for the references."""
    return [
        ('astronaut', 'astronaut.png', 'lbpcascade_frontalface.xml', 1.1, 3, None),
        ('lfw', 'lfw_mosaic.png', 'lbpcascade_frontalface.xml', 1.1, 3, None),
        ('lfw-1.2-min30', 'lfw_mosaic.png', 'lbpcascade_frontalface.xml', 1.2, 2, (30, 30)),
        ('camera', '../images/camera.png', 'lbpcascade_frontalface.xml', 1.1, 3, None),
        ('chelsea-cat', '../images/chelsea.png', 'lbpcascade_frontalcatface.xml', 1.05, 3, None),
        ('bench-frame-640x352', 'frame_640x352.png', 'lbpcascade_frontalface.xml', 1.1, 3, None),
    ]


def gray_of(path):
    img = cv2.imread(os.path.join(OUT, path), cv2.IMREAD_UNCHANGED)
    return img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)


# --- an independent WaldBoost evaluation (numpy), for the hand-made classifier -------------------------
def pyramid(gray, win, scale):
    H, W = gray.shape
    factor, levels = 1.0, []
    while True:
        ww, wh = int(np.rint(win * factor)), int(np.rint(win * factor))
        if ww > W or wh > H:
            break
        f = np.float32(factor)
        w, h = int(np.rint(np.float32(W) / f)), int(np.rint(np.float32(H) / f))
        if w + 1 - win <= 0 or h + 1 - win <= 0:
            break
        img = gray if (w, h) == (W, H) else cv2.resize(gray, (w, h), interpolation=cv2.INTER_LINEAR_EXACT)
        levels.append((f, img, cv2.integral(img, sdepth=cv2.CV_32S).astype(np.int64), 1 if f >= 2 else 2))
        factor *= scale
    return levels


def lbp_codes(ii, xs, ys, fx, fy, fw, fh):
    def p(r, c):
        return ii[ys + fy + r * fh, xs + fx + c * fw]
    def cell(r, c):
        return p(r, c) - p(r, c + 1) - p(r + 1, c) + p(r + 1, c + 1)
    cc = cell(1, 1)
    order = [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0)]
    code = np.zeros(xs.shape, np.int64)
    for bit, (r, c) in zip([128, 64, 32, 16, 8, 4, 2, 1], order):
        code |= np.where(cell(r, c) >= cc, bit, 0)
    return code


def waldboost_hits(gray, weak, win, scale):
    """Every window (no OpenCV skip rule: WaldBoost without stages), running float64 sum of float32 values."""
    hits = []
    for li, (f, img, ii, step) in enumerate(pyramid(gray, win, scale)):
        h, w = img.shape
        ys, xs = np.mgrid[0:h + 1 - win:step, 0:w + 1 - win:step]
        xs, ys = xs.ravel(), ys.ravel()
        s = np.zeros(xs.shape, np.float64)
        alive = np.ones(xs.shape, bool)
        accepted = np.zeros(xs.shape, bool)
        for (fx, fy, fw, fh), table, negT, posT in weak:
            live = alive & ~accepted
            code = lbp_codes(ii, xs, ys, fx, fy, fw, fh)
            s = np.where(live, s + table[code].astype(np.float64), s)
            alive &= ~(live & (s < negT))
            accepted |= live & alive & (s >= posT)
        for i in np.nonzero(alive)[0]:
            hits.append([li, int(xs[i]), int(ys[i]), float(s[i])])
    return hits


def handmade():
    """The weak classifiers of a hand-made WaldBoost classifier: the stumps 0-5 of lbpcascade_frontalface
    (features, and leaf values spread into 256-entry tables), evaluated with one running sum; tune() sets a
    rejection threshold after every one and an early acceptance (posT) after the third."""
    root = ET.parse(os.path.join(CASCADES, 'lbpcascade_frontalface.xml')).getroot().find('cascade')
    feats = [[int(v) for v in f.find('rect').text.split()] for f in root.find('features')]
    stumps = []
    for stage in root.find('stages'):
        for wc in stage.find('weakClassifiers'):
            nodes = [int(v) for v in wc.find('internalNodes').text.split()]
            leaves = [float(v) for v in wc.find('leafValues').text.split()]
            table = np.array([leaves[0] if (nodes[3 + (c >> 5)] >> (c & 31)) & 1 else leaves[1] for c in range(256)], np.float32)
            stumps.append((tuple(feats[nodes[2]]), table))
    return stumps[:6]


def tune(gray, stumps, scale):
    """Thresholds from the astronaut's own window sums: negT after every weak classifier at the 60th percentile
    of the live windows' running sums (the last at the 95th), posT after the third at the 98th percentile —
    high enough that windows it accepts early include some the last threshold would reject."""
    levels = pyramid(gray, 24, scale)
    state = []
    for f, img, ii, step in levels:
        h, w = img.shape
        ys, xs = np.mgrid[0:h + 1 - 24:step, 0:w + 1 - 24:step]
        state.append((ii, xs.ravel(), ys.ravel(), np.zeros(xs.size)))
    weak = []
    for k, (rect, table) in enumerate(stumps):
        sums = []
        for i, (ii, xs, ys, s) in enumerate(state):
            s = s + table[lbp_codes(ii, xs, ys, *rect)].astype(np.float64)
            state[i] = (ii, xs, ys, s)
            sums.append(s)
        allsums = np.concatenate(sums)
        negT = np.float32(np.quantile(allsums, 0.95 if k == len(stumps) - 1 else 0.6))
        posT = np.float32(np.quantile(allsums, 0.98)) if k == 2 else np.float32(np.inf)
        weak.append((rect, table, negT, posT))
        state = [(ii, xs[(s >= negT) & (s < posT)], ys[(s >= negT) & (s < posT)], s[(s >= negT) & (s < posT)]) for ii, xs, ys, s in state]
    return weak


def fmt(v):
    v = np.float32(v)
    if np.isinf(v):
        return 'inf' if v > 0 else '-inf'
    for p in range(1, 10):
        s = f'{float(v):.{p}g}'
        if np.float32(float(s)) == v:
            return s
    return repr(float(v))


def write_waldboost(path, weak):
    lines = ['<?xml version="1.0"?>',
             '<!-- hand-made by scripts/make_detect_fixtures.py: stumps 0-5 of lbpcascade_frontalface, one running sum -->',
             '<WaldBoostClassifier imageSizeX="24" imageSizeY="24" type="LBP">']
    for (x, y, w, h), table, negT, posT in weak:
        lines.append(f'  <stage posT="{fmt(posT)}" negT="{fmt(negT)}">')
        lines.append(f'    <HistogramWeakHypothesis predictionValues="{" ".join(fmt(v) for v in table)}"/>')
        lines.append(f'    <LBPFeature positionX="{x}" positionY="{y}" blockWidth="{w}" blockHeight="{h}"/>')
        lines.append('  </stage>')
    lines.append('</WaldBoostClassifier>')
    open(path, 'w').write('\n'.join(lines) + '\n')


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in ['lbpcascade_frontalface.xml', 'lbpcascade_frontalcatface.xml']:
        shutil.copy(os.path.join(CASCADES, c), os.path.join(OUT, c))
    astro = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2GRAY)
    cv2.imwrite(os.path.join(OUT, 'astronaut.png'), astro)
    lfw = (data.lfw_subset()[:30] * 255).round().astype(np.uint8)
    tiles = [cv2.resize(f, (64, 64), interpolation=cv2.INTER_CUBIC) for f in lfw]
    cv2.imwrite(os.path.join(OUT, 'lfw_mosaic.png'), np.vstack([np.hstack(tiles[r * 10:(r + 1) * 10]) for r in range(3)]))

    ref = {}
    for name, path, casc, scale, mn, min_size in cases(None):
        g = gray_of(path)
        c = cv2.CascadeClassifier(os.path.join(CASCADES, casc))
        kw = {'minSize': min_size} if min_size else {}
        raw = c.detectMultiScale(g, scaleFactor=scale, minNeighbors=0, **kw)
        grouped = c.detectMultiScale(g, scaleFactor=scale, minNeighbors=mn, **kw)
        ref[name] = {'image': path, 'classifier': casc, 'scale': scale, 'minNeighbors': mn, 'minSize': min_size,
                     'raw': sorted(rects(raw)), 'grouped': sorted(rects(grouped))}
        print(name, g.shape, len(raw), 'raw,', len(grouped), 'grouped')
    json.dump(ref, open(os.path.join(OUT, 'reference.json'), 'w'), indent=1)

    weak = tune(astro, handmade(), 1.25)
    write_waldboost(os.path.join(OUT, 'handmade_waldboost.xml'), weak)
    hits = waldboost_hits(astro, weak, 24, 1.25)
    json.dump({'image': 'astronaut.png', 'scale': 1.25, 'hits': hits}, open(os.path.join(OUT, 'handmade_reference.json'), 'w'))
    # How much each rule matters: hits without posT, and with posT but no rejections after it.
    no_post = waldboost_hits(astro, [(r, t, n, np.float32(np.inf)) for r, t, n, _ in weak], 24, 1.25)
    print('handmade:', len(hits), 'hits;', len(no_post), 'without posT')

    subprocess.run(['ffmpeg', '-v', 'error', '-y', '-loop', '1', '-i', os.path.join(OUT, 'astronaut.png'), '-vf',
                    "zoompan=z='1+0.04*on':x='iw/2-(iw/zoom/2)+8*on':y='ih/4-(ih/zoom/4)':d=12:s=320x240:fps=12,format=yuv420p",
                    '-frames:v', '12', '-c:v', 'libx264', '-crf', '18', os.path.join(OUT, 'pan.mp4')], check=True)


if __name__ == '__main__':
    main()
