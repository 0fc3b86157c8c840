"""The references of the format fuzzer (test/fuzz/format-differential.ts), one process for a folder of cases: each
file decoded by the reader users compare imgpu with, by extension — PNG and TIFF by cv2.imread(IMREAD_UNCHANGED) and
by PIL (either may be matched: they disagree with each other on some damaged files), NIfTI by nibabel, DICOM by
pydicom, .npy by numpy.load. Writes <name>.<reader>.npy for each reader that decodes (imgpu's layout: RGB order,
[z, y, x] volumes, values rescaled as imgpu documents), and results.json: per file, the readers that decoded and the
errors of those that refused."""
import json
import os
import sys
import warnings

import numpy as np

warnings.simplefilter('ignore')
os.environ.setdefault('OPENCV_LOG_LEVEL', 'SILENT')
import cv2  # noqa: E402


def cv2_raster(path):
    im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if im is None:
        raise ValueError('cv2.imread gave None')
    if im.ndim == 3 and im.shape[2] >= 3:
        im = im[:, :, [2, 1, 0, 3][: im.shape[2]]]
    return im


def pil_raster(path):
    from PIL import Image
    with Image.open(path) as im:
        # PIL reads 16-bit colour as 8-bit (its RGB modes hold bytes): no reference for imgpu's 16-bit colour.
        if im.mode in ('RGB', 'RGBA') and any('16' in str(t[3]) for t in im.tile):
            raise ValueError(f'PIL reads {im.tile[0][3]} as 8-bit')
        im.load()
        if im.mode == 'P':
            im = im.convert('RGBA' if 'transparency' in im.info else 'RGB')
        elif im.mode == 'LA':
            im = im.getchannel(0)
        elif im.mode in ('I;16', 'I;16B', 'I;16L'):
            return np.asarray(im).astype(np.uint16)
        elif im.mode not in ('L', 'RGB', 'RGBA'):
            raise ValueError(f'PIL mode {im.mode}: no imgpu equivalent compared')
        return np.asarray(im)


def nibabel_volume(path):
    import nibabel as nib
    img = nib.load(path)
    shape = img.shape
    if any(n > 1 for n in shape[3:]):
        raise ValueError(f'a series of volumes {shape}')
    raw = np.asanyarray(img.dataobj.get_unscaled())
    slope, inter = img.dataobj.slope, img.dataobj.inter
    raw = raw.reshape(shape[:3] if len(shape) >= 3 else shape)
    if raw.dtype in (np.uint8, np.dtype('<u2'), np.dtype('>u2')) and slope == 1 and inter == 0:
        out = raw.astype(raw.dtype.newbyteorder('<') if raw.dtype.itemsize > 1 else raw.dtype)
    else:
        out = (raw.astype(np.float64) * slope + inter).astype(np.float32)
    out = out.T  # (x, y, z) -> (z, y, x)
    if out.ndim == 3 and out.shape[0] == 1:
        out = out[0]
    return out


def pydicom_slice(path):
    """pydicom's pixel_array, its values reduced to BitsStored as the standard says (masked, or sign-extended where
    signed: pydicom 2.3 leaves the bits above), rescaled by slope and intercept (an empty one read as absent)."""
    import pydicom
    ds = pydicom.dcmread(path)
    arr = ds.pixel_array
    if arr.ndim != 2:
        raise ValueError(f'pixel array of shape {arr.shape}')
    stored, allocated = int(ds.BitsStored), int(ds.BitsAllocated)
    if not 1 <= stored <= allocated:
        raise ValueError(f'{stored} bits stored of {allocated}')
    raw = arr.astype(np.int64) & ((1 << stored) - 1)
    if ds.PixelRepresentation == 1:
        raw = np.where(raw >= 1 << (stored - 1), raw - (1 << stored), raw)
    value = lambda key, default: default if ds.get(key) in (None, '') else float(ds.get(key))
    return (raw.astype(np.float64) * value('RescaleSlope', 1.0) + value('RescaleIntercept', 0.0)).astype(np.float32)


def numpy_array(path):
    return np.load(path, allow_pickle=False)


READERS = {
    '.png': (('cv2', cv2_raster), ('pil', pil_raster)),
    '.tif': (('cv2', cv2_raster), ('pil', pil_raster)),
    '.nii': (('nibabel', nibabel_volume),),
    '.nii.gz': (('nibabel', nibabel_volume),),
    '.dcm': (('pydicom', pydicom_slice),),
    '.npy': (('numpy', numpy_array),),
}


def ext_of(f):
    return '.nii.gz' if f.endswith('.nii.gz') else os.path.splitext(f)[1]


d = sys.argv[1]
out = {}
for f in sorted(os.listdir(d)):
    if not f.startswith('case-'):
        continue
    path = os.path.join(d, f)
    entry = {'decoded': [], 'errors': {}}
    for name, read in READERS[ext_of(f)]:
        try:
            a = read(path)
            np.save(os.path.join(d, f'ref-{f}.{name}.npy'), np.ascontiguousarray(a))
            entry['decoded'].append(name)
        except Exception as e:  # a reader's refusal, whatever its kind
            entry['errors'][name] = f'{type(e).__name__}: {e}'[:200]
    out[f] = entry
json.dump(out, open(os.path.join(d, 'results.json'), 'w'))
