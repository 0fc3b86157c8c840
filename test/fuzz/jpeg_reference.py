"""cv2.imread of every .jpg in a folder, colour and gray: <name>.rgb.npy (RGB order) and <name>.gray.npy where it
decodes, and results.json: per file, whether each decoded. One process for the whole corpus (test/fuzz/jpeg-differential.ts)."""
import json
import os
import sys

import cv2
import numpy as np

d = sys.argv[1]
out = {}
for f in sorted(os.listdir(d)):
    if not f.endswith('.jpg'):
        continue
    path = os.path.join(d, f)
    entry = {}
    for flag, name in ((cv2.IMREAD_COLOR, 'rgb'), (cv2.IMREAD_GRAYSCALE, 'gray')):
        im = cv2.imread(path, flag)
        entry[name] = im is not None
        if im is not None:
            np.save(os.path.join(d, f'{f}.{name}.npy'), np.ascontiguousarray(im[:, :, ::-1] if im.ndim == 3 else im))
    out[f] = entry
json.dump(out, open(os.path.join(d, 'results.json'), 'w'))
