import { InvalidArgumentError } from '../../core/errors.js';
import { roundHalfEven } from '../../core/rounding.js';

/**
 * The detection pyramid, exactly as OpenCV's CascadeClassifier::detectMultiScale builds it: scale factors
 * 1, s, s², … kept as float32, the image resized to (cvRound(W/f), cvRound(H/f)) by bit-exact bilinear
 * interpolation (INTER_LINEAR_EXACT), windows every `step` pixels (2 below factor 2, then 1).
 */
export interface Level {
  /** The scale factor (a float32 value, as OpenCV keeps it). */
  factor: number;
  /** Size of the resized image. */
  width: number;
  height: number;
  /** Window positions x ∈ [0, cols), y ∈ [0, rows), on multiples of `step` (rows: those OpenCV's stripes reach). */
  cols: number;
  rows: number;
  step: number;
  /** The detection's size in the input image. */
  winWidth: number;
  winHeight: number;
}

export interface PyramidOptions {
  /** Scale factor between levels (> 1). @default 1.1 */
  scale: number;
  /** Smallest object size in input pixels (windows smaller are skipped). */
  minSize?: { width: number; height: number };
  /** Largest object size in input pixels. @default the image size */
  maxSize?: { width: number; height: number };
  /** Scan only the window rows OpenCV's stripes reach (staged cascades, for parity with detectMultiScale). */
  opencvStripes?: boolean;
}

/** The window positions a level scans: per row, rows (positions every `step` pixels). */
export function windowGrid(l: Level): { perRow: number; rows: number } {
  return { perRow: Math.ceil(l.cols / l.step), rows: Math.ceil(l.rows / l.step) };
}


const f32 = Math.fround;

/** The pyramid levels of a W×H image for a window (OpenCV's loop in detectMultiScaleNoGrouping and updateScaleData). */
export function pyramidLevels(W: number, H: number, window: { width: number; height: number }, o: PyramidOptions): Level[] {
  if (!(o.scale > 1)) throw new InvalidArgumentError(`detect: the scale factor must be > 1, got ${o.scale}`);
  const maxW = o.maxSize?.width || W, maxH = o.maxSize?.height || H;
  const levels: Level[] = [];
  for (let factor = 1; ; factor *= o.scale) {
    const ww = roundHalfEven(window.width * factor), wh = roundHalfEven(window.height * factor);
    if (ww > maxW || wh > maxH || ww > W || wh > H) break;
    if (o.minSize && (ww < o.minSize.width || wh < o.minSize.height)) continue;
    const f = f32(factor);
    const width = roundHalfEven(f32(W / f)), height = roundHalfEven(f32(H / f));
    const cols = width + 1 - window.width, rows = height + 1 - window.height;
    if (cols <= 0 || rows <= 0) break;
    levels.push({
      factor: f, width, height, cols, rows, step: f >= 2 ? 1 : 2,
      winWidth: roundHalfEven(f32(window.width * f)), winHeight: roundHalfEven(f32(window.height * f)),
    });
    if (levels.length > 4096) throw new InvalidArgumentError(`detect: more than 4096 pyramid levels: use a larger scale factor than ${o.scale}`);
  }
  return o.opencvStripes ? stripeRows(levels) : levels;
}

/**
 * OpenCV scans each level in `nstripes` horizontal stripes (nstripes = ⌈working width of the first level / 32⌉) of
 * `stripeSize = max(⌈⌊rows/step⌋ / nstripes⌉, 1)·step` rows — an integer division that can leave the last window
 * row of a level unscanned (rows = 241, step 2: rows 0…238 only). Those rows are dropped here too.
 */
function stripeRows(levels: Level[]): Level[] {
  if (!levels.length) return levels;
  const nstripes = Math.ceil(levels[0].cols / 32);
  for (const l of levels) {
    const stripe = Math.max(Math.floor((Math.floor(l.rows / l.step) + nstripes - 1) / nstripes), 1) * l.step;
    l.rows = Math.min(l.rows, nstripes * stripe);
  }
  return levels;
}

/**
 * Per output coordinate of a bit-exact bilinear resize (OpenCV's interpolationLinear::getCoeffs with 8-bit
 * fixed-point weights): the first source index and the weight of the next one (0..256), packed as
 * `offset << 9 | weight`. Outside the source's interior the edge pixel is repeated (weight 0).
 */
export function linearCoefficients(src: number, dst: number): Uint32Array {
  const scale = 1 / (dst / src); // OpenCV recomputes inv_scale from the sizes and inverts it in double
  const out = new Uint32Array(dst);
  for (let v = 0; v < dst; v++) {
    const fval = scale * (v + 0.5) - 0.5;
    const ival = Math.floor(fval);
    let ofs = 0, w = 0;
    if (ival >= 0 && src > 1) {
      if (ival < src - 1) {
        ofs = ival;
        w = Math.min(256, Math.max(0, roundHalfEven((fval - ival) * 256)));
      } else ofs = src - 1;
    }
    out[v] = (ofs << 9) | w;
  }
  return out;
}

/** A bit-exact bilinear resize of 8-bit gray (cv2.resize INTER_LINEAR_EXACT) into `out` (dw·dh). */
export function resizeLinearExact(src: Uint8Array, W: number, H: number, dw: number, dh: number, out: Uint8Array): void {
  const cx = linearCoefficients(W, dw), cy = linearCoefficients(H, dh);
  const rowA = new Uint32Array(dw), rowB = new Uint32Array(dw);
  const hline = (y: number, into: Uint32Array) => {
    const base = y * W;
    for (let x = 0; x < dw; x++) {
      const o = cx[x] >>> 9, w = cx[x] & 511;
      const o1 = Math.min(o + 1, W - 1);
      into[x] = (256 - w) * src[base + o] + w * src[base + o1];
    }
  };
  for (let y = 0; y < dh; y++) {
    const o = cy[y] >>> 9, w = cy[y] & 511;
    hline(o, rowA);
    hline(Math.min(o + 1, H - 1), rowB);
    const d = y * dw;
    for (let x = 0; x < dw; x++) out[d + x] = Math.min(255, ((256 - w) * rowA[x] + w * rowB[x] + 32768) >>> 16);
  }
}
