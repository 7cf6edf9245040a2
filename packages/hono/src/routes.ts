import {
  ALL_RULES,
  firstScope,
  type LimitedRoute,
  type RouteMiddlewares,
  UNMATCHED_ROUTE,
} from '@sluice/core/http';
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';

const handlerOf = (route: { readonly handler: unknown }): unknown => route.handler;

/**
 * What Hono matched for this request (it matches every route at once, before the first middleware runs): the
 * first of `ours` among the handlers, and the template of the route that answers, the last one matched (as
 * `routePath(c, -1)`). Middleware (`app.use`: any method, a path ending in `*`) is no route: a request
 * matched by middleware alone is a 404.
 */
export function routeOf(c: Context, ours: RouteMiddlewares): LimitedRoute {
  const routes = matchedRoutes(c);
  const scope = firstScope(routes, ours, handlerOf) ?? ALL_RULES;
  const last = routes[routes.length - 1];
  const isRoute = last !== undefined && !(last.method === 'ALL' && last.path.endsWith('*'));
  return { scope, template: isRoute ? last.path : UNMATCHED_ROUTE };
}
