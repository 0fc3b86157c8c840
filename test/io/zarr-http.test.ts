import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FileAccessError, InvalidArgumentError, UnsupportedFormatError } from '../../src/core/errors.js';
import type { Image } from '../../src/core/image.js';
import { openZarrUrl } from '../../src/io/zarr-http.js';
import { openOmeZarr, readPlanes } from '../../src/io/zarr.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

/**
 * A folder served over HTTP, each response held back until `release` (so that how many chunk reads are in flight
 * at once can be counted), a chunk key answered 500 when asked for.
 */
async function serve(dir: string, failing = '') {
  let inFlight = 0, most = 0;
  const log: string[] = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    log.push(path);
    inFlight++;
    most = Math.max(most, inFlight);
    // Answered on a later turn, so that every read zarrita lets start is in flight before the first one ends.
    setTimeout(() => {
      inFlight--;
      if (path === failing) { res.writeHead(500).end(); return; }
      let body: Buffer | undefined;
      try { body = readFileSync(join(dir, path)); } catch { body = undefined; }
      if (body) res.writeHead(200).end(body);
      else res.writeHead(404).end();
    }, 20);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, log, most: () => most, reset: () => { most = 0; log.length = 0; }, close: () => server.close() };
}

/** Voxels [z0, z1) × [y0, y1) × [x0, x1) of a [z, y, x] image. */
function crop(img: Image, [z0, z1]: number[], [y0, y1]: number[], [x0, x1]: number[]): number[] {
  const [, h, w] = img.shape as number[];
  const out: number[] = [];
  for (let z = z0; z < z1; z++) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) out.push(img.data[(z * h + y) * w + x]);
  return out;
}

/**
 * openZarrUrl (io/zarr-http.ts) in Node over a local server: a region of any level equals Node's reading of the
 * store from disk, with the region's geometry; at most `concurrency` chunk reads in flight; typed errors.
 */
test('openZarrUrl: regions of every level equal the filesystem reading, their geometry the region\'s; chunk reads bounded; typed errors', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-zarr-http-'));
  const r = cli('convert', fixture('volumes', 'anatomical.nii'), join(dir, 'a.zarr'), '--levels', '2', '--chunks', '4');
  assert.equal(r.status, 0, r.stderr);
  const srv = await serve(dir, '/a.zarr/1/0/0/0');
  try {
    const node = await openOmeZarr(join(dir, 'a.zarr'));
    const vol = await openZarrUrl(`${srv.url}a.zarr`, { concurrency: 3 });
    assert.deepEqual([vol.dtype, vol.ome, vol.geometry], [node.dtype, node.ome, node.geometry]);

    await t.test('a region straddling chunks is the disk\'s voxels; its geometry puts voxel 0 where the level\'s grid has it', async () => {
      const l0 = await readPlanes(node.levels[0], node.dtype, 0, node.levels[0].shape[0]);
      const region = { z: [3, 10], y: [5, 18], x: [30, 33] } as { z: [number, number]; y: [number, number]; x: [number, number] };
      srv.reset();
      const img = await vol.readRegion(0, region);
      assert.deepEqual(img.shape, [7, 13, 3]);
      assert.deepEqual(Array.from(img.data), crop(l0, region.z, region.y, region.x));
      // 3 × 4 × 2 chunks of 4³ cross it (z 3–9: chunks 0–2; y 5–17: 1–4; x 30–32: 7–8): 24 reads, at most 3 at once
      // (zarrita's own queue starts all 24 together).
      assert.equal(srv.log.length, 24);
      assert.ok(srv.most() <= 3, `at most \`concurrency\` chunk reads in flight, not ${srv.most()}`);
      const g = node.geometry!;
      const at = [30, 5, 3].map((v, a) => v * g.spacing[a]);
      const expectOrigin = [0, 1, 2].map((row) => g.origin[row] + g.direction[3 * row] * at[0] + g.direction[3 * row + 1] * at[1] + g.direction[3 * row + 2] * at[2]);
      assert.deepEqual(img.geometry, { spacing: g.spacing, origin: expectOrigin, direction: g.direction });
    });

    await t.test('level 1: the disk\'s voxels; voxel (0, 0, 0) centred on the 2×2×2 block it averages', async () => {
      const l1 = await readPlanes(node.levels[1], node.dtype, 0, node.levels[1].shape[0]);
      const [d, h, w] = node.levels[1].shape;
      const img = await vol.readRegion(1, { z: [0, d], y: [4, h], x: [4, w] });
      assert.deepEqual(Array.from(img.data), crop(l1, [0, d], [4, h], [4, w]));
      const g = node.geometry!;
      assert.deepEqual(img.geometry!.spacing, g.spacing.map((s) => 2 * s));
      // Level-1 voxel (4, 4, 0) (x, y, z) is centred at level-0 index (8.5, 8.5, 0.5).
      const at = [8.5, 8.5, 0.5].map((v, a) => v * g.spacing[a]);
      assert.deepEqual(img.geometry!.origin, [0, 1, 2].map((row) => g.origin[row] + g.direction[3 * row] * at[0] + g.direction[3 * row + 1] * at[1] + g.direction[3 * row + 2] * at[2]));
    });

    await t.test('bad regions and levels are refused before any fetch; a chunk answered 500 is a FileAccessError naming the URL', async () => {
      srv.reset();
      for (const [level, region, re] of [
        [2, { z: [0, 1], y: [0, 1], x: [0, 1] }, /^level must be an integer 0–1, got 2$/],
        [0, { z: [0, 26], y: [0, 1], x: [0, 1] }, /^region z \[0, 26\) is not a non-empty range inside level 0's 0–25$/],
        [0, { z: [0, 1], y: [3, 3], x: [0, 1] }, /^region y \[3, 3\) is not a non-empty range/],
        [0, { z: [0, 1], y: [0, 1], x: [-1, 1] }, /^region x \[-1, 1\) is not/],
      ] as const) {
        await assert.rejects(vol.readRegion(level, region as never), (e: Error) => e instanceof InvalidArgumentError && re.test(e.message));
      }
      assert.equal(srv.log.length, 0);
      await assert.rejects(vol.readRegion(1, { z: [0, 1], y: [0, 1], x: [0, 1] }), (e: Error) => e instanceof FileAccessError && e.message.startsWith(`${srv.url}a.zarr: chunks of level 1 cannot be fetched (`));
    });

    await t.test('a URL with no Zarr is an UnsupportedFormatError naming it; a bad concurrency an InvalidArgumentError', async () => {
      await assert.rejects(openZarrUrl(`${srv.url}none.zarr`), (e: Error) => e instanceof UnsupportedFormatError && e.message.startsWith(`${srv.url}none.zarr is not a Zarr store (`));
      await assert.rejects(openZarrUrl(`${srv.url}a.zarr`, { concurrency: 0 }), InvalidArgumentError);
    });
  } finally {
    srv.close();
  }
});
