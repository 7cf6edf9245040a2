export { Breaker, type BreakerOptions, DEFAULT_BREAKER } from './breaker.js';
export { InFlight } from './inflight.js';
export { PendingCalls, type PendingCallsOptions, strandedAfterMs } from './pending.js';
export {
  type ConnectionState,
  type ResilienceOptions,
  type ResilientStore,
  resilientStore,
  withResilience,
} from './resilientStore.js';
export { withTimeout } from './timeout.js';
