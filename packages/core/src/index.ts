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
// Of the HTTP layer, what users of the adapters see: their options' and handlers' types, and normalizeIp for
// descriptors. The rest is for adapter authors: @sluice/core/http.
export type { TrustProxy } from './http/fetch.js';
export type { RateLimitInfo } from './http/info.js';
export type { InlineLimit } from './http/inline.js';
export { normalizeIp } from './http/ip.js';
export type {
  AdapterObserver,
  AdapterStage,
  DescriptorValue,
  NoticeCode,
  RateLimitLogger,
  RateLimitOptions,
} from './http/options.js';
export type { DeniedBody, DeniedResponse, HeaderFormat } from './http/responses.js';
export { hashText, type KeyedRule, rolloutBucket, tagFor } from './keys.js';
export * from './lists/index.js';
export * from './observe/index.js';
export { checkOptionNames } from './optionNames.js';
export * from './resilience/index.js';
export * from './rules/index.js';
export { type WatchedRules, type WatchRulesOptions, watchRules } from './rules/watch.js';
export { counterKey, isKeyPrefix, KEY_PREFIX_RULE } from './storeKeys.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory.js';
export type { BanState } from './store/policies.js';
export type * from './types.js';
