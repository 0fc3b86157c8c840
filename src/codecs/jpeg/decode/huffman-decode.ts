// Huffman decoding on the GPU (issue 20's stretch goal): the CPU only copies the entropy-coded bytes without their
// stuffing (native/coef-decode.c capture_scan, a memchr-paced copy), and the GPU decodes them in parallel —
// self-synchronising subsequences (decode/huffman.wgsl.ts huff_sync), a prefix sum of their tallies (blocks, DC
// differences), and a write pass that puts each coefficient in the plain form the IDCT reads. The coefficients are
// exactly libjpeg's for every file it covers; a file whose decode does not come out exact (a damaged one, or
// synchronisation not reached in SYNC_PASSES) says so in a status word, and is decoded again with the CPU's entropy
// stage, which reports damage as libjpeg does.
import { alignUp, type GpuContext } from '../../../core/gpu/context.js';
import { grid1d } from '../../../core/gpu/dispatch.js';
import { maxBinding } from '../../../core/gpu/limits.js';
import type { Recording } from '../../../core/gpu/recording.js';
import { acquireStorage, deviceBytes, downloadAfter } from '../../../core/gpu/transfer.js';
import type { CoefLayout } from './coef-layout.js';
import {
  EntropyParams, SCAN_DATA, SCAN_INFO_W, STATUS_CHANGED, STATUS_ERROR, STATUS_WORDS, SUBSEQ_BITS, SYNC_PASSES, SYNC_WG, WRITE_WG,
  entropyScanWgsl, entropySyncWgsl, entropyWriteWgsl,
} from './huffman.wgsl.js';

/** The bytes the scan form of a `fileBytes`-byte JPEG needs at most (native/coef-decode.c capture_scan). */
export const scanFormBytes = (fileBytes: number): number => SCAN_DATA + alignUp(fileBytes + 16, 4);

/** Whether the scan form of a file and the plain coefficients it decodes to each fit one binding. */
export function scanFits(ctx: GpuContext, l: CoefLayout, fileBytes: number): boolean {
  const limit = maxBinding(ctx);
  return scanFormBytes(fileBytes) <= limit && l.bytes <= limit && fileBytes * 8 < 2 ** 31;
}

/** The geometry the native stage wrote into the scan form's info words. */
export interface ScanInfo {
  bits: number;
  blocks: number;
}

/** Reads the info words of a scan form in host memory (before its upload). */
export function scanInfo(form: Uint8Array): ScanInfo {
  const info = new Uint32Array(form.buffer, form.byteOffset + SCAN_INFO_W * 4, 8);
  return { bits: info[0], blocks: info[4] };
}

/** The kernels, compiled once per context. */
export class JpegEntropyPlan {
  private constructor(
    private readonly ctx: GpuContext,
    private readonly sync: GPUComputePipeline,
    private readonly scan: GPUComputePipeline,
    private readonly write: GPUComputePipeline,
  ) {}

  static prepare(ctx: GpuContext): Promise<JpegEntropyPlan> {
    return ctx.plan('jpeg-entropy-decode', async () => {
      const [sync, scan, write] = await Promise.all([
        ctx.pipeline('jpeg-huff-sync', entropySyncWgsl(), 'huff_sync'),
        ctx.pipeline('jpeg-huff-scan', entropyScanWgsl(), 'tally_scan'),
        ctx.pipeline('jpeg-huff-write', entropyWriteWgsl(), 'huff_write'),
      ]);
      return new JpegEntropyPlan(ctx, sync, scan, write);
    });
  }

  /**
   * Records the decoding of the scan form in `form` (uploaded; `info` read from it on the host) into a new plain
   * coefficient buffer of layout `l` (quantization tables included), and returns it with the status buffer (the
   * caller's to release once read: `decodeOk`).
   */
  record(rec: Recording, l: CoefLayout, form: GPUBuffer, info: ScanInfo): { plain: GPUBuffer; status: GPUBuffer } {
    const ctx = this.ctx;
    const n = Math.ceil(info.bits / SUBSEQ_BITS);
    const groups = Math.ceil(n / SYNC_WG);
    const plain = rec.storage(deviceBytes(l.bytes), 'jpeg coefficients');
    rec.clear(plain, deviceBytes(l.bytes));
    rec.copyRange(form, 0, plain, 0, 256 * l.components.length);
    const status = acquireStorage(ctx, STATUS_WORDS * 4, 'jpeg entropy status');
    rec.clear(status, STATUS_WORDS * 4);
    const states = rec.storage(n * 8, 'jpeg entropy states');
    const counts = rec.storage(n * 16, 'jpeg entropy tallies');
    const sync = rec.storage(groups * 3 * 8, 'jpeg entropy sync');
    const params = { n, bits: info.bits, lastWord: Math.ceil(info.bits / 32) + 2, blocks: info.blocks, groups };
    for (let pass = 0; pass < SYNC_PASSES; pass++) {
      const [x, y] = grid1d(ctx, groups);
      rec.dispatch('jpeg.huff-sync', this.sync, { scan: form, states, counts, sync, status, P: rec.uniform(EntropyParams, { ...params, round: pass }) }, x, y);
    }
    const P = rec.uniform(EntropyParams, { ...params, round: 0 });
    rec.dispatch('jpeg.huff-scan', this.scan, { counts, P }, 1);
    const [wx, wy] = grid1d(ctx, Math.ceil(n / WRITE_WG));
    rec.dispatch('jpeg.huff-write', this.write, { scan: form, states, starts: counts, coefs: plain, status, P }, wx, wy);
    return { plain, status };
  }
}

/**
 * Whether a decode recorded in `rec` came out exact: no error bit from the write pass and no change in the last
 * synchronisation pass. The status's readback is recorded after the kernels in the same recording (no submission
 * of its own, downloadAfter), and the status goes back to the pool with the recording's scratch; resolves once
 * `rec` is submitted and its work has run.
 */
export function decodeOk(rec: Recording, status: GPUBuffer): Promise<boolean> {
  rec.retain(status);
  const exact = downloadAfter(rec, status, STATUS_WORDS * 4).then((view) => {
    const words = new Uint32Array(view.bytes, 0, STATUS_WORDS).slice();
    view.release();
    return words[STATUS_ERROR] === 0 && words[STATUS_CHANGED + SYNC_PASSES - 1] === 0;
  });
  // Awaited only where the decode was recorded and submitted without error: a failure after that is the decode's.
  exact.catch(() => undefined);
  return exact;
}
