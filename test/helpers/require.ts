/**
 * A precondition CI provides (.ci/run sets IMGPU_REQUIRE_NATIVE, _GPU, _BROWSER, _REDIS to 1): true where it is met;
 * otherwise the test fails where CI requires it, and is skipped with the reason elsewhere — never skipped in CI.
 */
export function requiredOrSkip(t: { skip(msg: string): void }, met: unknown, reason: string, what: 'NATIVE' | 'GPU' | 'BROWSER' | 'REDIS' = 'NATIVE'): boolean {
  if (met) return true;
  if (process.env[`IMGPU_REQUIRE_${what}`] === '1') throw new Error(`IMGPU_REQUIRE_${what}=1 but ${reason}`);
  t.skip(reason);
  return false;
}
