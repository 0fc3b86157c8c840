// Pipelines in the page: the chain is parsed by the library's parser (the text `imgpu pipeline` takes) and run by
// its runPipeline — on the GPU resident (one upload, steps recorded on the device image, one download), in the
// CPU worker on the host — with each stage kept for display. Shared by the page and its CPU worker.
import { InvalidArgumentError } from '../src/browser.js';
import type { GpuContext } from '../src/browser.js';
import { GpuImage } from '../src/browser.js';
import type { Image } from '../src/browser.js';
import type { ParamSpec } from '../src/browser.js';
import { now, type OpResult, type Timings } from '../src/browser.js';
import { parsePipeline, runPipeline, type PipelineStep } from '../src/browser.js';
import { OPERATIONS } from '../src/browser.js';

/** One stage as shown: its output, its own timings, and the page's clock around it. */
export interface Stage {
  op: string;
  /** The stage's output (the last one's is the pipeline's output). */
  image: Image;
  /** The step's own timings (GPU: recorded and submitted, not awaited). */
  timings: Timings;
  /** Time from the previous stage to this one's output (GPU: recording; the device may still be running it). */
  ms: number;
  /** GPU intermediates: time to bring the stage to the host for display (waits for the device to finish it). */
  shownMs: number;
}

/**
 * The chain's steps, parsed as `imgpu pipeline` parses them (errors name the step). File parameters are refused:
 * the page cannot open a typed path (the operation's own form has a file picker).
 */
export function parseChain(text: string): PipelineStep[] {
  const steps = parsePipeline(text);
  for (const [i, s] of steps.entries()) {
    for (const p of OPERATIONS[s.op].params as readonly ParamSpec[]) {
      const v = s.params[p.name];
      if (p.kind === 'string' && p.file && typeof v === 'string' && v.startsWith(p.file.prefix)) {
        throw new InvalidArgumentError(`pipeline step ${i + 1} (${s.op}): ${v}: a web page cannot open a path; run ${s.op} from its form, which has a file picker`);
      }
    }
  }
  return steps;
}

/**
 * Runs the steps with the library's runPipeline, keeping every stage: on the GPU, intermediates are downloaded
 * only to be shown (the pipeline itself downloads once, at the end). A failure names its step.
 */
export async function runChain(img: Image, steps: PipelineStep[], gpu?: GpuContext): Promise<OpResult<Image> & { stages: Stage[] }> {
  const stages: Stage[] = [];
  let t = now();
  const observe = async (i: number, out: Image | GpuImage, timings: Timings) => {
    const t1 = now();
    // The last stage is the pipeline's output, downloaded by the pipeline itself.
    const image = out instanceof GpuImage ? (i < steps.length - 1 ? await out.toHost() : undefined) : out;
    stages.push({ op: steps[i].op, image: image!, timings, ms: t1 - t, shownMs: now() - t1 });
    t = now();
  };
  try {
    const r = await runPipeline(img, steps, { gpu, stage: observe });
    stages[stages.length - 1].image = r.output;
    return { ...r, stages };
  } catch (e) {
    const msg = (e as Error).message ?? String(e);
    const at = Math.min(stages.length, steps.length - 1);
    throw new Error(msg.startsWith('pipeline step') ? msg : `pipeline step ${at + 1} (${steps[at].op}): ${msg}`, { cause: e });
  }
}
