// @sluice/core/store: for store authors. The store contract, the evaluator every store decides with, the
// resilience wrapper, the key helpers, and what @sluice/redis and @sluice/postgres read of rules and lists.
// A store package imports this entry (and @sluice/core/testing in its tests), never the root.

export type { Charge } from './algorithms/charge.js';
export { ALGORITHM_NAMES, type AlgorithmName, descriptorOf, holderName } from './algorithms/index.js';
export type { LimitParams, Outcome } from './algorithms/limits.js';
export { ConfigError, DecisionError, StoreError } from './base/errors.js';
export { checkOptionNames } from './base/optionNames.js';
export type { ValueList } from './lists/contract.js';
export { valueSetInSteps } from './lists/valueList.js';
export { EMPTY_SET, type ValueSet } from './lists/valueSet.js';
export { type BreakerOptions, DEFAULT_BREAKER } from './resilience/breaker.js';
export { PendingCalls, strandedAfterMs } from './resilience/pending.js';
export { DEFAULT_STALL_CAP_MS, DEFAULT_STALL_MS } from './resilience/progress.js';
export {
  type ResilienceOptions,
  type ResilientStore,
  resilientStore,
  withResilience,
} from './resilience/resilientStore.js';
export { withTimeout } from './resilience/timeout.js';
export { compileRules } from './rules/compile.js';
export type {
  BanPolicy,
  CompiledRules,
  CountOutcome,
  Mode,
  RuleScope,
  RulesSource,
} from './rules/contract.js';
export { loadRules, parseRules } from './rules/parse.js';
export {
  AUDIT_KINDS,
  type AuditEntry,
  type AuditKind,
  type AuditLog,
  type AuditQuery,
  type AuditRecord,
  type AuditValue,
  auditEntryOf,
  checkAuditQuery,
  DEFAULT_AUDIT_ENTRIES,
  DEFAULT_AUDIT_READ,
  MemoryAuditLog,
  matchesAudit,
  newestMatching,
} from './store/audit.js';
export { type Board, MemoryBoard } from './store/board.js';
export type {
  Check,
  CheckPolicy,
  CheckResult,
  FactorReport,
  FactorStore,
  Lease,
  SlotHint,
  Store,
  StoreErrorKind,
  StoreHealth,
} from './store/contract.js';
export {
  banKey,
  evaluateChecks,
  leaseStateKeys,
  releaseLeases,
  renewLeases,
  type StateKey,
  type StateTable,
  stateKeys,
} from './store/evaluate.js';
export { allowedSlowShare, QUIET_INTERVALS } from './store/factors.js';
export { counterKey, isKeyPrefix, KEY_PREFIX_RULE } from './store/keys.js';
export type { BanState } from './store/policies.js';
export { hashText } from './store/tags.js';
