import {
  type CustomDecorator,
  createParamDecorator,
  type ExecutionContext,
  SetMetadata,
} from '@nestjs/common';
import type { RuleSpec } from '@sluice/core';
import type { RateLimitInfo as Info, InlineLimit, RouteOptions } from '@sluice/core/http';
import type { SluiceRequest } from './options.js';
import { RATE_LIMIT_METADATA } from './tokens.js';

/**
 * Route rules of a controller or handler: rules (the rule shape of the rules file), or the shorthand
 * `{limit: 5, per: '1m', key?, name?}`. The same shapes as a Fastify route's `config.rateLimit`, `afterBody`
 * included: Nest runs guards once the body is parsed on both platforms, so `cost(req)` reads `req.body` with
 * it or without.
 */
export type RouteRateLimit = ({ readonly rules: readonly RuleSpec[] } | InlineLimit) & RouteOptions;

/** What the metadata holds: route rules, or false (skip). */
export type RateLimitMetadata = RouteRateLimit | false;

/**
 * Adds route rules to a handler, or to every handler of a controller; checked with the global rules in one
 * store call. A handler's own `@RateLimit` or `@SkipRateLimit` replaces its controller's.
 */
export function RateLimit(config: RouteRateLimit): CustomDecorator<string> {
  return SetMetadata<string, RateLimitMetadata>(RATE_LIMIT_METADATA, config);
}

/** No rate limiting, global rules included, for a handler or every handler of a controller. */
export function SkipRateLimit(): CustomDecorator<string> {
  return SetMetadata<string, RateLimitMetadata>(RATE_LIMIT_METADATA, false);
}

/** The decision a handler reads: the numbers the RateLimit headers show, and the whole decision. */
export type RateLimitInfo = Info;

/** Handler parameter: this request's limit as its RateLimit headers show it (undefined when not limited). */
export const RateLimitInfo = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<SluiceRequest>().rateLimit,
);
