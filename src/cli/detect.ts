import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { FileAccessError, InvalidArgumentError } from '../core/errors.js';
import { toGray, type Image } from '../core/image.js';
import { paramHelp, resolveParams, type ParamSpec, type ResolvedOf } from '../core/params.js';
import { now, type OpResult, type Timings } from '../core/timings.js';
import { checkFolderWritable, checkWritable, formatOf, readImage, writeAtomically, writeImage, type FailOn } from '../io/index.js';
import { readClassifier, waldBoostXml } from '../io/classifier.js';
import { loadFileParams } from '../io/params.js';
import { isVideoPath, VideoReader, VideoWriter } from '../io/video.js';
import { annotate, pyramidMontage } from '../ops/detect/annotate.js';
import { detectionJson, detectorParams, detectParams, Detector, resizeLinearExact, sameHits, type Classifier, type DetectOutput } from '../ops/detect/index.js';
import { listNodeAdapters } from '../node/gpu.js';
import { DEVICE_FLAGS, flagNames, paramFlags, parseArgs, rejectUnknown, RUN_BOOLEANS, RUN_FLAGS } from './args.js';
import { EXIT_DISAGREE, EXIT_OK, exitCodeOf } from '../engine/exit.js';
import { folderJobs } from '../engine/batch/plan.js';
import { eachImage, FileImages, VideoFrames, type FrameJob, type LoopJob } from '../engine/batch/loop.js';
import { Progress } from '../engine/batch/report.js';
import { CodecPool } from '../node/codec-pool.js';
import { acquire, type Execution } from '../engine/context.js';
import { formatTimings } from '../core/timings.js';
import { FAIL_ON_HELP, failOnOption } from '../engine/jpeg.js';

/** Options of `imgpu detect` besides the detector's own parameters (flags in kebab case, as every parameter's). */
const RUN_PARAMS = [
  { name: 'output', kind: 'string', doc: 'write results: .jsonl/.json (detections, a JSON line per image or frame), an image (.png/.jpg: the input with boxes), a video (.mp4/.mkv/.avi: annotated) or frames (out/%05d.png)' },
  { name: 'profile', kind: 'string', doc: 'write per-image/per-frame timings (each kernel, upload, readback, decode) as JSON lines to FILE' },
  { name: 'showPyramid', kind: 'string', doc: 'write the pyramid levels of the (first) image side by side as a PNG' },
  { name: 'startFrame', kind: 'int', min: 0, default: 0, doc: 'video: first frame to detect on (earlier frames are decoded and skipped)' },
  { name: 'maxFrames', kind: 'int', min: 1, doc: 'video: stop after this many frames' },
  { name: 'recursive', kind: 'bool', doc: 'folders: include sub-folders (as batch mode)' },
  { name: 'timeout', kind: 'float', min: 0, doc: 'stop after S seconds (video, folders); what was done is reported' },
  { name: 'countDiscarded', kind: 'bool', doc: 'report candidates each reduction kernel dropped for want of room (0 = exact; a frame that drops any is redone with larger lists)' },
  { name: 'verbose', kind: 'bool', doc: 'print levels, the reduction schedule and survivors per kernel' },
] as const satisfies readonly ParamSpec[];
const BOOLEANS = new Set([...RUN_BOOLEANS, ...flagNames(RUN_PARAMS.filter((p) => p.kind === 'bool'))]);

const USAGE = `imgpu detect <image|video|folder|frames/%04d.png> --classifier FILE.xml [options]
  Objects (faces, …) found by an OpenCV LBP cascade or a WaldBoost classifier on multi-block LBP features: the same
  windows as cv2.CascadeClassifier.detectMultiScale (bit-exact pyramid, OpenCV's scan), grouped as groupRectangles.
${paramHelp(detectParams)}
${paramHelp(RUN_PARAMS)}
  --device <auto|cpu|gpu|both>    auto: the GPU unless there is none or only a software one (then the CPU, said once);
                                  both: run the CPU reference too and check the raw windows agree (exit 8 if not)
  --adapter <name> --backend <vulkan|opengles> --threads <n> --repeat <n> (time the last of n runs)
${FAIL_ON_HELP} (images; not video frames)
  --json                          a JSON line per image or frame, then a summary line
  --quiet                         no progress on stderr
Exit codes: 0 done, 2 bad arguments, 3 unreadable/unwritable file or video, 4 no GPU adapter, 8 CPU and GPU disagree,
9 some images of a folder could not be read (each is reported; the others are processed).`;

interface Ctx {
  exec: Execution;
  cpu?: Detector;
  gpu?: Detector;
  json: boolean;
  verbose: boolean;
  countDropped: boolean;
  profile: string[];
  jsonl: string[];
}

function timingJson(t: Timings) {
  const r = (v: number) => Number(v.toFixed(3));
  return { total: r(t.total), host: r(t.host), upload: r(t.upload), download: r(t.download), kernels: t.kernels.map((k) => ({ name: k.name, ms: r(k.ms) })), kernelSource: t.kernelSource };
}

/** The output of record (the GPU's, else the CPU's) and whether CPU and GPU agree, when both ran. */
function outcome(cpu?: OpResult<DetectOutput>, gpu?: OpResult<DetectOutput>) {
  return { main: (gpu ?? cpu)!, cpu, gpu, agree: cpu && gpu ? sameHits(cpu.output, gpu.output) : undefined };
}

/** Runs the detectors on one image or frame. */
async function detectOne(c: Ctx, img: Image, repeat: number) {
  let cpu, gpu;
  for (let r = 0; r < repeat; r++) {
    if (c.cpu) cpu = await c.cpu.runCpu(img);
    if (c.gpu) gpu = await c.gpu.runGpu(img, c.exec.gpu!);
  }
  return outcome(cpu, gpu);
}

type One = Awaited<ReturnType<typeof detectOne>>;

function report(c: Ctx, name: string, frame: number | undefined, img: Image, r: One, extra: Record<string, unknown> = {}): void {
  const o = r.main.output;
  const g = r.gpu?.output.gpu;
  const line = {
    ...(frame !== undefined ? { frame } : { file: name }), width: img.shape[1], height: img.shape[0],
    detections: o.detections.map(detectionJson), windows: o.windows, accepted: o.hits.length,
    ...(r.agree !== undefined ? { identical: r.agree } : {}),
    ...(g && (c.countDropped || c.verbose) ? { survivors: g.survivors, discarded: g.dropped, rerun: g.rerun } : {}),
    ...extra,
  };
  c.jsonl.push(JSON.stringify(line));
  c.profile.push(JSON.stringify({ ...(frame !== undefined ? { frame } : { file: name }), cpu: r.cpu ? timingJson(r.cpu.timings) : null, gpu: r.gpu ? timingJson(r.gpu.timings) : null, ...extra }));
  if (c.json) {
    console.log(JSON.stringify({ ...line, cpu: r.cpu ? timingJson(r.cpu.timings) : null, gpu: r.gpu ? timingJson(r.gpu.timings) : null }));
    return;
  }
  if (frame !== undefined && !c.verbose) return;
  console.log(`${frame !== undefined ? `frame ${frame}` : name} (${img.shape[1]}×${img.shape[0]}): ${o.detections.length} detection${o.detections.length === 1 ? '' : 's'} from ${o.hits.length} accepted of ${o.windows} windows`);
  for (const d of o.detections) console.log(`  box x=${d.x} y=${d.y} ${d.width}×${d.height}  neighbors ${d.neighbors}  score ${d.score.toFixed(4)}`);
  if (r.cpu) console.log(formatTimings('cpu', r.cpu.timings) + ` [${c.exec.pool.size} threads]`);
  if (r.gpu) console.log(formatTimings('gpu', r.gpu.timings) + ` [${c.exec.gpu?.adapter.description || c.exec.gpu?.adapter.vendor}]`);
  if (g && (c.countDropped || c.verbose)) {
    console.log(`  reduction: weak classifiers per kernel end at ${g.schedule?.bounds.join(', ') ?? '(naive)'}; survivors ${g.survivors.join(' → ')}; discarded ${g.dropped.join(', ') || 0}${g.rerun ? ' (redone with larger lists)' : ''}`);
  }
  if (c.verbose) console.log(`  pyramid: ${o.levels.length} levels, ${o.levels.map((l) => `${l.width}×${l.height}`).join(' ')}`);
  if (r.agree !== undefined) console.log(`  CPU and GPU ${r.agree ? 'agree: the same accepted windows and sums' : 'DISAGREE'}`);
}

/** Where --output goes, checked before any work. */
async function outputKind(path: string | undefined, video: boolean): Promise<'jsonl' | 'image' | 'video' | undefined> {
  if (!path) return undefined;
  const ext = extname(path).toLowerCase();
  if (ext === '.jsonl' || ext === '.json' || ext === '.ndjson') {
    await checkFolderWritable(path);
    return 'jsonl';
  }
  if (video) {
    if (!path.includes('%') && !isVideoPath(path)) throw new InvalidArgumentError(`--output for a video: .jsonl, a video (.mp4, .mkv, .avi) or frames (out/%05d.png), got ${path}`);
    await checkFolderWritable(path);
    return 'video';
  }
  await checkWritable(path);
  return 'image';
}

async function showPyramid(path: string, det: Detector, img: Image): Promise<void> {
  const g = toGray(img);
  const [H, W] = g.shape as [number, number];
  const levels = det.levelsFor(W, H).map((l) => {
    const pixels = new Uint8Array(l.width * l.height);
    resizeLinearExact(g.data as Uint8Array, W, H, l.width, l.height, pixels);
    return { width: l.width, height: l.height, pixels };
  });
  if (levels.length) await writeImage(path, pyramidMontage(levels));
}

export async function detectCommand(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, BOOLEANS);
  if (flags.has('help')) {
    console.log(USAGE);
    return EXIT_OK;
  }
  rejectUnknown(flags, [...DEVICE_FLAGS, ...RUN_FLAGS, 'fail-on', ...flagNames(detectParams), ...flagNames(RUN_PARAMS)]);
  if (positional.length !== 1) throw new InvalidArgumentError(`imgpu detect needs one <image|video|folder> (got ${positional.length} arguments); see imgpu detect --help`);
  const input = positional[0];
  const run = resolveParams<ResolvedOf<typeof RUN_PARAMS>>('detect', RUN_PARAMS, paramFlags(RUN_PARAMS, flags));
  const opts = resolveParams<ResolvedOf<typeof detectorParams>>('detect', detectorParams, paramFlags(detectorParams, flags));
  const named = paramFlags(detectParams, flags);
  if (!named.classifier) throw new InvalidArgumentError('imgpu detect needs --classifier FILE.xml (e.g. /usr/share/opencv4/lbpcascades/lbpcascade_frontalface.xml)');
  const failOn = failOnOption(flags);
  const repeat = Number(flags.get('repeat') ?? 1);
  if (!Number.isInteger(repeat) || repeat < 1) throw new InvalidArgumentError('--repeat must be a positive integer');
  const classifier = (await loadFileParams(detectParams, named)).classifier as Classifier;
  const video = isVideoPath(input);
  const info = video ? undefined : await stat(input).catch(() => undefined);
  if (!video && !info) throw new FileAccessError(`no such file or folder: ${input}`);
  const kind = await outputKind(run.output, video);
  if (kind === 'image' && info?.isDirectory()) throw new InvalidArgumentError('--output for a folder: a .jsonl file');
  if (run.profile) await checkFolderWritable(run.profile);
  if (run.showPyramid) await checkWritable(run.showPyramid);
  const exec = await acquire(flags.get('device') ?? 'auto', flags);
  const c: Ctx = {
    exec, json: flags.has('json'), verbose: flags.has('verbose'), countDropped: run.countDiscarded === true, profile: [], jsonl: [],
    cpu: exec.cpu ? new Detector(classifier, { ...opts, pool: exec.pool }) : undefined,
    // Profiled, as the single-image commands are: the report and --profile list each kernel.
    gpu: exec.gpu ? new Detector(classifier, { ...opts, gpu: exec.gpu, pool: exec.pool, profile: true }) : undefined,
  };
  const deadline = run.timeout !== undefined ? now() + 1000 * run.timeout : Infinity;
  try {
    for (const w of exec.warnings) console.error(w);
    let code: number;
    if (video) code = await detectVideo(c, input, run, kind, deadline, flags.has('quiet'));
    else if (info!.isDirectory()) code = await detectFolder(c, input, run, repeat, deadline, flags.has('quiet'), failOn);
    else {
      const img = await readImage(input, { failOn });
      if (run.showPyramid) await showPyramid(run.showPyramid, (c.gpu ?? c.cpu)!, img);
      const r = await detectOne(c, img, repeat);
      report(c, input, undefined, img, r);
      if (kind === 'image') await writeImage(run.output!, annotate(img, r.main.output.detections));
      code = r.agree === false ? EXIT_DISAGREE : EXIT_OK;
    }
    if (kind === 'jsonl') await writeAtomically(run.output!, Buffer.from(c.jsonl.join('\n') + '\n'));
    if (run.profile) await writeAtomically(run.profile, Buffer.from(c.profile.join('\n') + '\n'));
    return code;
  } finally {
    c.cpu?.close();
    c.gpu?.close();
    await exec.close();
  }
}

/**
 * Detection on every image of a folder: the loop of every batch (batch/loop.ts: read ahead by the codec workers,
 * a file that fails reported and skipped, exit 9, progress), each image's detections reported as it is done.
 */
async function detectFolder(c: Ctx, dir: string, run: ResolvedOf<typeof RUN_PARAMS>, repeat: number, deadline: number, quiet: boolean, failOn: FailOn): Promise<number> {
  // DICOM files are left out: they hold volumes or 16-bit slices, not photographs.
  const jobs = await folderJobs(dir, run.recursive === true, (f) => formatOf(f) !== '.dcm');
  let disagree = 0;
  const step = async (job: LoopJob, img: Image) => {
    const r = await detectOne(c, img, repeat);
    return async () => {
      report(c, job.input, undefined, img, r);
      if (r.agree === false) disagree++;
    };
  };
  const codecs = new CodecPool();
  try {
    // One image at a time, reported in order (detection is the work: two images read ahead keep it fed).
    const progress = new Progress(jobs.length, { quiet: quiet || c.json, verb: 'detected' });
    const t = await eachImage(new FileImages(codecs, jobs, { gray: false, failOn }, 2), step, { depth: 1, window: 1, progress, onFailure: 'say', deadline });
    const done = t.processed + t.failed.length;
    if (done < jobs.length) console.error(`imgpu: --timeout reached after ${done} of ${jobs.length} images`);
    return exitCodeOf(disagree, t.failed.length);
  } finally {
    await codecs.close();
  }
}

/** Sums of per-frame phases for the video summary. */
class PhaseTotals {
  frames = 0;
  decode = 0;
  upload = 0;
  readback = 0;
  host = 0;
  total = 0;
  kernels = new Map<string, number>();
  add(t: Timings, decode: number): void {
    this.frames++;
    this.decode += decode;
    this.upload += t.upload;
    this.readback += t.download;
    this.host += t.host;
    this.total += t.total + decode;
    for (const k of t.kernels) this.kernels.set(k.name, (this.kernels.get(k.name) ?? 0) + k.ms);
  }
  summary(wall: number) {
    const n = Math.max(1, this.frames), r = (v: number) => Number((v / n).toFixed(3));
    return {
      frames: this.frames, fps: Number((this.frames / (wall / 1000)).toFixed(2)), wallMs: Number(wall.toFixed(1)),
      perFrameMs: { decodeWait: r(this.decode), upload: r(this.upload), kernels: r([...this.kernels.values()].reduce((a, b) => a + b, 0)), readback: r(this.readback), host: r(this.host) },
      kernelsMs: Object.fromEntries([...this.kernels].map(([k, v]) => [k, r(v)])),
    };
  }
}

/**
 * Detection on every frame of a video (or numbered images: frames/%04d.png): the frames are a source of the loop
 * of batch mode (batch/loop.ts VideoFrames), pipelined — frame k+1 is decoded (by ffmpeg, ahead) and submitted to
 * the GPU before frame k's results are read back, grouped and written: the GPU, the decoder and the host work at
 * the same time. A frame that fails ends the run (a video is one input, not a set of files).
 */
async function detectVideo(c: Ctx, path: string, run: ResolvedOf<typeof RUN_PARAMS>, kind: string | undefined, deadline: number, quiet: boolean): Promise<number> {
  const reader = await VideoReader.open(path);
  const writer = kind === 'video' ? VideoWriter.create(run.output!, reader.info.width, reader.info.height, reader.info.fps) : undefined;
  const gpuT = new PhaseTotals(), cpuT = new PhaseTotals();
  let disagree = 0, shown = false, stopped = false;
  const t0 = now();
  /** Submits a frame (and runs the CPU reference); what it returns completes, reports and writes it. */
  const step = async (job: FrameJob, frame: Image) => {
    if (!shown && run.showPyramid) {
      await showPyramid(run.showPyramid, (c.gpu ?? c.cpu)!, frame);
      shown = true;
    }
    const submitted = c.gpu ? await c.gpu.submitGpu(frame, c.exec.gpu!) : undefined;
    const cpu = c.cpu ? await c.cpu.runCpu(frame) : undefined;
    return async () => {
      const gpu = submitted ? await submitted() : undefined;
      const r = outcome(cpu, gpu);
      if (gpu) gpuT.add(gpu.timings, job.decodeMs);
      if (cpu) cpuT.add(cpu.timings, gpu ? 0 : job.decodeMs);
      if (r.agree === false) disagree++;
      report(c, path, job.frame, frame, r);
      if (writer) await writer.write(annotate(frame, r.main.output.detections));
    };
  };
  try {
    const frames = reader.info.frames ? Math.max(0, Math.min(run.maxFrames ?? Infinity, reader.info.frames - run.startFrame)) : undefined;
    const progress = new Progress(frames, { quiet: quiet || c.json, unit: 'frames', verb: 'detected' });
    const source = new VideoFrames(reader, run.startFrame, run.maxFrames);
    ({ stopped } = await eachImage(source, step, { depth: 1, window: 1, pipelined: true, progress, onFailure: 'stop', deadline }));
    await writer?.close();
  } catch (e) {
    await writer?.abort();
    throw e;
  } finally {
    reader.close();
  }
  const wall = now() - t0;
  const summary = { video: path, width: reader.info.width, height: reader.info.height, gpu: gpuT.frames ? gpuT.summary(wall) : null, cpu: cpuT.frames ? cpuT.summary(wall) : null, ...(disagree ? { framesDisagreeing: disagree } : {}), ...(stopped ? { stoppedByTimeout: true } : {}) };
  if (c.json) console.log(JSON.stringify({ summary }));
  else {
    for (const [name, t] of [['gpu', summary.gpu], ['cpu', summary.cpu]] as const) {
      if (!t) continue;
      console.log(`${name}: ${t.frames} frames in ${(t.wallMs / 1000).toFixed(2)} s, ${t.fps} fps; per frame: decode wait ${t.perFrameMs.decodeWait} ms, upload ${t.perFrameMs.upload} ms, kernels ${t.perFrameMs.kernels} ms, readback ${t.perFrameMs.readback} ms, host ${t.perFrameMs.host} ms`);
      for (const [k, v] of Object.entries(t.kernelsMs)) console.log(`  ${k}: ${v} ms`);
    }
    if (stopped) console.log('stopped by --timeout');
    if (disagree) console.log(`CPU and GPU disagree on ${disagree} frames`);
  }
  return disagree ? EXIT_DISAGREE : EXIT_OK;
}

/** `imgpu classifier convert <opencv.xml> <waldboost.xml>`: a cascade written as a WaldBoost classifier. */
export async function classifierCommand(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, new Set(['help', 'json']));
  const usage = 'usage: imgpu classifier convert <in.xml> <out.xml>   (an OpenCV LBP cascade or WaldBoost XML, written as WaldBoost XML)\n       imgpu classifier info <file.xml> [--json]';
  if (flags.has('help')) { console.log(usage); return EXIT_OK; }
  rejectUnknown(flags, ['help', 'json']);
  const [sub, src, dst] = positional;
  if (sub === 'info' && src && !dst) {
    const c = await readClassifier(src);
    const stages = c.weak.filter((w) => w.reset).length;
    const out = { name: c.name, window: c.window, weak: c.weak.length, staged: c.staged, stages: c.staged ? stages : undefined };
    console.log(flags.has('json') ? JSON.stringify(out) : `${c.name}: ${c.window.width}×${c.window.height} window, ${c.weak.length} weak classifiers${c.staged ? ` in ${stages} stages` : ' (WaldBoost, one running sum)'}`);
    return EXIT_OK;
  }
  if (sub !== 'convert' || !src || !dst || positional.length !== 3) throw new InvalidArgumentError(usage);
  if (extname(dst).toLowerCase() !== '.xml') throw new InvalidArgumentError(`${dst}: the WaldBoost classifier is written as .xml`);
  await checkFolderWritable(dst);
  const c = await readClassifier(src);
  await writeAtomically(dst, Buffer.from(waldBoostXml(c, `converted by imgpu from ${c.name}: ${c.weak.length} weak classifiers; reset="1" ends an OpenCV stage (the sum restarts)`)));
  console.log(`wrote ${dst}: ${c.weak.length} weak classifiers${c.staged ? `, ${c.weak.filter((w) => w.reset).length} stages` : ''}`);
  return EXIT_OK;
}


/** `imgpu adapters`: every GPU adapter Dawn offers (each backend), which one imgpu would pick. */
export async function adaptersCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, new Set(['json', 'help']));
  if (flags.has('help')) { console.log('usage: imgpu adapters [--json]   the GPU adapters available (use a name with --adapter)'); return EXIT_OK; }
  rejectUnknown(flags, ['json', 'help']);
  const list = await listNodeAdapters();
  if (flags.has('json')) console.log(JSON.stringify(list));
  else if (!list.length) console.log('no GPU adapter (imgpu runs on the CPU; see docs/device.md)');
  else for (const a of list) console.log(`${a.backend.padEnd(9)} ${[a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ')}${a.software ? ' (software)' : ''}${a.fallback ? ' (fallback)' : ''}`);
  return EXIT_OK;
}
