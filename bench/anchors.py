#!/usr/bin/env python3
"""Times the reference libraries on the same images as `npm run bench`, in the same run.
Usage: python3 bench/anchors.py <dir with NAME.npy images> [reps]  → JSON on stdout:
{ "opencv": version, "threads": n, "results": { NAME: { "cv2.equalizeHist": {"min": ms, "median": ms}, ... } } }
(CuPy is timed when importable: device-resident input, with a synchronize, kernel + launch time.)"""
import json
import os
import statistics
import sys
import time

import numpy as np

# Optional everywhere: the other anchor scripts import cv2, cp and timeit from here, and a machine without OpenCV
# must not end them at import time (main() says so in its output instead).
try:
    import cv2
except ImportError:
    cv2 = None


try:
    from skimage import exposure, filters
except ImportError:
    exposure = filters = None
try:
    import cupy as cp
except ImportError:
    cp = None


def timeit(fn, reps):
    fn()  # warm-up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return {"min": min(ts), "median": statistics.median(ts)}


def main():
    if cv2 is None:  # no OpenCV on this machine: say so, don't fail the benchmark
        print(json.dumps({"error": "python3 cannot import cv2"}))
        return
    folder = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    out = {"opencv": cv2.__version__, "threads": cv2.getNumThreads(), "results": {}}
    for f in sorted(os.listdir(folder)):
        if not f.endswith('.npy'):
            continue
        img = np.load(os.path.join(folder, f))
        r = {}
        if img.dtype == np.uint8:
            r["cv2.equalizeHist"] = timeit(lambda: cv2.equalizeHist(img), reps)
            r["cv2.calcHist"] = timeit(lambda: cv2.calcHist([img], [0], None, [256], [0, 256]), reps)
            r["np.bincount"] = timeit(lambda: np.bincount(img.ravel(), minlength=256), reps)
            r["cv2.threshold.otsu"] = timeit(lambda: cv2.threshold(img, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU), reps)
            r["cv2.adaptiveThreshold.mean"] = timeit(lambda: cv2.adaptiveThreshold(img, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 11, 2), reps)
            r["cv2.adaptiveThreshold.gaussian"] = timeit(lambda: cv2.adaptiveThreshold(img, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, 11, 2), reps)
            if filters is not None:
                r["skimage.threshold_isodata"] = timeit(lambda: img > filters.threshold_isodata(img), reps)
            h, w = img.shape
            for g in (8, 16):
                clahe = cv2.createCLAHE(2.0, (g, g))
                r[f"cv2.createCLAHE.{g}x{g}"] = timeit(lambda: clahe.apply(img), reps)
                cuda = getattr(cv2, 'cuda', None)
                if cuda is not None and hasattr(cuda, 'createCLAHE') and cuda.getCudaEnabledDeviceCount() > 0:
                    cclahe = cuda.createCLAHE(2.0, (g, g))
                    dimg = cuda.GpuMat()
                    dimg.upload(img)
                    r[f"cv2.cuda.createCLAHE.{g}x{g}"] = timeit(lambda: (cclahe.apply(dimg, cuda.Stream_Null()), cuda.Stream_Null().waitForCompletion()), reps)
                # scikit-image's CLAHE (a different algorithm: float, 14-bit internal range) takes seconds at 8K.
                if exposure is not None and img.size <= 3840 * 2160:
                    r[f"skimage.equalize_adapthist.{g}x{g}"] = timeit(lambda: exposure.equalize_adapthist(img, kernel_size=(h // g, w // g), clip_limit=0.01), min(reps, 3))
            # gamma 0.5: skimage's own call, and its 256-entry LUT as an OpenCV or CuPy user would apply it.
            gamma_lut = np.minimum(255 * np.linspace(0, 1, 256) ** 0.5, 255).astype(np.uint8)
            r["cv2.LUT.gamma"] = timeit(lambda: cv2.LUT(img, gamma_lut), reps)
            if exposure is not None:
                r["skimage.adjust_gamma"] = timeit(lambda: exposure.adjust_gamma(img, 0.5), reps)
            if cp is not None:
                dimg = cp.asarray(img)
                r["cupy.bincount"] = timeit(lambda: (cp.bincount(dimg.ravel(), minlength=256), cp.cuda.Device().synchronize()), reps)
                dlut = cp.asarray(gamma_lut)
                r["cupy.take.gamma"] = timeit(lambda: (cp.take(dlut, dimg), cp.cuda.Device().synchronize()), reps)
        out["results"][f[:-4]] = r
    print(json.dumps(out))


if __name__ == '__main__':
    main()
