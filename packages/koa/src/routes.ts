import type { CheckScope } from '@sluice/core/http';
import type { Context } from 'koa';

/** The route a request will be served by, when it carries one of this limiter's `limiter.route()` middleware. */
export interface LimitedRoute {
  readonly scope: CheckScope;
  /** The route's template (`/users/:id`), the router's prefix included. */
  readonly template: string;
}

/** Route middleware of one limiter, each with the scope it checks. */
export type RouteMiddlewares = WeakMap<object, CheckScope>;

/** The parts of @koa/router read here (its `match` is what its own dispatch calls). */
interface KoaRouter {
  readonly opts?: { readonly routerPath?: unknown };
  match?(path: string, method: string): { readonly pathAndMethod?: readonly RouterLayer[] };
  matchHost?(host: string): boolean;
}

interface RouterLayer {
  readonly path?: unknown;
  readonly methods?: readonly string[];
  readonly stack?: readonly unknown[];
}

/**
 * The route @koa/router will dispatch this request to, if it carries one of `ours`: the app's first router (a
 * middleware that @koa/router marks with `.router`) with a route for the path and method, and in it the first
 * route matched, as the router runs them. Undefined otherwise (no router, no such route, a router mounted in a
 * way this lookup cannot see): the route's middleware then checks its rules alone.
 */
export function limitedRoute(ctx: Context, ours: RouteMiddlewares): LimitedRoute | undefined {
  for (const middleware of ctx.app.middleware) {
    const router = (middleware as { router?: KoaRouter }).router;
    if (router?.match === undefined) continue;
    if (router.matchHost !== undefined && !router.matchHost(ctx.host)) continue;
    const own = router.opts?.routerPath;
    const layers = router.match(
      typeof own === 'string' && own !== '' ? own : ctx.path,
      ctx.method,
    ).pathAndMethod;
    const route = layers?.find((layer) => (layer.methods?.length ?? 0) > 0);
    if (route === undefined) continue;
    return ourScope(route, ours);
  }
  return undefined;
}

function ourScope(route: RouterLayer, ours: RouteMiddlewares): LimitedRoute | undefined {
  if (typeof route.path !== 'string' || route.stack === undefined) return undefined;
  for (const handler of route.stack) {
    const scope = typeof handler === 'function' ? ours.get(handler) : undefined;
    if (scope !== undefined) return { scope, template: route.path };
  }
  return undefined;
}
