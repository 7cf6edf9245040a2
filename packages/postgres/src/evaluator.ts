// The one module through which this package reaches core's evaluator (the contract every store decides with).
export {
  banKey,
  evaluateChecks,
  leaseStateKeys,
  releaseLeases,
  renewLeases,
  type StateKey,
  type StateTable,
  stateKeys,
} from '@sluice/core/store';
