import { ConfigError } from '../base/errors.js';
import type { CostSpec, Descriptors } from '../rules/contract.js';

/** Throws ConfigError unless `cost` is a finite non-negative integer. */
export function assertCost(cost: number): number {
  if (!Number.isInteger(cost) || cost < 0) {
    throw new ConfigError(`cost must be a non-negative integer, got ${String(cost)}`);
  }
  return cost;
}

/**
 * The cost of a request for one rule: the rule's own spec wins; otherwise the cost given in code.
 * A descriptor-priced cost that is not a non-negative integer (client input such as `batch_size=abc`)
 * is charged at its `max`: bad input must not be cheaper than good input.
 */
export function costFor(spec: CostSpec | undefined, descriptors: Descriptors, codeCost: number): number {
  if (spec === undefined) return codeCost;
  if (typeof spec === 'number') return spec;
  if ('descriptor' in spec) {
    const raw = descriptors[spec.descriptor];
    const value = raw === undefined || raw === '' ? Number.NaN : Number(raw);
    return Number.isInteger(value) && value >= 0 ? Math.min(value, spec.max) : spec.max;
  }
  const key = descriptors[spec.by];
  return (
    (key !== undefined && Object.hasOwn(spec.values, key) ? spec.values[key] : undefined) ?? spec.default
  );
}
