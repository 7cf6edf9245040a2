export { RateLimit, RateLimitInfo, type RouteRateLimit, SkipRateLimit } from './decorators.js';
export { RateLimitException } from './exception.js';
export { SluiceGuard } from './guard.js';
export { SluiceModule } from './module.js';
export type { SluiceModuleAsyncOptions, SluiceModuleOptions, SluiceRequest } from './options.js';
export { SluiceService } from './service.js';
export { RATE_LIMIT_METADATA, SLUICE_OPTIONS } from './tokens.js';
