export { type LuaAlgorithm, luaAlgorithms } from './algorithms/index.js';
export { type BreakerOptions, DEFAULT_BREAKER } from './breaker.js';
export * from './distribution.js';
export { compact, EVALUATE_SCRIPT, RELEASE_SCRIPT } from './script.js';
export { slotOfTag } from './slot.js';
export {
  DEFAULT_MAX_BATCH_CHECKS,
  DEFAULT_MAX_PENDING,
  DEFAULT_TIMEOUT_MS,
  type RedisClock,
  RedisStore,
  type RedisStoreOptions,
  recommendedRedisOptions,
} from './store.js';
