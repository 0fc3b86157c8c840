// Where the GPU JPEG encoder's quantized blocks lie (the layout its kernels write, native/coef-encode.c reads and
// the GPU entropy coder codes): apart from the encoder so that both halves can import it.

/** Chroma subsampling of a colour JPEG: cv2.imwrite's (and libjpeg's) default is 4:2:0. */
export type JpegSubsampling = '4:2:0' | '4:2:2' | '4:4:4';

/** Luma sampling factors (h, v) per subsampling; the chroma components are 1×1. */
export const SAMPLING: Record<JpegSubsampling, [number, number]> = { '4:2:0': [2, 2], '4:2:2': [2, 1], '4:4:4': [1, 1] };

/** One component of the coefficient layout. */
interface LayoutComponent {
  /** Blocks per MCU row (the image's MCUs times the component's horizontal factor). */
  blocks: number;
  /** Index of its first block within an MCU row of all components. */
  offset: number;
  /** Pixels per sample across and down (2 for subsampled chroma). */
  hexp: number;
  vexp: number;
  /** Block rows per MCU row. */
  v: number;
}

/** Where each quantized block lies in the coefficient buffer (the layout native/coef-encode.c reads). */
export interface BlockLayout {
  width: number;
  height: number;
  components: 1 | 3;
  hSamp: number;
  vSamp: number;
  mcuRows: number;
  /** Blocks per MCU row, all components. */
  perRow: number;
  comps: LayoutComponent[];
}

/** The coefficient layout of a width × height image of 1 or 3 components at a subsampling. */
export function blockLayout(width: number, height: number, components: 1 | 3, subsampling: JpegSubsampling): BlockLayout {
  const [hSamp, vSamp] = components === 1 ? [1, 1] : SAMPLING[subsampling];
  const mcuCols = Math.ceil(width / (8 * hSamp));
  const comps: LayoutComponent[] = [];
  let offset = 0;
  for (let c = 0; c < components; c++) {
    const [h, v] = c === 0 ? [hSamp, vSamp] : [1, 1];
    comps.push({ blocks: mcuCols * h, offset, hexp: hSamp / h, vexp: vSamp / v, v });
    offset += mcuCols * h * v;
  }
  return { width, height, components, hSamp, vSamp, mcuRows: Math.ceil(height / (8 * vSamp)), perRow: offset, comps };
}

