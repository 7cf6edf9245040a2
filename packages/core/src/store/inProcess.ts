import type { Store } from './contract.js';

/** A store that answers in process, without a promise (MemoryStore): it has `Store.evaluateNow`. */
export type InProcessStore = Store & Required<Pick<Store, 'evaluateNow'>>;

/** Whether a store declares that it answers in process (has `evaluateNow`): the engine then calls that. */
export function answersInProcess(store: Store): store is InProcessStore {
  return typeof store.evaluateNow === 'function';
}
