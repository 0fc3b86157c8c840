import { kernelTotal, type Timings } from '../core/timings.js';

const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 0.1 ? x.toFixed(2) : x.toFixed(4));

/** One line per path: total and its split, then the kernels. */
export function formatTimings(label: string, t: Timings): string {
  const parts = [`host ${ms(t.host)}`];
  if (t.backend === 'gpu') parts.push(`upload ${ms(t.upload)}`);
  parts.push(`kernels ${ms(kernelTotal(t))}${t.kernelSource === 'wallclock' ? ' (wall clock)' : ''}`);
  if (t.backend === 'gpu') parts.push(`download ${ms(t.download)}`);
  const kernels = t.kernels.length > 1 || t.backend === 'gpu' ? `\n      ${t.kernels.map((k) => `${k.name} ${ms(k.ms)}`).join(', ')}` : '';
  const slabs = t.slabs && t.slabs > 1 ? `, ${t.slabs} slabs` : '';
  return `  ${label.padEnd(4)} total ${ms(t.total)} ms = ${parts.join(' + ')}${slabs}${kernels}`;
}
