"""The real files the format fuzzer (test/fuzz/format-differential.ts) mutates: small crops of scikit-image's
photographs (a case decodes in a millisecond) written by the libraries users' files come from — PNG by OpenCV and
PIL (gray, RGB, RGBA, gray+alpha, palette, 8/16-bit), TIFF by tifffile and PIL (uncompressed, LZW, deflate,
PackBits, strips, tiles, big-endian, 16-bit), NIfTI-1/2 by nibabel (uint8, uint16, scaled int16, float32, gzipped),
DICOM by pydicom (implicit/explicit little-endian, big-endian, signed 16-bit CT with rescale, 8-bit) and .npy by
NumPy (format 1.0 and 2.0, 2D and 3D). Run from the repository root: /usr/bin/python3 scripts/make_fuzz_format_fixtures.py
"""
import os

import cv2
import nibabel as nib
import numpy as np
import pydicom
import tifffile
from PIL import Image
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRBigEndian, ExplicitVRLittleEndian, ImplicitVRLittleEndian, generate_uid
from skimage import data

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'fuzz')
os.makedirs(OUT, exist_ok=True)
p = lambda name: os.path.join(OUT, name)

rgb = data.chelsea()[100:124, 150:182].copy()        # 24×32 RGB
gray = data.camera()[200:220, 240:268].copy()        # 20×28 gray
gray16 = (gray.astype(np.uint16) * 257 + np.arange(28, dtype=np.uint16)).astype(np.uint16)
rgb16 = rgb.astype(np.uint16) * 251

# PNG
cv2.imwrite(p('gray8.png'), gray)
cv2.imwrite(p('rgb8.png'), rgb[:, :, ::-1])
cv2.imwrite(p('gray16.png'), gray16)
cv2.imwrite(p('rgb16.png'), rgb16[:, :, ::-1])
alpha = (np.arange(24 * 32).reshape(24, 32) % 256).astype(np.uint8)
Image.fromarray(np.dstack([rgb, alpha])).save(p('rgba8.png'))
Image.fromarray(np.dstack([gray, gray[::-1]]), 'LA').save(p('graya8.png'))
Image.fromarray(rgb).quantize(16).save(p('palette.png'))

# TIFF
tifffile.imwrite(p('gray8.tif'), gray)
tifffile.imwrite(p('rgb8_deflate.tif'), rgb, compression='zlib', photometric='rgb')
tifffile.imwrite(p('gray16_strips.tif'), gray16, rowsperstrip=4)
tifffile.imwrite(p('rgb8_tiled.tif'), np.pad(rgb, ((0, 8), (0, 0), (0, 0))), tile=(16, 16), photometric='rgb')
tifffile.imwrite(p('gray8_be.tif'), gray, byteorder='>')
Image.fromarray(rgb).save(p('rgb8_lzw.tif'), compression='tiff_lzw')
Image.fromarray(gray).save(p('gray8_packbits.tif'), compression='packbits')

# NIfTI
vol = np.stack([gray[:, :16], gray[:, 8:24], gray[:, 12:28]])  # 3×20×16, stored (x, y, z)
xyz = np.ascontiguousarray(vol.transpose(2, 1, 0))
affine = np.diag([0.9, 1.1, 2.5, 1.0])
nib.save(nib.Nifti1Image(xyz.astype(np.uint8), affine), p('u8.nii'))
nib.save(nib.Nifti1Image(xyz.astype(np.uint16) * 200, affine), p('u16.nii.gz'))
f32 = nib.Nifti1Image(xyz.astype(np.float32) / 7, affine)
nib.save(f32, p('f32.nii'))
scaled = nib.Nifti1Image(xyz.astype(np.int16) - 100, affine)
scaled.header.set_slope_inter(0.5, -20)
nib.save(scaled, p('i16_scaled.nii'))
nib.save(nib.Nifti2Image(xyz.astype(np.int16), affine), p('i16_nifti2.nii'))
nib.save(nib.Nifti1Image(gray.T.astype(np.uint8).copy(), affine), p('slice2d.nii.gz'))


def dicom(path, pixels, syntax, signed=False, slope=None, intercept=None):
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = '1.2.840.10008.5.1.4.1.1.2'
    meta.MediaStorageSOPInstanceUID = generate_uid(entropy_srcs=[path])
    meta.TransferSyntaxUID = syntax
    ds = Dataset()
    ds.file_meta = meta
    ds.is_little_endian = syntax != ExplicitVRBigEndian
    ds.is_implicit_VR = syntax == ImplicitVRLittleEndian
    ds.SOPClassUID = meta.MediaStorageSOPClassUID
    ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
    ds.SeriesInstanceUID = generate_uid(entropy_srcs=[path, 'series'])
    ds.Modality = 'CT'
    ds.Rows, ds.Columns = pixels.shape
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = 'MONOCHROME2'
    ds.BitsAllocated = pixels.dtype.itemsize * 8
    ds.BitsStored = 12 if pixels.dtype.itemsize == 2 else 8
    ds.HighBit = ds.BitsStored - 1
    ds.PixelRepresentation = 1 if signed else 0
    ds.ImagePositionPatient = [-10.0, -12.5, 30.0]
    ds.ImageOrientationPatient = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    ds.PixelSpacing = [0.75, 0.8]
    if slope is not None:
        ds.RescaleSlope = slope
        ds.RescaleIntercept = intercept
    arr = pixels.astype(pixels.dtype.newbyteorder('>' if syntax == ExplicitVRBigEndian else '<'))
    ds.PixelData = arr.tobytes()
    ds.save_as(path, write_like_original=False)


ct = (gray.astype(np.int16) * 8 - 1024).astype(np.int16)
dicom(p('ct_explicit.dcm'), ct, ExplicitVRLittleEndian, signed=True, slope='1', intercept='-1024')
dicom(p('u16_implicit.dcm'), (gray16 >> 4).astype(np.uint16), ImplicitVRLittleEndian, slope='0.5', intercept='3')
dicom(p('u8_explicit.dcm'), gray, ExplicitVRLittleEndian)
dicom(p('u16_bigendian.dcm'), (gray16 >> 4).astype(np.uint16), ExplicitVRBigEndian)

# .npy
np.save(p('u8.npy'), gray)
np.save(p('u16_3d.npy'), np.stack([gray16, gray16[::-1]]))
np.save(p('f32.npy'), gray.astype(np.float32) / 3)
with open(p('f32_v2.npy'), 'wb') as f:
    np.lib.format.write_array(f, gray.astype(np.float32) - 100.25, version=(2, 0))

for f in sorted(os.listdir(OUT)):
    print(f, os.path.getsize(p(f)))
