import { resolve } from 'node:path';
import { Queue } from 'bullmq';
import { InvalidArgumentError } from '../../core/errors.js';
import { checkWriteOptions, type WriteOptions } from '../../io/index.js';
import { parsePipeline } from '../../ops/pipeline.js';
import { parseArgs, rejectUnknown } from '../args.js';
import { COMMANDS } from '../commands.js';
import { EXIT_OK } from '../exit.js';
import { batchFormat, batchRecipe, noImages, plan, prepareOutputFolder, type BatchOptions } from '../batch/plan.js';
import { batchKey, checkServer, parseRedisUrl, queueName, redisConnection } from './connection.js';
import { batchId, DEFAULT_SHARD, jobId, shardImages, type ScaleJobData } from './jobs.js';

export const SUBMIT_HELP = `imgpu submit <inputs…|folder> <out-folder> "<pipeline>" --redis URL [options]
  Enqueues a batch on a Redis queue for \`imgpu worker\` processes (any machine that sees the same paths) and returns
  at once with its id. A job is a shard of images (one volume alone); its id derives from the inputs (path, size,
  modification time), the pipeline, its parameters and the output folder, so submitting the same batch again
  enqueues nothing that is done, queued or failed ("jobs": 0; \`imgpu retry\` re-queues failed jobs).
  --redis <url>        redis://[user:password@]host[:port][/db] or unix:///path/redis.sock
  --queue <name>       queue name (default imgpu)
  --shard <n>          images per job (default ${DEFAULT_SHARD})
  --recursive          include sub-folders (their layout is kept under <out-folder>)
  --format <ext>       output format (default: the input's); --compression <0-9>, --quality <1-100> as for a batch
  --json               {"batch", "jobs", "images", "total_jobs", "total_images", "queue"} on stdout
  Exit 2 bad arguments, 3 no inputs or an output folder that cannot be made, 7 Redis unreachable.`;

/** Jobs added to the queue per transaction. */
const ADD_SLICE = 500;

/** `imgpu submit`: the batch planned as local batch mode plans it, split into jobs, the new ones enqueued. */
export async function submitCommand(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, new Set(['json', 'recursive', 'help']));
  if (flags.has('help')) {
    console.log(SUBMIT_HELP);
    return EXIT_OK;
  }
  rejectUnknown(flags, ['redis', 'queue', 'shard', 'json', 'recursive', 'format', 'compression', 'quality', 'help']);
  if (positional.length < 3) throw new InvalidArgumentError(`imgpu submit needs <inputs…|folder> <out-folder> "<pipeline>" (got ${positional.length} arguments)`);
  const pipeline = positional[positional.length - 1];
  // Absolute paths: the workers may run elsewhere, on storage mounted at the same place.
  const outDir = resolve(positional[positional.length - 2]);
  const inputs = positional.slice(0, -2).map((p) => resolve(p));
  const server = parseRedisUrl(flags.get('redis'));
  const queue = queueName(flags.get('queue'));
  const shard = Number(flags.get('shard') ?? DEFAULT_SHARD);
  if (!Number.isInteger(shard) || shard < 1 || shard > 100_000) throw new InvalidArgumentError(`--shard must be an integer 1–100000, got ${flags.get('shard')}`);
  // The pipeline is checked (and the files it names read) here, not by the first worker to take a job.
  const steps = parsePipeline(pipeline);
  await COMMANDS.pipeline.prepare!({ chain: pipeline });
  const num = (f: string) => (flags.has(f) ? Number(flags.get(f)) : undefined);
  const write: WriteOptions = { compression: num('compression'), quality: num('quality') };
  checkWriteOptions(write);
  const codec = { format: batchFormat(flags.get('format')), read: {}, write };
  // The recipe of the resolved steps (defaults included): "clahe|otsu" and "clahe --clip 2 | otsu" are one recipe.
  const o: BatchOptions = { recursive: flags.has('recursive'), overwrite: false, quiet: true, json: flags.has('json'), ...codec, recipe: batchRecipe('pipeline', { steps }, codec) };
  await checkServer(server);
  const images = await plan(inputs, outDir, o);
  if (images.length === 0) throw noImages(inputs, o);
  await prepareOutputFolder(outDir);
  const shards = shardImages(images, shard);
  const ids = shards.map((s) => jobId(s, o.recipe));
  const batch = batchId(ids);
  const connection = redisConnection(server);
  const q = new Queue<ScaleJobData>(queue, { connection });
  try {
    // Work already on the queue — waiting, running, done or failed — is not enqueued again.
    const states = await Promise.all(ids.map((id) => q.getJobState(id)));
    const fresh = shards.map((s, i) => ({ images: s, id: ids[i] })).filter((_, i) => states[i] === 'unknown');
    // In slices: addBulk is one transaction, and a million photos are ~250 MB of job data.
    for (let i = 0; i < fresh.length; i += ADD_SLICE) {
      await q.addBulk(fresh.slice(i, i + ADD_SLICE).map((f) => ({
        name: 'pipeline', data: { batch, pipeline, write, outDir, images: f.images },
        // Results stay (status counts from them; a job id kept is what makes a second submit enqueue nothing).
        opts: { jobId: f.id, removeOnComplete: false, removeOnFail: false },
      })));
    }
    await connection.hset(batchKey(queue, batch), { jobs: JSON.stringify(ids), images: images.length, pipeline, outDir, submitted: Date.now() });
    const freshImages = fresh.reduce((a, f) => a + f.images.length, 0);
    if (o.json) console.log(JSON.stringify({ batch, jobs: fresh.length, images: freshImages, total_jobs: ids.length, total_images: images.length, queue }));
    else console.log(`batch ${batch}: ${fresh.length} jobs (${freshImages} images) enqueued on queue ${queue}${fresh.length < ids.length ? `; ${ids.length - fresh.length} of its ${ids.length} jobs were already queued, done or failed` : ''}`);
    return EXIT_OK;
  } finally {
    await q.close();
    await connection.quit();
  }
}
