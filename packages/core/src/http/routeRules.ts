import { ConfigError } from '../base/errors.js';
import type { CompiledRules } from '../rules/contract.js';
import type { RuleSpec } from '../rules/schema.js';
import { afterBodyOf, type RouteOptions, type RouteScope, splitAfterBody } from './afterBody.js';
import { type InlineLimit, inlineRules, isInlineLimit, parseInlineLimit } from './inline.js';
import type { NoticeWatch } from './notices.js';

/**
 * What route compiling reads, built once per HTTP limiter: the rule compiler (names taken by global rules and
 * other routes refused), the notices, and how many shorthand `limiter.route()` calls were made (their default
 * rule names). A plain object, so each step below is a function of it.
 */
export interface RouteCompiling {
  readonly compile: (rules: unknown, label: string) => CompiledRules;
  readonly notices: Pick<NoticeWatch, 'routeRules'>;
  inlineRoutes: number;
}

/** Route-level rules, compiled once; rules keyed by api_key counting raw header values get a notice. */
export function compileRouteRules(routes: RouteCompiling, rules: unknown, label: string): CompiledRules {
  const compiled = routes.compile(rules, label);
  routes.notices.routeRules(compiled);
  return compiled;
}

/**
 * The scope of a `limiter.route(...)` middleware: its rules (or shorthand) only; with `afterBody` (in `options`
 * or the shorthand) the global ones too, the global middleware leaving the route's requests to it.
 */
export function routeScope(
  routes: RouteCompiling,
  given: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
  options?: RouteOptions,
): RouteScope {
  const split = isInlineLimit(given) ? splitAfterBody(given, 'limiter.route()') : undefined;
  const afterBody = afterBodyOf(options, 'limiter.route() options') || split?.afterBody === true;
  // After the body, the route's middleware checks the global rules too (its global middleware left them).
  const global = afterBody;
  if (split !== undefined) return { rules: inlineRouteRules(routes, split.config), global, afterBody };
  const list: readonly RuleSpec[] = Array.isArray(given) ? given : [given as RuleSpec];
  const label = `limiter.route(${list.map((rule) => String(rule?.name)).join(', ')})`;
  return { rules: compileRouteRules(routes, list, label), global, afterBody };
}

/** `limiter.route({limit, per})`: its rule is named `name`, else `route_<n>` by declaration order. */
function inlineRouteRules(routes: RouteCompiling, given: InlineLimit): CompiledRules {
  routes.inlineRoutes += 1;
  const label = `limiter.route({limit: ${String(given.limit)}, per: ${JSON.stringify(given.per)}})`;
  return compileInline(routes, given, label, `route_${routes.inlineRoutes}`);
}

function compileInline(
  routes: RouteCompiling,
  given: unknown,
  label: string,
  defaultName: string,
): CompiledRules {
  const inline = parseInlineLimit(given, label);
  return compileRouteRules(routes, inlineRules(inline, inline.name ?? defaultName), label);
}

/**
 * A route's config (`config.rateLimit`, a `@RateLimit` decorator): `{rules: [...]}`, or the shorthand
 * `{limit, per, key?, name?}` with its rule named `name`, else `defaultName`; either with `afterBody`.
 * Throws ConfigError/RulesError naming `label`.
 */
export function compileRouteConfig(
  routes: RouteCompiling,
  given: unknown,
  label: string,
  defaultName: string,
): CompiledRules {
  // `afterBody` is when the route is decided, not what: the adapter reads it (afterBodyOf).
  const { config } = splitAfterBody(given, label);
  if (isInlineLimit(config)) return compileInline(routes, config, label, defaultName);
  if (typeof config !== 'object' || config === null)
    throw new ConfigError(`${label}: config.rateLimit must be false, {rules: [...]} or {limit, per}`);
  return compileRouteRules(routes, (config as { rules?: unknown }).rules, label);
}
