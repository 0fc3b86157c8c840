import { XMLParser } from 'fast-xml-parser';
import { UnsupportedFormatError } from '../../../core/errors.js';
import type { Classifier, LbpFeature, WeakClassifier } from '../classifier.js';
import { waldBoostXml } from '../classifier-xml.js';
import { effectiveThreshold, stumpValue, type Stump, type TrainedStage } from './boost.js';

/**
 * What training writes, in traincascade's formats (cascadeclassifier.cpp, boost.cpp: FileStorage XML): the cascade
 * (`cascade.xml`: the stages with their stumps, then the features they use, renumbered in pool order), the parameters
 * (`params.xml`) and one file per finished stage (`stageN.xml`, features as pool indices) from which a run continues;
 * and the WaldBoost XML `imgpu detect` reads. Platform-neutral strings; io writes them.
 */

/** The parameters a cascade file records (stageParams, featureParams) and the training's own, for params.xml. */
export interface CascadeParams {
  window: { width: number; height: number };
  type: 'cascade' | 'waldboost';
  minHitRate: number;
  maxFalseAlarm: number;
  weightTrimming: number;
  maxWeakCount: number;
  stages: number;
  numPos: number;
  numNeg: number;
  miningScale: number;
}

/** A real as OpenCV's FileStorage writes it ("%.16e": 16 digits after the point, a two-digit exponent). */
export function cvReal(v: number): string {
  const [m, e] = v.toExponential(16).split('e');
  const exp = Number(e);
  return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

function header(p: CascadeParams): string[] {
  return [
    '  <stageType>BOOST</stageType>',
    '  <featureType>LBP</featureType>',
    `  <height>${p.window.height}</height>`,
    `  <width>${p.window.width}</width>`,
    '  <stageParams>',
    '    <boostType>GAB</boostType>',
    `    <minHitRate>${cvReal(Math.fround(p.minHitRate))}</minHitRate>`,
    `    <maxFalseAlarm>${cvReal(Math.fround(p.maxFalseAlarm))}</maxFalseAlarm>`,
    `    <weightTrimRate>${cvReal(p.weightTrimming)}</weightTrimRate>`,
    '    <maxDepth>1</maxDepth>',
    `    <maxWeakCount>${p.maxWeakCount}</maxWeakCount></stageParams>`,
    '  <featureParams>',
    '    <maxCatCount>256</maxCatCount>',
    '    <featSize>1</featSize></featureParams>',
  ];
}

/** A stage's XML lines at an indent; `featureIndex` maps a pool index to the index the file uses. */
function stageLines(s: TrainedStage, indent: string, featureIndex: (f: number) => number): string[] {
  const out = [`${indent}<maxWeakCount>${s.weak.length}</maxWeakCount>`, `${indent}<stageThreshold>${cvReal(s.threshold)}</stageThreshold>`, `${indent}<weakClassifiers>`];
  s.weak.forEach((w, i) => {
    out.push(`${indent}  <!-- tree ${i} -->`, `${indent}  <_>`, `${indent}    <internalNodes>`);
    out.push(`${indent}      0 -1 ${featureIndex(w.feature)} ${Array.from(w.subset).join(' ')}</internalNodes>`);
    out.push(`${indent}    <leafValues>`, `${indent}      ${cvReal(w.left)} ${cvReal(w.right)}</leafValues></_>`);
  });
  out[out.length - 1] += '</weakClassifiers>';
  return out;
}

/** params.xml: the cascade's parameters, and the training's own in a comment (a run continues only with the same; the stage count may grow). */
export function paramsXml(p: CascadeParams): string {
  const own = `type ${p.type}, numPos ${p.numPos}, numNeg ${p.numNeg}, mining scale ${p.miningScale}`;
  return ['<?xml version="1.0"?>', `<!-- imgpu train: ${own} -->`, '<opencv_storage>', '<params>', ...header(p), '</params>', '</opencv_storage>', ''].join('\n');
}

/** stageN.xml: one finished stage, features as pool indices (traincascade's stage files). */
export function stageXml(s: TrainedStage, index: number): string {
  return ['<?xml version="1.0"?>', '<opencv_storage>', `<stage${index}>`, ...stageLines(s, '  ', (f) => f), `</stage${index}>`, '</opencv_storage>', ''].join('\n');
}

/** The pool indices a cascade uses, ascending (the order of its <features>, as getUsedFeaturesIdxMap). */
function usedFeatures(stages: TrainedStage[]): number[] {
  return [...new Set(stages.flatMap((s) => s.weak.map((w) => w.feature)))].sort((a, b) => a - b);
}

/** cascade.xml: the stages and the features they use, as traincascade writes it (cv2.CascadeClassifier loads it). */
export function cascadeXml(stages: TrainedStage[], pool: LbpFeature[], p: CascadeParams, comment: string): string {
  const used = usedFeatures(stages);
  const index = new Map(used.map((f, i) => [f, i]));
  const lines = ['<?xml version="1.0"?>', `<!-- ${comment.replace(/--/g, '- -')} -->`, '<opencv_storage>', '<cascade type_id="opencv-cascade-classifier">', ...header(p), `  <stageNum>${stages.length}</stageNum>`, '  <stages>'];
  stages.forEach((s, i) => lines.push(`    <!-- stage ${i} -->`, '    <_>', ...stageLines(s, '      ', (f) => index.get(f)!), '    </_>'));
  lines.push('  </stages>', '  <features>');
  for (const f of used) {
    const r = pool[f];
    lines.push('    <_>', '      <rect>', `        ${r.x} ${r.y} ${r.w} ${r.h}</rect></_>`);
  }
  lines.push('  </features></cascade>', '</opencv_storage>', '');
  return lines.join('\n');
}

/**
 * The stages as imgpu's internal classifier: a cascade (sums restart after each stage, OpenCV's scan rule) or, for
 * WaldBoost, one running sum with each stage's threshold on its last weak classifier.
 */
export function stagesClassifier(stages: TrainedStage[], pool: LbpFeature[], window: { width: number; height: number }, type: 'cascade' | 'waldboost', name: string): Classifier {
  const staged = type === 'cascade';
  const weak: WeakClassifier[] = stages.flatMap((s) => s.weak.map((w, i): WeakClassifier => {
    const last = i === s.weak.length - 1;
    const table = new Float32Array(256);
    for (let c = 0; c < 256; c++) table[c] = stumpValue(w, c);
    return { feature: { ...pool[w.feature] }, table, reject: last ? effectiveThreshold(s.threshold) : -Infinity, accept: Infinity, reset: staged && last };
  }));
  return { name, window: { ...window }, weak, staged };
}

/** The WaldBoost XML of trained stages (one running sum; negT where a stage ends). */
export function trainedWaldBoostXml(stages: TrainedStage[], pool: LbpFeature[], window: { width: number; height: number }, comment: string): string {
  return waldBoostXml(stagesClassifier(stages, pool, window, 'waldboost', 'waldboost.xml'), comment);
}

class StageFormatError extends UnsupportedFormatError {
  override readonly code: string = 'STAGE_FORMAT';
}

const parser = new XMLParser({ parseTagValue: false, isArray: (name) => name === '_' });

/** Reads a stageN.xml written by stageXml (to continue a run); `poolSize` bounds its feature indices. */
export function parseStageXml(xml: string, index: number, poolSize: number, source: string): TrainedStage {
  const doc = parser.parse(xml) as Record<string, Record<string, Record<string, unknown>>>;
  const st = doc.opencv_storage?.[`stage${index}`];
  const trees = (st?.weakClassifiers as Record<string, unknown> | undefined)?._ as Record<string, string>[] | undefined;
  if (!st || !trees?.length) throw new StageFormatError(`${source}: not a stage file of imgpu train (no <stage${index}> with weak classifiers): remove it to train that stage again`);
  const weak = trees.map((t, i): Stump => {
    const nodes = String(t.internalNodes).trim().split(/\s+/).map(Number), leaves = String(t.leafValues).trim().split(/\s+/).map(Number);
    if (nodes.length !== 11 || leaves.length !== 2 || nodes.concat(leaves).some((v) => !Number.isFinite(v)) || !(nodes[2] >= 0 && nodes[2] < poolSize)) {
      throw new StageFormatError(`${source}: tree ${i} is not a stump on a feature of this window: remove the file to train that stage again`);
    }
    return { feature: nodes[2], subset: Int32Array.from(nodes.slice(3)), left: Math.fround(leaves[0]), right: Math.fround(leaves[1]) };
  });
  return { weak, threshold: Math.fround(Number(st.stageThreshold)) };
}
