export { type BackoffOptions, DEFAULT_BACKOFF, retryDelay } from './backoff.js';
export { DEFAULT_RETRY_BUDGET, RetryBudget, type RetryBudgetOptions } from './budget.js';
export { type ChallengeOptions, DEFAULT_MAX_DIFFICULTY } from './challenge.js';
export { ClientConfigError, type ClientErrorCode } from './errors.js';
export type {
  ClientEvents,
  GiveUpEvent,
  GiveUpReason,
  RefusalCode,
  RetryEvent,
  SolvedEvent,
  WaitEvent,
  WaitReason,
} from './events.js';
export { createFetch, type SluiceFetch, type SluiceRequestInit } from './fetch.js';
export type { HeaderSource } from './headerSource.js';
export { type InterceptorOptions, sluiceInterceptor } from './interceptor.js';
export type { ClientOptions, EstimateRequest } from './options.js';
export { Pacer, type Reservation } from './pacer.js';
export type { NoRetryReason } from './plan.js';
export { type RateLimitInfo, readRateLimits } from './rateLimitFields.js';
export { parseRetryAfter } from './retryAfter.js';
export type { Sleep } from './time.js';
export type {
  UndiciController,
  UndiciDispatch,
  UndiciDispatchOptions,
  UndiciHandler,
  UndiciHeaderValues,
  UndiciInterceptor,
  UndiciRequestHeaders,
} from './undiciTypes.js';
