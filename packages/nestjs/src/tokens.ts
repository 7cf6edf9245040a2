/** Injection token of the options given to `SluiceModule.forRoot` / `forRootAsync`. */
export const SLUICE_OPTIONS = Symbol.for('sluice.nestjs.options');

/** Metadata key of `@RateLimit(...)` and `@SkipRateLimit()` on a controller or a handler. */
export const RATE_LIMIT_METADATA = 'sluice:rate_limit';
