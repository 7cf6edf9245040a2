export type { CapacityEstimate, CapacityInput, RuleLoad } from './capacity/estimate.js';
export { estimateCapacity } from './capacity/estimate.js';
export type { MeasuredRun } from './capacity/measure.js';
export { type Case, CasesError, type Expectation, parseCases, type Step } from './cases.js';
export { type Command, EXIT, type ExitCode, type Io, processIo, UsageError } from './io.js';
export { main } from './main.js';
export {
  type ChangedKey,
  type Comparison,
  type ComparisonReport,
  createComparison,
  type RuleChanges,
  type RuleOutcome,
  type Transition,
} from './replay/compare.js';
export { feedLogs, type RequestSink } from './replay/feed.js';
export { type FieldMap, fieldMap } from './replay/fields.js';
export { type LineParser, LOG_FORMATS, type LogFormat, lineParser } from './replay/logLine.js';
export { createReplay, type Replay, type ReplayOptions } from './replay/replayer.js';
export type { AccuracyReport, KeyRow, ReplayReport, RuleReport } from './replay/report.js';
export { ADAPTER_DEFAULTS, type ReplayRequest } from './replay/request.js';
export {
  aggregateDenials,
  createDenialAggregator,
  type DenialAggregator,
  type DenialCounts,
  type DenialReport,
  type Offender,
} from './report/aggregate.js';
export { renderHtml } from './report/html.js';
export { renderReplayHtml } from './report/replayHtml.js';
export { seededRandom } from './simulate/random.js';
