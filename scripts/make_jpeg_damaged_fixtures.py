"""Damaged JPEGs for the GPU decoder's parity and the decode policy (test/io/jpeg-damaged.test.ts), made from a
160×120 crop of test/fixtures/jpeg-gpu/c420.jpg written by cv2.imwrite (quality 90, 4:2:0 baseline: base.jpg) by
fixed byte changes, with cv2.imread's pixels of each
(Debian's OpenCV 4.6 / libjpeg-turbo 2.1.5: run with /usr/bin/python3) saved as PNG; an RGB PNG holds cv2's BGR in
RGB order. cv2 decodes all of them: libjpeg warns on the truncated and corrupt ones and fills what is missing.

  dqt.jpg        the luma quantization table's DC entry set to 255 and entry 13 to 231 (no libjpeg warning): blocks
                 whose dequantized values leave the range where libjpeg-turbo's SIMD IDCT equals its C one (issue 39)
  truncated.jpg  the first 60 % of the file (libjpeg: "Premature end of JPEG file")
  corrupt.jpg    64 bytes of entropy-coded data changed mid-scan (libjpeg: "Corrupt JPEG data: …")
"""
import os
import cv2

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, '..', 'test', 'fixtures', 'jpeg-gpu', 'c420.jpg')
OUT = os.path.join(HERE, '..', 'test', 'fixtures', 'jpeg-damaged')


def sos_end(b):
    """The offset of the entropy-coded data (after the SOS segment)."""
    p = 2
    while b[p] == 0xFF:
        length = (b[p + 2] << 8) | b[p + 3]
        if b[p + 1] == 0xDA:
            return p + 2 + length
        p += 2 + length
    raise ValueError('no SOS')


def luma_dqt(b):
    """The offset of the first quantization table's 64 entries (cv2 writes luma's first)."""
    p = 2
    while b[p] == 0xFF:
        if b[p + 1] == 0xDB:
            return p + 5
        p += 2 + ((b[p + 2] << 8) | b[p + 3])
    raise ValueError('no DQT')


def main():
    ok, enc = cv2.imencode('.jpg', cv2.imread(SRC)[90:210, 150:310], [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    src = enc.tobytes()
    files = {'base': src}
    b = bytearray(src)
    q = luma_dqt(src)
    b[q] = 255
    b[q + 13] = 231
    files['dqt'] = bytes(b)
    files['truncated'] = src[: len(src) * 6 // 10]
    b = bytearray(src)
    mid = (sos_end(src) + len(src)) // 2
    for i in range(mid, mid + 64):
        if b[i] != 0xFF and b[i - 1] != 0xFF:  # leave markers and stuffing as they are, and make none
            b[i] ^= 0x5A if b[i] ^ 0x5A != 0xFF else 0x55
    files['corrupt'] = bytes(b)
    os.makedirs(OUT, exist_ok=True)
    for name, data in files.items():
        path = os.path.join(OUT, f'{name}.jpg')
        open(path, 'wb').write(data)
        for flag, suffix in ((cv2.IMREAD_COLOR, 'rgb'), (cv2.IMREAD_GRAYSCALE, 'gray')):
            im = cv2.imread(path, flag)
            assert im is not None, f'cv2 does not decode {name}'
            cv2.imwrite(os.path.join(OUT, f'{name}_{suffix}.png'), im, [cv2.IMWRITE_PNG_COMPRESSION, 9])


if __name__ == '__main__':
    main()
