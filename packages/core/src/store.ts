// @sluice/core/store: for store authors. The store contract, the evaluator every store decides with, the
// resilience wrapper, the key helpers, and what @sluice/redis and @sluice/postgres read of rules and lists.
// A store package imports this entry (and @sluice/core/testing in its tests), never the root.

export { allowedSlowShare, QUIET_INTERVALS } from './adaptive/aimd.js';
export type { FactorReport, FactorStore } from './adaptive/types.js';
export type { Charge } from './algorithms/charge.js';
export { ALGORITHM_NAMES, type AlgorithmName, descriptorOf } from './algorithms/index.js';
export type { LimitParams, Outcome } from './algorithms/limits.js';
export { ConfigError, StoreError } from './errors.js';
export { hashText } from './keys.js';
export { valueSetInSteps } from './lists/valueList.js';
export { EMPTY_SET, type ValueSet } from './lists/valueSet.js';
export { checkOptionNames } from './optionNames.js';
export { type BreakerOptions, DEFAULT_BREAKER } from './resilience/breaker.js';
export { PendingCalls, strandedAfterMs } from './resilience/pending.js';
export {
  type ResilienceOptions,
  type ResilientStore,
  resilientStore,
  withResilience,
} from './resilience/resilientStore.js';
export { withTimeout } from './resilience/timeout.js';
export { compileRules } from './rules/compile.js';
export { loadRules, parseRules } from './rules/parse.js';
export type {
  BanPolicy,
  Check,
  CheckPolicy,
  CheckResult,
  CountOutcome,
  Lease,
  Mode,
  RuleScope,
  Store,
  StoreErrorKind,
  StoreHealth,
} from './store/contract.js';
export {
  banKey,
  evaluateChecks,
  leaseStateKeys,
  markerKey,
  releaseLeases,
  type StateKey,
  type StateTable,
  stateKeys,
} from './store/evaluate.js';
export type { BanState } from './store/policies.js';
export { counterKey, isKeyPrefix, KEY_PREFIX_RULE } from './storeKeys.js';
export type { CompiledRules, RulesSource, ValueList } from './types.js';
