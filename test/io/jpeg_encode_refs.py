#!/usr/bin/python3
"""References of test/io/jpeg-encode-gpu.test.ts, written into the folder given (argv[1]) from the photographs in
test/fixtures/images (argv[2]) and scikit-image's sample photographs: each input as a PNG (what imgpu reads) and the
JPEGs cv2.imwrite writes for it (Debian's OpenCV 4.6 on libjpeg-turbo 2.1.5: 4:2:0 for colour, quality 95 by
default). OpenCV 4.6 has no IMWRITE_JPEG_SAMPLING_FACTOR, so 4:4:4 and 4:2:2 come from Pillow, which drives the same
libjpeg.so.62 with the same settings (its 4:2:0 files are cv2's byte for byte: checked below). Prints the names."""
import os
import sys

import cv2
import numpy as np
import skimage.data
from PIL import Image

out, fixtures = sys.argv[1], sys.argv[2]
QUALITIES = (95, 75, 100, 50, 10, 1)
rgb2bgr = lambda a: np.ascontiguousarray(a[:, :, ::-1])
chelsea = cv2.imread(os.path.join(fixtures, 'chelsea.png'))
checker = (np.add(*np.mgrid[:37, :53]) % 2 * 255).astype(np.uint8)
colour = {
    # sizes that are not multiples of the 16x16 MCU, down to less than one block
    'chelsea': chelsea,                                        # 451x300
    'chelsea_33x17': chelsea[100:117, 200:233],
    'chelsea_3x5': chelsea[50:55, 60:63],
    'chelsea_1x1': chelsea[50:51, 60:61],
    'coffee_587x397': rgb2bgr(skimage.data.coffee())[2:399, 5:592],
    'astronaut': rgb2bgr(skimage.data.astronaut()),             # 512x512, a multiple of the MCU
    # extremes of the arithmetic: noise, and 0/255 checkers (the largest AC coefficients, quality 100's divisor 8)
    'noise_67x45': np.random.default_rng(20).integers(0, 256, (45, 67, 3), dtype=np.uint8),
    'checker_53x37': np.dstack([checker, 255 - checker, checker]),
}
gray = {
    'camera_499x509': cv2.imread(os.path.join(fixtures, 'camera.png'), cv2.IMREAD_GRAYSCALE)[1:510, 7:506],
    'moon': cv2.imread(os.path.join(fixtures, 'moon.png'), cv2.IMREAD_GRAYSCALE),
    'coins': cv2.imread(os.path.join(fixtures, 'coins.png'), cv2.IMREAD_GRAYSCALE),
    'chelsea_gray': cv2.cvtColor(chelsea, cv2.COLOR_BGR2GRAY),
    'chelsea_gray_3x5': cv2.cvtColor(chelsea, cv2.COLOR_BGR2GRAY)[50:55, 60:63],
    'chelsea_gray_1x1': cv2.cvtColor(chelsea, cv2.COLOR_BGR2GRAY)[50:51, 60:61],
    'checker_gray_53x37': checker,
}
for name, img in {**colour, **gray}.items():
    cv2.imwrite(os.path.join(out, f'{name}.png'), img)
    for q in QUALITIES:
        cv2.imwrite(os.path.join(out, f'{name}_q{q}.jpg'), img, [cv2.IMWRITE_JPEG_QUALITY, q])
    if name in colour:
        pil = Image.fromarray(img[:, :, ::-1])
        for sub, tag in ((0, '444'), (1, '422'), (2, '420')):
            for q in (95, 75):
                pil.save(os.path.join(out, f'{name}_{tag}_q{q}.jpg'), quality=q, subsampling=sub)
        for q in (95, 75):
            with open(os.path.join(out, f'{name}_420_q{q}.jpg'), 'rb') as a, open(os.path.join(out, f'{name}_q{q}.jpg'), 'rb') as b:
                assert a.read() == b.read(), f'Pillow and cv2 disagree on {name} at quality {q}'
print(' '.join(f'{n}:{3 if n in colour else 1}' for n in {**colour, **gray}))
