#!/usr/bin/python3
"""Real scans for the volume readers, and what pydicom/nibabel read from them. Run from the repository root:
/usr/bin/python3 scripts/make_volume_fixtures.py   (needs python3-pydicom, python3-nibabel)

- ct-series/: a 6-slice CT series built from pydicom's CT_small.dcm (a real 128×128 CT slice, HU = raw - 1024):
  slice i is the slice with its pixels rolled by 3·i columns and shifted by 7·i raw units, at
  ImagePositionPatient z + 2.5·i mm, with a fresh SOPInstanceUID and InstanceNumber 6 − i; the files are named
  in a shuffled order so that only the positions give the right order.
- mr-series/: nibabel's nicom test slices 0.dcm and 1.dcm (a real 2-slice Siemens MR series, 3 mm apart, oblique).
- NIfTI: nibabel's anatomical.nii (big-endian int16), reoriented_anat_moved.nii (big-endian float32),
  standard.nii.gz (uint8, gzip) and example_nifti2.nii.gz (NIfTI-2, 4D: must be refused).
Expected voxels are saved as [z, y, x] float32 (.npy) and the RAS affines in expected.json.
"""
import copy
import json
import os
import shutil

import nibabel as nib
import numpy as np
import pydicom
from pydicom.uid import generate_uid

ROOT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'volumes')
PYDICOM = os.path.dirname(pydicom.__file__) + '/data/test_files'
NIB = os.path.dirname(nib.__file__)
os.makedirs(ROOT, exist_ok=True)
expected = {}


def dicom_volume(files):
    """The volume as the DICOM standard defines it: sorted along the slice normal, HU = raw·slope + intercept,
    voxel (i, j, k) at IPP + i·Δcol·row_cos + j·Δrow·col_cos + k·dz·n, converted from LPS to RAS."""
    ds = [pydicom.dcmread(f) for f in files]
    iop = np.array(ds[0].ImageOrientationPatient, float)
    n = np.cross(iop[:3], iop[3:])
    ds.sort(key=lambda d: float(np.dot(np.array(d.ImagePositionPatient, float), n)))
    vol = np.stack([d.pixel_array.astype(np.float64) * float(getattr(d, 'RescaleSlope', 1)) + float(getattr(d, 'RescaleIntercept', 0)) for d in ds]).astype(np.float32)
    p0 = np.array(ds[0].ImagePositionPatient, float)
    dz = float(np.dot(np.array(ds[-1].ImagePositionPatient, float) - p0, n)) / (len(ds) - 1)
    zdir = (np.array(ds[-1].ImagePositionPatient, float) - p0) / ((len(ds) - 1) * dz)
    ps = [float(v) for v in ds[0].PixelSpacing]
    a = np.eye(4)
    a[:3, 0] = iop[:3] * ps[1]
    a[:3, 1] = iop[3:] * ps[0]
    a[:3, 2] = zdir * dz
    a[:3, 3] = p0
    lps_to_ras = np.diag([-1, -1, 1, 1])
    return vol, (lps_to_ras @ a).tolist()


# CT series from CT_small.dcm
ct_dir = os.path.join(ROOT, 'ct-series')
shutil.rmtree(ct_dir, ignore_errors=True)
os.makedirs(ct_dir)
src = pydicom.dcmread(os.path.join(PYDICOM, 'CT_small.dcm'))
ipp = [float(v) for v in src.ImagePositionPatient]
order = [3, 0, 5, 1, 4, 2]
for i in range(6):
    d = copy.deepcopy(src)
    px = np.roll(src.pixel_array, 3 * i, axis=1).astype(np.int32) + 7 * i
    d.PixelData = px.astype(np.int16).tobytes()
    d.ImagePositionPatient = [ipp[0], ipp[1], ipp[2] + 2.5 * i]
    d.SliceLocation = ipp[2] + 2.5 * i
    d.InstanceNumber = 6 - i
    d.SOPInstanceUID = generate_uid()
    d.file_meta.MediaStorageSOPInstanceUID = d.SOPInstanceUID
    d.save_as(os.path.join(ct_dir, f'slice{order[i]}.dcm'))
files = sorted(os.path.join(ct_dir, f) for f in os.listdir(ct_dir))
vol, aff = dicom_volume(files)
np.save(os.path.join(ROOT, 'ct-series.npy'), vol)
expected['ct-series'] = {'shape': list(vol.shape), 'affine': aff}

# MR series from nibabel
mr_dir = os.path.join(ROOT, 'mr-series')
shutil.rmtree(mr_dir, ignore_errors=True)
os.makedirs(mr_dir)
for f in ('0.dcm', '1.dcm'):
    shutil.copy(os.path.join(NIB, 'nicom', 'tests', 'data', f), os.path.join(mr_dir, f))
vol, aff = dicom_volume([os.path.join(mr_dir, f) for f in ('0.dcm', '1.dcm')])
np.save(os.path.join(ROOT, 'mr-series.npy'), vol)
expected['mr-series'] = {'shape': list(vol.shape), 'affine': aff}

# NIfTI files from nibabel
for f in ('anatomical.nii', 'reoriented_anat_moved.nii', 'standard.nii.gz', 'example_nifti2.nii.gz'):
    shutil.copy(os.path.join(NIB, 'tests', 'data', f), os.path.join(ROOT, f))
    img = nib.load(os.path.join(ROOT, f))
    if len(img.shape) > 3:
        continue
    data = np.asarray(img.get_fdata(), np.float32).transpose(2, 1, 0)
    stem = f.split('.')[0]
    np.save(os.path.join(ROOT, stem + '.npy'), np.ascontiguousarray(data))
    expected[stem] = {'shape': list(data.shape), 'affine': img.affine.tolist(), 'dtype': str(img.get_data_dtype())}

with open(os.path.join(ROOT, 'expected.json'), 'w') as fh:
    json.dump(expected, fh, indent=1)
print('wrote', ROOT)
