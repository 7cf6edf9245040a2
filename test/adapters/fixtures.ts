import type { RuleSpec } from '@sluice/core';

/** The adapter suites' fixed clock start. */
export const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A per-IP rule named `per_ip`, 60-second window. */
export const perIp = (requests: number, extra: Partial<RuleSpec> = {}): RuleSpec => ({
  name: 'per_ip',
  key: ['ip'],
  limit: { requests, per: '60s' },
  ...extra,
});

/** A rules object of the `test` domain. */
export function rules(...list: RuleSpec[]) {
  return { domain: 'test', rules: list };
}
