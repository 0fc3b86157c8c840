/**
 * WGSL shared by the GPU JPEG decoder's inverse DCT (jidctint.c jpeg_idct_islow) and the encoder's forward DCT
 * (jfdctint.c jpeg_fdct_islow): libjpeg's CONST_BITS / PASS1_BITS, its 13-bit fixed-point constants FIX(x) =
 * round(x · 2^13), and DESCALE (jdct.h: round half up, arithmetic shift) — one definition, so the two transforms
 * cannot drift apart.
 */
export const islowWgsl = /* wgsl */ `
const CONST_BITS = 13u;
const PASS1_BITS = 2u;
const FIX_0_298631336 = 2446;
const FIX_0_390180644 = 3196;
const FIX_0_541196100 = 4433;
const FIX_0_765366865 = 6270;
const FIX_0_899976223 = 7373;
const FIX_1_175875602 = 9633;
const FIX_1_501321110 = 12299;
const FIX_1_847759065 = 15137;
const FIX_1_961570560 = 16069;
const FIX_2_053119869 = 16819;
const FIX_2_562915447 = 20995;
const FIX_3_072711026 = 25172;

// DESCALE(x, n) of jdct.h: round half up, arithmetic shift.
fn descale(x: i32, n: u32) -> i32 { return (x + (1i << (n - 1u))) >> n; }
`;
