export { combineObservers } from './combine.js';
export {
  type DecisionLogEntry,
  type DecisionLogger,
  type DecisionLogOptions,
  decisionLogObserver,
  decisionOutcome,
  type LoggedOutcome,
  type LoggedRule,
  type SampleRates,
} from './decisionLog.js';
export type { EngineView, LimiterHealth } from './health.js';
export { storeHealth } from './health.js';
export {
  LIMITER_NOTICES,
  type LimiterNotice,
  type NoticeLogger,
  PER_REQUEST_THRESHOLD,
  PER_REQUEST_WINDOW_MS,
} from './misuse.js';
