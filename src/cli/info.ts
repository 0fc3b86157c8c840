import { parseArgs, rejectUnknown } from './args.js';
import { createNodeGpuContext } from '../node/gpu.js';
import { jpegInfo } from '../engine/jpeg.js';

/** `imgpu info`: the adapter, its limits and its features, and the JPEG decode paths (--jpeg). */
export async function infoCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, new Set(['json']));
  rejectUnknown(flags, ['adapter', 'backend', 'json']);
  const ctx = await createNodeGpuContext({ adapter: flags.get('adapter'), backend: flags.get('backend') });
  try {
    const info = { adapter: ctx.adapter, node: process.version, timestamps: ctx.timestamps, limits: ctx.limits, features: [...ctx.features].sort(), jpeg: jpegInfo(ctx) };
    if (flags.has('json')) {
      console.log(JSON.stringify(info));
    } else {
      const a = ctx.adapter;
      console.log(`adapter: ${[a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ')}${a.software ? ' (software)' : ''}`);
      console.log(`node ${process.version}; timestamp queries: ${ctx.timestamps ? 'yes' : 'no'}`);
      console.log('limits:');
      for (const [k, v] of Object.entries(ctx.limits)) console.log(`  ${k.padEnd(36)} ${v}`);
      console.log(`features: ${info.features.join(', ')}`);
      console.log(`jpeg decode: --jpeg auto takes the ${info.jpeg.auto} path; gpu path ${info.jpeg.gpu}, its Huffman decoding on the ${info.jpeg.gpuDecodeEntropy} (IMGPU_JPEG_DECODE_ENTROPY); cpu path ${info.jpeg.cpu}`);
      console.log(`jpeg encode (batch --jpeg gpu): gpu path ${info.jpeg.gpuEncode}, its entropy coding on the ${info.jpeg.gpuEncodeEntropy} (IMGPU_JPEG_ENTROPY); cpu path ${info.jpeg.cpu}`);
    }
    return 0;
  } finally {
    ctx.destroy();
  }
}
