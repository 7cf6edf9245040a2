import { ConfigError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';
import type { CheckScope } from './notes.js';

/**
 * A route's options beside its rules: `afterBody: true` decides the route's requests once the framework has
 * parsed their body, so `cost(req)` and `descriptors(req)` can read it (a batch's operations, a GraphQL
 * query's complexity). Global and route rules are still checked together, in one store call.
 */
export interface RouteOptions {
  readonly afterBody?: boolean;
}

/** A route's scope, and whether it is decided after the body is parsed. */
export interface RouteScope extends CheckScope {
  readonly afterBody?: boolean;
}

/**
 * A route config (`{rules, afterBody}`, `{limit, per, afterBody}`) split into what compiles to rules and its
 * `afterBody`; throws a ConfigError naming `label` when `afterBody` is not a boolean.
 */
export function splitAfterBody<T>(
  config: T,
  label: string,
): { readonly config: T; readonly afterBody: boolean } {
  if (typeof config !== 'object' || config === null || !('afterBody' in config))
    return { config, afterBody: false };
  const { afterBody, ...rest } = config as T & RouteOptions;
  return { config: rest as T, afterBody: afterBodyOf({ afterBody }, label) };
}

/**
 * The `afterBody` of route options (`limiter.route(rules, {afterBody: true})`); throws a ConfigError naming
 * `label` for an unknown option (with a did-you-mean) or an `afterBody` that is not a boolean.
 */
export function afterBodyOf(options: RouteOptions | undefined, label: string): boolean {
  checkOptionNames(label, options, ['afterBody']);
  const afterBody: unknown = options?.afterBody;
  if (afterBody === undefined) return false;
  if (typeof afterBody !== 'boolean')
    throw new ConfigError(
      `${label}: option "afterBody" must be true or false, not ${JSON.stringify(afterBody)}`,
    );
  return afterBody;
}
