import { type DebtState, isDebtState, refundDebt, spendDebt } from './debt.js';
import type { AlgorithmDescriptor } from './descriptor.js';

/** gcra state: the theoretical arrival time (TAT), as debt.ts keeps it. */
export type GcraState = DebtState;

/**
 * gcra: the generic cell rate algorithm. Each unit of cost pushes the TAT by windowMs/limit; a request is
 * allowed when the pushed TAT lies no more than burst * windowMs/limit ahead of now. One stored time,
 * the same decisions as token_bucket. A charge given back moves the TAT back (`refundDebt`).
 */
export const gcra: AlgorithmDescriptor<'gcra', GcraState> = {
  name: 'gcra',
  limit: 'requests',
  burst: true,
  calendar: false,
  leasable: true,
  release: 'refund',
  refund: refundDebt,
  isState: isDebtState,
  decide: (state, now, params, cost) => spendDebt(state, now, params, cost, false),
};
