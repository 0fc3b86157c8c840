import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { shownValue, UnsupportedFormatError } from '../../core/errors.js';
import { validateClassifier, type Classifier, type LbpFeature, type WeakClassifier } from './classifier.js';

/**
 * Classifier files: OpenCV cascades (traincascade's XML with featureType LBP and stumps) and WaldBoost XML
 * (`<WaldBoostClassifier imageSizeX imageSizeY type="LBP">` with one `<stage posT negT>` per weak classifier),
 * both read into the one internal form of ops/detect/classifier.ts; WaldBoost XML is also written. Platform-neutral
 * (strings in, strings out): browsers parse with it too; classifier.ts reads files in Node.
 */

/** The last component of a path or URL (the classifier's name). */
function basename(path: string): string {
  return path.split(/[\\/]/).pop() || path;
}

/** OpenCV subtracts this from every stage threshold (cascadedetect.cpp THRESHOLD_EPS), in float. */
const THRESHOLD_EPS = Math.fround(1e-5);

class ClassifierFormatError extends UnsupportedFormatError {
  override readonly code: string = 'CLASSIFIER_FORMAT';
}

type Node = Record<string, unknown>;

function numbers(text: unknown, what: string, where: string): number[] {
  if (typeof text !== 'string' && typeof text !== 'number') throw new ClassifierFormatError(`${where}: ${what} is missing`);
  const parts = String(text).trim().split(/\s+/);
  const out = parts.map((p) => (p === 'inf' || p === '+inf' ? Infinity : p === '-inf' ? -Infinity : Number(p)));
  if (parts[0] === '' || out.some((v) => Number.isNaN(v))) throw new ClassifierFormatError(`${where}: ${what} must be numbers, got '${String(text).slice(0, 60)}'`);
  return out;
}

function list(x: unknown): Node[] {
  if (x === undefined || x === null || x === '') return [];
  return (Array.isArray(x) ? x : [x]) as Node[];
}

function child(n: Node, key: string, where: string): Node {
  const c = n[key];
  if (c === undefined || c === null || typeof c !== 'object') throw new ClassifierFormatError(`${where}: <${key}> is missing`);
  return c as Node;
}

function text(n: Node, key: string, where: string): string {
  const v = n[key];
  if (v === undefined || v === null || typeof v === 'object') throw new ClassifierFormatError(`${where}: <${key}> is missing`);
  return String(v as string | number | boolean).trim();
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, parseAttributeValue: false, trimValues: true, isArray: (name) => name === '_' || name === 'stage' });

/** Parses classifier XML of either kind; `source` names it in errors. */
export function parseClassifierXml(xml: string, source: string): Classifier {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new ClassifierFormatError(`${source}: malformed XML (line ${valid.err.line}: ${valid.err.msg})`);
  const doc = parser.parse(xml) as Node;
  const storage = doc.opencv_storage as Node | undefined;
  let c: Classifier;
  if (doc.WaldBoostClassifier) c = fromWaldBoost(doc.WaldBoostClassifier as Node, source);
  else if (storage && typeof storage === 'object' && storage.cascade) c = fromOpenCv(storage.cascade as Node, source);
  else if (storage && typeof storage === 'object' && Object.values(storage).some((v) => v && typeof v === 'object' && (v as Node)['@type_id'] === 'opencv-haar-classifier')) {
    throw new ClassifierFormatError(`${source}: an old-style Haar cascade; imgpu detects with LBP features (use an lbpcascade_*.xml)`);
  } else throw new ClassifierFormatError(`${source}: neither an OpenCV cascade (<opencv_storage><cascade>) nor a WaldBoost classifier (<WaldBoostClassifier>)`);
  validateClassifier(c);
  return c;
}

/** An OpenCV traincascade file: BOOST stages of LBP stumps (8 subset words select leaf 0 or 1 per code). */
function fromOpenCv(cascade: Node, source: string): Classifier {
  const stageType = text(cascade, 'stageType', source), featureType = text(cascade, 'featureType', source);
  if (stageType !== 'BOOST') throw new ClassifierFormatError(`${source}: stage type '${stageType}' is not supported (BOOST only)`);
  if (featureType !== 'LBP') throw new ClassifierFormatError(`${source}: feature type '${featureType}' is not supported: imgpu detects with LBP features (Haar and HOG cascades are not)`);
  const width = numbers(text(cascade, 'width', source), '<width>', source)[0];
  const height = numbers(text(cascade, 'height', source), '<height>', source)[0];
  const features: LbpFeature[] = list(child(cascade, 'features', source)._).map((f, i) => {
    const r = numbers(f.rect, `feature ${i} <rect>`, source);
    if (r.length !== 4) throw new ClassifierFormatError(`${source}: feature ${i}: <rect> needs x y w h`);
    return { x: r[0], y: r[1], w: r[2], h: r[3] };
  });
  const weak: WeakClassifier[] = [];
  list(child(cascade, 'stages', source)._).forEach((stage, s) => {
    const where = `${source}: stage ${s}`;
    const threshold = Math.fround(Math.fround(numbers(text(stage, 'stageThreshold', where), '<stageThreshold>', where)[0]) - THRESHOLD_EPS);
    const trees = list(child(stage, 'weakClassifiers', where)._);
    if (!trees.length) throw new ClassifierFormatError(`${where}: no weak classifiers`);
    trees.forEach((t, i) => {
      const nodes = numbers(t.internalNodes, `tree ${i} <internalNodes>`, where);
      const leaves = numbers(t.leafValues, `tree ${i} <leafValues>`, where);
      if (nodes.length !== 11 || leaves.length !== 2) {
        throw new ClassifierFormatError(`${where}: tree ${i} is not a stump with 8 subset words (trees deeper than one split are not supported)`);
      }
      const f = features[nodes[2]];
      if (!f) throw new ClassifierFormatError(`${where}: tree ${i} uses feature ${nodes[2]}, but the file has ${features.length}`);
      const table = new Float32Array(256);
      for (let code = 0; code < 256; code++) table[code] = (nodes[3 + (code >> 5)] & (1 << (code & 31))) !== 0 ? leaves[0] : leaves[1];
      const last = i === trees.length - 1;
      weak.push({ feature: f, table, reject: last ? threshold : -Infinity, accept: Infinity, reset: last });
    });
  });
  return { name: basename(source), window: { width, height }, weak, staged: true };
}

function attr(n: Node, key: string, where: string, fallback?: number): number {
  const v = n[`@${key}`];
  if (v === undefined) {
    if (fallback !== undefined) return fallback;
    throw new ClassifierFormatError(`${where}: attribute ${key} is missing`);
  }
  return numbers(v, `attribute ${key}`, where)[0];
}

/**
 * WaldBoost XML: one running sum; each <stage> holds one HistogramWeakHypothesis (256 predictionValues) on an
 * LBPFeature (inside the hypothesis or beside it), and rejects when sum < negT, accepts when sum ≥ posT.
 * imgpu's extension `reset="1"` restarts the sum after a stage (how an OpenCV cascade is written exactly).
 */
function fromWaldBoost(root: Node, source: string): Classifier {
  const type = root['@type'];
  if (type !== undefined && type !== 'LBP') throw new ClassifierFormatError(`${source}: WaldBoost feature type '${shownValue(type)}' is not supported (LBP only)`);
  const width = attr(root, 'imageSizeX', source), height = attr(root, 'imageSizeY', source);
  const stages = list(root.stage);
  if (!stages.length) throw new ClassifierFormatError(`${source}: the WaldBoost classifier has no <stage>`);
  let resets = 0;
  const weak = stages.map((st, i): WeakClassifier => {
    const where = `${source}: stage ${i}`;
    const hyp = st.HistogramWeakHypothesis as Node | undefined;
    if (!hyp || typeof hyp !== 'object') throw new ClassifierFormatError(`${where}: <HistogramWeakHypothesis> is missing`);
    const fn = (hyp.LBPFeature ?? st.LBPFeature) as Node | undefined;
    if (!fn || typeof fn !== 'object') {
      if (Object.keys(hyp).concat(Object.keys(st)).some((k) => k.endsWith('Feature'))) throw new ClassifierFormatError(`${where}: only LBPFeature is supported`);
      throw new ClassifierFormatError(`${where}: <LBPFeature> is missing`);
    }
    const values = numbers(hyp['@predictionValues'], 'predictionValues', where);
    if (values.length !== 256) throw new ClassifierFormatError(`${where}: predictionValues needs 256 values (one per LBP code), got ${values.length}`);
    const reset = st['@reset'] === '1' || st['@reset'] === 'true';
    if (reset) resets++;
    return {
      feature: { x: attr(fn, 'positionX', where), y: attr(fn, 'positionY', where), w: attr(fn, 'blockWidth', where), h: attr(fn, 'blockHeight', where) },
      table: Float32Array.from(values),
      reject: Math.fround(attr(st, 'negT', where, -Infinity)),
      accept: Math.fround(attr(st, 'posT', where, Infinity)),
      reset,
    };
  });
  return { name: basename(source), window: { width, height }, weak, staged: resets > 0 };
}

/** The shortest decimal that reads back as the same float32 (and inf/-inf). */
export function float32Text(v: number): string {
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  for (let p = 1; p <= 9; p++) {
    const s = Number(v.toPrecision(p));
    if (Math.fround(s) === v) return String(s);
  }
  return String(v);
}

/** A classifier as WaldBoost XML; the stages of a staged cascade carry reset="1" where an OpenCV stage ends. */
export function waldBoostXml(c: Classifier, comment = ''): string {
  const lines = ['<?xml version="1.0"?>'];
  if (comment) lines.push(`<!-- ${comment.replace(/--/g, '- -')} -->`);
  lines.push(`<WaldBoostClassifier imageSizeX="${c.window.width}" imageSizeY="${c.window.height}" type="LBP">`);
  for (const w of c.weak) {
    const f = w.feature;
    lines.push(`  <stage posT="${float32Text(w.accept)}" negT="${float32Text(w.reject)}"${w.reset ? ' reset="1"' : ''}>`);
    lines.push(`    <HistogramWeakHypothesis predictionValues="${Array.from(w.table, float32Text).join(' ')}">`);
    lines.push(`      <LBPFeature positionX="${f.x}" positionY="${f.y}" blockWidth="${f.w}" blockHeight="${f.h}"/>`);
    lines.push('    </HistogramWeakHypothesis>', '  </stage>');
  }
  lines.push('</WaldBoostClassifier>', '');
  return lines.join('\n');
}

