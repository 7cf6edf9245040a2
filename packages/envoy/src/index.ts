export { type DescriptorSet, decideDescriptors, type ServiceNotice } from './decide.js';
export { ENVOY_DOMAIN, ENVOY_PATH, type EnvoyRules, isEnvoyConfig, parseEnvoyConfig } from './envoyConfig.js';
export { DEFAULT_BOUNDS, type RequestBounds } from './messages.js';
export { compileRulesText, loadRulesFile } from './rulesFile.js';
export {
  createRateLimitService,
  type RateLimitService,
  type RateLimitServiceOptions,
  type ServiceLogger,
  type ServiceStats,
} from './service.js';
