import { type AlgorithmName, ConfigError, descriptorOf } from '@sluice/core/store';
import { concurrencyLua, concurrencyReleaseLua, concurrencyRenewLua } from './concurrency.js';
import { firstRequestWindowLua, firstRequestWindowRefundLua } from './firstRequestWindow.js';
import { fixedWindowLua, fixedWindowRefundLua } from './fixedWindow.js';
import { gcraLua, gcraRefundLua } from './gcra.js';
import { leakyBucketLua, leakyRefundLua } from './leakyBucket.js';
import { quotaLua, quotaRefundLua } from './quota.js';
import { slidingLogLua, slidingLogRefundLua } from './slidingLog.js';
import { slidingWindowLua, slidingWindowRefundLua } from './slidingWindow.js';
import { tokenBucketLua, tokenBucketRefundLua } from './tokenBucket.js';
import type { LuaAlgorithm } from './types.js';

export { chargeExtra, type RefundCheck } from './refund.js';
export type { LuaAlgorithm } from './types.js';

/**
 * One algorithm in the script: its fragment, and the fragment that gives back what its requests hold, as its
 * descriptor says: a refund (`release: 'refund'`) or a lease release (`release: 'lease'`).
 */
interface LuaEntry {
  readonly run: LuaAlgorithm;
  readonly giveBack?: LuaAlgorithm;
}

/**
 * The registry: one line per algorithm (the type checker names a missing one), its Lua and the Lua that gives
 * back what its requests hold, found by algorithm name (`algorithms/index.test.ts` checks them against the
 * descriptors' `release`). Core's descriptors know nothing of Lua: the codes are the fragments' own.
 */
const LUA: { readonly [K in AlgorithmName]: LuaEntry } = {
  fixed_window: { run: fixedWindowLua, giveBack: fixedWindowRefundLua },
  first_request_window: { run: firstRequestWindowLua, giveBack: firstRequestWindowRefundLua },
  sliding_window: { run: slidingWindowLua, giveBack: slidingWindowRefundLua },
  sliding_log: { run: slidingLogLua, giveBack: slidingLogRefundLua },
  token_bucket: { run: tokenBucketLua, giveBack: tokenBucketRefundLua },
  gcra: { run: gcraLua, giveBack: gcraRefundLua },
  leaky_bucket: { run: leakyBucketLua, giveBack: leakyRefundLua },
  concurrency: { run: concurrencyLua, giveBack: concurrencyReleaseLua },
  quota: { run: quotaLua, giveBack: quotaRefundLua },
};

const entries = Object.entries(LUA) as [AlgorithmName, LuaEntry][];

/** Every algorithm's Lua, by name. */
export const luaAlgorithms = Object.freeze(
  Object.fromEntries(entries.map(([name, entry]) => [name, entry.run])),
) as { readonly [K in AlgorithmName]: LuaAlgorithm };

/**
 * The Lua that gives back what a request of algorithm `name` holds, as its descriptor says: a charge or queue
 * place refunded (`release: 'refund'`), or a lease dropped (`release: 'lease'`): the same question MemoryStore asks, so both stores give back alike. Throws for an algorithm
 * whose requests hold nothing.
 */
export function giveBackFragmentOf(name: AlgorithmName): LuaAlgorithm {
  const fragment = descriptorOf(name).release === 'none' ? undefined : LUA[name].giveBack;
  if (fragment === undefined) throw new ConfigError(`${name} gives nothing back in the Redis script`);
  return fragment;
}

/** Everything the evaluation script can run per check: the algorithms, then what gives back their holds. */
export const scriptFragments: readonly LuaAlgorithm[] = [
  ...entries.map(([, entry]) => entry.run),
  ...entries.flatMap(([, entry]) => (entry.giveBack === undefined ? [] : [entry.giveBack])),
  concurrencyRenewLua,
];

/** The Lua that renews a held lease (a long-lived connection's heartbeat): concurrency holds the only leases. */
export const renewFragment: LuaAlgorithm = concurrencyRenewLua;
