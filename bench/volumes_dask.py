"""The dask anchor of bench/volumes.ts (issue 38 item 5): what dask-image's `ndfilters.gaussian_filter` does — dask's
`map_overlap` of `scipy.ndimage.gaussian_filter` with a halo of int(truncate·σ + 0.5) voxels and no padding at the
volume's faces (scipy's own mode there), uint16 out — from an OME-Zarr's level 0 to a Zarr of the same chunks and
compressor, then the pyramid by 2×2×2 means (`da.coarsen`), each level written as the one before is read back, as a
user would chain them. dask-image itself is not packaged by Debian (nor installed on the GPU machine); its
gaussian_filter is this map_overlap (dask_image/ndfilters/_gaussian.py), so the anchor times the same work.

    python3 bench/volumes_dask.py IN.zarr OUT.zarr [--sigma 2] [--levels 4] [--compressor zstd|gzip|raw]
        [--workers N] [--compare IMGPU_OUT.zarr]

Prints one JSON line: seconds (wall, reading and writing included), peak RSS (getrusage), dask's version, and with
--compare the largest difference from imgpu's level 0 (rounding: scipy truncates a float to uint16 where imgpu's
--saturate rounds; said as measured).
"""
import argparse, json, os, resource, time

import dask
import dask.array as da
import numcodecs
import numpy as np
import scipy.ndimage as ndi
import zarr

p = argparse.ArgumentParser()
p.add_argument('src'); p.add_argument('dst')
p.add_argument('--sigma', type=float, default=2.0); p.add_argument('--truncate', type=float, default=4.0)
p.add_argument('--levels', type=int, default=4); p.add_argument('--compressor', default='zstd')
p.add_argument('--workers', type=int, default=os.cpu_count()); p.add_argument('--compare')
a = p.parse_args()

compressor = {'zstd': numcodecs.Zstd(level=1), 'gzip': numcodecs.GZip(level=1), 'raw': None}[a.compressor]
t0 = time.perf_counter()
src = da.from_zarr(os.path.join(a.src, '0'))
depth = int(a.truncate * a.sigma + 0.5)
out = src.map_overlap(ndi.gaussian_filter, depth=depth, boundary='none', dtype=np.uint16, sigma=a.sigma, mode='reflect', truncate=a.truncate)
root = zarr.open_group(a.dst, mode='w')
with dask.config.set(scheduler='threads', num_workers=a.workers):
    level = out
    for i in range(a.levels):
        arr = root.create_dataset(str(i), shape=level.shape, chunks=src.chunksize, dtype=np.uint16, compressor=compressor, overwrite=True)
        da.store(level.rechunk(src.chunksize), arr, lock=False)
        back = da.from_zarr(arr)
        level = da.coarsen(np.mean, back, {0: 2, 1: 2, 2: 2}, trim_excess=True).round().astype(np.uint16)
seconds = time.perf_counter() - t0
row = {'seconds': round(seconds, 2), 'peakRssMiB': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), 'dask': dask.__version__, 'workers': a.workers, 'halo': depth}
if a.compare:
    mine = zarr.open_array(os.path.join(a.compare, '0'), mode='r')
    theirs = root['0']
    worst = 0
    for z in range(0, mine.shape[0], src.chunksize[0]):
        d = np.abs(mine[z:z + src.chunksize[0]].astype(np.int32) - theirs[z:z + src.chunksize[0]].astype(np.int32))
        worst = max(worst, int(d.max()))
    row['maxAbsDiffFromImgpu'] = worst
print(json.dumps(row))
