export {
  adaptFactor,
  allowedSlowShare,
  type FactorState,
  freshFactor,
  judgeable,
  nextFactor,
  QUIET_INTERVALS,
  unhealthy,
} from './aimd.js';
export { breakerFactor, REPORT_EVERY_MS, REPORT_TIMEOUT_MS } from './controller.js';
export { MemoryFactors } from './memoryFactors.js';
export { ADAPTIVE_DEFAULTS } from './policy.js';
export { classOf, SHEDDABLE_LEASE_SHARE, scaled, shareOf } from './priority.js';
export { PRIORITY_CLASSES } from './schema.js';
export type * from './types.js';
