export { SluiceWsGuard } from './guard.js';
export { SLUICE_WS_OPTIONS, SluiceWsModule, SluiceWsService } from './module.js';
