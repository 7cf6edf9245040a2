import { type StoreFactory, describeStoreContract as storeContract } from '@sluice/core/testing';
import * as vitest from 'vitest';

export type { StoreFactory };

/** The published store contract suite (@sluice/core/testing) on this repository's vitest. */
export function describeStoreContract(name: string, factory: StoreFactory): void {
  storeContract(vitest, name, factory);
}
