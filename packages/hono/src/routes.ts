import { type RouteScope, UNMATCHED_ROUTE } from '@sluice/core/http';
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';

/** This limiter's `limiter.route()` middleware, each with the scope it checks. */
export type RouteMiddlewares = WeakMap<object, RouteScope>;

/** The route a request will be served by, and the scope the global middleware checks for it. */
export interface LimitedRoute {
  /** The first of this limiter's `limiter.route()` scopes on the route; undefined when it has none. */
  readonly scope: RouteScope | undefined;
  /** The route's path as registered (`/users/:id`), mount paths included; `UNMATCHED_ROUTE` for a 404. */
  readonly template: string;
}

/**
 * What Hono matched for this request (it matches every route at once, before the first middleware runs): the
 * first of `ours` among the handlers, and the template of the route that answers, the last one matched (as
 * `routePath(c, -1)`). Middleware (`app.use`: any method, a path ending in `*`) is no route: a request
 * matched by middleware alone is a 404.
 */
export function routeOf(c: Context, ours: RouteMiddlewares): LimitedRoute {
  const routes = matchedRoutes(c);
  let scope: RouteScope | undefined;
  for (const route of routes) {
    scope = ours.get(route.handler);
    if (scope !== undefined) break;
  }
  const last = routes[routes.length - 1];
  const isRoute = last !== undefined && !(last.method === 'ALL' && last.path.endsWith('*'));
  return { scope, template: isRoute ? last.path : UNMATCHED_ROUTE };
}
