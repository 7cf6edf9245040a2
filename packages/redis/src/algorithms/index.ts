import { type AlgorithmName, ConfigError, descriptorOf } from '@sluice/core';
import { concurrencyLua } from './concurrency.js';
import { fixedWindowLua, fixedWindowRefundLua } from './fixedWindow.js';
import { gcraLua, gcraRefundLua } from './gcra.js';
import { leakyBucketLua, leakyRefundLua } from './leakyBucket.js';
import { quotaLua, quotaRefundLua } from './quota.js';
import { slidingLogLua, slidingLogRefundLua } from './slidingLog.js';
import { slidingWindowLua, slidingWindowRefundLua } from './slidingWindow.js';
import { tokenBucketLua, tokenBucketRefundLua } from './tokenBucket.js';
import type { LuaAlgorithm } from './types.js';

export { releaseLua } from './concurrency.js';
export { chargeExtra, type RefundCheck } from './refund.js';
export type { LuaAlgorithm } from './types.js';

/** Every algorithm's Lua, by name. */
export const luaAlgorithms: { readonly [K in AlgorithmName]: LuaAlgorithm } = {
  fixed_window: fixedWindowLua,
  sliding_window: slidingWindowLua,
  sliding_log: slidingLogLua,
  token_bucket: tokenBucketLua,
  gcra: gcraLua,
  leaky_bucket: leakyBucketLua,
  concurrency: concurrencyLua,
  quota: quotaLua,
};

/** The refund fragments, each under the code its algorithm's descriptor names (`refundLua`). */
const luaRefunds: readonly LuaAlgorithm[] = [
  fixedWindowRefundLua,
  slidingWindowRefundLua,
  slidingLogRefundLua,
  tokenBucketRefundLua,
  gcraRefundLua,
  leakyRefundLua,
  quotaRefundLua,
];

/**
 * The Lua that gives a charge of algorithm `name` back, as its descriptor says (`release: 'refund'` and
 * `refundLua`): the same question MemoryStore asks, so both stores refund alike. Throws for an algorithm
 * whose holds are not refunds (concurrency releases leases).
 */
export function refundFragmentOf(name: AlgorithmName): LuaAlgorithm {
  const descriptor = descriptorOf(name);
  const code = descriptor.release === 'refund' ? descriptor.refundLua : undefined;
  const fragment = luaRefunds.find((candidate) => candidate.code === code);
  if (fragment === undefined) throw new ConfigError(`${name} has no refund in the Redis script`);
  return fragment;
}

/** Everything the evaluation script can run per check: the algorithms, and their refunds. */
export const scriptFragments: readonly LuaAlgorithm[] = [...Object.values(luaAlgorithms), ...luaRefunds];
