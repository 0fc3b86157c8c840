#!/usr/bin/env python3
"""Reference outputs of skimage.exposure.adjust_gamma (Debian's scikit-image 0.19) for test/gamma.

Run with Debian's python3 (/usr/bin/python3): it has numpy, scikit-image and OpenCV.
Writes test/fixtures/gamma/<image>_g<gamma>_k<gain>.png (8/16-bit) or .npy (float32) for real photographs: camera (uint8 gray), chelsea
(uint8 colour, every channel alike), moon16 (uint16) and camera_unit_f32 (float32 in [0, 1], made here from camera).
"""
import ctypes
import os
import numpy as np
import cv2
from skimage import exposure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGES = os.path.join(ROOT, 'test', 'fixtures', 'images')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'gamma')
# (gamma, gain): brighten, darken, identity (exposes the LUT's truncation of i·(1/255)·255), a gain that saturates.
CASES = [(0.5, 1.0), (2.2, 1.0), (1.0, 1.0), (0.8, 1.3)]


def load(name):
    if name.endswith('.npy'):
        return np.load(os.path.join(IMAGES, name))
    img = cv2.imread(os.path.join(IMAGES, name), cv2.IMREAD_UNCHANGED)
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB) if img.ndim == 3 else img


def powf_formula(img, gamma, gain):
    libm = ctypes.CDLL('libm.so.6')
    libm.powf.restype = ctypes.c_float
    libm.powf.argtypes = [ctypes.c_float, ctypes.c_float]
    g, k = np.float32(gamma), np.float32(gain)
    flat = np.array([libm.powf(float(v), float(g)) for v in img.ravel()], dtype=np.float32)
    return (flat * np.float32(1.0) * k).astype(np.float32).reshape(img.shape)


def main():
    os.makedirs(OUT, exist_ok=True)
    # float32 in [0, 1] as skimage's float images are: a 128×128 crop of camera, scaled (written to the fixtures as an input).
    unit = (load('camera.png')[192:320, 192:320] / np.float32(255)).astype(np.float32)
    np.save(os.path.join(OUT, 'camera_unit_f32.npy'), unit)
    for name in ['camera.png', 'chelsea.png', 'moon16.npy', 'camera_unit_f32.npy']:
        img = unit if name == 'camera_unit_f32.npy' else load(name)
        for gamma, gain in CASES:
            if img.dtype == np.uint16 and gain > 1:
                continue  # numpy's float → uint16 cast of values above 65535 is undefined behaviour
            out = exposure.adjust_gamma(img, gamma, gain)
            assert out.dtype == img.dtype, (name, out.dtype)
            stem = name.split('.')[0]
            base = os.path.join(OUT, f'{stem}_g{gamma}_k{gain}')
            if out.dtype == np.float32:
                np.save(base + '.npy', out)
                # numpy 1.24 on AVX-512 CPUs computes float32 ** with SVML (not correctly rounded): its result
                # depends on the machine. The same formula with glibc's powf (correctly rounded; what numpy uses
                # on other CPUs) is the exact reference.
                np.save(base + '_powf.npy', powf_formula(img, gamma, gain))
            else:  # lossless and small: 8/16-bit PNG (cv2 writes BGR)
                cv2.imwrite(base + '.png', cv2.cvtColor(out, cv2.COLOR_RGB2BGR) if out.ndim == 3 else out)
            print(stem, gamma, gain, out.shape, out.dtype)


if __name__ == '__main__':
    main()
