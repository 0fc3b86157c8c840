#!/usr/bin/python3
"""More background photographs for the training bench (bench/train.ts), from images that ship with scikit-image
(Debian python3-skimage): none holds a human face. test/fixtures/train/backgrounds has seven training photographs
(plus coffee and coins, which the bench keeps for its held-out scenes); a cascade trained on so few textures rejects
them all after a dozen stages and then fires on textures it never saw. These add eleven more, gray, at most 240 px.
Run: /usr/bin/python3 bench/train/make_backgrounds.py
"""
import os
import sys

import cv2
from skimage import data

# The fixtures' own conversion to 8-bit gray (one rule for every image of the training data).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'scripts'))
from make_train_fixtures import gray8  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), 'backgrounds')
NAMES = ['chelsea', 'horse', 'hubble_deep_field', 'immunohistochemistry', 'retina', 'cell', 'page', 'clock',
         'logo', 'colorwheel']


def main():
    os.makedirs(OUT, exist_ok=True)
    photos = {name: gray8(getattr(data, name)()) for name in NAMES}
    # The stereo pair's left view: a workshop scene (no person), read from the package's own file.
    photos['motorcycle'] = cv2.imread(os.path.join(os.path.dirname(data.__file__), 'motorcycle_left.png'), cv2.IMREAD_GRAYSCALE)
    for name, img in photos.items():
        s = min(1, 240 / max(img.shape))
        small = cv2.resize(img, (round(img.shape[1] * s), round(img.shape[0] * s)), interpolation=cv2.INTER_AREA)
        cv2.imwrite(os.path.join(OUT, f'{name}.png'), small)


if __name__ == '__main__':
    main()
