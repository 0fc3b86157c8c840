// --jpeg gpu|cpu|auto: where a JPEG input's decoding arithmetic runs when the command runs on the GPU (node/jpeg-gpu.ts),
// and what the CLI reports of it. The pixels are the same on either path (both equal cv2.imread's).
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { InvalidArgumentError } from '../core/errors.js';
import { replicatedGpu } from '../core/gpu/colour.js';
import type { GpuContext } from '../core/gpu/context.js';
import type { DeviceResult } from '../core/gpu/run.js';
import type { OpResult } from '../core/timings.js';
import { jpegCoefDecoder, jpegCoefProblem } from '../io/jpeg-coef.js';
import type { ReadOptions } from '../io/index.js';
import { checkFailOn, exifOrientation, isJpeg, nativeJpeg, type FailOn } from '../io/jpeg.js';
import { readFileInto } from '../node/codec-pool.js';
import { traced } from '../node/trace.js';
import { defaultDecodeEntropy } from '../node/jpeg-gpu-decode.js';
import { defaultEntropy, nativeCoefEncoder, nativeCoefEncoderProblem, type JpegEntropyPath } from '../node/jpeg-encode-gpu.js';
import { stderrNotes, type NoteSink } from './notes.js';
import { JPEG_PATHS, readJpegToGpu, resolveJpegPath, type HostBuffers, type JpegOnGpu, type JpegPath, type JpegPathOption } from '../node/jpeg-gpu.js';

export const JPEG_HELP = `  --jpeg <gpu|cpu|auto>           where a JPEG input is decoded when the command runs on the GPU: gpu (entropy decoding
                                  on a CPU thread, IDCT, upsampling and colour in GPU kernels), cpu (libjpeg-turbo whole),
                                  auto (default: gpu on a hardware GPU, cpu on a software one); the same pixels either way`;

/** The --jpeg flag's value (default auto); an InvalidArgumentError (exit 2) for another. */
export function jpegOption(flags: Map<string, string>): JpegPathOption {
  const v = flags.get('jpeg') ?? 'auto';
  if (!(JPEG_PATHS as readonly string[]).includes(v)) throw new InvalidArgumentError(`--jpeg must be one of ${JPEG_PATHS.join('|')}, got '${v}'`);
  return v as JpegPathOption;
}

export const FAIL_ON_HELP = `  --fail-on <none|truncated|error|warning>  a damaged JPEG: decoded as cv2.imread decodes it, libjpeg's warnings said
                                  (none), refused if it ends early (truncated, error), refused on any warning (warning,
                                  the default); exit 3 when refused`;

/** The --fail-on flag's value (default warning: any libjpeg warning refuses the file); exit 2 for another. */
export const failOnOption = (flags: Map<string, string>): FailOn => checkFailOn(flags.get('fail-on') ?? 'warning');

/** Whether a path names a JPEG by its extension (what readImage decodes through the JPEG codec). */
export const isJpegName = (path: string): boolean => ['.jpg', '.jpeg'].includes(extname(path).toLowerCase());

/**
 * Says why work of --jpeg gpu ran on the CPU, once per reason (`key`): to `say` (a batch's note events), or on
 * stderr once in the process.
 */
function noteOnce(say: NoteSink, key: string, why = key, outcome = 'decoded on the CPU (the same pixels)'): void {
  say({ code: 'IMGPU_JPEG_GPU_FALLBACK', key, text: `note: --jpeg gpu: ${why}; ${outcome}` });
}

/**
 * Whether a GPU batch's JPEG outputs can be encoded on the GPU (--jpeg gpu): the encoder's entropy coder is here.
 * Where it is not (a platform without imgpu's native pieces), says so once: the outputs are then encoded on the CPU,
 * by the codec the CPU path uses — never a failed image.
 */
export function gpuJpegEncoderHere(say: NoteSink = stderrNotes): boolean {
  if (nativeCoefEncoder()) return true;
  noteOnce(say, 'encoder', `the GPU JPEG encoder's entropy coder is not available (${nativeCoefEncoderProblem()})`, 'JPEG outputs encoded on the CPU');
  return false;
}

/**
 * A JPEG input decoded straight to the GPU on the --jpeg path (resolved), or undefined where the input is not a JPEG
 * or the path is the CPU's (the input is then read and uploaded as before). Commands that take colour (`colour`:
 * clahe, gamma) get it decoded in colour, resident like gray (the operations convert it on the device by their colour
 * rule). A fallback to the CPU is said once (to `say`). `host`: a
 * batch's recycled memory for the coefficients (node/jpeg-gpu-decode.ts HostBuffers).
 */
export async function jpegInputOnGpu(
  ctx: GpuContext, path: string, read: Pick<ReadOptions, 'gray' | 'colour'>, opt: JpegPathOption, host?: HostBuffers, failOn?: FailOn, say: NoteSink = stderrNotes,
): Promise<JpegOnGpu | undefined> {
  if (resolveJpegPath(opt, ctx) !== 'gpu' || !isJpegName(path)) return undefined;
  // The file in the batch's recycled memory too (readFileInto says why), given back once decoded.
  const buf = await traced('file-read', path, () => (host ? readFileInto(path, host) : readFile(path)));
  try {
    if (!isJpeg(buf)) return undefined;
    const r = await readJpegToGpu(ctx, buf, path, !!read.gray, { jpeg: opt, async: true, host, failOn });
    // A gray photo as cv2.imread(IMREAD_COLOR) gives it, where the operation takes colour (ReadOptions.colour).
    if (r && read.colour && !read.gray && r.image.channels === 1) r.image = await replicatedGpu(r.image, 3);
    if (r?.fallback) noteOnce(say, r.fallback, `${path}: ${r.fallback}`);
    else if (!r && exifOrientation(buf) !== 1) noteOnce(say, 'EXIF orientation', `${path}: an EXIF orientation (applied on the host)`);
    return r;
  } finally {
    host?.give(buf.buffer);
  }
}

/** The JPEG path that decoded an input for the reports: undefined for an input that is not a JPEG. */
export function jpegPathOf(path: string, onGpu: JpegOnGpu | undefined): JpegPath | undefined {
  return onGpu?.jpeg ?? (isJpegName(path) ? 'cpu' : undefined);
}

/** A result whose output stayed on the GPU (the input was resident) with its output downloaded, as a host input gives it. */
export async function downloaded<T>(r: OpResult<T>): Promise<OpResult<T>> {
  const out = r.output as Partial<DeviceResult<T>>;
  if (typeof out?.toHost !== 'function' || typeof out.release !== 'function') return r;
  const output = await out.toHost();
  out.release();
  return { ...r, output };
}

/**
 * For `imgpu info`: the path --jpeg auto takes, and whether each path's native piece is here (or why not): the GPU
 * decoder's entropy stage (`gpu`), the CPU codec (`cpu`), the GPU encoder's entropy coder (`gpuEncode`), and where the
 * GPU encoder's entropy coding runs (`gpuEncodeEntropy`: IMGPU_JPEG_ENTROPY, else 'gpu'), and the GPU decoder's Huffman
 * decoding (`gpuDecodeEntropy`: IMGPU_JPEG_DECODE_ENTROPY, else 'gpu'; files it does not cover take the CPU's).
 */
export function jpegInfo(ctx?: GpuContext): { auto: JpegPath; gpu: string; cpu: string; gpuEncode: string; gpuEncodeEntropy: JpegEntropyPath; gpuDecodeEntropy: JpegEntropyPath } {
  return {
    auto: resolveJpegPath('auto', ctx),
    gpu: jpegCoefDecoder() ? 'available' : `unavailable: ${jpegCoefProblem()}`,
    cpu: nativeJpeg() ? 'available (libjpeg-turbo)' : 'unavailable: JPEG goes through sharp',
    gpuEncode: nativeCoefEncoder() ? 'available' : `unavailable: ${nativeCoefEncoderProblem()}`,
    gpuEncodeEntropy: defaultEntropy(),
    gpuDecodeEntropy: defaultDecodeEntropy(),
  };
}
