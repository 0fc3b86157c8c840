/** A dependency-free SVG bar chart (log scale) of the median times per size, one bar group per size. */
interface Row { size: string; [series: string]: unknown }

const SERIES: [key: string, label: string, color: string][] = [
  ['cpu', 'imgpu CPU', '#8c8c8c'],
  ['gpuKernels', 'imgpu GPU kernels', '#1f77b4'],
  ['gpuResident', 'imgpu GPU resident', '#2ca02c'],
  ['gpuEndToEnd', 'imgpu GPU host→host', '#ff7f0e'],
  ['anchor', 'OpenCV', '#d62728'],
];

function median(row: Row, key: string): number | undefined {
  if (key === 'anchor') {
    const a = Object.values((row.anchors as Record<string, { median: number }>) ?? {})[0];
    return a?.median;
  }
  return (row[key] as { median?: number } | undefined)?.median;
}

export function plotSvg(op: string, rows: Row[]): string {
  const W = 120 + rows.length * 140, H = 320, top = 40, bottom = 260;
  const vals = rows.flatMap((r) => SERIES.map(([k]) => median(r, k)).filter((v): v is number => v !== undefined && v > 0));
  const lo = Math.floor(Math.log10(Math.min(...vals, 1))), hi = Math.ceil(Math.log10(Math.max(...vals, 1)));
  const y = (v: number) => bottom - ((Math.log10(v) - lo) / Math.max(1, hi - lo)) * (bottom - top);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="10" y="20" font-size="14">${op}: median time per call (ms, log scale)</text>`];
  for (let e = lo; e <= hi; e++) parts.push(`<line x1="60" x2="${W - 10}" y1="${y(10 ** e)}" y2="${y(10 ** e)}" stroke="#ddd"/><text x="10" y="${y(10 ** e) + 4}">${10 ** e}</text>`);
  rows.forEach((r, i) => {
    const x0 = 80 + i * 140;
    SERIES.forEach(([k, , c], j) => {
      const v = median(r, k);
      if (v === undefined || v <= 0) return;
      parts.push(`<rect x="${x0 + j * 22}" y="${y(v)}" width="18" height="${bottom - y(v)}" fill="${c}"><title>${k} ${v.toFixed(4)} ms</title></rect>`);
    });
    parts.push(`<text x="${x0}" y="${bottom + 16}">${r.size}</text>`);
  });
  SERIES.forEach(([, label, c], j) => parts.push(`<rect x="${10 + j * 150}" y="${H - 30}" width="10" height="10" fill="${c}"/><text x="${24 + j * 150}" y="${H - 21}">${label}</text>`));
  parts.push('</svg>');
  return parts.join('\n');
}

/** A dependency-free SVG line chart (log y): one polyline per series over numeric x values. */
export function plotLinesSvg(title: string, xLabel: string, series: { label: string; points: [number, number][] }[]): string {
  const W = 560, H = 340, left = 60, right = W - 150, top = 40, bottom = 280;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter((v) => v > 0);
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const lo = Math.floor(Math.log10(Math.min(...ys))), hi = Math.ceil(Math.log10(Math.max(...ys)));
  const X = (v: number) => left + ((v - x0) / Math.max(1e-9, x1 - x0)) * (right - left);
  const Y = (v: number) => bottom - ((Math.log10(v) - lo) / Math.max(1, hi - lo)) * (bottom - top);
  const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="10" y="20" font-size="14">${title}</text>`];
  for (let e = lo; e <= hi; e++) parts.push(`<line x1="${left}" x2="${right}" y1="${Y(10 ** e)}" y2="${Y(10 ** e)}" stroke="#ddd"/><text x="10" y="${Y(10 ** e) + 4}">${10 ** e} ms</text>`);
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) parts.push(`<text x="${X(x) - 6}" y="${bottom + 16}">${x}</text>`);
  parts.push(`<text x="${(left + right) / 2 - 20}" y="${bottom + 34}">${xLabel}</text>`);
  series.forEach((s, i) => {
    const c = colors[i % colors.length];
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${s.points.map(([x, y]) => `${X(x)},${Y(y)}`).join(' ')}"/>`);
    for (const [x, y] of s.points) parts.push(`<circle cx="${X(x)}" cy="${Y(y)}" r="3" fill="${c}"><title>${s.label}: ${y.toFixed(3)} ms</title></circle>`);
    parts.push(`<rect x="${right + 10}" y="${top + i * 18}" width="10" height="10" fill="${c}"/><text x="${right + 24}" y="${top + 9 + i * 18}">${s.label}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/**
 * Grouped bars (linear) of images/s per operation of a batch run (bench/batch.ts rows). Series no row has are left
 * out (a run with --rows, or an older result file, whose imgpu GPU row is `gpu`).
 */
export function plotBatchSvg(title: string, rows: { op: string; [k: string]: unknown }[]): string {
  const rate = (x: unknown) => (x as { images_per_s?: number } | undefined)?.images_per_s;
  const series = ([
    ['imgpu GPU, --jpeg gpu', '#1f77b4', (r) => rate(r.gpu_jpeg_gpu)],
    ['imgpu GPU, --jpeg gpu, GPU entropy coding', '#2ca02c', (r) => rate(r.gpu_jpeg_gpu_entropy)],
    ['imgpu GPU, --jpeg gpu, CPU entropy coding (hybrid)', '#9467bd', (r) => rate(r.gpu_jpeg_hybrid)],
    ['imgpu GPU, --jpeg gpu, 2 photos in flight', '#98df8a', (r) => rate(r.gpu_jpeg_gpu_depth2)],
    ['imgpu GPU, --jpeg cpu', '#17becf', (r) => rate(r.gpu_jpeg_cpu)],
    ['imgpu GPU', '#1f77b4', (r) => rate(r.gpu)],
    ['imgpu CPU', '#8c8c8c', (r) => rate(r.cpu)],
    ['imgpu GPU, JPEG via sharp', '#aec7e8', (r) => rate(r.gpu_sharp_codecs)],
    ['OpenCV loop', '#ff9896', (r) => (r.anchors as { loop?: number })?.loop],
    ['OpenCV, 16 processes', '#d62728', (r) => (r.anchors as { pool?: number })?.pool],
  ] as [string, string, (r: Record<string, unknown>) => number | undefined][]).filter(([, , f]) => rows.some((r) => f(r) !== undefined));
  const group = series.length * 24 + 30;
  const W = Math.max(600, 100 + rows.length * group), H = 340 + Math.ceil(series.length / 3) * 16, top = 40, bottom = 270;
  const vals = rows.flatMap((r) => series.map(([, , f]) => f(r) ?? 0));
  const max = Math.ceil(Math.max(...vals, 1) / 50) * 50;
  const step = max > 500 ? 100 : 50;
  const y = (v: number) => bottom - (v / max) * (bottom - top);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="10" y="20" font-size="14">${title}</text>`];
  for (let v = 0; v <= max; v += step) parts.push(`<line x1="50" x2="${W - 10}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="10" y="${y(v) + 4}">${v}</text>`);
  rows.forEach((r, i) => {
    const x0 = 70 + i * group;
    series.forEach(([name, c, f], j) => {
      const v = f(r);
      if (v === undefined) return;
      parts.push(`<rect x="${x0 + j * 24}" y="${y(v)}" width="20" height="${bottom - y(v)}" fill="${c}"><title>${name} ${v.toFixed(1)} images/s</title></rect>`);
    });
    parts.push(`<text x="${x0}" y="${bottom + 16}">${r.op}</text>`);
  });
  series.forEach(([name, c], j) => parts.push(`<rect x="${10 + (j % 3) * 190}" y="${bottom + 34 + Math.floor(j / 3) * 16}" width="10" height="10" fill="${c}"/><text x="${24 + (j % 3) * 190}" y="${bottom + 43 + Math.floor(j / 3) * 16}">${name}</text>`));
  parts.push('</svg>');
  return parts.join('\n');
}
