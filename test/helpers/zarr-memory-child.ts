import type { Image } from '../../src/core/image.js';
import { runChunked } from '../../src/io/chunked.js';
import { openOmeZarr } from '../../src/io/zarr.js';
import { ZarrChunkPool } from '../../src/io/zarr-pool.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { filter } from '../../src/ops/convolve/index.js';

/**
 * A chunked filter in a process of its own, for test/io/zarr.test.ts's memory bound: argv in.zarr out.zarr
 * budget-bytes spec [chunk-threads, default 2]. Prints one JSON line: the resident memory before the run (modules
 * loaded, the CPU pool's threads started by a small filter, the chunk threads started with zarrita loaded; their
 * own start-up is `threadsStarted`, measured apart) and the peak resident memory of the process (getrusage's maxrss)
 * after it.
 */
const [inPath, outPath, budget, spec, threads = '2'] = process.argv.slice(2);
const pool = new NodeWorkerPool(2);
const warm: Image = { data: new Uint16Array(16 * 16 * 16), shape: [16, 16, 16], channels: 1, dtype: 'uint16' };
await filter(warm, spec, { pool });
const chunkPool = Number(threads) > 0 ? new ZarrChunkPool(Number(threads)) : undefined;
const unstarted = process.memoryUsage().rss;
await chunkPool?.start();
const before = process.memoryUsage().rss;
const src = await openOmeZarr(inPath);
const params = { filter: spec };
const reach = filter.op.reach(params, { shape: src.levels[0].shape, dtype: src.dtype });
const report = await runChunked(inPath, outPath, async (slab) => (await filter.op.run(slab, params, { pool })).output as Image, reach, 'float32', { memory: Number(budget), recipe: 'memory test', collect: () => pool.collect(), chunkPool, chunkThreads: chunkPool ? undefined : 0 });
const peak = process.resourceUsage().maxRSS * 1024;
await pool.close();
await chunkPool?.close();
console.log(JSON.stringify({ before, peak, report, threadsStarted: before - unstarted }));
