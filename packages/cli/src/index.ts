export { type Case, CasesError, type Expectation, parseCases, type Step } from './cases.js';
export { type Command, EXIT, type ExitCode, type Io, processIo, UsageError } from './io.js';
export { main } from './main.js';
export {
  aggregateDenials,
  createDenialAggregator,
  type DenialAggregator,
  type DenialCounts,
  type DenialReport,
  type Offender,
} from './report/aggregate.js';
export { renderHtml } from './report/html.js';
