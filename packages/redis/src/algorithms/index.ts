import type { AlgorithmName } from '@sluice/core';
import { concurrencyLua } from './concurrency.js';
import { fixedWindowLua } from './fixedWindow.js';
import { gcraLua } from './gcra.js';
import { leakyBucketLua, leakyRefundLua } from './leakyBucket.js';
import { quotaLua } from './quota.js';
import { slidingLogLua } from './slidingLog.js';
import { slidingWindowLua } from './slidingWindow.js';
import { tokenBucketLua } from './tokenBucket.js';
import type { LuaAlgorithm } from './types.js';

export { releaseLua } from './concurrency.js';
export { leakyRefundLua } from './leakyBucket.js';
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

/** Everything the evaluation script can run per check: the algorithms, and the leaky_bucket refund. */
export const scriptFragments: readonly LuaAlgorithm[] = [...Object.values(luaAlgorithms), leakyRefundLua];
