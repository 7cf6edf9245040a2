// @sluice/core: for users. The limiter, the in-process store, rules and lists loaders, observers, errors, and the
// types those show. Store authors: @sluice/core/store; adapter authors: @sluice/core/http; store tests:
// @sluice/core/testing. The root's runtime names are counted (index.test.ts): at most 40.

export { scaled } from './adaptive/priority.js';
export type { AlgorithmName } from './algorithms/index.js';
export { parseDuration } from './base/duration.js';
export { ConfigError, formatProblem, type RuleProblem, RulesError, StoreError } from './base/errors.js';
export { checkOptionNames, type UnknownNameOptions, unknownName } from './base/optionNames.js';
export { costFor } from './engine/cost.js';
export {
  type ActualCosts,
  type CheckManyOptions,
  type CheckOptions,
  type CheckSet,
  createLimiter,
  type ExplainedRule,
  type Explanation,
  type Limiter,
  type LimiterOptions,
  type Settlement,
  type SettleOutcome,
} from './engine/engine.js';
export type { DeniedBody, DeniedResponse, HeaderFormat } from './fields/responses.js';
export type { RateLimitInfo } from './http/info.js';
export type { InlineLimit } from './http/inline.js';
export type {
  AdapterObserver,
  AdapterStage,
  DescriptorValue,
  NoticeCode,
  RateLimitLogger,
  RateLimitOptions,
} from './http/options.js';
export type * from './lists/contract.js';
export { type FileList, type FileListOptions, fileList, MAX_LIST_BYTES } from './lists/file.js';
export { parseList } from './lists/parse.js';
export { valueList } from './lists/valueList.js';
export type { ValueSet } from './lists/valueSet.js';
export { normalizeIp } from './net/ip.js';
export { type AuditTrail, type AuditTrailOptions, auditTrail } from './observe/audit.js';
export { combineObservers } from './observe/combine.js';
export type * from './observe/contract.js';
export {
  type DecisionLogEntry,
  type DecisionLogger,
  type DecisionLogOptions,
  decisionLogObserver,
  decisionOutcome,
  type LoggedOutcome,
  type LoggedRule,
  type SampleRates,
} from './observe/decisionLog.js';
export { type EngineView, type LimiterHealth, storeHealth } from './observe/health.js';
export type { LimiterNotice, NoticeLogger } from './observe/misuse.js';
export type { BudgetView, RegionScheduler, RegionsOptions } from './regions/index.js';
// The adapters' proxy trust option; the rest of the HTTP layer is for adapter authors: @sluice/core/http.
export type { TrustProxy } from './request/fetch.js';
export type { BreakerOptions } from './resilience/breaker.js';
export type { ConnectionState, ResilienceOptions } from './resilience/resilientStore.js';
export type * from './rules/adaptiveTypes.js';
export { type CompileOptions, compileRules, type RulesInput } from './rules/compile.js';
export type * from './rules/contract.js';
export { MAX_RULES_BYTES } from './rules/file.js';
export {
  loadRules,
  type ParseOptions,
  parseRules,
  type RulesDocument,
  yamlPosition,
} from './rules/parse.js';
export { type ResolveOptions, type RulesLike, resolveRules, resolveRulesSync } from './rules/resolve.js';
export { type LimitSpec, type ParsedRule, type RuleSpec, ruleSchema } from './rules/schema.js';
export { type WatchedRules, type WatchRulesOptions, watchRules } from './rules/watch.js';
export type { AuditEntry, AuditKind, AuditLog, AuditQuery, AuditRecord, AuditValue } from './store/audit.js';
export type * from './store/contract.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory.js';
export type { BanState } from './store/policies.js';
export { hashText, type KeyedRule, tagFor } from './store/tags.js';
export {
  type BoardKey,
  type BoardRates,
  type BoardRoute,
  type BoardRule,
  type BoardSketch,
  type BoardStoreHealth,
  type GatewayBoard,
  parseBoard,
} from './watch/board.js';
export {
  type DomainVersions,
  type GatewaySummary,
  type MergedBoard,
  type MergedKey,
  type MergedRule,
  type MergedSketch,
  type MergeOptions,
  mergeBoards,
  type VersionShare,
} from './watch/merge.js';
export type { WatchOptions } from './watch/options.js';
