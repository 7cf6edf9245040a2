// The one module through which this package reaches the evaluator. When `@sluice/core/store` ships, this line
// becomes `export { ... } from '@sluice/core/store';` and evaluatorStandIn.ts is deleted.
export {
  evaluateChecks,
  leaseStateKeys,
  releaseLeases,
  type StateKey,
  type StateTable,
  stateKeys,
} from './evaluatorStandIn.js';
