// The layering of docs/architecture.md, checked by `npm run lint` (dependency-cruiser):
//   core ← ops ← io ← node (platform) ← engine (batch, scale: src/engine) ← entries (src/node.ts, src/browser.ts,
//   src/index.ts, src/scale.ts, src/batch.ts) ← cli / playground
// A layer imports only the layers to its left. Operation families (src/ops/<family>/) import one another only
// through the shared primitives below; the ops-level modules (registry, pipeline, tasks, input) sit beside them.
/** Families that other families build on: the histogram (equalize, thresholds) and applying a LUT. */
const SHARED_FAMILIES = ['histogram', 'lut'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-imports-core-only',
      comment: 'core is the bottom layer: it imports nothing of ops, io, node, browser, cli or the playground.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/|^playground/', pathNot: '^src/core/' },
    },
    {
      name: 'ops-imports-no-higher-layer',
      comment: 'ops import core and ops only (no io, node, browser, cli, entry points or playground).',
      severity: 'error',
      from: { path: '^src/ops/' },
      to: { path: '^src/(io|node|engine|cli)/|^src/[^/]+\\.ts$|^playground/' },
    },
    {
      name: 'io-imports-no-higher-layer',
      comment: 'io imports core, ops and io only (no node, engine, browser, cli, entry points or playground).',
      severity: 'error',
      from: { path: '^src/io/' },
      to: { path: '^src/(node|engine|cli)/|^src/[^/]+\\.ts$|^playground/' },
    },
    {
      name: 'codecs-platform-neutral',
      comment: 'src/codecs (the GPU JPEG codec\'s plans, kernels and coders) imports core and codecs only: no node, io (native bindings), engine, cli or entry points; the platform implements what libjpeg does natively.',
      severity: 'error',
      from: { path: '^src/codecs/' },
      to: { path: '^src/(node|io|ops|engine|cli)/|^src/[^/]+\\.ts$|^playground/' },
    },
    {
      name: 'codecs-no-node-builtins',
      comment: 'src/codecs runs in browsers too: no node:* module.',
      severity: 'error',
      from: { path: '^src/codecs/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'platform-below-engine',
      comment: 'src/node (the platform: GPU context, codecs, workers) imports no engine.',
      severity: 'error',
      from: { path: '^src/node/' },
      to: { path: '^src/engine/' },
    },
    {
      name: 'engine-below-front-ends',
      comment: 'The engine (src/engine: batch and scale-out, the library behind imgpu/scale) imports no cli, entry point or playground: the CLI is parsing and printing over it.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/cli/|^src/[^/]+\\.ts$|^playground/' },
    },
    {
      name: 'platform-imports-no-front-end',
      comment: 'node/, the entry points (index, node, browser) import no cli and no playground.',
      severity: 'error',
      from: { path: '^src/(node/|[^/]+\\.ts$)' },
      to: { path: '^src/cli/|^playground/' },
    },
    {
      name: 'browser-side-no-node',
      comment: 'The platform-neutral entry (index.ts), the browser entry and the playground reach nothing of src/node.',
      severity: 'error',
      from: { path: '^src/(index|browser)\\.ts$|^playground/' },
      to: { path: '^src/node/|^src/node\\.ts$', reachable: true },
    },
    {
      name: 'playground-on-public-entries',
      comment: 'The playground is a user of the package: it imports imgpu/browser (src/browser.ts) only, never a module inside src (extend the entry with what a page legitimately needs).',
      severity: 'error',
      from: { path: '^playground/' },
      to: { path: '^src/', pathNot: '^src/browser\\.ts$' },
    },
    {
      name: 'front-ends-apart',
      comment: 'The CLI and the playground are two front ends: neither imports the other (shared code goes down a layer).',
      severity: 'error',
      from: { path: '^(src/cli|playground)/' },
      to: { path: '^(src/cli|playground)/', pathNot: '^$1/' },
    },
    {
      name: 'op-families-apart',
      comment: `An operation family imports another only if it is a shared primitive (${SHARED_FAMILIES.join(', ')}); move other shared code to src/core.`,
      severity: 'error',
      from: { path: '^src/ops/([^/]+)/' },
      to: { path: '^src/ops/[^/]+/', pathNot: `^src/ops/($1|${SHARED_FAMILIES.join('|')})/` },
    },
    {
      name: 'shared-families-stand-alone',
      comment: 'The shared primitive families import no other family.',
      severity: 'error',
      from: { path: `^src/ops/(${SHARED_FAMILIES.join('|')})/` },
      to: { path: '^src/ops/[^/]+/', pathNot: '^src/ops/$1/' },
    },
    {
      name: 'queue-in-scale-only',
      comment: 'bullmq and ioredis (scale-out, optional peer dependencies) are named by src/engine/scale/ only.',
      severity: 'error',
      from: { path: '^src/|^playground/', pathNot: '^src/engine/scale/' },
      to: { path: 'node_modules/(bullmq|ioredis)/' },
    },
    {
      name: 'queue-loaded-on-first-call',
      comment: 'bullmq and ioredis are loaded by modules.ts\'s dynamic import only (types elsewhere): importing imgpu or imgpu/scale loads neither, and their absence is a one-line error.',
      severity: 'error',
      from: { path: '^src/engine/scale/' },
      to: { path: 'node_modules/(bullmq|ioredis)/', dependencyTypesNot: ['dynamic-import', 'type-only'] },
    },
    {
      name: 'scale-commands-loaded-lazily',
      comment: 'src/cli/scale.ts is loaded by a dynamic import only (main.ts), so the image commands load none of scale-out.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/scale\\.ts$' },
      to: { path: '^src/cli/scale\\.ts$', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles in the sources.',
      severity: 'error',
      from: { path: '^src/|^playground/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
