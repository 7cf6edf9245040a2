import type { Check } from '../store/contract.js';

/** Divides every limit by the gateway count (rounded up, at least 1; a zero limit stays zero). */
export function scaleChecks(checks: readonly Check[], gateways: number): Check[] {
  const share = (n: number) => (n === 0 ? 0 : Math.max(1, Math.ceil(n / gateways)));
  return checks.map((check) => ({
    ...check,
    params: { ...check.params, limit: share(check.params.limit), burst: share(check.params.burst) },
  }));
}
