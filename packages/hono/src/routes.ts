import type { CheckScope } from '@sluice/core/http';
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';

/** This limiter's `limiter.route()` middleware, each with the scope it checks. */
export type RouteMiddlewares = WeakMap<object, CheckScope>;

/** The route a request will be served by, when it carries one of this limiter's `limiter.route()` middleware. */
export interface LimitedRoute {
  readonly scope: CheckScope;
  /** The route's path as registered (`/users/:id`), mount paths included. */
  readonly template: string;
}

/**
 * The first of `ours` among the handlers Hono matched for this request (it matches every route at once, before
 * the first middleware runs), with its route path; undefined when none of them is ours.
 */
export function limitedRoute(c: Context, ours: RouteMiddlewares): LimitedRoute | undefined {
  for (const route of matchedRoutes(c)) {
    const scope = ours.get(route.handler);
    if (scope !== undefined) return { scope, template: route.path };
  }
  return undefined;
}
