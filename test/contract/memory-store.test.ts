import { MemoryStore } from '@sluice/core';
import { describeStoreContract } from './store.js';

describeStoreContract('MemoryStore', async () => ({ store: new MemoryStore() }));
