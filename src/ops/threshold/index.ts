import type { CpuPool } from '../../core/cpu/pool.js';
import { UnsupportedDtypeError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { download } from '../../core/gpu/transfer.js';
import { requireDtype, toGray, validateImage, type Image } from '../../core/image.js';
import { resolveParams, type ParamSpec } from '../../core/params.js';
import { kernelTotal, makeTimings, now, type OpResult, type Timings } from '../../core/timings.js';
import { histogram } from '../histogram/index.js';
import { HISTOGRAM_METHODS, type HistogramMethod } from '../histogram/gpu.js';
import { applyLutCpu } from '../lut/cpu.js';
import { applyLut } from '../lut/index.js';
import { inlinePool } from '../tasks.js';
import { binaryLut, isodataThreshold, otsuThreshold } from './global.js';
import { otsuGpu } from './gpu.js';

export const THRESHOLD_METHODS = ['otsu', 'isodata'] as const;
export type ThresholdMethod = (typeof THRESHOLD_METHODS)[number];

/** Declared once: CLI flags, help and validation come from here. */
export const thresholdParams: readonly ParamSpec[] = [
  { name: 'method', kind: 'enum', choices: THRESHOLD_METHODS, default: 'otsu', doc: 'otsu (cv2 THRESH_OTSU) or isodata (skimage threshold_isodata)' },
  { name: 'hist', kind: 'enum', choices: HISTOGRAM_METHODS, default: 'atomic', doc: 'GPU histogram algorithm used by the global methods' },
];

export interface ThresholdOptions extends GpuRunOptions {
  /** @default 'otsu' */
  method?: ThresholdMethod;
  /** GPU histogram algorithm. @default 'atomic' */
  hist?: HistogramMethod;
  gpu?: GpuContext;
  pool?: CpuPool;
}

/** A binary image (0 / dtype maximum: pixels strictly above the threshold are set) and the global threshold. */
export type ThresholdResult<T> = OpResult<T> & { threshold: number };

/** Sets total to the wall clock since t0 and host to what the measured phases leave of it. */
function closeTimings(t: Timings, t0: number): Timings {
  const total = now() - t0;
  return { ...t, total, host: Math.max(0, total - t.upload - t.download - kernelTotal(t)) };
}

/** Adds one step's timings to another's (operations composed of operations). */
function addTimings(a: Timings, b: Timings): Timings {
  return {
    ...a, host: a.host + b.host, upload: a.upload + b.upload, download: a.download + b.download,
    kernels: [...a.kernels, ...b.kernels], total: a.total + b.total,
  };
}

/**
 * Global thresholding of an 8/16-bit gray image (colour host images are converted to gray):
 * - otsu: threshold and output equal to cv2.threshold(img, 0, 255, THRESH_BINARY | THRESH_OTSU); on the GPU
 *   (8-bit) the threshold is found by a scan and reduction over the histogram on the device (no host round
 *   trip); 16-bit: device histogram, threshold in double on the host (see below);
 * - isodata: scikit-image's threshold_isodata (its tie rule: the lowest qualifying t); output img > t.
 *   On the GPU the histogram is computed on the device and the threshold on the host from it.
 * 16-bit images use 65536 bins and 65535 as the foreground value.
 */
export async function threshold(src: Image, opts?: ThresholdOptions): Promise<ThresholdResult<Image>>;
export async function threshold(src: GpuImage, opts?: ThresholdOptions): Promise<ThresholdResult<GpuImage>>;
export async function threshold(src: Image | GpuImage, opts: ThresholdOptions = {}): Promise<ThresholdResult<Image | GpuImage>> {
  const t0 = now();
  const p = resolveParams<{ method: ThresholdMethod; hist: HistogramMethod }>('threshold', thresholdParams, { method: opts.method, hist: opts.hist });
  let img: Image | GpuImage = src;
  if (!(src instanceof GpuImage)) {
    validateImage(src);
    img = toGray(src);
  } else if (src.channels !== 1) {
    throw new UnsupportedDtypeError('threshold of a GpuImage needs one gray channel; convert with toGray() before upload');
  }
  requireDtype(img, ['uint8', 'uint16'], 'threshold');
  const maxv = img.dtype === 'uint8' ? 255 : 65535;
  const gpu = src instanceof GpuImage ? src.ctx : opts.gpu;

  // 8-bit Otsu runs entirely on the device. For 16-bit, 65536 bins make σ so flat that f32 picks a different
  // bin than OpenCV's double arithmetic (measured: 24970 vs 24962 on uniform noise), so the threshold is taken
  // on the host, in double, from the device histogram (256 KiB read back).
  if (p.method === 'otsu' && gpu && img.dtype === 'uint8') {
    let tBuf: GPUBuffer | undefined;
    const r = (await runGpu(gpu, img, 'threshold.otsu', opts, async (input, rec) => {
      const res = await otsuGpu(input, rec, p.hist);
      tBuf = res.threshold;
      return res.image;
    })) as OpResult<Image | GpuImage>;
    const td = now();
    const t = (await download(gpu, tBuf!, new Uint32Array(1)))[0];
    gpu.buffers.release(tBuf);
    r.timings.download += now() - td;
    return { ...r, timings: closeTimings(r.timings, t0), threshold: t };
  }

  // Histogram (CPU or GPU), threshold from it on the host, then binarize through a LUT where the data is.
  const h = await histogram(img, { gpu, pool: opts.pool, method: p.hist, profile: opts.profile });
  const t = p.method === 'otsu' ? otsuThreshold(h.output) : isodataThreshold(h.output);
  if (t === undefined) throw new UnsupportedDtypeError('isodata: no threshold satisfies the isodata criterion for this image');
  const lut = binaryLut(h.output.length, t, maxv);
  if (gpu) {
    const b = await applyLut(img, lut, { gpu, profile: opts.profile });
    return { output: b.output, timings: closeTimings(addTimings(h.timings, b.timings), t0), threshold: t };
  }
  const tk = now();
  const output = await applyLutCpu(img as Image, lut, opts.pool ?? inlinePool);
  const kernels = [...h.timings.kernels, { name: 'binarize', ms: now() - tk }];
  return { output, threshold: t, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels, kernelSource: 'cpu', total: now() - t0 }) };
}
