export { type BreakerOptions, DEFAULT_BREAKER } from '@sluice/core/store';
export { ADAPT_SCRIPT, FACTOR_TTL_MS, factorKey, RedisFactors } from './adaptiveFactors.js';
export { type LuaAlgorithm, luaAlgorithms } from './algorithms/index.js';
export { AUDIT_TIMEOUT_MS, auditKey, RedisAuditLog } from './audit.js';
export { BOARD_TIMEOUT_MS, boardKeys, RedisBoard } from './board.js';
export {
  jitteredRetryDelay,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  recommendedRedisOptions,
  reconnectOnReadonly,
} from './clientOptions.js';
export * from './distribution.js';
export { KeyStateError } from './errors.js';
export { type RedisList, type RedisListOptions, redisList } from './lists.js';
export { STORE_NOTICES, type StoreLogger } from './monitor.js';
export type { NodeRedisClient, NodeRedisCluster, NodeRedisSentinel } from './nodeRedisTransport.js';
export { BAN_SUFFIX, banKey, parseBanState } from './policy.js';
export { compact, EVALUATE_SCRIPT } from './script.js';
export { slotOfTag } from './slot.js';
export type { StateFormat } from './stateFormat.js';
export {
  DEFAULT_MAX_BATCH_CHECKS,
  DEFAULT_MAX_PENDING,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  type RedisClock,
  RedisStore,
  type RedisStoreOptions,
  strandedAfterMs,
} from './store.js';
