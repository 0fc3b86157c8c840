/**
 * The CLI's main run in this process with one fault put into the operation registry it runs (the same module
 * instance main.js imports), so that outcomes no honest input reaches on a working build run for real, end to end:
 * exit 8 (--device both, the CPU and GPU outputs differ) and exit 70 (a bug in imgpu). No environment variable and
 * nothing in src/: the fault is this process's own patch, made before main.js is loaded.
 *
 *   node dist/test/helpers/cli-fault.js <fault> <imgpu arguments…>
 *
 * Faults (each wraps the named command's run):
 *   gpu-pixel  the GPU run's output has its first value changed by one (a GPU kernel off by one somewhere);
 *   bug        the run throws a TypeError, as a programming error does (reading a property of undefined);
 *   shader     the GPU run compiles a WGSL shader with a type error through the context (a broken kernel);
 *   calls      nothing changed: each run says on stderr that it ran and where ('imgpu-test: run on cpu|gpu').
 */
import { COMMANDS } from '../../src/engine/commands.js';
import type { Image } from '../../src/core/image.js';
import type { RunOptions } from '../../src/core/op.js';
import { downloaded } from '../../src/engine/jpeg.js';

type Run = (src: Image, params: Record<string, unknown>, on?: RunOptions) => ReturnType<(typeof COMMANDS)[string]['run']>;

/** The output with its first value moved by one (within the dtype's range), the rest as computed. */
function offByOne(img: Image): Image {
  const data = img.data.slice();
  data[0] = data[0] > 0 ? data[0] - 1 : data[0] + 1;
  return { ...img, data };
}

const FAULTS: Record<string, (run: Run) => Run> = {
  'gpu-pixel': (run) => async (img, params, on = {}) => {
    const r = await run(img, params, on);
    if (!on.gpu) return r;
    const d = await downloaded(r);
    return { ...d, output: offByOne(d.output as Image) };
  },
  bug: () => async (img) => {
    const missing = (img as unknown as { geometryOf?: { spacing: number[] } }).geometryOf;
    return missing!.spacing as never; // TypeError: Cannot read properties of undefined
  },
  shader: (run) => async (img, params, on = {}) => {
    if (on.gpu) await on.gpu.pipeline('faulty', '@compute @workgroup_size(1)\nfn main() { let x: u32 = 1.5; }', 'main');
    return run(img, params, on);
  },
  calls: (run) => async (img, params, on = {}) => {
    console.error(`imgpu-test: run on ${on.gpu ? 'gpu' : 'cpu'}`);
    return run(img, params, on);
  },
};

const [fault, command, ...rest] = process.argv.slice(2);
const cmd = COMMANDS[command];
if (!FAULTS[fault] || !cmd) throw new Error(`usage: cli-fault.js <${Object.keys(FAULTS).join('|')}> <command> [arguments]`);
(cmd as { run: Run }).run = FAULTS[fault]((cmd.run as Run).bind(cmd));
process.argv = [process.argv[0], 'imgpu', command, ...rest];
await import('../../src/cli/main.js');
