#!/usr/bin/python3
"""More background photographs for the training bench (bench/train.ts), from images that ship with scikit-image
(Debian python3-skimage): none holds a human face. test/fixtures/train/backgrounds has seven training photographs
(plus coffee and coins, which the bench keeps for its held-out scenes); a cascade trained on so few textures rejects
them all after a dozen stages and then fires on textures it never saw. These add eleven more, gray, at most 240 px.
Run: /usr/bin/python3 bench/train/make_backgrounds.py
"""
import os

import cv2
import numpy as np
from skimage import data

OUT = os.path.join(os.path.dirname(__file__), 'backgrounds')
NAMES = ['chelsea', 'horse', 'hubble_deep_field', 'immunohistochemistry', 'retina', 'cell', 'page', 'clock',
         'logo', 'colorwheel']


def gray8(img):
    img = np.asarray(img)
    if img.ndim == 3:
        img = cv2.cvtColor(img[..., :3].astype(np.uint8), cv2.COLOR_RGB2GRAY)
    if img.dtype != np.uint8:
        img = (np.clip(img, 0, 1) * 255).round().astype(np.uint8) if img.max() <= 1 else img.astype(np.uint8)
    return img


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
