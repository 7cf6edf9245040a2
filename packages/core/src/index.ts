export * from './adaptive/index.js';
export * from './algorithms/index.js';
export { assertCost, costFor } from './cost.js';
export {
  type CheckOptions,
  createLimiter,
  type ExplainedRule,
  type Explanation,
  type Limiter,
  type LimiterOptions,
} from './engine.js';
export * from './errors.js';
export * from './http/index.js';
export { hashText, rolloutBucket, tagFor } from './keys.js';
export * from './lists/index.js';
export * from './observe/index.js';
export * from './resilience/index.js';
export * from './rules/index.js';
export { type WatchedRules, type WatchRulesOptions, watchRules } from './rules/watch.js';
export { counterKey, isKeyPrefix, KEY_PREFIX_RULE } from './storeKeys.js';
export { MemoryStore, type MemoryStoreOptions } from './stores/memory.js';
export type * from './types.js';
