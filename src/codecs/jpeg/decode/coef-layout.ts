// Where a JPEG's quantized DCT coefficients lie in the buffer the GPU decoder uploads (native/coef-decode.c writes
// it; the kernels of decode/ read it): what the front end's header reading (io/jpeg-coef.ts coefLayout) returns.

/** Where one component's coefficients lie in the decoded buffer, and its sample grid (libjpeg's names in comments). */
export interface CoefComponent {
  /** Sampling factors (h_samp_factor, v_samp_factor). */
  h: number;
  v: number;
  /** Blocks per row and block rows the IDCT covers (width_in_blocks, height_in_blocks). */
  blocksW: number;
  blocksH: number;
  /** Blocks per stored row: blocksW rounded up to even, so each block row starts 256-byte aligned. */
  stride: number;
  /** Byte offset of the component's first block (a multiple of 256). */
  offset: number;
  /** Real samples per row and rows (downsampled_width, downsampled_height): the edges upsampling replicates. */
  samplesW: number;
  samplesH: number;
  /** The compact form: byte offset of the component's block headers (3 u32 a block, the same grid; 256-aligned). */
  header: number;
}

/** The coefficient buffer of a JPEG: quantization tables at byte 0 (64 u32 per component, 256 bytes each), then the components. */
export interface CoefLayout {
  width: number;
  height: number;
  maxH: number;
  maxV: number;
  bytes: number;
  /** The compact form (nonzero coefficients only: native/coef-decode.c): byte offset of its values (256-aligned). */
  values: number;
  /** The compact form's worst case (every coefficient nonzero): what its buffer must hold. */
  compactBytes: number;
  /** 1 (gray file, or gray output: only Y) or 3 (Y, Cb, Cr). */
  components: CoefComponent[];
}

/** Why the GPU kernels do not cover a file, with its header's size and libjpeg's colour space (J_COLOR_SPACE: 1 gray, 2 RGB, 3 YCbCr). */
export interface CoefFallback {
  fallback: string;
  width: number;
  height: number;
  colorSpace: number;
}
