/**
 * Round to nearest, ties to even: OpenCV's cvRound on SSE2 (saturate_cast of a float), std::nearbyint, numpy's
 * around and WGSL's round(); JavaScript's Math.round rounds ties up. Shared by every family that reproduces them.
 */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
