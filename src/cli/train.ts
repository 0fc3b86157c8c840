import { InvalidArgumentError } from '../core/errors.js';
import { paramHelp } from '../core/params.js';
import { train } from '../io/train.js';
import { resolveTrainOptions, trainParams, type StageProgress } from '../ops/detect/train/index.js';
import { DEVICE_FLAGS, flagNames, paramFlags, parseArgs, rejectUnknown } from './args.js';
import { acquire } from '../engine/context.js';
import { EXIT_OK } from '../engine/exit.js';
import { FAIL_ON_HELP, failOnOption } from '../engine/jpeg.js';

const USAGE = `imgpu train --positives <folder|annotations.txt|samples.vec> --negatives <folder|bg.txt> --out <folder> [options]
  trains an LBP cascade as opencv_traincascade (-featureType LBP -bt GAB) or a WaldBoost classifier; the out folder
  receives params.xml, stageN.xml after each stage (a run over the same folder continues after them) and cascade.xml
  (waldboost.xml with --type waldboost). Progress per stage on stderr (--quiet: none; --json: a JSON line per stage).
${paramHelp(trainParams)}
  --device <cpu|gpu|auto>         where to train (default auto: the GPU unless it is a software one)
${FAIL_ON_HELP}
  --json, --quiet, --threads N, --adapter NAME
Exit codes: 0 done (also when it stops early: negatives or positives exhausted, false-alarm rate reached — said on stderr),
2 bad arguments (too few positives, a background smaller than the window), 3 unreadable files, 4 no GPU adapter.`;

function progressLine(p: StageProgress): string {
  const eta = p.etaMs > 0 ? `, about ${(p.etaMs / 1000).toFixed(0)} s left` : '';
  return `stage ${p.stage}: ${p.weak} weak, hit rate ${p.hitRate.toFixed(4)}, false alarm ${p.falseAlarm.toFixed(4)}; pos ${p.numPos} (${p.posConsumed} read), `
    + `neg ${p.numNeg} of ${p.negFound} accepted / ${p.windowsScanned} windows; ${(p.ms.total / 1000).toFixed(1)} s (mining ${(p.ms.mining / 1000).toFixed(1)}, codes ${(p.ms.codes / 1000).toFixed(1)}, boosting ${(p.ms.boosting / 1000).toFixed(1)})${eta}`;
}

const STOPPED: Record<string, string> = {
  'negatives-exhausted': 'no negatives left: the cascade rejects every window of the backgrounds (give more or harder backgrounds to train further)',
  'positives-exhausted': 'too few positives left that the cascade accepts (give more samples, or a smaller --num-pos)',
  'false-alarm-reached': "the cascade's false-alarm rate on the backgrounds is below max-false-alarm^stages",
  inseparable: 'no feature tells the remaining positives from the negatives',
};

/** `imgpu train`: flags → the library's train(); progress per stage; the stop reason said. */
export async function trainCommand(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, new Set(['help', 'json', 'quiet']));
  if (flags.has('help')) { console.log(USAGE); return EXIT_OK; }
  rejectUnknown(flags, ['positives', 'negatives', 'out', 'help', 'json', 'quiet', 'fail-on', ...DEVICE_FLAGS, ...flagNames(trainParams)]);
  if (positional.length) throw new InvalidArgumentError(`imgpu train takes no positional arguments (got '${positional[0]}'); see imgpu train --help`);
  const [positives, negatives, out] = ['positives', 'negatives', 'out'].map((f) => flags.get(f));
  if (!positives || !negatives || !out) throw new InvalidArgumentError('imgpu train needs --positives, --negatives and --out (see imgpu train --help)');
  const json = flags.has('json'), quiet = flags.has('quiet');
  const options = paramFlags(trainParams, flags);
  const failOn = failOnOption(flags);
  resolveTrainOptions(options, 0); // bad values are refused before a GPU is acquired or a file read
  const exec = await acquire(flags.get('device') ?? 'auto', flags);
  try {
    for (const w of exec.warnings) console.error(w);
    const r = await train({
      ...options, positives, negatives, out, failOn, gpu: exec.gpu, pool: exec.pool,
      onProgress: (p) => { if (json) console.log(JSON.stringify(p)); else if (!quiet) console.error(progressLine(p)); },
    });
    const why = STOPPED[r.stopped];
    if (json) console.log(JSON.stringify({ path: r.path, stages: r.stages.length, resumed: r.resumed, stopped: r.stopped, weak: r.classifier.weak.length }));
    else {
      if (why) console.error(`imgpu: stopped after ${r.stages.length} stages: ${why}`);
      console.log(`wrote ${r.path}: ${r.stages.length} stages${r.resumed ? ` (${r.resumed} continued from the stage files)` : ''}, ${r.classifier.weak.length} weak classifiers`);
    }
    return EXIT_OK;
  } finally {
    await exec.close();
  }
}
