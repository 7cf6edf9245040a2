import { MapStore } from './mapStore.js';
import { describeStoreContract } from './store.js';

describeStoreContract('MapStore (written against @sluice/core/store alone)', async () => ({
  store: new MapStore(),
}));
